"""tessera.keras.backend._nn against numpy on the cpu device: activations, crossentropies,
convolutions, pooling, resizing, padding, normalization, dropout, and gradients through them
against finite differences."""
import itertools
import pathlib
import sys

import numpy as np
import pytest

import tessera
from tessera.keras.backend import _nn as K

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ops_nn"))
from nn_reference import conv_nhwc, conv_transpose_nhwc, deconv_length, pool_nhwc  # noqa: E402

CPU = tessera.Device("cpu")
TOL = dict(rtol=1e-5, atol=1e-5)


def rand(shape, seed=0, lo=-1.0, hi=1.0):
    return np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(np.float32)


def run(fn, *arrays, dynamic=(), all_dynamic=False):
    """fn on placeholders fed with `arrays`; axes in `dynamic` are None in the first one's shape
    (in every one's with all_dynamic)."""
    phs = [tessera.placeholder(a.dtype, [None if (j == 0 or all_dynamic) and i in dynamic else d
                                         for i, d in enumerate(a.shape)])
           for j, a in enumerate(arrays)]
    outs = fn(*phs)
    many = isinstance(outs, (list, tuple))
    got = tessera.Function(phs, list(outs) if many else [outs], device=CPU)(list(arrays))
    return got if many else got[0]


def numeric_grad(fn, args, wrt, eps=1e-2):
    """Central differences of sum(fn(*args) * R) with respect to args[wrt], in float64."""
    phs = [tessera.placeholder(a.dtype, a.shape) for a in args]
    y = fn(*phs)
    proj = rand(y.shape, seed=7)
    loss = tessera.ops.sum(y * tessera.constant(proj))
    (grad,) = tessera.gradients(loss, [phs[wrt]])
    f = tessera.Function(phs, [loss, grad], device=CPU)
    analytic = f(list(args))[1]
    numeric = np.zeros(args[wrt].shape)
    for i in np.ndindex(args[wrt].shape):
        vals = []
        for step in (eps, -eps):
            moved = [a.copy() for a in args]
            moved[wrt][i] += step
            vals.append(float(f(moved)[0]))
        numeric[i] = (vals[0] - vals[1]) / (2 * eps)
    return analytic, numeric


def to_first(x):
    return np.moveaxis(x, -1, 1)


def to_last(x):
    return np.moveaxis(x, 1, -1)


# --- activations ------------------------------------------------------------------------------


def np_relu(x, alpha=0., max_value=None, threshold=0.):
    above = np.clip(x * (x >= threshold), 0, np.inf if max_value is None else max_value)
    return above + alpha * (x - threshold) * (x < threshold)


@pytest.mark.parametrize("alpha,max_value,threshold", [
    (0.0, None, 0.0), (0.1, None, 0.0), (0.0, 0.5, 0.0), (0.0, None, 0.3), (0.1, 0.5, 0.3),
    (0.1, 0.0, 0.3), (0.2, 0.6, -0.4)])
def test_relu(alpha, max_value, threshold):
    x = rand((4, 6))
    got = run(lambda t: K.relu(t, alpha=alpha, max_value=max_value, threshold=threshold), x)
    np.testing.assert_allclose(got, np_relu(x, alpha, max_value, threshold), **TOL)


def test_elementwise_activations():
    x = rand((3, 7), lo=-4, hi=4)
    sig = 1 / (1 + np.exp(-x))
    cases = [(K.elu, lambda t: K.elu(t, 0.5), np.where(x > 0, x, 0.5 * (np.exp(x) - 1))),
             (K.softplus, K.softplus, np.log1p(np.exp(x))),
             (K.softsign, K.softsign, x / (1 + np.abs(x))),
             (K.sigmoid, K.sigmoid, sig),
             (K.hard_sigmoid, K.hard_sigmoid, np.clip(0.2 * x + 0.5, 0, 1)),
             (K.tanh, K.tanh, np.tanh(x))]
    for name, fn, want in cases:
        np.testing.assert_allclose(run(fn, x), want, rtol=1e-5, atol=1e-6, err_msg=name.__name__)


