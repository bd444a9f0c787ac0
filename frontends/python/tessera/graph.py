"""The graph API: symbolic tensors whose dimensions may stay unknown (None) until a run.

A graph is built from placeholders, variables and constants with ops (`tessera.ops.conv2d`, Tile
text as an op, elementwise arithmetic) and `gradients`. Nothing is compiled while it is built;
`Function(inputs, outputs, updates)` compiles the program once per set of concrete input shapes and
runs it with numpy arrays in and out. Variables live on the device between runs; updates write them
in place.

How shapes are known before a run: each node is built twice as C++ EDSL tensors (a "realization"),
with every unknown dimension of every placeholder set to one of two probe sizes. A dimension that
comes out the same in both is static; one that differs depends on an unknown one and is None. An op
given inconsistent shapes fails here, when it is called, with the op library's own message. At run
time the same realization code builds the program with the inputs' real sizes.
"""
import itertools
import weakref

import numpy as np

from . import _native

PROBE_SIZES = (31, 37)
LARGE_PROBE_SIZES = (331, 337)

_names = itertools.count()

# Callables told of every node as it is made: a framework can tag the nodes made inside one of
# its scopes (the Keras backend's control_dependencies does).
node_observers = []


def _unique(prefix):
    return f"{prefix}_{next(_names)}"


class Node:
    """An operation: its input tensors and how to realize its outputs. Subclasses define
    `realize(ctx, args)` given the realized inputs (native tensors or numpy host values)."""

    def __init__(self, inputs=()):
        self.inputs = list(inputs)
        for observe in node_observers:
            observe(self)

    def realize(self, ctx, args):
        raise NotImplementedError


class Tensor:
    """A symbolic tensor: `dtype` (a numpy-style name), `shape` (a tuple; None where unknown until
    run). Arithmetic operators build elementwise ops. Tensors carry a `__dict__` for frameworks
    that annotate them (Keras sets `_keras_shape`, `_keras_history`)."""

    def __init__(self, node, index, dtype, shape, name=None):
        self.node, self.index = node, index
        self.dtype, self.shape = dtype, tuple(shape)
        self.name = name or _unique(type(node).__name__.replace("Node", "").lower() or "t")

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        dims = ", ".join("?" if d is None else str(d) for d in self.shape)
        return f"<tessera.Tensor {self.name} {self.dtype}[{dims}]>"

    # Identity semantics: tensors are dict keys and list members (frameworks rely on it), so
    # == and != are not elementwise here; use tessera.equal / not_equal.
    __hash__ = object.__hash__

    def __add__(self, o): return intrinsic("add", self, o)
    def __radd__(self, o): return intrinsic("add", o, self)
    def __sub__(self, o): return intrinsic("sub", self, o)
    def __rsub__(self, o): return intrinsic("sub", o, self)
    def __mul__(self, o): return intrinsic("mul", self, o)
    def __rmul__(self, o): return intrinsic("mul", o, self)
    def __truediv__(self, o): return intrinsic("div", self, o)
    def __rtruediv__(self, o): return intrinsic("div", o, self)
    def __neg__(self): return intrinsic("neg", self)
    def __pow__(self, o): return intrinsic("pow", self, o)
    def __rpow__(self, o): return intrinsic("pow", o, self)
    def __abs__(self): return intrinsic("abs", self)
    def __lt__(self, o): return intrinsic("cmp_lt", self, o)
    def __le__(self, o): return intrinsic("cmp_le", self, o)
    def __gt__(self, o): return intrinsic("cmp_gt", self, o)
    def __ge__(self, o): return intrinsic("cmp_ge", self, o)

    def __getitem__(self, key):
        return getitem(self, key)


# --- realization ------------------------------------------------------------------------------


