"""Numpy reference convolutions and pools for the ops_nn tests, written from the definitions with
explicit zero/-inf padding copies and loops over window taps (Tessera pads by shifting indices)."""
import itertools

import numpy as np

# Tolerances per dtype: float16 inputs are compared with a float64 reference computed from them.
TOL = {np.float16: dict(rtol=2e-2, atol=2e-2), np.float32: dict(rtol=1e-5, atol=1e-5),
       np.float64: dict(rtol=1e-11, atol=1e-11)}


def same_pads(size, window, stride, dilation=1):
    """TensorFlow's 'same': out = ceil(in/stride); the smaller half of the padding goes before."""
    out = -(-size // stride)
    span = (window - 1) * dilation + 1
    total = max((out - 1) * stride + span - size, 0)
    return total // 2, total - total // 2


def resolve_pads(padding, sizes, windows, strides, dilations):
    if padding == "valid":
        return [(0, 0)] * len(sizes)
    if padding == "same":
        return [same_pads(*a) for a in zip(sizes, windows, strides, dilations)]
    return [(padding[2 * i], padding[2 * i + 1]) for i in range(len(sizes))]


def conv_nhwc(x, k, strides, dilations, padding, groups=1):
    """x [N, S..., CI], k [K..., CI/groups, CO] -> [N, O..., CO], computed in float64."""
    x = x.astype(np.float64)
    k = k.astype(np.float64)
    ns = x.ndim - 2
    sizes, windows = x.shape[1:-1], k.shape[:ns]
    pads = resolve_pads(padding, sizes, windows, strides, dilations)
    xp = np.pad(x, [(0, 0)] + list(pads) + [(0, 0)])
    outs = [(sizes[i] + sum(pads[i]) - (windows[i] - 1) * dilations[i] - 1) // strides[i] + 1 for i in range(ns)]
    ci, co = x.shape[-1], k.shape[-1]
    cig, cog = ci // groups, co // groups
    y = np.zeros((x.shape[0], *outs, co))
    for taps in itertools.product(*[range(w) for w in windows]):
        sl = tuple(slice(t * d, t * d + s * (o - 1) + 1, s) for t, d, s, o in zip(taps, dilations, strides, outs))
        patch = xp[(slice(None),) + sl]  # [N, O..., CI]
        for g in range(groups):
            y[..., g * cog:(g + 1) * cog] += patch[..., g * cig:(g + 1) * cig] @ k[taps][:, g * cog:(g + 1) * cog]
    return y


def conv_nchw(x, k, strides, dilations, padding, groups=1):
    """x [N, CI, S...], k [CO, CI/groups, K...] (PyTorch) by moving channels last."""
    ns = x.ndim - 2
    x_last = np.moveaxis(x, 1, -1)
    k_last = np.transpose(k, list(range(2, 2 + ns)) + [1, 0])
    return np.moveaxis(conv_nhwc(x_last, k_last, strides, dilations, padding, groups), -1, 1)


def deconv_length(size, window, stride, padding, output_padding=None, dilation=1):
    """Keras' deconv_output_length."""
    span = window + (window - 1) * (dilation - 1)
    if output_padding is None:
        return size * stride if padding == "same" else size * stride + max(span - stride, 0)
    pad = span // 2 if padding == "same" else 0
    return (size - 1) * stride + span - 2 * pad + output_padding


def conv_transpose_nhwc(x, k, strides, padding, output_padding=None, dilations=None):
    """Keras Conv*DTranspose: x [N, S..., CI], k [K..., CO, CI]. Every input element scatters
    x * k into the output at stride * i + dilation * t - pad_before."""
    x = x.astype(np.float64)
    k = k.astype(np.float64)
    ns = x.ndim - 2
    dilations = dilations or [1] * ns
    sizes, windows = x.shape[1:-1], k.shape[:ns]
    ops = output_padding or [None] * ns
    outs = [deconv_length(sizes[i], windows[i], strides[i], padding, ops[i], dilations[i]) for i in range(ns)]
    befores = []
    for i in range(ns):
        span = (windows[i] - 1) * dilations[i] + 1
        befores.append(max((sizes[i] - 1) * strides[i] + span - outs[i], 0) // 2 if padding == "same" else 0)
    y = np.zeros((x.shape[0], *outs, k.shape[-2]))
    for pos in itertools.product(*[range(s) for s in sizes]):
        for taps in itertools.product(*[range(w) for w in windows]):
            at = [strides[i] * pos[i] + dilations[i] * taps[i] - befores[i] for i in range(ns)]
            if all(0 <= a < o for a, o in zip(at, outs)):
                y[(slice(None), *at)] += x[(slice(None), *pos)] @ k[taps].T
    return y


def pool_nhwc(x, mode, pool_size, strides, padding):
    """Max or average over in-range taps; x [N, S..., C]."""
    x = x.astype(np.float64)
    ns = x.ndim - 2
    sizes = x.shape[1:-1]
    pads = resolve_pads(padding, sizes, pool_size, strides, [1] * ns)
    outs = [(sizes[i] + sum(pads[i]) - pool_size[i]) // strides[i] + 1 for i in range(ns)]
    width = [(0, 0)] + list(pads) + [(0, 0)]
    xp = np.pad(x, width, constant_values=-np.inf) if mode == "max" else np.pad(x, width)
    ones = np.pad(np.ones_like(x), width)
    y = np.full((x.shape[0], *outs, x.shape[-1]), -np.inf if mode == "max" else 0.0)
    count = np.zeros_like(y)
    for taps in itertools.product(*[range(w) for w in pool_size]):
        sl = (slice(None),) + tuple(slice(t, t + s * (o - 1) + 1, s) for t, s, o in zip(taps, strides, outs))
        if mode == "max":
            y = np.maximum(y, xp[sl])
        else:
            y += xp[sl]
            count += ones[sl]
    return y if mode == "max" else y / count
