"""The differential fuzzer's regression cases: each reduced program in cases/ runs on interp and on
the devices that once disagreed, and must now agree (with the fuzzer's tolerances, compare.py).
A case with an `xfail` reason in its .json is a known disagreement being fixed elsewhere."""
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tessera_fuzz.cases import load_cases  # noqa: E402
from tessera_fuzz.oracle import check  # noqa: E402
from tessera_fuzz.runner import Runner, device_env  # noqa: E402

CASES = list(load_cases())


@pytest.fixture(scope="module")
def runner():
    device_env(tempfile.mkdtemp(prefix="tessera-fuzz-cases-"))
    import tessera
    r = Runner(tessera.devices(), timeout=120)
    r.available = tessera.devices()
    yield r
    r.close()


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_case(case, runner, request):
    name, text, inputs, meta = case
    devices = [d for d in meta["devices"] if d != "interp" and d in runner.available]
    if meta["devices"] != ["interp"] and not devices:
        pytest.skip(f"none of {meta['devices']} on this machine")
    if meta.get("xfail"):  # runs, so that a fix shows as XPASS
        request.applymarker(pytest.mark.xfail(reason=meta["xfail"], strict=False))
    findings = check(runner, text, inputs, devices)
    assert not findings, f"{name}:\n{text}\n" + "\n".join(f"{f.device}: {f.kind}: {f.message}" for f in findings)