class Realization:
    """The graph built as C++ EDSL tensors for concrete placeholder shapes. `dims(node)` gives a
    placeholder's concrete shape. Values are native tensors or numpy arrays (host values: shapes,
    constants, arithmetic on them). Host values that a native op needs become program inputs
    ("feeds"), as do placeholders, variables and random tensors."""

    def __init__(self, dims, probe=False):
        self.dims, self.probe = dims, probe
        # A probe lives as long as the process: it must not keep dropped graphs (and their
        # variables' device memory) alive.
        self.values = weakref.WeakKeyDictionary() if probe else {}  # node -> list of outputs
        self.feeds = []  # (name, native placeholder, source): a Node or ("const", array)
        self._const_feeds = {}  # id(array) -> (array, native placeholder)
        self._count = itertools.count()

    def value(self, t):
        """The realized value of tensor `t`."""
        return self.outputs(t.node)[t.index]

    def outputs(self, node):
        """The realized outputs of `node`; realizes what it depends on first (iteratively: graphs
        can be deeper than Python's recursion limit)."""
        stack = [node]
        while stack:
            top = stack[-1]
            if top in self.values:
                stack.pop()
                continue
            todo = [i.node for i in top.inputs if i.node not in self.values]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            out = top.realize(self, [self.values[i.node][i.index] for i in top.inputs])
            self.values[top] = out if isinstance(out, list) else [out]
        return self.values[node]

    def native(self, v):
        """`v` (a realized value) as a native tensor: host values become literals (scalars) or
        program inputs."""
        if isinstance(v, _native.Tensor):
            return v
        a = np.asarray(v)
        if a.ndim == 0:
            return _native.cast(_native.literal(a.item()), _dtype_name(a.dtype))
        if id(a) not in self._const_feeds:
            ph = self._placeholder(_dtype_name(a.dtype), a.shape, "K", ("const", a))
            self._const_feeds[id(a)] = (a, ph)  # the array is kept: its id stays unique
        return self._const_feeds[id(a)][1]

    def feed(self, node, dtype, shape, prefix):
        """A program input for `node` (a placeholder, variable or random source)."""
        return self._placeholder(dtype, shape, prefix, node)

    def _placeholder(self, dtype, shape, prefix, source):
        name = f"{prefix}{next(self._count)}"
        ph = _native.placeholder(dtype, list(shape), name)
        if not self.probe:
            self.feeds.append((name, ph, source))
        return ph


def _contiguous(a):
    # np.ascontiguousarray would make a 0-d array 1-d.
    return np.asarray(a, order="C")


def _dtype_name(dt):
    name = np.dtype(dt).name
    return "bool" if name == "bool" else name


def _probe_dims(size):
    def dims(node):
        return [size if d is None else d for d in node.shape]
    return dims


# The realizations that give static shapes; they grow with the graph (weakly). The large ones
# serve where the small sizes are too small: an image of unknown size through five stride-2
# stages of an ImageNet network (Keras's include_top=False).
_probes = [Realization(_probe_dims(n), probe=True) for n in PROBE_SIZES]
_large_probes = [Realization(_probe_dims(n), probe=True) for n in LARGE_PROBE_SIZES]

# Realizations that are building nodes themselves (a deferred node unrolling its subgraph):
# nodes made then are realized there at once, with that realization's concrete shapes.
_building = []


def _static(node, names=None):
    """The output tensors of a new node, with dtypes and static shapes from the probes."""
    def tensors(outs_a, outs_b):
        return [Tensor(node, i, _dtype_of(x),
                       tuple(p if p == q else None for p, q in zip(_shape_of(x), _shape_of(y))),
                       names[i] if names else None)
                for i, (x, y) in enumerate(zip(outs_a, outs_b))]

    if _building:
        outs = _building[-1].outputs(node)
        return tensors(outs, outs)
    try:
        return tensors(*(p.outputs(node) for p in _probes))
    except (ValueError, IndexError) as error:
        first_error = error
    # Unknown dimensions that must equal known ones (Keras's targets: rank-2 placeholders with
    # no size known, against a (None, 10) output) fail at probe sizes. As in TensorFlow's shape
    # inference, such a dimension takes the known size of another input of the same rank (or its
    # probe size, where both are unknown), here by realizing the node on stand-ins.
    try:
        return tensors(*(_realize_merged(node, p) for p in _probes))
    except (ValueError, IndexError):
        pass
    try:
        return tensors(*(p.outputs(node) for p in _large_probes))
    except (ValueError, IndexError):
        pass
    # An unknown dimension that must be 1 (a squeeze of Keras's sample weights): the unknown
    # dimensions of the inputs are 1, and a size 1 in the result is unknown.
    try:
        outs = [_realize_merged(node, p, ones=True) for p in _probes][0]
    except (ValueError, IndexError):
        raise first_error from None
    return [Tensor(node, i, _dtype_of(x), tuple(None if d == 1 else d for d in _shape_of(x)),
                   names[i] if names else None) for i, x in enumerate(outs)]