@pytest.mark.parametrize("shape,axis", [((4, 10), -1), ((4, 5, 3), 1), ((2, 5, 3, 4), 2)])
def test_softmax(shape, axis):
    x = rand(shape, lo=-3, hi=3)
    e = np.exp(x - x.max(axis, keepdims=True))
    np.testing.assert_allclose(run(lambda t: K.softmax(t, axis), x), e / e.sum(axis, keepdims=True),
                               **TOL)


def test_l2_normalize():
    x = rand((4, 3))
    for axis in (-1, 0, None):
        sq = np.sum(x * x, axis=axis, keepdims=True)
        np.testing.assert_allclose(run(lambda t: K.l2_normalize(t, axis), x), x / np.sqrt(sq),
                                   **TOL)


# --- losses -----------------------------------------------------------------------------------


def np_log_softmax(z, axis=-1):
    z = z - z.max(axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis, keepdims=True))


def test_categorical_crossentropy():
    p = rand((5, 4), lo=0.05, hi=1)
    t = np.eye(4, dtype=np.float32)[[0, 3, 1, 1, 2]]
    want = -np.sum(t * np.log(np.clip(p / p.sum(-1, keepdims=True), 1e-7, 1 - 1e-7)), -1)
    np.testing.assert_allclose(run(K.categorical_crossentropy, t, p), want, **TOL)
    z = rand((5, 4), lo=-3, hi=3)
    want = -np.sum(t * np_log_softmax(z), -1)
    np.testing.assert_allclose(run(lambda a, b: K.categorical_crossentropy(a, b, True), t, z),
                               want, **TOL)
    # Classes on axis 1 (channels_first).
    z3 = rand((2, 4, 3), lo=-3, hi=3)
    t3 = np.moveaxis(np.eye(4, dtype=np.float32)[[[0, 1, 2], [3, 3, 0]]], -1, 1)
    want = -np.sum(t3 * np_log_softmax(z3, 1), 1)
    got = run(lambda a, b: K.categorical_crossentropy(a, b, from_logits=True, axis=1), t3, z3)
    np.testing.assert_allclose(got, want, **TOL)


def test_sparse_categorical_crossentropy():
    z = rand((6, 4), lo=-3, hi=3)
    ids = np.array([0, 3, 1, 1, 2, 0])
    want = -np_log_softmax(z)[np.arange(6), ids]
    # Keras feeds the ids as floats with a trailing unit axis.
    got = run(lambda a, b: K.sparse_categorical_crossentropy(a, b, from_logits=True),
              ids.astype(np.float32)[:, None], z, dynamic=(0,), all_dynamic=True)
    np.testing.assert_allclose(got, want, **TOL)
    p = rand((6, 4), lo=0.05, hi=1)
    p /= p.sum(-1, keepdims=True)
    want = -np.log(p[np.arange(6), ids])
    np.testing.assert_allclose(run(K.sparse_categorical_crossentropy, ids.astype(np.int32), p),
                               want, **TOL)
    z3 = rand((2, 4, 3), lo=-3, hi=3)
    ids3 = np.array([[0, 1, 3], [2, 2, 0]])
    want = -np.take_along_axis(np_log_softmax(z3, 1), ids3[:, None, :], 1)[:, 0]
    got = run(lambda a, b: K.sparse_categorical_crossentropy(a, b, True, axis=1),
              ids3.astype(np.int64), z3)
    np.testing.assert_allclose(got, want, **TOL)


def test_binary_crossentropy():
    p = rand((4, 3), lo=0.01, hi=0.99)
    t = rand((4, 3), seed=1, lo=0, hi=1)
    want = -(t * np.log(p) + (1 - t) * np.log(1 - p))
    np.testing.assert_allclose(run(K.binary_crossentropy, t, p), want, rtol=1e-5, atol=1e-5)
    z = rand((4, 3), lo=-20, hi=20)
    s = 1 / (1 + np.exp(-z.astype(np.float64)))
    want = -(t * np.log(s) + (1 - t) * np.log1p(-s))
    got = run(lambda a, b: K.binary_crossentropy(a, b, from_logits=True), t, z)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


