"""gather (np.take with mode="clip") and one_hot (rows of np.eye) on the interp device."""
import numpy as np
import pytest
import tessera

from shape_util import DTYPES, assert_same, random_array, random_shape, run_op


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("case", range(3))
def test_gather_along_a_random_axis_like_np_take(rng, dtype, index_dtype, case):
    shape = random_shape(rng, max_rank=3)
    x = random_array(rng, shape, dtype)
    axis = int(rng.integers(-len(shape), len(shape)))
    n = shape[axis]
    idx_shape = random_shape(rng, min_rank=0, max_rank=2, max_dim=4)
    idx = rng.integers(0, n, size=idx_shape).astype(index_dtype)
    assert_same(run_op("gather", [x, idx], axis=axis), np.take(x, idx, axis=axis))


def test_gather_clamps_out_of_range_indices_like_np_take_clip(rng):
    # Negative indices clamp to 0 (they do not wrap as in Python indexing), large ones to the end.
    x = rng.normal(size=(3, 4)).astype(np.float32)
    idx = np.array([[-5, -1, 0], [3, 4, 100]], np.int32)
    assert_same(run_op("gather", [x, idx], axis=1), np.take(x, idx, axis=1, mode="clip"))
    assert_same(run_op("gather", [x, idx]), np.take(x, idx, axis=0, mode="clip"))


def test_gather_defaults_to_axis_zero_and_takes_scalar_indices(rng):
    x = rng.normal(size=(4, 2)).astype(np.float32)
    assert_same(run_op("gather", [x, np.array(2, np.int32)]), x[2])


def test_gather_rejects_float_indices():
    with pytest.raises(tessera.OpError, match="gather: indices have dtype float32"):
        run_op("gather", [np.zeros(3, np.float32), np.zeros(2, np.float32)])


def np_one_hot(idx, depth, on=1.0, off=0.0):
    """Rows of the identity for in-range indices, all `off` for out-of-range ones (as tf.one_hot)."""
    idx = np.asarray(idx)
    valid = (idx >= 0) & (idx < depth)
    rows = np.eye(depth, dtype=np.float64)[np.where(valid, idx, 0)] * valid[..., None]
    return (rows * on + (1 - rows) * off).astype(np.float32)


@pytest.mark.parametrize("case", range(4))
def test_one_hot_of_int32_indices_is_float32(rng, case):
    shape = random_shape(rng, min_rank=1, max_rank=3)
    depth = int(rng.integers(1, 6))
    idx = rng.integers(0, depth, size=shape).astype(np.int32)
    assert_same(run_op("one_hot", [idx], depth=depth), np_one_hot(idx, depth))


def test_one_hot_on_off_values_and_out_of_range_indices():
    idx = np.array([[0, 3], [-1, 7]], np.int32)
    assert_same(run_op("one_hot", [idx], depth=4, on_value=5.0, off_value=-0.5),
                np_one_hot(idx, 4, on=5.0, off=-0.5))


def test_one_hot_axis_zero_and_depth_one(rng):
    idx = rng.integers(0, 3, size=(2, 5)).astype(np.int32)
    assert_same(run_op("one_hot", [idx], depth=3, axis=0), np.moveaxis(np_one_hot(idx, 3), -1, 0))
    assert_same(run_op("one_hot", [np.zeros(3, np.int32)], depth=1), np.ones((3, 1), np.float32))


def test_one_hot_rejects_depth_below_one():
    with pytest.raises(tessera.OpError, match="one_hot: depth must be at least 1, got 0"):
        run_op("one_hot", [np.zeros(3, np.int32)], depth=0)