def _realize_merged(node, probe, ones=False):
    """`node` realized in `probe` on stand-ins for its inputs: each unknown dimension takes the
    size of another input of the same rank, or 1 with `ones`."""
    args = [probe.value(i) for i in node.inputs]
    merged = list(args)
    for a, (arg, inp) in enumerate(zip(args, node.inputs)):
        if not isinstance(arg, _native.Tensor) or None not in inp.shape:
            continue
        if ones:
            dims = [1 if d is None else x for x, d in zip(arg.shape, inp.shape)]
        else:
            others = [o for o, oi in zip(args, node.inputs)
                      if o is not arg and isinstance(o, _native.Tensor) and oi.ndim == inp.ndim]
            if not others:
                continue
            dims = [o if d is None else x for x, d, o in zip(arg.shape, inp.shape, others[0].shape)]
        if dims != list(arg.shape):
            merged[a] = probe.feed(None, arg.dtype, dims, "M")
    out = node.realize(probe, merged)
    probe.values[node] = out if isinstance(out, list) else [out]
    return probe.values[node]


def _shape_of(v):
    return tuple(v.shape) if isinstance(v, _native.Tensor) else np.shape(v)


def _dtype_of(v):
    return v.dtype if isinstance(v, _native.Tensor) else _dtype_name(np.asarray(v).dtype)


# --- sources ----------------------------------------------------------------------------------


class PlaceholderNode(Node):
    def __init__(self, dtype, shape):
        super().__init__()
        self.dtype, self.shape = dtype, tuple(shape)

    def realize(self, ctx, args):
        return ctx.feed(self, self.dtype, ctx.dims(self), "I")


def placeholder(dtype="float32", shape=(), name=None):
    """An input fed with a numpy array at run time; None dimensions take the array's sizes."""
    node = PlaceholderNode(_dtype_name(dtype), shape)
    return Tensor(node, 0, node.dtype, node.shape, name)


class ConstantNode(Node):
    def __init__(self, value):
        super().__init__()
        self.value = value

    def realize(self, ctx, args):
        return self.value


def constant(value, dtype=None, name=None):
    """A constant: a host value, folded where the graph computes on shapes and constants."""
    a = _array(value, dtype)
    return Tensor(ConstantNode(a), 0, _dtype_name(a.dtype), a.shape, name)


def _array(value, dtype):
    """numpy's array of `value`; Python floats (not numpy arrays) become float32, as in every
    framework that builds on this."""
    a = np.array(value, dtype=dtype)
    if dtype is None and a.dtype == np.float64 and not isinstance(value, (np.ndarray, np.generic)):
        a = a.astype(np.float32)
    return a


class VariableNode(Node):
    def __init__(self, var):
        super().__init__()
        self.var = var

    def realize(self, ctx, args):
        return ctx.feed(self, self.var.dtype, self.var.shape, "V")


class Variable(Tensor):
    """A tensor that lives on a device between runs; Function updates write it in place."""

    def __init__(self, value, dtype=None, name=None, device=None):
        a = _array(value, dtype)
        self.device = device or get_device()
        self._data = self.device.upload(_contiguous(a))
        super().__init__(VariableNode(self), 0, _dtype_name(a.dtype), a.shape, name)

    @property
    def device_tensor(self):
        return self._data

    def get_value(self):
        return self._data.read()

    def set_value(self, value):
        a = np.asarray(value, dtype=self.dtype)
        if a.shape != self.shape:
            raise ValueError(f"variable {self.name} has shape {self.shape}; cannot set a value of "
                             f"shape {a.shape}")
        self._data.write(_contiguous(a))