# --- convolutions -----------------------------------------------------------------------------


def np_conv(x, k, strides, padding, data_format, dilation):
    if data_format == "channels_first":
        x = to_last(x)
    if padding == "causal":
        x = np.pad(x, [(0, 0), (dilation[0] * (k.shape[0] - 1), 0), (0, 0)])
        padding = "valid"
    y = conv_nhwc(x, k, strides, dilation, padding)
    return to_first(y) if data_format == "channels_first" else y


CONV_CASES = [
    # (spatial input, kernel spatial, CI, CO, strides, padding, data_format, dilation)
    ((8,), (3,), 2, 3, (1,), "same", "channels_last", (1,)),
    ((9,), (4,), 3, 2, (2,), "valid", "channels_first", (1,)),
    ((8,), (3,), 2, 2, (1,), "causal", "channels_last", (2,)),
    ((8,), (4,), 3, 2, (1,), "valid", "channels_first", (2,)),
    ((5, 6), (3, 3), 3, 2, (1, 1), "same", "channels_first", (1, 1)),
    ((7, 6), (3, 2), 2, 4, (2, 2), "same", "channels_last", (1, 1)),
    ((8, 9), (3, 3), 3, 2, (1, 1), "same", "channels_last", (2, 2)),
    ((9, 8), (4, 3), 3, 4, (1, 2), "valid", "channels_first", (2, 1)),
    ((4, 5, 4), (3, 3, 3), 2, 3, (1, 1, 1), "same", "channels_first", (1, 1, 1)),
    ((5, 4, 6), (2, 2, 3), 3, 2, (2, 1, 2), "valid", "channels_last", (1, 1, 1)),
    ((5, 4, 6), (2, 2, 3), 3, 4, (1, 1, 1), "valid", "channels_last", (2, 2, 2)),
]


@pytest.mark.parametrize("sizes,window,ci,co,strides,padding,data_format,dilation", CONV_CASES)
def test_conv(sizes, window, ci, co, strides, padding, data_format, dilation):
    nd = len(sizes)
    shape = (2, *sizes, ci) if data_format == "channels_last" else (2, ci, *sizes)
    x, k = rand(shape), rand((*window, ci, co), seed=1)
    fn = {1: K.conv1d, 2: K.conv2d, 3: K.conv3d}[nd]
    got = run(lambda a, b: fn(a, b, strides=strides if nd > 1 else strides[0], padding=padding,
                              data_format=data_format,
                              dilation_rate=dilation if nd > 1 else dilation[0]),
              x, k, dynamic=(0,))
    np.testing.assert_allclose(got, np_conv(x, k, strides, padding, data_format, dilation),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("nd,sizes,window,strides,padding,output_padding,data_format,dilation", [
    (2, (5, 6), (3, 3), (1, 1), "same", None, "channels_last", (1, 1)),
    (2, (3, 4), (3, 3), (2, 2), "valid", None, "channels_first", (1, 1)),
    (2, (3, 4), (3, 2), (2, 3), "same", (1, 0), "channels_last", (1, 1)),
    (2, (3, 4), (3, 3), (2, 2), "valid", (1, 1), "channels_last", (1, 1)),
    (2, (5, 6), (3, 3), (1, 1), "same", None, "channels_first", (2, 2)),
    (3, (2, 3, 2), (2, 3, 2), (2, 1, 2), "same", None, "channels_last", (1, 1, 1)),
    (3, (2, 3, 2), (3, 2, 2), (2, 2, 1), "valid", None, "channels_first", (1, 1, 1)),
])
def test_conv_transpose(nd, sizes, window, strides, padding, output_padding, data_format,
                        dilation):
    ci, co = 3, 2
    last = data_format == "channels_last"
    x = rand((2, *sizes, ci) if last else (2, ci, *sizes))
    k = rand((*window, co, ci), seed=1)
    ops_ = output_padding or [None] * nd
    outs = [deconv_length(s, w, st, padding, p, d)
            for s, w, st, p, d in zip(sizes, window, strides, ops_, dilation)]
    want = conv_transpose_nhwc(x if last else to_last(x), k, strides, padding, output_padding,
                               list(dilation))
    want = want if last else to_first(want)
    fn = K.conv2d_transpose if nd == 2 else K.conv3d_transpose

    # The output shape as Keras' Conv*DTranspose gives it: the batch from K.shape, sizes as ints.
    def build(a, b):
        out_shape = [tessera.shape(a)[0]] + (outs + [co] if last else [co] + outs)
        return fn(a, b, out_shape, strides, padding=padding, data_format=data_format,
                  dilation_rate=dilation)
    got = run(build, x, k, dynamic=(0,))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_conv_transpose_output_size_from_run_time_shape():
    """Spatial sizes unknown until run: the output size is a tensor computed from K.shape."""
    x, k = rand((1, 3, 4, 2)), rand((3, 3, 2, 2), seed=1)
    want = conv_transpose_nhwc(x, k, [2, 2], "valid", [1, 1])

    def build(a, b):
        s = tessera.shape(a)
        out = [s[0], (s[1] - 1) * 2 + 3 + 1, (s[2] - 1) * 2 + 3 + 1, 2]
        return K.conv2d_transpose(a, b, out, (2, 2), padding="valid")
    got = run(build, x, k, dynamic=(1, 2))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="output size"):
        run(lambda a, b: K.conv2d_transpose(a, b, (1, 9, 9, 2), (2, 2)), x, k)


