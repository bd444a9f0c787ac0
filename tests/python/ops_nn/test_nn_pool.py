"""Max and average pooling (1-3 spatial dims, padding, strides, data formats) and global pooling."""
import numpy as np
import pytest

import tessera
from nn_reference import TOL, pool_nhwc


def rand(rng, shape, dtype):
    return rng.uniform(-1, 1, size=shape).astype(dtype)


# (input spatial, pool_size, attrs)
CASES = [
    ((7,), (2,), dict()),
    ((7,), (3,), dict(strides=2, padding="same")),
    ((6, 5), (2, 2), dict()),
    ((6, 5), (3, 3), dict(strides=[1, 1], padding="same")),
    ((5, 6), (2, 3), dict(strides=[2, 2], padding="same")),     # even window 'same'
    ((7, 7), (2, 2), dict(strides=[3, 3])),                       # strides > window
    ((5, 4), (3, 2), dict(padding=[1, 1, 0, 1], strides=[2, 1])),  # explicit padding
    ((1, 1), (1, 1), dict()),
    ((1, 5), (1, 2), dict(padding="same")),
    ((4, 3, 5), (2, 2, 3), dict(strides=[2, 1, 2], padding="same")),
]


def run_case(case, mode, dtype, fmt, seed):
    spatial, pool, attrs = case
    ns = len(spatial)
    op = f"{mode}_pool{ns}d"
    rng = np.random.default_rng(seed)
    x_last = rand(rng, (2, *spatial, 3), dtype)
    strides = attrs.get("strides", list(pool))
    strides = list(strides) if isinstance(strides, (list, tuple)) else [strides] * ns
    want = pool_nhwc(x_last, mode, list(pool), strides, attrs.get("padding", "valid"))
    x = x_last
    if fmt == "channels_first":
        x = np.ascontiguousarray(np.moveaxis(x_last, -1, 1))
        want = np.moveaxis(want, -1, 1)
    got = tessera.op(op, [x], device="interp", pool_size=list(pool), data_format=fmt, **attrs)
    assert got.dtype == dtype
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["max", "avg"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_pool_channels_last(case, mode, dtype):
    run_case(case, mode, dtype, "channels_last", seed=sum(case[0]))


@pytest.mark.parametrize("mode", ["max", "avg"])
@pytest.mark.parametrize("case", CASES[1::2], ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_pool_channels_first(case, mode):
    run_case(case, mode, np.float32, "channels_first", seed=3)


@pytest.mark.parametrize("mode", ["max", "avg"])
def test_pool_float16(mode):
    run_case(CASES[4], mode, np.float16, "channels_last", seed=9)


def test_generic_pool_names():
    rng = np.random.default_rng(2)
    x = rand(rng, (1, 5, 5, 2), np.float32)
    for mode in ["max", "avg"]:
        got = tessera.op(f"{mode}_pool", [x], device="interp", pool_size=2, padding="same")
        np.testing.assert_allclose(got, pool_nhwc(x, mode, [2, 2], [2, 2], "same"), **TOL[np.float32])


def test_avg_counts_only_in_range_taps_hand_computed():
    # 3-wide 'same' window, stride 1: the ends average two values, not three.
    x = np.array([3.0, 6.0, 9.0, 12.0]).reshape(1, 4, 1)
    got = tessera.op("avg_pool1d", [x], device="interp", pool_size=3, strides=1, padding="same")
    np.testing.assert_allclose(got.reshape(-1), [4.5, 6.0, 9.0, 10.5], rtol=1e-12)


def test_max_pool_negative_values_ignore_padding():
    x = -np.arange(1.0, 6.0).reshape(1, 5, 1)
    got = tessera.op("max_pool1d", [x], device="interp", pool_size=2, padding="same")
    np.testing.assert_array_equal(got.reshape(-1), [-1.0, -3.0, -5.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,fmt", [((2, 4, 5, 3), "channels_last"), ((2, 3, 4, 5), "channels_first"),
                                       ((1, 6, 2), "channels_last"), ((2, 2, 3, 2, 2), "channels_last"),
                                       ((1, 1, 1, 1), "channels_last")])
@pytest.mark.parametrize("keepdims", [False, True])
def test_global_pool(shape, fmt, keepdims, dtype):
    rng = np.random.default_rng(len(shape))
    x = rand(rng, shape, dtype)
    axes = tuple(range(1, x.ndim - 1)) if fmt == "channels_last" else tuple(range(2, x.ndim))
    for mode, fn in [("max", np.max), ("avg", np.mean)]:
        got = tessera.op(f"global_{mode}_pool", [x], device="interp", keepdims=keepdims, data_format=fmt)
        want = fn(x.astype(np.float64), axis=axes, keepdims=keepdims)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, **TOL[dtype])


def test_pool_errors_reach_python():
    with pytest.raises(tessera.OpError, match="max_pool2d: pool window spans 4 on spatial dimension 0"):
        tessera.op("max_pool2d", [np.zeros((1, 3, 5, 1), np.float32)], device="interp", pool_size=4)