class RandomNode(Node):
    """Random values drawn on the host for each run (numpy's generator, seeded once)."""

    def __init__(self, shape_tensor, dtype, draw, seed):
        super().__init__([shape_tensor])
        self.dtype, self.draw = dtype, draw
        self.rng = np.random.default_rng(seed)

    def realize(self, ctx, args):
        shape = [int(d) for d in np.asarray(args[0]).reshape(-1)]
        return ctx.feed(self, self.dtype, shape, "R")

    def sample(self, shape):
        return np.asarray(self.draw(self.rng, tuple(shape)), dtype=self.dtype)


def random(shape, draw, dtype="float32", seed=None):
    """A tensor of `shape` (ints, or a shape tensor) whose values `draw(rng, shape)` gives anew
    for each run."""
    node = RandomNode(as_tensor(shape if isinstance(shape, Tensor) else list(shape), "int64"),
                      _dtype_name(dtype), draw, seed)
    return _static(node)[0]


# --- ops ---------------------------------------------------------------------------------------


def as_tensor(x, dtype=None):
    """`x` as a tensor: tensors as they are; lists that hold tensors are stacked (pack); anything
    else is a constant."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (list, tuple)) and any(isinstance(v, Tensor) for v in _flatten(x)):
        t = pack([as_tensor(v) if isinstance(v, (list, tuple)) else v for v in x])
        return t if dtype is None else cast(t, dtype)
    return constant(x, dtype)


def _flatten(x):
    for v in x:
        if isinstance(v, (list, tuple)):
            yield from _flatten(v)
        else:
            yield v


class PackNode(Node):
    """Tensors of one shape stacked along a new axis; on the host when all are host values
    (`pack([shape(x)[0], -1])` stays a shape that reshape can read)."""

    def __init__(self, inputs, axis):
        super().__init__(inputs)
        self.axis = axis

    def realize(self, ctx, args):
        if all(not isinstance(a, _native.Tensor) for a in args):
            return np.stack([np.asarray(a) for a in args], self.axis)
        parts = []
        for a in args:
            n = ctx.native(a) if isinstance(a, _native.Tensor) else _native_array(ctx, a)
            shape = list(n.shape)
            parts.append(_native.reshape(n, shape[:self.axis] + [1] + shape[self.axis:]))
        return _native.call_op("concatenate", parts, {"axis": self.axis})[0]


def _native_array(ctx, a):
    # A 0-d host value inside a pack must keep its dtype and rank 0, not become a weak literal.
    a = np.asarray(a)
    if a.ndim == 0:
        return _native.reshape(ctx.native(a.reshape(1)), [])
    return ctx.native(a)


def pack(values, axis=0):
    """Tensors (or numbers) of one shape stacked along a new axis `axis`."""
    values = [_operand(v) for v in values]
    if not values:
        raise ValueError("pack: nothing to stack")
    rank = values[0].ndim
    if axis < 0:
        axis += rank + 1
    return _static(PackNode(values, axis))[0]


class IntrinsicNode(Node):
    _HOST = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "neg": np.negative,
             "max": np.maximum, "min": np.minimum, "abs": np.abs, "ident": lambda x: x}

    def __init__(self, name, inputs):
        super().__init__(inputs)
        self.name = name

    def realize(self, ctx, args):
        if self.name in self._HOST and all(not isinstance(a, _native.Tensor) for a in args):
            return np.asarray(self._HOST[self.name](*args))
        return _native.intrinsic(self.name, [_scalar_or_native(ctx, a) for a in args])


def _scalar_or_native(ctx, a):
    # Python scalars stay weakly typed literals: `x * 2` keeps x's dtype.
    if not isinstance(a, _native.Tensor) and np.ndim(a) == 0 and getattr(a, "_weak", False):
        return a.item()
    return ctx.native(a)


class _WeakScalar(np.ndarray):
    """A Python number given to an op: a literal that takes the other operand's type."""
    _weak = True