def np_depthwise(x, k, strides, padding, dilation):
    """x [N, S..., C], k [K..., C, M] -> [N, O..., C * M] (channel c * M + m)."""
    c, m = k.shape[-2:]
    outs = [conv_nhwc(x[..., i:i + 1], k[..., i, :][..., None, :], strides, dilation, padding)
            for i in range(c)]
    return np.concatenate(outs, -1)


@pytest.mark.parametrize("sizes,window,c,m,strides,padding,data_format,dilation", [
    ((4, 5), (3, 3), 3, 2, (1, 1), "same", "channels_first", (1, 1)),
    ((6, 5), (3, 4), 3, 1, (2, 1), "valid", "channels_last", (1, 1)),
    ((7, 6), (3, 3), 2, 3, (1, 1), "same", "channels_last", (2, 1)),
])
def test_depthwise_and_separable_conv2d(sizes, window, c, m, strides, padding, data_format,
                                        dilation):
    last = data_format == "channels_last"
    x = rand((2, *sizes, c) if last else (2, c, *sizes))
    dk, pk = rand((*window, c, m), seed=1), rand((1, 1, c * m, 5), seed=2)
    want = np_depthwise(x if last else to_last(x), dk, strides, padding, dilation)
    want_sep = conv_nhwc(want, pk, (1, 1), (1, 1), "valid")
    got = run(lambda a, b: K.depthwise_conv2d(a, b, strides, padding, data_format, dilation),
              x, dk)
    np.testing.assert_allclose(got, want if last else to_first(want), rtol=1e-4, atol=1e-5)
    got = run(lambda a, b, p: K.separable_conv2d(a, b, p, strides, padding, data_format,
                                                 dilation), x, dk, pk)
    np.testing.assert_allclose(got, want_sep if last else to_first(want_sep), rtol=1e-4,
                               atol=1e-5)


@pytest.mark.parametrize("data_format,padding,m", [("channels_last", "same", 1),
                                                   ("channels_first", "valid", 2)])
