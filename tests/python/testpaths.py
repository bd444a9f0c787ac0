"""Paths the Python tests share (a plain module: several test folders have a conftest.py, so
importing names from `conftest` would pick whichever was loaded first)."""
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
PROGRAMS = ROOT / "tests" / "programs"
