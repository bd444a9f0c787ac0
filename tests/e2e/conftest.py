"""Fixtures of the device-vs-interp suite: the `tessera` binary fixture and paths of tests/python
(whose helpers this suite reuses; its conftest is loaded under another name to avoid a clash)."""
import importlib.util
import sys
from pathlib import Path

PYTHON_TESTS = Path(__file__).resolve().parents[1] / "python"
sys.path.insert(0, str(PYTHON_TESTS))

_spec = importlib.util.spec_from_file_location("python_tests_conftest", PYTHON_TESTS / "conftest.py")
_shared = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_shared)

ROOT, SHARED, PROGRAMS = _shared.ROOT, _shared.SHARED, _shared.PROGRAMS
tessera = _shared.tessera  # the fixture