def test_separable_conv1d(data_format, padding, m):
    last = data_format == "channels_last"
    x = rand((2, 8, 3) if last else (2, 3, 8))
    dk, pk = rand((3, 3, m), seed=1), rand((1, 3 * m, 4), seed=2)
    want = conv_nhwc(np_depthwise(x if last else to_last(x), dk, (2,), padding, (1,)), pk, (1,),
                     (1,), "valid")
    got = run(lambda a, b, p: K.separable_conv1d(a, b, p, 2, padding, data_format), x, dk, pk)
    np.testing.assert_allclose(got, want if last else to_first(want), rtol=1e-4, atol=1e-5)


def test_local_conv1d():
    x = rand((2, 9, 3))
    window, stride, filters = 3, 2, 4
    length = (9 - window) // stride + 1
    k = rand((length, window * 3, filters), seed=1)
    want = np.stack([x[:, i * stride:i * stride + window, :].reshape(2, -1) @ k[i]
                     for i in range(length)], 1)
    got = run(lambda a, b: K.local_conv1d(a, b, (window,), (stride,)), x, k, dynamic=(0,))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_local_conv2d(data_format):
    last = data_format == "channels_last"
    x = rand((2, 6, 7, 3) if last else (2, 3, 6, 7))
    (kh, kw), (sh, sw), filters = (3, 2), (2, 2), 4
    rows, cols = (6 - kh) // sh + 1, (7 - kw) // sw + 1
    k = rand((rows * cols, kh * kw * 3, filters), seed=1)
    out = np.zeros((2, rows, cols, filters), np.float32)
    for i, j in itertools.product(range(rows), range(cols)):
        r, c = slice(i * sh, i * sh + kh), slice(j * sw, j * sw + kw)
        patch = x[:, r, c, :] if last else x[:, :, r, c]  # flattened as Keras slices it
        out[:, i, j] = patch.reshape(2, -1) @ k[i * cols + j]
    got = run(lambda a, b: K.local_conv2d(a, b, (kh, kw), (sh, sw), (rows, cols), data_format),
              x, k)
    np.testing.assert_allclose(got, out if last else to_first(out), rtol=1e-4, atol=1e-5)


# --- pooling ----------------------------------------------------------------------------------


@pytest.mark.parametrize("sizes,pool,strides,padding,data_format,mode", [
    ((7, 7), (3, 3), (1, 1), "same", "channels_first", "avg"),
    ((8, 5), (2, 3), (2, 1), "valid", "channels_first", "max"),
    ((9, 5), (3, 2), (2, 2), "same", "channels_last", "avg"),
    ((6, 7), (3, 3), (2, 2), "same", "channels_last", "max"),
    ((5, 6, 7), (3, 3, 2), (2, 2, 2), "same", "channels_first", "avg"),
    ((5, 6, 4), (2, 3, 2), (1, 2, 1), "valid", "channels_last", "max"),
])
def test_pool(sizes, pool, strides, padding, data_format, mode):
    last = data_format == "channels_last"
    x = rand((2, *sizes, 3) if last else (2, 3, *sizes))
    want = pool_nhwc(x if last else to_last(x), mode, pool, strides, padding)
    fn = K.pool2d if len(sizes) == 2 else K.pool3d
    got = run(lambda a: fn(a, pool, strides, padding, data_format, mode), x, dynamic=(0,))
    np.testing.assert_allclose(got, want if last else to_first(want), rtol=1e-5, atol=1e-6)


def test_invalid_arguments_raise_value_error():
    x4 = tessera.placeholder("float32", (2, 5, 5, 3))
    k4 = tessera.placeholder("float32", (2, 2, 3, 4))
    x3 = tessera.placeholder("float32", (2, 5, 3))
    with pytest.raises(ValueError):
        K.conv2d(x4, k4, data_format="channels_middle")
    with pytest.raises(ValueError):
        K.conv2d(x4, k4, padding="causal")
    with pytest.raises(ValueError):
        K.conv1d(tessera.placeholder("float32", (2, 3, 5)),
                 tessera.placeholder("float32", (2, 3, 3)), padding="causal",
                 data_format="channels_first")
    with pytest.raises(ValueError):
        K.pool2d(x4, (2, 2), padding="twice")
    with pytest.raises(ValueError):
        K.pool2d(x4, (2, 2), pool_mode="median")
    with pytest.raises(ValueError):
        K.depthwise_conv2d(x4, k4, data_format="channels_middle")
    with pytest.raises(ValueError):
        K.resize_images(x4, 2, 2, "channels_middle")
    with pytest.raises(ValueError):
        K.spatial_2d_padding(x4, data_format="channels_middle")
    with pytest.raises(ValueError):
        K.bias_add(x3, tessera.placeholder("float32", (1, 1, 1)))
    with pytest.raises(ValueError):
        K.dropout(x3, -0.5)


