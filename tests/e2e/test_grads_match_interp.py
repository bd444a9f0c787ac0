"""Gradients on every compiled device in float32, against the interpreter's float64 gradients.

The cases are those of tests/python/autodiff/test_op_grads.py, whose float64 interpreter gradients
are themselves checked against finite differences; here each device computes the same gradient
programs in float32, and the error is max|device - interp| / max|interp| per input.
"""
import sys

import numpy as np
import pytest

from testpaths import ROOT

sys.path.insert(0, str(ROOT / "tests" / "python" / "autodiff"))
import tessera  # noqa: E402
from test_op_grads import CASES, first  # noqa: E402
from test_programs import make_inputs  # noqa: E402
from testpaths import PROGRAMS  # noqa: E402

DEVICES = [d for d in tessera.devices() if d != "interp"]
RTOL = 2e-4  # float32 against float64 on inputs of a few dozen elements


def f32(x):
    x = np.asarray(x)
    return x.astype(np.float32) if x.dtype.kind == "f" else x.copy()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case_id", sorted(CASES))
def test_gradient_matches_interp(device, case_id):
    case = CASES[case_id]
    inputs64 = [np.array(x, np.float64) if np.asarray(x).dtype.kind == "f" else np.asarray(x) for x in case.inputs]
    out = first(tessera.op(case.op, inputs64, device="interp", **case.attrs))
    seed = np.random.default_rng(len(case_id)).standard_normal(out.shape)
    want = tessera.op_grad(case.op, inputs64, seed, device="interp", **case.attrs)
    got = tessera.op_grad(case.op, [f32(x) for x in inputs64], seed.astype(np.float32), device=device, **case.attrs)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == np.float32 and g.shape == w.shape, (g.dtype, g.shape, w.shape)
        scale = max(float(np.max(np.abs(w))), 1e-6)
        err = float(np.max(np.abs(g.astype(np.float64) - w))) / scale
        assert err <= RTOL, f"{case_id} on {device}: gradient {i} relative error {err:.3g}"


# Gradients of tests/programs that use PlaidML's builtins (their own derivative rules): program,
# the output differentiated, the inputs.
TILE_CASES = {
    "keras_classifier": ("keras_classifier", "X_T19", ["X_I_0", "X_I_1", "X_I_2"]),
    "builtins_nested": ("plaidml_builtins", "Nested", ["X", "P", "S"]),
    "builtins_logsoftmax": ("plaidml_builtins", "LogSoft", ["X"]),
    "builtins_crossentropy": ("plaidml_builtins", "Bce", ["P", "T"]),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case_id", sorted(TILE_CASES))
def test_tile_gradient_matches_interp(device, case_id):
    name, of, wrt = TILE_CASES[case_id]
    text = (PROGRAMS / f"{name}.tile").read_text()
    grad = tessera.grad(text, wrt, of)
    inputs64 = {k: v.astype(np.float64) for k, v in make_inputs(name).items()}
    out = tessera.run(text, inputs64, device="interp")[of]
    seed = np.random.default_rng(len(case_id)).standard_normal(out.shape)
    want = tessera.run(grad, {**inputs64, "d_" + of: seed}, device="interp")
    got = tessera.run(grad, {**{k: f32(v) for k, v in inputs64.items()}, "d_" + of: f32(seed)}, device=device)
    assert sorted(got) == sorted(want) == sorted("d_" + x for x in wrt)
    for dx, w in want.items():
        g = got[dx]
        assert g.dtype == np.float32 and g.shape == w.shape, (dx, g.dtype, g.shape, w.shape)
        scale = max(float(np.max(np.abs(w))), 1e-6)
        err = float(np.max(np.abs(g.astype(np.float64) - w))) / scale
        assert err <= RTOL, f"{case_id} on {device}: {dx} relative error {err:.3g}"

