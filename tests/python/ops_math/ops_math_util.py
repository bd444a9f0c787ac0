"""Helpers of the math-op tests: running an op on the interp device, random data, tolerances."""
import numpy as np
import tessera

# Per-dtype tolerances (rtol, atol) against numpy/scipy computed in the same dtype (float16: from
# float64, since numpy's own float16 math rounds differently).
TOL = {
    np.float16: (1e-2, 2e-3),
    np.float32: (2e-5, 1e-6),
    np.float64: (1e-11, 1e-13),
}


def run_op(name, inputs, **attrs):
    """Runs op `name` on numpy arrays on the reference interpreter."""
    return tessera.op(name, list(inputs), device="interp", **attrs)


def random_shape(rng, min_rank=1, max_rank=4, max_dim=5):
    rank = int(rng.integers(min_rank, max_rank + 1))
    return tuple(int(d) for d in rng.integers(1, max_dim + 1, size=rank))


def assert_close(got, want, dtype):
    rtol, atol = TOL[np.dtype(dtype).type]
    assert got.dtype == np.dtype(dtype), f"dtype {got.dtype}, expected {np.dtype(dtype)}"
    assert got.shape == np.shape(want), f"shape {got.shape}, expected {np.shape(want)}"
    np.testing.assert_allclose(got.astype(np.float64), np.asarray(want, np.float64), rtol=rtol, atol=atol)
