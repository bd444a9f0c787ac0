"""Elementwise math, reductions, products (dot, batch_dot) and shape operations."""
import builtins

import numpy as np

from ... import graph, ops
from ...graph import Tensor
from ._core import _host, _static_value, int_shape, is_sparse

__all__ = [
    "abs", "square", "sqrt", "exp", "log", "round", "sign", "pow", "clip", "sin", "cos",
    "equal", "not_equal", "greater", "greater_equal", "less", "less_equal", "maximum", "minimum",
    "sum", "prod", "max", "min", "mean", "std", "var", "any", "all", "argmax", "argmin",
    "logsumexp", "cumsum", "cumprod", "dot", "batch_dot", "transpose", "gather", "concatenate",
    "reshape", "permute_dimensions", "repeat_elements", "repeat", "arange", "tile", "flatten",
    "batch_flatten", "expand_dims", "squeeze", "stack", "one_hot", "reverse", "slice",
    "in_top_k",
]

_t = graph.as_tensor
_i = graph.intrinsic


def _rank(x):
    return len(_t(x).shape)


def _axes(axis, rank):
    """`axis` (None, an int or a list) as a sorted list of non-negative axes."""
    if axis is None:
        return list(range(rank))
    axis = [axis] if np.ndim(axis) == 0 else list(axis)
    out = sorted({int(a) % rank if rank else 0 for a in axis})
    return out


def _float(x):
    x = _t(x)
    return x if x.dtype.startswith("float") else graph.cast(x, "float32")


# --- elementwise -------------------------------------------------------------------------------


def abs(x):
    return _i("abs", x)


def square(x):
    x = _t(x)
    return x * x


def sqrt(x):
    # Negative values give 0, as in Keras's other backends.
    return _i("sqrt", _i("max", _float(x), 0.0))


def exp(x):
    return _i("exp", x)


def log(x):
    return _i("log", x)


def round(x):
    # Half to even, as numpy and TensorFlow round.
    x = _t(x)
    half = _i("cmp_eq", x - _i("floor", x), 0.5)
    return _i("cond", half, _i("round", x * 0.5) * 2.0, _i("round", x))


def sign(x):
    return ops.sign(x)


def pow(x, a):
    return _i("pow", x, a)


def clip(x, min_value, max_value):
    if isinstance(min_value, (int, float)) and isinstance(max_value, (int, float)):
        max_value = builtins.max(min_value, max_value)
    x = _t(x)
    if min_value is not None:
        x = _i("max", x, min_value)
    if max_value is not None:
        x = _i("min", x, max_value)
    return x


def sin(x):
    return _i("sin", x)


def cos(x):
    return _i("cos", x)


def equal(x, y):
    return _i("cmp_eq", x, y)


def not_equal(x, y):
    return _i("cmp_ne", x, y)


def greater(x, y):
    return _i("cmp_gt", x, y)


def greater_equal(x, y):
    return _i("cmp_ge", x, y)


def less(x, y):
    return _i("cmp_lt", x, y)


def less_equal(x, y):
    return _i("cmp_le", x, y)


def maximum(x, y):
    return _i("max", x, y)


def minimum(x, y):
    return _i("min", x, y)


# --- reductions --------------------------------------------------------------------------------


def _reduce(op, x, axis, keepdims):
    x = _t(x)
    if x.dtype == "bool":
        x = graph.cast(x, "int32")
    axes = _axes(axis, len(x.shape))
    if not axes:
        return x
    return graph.op(op, x, axis=axes, keepdims=bool(keepdims))


def sum(x, axis=None, keepdims=False):
    return _reduce("sum", x, axis, keepdims)


def prod(x, axis=None, keepdims=False):
    return _reduce("prod", x, axis, keepdims)