# --- bias, resizing, padding ------------------------------------------------------------------


@pytest.mark.parametrize("data_format", ["channels_first", "channels_last"])
def test_bias_add(data_format):
    for inner in [(), (3,), (2, 3), (5, 3, 2)]:
        shape = (1, 4) + inner if data_format == "channels_first" else (1,) + inner + (4,)
        x, b = rand(shape), rand((4,), seed=1)
        want = x + (b.reshape((4,) + (1,) * len(inner)) if data_format == "channels_first" else b)
        np.testing.assert_allclose(run(lambda a, c: K.bias_add(a, c, data_format), x, b), want,
                                   **TOL)
    # A bias for every non-batch axis, given with channels last.
    x = rand((2, 6, 10) if data_format == "channels_first" else (2, 10, 6))
    b = rand((10, 6), seed=1)
    # TensorFlow's Keras reshapes (not transposes) a (10, 6) bias to (6, 10) for channels_first.
    want = x + (b.reshape(6, 10) if data_format == "channels_first" else b)
    np.testing.assert_allclose(run(lambda a, c: K.bias_add(a, c, data_format), x, b), want, **TOL)


def np_bilinear_legacy(x, fh, fw):
    """TensorFlow 1's resize_bilinear (no align_corners, no half-pixel centers) on NHWC."""
    def axis(x, f, ax):
        n = x.shape[ax]
        src = np.arange(n * f) / f
        lo = np.floor(src).astype(int)
        hi = np.minimum(lo + 1, n - 1)
        w = (src - lo).reshape([-1 if a == ax else 1 for a in range(x.ndim)])
        return np.take(x, lo, ax) * (1 - w) + np.take(x, hi, ax) * w
    return axis(axis(x, fh, 1), fw, 2)


@pytest.mark.parametrize("data_format", ["channels_first", "channels_last"])
@pytest.mark.parametrize("fh,fw", [(2, 2), (3, 1), (4, 2)])
def test_resize_images(data_format, fh, fw):
    last = data_format == "channels_last"
    x = rand((2, 3, 4, 5))
    x_last = x if last else to_last(x)
    near = np.repeat(np.repeat(x_last, fh, 1), fw, 2)
    got = run(lambda a: K.resize_images(a, fh, fw, data_format), x, dynamic=(0,))
    np.testing.assert_allclose(got, near if last else to_first(near), **TOL)
    bil = np_bilinear_legacy(x_last, fh, fw)
    got = run(lambda a: K.resize_images(a, fh, fw, data_format, interpolation="bilinear"), x)
    np.testing.assert_allclose(got, bil if last else to_first(bil), **TOL)


@pytest.mark.parametrize("data_format", ["channels_first", "channels_last"])
def test_resize_volumes(data_format):
    x = rand((2, 3, 2, 4, 3))
    first = 1 if data_format == "channels_last" else 2
    want = np.repeat(np.repeat(np.repeat(x, 2, first), 3, first + 1), 1, first + 2)
    got = run(lambda a: K.resize_volumes(a, 2, 3, 1, data_format), x)
    np.testing.assert_allclose(got, want, **TOL)


