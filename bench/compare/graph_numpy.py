"""A plain numpy evaluator of the layer graph (docs/bench-models.md): the reference the tests
compare Tessera's program against, written for clarity, not speed (NHWC as the graph is, float64 by
default so that its own rounding is far below the tolerances).

    python graph_numpy.py DIR [OUT.npy]     # evaluates DIR's graph on DIR/X.npy
"""
import math
import sys

import numpy as np

try:
    from graph_io import Model
except ImportError:  # imported as bench.compare.graph_numpy (tests)
    from .graph_io import Model


def _erf(x):
    # numpy has no erf; math.erf elementwise is exact enough and the reference is not timed.
    return np.vectorize(math.erf, otypes=[x.dtype])(x)


def _pad4(x, pads, value):
    top, bottom, left, right = pads
    return np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=value)


def _windows(x, kh, kw, strides, dilations, ho, wo):
    """For each window position (i, j): the [B, HO, WO, C] slice of padded x it reads."""
    sh, sw = strides
    dh, dw = dilations
    for i in range(kh):
        for j in range(kw):
            yield i, j, x[:, i * dh: i * dh + sh * (ho - 1) + 1: sh, j * dw: j * dw + sw * (wo - 1) + 1: sw, :]


def _out_size(x_shape, kh, kw, strides, pads, dilations):
    _, h, w, _ = x_shape
    ho = (h + pads[0] + pads[1] - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    wo = (w + pads[2] + pads[3] - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    return ho, wo


def conv2d(x, w, b=None, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), groups=1):
    """NHWC x, HWIO w [KH, KW, CI/groups, CO]: a sum over the window of per-group matrix products."""
    kh, kw, cig, co = w.shape
    g = groups
    assert x.shape[3] == cig * g and co % g == 0, (x.shape, w.shape, groups)
    ho, wo = _out_size(x.shape, kh, kw, strides, pads, dilations)
    xp = _pad4(x, pads, 0)
    out = np.zeros((x.shape[0], ho, wo, g, co // g), dtype=np.result_type(x, w))
    for i, j, xs in _windows(xp, kh, kw, strides, dilations, ho, wo):
        xs = xs.reshape(xs.shape[:3] + (g, cig))                  # channel c = group * cig + k
        wk = w[i, j].reshape(cig, g, co // g)                      # output o = group * (co/g) + m
        out += np.einsum("bhwgk,kgm->bhwgm", xs, wk)
    out = out.reshape(x.shape[0], ho, wo, co)
    return out if b is None else out + b


def pool(x, kind, size, strides, pads):
    """max_pool (padding never wins) or avg_pool (padding excluded from the count)."""
    kh, kw = size
    ho, wo = _out_size(x.shape, kh, kw, strides, pads, (1, 1))
    if kind == "max":
        xp = _pad4(x, pads, -np.inf)
        out = np.full((x.shape[0], ho, wo, x.shape[3]), -np.inf, dtype=x.dtype)
        for _, _, xs in _windows(xp, kh, kw, strides, (1, 1), ho, wo):
            out = np.maximum(out, xs)
        return out
    xp = _pad4(x, pads, 0)
    ones = _pad4(np.ones((1,) + x.shape[1:3] + (1,), x.dtype), pads, 0)
    total = np.zeros((x.shape[0], ho, wo, x.shape[3]), dtype=x.dtype)
    count = np.zeros((1, ho, wo, 1), dtype=x.dtype)
    for (_, _, xs), (_, _, os_) in zip(_windows(xp, kh, kw, strides, (1, 1), ho, wo),
                                       _windows(ones, kh, kw, strides, (1, 1), ho, wo)):
        total += xs
        count += os_
    return total / count


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def evaluate(model, x=None, dtype=np.float64, keep=False):
    """The graph's output (or, with keep, every named tensor) for input x (default DIR/X.npy).
    Float tensors are computed in `dtype`; token ids stay integers."""
    x = model.sample_input() if x is None else x
    env = {model.inputs[0]["name"]: x.astype(dtype) if x.dtype.kind == "f" else x}
    for name, value in model.weights.items():
        env[name] = value.astype(dtype) if value.dtype.kind == "f" else value
    for node in model.nodes:
        args = [env[n] for n in node["inputs"]]
        env[node["output"]] = run_node(node["op"], args, node.get("attrs", {}))
    if keep:
        return env
    return env[model.outputs[0]]


def run_node(op, args, attrs):
    if op == "conv2d":
        return conv2d(*args, strides=attrs.get("strides", [1, 1]), pads=attrs.get("pads", [0, 0, 0, 0]),
                      dilations=attrs.get("dilations", [1, 1]), groups=attrs.get("groups", 1))
    if op == "batch_norm":
        x, gamma, beta, mean, var = args
        return (x - mean) / np.sqrt(var + attrs.get("epsilon", 1e-3)) * gamma + beta
    if op == "relu":
        return np.maximum(args[0], 0)
    if op == "relu6":
        return np.clip(args[0], 0, 6)
    if op == "gelu":
        x = args[0]
        return 0.5 * x * (1 + _erf(x / math.sqrt(2)))
    if op == "add":
        return args[0] + args[1]
    if op == "mul_scalar":
        return args[0] * attrs["value"]
    if op in ("max_pool", "avg_pool"):
        return pool(args[0], op[:3], attrs["size"], attrs.get("strides", attrs["size"]),
                    attrs.get("pads", [0, 0, 0, 0]))
    if op == "global_avg_pool":
        return args[0].mean(axis=(1, 2))
    if op == "concat":
        return np.concatenate(args, axis=attrs.get("axis", -1))
    if op == "flatten":
        return args[0].reshape(args[0].shape[0], -1)
    if op == "dense":
        y = args[0] @ args[1]
        return y + args[2] if len(args) > 2 else y
    if op == "softmax":
        return softmax(args[0], attrs.get("axis", -1))
    if op == "gather":
        table, ids = args
        return table[ids]
    if op == "layer_norm":
        x, gamma, beta = args
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + attrs.get("epsilon", 1e-3)) * gamma + beta
    if op == "reshape":
        return args[0].reshape(attrs["shape"])
    if op == "transpose":
        return args[0].transpose(attrs["perm"])
    if op == "matmul":
        return np.matmul(args[0], args[1])
    raise ValueError(f"graph_numpy: unknown op {op!r}")


if __name__ == "__main__":
    m = Model(sys.argv[1])
    y = evaluate(m)
    if len(sys.argv) > 2:
        np.save(sys.argv[2], y.astype(np.float32))
    print(m.name, y.shape, float(np.abs(y).max()))
