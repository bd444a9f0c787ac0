"""Keras backend: activations, losses, convolutions, pooling, resizing, padding, normalization and
dropout.

Layouts are Keras': kernels are HWIO ([spatial..., in, out]) in both data formats, transposed
kernels [spatial..., out, in]. The op library's convolutions and pools take channels_first inputs
natively (with kernels OIHW), so channels_first transposes the small kernel rather than the
activations. What the op library lacks (locally connected convolutions, TensorFlow's legacy
bilinear upsampling) is Tile text.
"""
import sys

import numpy as np

from ... import _native, graph
from ... import ops as _ops
from ._core import _seed

__all__ = [
    "relu", "elu", "softmax", "softplus", "softsign", "sigmoid", "hard_sigmoid", "tanh",
    "categorical_crossentropy", "sparse_categorical_crossentropy", "binary_crossentropy",
    "conv1d", "conv2d", "conv3d", "conv2d_transpose", "conv3d_transpose", "separable_conv1d",
    "separable_conv2d", "depthwise_conv2d", "pool2d", "pool3d", "local_conv1d", "local_conv2d",
    "bias_add", "resize_images", "resize_volumes", "temporal_padding", "spatial_2d_padding",
    "spatial_3d_padding", "batch_normalization", "normalize_batch_in_training", "l2_normalize",
    "dropout",
]

_tensor = graph.as_tensor


def _data_format(value):
    """Keras' normalize_data_format, without importing keras.backend.common before Keras is."""
    if value is None:
        common = sys.modules.get("keras.backend.common")
        value = common.image_data_format() if common is not None else "channels_last"
    if value not in ("channels_last", "channels_first"):
        raise ValueError(f"Unknown data_format: {value!r} (expected 'channels_last' or "
                         "'channels_first')")
    return value


def _ints(value, n, what):
    """An int or a sequence of n ints, as a list of n ints."""
    if isinstance(value, (int, np.integer)):
        return [int(value)] * n
    value = [int(v) for v in value]
    if len(value) != n:
        raise ValueError(f"{what} needs {n} values, got {value}")
    return value


def _padding(value, allowed=("valid", "same")):
    if value not in allowed:
        raise ValueError(f"Invalid padding: {value!r} (expected one of {', '.join(allowed)})")
    return value


def _axis(axis, rank):
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for a tensor of rank {rank}")
    return axis % rank


def _channels_first_kernel(kernel, spatial):
    """An HWIO kernel as OIHW, the layout of the op library's channels_first convolutions."""
    return _ops.transpose(kernel, perm=[spatial + 1, spatial] + list(range(spatial)))


# --- activations --------------------------------------------------------------------------------


def relu(x, alpha=0., max_value=None, threshold=0.):
    attrs = {"alpha": float(alpha), "threshold": float(threshold)}
    if max_value is not None:
        attrs["max_value"] = float(max_value)
    return _ops.relu(_tensor(x), **attrs)


def elu(x, alpha=1.):
    return _ops.elu(_tensor(x), alpha=float(alpha))


def softmax(x, axis=-1):
    return _ops.softmax(_tensor(x), axis=[int(axis)])


def softplus(x):
    return _ops.softplus(_tensor(x))


def softsign(x):
    return _ops.softsign(_tensor(x))


def sigmoid(x):
    return _ops.sigmoid(_tensor(x))


def hard_sigmoid(x):
    return _ops.hard_sigmoid(_tensor(x))


def tanh(x):
    return _ops.tanh(_tensor(x))


# --- losses -------------------------------------------------------------------------------------


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    output = _tensor(output)
    target = graph.cast(_tensor(target), output.dtype)
    _axis(axis, output.ndim)
    return _ops.categorical_crossentropy(target, output, from_logits=bool(from_logits),
                                         axis=int(axis))


