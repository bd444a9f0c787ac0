"""conv{1,2,3}d_transpose (Keras Conv*DTranspose semantics) against a numpy scatter reference, the
adjoint identity with the numpy convolution, and Keras' output sizes."""
import numpy as np
import pytest

import tessera
from nn_reference import TOL, conv_nhwc, conv_transpose_nhwc


def rand(rng, shape, dtype):
    return rng.uniform(-1, 1, size=shape).astype(dtype)


# (op, input spatial, kernel spatial, CI, CO, attrs)
CASES = [
    ("conv2d_transpose", (3, 4), (3, 3), 2, 3, dict(strides=[2, 2])),
    ("conv2d_transpose", (3, 4), (3, 3), 2, 3, dict(strides=[2, 2], padding="same")),
    ("conv2d_transpose", (3, 3), (2, 2), 1, 2, dict(strides=[3, 3])),                      # stride > kernel
    ("conv2d_transpose", (3, 2), (4, 3), 2, 2, dict(strides=[2, 1], padding="same")),      # even kernel
    ("conv2d_transpose", (3, 3), (3, 3), 2, 2, dict(strides=[2, 2], padding="same", output_padding=[1, 0])),
    ("conv2d_transpose", (2, 3), (3, 2), 2, 1, dict(strides=[3, 2], output_padding=[2, 1])),
    ("conv2d_transpose", (4, 3), (3, 2), 2, 2, dict(dilation_rate=[2, 1], padding="same")),
    ("conv2d_transpose", (1, 1), (1, 1), 1, 1, dict()),
    ("conv2d_transpose", (1, 1), (3, 3), 1, 2, dict(strides=[2, 2], padding="same")),
    ("conv1d_transpose", (5,), (3,), 2, 2, dict(strides=2)),
    ("conv3d_transpose", (2, 2, 3), (2, 3, 2), 1, 2, dict(strides=[2, 1, 2], padding="same")),
]


def per_axis(v, ns):
    return list(v) if isinstance(v, (list, tuple)) else [v] * ns


def reference(x, k, attrs):
    ns = x.ndim - 2
    return conv_transpose_nhwc(x, k, per_axis(attrs.get("strides", 1), ns), attrs.get("padding", "valid"),
                               attrs.get("output_padding"), per_axis(attrs.get("dilation_rate", 1), ns))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[5]}")
def test_conv_transpose(case, dtype):
    op, spatial, ks, ci, co, attrs = case
    rng = np.random.default_rng(sum(spatial) + 10 * ci)
    x, k = rand(rng, (2, *spatial, ci), dtype), rand(rng, (*ks, co, ci), dtype)
    got = tessera.op(op, [x, k], device="interp", **attrs)
    want = reference(x, k, attrs)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **TOL[dtype])


def test_conv_transpose_bias_float16():
    rng = np.random.default_rng(4)
    x, k, b = rand(rng, (1, 3, 3, 2), np.float16), rand(rng, (3, 3, 3, 2), np.float16), rand(rng, (3,), np.float16)
    attrs = dict(strides=[2, 2], padding="same")
    got = tessera.op("conv2d_transpose", [x, k, b], device="interp", **attrs)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, reference(x, k, attrs) + b, **TOL[np.float16])


def test_conv_transpose_channels_first():
    rng = np.random.default_rng(5)
    x, k, b = rand(rng, (2, 2, 3, 4), np.float32), rand(rng, (3, 3, 3, 2), np.float32), rand(rng, (3,), np.float32)
    attrs = dict(strides=[2, 2], padding="same")
    got = tessera.op("conv2d_transpose", [x, k, b], device="interp", data_format="channels_first", **attrs)
    want = np.moveaxis(reference(np.moveaxis(x, 1, -1), k, attrs) + b, -1, 1)
    np.testing.assert_allclose(got, want, **TOL[np.float32])


@pytest.mark.parametrize("padding,strides,ks", [("valid", [2, 2], (3, 3)), ("same", [2, 3], (3, 2)),
                                                ("valid", [3, 2], (2, 2)), ("same", [1, 1], (2, 3))])
def test_adjoint_of_conv(padding, strides, ks):
    # <conv_transpose(x, k), y> == <x, conv(y, k)>: the transpose is the convolution's adjoint, with
    # the kernel [KH, KW, CO, CI] read by the convolution as [KH, KW, in=CO, out=CI].
    rng = np.random.default_rng(6)
    x, k = rng.standard_normal((1, 3, 4, 2)), rng.standard_normal((*ks, 3, 2))
    t = tessera.op("conv2d_transpose", [x, k], device="interp", strides=strides, padding=padding)
    y = rng.standard_normal(t.shape)
    conv_y = conv_nhwc(y, k, strides, [1, 1], padding)
    assert conv_y.shape == x.shape
    np.testing.assert_allclose(np.sum(t * y), np.sum(x * conv_y), rtol=1e-10)


@pytest.mark.parametrize("size,kernel,stride,padding,output_padding,want", [
    (4, 3, 2, "valid", None, 9), (4, 3, 2, "same", None, 8), (4, 2, 3, "valid", None, 12),
    (4, 3, 2, "same", 1, 8), (4, 3, 2, "valid", 1, 10), (5, 4, 1, "same", None, 5),
])
def test_keras_output_sizes(size, kernel, stride, padding, output_padding, want):
    x, k = np.ones((1, size, 1), np.float32), np.ones((kernel, 1, 1), np.float32)
    attrs = dict(strides=stride, padding=padding)
    if output_padding is not None:
        attrs["output_padding"] = output_padding
    assert tessera.op("conv1d_transpose", [x, k], device="interp", **attrs).shape == (1, want, 1)


def test_hand_computed_stride_two():
    # x = [1, 2], k = [1, 10, 100], stride 2, valid: out[2i + t] += x[i] * k[t].
    x = np.array([1.0, 2.0]).reshape(1, 2, 1)
    k = np.array([1.0, 10.0, 100.0]).reshape(3, 1, 1)
    got = tessera.op("conv1d_transpose", [x, k], device="interp", strides=2)
    np.testing.assert_array_equal(got.reshape(-1), [1.0, 10.0, 102.0, 20.0, 200.0])
