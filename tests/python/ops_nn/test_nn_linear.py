"""matmul (np.matmul semantics, batched with broadcasting) and dense on the interp device."""
import numpy as np
import pytest

import tessera
from nn_reference import TOL


def rand(rng, shape, dtype):
    return rng.uniform(-1, 1, size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("a_shape,b_shape", [
    ((3, 4), (4, 5)),
    ((1, 1), (1, 1)),
    ((2, 1, 3, 4), (5, 4, 2)),   # batch dims broadcast to [2, 5]
    ((3, 2, 3), (3, 2)),          # matrix against a batch
    ((1, 3, 4), (6, 4, 1)),       # unit batch and unit N
    ((4,), (4, 3)),               # vector @ matrix
    ((2, 5, 3), (3,)),            # batch @ vector
    ((7,), (7,)),                 # inner product: a scalar
])
def test_matmul(a_shape, b_shape, dtype):
    rng = np.random.default_rng(len(a_shape) * 10 + len(b_shape))
    a, b = rand(rng, a_shape, dtype), rand(rng, b_shape, dtype)
    got = tessera.op("matmul", [a, b], device="interp")
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert got.dtype == dtype
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **TOL[dtype])


def test_matmul_float16():
    rng = np.random.default_rng(3)
    a, b = rand(rng, (2, 3, 5), np.float16), rand(rng, (5, 4), np.float16)
    got = tessera.op("matmul", [a, b], device="interp")
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.astype(np.float64), **TOL[np.float16])


def test_matmul_integers_exact():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
    np.testing.assert_array_equal(tessera.op("matmul", [a, b], device="interp"), a @ b)


def test_matmul_hand_computed():
    a = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    b = np.array([[5.0, 6.0], [7.0, 8.0]], np.float32)
    np.testing.assert_array_equal(tessera.op("matmul", [a, b], device="interp"), [[19, 22], [43, 50]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("x_shape,units,bias", [((4, 3), 5, True), ((4, 3), 2, False), ((2, 3, 6), 4, True),
                                                ((1, 1), 1, True), ((5,), 3, True)])
def test_dense(x_shape, units, bias, dtype):
    rng = np.random.default_rng(x_shape[-1] * units)
    x, w = rand(rng, x_shape, dtype), rand(rng, (x_shape[-1], units), dtype)
    inputs = [x, w]
    want = x.astype(np.float64) @ w.astype(np.float64)
    if bias:
        b = rand(rng, (units,), dtype)
        inputs.append(b)
        want = want + b
    got = tessera.op("dense", inputs, device="interp")
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **TOL[dtype])


def test_errors_reach_python():
    with pytest.raises(tessera.OpError, match="matmul: inner dimensions differ"):
        tessera.op("matmul", [np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32)], device="interp")
    with pytest.raises(tessera.OpError, match="dense: bias has shape"):
        tessera.op("dense", [np.zeros((2, 3), np.float32), np.zeros((3, 4), np.float32),
                             np.zeros((3,), np.float32)], device="interp")