def test_padding():
    x = rand((2, 3, 4))
    np.testing.assert_allclose(run(lambda a: K.temporal_padding(a, (1, 2)), x, dynamic=(0, 1)),
                               np.pad(x, [(0, 0), (1, 2), (0, 0)]))
    pad2 = ((1, 2), (2, 1))
    x = rand((1, 5, 4, 3))
    np.testing.assert_allclose(run(lambda a: K.spatial_2d_padding(a, pad2, "channels_last"), x),
                               np.pad(x, [(0, 0), *pad2, (0, 0)]))
    np.testing.assert_allclose(run(lambda a: K.spatial_2d_padding(a, pad2, "channels_first"), x),
                               np.pad(x, [(0, 0), (0, 0), *pad2]))
    pad3 = ((1, 2), (2, 1), (0, 1))
    x = rand((1, 3, 2, 4, 2))
    np.testing.assert_allclose(run(lambda a: K.spatial_3d_padding(a, pad3, "channels_last"), x),
                               np.pad(x, [(0, 0), *pad3, (0, 0)]))
    np.testing.assert_allclose(run(lambda a: K.spatial_3d_padding(a, pad3, "channels_first"), x),
                               np.pad(x, [(0, 0), (0, 0), *pad3]))
    y = K.spatial_2d_padding(tessera.placeholder("float32", (1, None, None, 1)), pad2)
    assert y.shape == (1, None, None, 1)


# --- normalization and dropout ----------------------------------------------------------------