def _operand(x):
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (bool, int, float)):
        a = np.array(x).view(_WeakScalar)
        return Tensor(ConstantNode(a), 0, _dtype_name(a.dtype), (), None)
    return constant(x)


def intrinsic(name, *args):
    """An elementwise Tile intrinsic (add, exp, cond, cmp_lt, ...) on tensors and numbers, with
    numpy broadcasting and Tile's type promotion."""
    return _static(IntrinsicNode(name, [_operand(a) for a in args]))[0]


class OpNode(Node):
    def __init__(self, name, inputs, attrs):
        super().__init__(inputs)
        self.name, self.attrs = name, attrs

    def realize(self, ctx, args):
        return list(_native.call_op(self.name, [ctx.native(a) for a in args], self.attrs))


def op(name, *inputs, **attrs):
    """An op of the op library by name; one tensor, or a list when it has several outputs."""
    outs = _static(OpNode(name, [as_tensor(i) for i in inputs], attrs))
    return outs[0] if len(outs) == 1 else outs


class CastNode(Node):
    def __init__(self, x, dtype):
        super().__init__([x])
        self.dtype = dtype

    def realize(self, ctx, args):
        if not isinstance(args[0], _native.Tensor):
            return np.asarray(args[0]).astype(self.dtype)
        return _native.cast(args[0], self.dtype)


def cast(x, dtype):
    x = as_tensor(x)
    dtype = _dtype_name(dtype)
    return x if x.dtype == dtype else _static(CastNode(x, dtype))[0]


class ReshapeNode(Node):
    """A reshape to sizes that may be tensors (known at run time) and one -1."""

    def __init__(self, x, sizes):
        super().__init__([x] + [s for s in sizes if isinstance(s, Tensor)])
        self.sizes = sizes

    def realize(self, ctx, args):
        x, dynamic = args[0], iter(args[1:])
        sizes = [int(np.asarray(next(dynamic)).reshape(-1)[0]) if isinstance(s, Tensor) else int(s)
                 for s in self.sizes]
        n = int(np.prod(_shape_of(x), dtype=np.int64))
        if sizes.count(-1) == 1:
            known = int(np.prod([s for s in sizes if s != -1], dtype=np.int64))
            if known == 0 or n % known:
                raise ValueError(f"reshape: cannot reshape {list(_shape_of(x))} into {sizes}")
            sizes[sizes.index(-1)] = n // known
        if not isinstance(x, _native.Tensor):
            return np.reshape(x, sizes)
        return _native.reshape(x, sizes)


def reshape(x, shape):
    """`x` with a new shape: ints, scalar tensors, and at most one -1."""
    x = as_tensor(x)
    if isinstance(shape, Tensor):
        shape = [shape[i] for i in range(shape.shape[0])]
    return _static(ReshapeNode(x, list(shape)))[0]


class ShapeNode(Node):
    def realize(self, ctx, args):
        return np.array(_shape_of(args[0]), dtype=np.int32)


def shape(x):
    """The shape of `x` as an int32 vector, known when the program is built for a run."""
    return _static(ShapeNode([as_tensor(x)]))[0]


class GetItemNode(Node):
    def __init__(self, x, key):
        super().__init__([x])
        self.key = key

    def realize(self, ctx, args):
        x = args[0]
        if not isinstance(x, _native.Tensor):
            return np.asarray(x)[self.key]
        rank = len(x.shape)
        key = self.key if isinstance(self.key, tuple) else (self.key,)
        if Ellipsis in key:
            i = key.index(Ellipsis)
            key = key[:i] + (slice(None),) * (rank - len(key) + 1) + key[i + 1:]
        key = key + (slice(None),) * (rank - len(key))
        begin, end, step, squeeze, end_mask = [], [], [], [], 0
        for axis, k in enumerate(key):
            if isinstance(k, slice):
                b, e, s = k.indices(x.shape[axis])
                if e < 0:  # a downward slice through index 0: the op reads -1 as the last index
                    end_mask |= 1 << axis
                begin.append(b), end.append(e), step.append(s)
            else:
                k = int(k) + (x.shape[axis] if int(k) < 0 else 0)
                if not 0 <= k < x.shape[axis]:
                    raise IndexError(f"index {int(k)} is out of range for axis {axis} of size "
                                     f"{x.shape[axis]}")
                begin.append(k), end.append(k + 1), step.append(1), squeeze.append(axis)
        out = _native.call_op("slice", [x], {"begin": begin, "end": end, "step": step,
                                             "end_mask": end_mask})[0]
        if squeeze:
            out = _native.reshape(out, [d for a, d in enumerate(out.shape) if a not in squeeze])
        return out


