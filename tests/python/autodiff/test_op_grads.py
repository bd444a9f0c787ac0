"""tessera.op_grad for every op of tessera.op_names() that has float inputs, against central
finite differences in float64 on interp (rtol 1e-5, atol 1e-7 unless the table says otherwise).
Ops not in TABLE are skipped with the reason; the table grows as the op library does."""
import numpy as np
import pytest

import tessera

from gradcheck import numeric_grad

R = np.random.default_rng(7)


def a(*shape):
    return R.standard_normal(shape)


def pos(*shape):
    return np.abs(R.standard_normal(shape)) + 0.5


# name -> (inputs, attrs); inputs avoid kinks (relu at 0, max ties) so differences are smooth.
TABLE = {
    "relu": ([a(2, 3) + 0.05], {}),
    "leaky_relu": ([a(2, 3) + 0.05], {}),
    "elu": ([a(2, 3) + 0.05], {}),
    "gelu": ([a(2, 3)], {}),
    "matmul": ([a(2, 3), a(3, 4)], {}),
    "dense": ([a(2, 3), a(3, 4)], {}),
    "softmax": ([a(2, 4)], {}),
    "log_softmax": ([a(2, 4)], {}),
    "layer_norm": ([a(2, 4)], {}),
    "batch_norm": ([a(4, 3)], {}),
    "transpose": ([a(2, 3)], {}),
    "reshape": ([a(2, 3)], {"shape": [3, 2]}),
    "flatten": ([a(2, 3, 2)], {}),
    "concatenate": ([a(2, 3), a(2, 2)], {"axis": 1}),
    "pad": ([a(2, 3)], {"pads": [1, 1]}),
    "categorical_crossentropy": ([np.eye(3)[[0, 2]], np.abs(a(2, 3)) + 0.2], {}),
    "binary_crossentropy": ([np.array([[0.0, 1.0]]), np.array([[0.3, 0.6]])], {}),
}


@pytest.mark.parametrize("name", tessera.op_names())
def test_op_gradient_matches_finite_differences(name):
    if name not in TABLE:
        pytest.skip(f"{name}: no inputs/attributes in TABLE yet")
    inputs, attrs = TABLE[name]
    inputs = [np.array(x, np.float64) for x in inputs]
    try:
        out = tessera.op(name, inputs, device="interp", **attrs)
    except tessera.OpError as e:
        pytest.skip(f"{name}: the table's attributes do not fit this op yet ({e})")
    out = out[0] if isinstance(out, list) else out
    seed = R.standard_normal(out.shape)
    grads = tessera.op_grad(name, inputs, seed, device="interp", **attrs)
    floats = [i for i, x in enumerate(inputs) if x.dtype.kind == "f"]
    assert len(grads) == len(floats)
    for g, i in zip(grads, floats):
        def f():
            o = tessera.op(name, inputs, device="interp", **attrs)
            o = o[0] if isinstance(o, list) else o
            return float(np.sum(o * seed))
        num = numeric_grad(f, inputs[i])
        np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-7, err_msg=f"{name} input {i}")
