"""Reductions (sum, mean, max, min, prod, argmax, argmin) against numpy on the interp device."""
import numpy as np
import pytest

from ops_math_util import assert_close, random_shape, run_op

NUMPY = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod}
FLOATS = [np.float32, np.float64]


def random_axes(rng, rank):
    """A non-empty random subset of the axes, some written negative."""
    count = int(rng.integers(1, rank + 1))
    axes = rng.choice(rank, size=count, replace=False)
    return [int(a) - rank if rng.random() < 0.5 else int(a) for a in axes]


@pytest.mark.parametrize("name", sorted(NUMPY))
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", range(4))
def test_reduction_over_random_axes(rng, name, dtype, case):
    shape = random_shape(rng)
    x = rng.uniform(0.5, 1.5, size=shape).astype(dtype)  # near 1, so prod stays well scaled
    axes = random_axes(rng, len(shape))
    keepdims = bool(case % 2)
    got = run_op(name, [x], axis=axes, keepdims=keepdims)
    assert_close(got, NUMPY[name](x, axis=tuple(axes), keepdims=keepdims), dtype)


@pytest.mark.parametrize("name", sorted(NUMPY))
def test_reduction_over_all_axes_by_default(rng, name):
    x = rng.uniform(0.5, 1.5, size=(2, 3, 4)).astype(np.float32)
    assert_close(run_op(name, [x]), NUMPY[name](x), np.float32)
    assert_close(run_op(name, [x], keepdims=True), NUMPY[name](x, keepdims=True), np.float32)


@pytest.mark.parametrize("name", sorted(NUMPY))
def test_reduction_single_int_axis_and_size_one_dims(rng, name):
    x = rng.normal(size=(1, 5, 1)).astype(np.float64)
    for axis in (0, 1, -1):
        assert_close(run_op(name, [x], axis=axis), NUMPY[name](x, axis=axis), np.float64)


def test_reductions_of_float16_and_int32(rng):
    x16 = rng.uniform(-2, 2, size=(3, 4)).astype(np.float16)
    for name in ("sum", "max", "min", "mean"):
        got = run_op(name, [x16], axis=1)
        assert got.dtype == np.float16
        np.testing.assert_allclose(got.astype(np.float64), NUMPY[name](x16.astype(np.float64), axis=1),
                                   rtol=1e-2, atol=1e-2)
    xi = rng.integers(-50, 50, size=(3, 4)).astype(np.int32)
    for name in ("sum", "max", "min", "prod"):
        got = run_op(name, [xi], axis=0)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, NUMPY[name](xi, axis=0).astype(np.int32))
    # The mean of integers is float32.
    assert_close(run_op("mean", [xi], axis=[0, 1]), np.mean(xi), np.float32)


def test_sum_of_hand_computed_values():
    x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    np.testing.assert_array_equal(run_op("sum", [x], axis=0), [5, 7, 9])
    np.testing.assert_array_equal(run_op("max", [x], axis=-1, keepdims=True), [[3], [6]])
    np.testing.assert_array_equal(run_op("prod", [x]), np.float32(720))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", FLOATS + [np.int32])
@pytest.mark.parametrize("case", range(4))
def test_arg_reduction_single_axis(rng, name, dtype, case):
    shape = random_shape(rng)
    # Few distinct values: ties are common and the first index must win.
    x = rng.integers(0, 3, size=shape).astype(dtype)
    axis = int(rng.integers(-len(shape), len(shape)))
    keepdims = bool(case % 2)
    got = run_op(name, [x], axis=axis, keepdims=keepdims)
    want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    assert got.dtype == np.int32
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reduction_over_all_axes_is_the_flat_index(rng, name):
    x = rng.integers(0, 4, size=(3, 4, 2)).astype(np.float32)
    got = run_op(name, [x])
    assert got.shape == () and got.dtype == np.int32
    assert int(got) == getattr(np, name)(x)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reduction_over_several_axes_is_the_index_within_the_block(rng, name):
    x = rng.integers(0, 3, size=(2, 3, 4, 2)).astype(np.float32)
    got = run_op(name, [x], axis=[1, 3])
    # numpy: move the reduced axes last, flatten them, and take the first extreme.
    block = np.moveaxis(x, [1, 3], [2, 3]).reshape(2, 4, 6)
    np.testing.assert_array_equal(got, getattr(np, name)(block, axis=-1))


def test_argmax_ties_take_the_first_index():
    x = np.array([[1, 3, 3, 0], [2, 2, 2, 2], [5, 1, 5, 5]], np.float32)
    np.testing.assert_array_equal(run_op("argmax", [x], axis=1), [1, 0, 0])
    np.testing.assert_array_equal(run_op("argmin", [x], axis=1), [3, 0, 1])
    np.testing.assert_array_equal(run_op("argmax", [x], axis=0), [2, 0, 2, 2])


@pytest.mark.parametrize("name", ["sum", "argmax", "mean"])
def test_bad_axes_raise_naming_the_op(name):
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match=f"{name}: axis 2 is out of range for a tensor of rank 2"):
        run_op(name, [x], axis=2)
    with pytest.raises(ValueError, match=f"{name}: axis -3 is out of range"):
        run_op(name, [x], axis=-3)
    with pytest.raises(ValueError, match=f"{name}: axis -1 is repeated"):
        run_op(name, [x], axis=[1, -1])