def getitem(x, key):
    """numpy-style basic indexing: ints, slices (with steps) and one Ellipsis."""
    return _static(GetItemNode(as_tensor(x), key))[0]


class TileNode(Node):
    def __init__(self, text, names, output_names, inputs, source_name):
        super().__init__(inputs)
        self.text, self.names, self.output_names = text, names, output_names
        self.source_name = source_name

    def realize(self, ctx, args):
        outs = _native.call_tile(self.text, {n: ctx.native(a) for n, a in zip(self.names, args)},
                                 self.source_name)
        return [outs[n] for n in self.output_names]


class TileOp:
    """Tile text as a callable op: `TileOp("function (A[N]) -> (B) { B = exp(A); }")(x)`.
    Inputs are given in the program's order (or by name); returns its outputs in order. Text that
    does not parse raises TileError here, with its file:line:col."""

    def __init__(self, text, source_name="<tile op>"):
        self.text, self.source_name = text, source_name
        self.input_names, self.output_names = _native.tile_signature(text, source_name)

    def __call__(self, *inputs, **named):
        if inputs and named:
            raise TypeError("give a Tile op's inputs by position or by name, not both")
        values = named if named else dict(zip(self.input_names, inputs))
        if len(inputs) > len(self.input_names) or set(values) != set(self.input_names):
            raise TypeError(f"the Tile op takes inputs {self.input_names}; got "
                            f"{sorted(values) if named else len(inputs)}")
        node = TileNode(self.text, self.input_names, self.output_names,
                        [as_tensor(values[n]) for n in self.input_names], self.source_name)
        outs = _static(node, self.output_names)
        return outs[0] if len(outs) == 1 else outs


class _BoundNode(Node):
    """A value of one realization, as a tensor of its concrete shape (inside a deferred build)."""

    def __init__(self, value):
        super().__init__()
        self.value = value

    def realize(self, ctx, args):
        return self.value


class DeferredNode(Node):
    """A subgraph built when the node is realized, from tensors of the realization's concrete
    shapes: loops whose trip count is an unknown dimension (an RNN over sequences of any length)
    are unrolled once the length is known. The probes build it at their sizes too."""

    def __init__(self, build, inputs):
        super().__init__(inputs)
        self.build = build

    def realize(self, ctx, args):
        bound = [Tensor(_BoundNode(a), 0, _dtype_of(a), _shape_of(a)) for a in args]
        _building.append(ctx)
        try:
            return [ctx.native(ctx.value(as_tensor(o))) for o in self.build(*bound)]
        finally:
            _building.pop()


def deferred(build, inputs):
    """The tensors `build(*inputs)` returns, built anew for each set of concrete input shapes:
    inside `build`, every tensor's shape is concrete."""
    return _static(DeferredNode(build, [as_tensor(i) for i in inputs]))


class GradientNode(Node):
    def __init__(self, loss, wrt, seed):
        super().__init__([loss] + list(wrt) + ([seed] if seed is not None else []))
        self.count, self.seeded = len(wrt), seed is not None

    def realize(self, ctx, args):
        loss, wrt = ctx.native(args[0]), [ctx.native(a) for a in args[1:1 + self.count]]
        seed = ctx.native(args[-1]) if self.seeded else None
        return list(_native.gradient(loss, wrt, seed))


