"""Helpers of the shape-op tests: running an op on the interp device and random data per dtype."""
import numpy as np
import tessera

# Data movement ops must reproduce their input bit for bit in every dtype.
DTYPES = [np.float32, np.int32, np.uint8, np.bool_]


def run_op(name, inputs, **attrs):
    """Runs op `name` on numpy arrays on the reference interpreter."""
    return tessera.op(name, list(inputs), device="interp", **attrs)


def random_shape(rng, min_rank=1, max_rank=4, max_dim=5):
    rank = int(rng.integers(min_rank, max_rank + 1))
    return tuple(int(d) for d in rng.integers(1, max_dim + 1, size=rank))


def random_array(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype == np.uint8:
        return rng.integers(0, 256, size=shape).astype(np.uint8)
    if dtype.kind == "i":
        return rng.integers(-100, 100, size=shape).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


def assert_same(got, want):
    """Exact equality with dtype and shape, for ops that only move data."""
    want = np.asarray(want)
    assert got.dtype == want.dtype, f"dtype {got.dtype}, expected {want.dtype}"
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    np.testing.assert_array_equal(got, want)