class _SparseTargetNode(graph.Node):
    """Class ids reshaped to the output's shape without its class axis (Keras feeds (batch, 1)
    for (batch, classes), or the output's rank with a unit class axis). While static shapes are
    worked out, a target whose unknown sizes cannot match (Keras's targets have no known size)
    is stood in for by one of the wanted shape; a run checks the real sizes."""

    def __init__(self, target, output, axis):
        super().__init__([target, output])
        self.axis = axis

    def realize(self, ctx, args):
        target, output = ctx.native(args[0]), ctx.native(args[1])
        want = [d for i, d in enumerate(output.shape) if i != self.axis]
        if int(np.prod(target.shape)) == int(np.prod(want)):
            return _native.reshape(target, want)
        if ctx.probe:
            return ctx.feed(None, target.dtype, want, "M")
        raise ValueError(f"sparse_categorical_crossentropy: the target of shape "
                         f"{list(target.shape)} holds no class id per position of the output "
                         f"{list(output.shape)} without its class axis {self.axis}")


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Integer class ids (often fed as floats, with a trailing unit axis) against probabilities
    or logits along `axis`."""
    output = _tensor(output)
    a = _axis(axis, output.ndim)
    target = graph.cast(_tensor(target), "int64")
    target = graph._static(_SparseTargetNode(target, output, a))[0]
    return _ops.sparse_categorical_crossentropy(target, output, from_logits=bool(from_logits),
                                                axis=a)


def binary_crossentropy(target, output, from_logits=False):
    output = _tensor(output)
    target = graph.cast(_tensor(target), output.dtype)
    return _ops.binary_crossentropy(target, output, from_logits=bool(from_logits))


# --- convolutions ---------------------------------------------------------------------------------


def _conv(spatial, x, kernel, strides, padding, data_format, dilation_rate, groups=1):
    x, kernel = _tensor(x), _tensor(kernel)
    data_format = _data_format(data_format)
    if x.ndim != spatial + 2:
        raise ValueError(f"conv{spatial}d: input must have rank {spatial + 2}, got shape "
                         f"{x.shape}")
    strides = _ints(strides, spatial, "strides")
    dilation = _ints(dilation_rate, spatial, "dilation_rate")
    pad = _padding(padding, ("valid", "same", "causal") if spatial == 1 else ("valid", "same"))
    if pad == "causal":
        if data_format != "channels_last":
            raise ValueError("When using causal padding in `conv1d`, `data_format` must be "
                             '"channels_last" (temporal data).')
        pad = [dilation[0] * (kernel.shape[0] - 1), 0]
    if data_format == "channels_first":
        kernel = _channels_first_kernel(kernel, spatial)
    return graph.op(f"conv{spatial}d", x, kernel, strides=strides, dilation_rate=dilation,
                    padding=pad, data_format=data_format, groups=groups)


def conv1d(x, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    return _conv(1, x, kernel, strides, padding, data_format, dilation_rate)


def conv2d(x, kernel, strides=(1, 1), padding="valid", data_format=None, dilation_rate=(1, 1)):
    return _conv(2, x, kernel, strides, padding, data_format, dilation_rate)


def conv3d(x, kernel, strides=(1, 1, 1), padding="valid", data_format=None,
           dilation_rate=(1, 1, 1)):
    return _conv(3, x, kernel, strides, padding, data_format, dilation_rate)


def _depthwise(spatial, x, kernel, strides, padding, data_format, dilation_rate):
    """A depthwise convolution as a grouped one: kernel [spatial..., C, M] becomes
    [spatial..., 1, C * M] in C groups, so output channel c * M + m, as TensorFlow orders them."""
    x, kernel = _tensor(x), _tensor(kernel)
    if kernel.ndim != spatial + 2:
        raise ValueError(f"the depthwise kernel must have rank {spatial + 2}, got shape "
                         f"{kernel.shape}")
    channels, multiplier = kernel.shape[-2:]
    grouped = graph.reshape(kernel, list(kernel.shape[:spatial]) + [1, channels * multiplier])
    return _conv(spatial, x, grouped, strides, padding, data_format, dilation_rate,
                 groups=channels)


def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding="valid", data_format=None,
                     dilation_rate=(1, 1)):
    return _depthwise(2, x, depthwise_kernel, strides, padding, data_format, dilation_rate)


def separable_conv1d(x, depthwise_kernel, pointwise_kernel, strides=1, padding="valid",
                     data_format=None, dilation_rate=1):
    y = _depthwise(1, x, depthwise_kernel, strides, padding, data_format, dilation_rate)
    return _conv(1, y, pointwise_kernel, 1, "valid", data_format, 1)


def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding="valid",
                     data_format=None, dilation_rate=(1, 1)):
    y = _depthwise(2, x, depthwise_kernel, strides, padding, data_format, dilation_rate)
    return _conv(2, y, pointwise_kernel, 1, "valid", data_format, 1)


class _ConvTransposeNode(graph.Node):
    """A transposed convolution to an output size that may be known only at run time (Keras
    computes it from K.shape): the op's output_padding is derived when the program is built."""

    def __init__(self, name, x, kernel, out_sizes, attrs):
        dynamic = [s for s in out_sizes if isinstance(s, graph.Tensor)]
        super().__init__([x, kernel] + dynamic)
        self.name, self.out_sizes, self.attrs = name, out_sizes, attrs

    def realize(self, ctx, args):
        x, kernel, dynamic = ctx.native(args[0]), ctx.native(args[1]), iter(args[2:])
        want = [int(np.asarray(next(dynamic)).reshape(-1)[0]) if isinstance(s, graph.Tensor)
                else s for s in self.out_sizes]
        attrs = dict(self.attrs)
        first = 1 if attrs["data_format"] == "channels_last" else 2
        same = attrs["padding"] == "same"
        defaults, paddings = [], []
        for i, out in enumerate(want):
            size, window = x.shape[first + i], kernel.shape[i]
            stride, dilation = attrs["strides"][i], attrs["dilation_rate"][i]
            span = (window - 1) * dilation + 1
            default = size * stride if same else size * stride + max(span - stride, 0)
            defaults.append(out is None or out == default)
            padded = (size - 1) * stride + span - (2 * (span // 2) if same else 0)
            paddings.append(None if out is None else out - padded)
        if not all(defaults):
            for i, p in enumerate(paddings):
                stride = attrs["strides"][i]
                if p is None or not 0 <= p < stride:
                    raise ValueError(f"{self.name}: output size {want[i]} on spatial axis {i} "
                                     f"cannot come from input size {x.shape[first + i]} with "
                                     f"stride {stride} and '{attrs['padding']}' padding")
            attrs["output_padding"] = paddings
        return list(_native.call_op(self.name, [x, kernel], attrs))


def _conv_transpose(spatial, x, kernel, output_shape, strides, padding, data_format,
                    dilation_rate):
    x, kernel = _tensor(x), _tensor(kernel)
    data_format = _data_format(data_format)
    padding = _padding(padding)
    if x.ndim != spatial + 2:
        raise ValueError(f"conv{spatial}d_transpose: input must have rank {spatial + 2}, got "
                         f"shape {x.shape}")
    if isinstance(output_shape, graph.Tensor):
        output_shape = [output_shape[i] for i in range(spatial + 2)]
    output_shape = list(output_shape)
    if len(output_shape) != spatial + 2:
        raise ValueError(f"output_shape needs {spatial + 2} entries, got {output_shape}")
    first = 1 if data_format == "channels_last" else 2
    out_sizes = [s if isinstance(s, graph.Tensor) or s is None else int(s)
                 for s in output_shape[first:first + spatial]]
    attrs = {"strides": _ints(strides, spatial, "strides"),
             "dilation_rate": _ints(dilation_rate, spatial, "dilation_rate"),
             "padding": padding, "data_format": data_format}
    node = _ConvTransposeNode(f"conv{spatial}d_transpose", x, kernel, out_sizes, attrs)
    return graph._static(node)[0]


def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding="valid", data_format=None,
                     dilation_rate=(1, 1)):
    return _conv_transpose(2, x, kernel, output_shape, strides, padding, data_format,
                           dilation_rate)


def conv3d_transpose(x, kernel, output_shape, strides=(1, 1, 1), padding="valid",
                     data_format=None, dilation_rate=(1, 1, 1)):
    return _conv_transpose(3, x, kernel, output_shape, strides, padding, data_format,
                           dilation_rate)


def _letters(prefix, n):
    return [f"{prefix}{i}" for i in range(n)]


def local_conv1d(inputs, kernel, kernel_size, strides, data_format=None):
    """Unshared weights: kernel [L, K * D, F] holds, per output step, the (tap, channel) weights."""
    _data_format(data_format)
    x, kernel = _tensor(inputs), _tensor(kernel)
    length, features, filters = kernel.shape
    (window,), (stride,) = _ints(kernel_size, 1, "kernel_size"), _ints(strides, 1, "strides")
    depth = x.shape[2]
    w = graph.reshape(kernel, [length, window, depth, filters])
    return graph.TileOp(
        "function (X[N, S, D], W[L, K, D, F]) -> (O) {\n"
        f"  O[n, l, f : N, L, F] = +(X[n, {stride} * l + k, d] * W[l, k, d, f]);\n"
        "}", "<local_conv1d>")(x, w)


def local_conv2d(inputs, kernel, kernel_size, strides, output_shape, data_format=None):
    """Unshared weights: kernel [R * C, KH * KW * D, F]; each position's patch is flattened as
    (row, col, channel) for channels_last and (channel, row, col) for channels_first, as Keras
    slices it."""
    data_format = _data_format(data_format)
    x, kernel = _tensor(inputs), _tensor(kernel)
    rows, cols = _ints(output_shape, 2, "output_shape")
    kh, kw = _ints(kernel_size, 2, "kernel_size")
    sh, sw = _ints(strides, 2, "strides")
    filters = kernel.shape[-1]
    last = data_format == "channels_last"
    depth = x.shape[3] if last else x.shape[1]
    patch = [kh, kw, depth] if last else [depth, kh, kw]
    w = graph.reshape(kernel, [rows, cols] + patch + [filters])
    rows_at, cols_at = f"{sh} * i + a", f"{sw} * j + b"
    if last:
        text = ("function (X[N, H, W, D], K[R, C, KH, KW, D, F]) -> (O) {\n"
                f"  O[n, i, j, f : N, R, C, F] = +(X[n, {rows_at}, {cols_at}, d] * "
                "K[i, j, a, b, d, f]);\n}")
    else:
        text = ("function (X[N, D, H, W], K[R, C, D, KH, KW, F]) -> (O) {\n"
                f"  O[n, f, i, j : N, F, R, C] = +(X[n, d, {rows_at}, {cols_at}] * "
                "K[i, j, d, a, b, f]);\n}")
    return graph.TileOp(text, "<local_conv2d>")(x, w)


# --- pooling ----------------------------------------------------------------------------------


def _pool(spatial, x, pool_size, strides, padding, data_format, pool_mode):
    x = _tensor(x)
    data_format = _data_format(data_format)
    padding = _padding(padding)
    if pool_mode not in ("max", "avg"):
        raise ValueError(f"Invalid pool_mode: {pool_mode!r} (expected 'max' or 'avg')")
    return graph.op(f"{pool_mode}_pool{spatial}d", x,
                    pool_size=_ints(pool_size, spatial, "pool_size"),
                    strides=_ints(strides, spatial, "strides"), padding=padding,
                    data_format=data_format)


def pool2d(x, pool_size, strides=(1, 1), padding="valid", data_format=None, pool_mode="max"):
    return _pool(2, x, pool_size, strides, padding, data_format, pool_mode)


def pool3d(x, pool_size, strides=(1, 1, 1), padding="valid", data_format=None, pool_mode="max"):
    return _pool(3, x, pool_size, strides, padding, data_format, pool_mode)


# --- bias, resizing, padding ------------------------------------------------------------------


def bias_add(x, bias, data_format=None):
    """x + bias on the channel axis; a bias of rank ndim(x) - 1 covers every non-batch axis,
    given channels last (as TensorFlow's Keras backend reshapes it for channels_first)."""
    x, bias = _tensor(x), _tensor(bias)
    data_format = _data_format(data_format)
    rank, shape = x.ndim, list(bias.shape)
    if len(shape) not in (1, rank - 1):
        raise ValueError(f"Unexpected bias dimensions {len(shape)}, expect to be 1 or "
                         f"{rank - 1} dimensions")
    if rank < 3 or data_format == "channels_last":
        return x + bias  # broadcasting lines the bias up with x's last axes
    if len(shape) == 1:
        return x + graph.reshape(bias, [1, shape[0]] + [1] * (rank - 2))
    return x + graph.reshape(bias, [1, shape[-1]] + shape[:-1])


def _to_last(x, data_format):
    if data_format == "channels_last":
        return x
    return _ops.transpose(x, perm=[0] + list(range(2, x.ndim)) + [1])


def _from_last(x, data_format):
    if data_format == "channels_last":
        return x
    return _ops.transpose(x, perm=[0, x.ndim - 1] + list(range(1, x.ndim - 1)))


def _upsample_linear(x, axis, factor):
    """Linear upsampling of one axis by an integer factor as TensorFlow's resize_bilinear
    (align_corners=False, half_pixel_centers=False) does it: output f * i + r reads
    (1 - r / f) * x[i] + (r / f) * x[min(i + 1, last)]."""
    if factor == 1:
        return x
    before = (slice(None),) * axis
    following = _ops.concatenate(x[before + (slice(1, None),)], x[before + (slice(-1, None),)],
                                 axis=axis)
    rank = x.ndim
    dims = _letters("D", rank)
    idx = _letters("i", rank)
    out_idx, out_dims = list(idx), list(dims)
    out_idx[axis] = f"{factor} * {idx[axis]} + r"
    out_dims[axis] = f"{factor} * {dims[axis]}"
    access, shape = ", ".join(idx), ", ".join(dims)
    head = f"[{', '.join(out_idx)} : {', '.join(out_dims)}]"
    text = (f"function (X[{shape}], Y[{shape}], P[F], Q[F]) -> (O) {{\n"
            f"  A{head} = +(X[{access}] * P[r]);\n"
            f"  B{head} = +(Y[{access}] * Q[r]);\n"
            "  O = A + B;\n}")
    weights = np.arange(factor, dtype=x.dtype) / np.array(factor, dtype=x.dtype)
    return graph.TileOp(text, "<resize_bilinear>")(x, following, 1 - weights, weights)


def resize_images(x, height_factor, width_factor, data_format, interpolation="nearest"):
    x = _tensor(x)
    data_format = _data_format(data_format)
    if interpolation not in ("nearest", "bilinear"):
        raise ValueError('interpolation should be one of "nearest" or "bilinear".')
    height_factor, width_factor = int(height_factor), int(width_factor)
    y = _to_last(x, data_format)
    if interpolation == "nearest":
        y = _ops.resize_nearest(y, scale=[height_factor, width_factor])
    else:
        if not np.issubdtype(np.dtype(y.dtype), np.floating):
            y = graph.cast(y, "float32")
        y = _upsample_linear(_upsample_linear(y, 1, height_factor), 2, width_factor)
    return _from_last(y, data_format)


def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    x = _tensor(x)
    data_format = _data_format(data_format)
    first = 1 if data_format == "channels_last" else 2
    for i, factor in enumerate((depth_factor, height_factor, width_factor)):
        if int(factor) != 1:
            x = _ops.repeat(x, repeats=int(factor), axis=first + i)
    return x


def _pad_spatial(x, padding, data_format, spatial):
    x = _tensor(x)
    data_format = _data_format(data_format)
    padding = [tuple(int(p) for p in pair) for pair in padding]
    if len(padding) != spatial or any(len(p) != 2 for p in padding):
        raise ValueError(f"padding needs {spatial} (before, after) pairs, got {padding}")
    pairs = [(0, 0)] + padding + [(0, 0)]
    if data_format == "channels_first":
        pairs = [(0, 0), (0, 0)] + padding
    return _ops.pad(x, pads=[p for pair in pairs for p in pair])


def temporal_padding(x, padding=(1, 1)):
    if len(padding) != 2:
        raise ValueError(f"padding needs (before, after), got {padding}")
    return _pad_spatial(x, [padding], "channels_last", 1)


def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    return _pad_spatial(x, padding, data_format, 2)


def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    return _pad_spatial(x, padding, data_format, 3)


# --- normalization and dropout --------------------------------------------------------------


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    """(x - mean) / sqrt(var + epsilon) * gamma + beta; the parameters have x's size on `axis`,
    either as vectors or broadcastable to x (size 1 elsewhere)."""
    x = _tensor(x)
    axis = _axis(axis, x.ndim)
    channels = x.shape[axis]

    def fit(p, fill):
        if p is None:
            if channels is None:
                raise ValueError("batch_normalization: beta or gamma is None and the size of "
                                 f"axis {axis} is unknown")
            return graph.constant(np.full([channels], fill, dtype=x.dtype))
        p = graph.cast(_tensor(p), x.dtype)
        return p if p.ndim in (1, x.ndim) else graph.reshape(p, [-1])

    params = [fit(mean, 0), fit(var, 1)]
    if beta is not None or gamma is not None:
        params += [fit(beta, 0), fit(gamma, 1)]
    return _ops.batch_norm(x, *params, axis=axis, epsilon=float(epsilon))


def normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon=1e-3):
    """Normalizes x with the mean and variance over `reduction_axes`; returns (normalized, mean,
    variance), the statistics without the reduced axes."""
    x = _tensor(x)
    axes = sorted({_axis(a, x.ndim) for a in reduction_axes})
    kept = [a for a in range(x.ndim) if a not in axes]
    mean, var = _ops.moments(x, axis=axes)
    if len(kept) == 1:
        return batch_normalization(x, mean, var, beta, gamma, kept[0], epsilon), mean, var
    # Several (or no) axes kept: statistics and parameters broadcast against x.
    sizes = graph.shape(x)
    target = [1 if a in axes else (x.shape[a] if x.shape[a] is not None else sizes[a])
              for a in range(x.ndim)]
    y = (x - graph.reshape(mean, target)) / _ops.sqrt(graph.reshape(var, target) + epsilon)
    if gamma is not None:
        y = y * graph.reshape(_tensor(gamma), target)
    if beta is not None:
        y = y + graph.reshape(_tensor(beta), target)
    return y, mean, var


