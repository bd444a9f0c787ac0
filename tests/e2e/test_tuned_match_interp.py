"""Tuned kernels against the reference interpreter: every tests/programs/*.tile compiled with
TESSERA_TUNE=full (each kernel timed under several schedules, the fastest correct one kept) into a
fresh kernel cache, then compiled again from that cache, must give the interpreter's outputs."""
import pytest

from test_devices_match_interp import compare
from test_programs import PROGRAM_NAMES, make_inputs
from testpaths import PROGRAMS

TUNED_DEVICES = ["cpu"]


@pytest.fixture(scope="module")
def cache_file(tmp_path_factory):
    return tmp_path_factory.mktemp("tuned") / "cache.db"


@pytest.mark.parametrize("device", TUNED_DEVICES)
@pytest.mark.parametrize("name", PROGRAM_NAMES)
def test_tuned_program(device, name, cache_file, monkeypatch):
    monkeypatch.setenv("TESSERA_CACHE", str(cache_file))
    text, inputs = (PROGRAMS / f"{name}.tile").read_text(), make_inputs(name)
    monkeypatch.setenv("TESSERA_TUNE", "full")
    compare(device, text, inputs, f"{name} (tuned)")
    monkeypatch.setenv("TESSERA_TUNE", "cached")
    compare(device, text, inputs, f"{name} (from the cache)")
