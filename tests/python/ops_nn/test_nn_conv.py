"""conv1d/2d/3d (strides, dilation, padding, groups, data formats, bias) against numpy, on interp."""
import numpy as np
import pytest
import scipy.signal

import tessera
from nn_reference import TOL, conv_nchw, conv_nhwc


def rand(rng, shape, dtype):
    return rng.uniform(-1, 1, size=shape).astype(dtype)


# (op, input spatial, kernel spatial, CI, CO, attrs); channels_last unless attrs say otherwise.
CASES = [
    ("conv1d", (7,), (3,), 2, 3, dict()),
    ("conv1d", (8,), (4,), 3, 2, dict(padding="same", strides=2)),                 # even kernel, 'same'
    ("conv1d", (9,), (3,), 1, 1, dict(padding="same", dilation=2)),
    ("conv1d", (5,), (2,), 2, 2, dict(strides=3)),                                 # stride > kernel
    ("conv2d", (5, 6), (3, 3), 2, 3, dict()),
    ("conv2d", (5, 6), (3, 3), 2, 3, dict(padding="same")),
    ("conv2d", (6, 5), (2, 4), 3, 2, dict(padding="same")),                        # even kernels pad more after
    ("conv2d", (7, 8), (2, 2), 1, 2, dict(strides=[3, 3], padding="same")),        # strides > kernel
    ("conv2d", (7, 7), (3, 2), 2, 2, dict(dilation_rate=[2, 3], strides=[1, 2])),
    ("conv2d", (5, 4), (3, 3), 2, 2, dict(padding=[1, 2, 0, 3], strides=[2, 1])),  # explicit (before, after)
    ("conv2d", (5, 5), (3, 3), 4, 6, dict(groups=2, padding="same")),
    ("conv2d", (5, 6), (3, 3), 3, 6, dict(groups=3)),                              # depthwise, multiplier 2
    ("conv2d", (1, 1), (1, 1), 1, 1, dict()),                                      # size-1 everything
    ("conv2d", (1, 5), (1, 3), 2, 2, dict(padding="same", strides=[1, 2])),
    ("conv3d", (4, 3, 5), (2, 2, 3), 2, 2, dict(padding="same", strides=[2, 1, 2])),
    ("conv", (6,), (3,), 2, 2, dict(padding="same")),                              # generic name, 1-D
    ("conv", (4, 4), (2, 2), 2, 4, dict(groups=2)),
]


def kernel_shape(fmt, ks, ci, co, groups):
    return (co, ci // groups, *ks) if fmt == "channels_first" else (*ks, ci // groups, co)


def run_case(case, dtype, fmt, batch, bias, seed):
    op, spatial, ks, ci, co, attrs = case
    attrs = dict(attrs)
    groups = attrs.get("groups", 1)
    ns = len(spatial)
    rng = np.random.default_rng(seed)
    x_shape = (batch, ci, *spatial) if fmt == "channels_first" else (batch, *spatial, ci)
    x = rand(rng, x_shape, dtype)
    k = rand(rng, kernel_shape(fmt, ks, ci, co, groups), dtype)
    inputs = [x, k]
    if fmt == "channels_first":
        attrs["data_format"] = fmt

    def per_axis(v):
        return list(v) if isinstance(v, (list, tuple)) else [v] * ns

    strides = per_axis(attrs.get("strides", 1))
    dilation = per_axis(attrs.get("dilation", attrs.get("dilation_rate", 1)))
    ref = conv_nchw if fmt == "channels_first" else conv_nhwc
    want = ref(x, k, strides, dilation, attrs.get("padding", "valid"), groups)
    if bias:
        b = rand(rng, (co,), dtype)
        inputs.append(b)
        want = want + (b.reshape((co,) + (1,) * ns) if fmt == "channels_first" else b)
    got = tessera.op(op, inputs, device="interp", **attrs)
    assert got.dtype == dtype
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[5]}")
def test_conv_channels_last(case, dtype):
    run_case(case, dtype, "channels_last", batch=2, bias=False, seed=len(case[1]) * 100 + case[3])


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[5]}")
def test_conv_channels_first_with_bias(case):
    run_case(case, np.float32, "channels_first", batch=1, bias=True, seed=7 + case[4])


@pytest.mark.parametrize("case", [CASES[1], CASES[11]], ids=["conv1d-same-even", "depthwise"])
def test_conv_float16(case):
    run_case(case, np.float16, "channels_last", batch=1, bias=True, seed=11)


def test_conv_bias_channels_last():
    run_case(CASES[5], np.float64, "channels_last", batch=3, bias=True, seed=5)


@pytest.mark.parametrize("mode", ["valid", "same"])
def test_reference_agrees_with_scipy(mode):
    # Stride 1 and an odd kernel: TensorFlow's 'same' is scipy's centred 'same' correlation.
    rng = np.random.default_rng(1)
    x, k = rng.standard_normal((6, 7)), rng.standard_normal((3, 5))
    want = scipy.signal.correlate2d(x, k, mode=mode)
    got = tessera.op("conv2d", [x.reshape(1, 6, 7, 1), k.reshape(3, 5, 1, 1)], device="interp", padding=mode)
    np.testing.assert_allclose(got[0, ..., 0], want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(conv_nhwc(x.reshape(1, 6, 7, 1), k.reshape(3, 5, 1, 1), [1, 1], [1, 1], mode)[0, ..., 0],
                               want, rtol=1e-12, atol=1e-12)


def test_same_even_kernel_hand_computed():
    # in 4, kernel 2, stride 1: pad (0, 1), so the last output sees x[3] * k[0] alone.
    x = np.array([1.0, 2.0, 3.0, 4.0]).reshape(1, 4, 1)
    k = np.array([10.0, 1.0]).reshape(2, 1, 1)
    got = tessera.op("conv1d", [x, k], device="interp", padding="same")
    np.testing.assert_array_equal(got.reshape(-1), [12.0, 23.0, 34.0, 40.0])


def test_conv_errors_reach_python():
    x, k = np.zeros((1, 5, 5, 4), np.float32), np.zeros((3, 3, 3, 2), np.float32)
    with pytest.raises(tessera.OpError, match="conv2d: kernel .* has 3 input channels but the input has 4"):
        tessera.op("conv2d", [x, k], device="interp")
    with pytest.raises(tessera.OpError, match="conv2d: unknown padding 'full'"):
        tessera.op("conv2d", [x, k], device="interp", padding="full")
