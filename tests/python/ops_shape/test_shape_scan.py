"""cumsum and cumprod with TensorFlow's exclusive and reverse options against numpy."""
import numpy as np
import pytest

from shape_util import random_shape, run_op

# Sums of a handful of O(1) values: float32 differs from numpy only by summation order.
TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-12, atol=1e-12),
       np.int32: dict(rtol=0, atol=0)}


def np_scan(fn, identity, x, axis, exclusive, reverse):
    """tf.math.cumsum/cumprod semantics from numpy's inclusive forward scans."""
    y = np.flip(x, axis) if reverse else x
    r = fn(y, axis=axis)
    if exclusive:
        first = np.full_like(np.take(r, [0], axis=axis), identity)
        r = np.concatenate([first, np.delete(r, -1, axis=axis)], axis=axis)
    return (np.flip(r, axis) if reverse else r).astype(x.dtype)


def data(rng, shape, dtype):
    if dtype == np.int32:
        return rng.integers(-3, 4, size=shape).astype(np.int32)
    return (rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1, 1], size=shape)).astype(dtype)


@pytest.mark.parametrize("op,fn,identity", [("cumsum", np.cumsum, 0), ("cumprod", np.cumprod, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_along_a_random_axis(rng, op, fn, identity, dtype, exclusive, reverse):
    shape = random_shape(rng, max_rank=3, max_dim=5)
    x = data(rng, shape, dtype)
    axis = int(rng.integers(-len(shape), len(shape)))
    got = run_op(op, [x], axis=axis, exclusive=exclusive, reverse=reverse)
    assert got.dtype == dtype and got.shape == x.shape
    np.testing.assert_allclose(got, np_scan(fn, identity, x, axis, exclusive, reverse), **TOL[dtype])


def test_cumsum_defaults_to_axis_zero_and_by_hand():
    x = np.array([[1, 2], [3, 4], [5, 6]], np.int32)
    np.testing.assert_array_equal(run_op("cumsum", [x]), [[1, 2], [4, 6], [9, 12]])
    np.testing.assert_array_equal(run_op("cumprod", [x], axis=1, exclusive=True), [[1, 1], [1, 3], [1, 5]])
    np.testing.assert_array_equal(run_op("cumsum", [x], axis=0, exclusive=True, reverse=True),
                                  [[8, 10], [5, 6], [0, 0]])


def test_scan_of_a_size_one_axis_and_bool_input():
    x = np.array([[2.5], [-1.0]], np.float32)
    np.testing.assert_array_equal(run_op("cumprod", [x], axis=1), x)
    np.testing.assert_array_equal(run_op("cumprod", [x], axis=1, exclusive=True), np.ones_like(x))
    b = np.array([True, False, True, True])
    got = run_op("cumsum", [b])
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.cumsum(b))