@pytest.mark.parametrize("x_shape", [(3, 2, 4, 5), (3, 2, 4)])
@pytest.mark.parametrize("axis", [1, -1])
@pytest.mark.parametrize("compact", [False, True])
def test_batch_normalization(x_shape, axis, compact):
    other = [1] * len(x_shape)
    other[axis] = x_shape[axis]
    if compact:
        other = [x_shape[axis]]
    x = rand(x_shape)
    mean, beta, gamma = (rand(other, seed=s) for s in (1, 2, 3))
    var = rand(other, seed=4, lo=0.1, hi=1)
    shape = [1] * len(x_shape)
    shape[axis] = x_shape[axis]
    m, v, b, g = (p.reshape(shape) for p in (mean, var, beta, gamma))
    want = (x - m) / np.sqrt(v + 1e-3) * g + b
    got = run(lambda *a: K.batch_normalization(*a, axis=axis), x, mean, var, beta, gamma)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    got = run(lambda a, mm, vv: K.batch_normalization(a, mm, vv, None, None, axis=axis), x, mean,
              var)
    np.testing.assert_allclose(got, (x - m) / np.sqrt(v + 1e-3), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("x_shape,axes,with_params", [
    ((4, 3, 2, 5), [0, 1, 2], True), ((4, 5, 2, 3), [0, 2, 3], True),
    ((4, 3, 5), [0, 2], False), ((2, 3, 4, 2), [0, 1, 2, 3], False), ((4, 3, 5), [0], True)])
def test_normalize_batch_in_training(x_shape, axes, with_params):
    x = rand(x_shape)
    kept = [a for a in range(len(x_shape)) if a not in axes]
    pshape = [x_shape[a] for a in kept]
    gamma, beta = rand(pshape, seed=1), rand(pshape, seed=2)
    mean, var = x.mean(tuple(axes)), x.var(tuple(axes))
    bshape = [1 if a in axes else x_shape[a] for a in range(len(x_shape))]
    want = (x - mean.reshape(bshape)) / np.sqrt(var.reshape(bshape) + 1e-3)
    if with_params:
        want = want * gamma.reshape(bshape) + beta.reshape(bshape)
        got = run(lambda a, g, b: K.normalize_batch_in_training(a, g, b, axes), x, gamma, beta,
                  dynamic=(0,))
    else:
        got = run(lambda a: K.normalize_batch_in_training(a, None, None, axes), x)
    for g, w in zip(got, (want, mean, var)):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_dropout():
    x = np.ones((200, 100), np.float32)
    ph = tessera.placeholder("float32", (None, 100))
    f = tessera.Function([ph], [K.dropout(ph, 0.2, seed=3)], device=CPU)
    a, b = f([x])[0], f([x])[0]
    assert set(np.unique(a)) <= {0.0, np.float32(1 / 0.8)}
    assert abs((a == 0).mean() - 0.2) < 0.02 and abs(a.mean() - 1) < 0.03
    assert (a != b).any(), "the mask is drawn anew on every run"
    # A mask shared along the batch: noise_shape (1, C), and (batch tensor, C) drawn per row.
    shared = tessera.Function([ph], [K.dropout(ph, 0.5, noise_shape=(1, 100))], device=CPU)([x])[0]
    assert (shared == shared[0]).all() and 0.3 < (shared[0] == 0).mean() < 0.7
    per_row = K.dropout(ph, 0.5, noise_shape=(tessera.shape(ph)[0], 1))
    rows = tessera.Function([ph], [per_row], device=CPU)([x])[0]
    assert (rows == rows[:, :1]).all() and 0.3 < (rows[:, 0] == 0).mean() < 0.7


# --- gradients against finite differences -----------------------------------------------------


@pytest.mark.parametrize("name,fn,shapes,wrt", [
    ("conv2d", lambda x, k: K.conv2d(x, k, (2, 1), "same"), [(1, 5, 4, 2), (3, 2, 2, 2)], 0),
    ("conv2d kernel", lambda x, k: K.conv2d(x, k, (2, 1), "same", "channels_first"),
     [(1, 2, 5, 4), (3, 2, 2, 2)], 1),
    ("conv1d causal dilated", lambda x, k: K.conv1d(x, k, 1, "causal", dilation_rate=2),
     [(1, 6, 2), (2, 2, 2)], 1),
    ("conv2d_transpose", lambda x, k: K.conv2d_transpose(x, k, (1, 7, 5, 2), (2, 2)),
     [(1, 3, 2, 2), (3, 3, 2, 2)], 0),
    ("depthwise", lambda x, k: K.depthwise_conv2d(x, k, padding="same"),
     [(1, 4, 3, 2), (2, 2, 2, 2)], 1),
    ("local_conv1d", lambda x, k: K.local_conv1d(x, k, (2,), (1,)), [(1, 4, 2), (3, 4, 2)], 1),
    ("max pool", lambda x: K.pool2d(x, (2, 2), (1, 1), "same", pool_mode="max"),
     [(1, 4, 3, 2)], 0),
    ("avg pool", lambda x: K.pool3d(x, (2, 2, 2), (2, 1, 1), "same", pool_mode="avg"),
     [(1, 3, 3, 2, 1)], 0),
    ("softmax", lambda x: K.softmax(x, axis=1), [(2, 4, 3)], 0),
    ("categorical crossentropy", lambda t, z: K.categorical_crossentropy(t, z, True),
     [(3, 4), (3, 4)], 1),
    ("categorical crossentropy probs", lambda t, p: K.categorical_crossentropy(t, K.softmax(p)),
     [(3, 4), (3, 4)], 1),
    ("binary crossentropy", lambda t, p: K.binary_crossentropy(t, K.sigmoid(p)),
     [(3, 4), (3, 4)], 1),
    ("bilinear", lambda x: K.resize_images(x, 2, 3, "channels_last", "bilinear"),
     [(1, 3, 2, 2)], 0),
    ("batch norm training", lambda x: K.normalize_batch_in_training(x, None, None, [0, 1])[0],
     [(3, 2, 2)], 0),
])
def test_gradient(name, fn, shapes, wrt):
    args = [rand(s, seed=i) for i, s in enumerate(shapes)]
    if "crossentropy" in name:
        args[0] = np.eye(shapes[0][-1], dtype=np.float32)[[0, 2, 3]]
    if name == "max pool":  # taps far apart, so that no step of the differences changes a max
        args[0] = np.random.default_rng(0).permutation(args[0].size).reshape(shapes[0])
        args[0] = args[0].astype(np.float32) * 0.1
    analytic, numeric = numeric_grad(fn, args, wrt)
    np.testing.assert_allclose(analytic, numeric, rtol=2e-2, atol=2e-3, err_msg=name)
