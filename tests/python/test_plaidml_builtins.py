"""PlaidML's builtins through the `tessera` binary: a Keras classifier head and loss written as
PlaidML 0.7's Keras backend writes them (tests/programs/keras_classifier.tile), forward with
`tessera run` and backward with `tessera grad` then `tessera run`, against numpy and float64 finite
differences; Tessera's intrinsics against PlaidML's definitions of abs, max, min, relu and sigmoid;
and a located error for a misused builtin."""
import sys

import numpy as np

import tessera as ts
from references import REFERENCES
from test_programs import make_inputs
from testpaths import PROGRAMS, ROOT

sys.path.insert(0, str(ROOT / "tests" / "python" / "autodiff"))
from gradcheck import numeric_grad  # noqa: E402


def save(tmp_path, arrays):
    """--in arguments for `tessera run`, one .npy file per array."""
    args = []
    for name, a in arrays.items():
        path = tmp_path / f"in_{name}.npy"
        np.save(path, a)
        args += ["--in", f"{name}={path}"]
    return args


def run(tessera, tmp_path, program, arrays, device="interp"):
    out = tmp_path / f"out_{program.stem}_{device.replace(':', '_')}"
    out.mkdir()
    tessera("run", program, "--device", device, *save(tmp_path, arrays), "--out-dir", out)
    return {p.stem: np.load(p, allow_pickle=False) for p in out.glob("*.npy")}


def test_keras_classifier_forward_and_backward(tessera, tmp_path):
    program = PROGRAMS / "keras_classifier.tile"
    inputs = {k: v.astype(np.float64) for k, v in make_inputs("keras_classifier").items()}
    want = REFERENCES["keras_classifier"](**inputs)

    forward = run(tessera, tmp_path, program, inputs)
    np.testing.assert_allclose(forward["X_T3"], want["X_T3"], rtol=1e-6)
    np.testing.assert_allclose(forward["X_T19"], want["X_T19"], rtol=1e-6)

    # Backward: the seed of a scalar loss is 1, as in Keras' training.
    grad_program = tmp_path / "keras_classifier_grad.tile"
    tessera("grad", program, "--of", "X_T19", "--wrt", "X_I_1,X_I_2", "-o", grad_program)
    assert "builtin_softmax(X_T1, X_T4, X_T5)" in grad_program.read_text()
    grads = run(tessera, tmp_path, grad_program, {**inputs, "d_X_T19": np.array(1.0)})
    assert sorted(grads) == ["d_X_I_1", "d_X_I_2"]
    text = program.read_text()
    for name in ("X_I_1", "X_I_2"):
        fd = numeric_grad(lambda: float(ts.run(text, inputs, device="interp")["X_T19"]), inputs[name])
        np.testing.assert_allclose(grads["d_" + name], fd, rtol=1e-6, atol=1e-9, err_msg=name)
        assert np.max(np.abs(fd)) > 1e-3, name  # a real gradient, not zeros matching zeros

    # The same gradient program in float32 on the CPU device.
    if "cpu" not in ts.devices():
        return
    inputs32 = {k: v.astype(np.float32) for k, v in inputs.items()}
    grads32 = run(tessera, tmp_path, grad_program, {**inputs32, "d_X_T19": np.array(1.0, np.float32)}, device="cpu")
    for name, g in grads.items():
        np.testing.assert_allclose(grads32[name], g, rtol=1e-4, atol=1e-6, err_msg=name)


def test_intrinsics_agree_with_plaidml_definitions_except_nan_in_max_and_min(tessera, tmp_path):
    out = run(tessera, tmp_path, PROGRAMS / "plaidml_inline_defs.tile", make_inputs("plaidml_inline_defs"))
    x, y = make_inputs("plaidml_inline_defs").values()
    # Equal values (NaN where the other has NaN; -0.0 and 0.0 compare equal); sigmoid up to float32
    # rounding, which below about -88 includes denormals where float32 exp(-x) overflows.
    for ours in ("Abs", "Relu"):
        np.testing.assert_array_equal(out[ours], out["P" + ours], err_msg=ours)
    np.testing.assert_allclose(out["Sig"], out["PSig"], rtol=2e-7, atol=1e-37)
    nan = np.isnan(x) | np.isnan(y)
    for ours in ("Max", "Min"):
        np.testing.assert_array_equal(out[ours][~nan], out["P" + ours][~nan], err_msg=ours)
        assert np.isnan(out[ours][nan]).all(), ours  # Tessera propagates NaN
    # PlaidML's comparison keeps the number in one order: max(1, NaN) = 1 and min(NaN, 1) = 1.
    assert np.isnan(x[0]) and y[0] == 1 and x[1] == 1 and np.isnan(y[1])
    assert np.isnan(out["PMax"][0]) and out["PMax"][1] == 1
    assert out["PMin"][0] == 1 and np.isnan(out["PMin"][1])


def test_misused_builtin_is_a_located_error(tessera, tmp_path):
    program = tmp_path / "head.tile"
    program.write_text("function (X[N, C]) -> (Y) {\n  Y = builtin_softmax(X, N);\n}\n")
    proc = tessera("run", program, "--device", "interp", *save(tmp_path, {"X": np.ones((2, 3), np.float32)}),
                   check=False)
    assert proc.returncode == 1
    assert f"{program}:2:7: error: 'builtin_softmax' takes 3 arguments, got 2" in proc.stderr, proc.stderr
    assert "^~~" in proc.stderr