def gradients(loss, wrt, seed=None):
    """d(sum(loss))/dw for each w in `wrt` (placeholders, variables or intermediate tensors), as
    tensors of their shapes; with `seed`, the vector-Jacobian product with it."""
    wrt = list(wrt)
    return _static(GradientNode(as_tensor(loss), wrt, None if seed is None else as_tensor(seed)))


# --- devices and functions ---------------------------------------------------------------------

_STAT_KEYS = ("programs", "kernels", "cache_hits", "cache_misses", "tuning_trials", "tune_seconds",
              "compile_seconds")
_stats = dict.fromkeys(_STAT_KEYS, 0)


def _count_compile(report):
    _stats["programs"] += 1
    for key in _STAT_KEYS[1:]:
        _stats[key] += report[key]


def compile_stats():
    """What Functions compiled in this process so far: programs, kernels, kernels served from
    the kernel cache (cache_hits), tuning trials and seconds, compile seconds (tuning included).
    Subtract two snapshots to see what a stretch of work (an epoch) compiled."""
    return dict(_stats)


_compiled_alive = weakref.WeakSet()  # every _Compiled with an executable, for tuning_stats()


def tuning_stats():
    """What tuning between runs (tune='online', the default) has done so far in the executables
    alive now: runs, run_seconds, tune_seconds and trials summed; kernels_tuned; and swaps, one
    dict per kernel swapped for a tuned one, with the run (counting from 1 in its executable)
    that first ran it. Subtract two snapshots' numbers to see what a stretch of work did."""
    total = {"runs": 0, "run_seconds": 0.0, "tune_seconds": 0.0, "trials": 0, "kernels_tuned": 0,
             "swaps": []}
    for compiled in list(_compiled_alive):
        t = compiled.exe.tuning
        for key in ("runs", "run_seconds", "tune_seconds", "trials"):
            total[key] += t[key]
        total["kernels_tuned"] += len(t["kernels"])
        total["swaps"] += t["swaps"]
    return total


_device = None
_compile_options = {}


def set_compile_options(tune=None, tune_seconds=0.0):
    """How Functions compile from now on: `tune` is 'online' (no compile waits for tuning; hot
    kernels are tuned between runs, within a share of the run time), 'full' (time every kernel the
    cache lacks while compiling), 'cached' (the cache's schedules or the cost model's, no timing)
    or 'off' (the cost model, no cache); None follows $TESSERA_TUNE. `tune_seconds` bounds the tuning of one program (0: no
    bound); kernels past it take the cost model's schedule."""
    _compile_options.clear()
    _compile_options.update(tune=tune, tune_seconds=float(tune_seconds))


def get_device():
    """The device graphs run on: set_device's, else $TESSERA_DEVICE's, else this machine's."""
    global _device
    if _device is None:
        _device = _native.Device(_native.default_device())
    return _device


def set_device(name):
    global _device
    _device = _native.Device(name)
    return _device


class _Compiled:
    """One Function compiled for one set of input shapes."""

    def __init__(self, ctx, outputs, updates, device):
        self.outputs = []  # per output: ("native", name) or ("host", array)
        named = []
        for i, v in enumerate(outputs):
            if isinstance(v, _native.Tensor):
                named.append((f"O{i}", _fresh(v, ctx)))
                self.outputs.append(("native", f"O{i}"))
            else:
                self.outputs.append(("host", np.asarray(v)))
        self.updates = []
        for i, (var, v) in enumerate(updates):
            v = ctx.native(v)
            if list(v.shape) != list(var.shape):
                raise ValueError(f"update of {var.name}: shape {tuple(v.shape)} does not match the "
                                 f"variable's {var.shape}")
            if v.dtype != var.dtype:
                v = _native.cast(v, var.dtype)
            named.append((f"U{i}", _fresh(v, ctx)))
            self.updates.append((f"U{i}", var))
        self.feeds = ctx.feeds
        self.device = device
        self.exe = None
        # Constants are compiled in: what depends on them alone is computed once, and per-channel
        # arithmetic after a contraction with constant weights is folded into those weights.
        constants = {name: _contiguous(source[1]) for name, _, source in self.feeds
                     if isinstance(source, tuple)}
        if named:
            fn = _native.build(named, [ph for _, ph, _ in self.feeds])
            self.exe = device.compile(fn, constants=constants, **_compile_options)
            _count_compile(self.exe.report)
            _compiled_alive.add(self)

    def run(self, feed_values):
        inputs = {}
        for name, ph, source in self.feeds:
            if isinstance(source, tuple):  # a constant: the executable holds it
                continue
            if isinstance(source, VariableNode):
                inputs[name] = source.var.device_tensor
            elif isinstance(source, RandomNode):
                inputs[name] = self.device.upload(source.sample(ph.shape))
            else:
                inputs[name] = self.device.upload(feed_values[id(source)])
        results = {}
        if self.exe is not None:
            bound = {u: var.device_tensor for u, var in self.updates}
            results = self.exe.run_on_device(inputs, bound)
        return [results[v].read() if kind == "native" else v for kind, v in self.outputs]