def l2_normalize(x, axis=None):
    x = _tensor(x)
    axes = list(range(x.ndim)) if axis is None else [int(a) for a in np.atleast_1d(axis)]
    squares = _ops.sum(x * x, axis=axes, keepdims=True)
    return x / _ops.sqrt(graph.intrinsic("max", squares, 1e-12))


def dropout(x, level, noise_shape=None, seed=None):
    """x with entries zeroed at rate `level` and the rest scaled by 1 / (1 - level); the mask,
    of noise_shape (broadcast against x), is drawn anew on every run."""
    x = _tensor(x)
    level = float(level)
    if not 0 <= level < 1:
        raise ValueError(f"dropout level must be in [0, 1), got {level}")
    if level == 0:
        return x
    sizes = graph.shape(x)
    if noise_shape is not None:
        noise_shape = list(noise_shape)
        if len(noise_shape) != x.ndim:
            raise ValueError(f"noise_shape {noise_shape} does not have x's rank {x.ndim}")
        # Tensor (or None) entries take x's size; integer entries are kept.
        from_x = np.array([not isinstance(d, (int, np.integer)) for d in noise_shape], np.int32)
        fixed = np.array([0 if f else int(d) for f, d in zip(from_x, noise_shape)], np.int32)
        sizes = sizes * graph.constant(from_x) + graph.constant(fixed)
    dtype = x.dtype

    def draw(rng, shape):
        return (rng.random(shape) >= level).astype(dtype)

    # Without a seed, numpy's global generator picks one (as every random function here does):
    # a seeded program draws the same masks in every process.
    mask = graph.random(sizes, draw, dtype, _seed(seed))
    return x * mask * (1 / (1 - level))
