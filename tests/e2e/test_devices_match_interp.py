"""Every compiled device against the reference interpreter: each tests/programs/*.tile and the
PlaidML corpus (concat, prng, xception) must give the interpreter's outputs, within a tolerance per
dtype (floats: the compiled code may sum in another order and compute float32 math in float32
where the interpreter uses double; every other dtype exactly)."""
import numpy as np
import pytest

import tessera as ts
from testpaths import PROGRAMS, SHARED
from test_corpus import CORPUS, prng_state, spec_of, xception_weights
from test_programs import PROGRAM_NAMES, make_inputs

DEVICES = [d for d in ts.devices() if d != "interp"]

# (rtol, atol) per float dtype, for results of sums over at most a few thousand terms.
TOLERANCES = {
    np.dtype(np.float16): (2e-3, 2e-3),
    np.dtype(np.float32): (1e-4, 1e-5),
    np.dtype(np.float64): (1e-10, 1e-12),
}


def assert_same(where, got, want):
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype}, interp gives {want.dtype}"
    assert got.shape == want.shape, f"{where}: shape {got.shape}, interp gives {want.shape}"
    if want.dtype in TOLERANCES:
        rtol, atol = TOLERANCES[want.dtype]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=where)
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)


def compare(device, text, inputs, where):
    want = ts.run(text, inputs, device="interp")
    got = ts.run(text, inputs, device=device)
    assert sorted(got) == sorted(want), where
    for name in want:
        assert_same(f"{where} on {device}: output {name}", np.asarray(got[name]), np.asarray(want[name]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", PROGRAM_NAMES)
def test_program(device, name):
    compare(device, (PROGRAMS / f"{name}.tile").read_text(), make_inputs(name), name)


@pytest.mark.parametrize("device", DEVICES)
def test_corpus_concat(device):
    rng = np.random.default_rng(5)
    inputs = {k: rng.uniform(-1, 1, size=s["shape"]).astype(s["dtype"]) for k, s in spec_of("concat")["inputs"].items()}
    compare(device, (CORPUS / "concat.tile").read_text(), inputs, "concat")


@pytest.mark.parametrize("device", DEVICES)
def test_corpus_prng(device):
    compare(device, (CORPUS / "prng.tile").read_text(), {"X_I_0": prng_state(1)}, "prng")


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_corpus_xception(device, tessera, tmp_path):
    """The whole network through the CLI, with test_corpus.py's scaled weights and --random 1."""
    in_args, _ = xception_weights(tmp_path)
    outs = {}
    for dev in ("interp", device):
        out_dir = tmp_path / dev.replace(":", "_")
        out_dir.mkdir()
        tessera("run", CORPUS / "xception.tile", "--device", dev, "--spec", CORPUS / "xception.json", "--random", 1,
                *in_args, "--out-dir", out_dir)
        outs[dev] = {p.stem: np.load(p, allow_pickle=False) for p in out_dir.glob("*.npy")}
    assert sorted(outs[device]) == sorted(outs["interp"])
    for name, want in outs["interp"].items():
        assert_same(f"xception on {device}: {name}", outs[device][name], want)