def _fresh(v, ctx):
    # A program output may not be one of its inputs: copy a fed tensor through `ident`.
    if any(v.name == name for name, _, _ in ctx.feeds):
        return _native.intrinsic("ident", [v])
    return v


class Function:
    """`Function(inputs, outputs, updates=[(variable, new_value), ...])`: called with one numpy
    array per input, returns a list of numpy arrays, one per output, and writes the updates into
    their variables. Compiled once per set of input shapes and dtypes, on first use."""

    def __init__(self, inputs, outputs, updates=(), device=None):
        self.inputs = list(inputs)
        for x in self.inputs:
            if not isinstance(x, Tensor) or not isinstance(x.node, PlaceholderNode):
                raise TypeError(f"Function inputs must be placeholders; got {x!r}")
        self.outputs = [as_tensor(o) for o in outputs]
        self.updates = [(var, as_tensor(v)) for var, v in updates]
        targets = [var for var, _ in self.updates]
        for var in targets:
            if not isinstance(var, Variable):
                raise TypeError(f"an update's target must be a Variable; got {var!r}")
        if len({id(v) for v in targets}) != len(targets):
            raise ValueError("a variable is updated twice in one Function")
        self.device = device or get_device()
        self._compiled = {}

    @property
    def compiled_shapes(self):
        """How many sets of input shapes this function has been compiled for."""
        return len(self._compiled)

    def __call__(self, values):
        values = list(values)
        if len(values) != len(self.inputs):
            raise ValueError(f"the function takes {len(self.inputs)} inputs; got {len(values)}")
        arrays = [self._check(x, v) for x, v in zip(self.inputs, values)]
        key = tuple((a.shape, a.dtype.str) for a in arrays)
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = self._compiled[key] = self._compile(arrays)
        return compiled.run({id(x.node): a for x, a in zip(self.inputs, arrays)})

    @staticmethod
    def _check(x, value):
        a = np.asarray(value)
        if a.dtype != np.dtype(x.dtype):
            a = a.astype(x.dtype)
        if a.ndim != len(x.shape) or any(d is not None and d != s for d, s in zip(x.shape, a.shape)):
            want = "(" + ", ".join("None" if d is None else str(d) for d in x.shape) + ")"
            raise ValueError(f"input {x.name} expects shape {want}; got an array of shape {a.shape}")
        return _contiguous(a)

    def _compile(self, arrays):
        shapes = {id(x.node): list(a.shape) for x, a in zip(self.inputs, arrays)}

        def dims(node):
            if id(node) not in shapes:
                raise ValueError(f"the outputs depend on placeholder {node.shape} that is not an "
                                 "input of this Function")
            return shapes[id(node)]

        ctx = Realization(dims)
        # Every input is a program input, in order, even where no output reads it.
        for x in self.inputs:
            ctx.value(x)
        outs = [ctx.value(o) for o in self.outputs]
        ups = [(var, ctx.value(v)) for var, v in self.updates]
        return _Compiled(ctx, outs, ups, self.device)
