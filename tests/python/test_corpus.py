"""The PlaidML corpus (../shared/corpus/plaidml) on the interp device: concat against numpy, prng's
shapes, types, range and determinism, and Xception end to end (slow)."""
import json

import numpy as np
import pytest

from testpaths import SHARED

CORPUS = SHARED / "corpus" / "plaidml"

# prng.tile maps prng_value's [0, 1) affinely: X_T7 = -0.13801311186847084 + 0.2760262237369417 * v.
PRNG_LO = -0.13801311186847084
PRNG_HI = PRNG_LO + 0.2760262237369417


def spec_of(name):
    return json.loads((CORPUS / f"{name}.json").read_text())


def run_with(tessera, tmp_path, name, inputs, tag="out"):
    """Runs corpus program `name` on interp with `inputs`; returns {output: array}."""
    args = ["run", CORPUS / f"{name}.tile", "--device", "interp"]
    for input_name, array in inputs.items():
        path = tmp_path / f"{tag}_in_{input_name}.npy"
        np.save(path, array)
        args += ["--in", f"{input_name}={path}"]
    out_dir = tmp_path / tag
    out_dir.mkdir()
    tessera(*args, "--out-dir", out_dir)
    return {p.stem: np.load(p, allow_pickle=False) for p in out_dir.glob("*.npy")}


def check_outputs_match_spec(name, outputs):
    want = spec_of(name)["outputs"]
    assert sorted(outputs) == sorted(want)
    for output, s in want.items():
        assert outputs[output].dtype == np.dtype(s["dtype"]), output
        assert list(outputs[output].shape) == s["shape"], output


def test_concat_matches_numpy(tessera, tmp_path):
    rng = np.random.default_rng(5)
    inputs = {k: rng.uniform(-1, 1, size=s["shape"]).astype(s["dtype"])
              for k, s in spec_of("concat")["inputs"].items()}
    outputs = run_with(tessera, tmp_path, "concat", inputs)
    check_outputs_match_spec("concat", outputs)
    want = np.concatenate([inputs["X_I_0"], inputs["X_I_1"], inputs["X_I_2"]])
    np.testing.assert_array_equal(outputs["X_T5"], want)


def prng_state(seed):
    shape = spec_of("prng")["inputs"]["X_I_0"]["shape"]
    return np.random.default_rng(seed).integers(0, 2**32, size=shape, dtype=np.uint64).astype(np.uint32)


def test_prng_shapes_types_and_range(tessera, tmp_path):
    state = prng_state(1)
    outputs = run_with(tessera, tmp_path, "prng", {"X_I_0": state})
    check_outputs_match_spec("prng", outputs)
    values = outputs["X_T7"]
    assert np.all(np.isfinite(values))
    assert values.min() >= PRNG_LO - 1e-6 and values.max() <= PRNG_HI + 1e-6
    # 864 draws uniform on a width of 0.276: the mean is 0 +- 0.003 and the standard deviation 0.08.
    assert abs(values.mean()) < 0.015
    assert 0.06 < values.std() < 0.1
    assert len(np.unique(values)) > values.size // 2
    # the generator's state moves on
    assert not np.array_equal(outputs["X_T2"], state)


def test_prng_is_deterministic_per_state(tessera, tmp_path):
    first = run_with(tessera, tmp_path, "prng", {"X_I_0": prng_state(1)}, tag="first")
    again = run_with(tessera, tmp_path, "prng", {"X_I_0": prng_state(1)}, tag="again")
    other = run_with(tessera, tmp_path, "prng", {"X_I_0": prng_state(2)}, tag="other")
    for output in ("X_T2", "X_T7"):
        np.testing.assert_array_equal(first[output], again[output])
        assert not np.array_equal(first[output], other[output]), output


# Winograd F(4x4, 3x3) matrices (Lavin & Gray): Xception's first separable block convolves as
# A^T [(G g G^T) * (B^T d B)] A, with X_I_1 = B, X_I_8 = G and X_I_0 = A.
WINOGRAD_B = np.array([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
                       [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]], np.float64).T
WINOGRAD_G = np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
                       [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]], np.float64)
WINOGRAD_A = np.array([[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0],
                       [0, 1, -1, 8, -8, 1]], np.float64).T


def xception_weights(tmp_path):
    """--in arguments for the inputs that --random cannot stand in for: with every weight in
    [0.5, 1.5), activations grow by about 9 * channels per convolution and overflow float32 long
    before the softmax (exactly, not through any fault of the evaluator). Real Winograd matrices,
    and positive conv/dense weights scaled by 1 / fan-in keep activations near 1; the image and the
    batch-norm statistics still come from --random."""
    spec = spec_of("xception")["inputs"]
    rng = np.random.default_rng(7)
    arrays = {"X_I_0": WINOGRAD_A, "X_I_1": WINOGRAD_B, "X_I_8": WINOGRAD_G}
    for name, s in spec.items():
        shape = s["shape"]
        if name in arrays or name == "X_I_2" or len(shape) not in (2, 4):
            continue
        fan_in = int(np.prod(shape[:-1]))
        arrays[name] = rng.uniform(0.5, 1.5, size=shape) / fan_in
    args = []
    for name, a in arrays.items():
        assert list(a.shape) == spec[name]["shape"], name
        path = tmp_path / f"{name}.npy"
        np.save(path, np.ascontiguousarray(a, dtype=np.float32))
        args += ["--in", f"{name}={path}"]
    return args, arrays


def valid_conv3x3(x, k):
    """x [1, H, W, CI], k [3, 3, CI, CO] -> [1, H - 2, W - 2, CO], in float64."""
    h, w = x.shape[1] - 2, x.shape[2] - 2
    out = np.zeros((1, h, w, k.shape[3]))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nhwc,cd->nhwd", x[:, i:i + h, j:j + w, :].astype(np.float64), k[i, j])
    return out


@pytest.mark.slow
def test_xception_gives_a_probability_vector(tessera, tmp_path):
    # Also expose the first Winograd convolution's input and output to check it against numpy.
    text = (CORPUS / "xception.tile").read_text()
    assert "-> ( X_T581)" in text
    program = tmp_path / "xception.tile"
    program.write_text(text.replace("-> ( X_T581)", "-> ( X_T581, X_T120, X_T97)"))
    in_args, weights = xception_weights(tmp_path)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    # --random fills the other inputs with values in [0.5, 1.5): positive batch-norm variances
    tessera("run", program, "--device", "interp", "--spec", CORPUS / "xception.json", "--random", 1,
            *in_args, "--out-dir", out_dir)

    probs = np.load(out_dir / "X_T581.npy", allow_pickle=False)
    assert probs.dtype == np.float32 and probs.shape == (1, 1000)
    assert np.all(np.isfinite(probs))
    assert np.all(probs >= 0)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-4)

    # the Winograd-transformed convolution (no_defract output access i + 4*x) is a plain 3x3 conv
    x = np.load(out_dir / "X_T120.npy", allow_pickle=False)
    got = np.load(out_dir / "X_T97.npy", allow_pickle=False)
    want = valid_conv3x3(x, weights["X_I_9"].astype(np.float32).astype(np.float64))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