def max(x, axis=None, keepdims=False):
    return _reduce("max", x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    return _reduce("min", x, axis, keepdims)


def mean(x, axis=None, keepdims=False):
    return _reduce("mean", _float(x), axis, keepdims)


def var(x, axis=None, keepdims=False):
    x = _float(x)
    centered = x - mean(x, axis, keepdims=True)
    return mean(centered * centered, axis, keepdims)


def std(x, axis=None, keepdims=False):
    return _i("sqrt", var(x, axis, keepdims))


def any(x, axis=None, keepdims=False):
    return graph.cast(_reduce("max", _i("cmp_ne", x, 0), axis, keepdims), "bool")


def all(x, axis=None, keepdims=False):
    return graph.cast(_reduce("min", _i("cmp_ne", x, 0), axis, keepdims), "bool")


def argmax(x, axis=-1):
    return ops.argmax(x, axis=_axes(axis, _rank(x)))


def argmin(x, axis=-1):
    return ops.argmin(x, axis=_axes(axis, _rank(x)))


def logsumexp(x, axis=None, keepdims=False):
    x = _float(x)
    m = max(x, axis, keepdims=True)
    # An all -inf slice would give inf - inf: shift by 0 there.
    m = _i("cond", _i("cmp_eq", m, -np.inf), 0.0, m)
    out = _i("log", sum(_i("exp", x - m), axis, keepdims=True)) + m
    if keepdims:
        return out
    axes = _axes(axis, len(x.shape))
    return ops.squeeze(out, axes=axes) if axes else out


def cumsum(x, axis=0):
    return ops.cumsum(x, axis=int(axis))


def cumprod(x, axis=0):
    return ops.cumprod(x, axis=int(axis))


# --- products ----------------------------------------------------------------------------------

_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_tile_ops = {}


def _tile(text, *inputs):
    op = _tile_ops.get(text)
    if op is None:
        op = _tile_ops[text] = graph.TileOp(text, "<keras backend>")
    return op(*inputs)


def _contract(x, y, x_axes, y_axes, x_free, y_free):
    """Sum over x_axes of x and y_axes of y (paired), with a shared batch axis 0 when
    `x_free`/`y_free` start with -1; the output has x's free axes, then y's."""
    rx, ry = _rank(x), _rank(y)
    xi = [f"x{i}" for i in range(rx)]
    yi = [f"y{i}" for i in range(ry)]
    for k, (a, b) in enumerate(zip(x_axes, y_axes)):
        xi[a] = yi[b] = f"k{k}"
    out_idx, out_dims = [], []
    batch = x_free and x_free[0] == -1
    if batch:
        xi[0] = yi[0] = "b"
        out_idx.append("b"), out_dims.append("X0")
        x_free, y_free = x_free[1:], y_free[1:]
    for a in x_free:
        out_idx.append(xi[a]), out_dims.append(f"X{a}")
    for b in y_free:
        out_idx.append(yi[b]), out_dims.append(f"Y{b}")
    xs = ", ".join(f"X{i}" for i in range(rx))
    ys = ", ".join(f"Y{i}" for i in range(ry))
    lhs = f"O[{', '.join(out_idx)} : {', '.join(out_dims)}]" if out_idx else "O[]"
    text = (f"function (X[{xs}], Y[{ys}]) -> (O) {{ {lhs} = "
            f"+(X[{', '.join(xi)}] * Y[{', '.join(yi)}]); }}")
    return _tile(text, x, y)


def dot(x, y):
    """Keras's dot: x's last axis with y's second to last (its only one for a vector)."""
    x, y = _t(x), _t(y)
    rx, ry = _rank(x), _rank(y)
    if ry <= 2 and rx >= 1:
        out = ops.matmul(x, y)
    else:
        yk = ry - 2 if ry >= 2 else 0
        out = _contract(x, y, [rx - 1], [yk], list(range(rx - 1)),
                        [b for b in range(ry) if b != yk])
    if is_sparse(x) or is_sparse(y):
        out._is_sparse = False
    return out


def batch_dot(x, y, axes=None):
    x, y = _t(x), _t(y)
    rx, ry = _rank(x), _rank(y)
    if rx < 2 or ry < 2:
        raise ValueError("Batch dot requires inputs of rank 2 or more.")
    if isinstance(axes, int):
        axes = [axes, axes]
    elif axes is None:
        axes = [rx - 1, ry - 1 if ry == 2 else ry - 2]
    axes = list(axes)
    if builtins.any(isinstance(a, (list, tuple)) for a in axes):
        raise ValueError("Multiple target dimensions are not supported. Expected: None, int, "
                         f"(int, int), Provided: {axes}")
    a, b = axes[0] % rx, axes[1] % ry
    if a == 0 or b == 0:
        raise ValueError("Can not perform batch dot over axis 0.")
    sx, sy = int_shape(x), int_shape(y)
    if sx[a] is not None and sy[b] is not None and sx[a] != sy[b]:
        raise ValueError(f"Can not do batch_dot on inputs with shapes {sx} and {sy} with "
                         f"axes={axes}. x.shape[{a}] != y.shape[{b}] ({sx[a]} != {sy[b]}).")
    out = _contract(x, y, [a], [b], [-1] + [i for i in range(1, rx) if i != a],
                    [-1] + [i for i in range(1, ry) if i != b])
    if _rank(out) == 1:
        out = expand_dims(out, 1)
    return out


# --- shapes ------------------------------------------------------------------------------------


def transpose(x):
    return permute_dimensions(x, list(range(_rank(x)))[::-1])


def permute_dimensions(x, pattern):
    return ops.transpose(x, perm=[int(p) for p in pattern])


def gather(reference, indices):
    indices = _t(indices)
    if not indices.dtype.startswith(("int", "uint")):
        indices = graph.cast(indices, "int32")
    return ops.gather(reference, indices, axis=0)


def concatenate(tensors, axis=-1):
    tensors = [_t(t) for t in tensors]
    rank = _rank(tensors[0])
    axis = int(axis) % rank if rank else 0
    out = ops.concatenate(*tensors, axis=axis)
    if tensors and builtins.all(is_sparse(t) for t in tensors):
        out._is_sparse = True
    return out


def reshape(x, shape):
    if isinstance(shape, Tensor):
        return graph.reshape(x, shape)
    return graph.reshape(x, [s if isinstance(s, Tensor) else int(s) for s in shape])


def repeat_elements(x, rep, axis):
    x = _t(x)
    out = ops.repeat(x, repeats=int(rep), axis=int(axis) % _rank(x))
    out._keras_shape = out.shape
    return out


def repeat(x, n):
    if _rank(x) != 2:
        raise ValueError(f"repeat: x must have rank 2; it has rank {_rank(x)}")
    return tile(expand_dims(x, 1), [1, n, 1])


def arange(start, stop=None, step=1, dtype="int32"):
    def make(start, stop, step):
        start, stop, step = (None if v.ndim == 1 and v.size == 0 else v.item()
                             for v in (start, stop, step))
        if stop is None:
            start, stop = 0, builtins.max(start, 0)
        return np.arange(start, stop, step).astype(dtype)

    if not builtins.any(isinstance(v, Tensor) for v in (start, stop, step)):
        return graph.constant(make(*(np.asarray(v if v is not None else [])
                                     for v in (start, stop, step))), dtype)
    args = [start, np.zeros(0) if stop is None else stop, step]
    return _host(make, args, "arange")


def tile(x, n):
    x = _t(x)
    n = [int(n)] if np.ndim(n) == 0 and not isinstance(n, Tensor) else n
    if isinstance(n, Tensor) or builtins.any(isinstance(r, Tensor) for r in n):
        value = _static_value(n) if isinstance(n, Tensor) else None
        if value is None:
            n = [r if not isinstance(r, Tensor) else _static_value(r) for r in n]
            if builtins.any(r is None for r in n):
                raise ValueError("tile: the repetitions must be known when the graph is built")
        else:
            n = value
    n = [int(np.reshape(r, -1)[0]) for r in n]
    return ops.tile(x, reps=n)


def flatten(x):
    return graph.reshape(x, [-1])


def batch_flatten(x):
    x = _t(x)
    rest = x.shape[1:]
    if builtins.all(d is not None for d in rest):
        return graph.reshape(x, [-1, int(np.prod(rest, dtype=np.int64))])
    return graph.reshape(x, [graph.shape(x)[0], -1])


def expand_dims(x, axis=-1):
    rank = _rank(x)
    axis = int(axis)
    if axis < 0:
        axis += rank + 1
    return ops.expand_dims(x, axis=axis)


def squeeze(x, axis):
    return ops.squeeze(x, axes=_axes(axis, _rank(x)))


def stack(x, axis=0):
    return graph.pack([_t(t) for t in x], int(axis))


def one_hot(indices, num_classes):
    indices = _t(indices)
    if not indices.dtype.startswith(("int", "uint")):
        indices = graph.cast(indices, "int32")
    return ops.one_hot(indices, depth=int(num_classes))


def reverse(x, axes):
    rank = _rank(x)
    axes = _axes(axes, rank)
    every = (1 << rank) - 1
    return ops.slice(x, begin=[0] * rank, end=[0] * rank,
                     step=[-1 if a in axes else 1 for a in range(rank)],
                     begin_mask=every, end_mask=every)


def slice(x, start, size):
    x = _t(x)
    start = [int(s) for s in (_static_value(start) if isinstance(start, Tensor) else start)]
    size = [int(s) for s in (_static_value(size) if isinstance(size, Tensor) else size)]
    if not len(x.shape) == len(start) == len(size):
        raise ValueError("The dimension and the size of indices should match.")
    return x[tuple(builtins.slice(b, None if n == -1 else b + n) for b, n in zip(start, size))]


def in_top_k(predictions, targets, k):
    """Whether each target is among the k largest predictions; ties at the boundary count as in,
    as in TensorFlow."""
    predictions = _float(predictions)
    classes = predictions.shape[-1]
    hot = graph.cast(one_hot(targets, classes), "bool")
    target = max(_i("cond", hot, predictions, -np.inf), axis=-1, keepdims=True)
    above = sum(graph.cast(_i("cmp_gt", predictions, target), "int32"), axis=-1)
    finite = _i("cmp_lt", abs(ops.squeeze(target, axes=[1])), np.inf)
    return _i("bit_and", _i("cmp_lt", above, int(k)), finite)
