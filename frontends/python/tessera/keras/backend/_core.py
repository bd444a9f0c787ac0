"""The backend's state and tensors: placeholders, variables, constants, evaluation, `function`
with updates and the learning phase, random tensors, uids, name scopes and control dependencies.

Update semantics follow Keras's TensorFlow backend: every read of a variable in one `function`
call sees its value from before the call's updates, except reads made inside
`control_dependencies(update_ops)`, which see the updated values (Keras's stateful metrics compute
their result that way).
"""
import contextlib
import copy
import sys

import numpy as np

from ... import graph
from ...graph import Tensor, Variable

__all__ = [
    "backend", "placeholder", "variable", "constant", "is_tensor", "is_keras_tensor",
    "is_placeholder", "is_variable", "is_sparse", "to_dense", "int_shape", "ndim", "shape", "size",
    "dtype", "eval", "get_value", "batch_get_value", "set_value", "batch_set_value",
    "get_variable_shape", "count_params", "cast", "zeros", "ones", "eye", "zeros_like",
    "ones_like", "identity", "random_uniform_variable", "random_normal_variable", "random_normal",
    "random_uniform", "random_binomial", "truncated_normal", "update", "update_add", "update_sub",
    "moving_average_update", "function", "learning_phase", "set_learning_phase", "get_uid",
    "reset_uids", "clear_session", "manual_variable_initialization", "name_scope",
    "control_dependencies", "print_tensor", "stop_gradient",
]


def _floatx():
    # Keras's own setting once Keras is imported; the backend must not import Keras itself.
    common = sys.modules.get("keras.backend.common")
    return common.floatx() if common is not None else "float32"


def _epsilon():
    common = sys.modules.get("keras.backend.common")
    return common.epsilon() if common is not None else 1e-7


def backend():
    return "tessera"


# --- host values: shapes and sizes known when a program is built -------------------------------


class _HostNode(graph.Node):
    """A value computed on the host from host values (shapes, constants) when the program is
    built; `fn` gets numpy arrays."""

    def __init__(self, fn, inputs, what):
        super().__init__(inputs)
        self.fn, self.what = fn, what

    def realize(self, ctx, args):
        if any(isinstance(a, graph._native.Tensor) for a in args):
            raise ValueError(f"{self.what} needs values known when the program is built (shapes "
                             "and constants), not values computed by it")
        return np.asarray(self.fn(*[np.asarray(a) for a in args]))


def _host(fn, inputs, what):
    return graph._static(_HostNode(fn, [graph.as_tensor(i) for i in inputs], what))[0]


def _shape_vector(shape):
    """A shape given as ints, scalar tensors or one shape tensor, as an int64 vector tensor."""
    if isinstance(shape, Tensor):
        return shape
    shape = [shape] if np.ndim(shape) == 0 and not isinstance(shape, (list, tuple)) else shape
    if not any(isinstance(d, Tensor) for d in shape):
        return graph.constant(np.array([int(d) for d in shape], np.int64))
    return _host(lambda *ds: np.array([int(np.reshape(d, -1)[0]) for d in ds], np.int64),
                 list(shape), "a shape")


def _static_value(x):
    """The value of `x` when it is a host value known before any run (a constant, a shape), else
    None."""
    if not isinstance(x, Tensor):
        return np.asarray(x)
    values = [p.value(x) for p in graph._probes]
    if any(isinstance(v, graph._native.Tensor) for v in values):
        return None
    a, b = (np.asarray(v) for v in values)
    return a if a.shape == b.shape and np.array_equal(a, b) else None


# --- tensors -----------------------------------------------------------------------------------


def _keras_tensor(x, shape=None):
    x._keras_shape = tuple(x.shape if shape is None else shape)
    x._uses_learning_phase = False
    return x


def placeholder(shape=None, ndim=None, dtype=None, sparse=False, name=None):
    dtype = graph._dtype_name(np.dtype(dtype or _floatx()))
    if shape is None:
        if ndim is None:
            raise ValueError("placeholder: give a shape or ndim (Tessera needs the rank)")
        x = graph.placeholder(dtype, (None,) * ndim, _scoped(name))
    else:
        shape = tuple(None if d is None else int(d) for d in shape)
        x = graph.placeholder(dtype, shape, _scoped(name))
    x._is_placeholder = True
    x._is_sparse = bool(sparse)
    return _keras_tensor(x)


def variable(value, dtype=None, name=None, constraint=None):
    dtype = dtype or _floatx()
    sparse = hasattr(value, "tocoo") and hasattr(value, "toarray")  # a scipy sparse matrix
    if sparse:
        value = value.toarray()
    elif isinstance(value, Tensor):
        value = eval(value)
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"variable: unsupported dtype {dtype!r}") from e
    v = Variable(np.asarray(value, dtype=dt), dt, _scoped(name) if name else None)
    v._is_sparse = sparse
    v.trainable = True  # as TensorFlow's variables: Keras tracks attributes that hold one
    v.constraint = constraint
    return _keras_tensor(v)


def constant(value, dtype=None, shape=None, name=None):
    dtype = dtype or _floatx()
    a = np.asarray(value, dtype=dtype)
    if shape is not None:
        a = np.broadcast_to(a, tuple(shape)).copy()
    return _keras_tensor(graph.constant(a, a.dtype, name))


def is_tensor(x):
    return isinstance(x, Tensor)


def is_keras_tensor(x):
    if not is_tensor(x):
        raise ValueError(f"Unexpectedly found an instance of type `{type(x)}`. Expected a "
                         "symbolic tensor instance.")
    return hasattr(x, "_keras_history")


def is_placeholder(x):
    return isinstance(x, Tensor) and isinstance(x.node, graph.PlaceholderNode)


def is_variable(x):
    return isinstance(x, Variable)


def is_sparse(tensor):
    return bool(getattr(tensor, "_is_sparse", False))


def to_dense(tensor):
    # Sparse values are stored dense: a sparse tensor already is its dense value.
    return tensor


def int_shape(x):
    if hasattr(x, "_keras_shape"):
        return x._keras_shape
    if isinstance(x, Tensor):
        return x.shape
    return np.shape(x)


def get_variable_shape(x):
    return int_shape(x)


def ndim(x):
    return len(int_shape(x))


def shape(x):
    return graph.shape(x)


def size(x, name=None):
    return _host(lambda s: np.int32(np.prod(s)), [graph.shape(x)], "size")


def dtype(x):
    return x.dtype if isinstance(x, Tensor) else np.asarray(x).dtype.name


def count_params(x):
    return int(np.prod(int_shape(x), dtype=np.int64))


def cast(x, dtype):
    return graph.cast(x, np.dtype(dtype))


def _fill(x, value, dtype):
    x = graph.as_tensor(x)
    # cond(x == x, v, v): the value everywhere, whatever x holds (NaN included).
    out = graph.intrinsic("cond", graph.intrinsic("cmp_eq", x, x), value, value)
    return graph.cast(out, np.dtype(dtype or x.dtype))


def zeros(shape, dtype=None, name=None):
    return variable(np.zeros(shape), dtype or _floatx(), name)


def ones(shape, dtype=None, name=None):
    return variable(np.ones(shape), dtype or _floatx(), name)


def eye(size, dtype=None, name=None):
    n, m = (size, size) if np.ndim(size) == 0 else tuple(size)
    return variable(np.eye(n, m), dtype or _floatx(), name)


def zeros_like(x, dtype=None, name=None):
    return _fill(x, 0, dtype)


def ones_like(x, dtype=None, name=None):
    return _fill(x, 1, dtype)


def identity(x, name=None):
    return graph.intrinsic("ident", x)


def _seed(seed):
    return np.random.randint(10_000_000) if seed is None else seed


def random_uniform_variable(shape, low, high, dtype=None, name=None, seed=None):
    rng = np.random.RandomState(_seed(seed))
    return variable(rng.uniform(low, high, size=shape), dtype or _floatx(), name)


def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):
    rng = np.random.RandomState(_seed(seed))
    return variable(rng.normal(mean, scale, size=shape), dtype or _floatx(), name)


def _random(shape, draw, dtype, seed):
    return graph.random(_shape_vector(shape), draw, np.dtype(dtype or _floatx()), _seed(seed))


def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return _random(shape, lambda rng, s: rng.normal(mean, stddev, s), dtype, seed)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    return _random(shape, lambda rng, s: rng.uniform(minval, maxval, s), dtype, seed)


def random_binomial(shape, p=0.0, dtype=None, seed=None):
    return _random(shape, lambda rng, s: rng.random(s) < p, dtype, seed)


def _truncated(rng, shape, mean, stddev):
    # Normal values; those more than two deviations from the mean are drawn again.
    out = rng.normal(0.0, 1.0, shape)
    bad = np.abs(out) > 2
    while bad.any():
        out[bad] = rng.normal(0.0, 1.0, int(bad.sum()))
        bad = np.abs(out) > 2
    return mean + stddev * out


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return _random(shape, lambda rng, s: _truncated(rng, s, mean, stddev), dtype, seed)


# --- values ------------------------------------------------------------------------------------


def eval(x):
    if isinstance(x, Variable) and not hasattr(x, "_keras_update"):
        return x.get_value()
    if not isinstance(x, Tensor):
        return np.asarray(x)
    return function([], [x])([])[0]


def get_value(x):
    return eval(x)


def batch_get_value(ops):
    return [get_value(x) for x in ops]


def set_value(x, value):
    x.set_value(np.asarray(value, dtype=x.dtype).reshape(x.shape))


def batch_set_value(tuples):
    for x, value in tuples:
        set_value(x, value)


# --- updates -----------------------------------------------------------------------------------


def update(x, new_x):
    """An update op: its value is `new_x`; a `function` given it (as an update or an output)
    writes `new_x` into `x`, and `eval` of it does too."""
    if not isinstance(x, Variable):
        raise TypeError(f"update: the target must be a variable; got {x!r}")
    new_x = graph.cast(new_x, x.dtype)
    op = graph.intrinsic("ident", new_x)
    op._keras_update = (x, new_x)
    return op


def update_add(x, increment):
    return update(x, x + increment)


def update_sub(x, decrement):
    return update(x, x - decrement)


def moving_average_update(x, value, momentum):
    return update(x, x - (x - graph.cast(value, x.dtype)) * (1.0 - momentum))


# Each entry maps id(variable) -> (variable, new value) for the updates that reads made inside
# the innermost control_dependencies scope come after.
_after_updates = []


def _tag_node(node):
    if _after_updates and _after_updates[-1]:
        node._keras_after = _after_updates[-1]


graph.node_observers.append(_tag_node)


def _flatten(xs):
    if xs is None:
        return []
    if isinstance(xs, (list, tuple)):
        return [y for x in xs for y in _flatten(x)]
    return [xs]


@contextlib.contextmanager
def control_dependencies(control_inputs):
    after = dict(_after_updates[-1]) if _after_updates else {}
    for op in _flatten(control_inputs):
        if isinstance(op, Tensor):
            after.update(getattr(op.node, "_keras_after", {}))
            if hasattr(op, "_keras_update"):
                var, new = op._keras_update
                after[id(var)] = (var, new)
    _after_updates.append(after)
    try:
        yield
    finally:
        _after_updates.pop()


def _topological(tensors):
    """The nodes that `tensors` depend on, each after its inputs (iterative: graphs are deep).
    Reads made after updates depend on the updates' new values too."""
    order, seen = [], set()
    stack = [(t.node, False) for t in tensors]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        deps = [i.node for i in node.inputs]
        after = getattr(node, "_keras_after", None)
        if after:
            deps += [after[id(i)][1].node for i in node.inputs if id(i) in after]
        stack.extend((d, False) for d in deps if id(d) not in seen)
    return order


def _read_after_updates(tensors):
    """`tensors` with the variable reads made inside control_dependencies scopes replaced by the
    updated values (the nodes that depend on such reads are copied)."""
    order = _topological(tensors)
    if not any(getattr(n, "_keras_after", None) for n in order):
        return tensors
    done = {}  # id(node) -> its copy, where it changed

    def rewritten(t):
        node = done.get(id(t.node))
        return t if node is None else Tensor(node, t.index, t.dtype, t.shape, t.name)

    for node in order:
        after = getattr(node, "_keras_after", None) or {}
        inputs = [rewritten(after[id(i)][1]) if id(i) in after else rewritten(i)
                  for i in node.inputs]
        if any(a is not b for a, b in zip(inputs, node.inputs)):
            clone = copy.copy(node)
            clone.inputs = inputs
            done[id(node)] = clone
    return [rewritten(t) for t in tensors]


# --- functions ---------------------------------------------------------------------------------


class Function:
    """`function(inputs, outputs, updates)`: called with a list of numpy arrays, one per input,
    returns a list of numpy arrays, one per output, and applies the updates (given as
    `(variable, new_value)` pairs or as ops from `update`). Compiled once per set of input
    shapes (a smaller last batch compiles once more)."""

    def __init__(self, inputs, outputs, updates=None, name=None):
        self.inputs = list(inputs)
        single = isinstance(outputs, Tensor)
        outputs = [outputs] if single else list(outputs)
        self._single = False
        pairs = {}
        for u in _update_list(updates) + [o for o in outputs if hasattr(o, "_keras_update")]:
            var, new = _update_pair(u)
            pairs[id(var)] = (var, new)  # a variable updated twice keeps the last update
        pairs = list(pairs.values())
        outs = [graph.as_tensor(o) for o in outputs]
        news = _read_after_updates(outs + [new for _, new in pairs])
        outs, pairs = news[:len(outs)], [(v, n) for (v, _), n in zip(pairs, news[len(outs):])]
        nodes = _topological(outs + [n for _, n in pairs])
        self._prints = [n for n in nodes if hasattr(n, "_keras_print")]
        self._hidden = []
        fed = {id(x.node) for x in self.inputs}
        phase = _phase["placeholder"]
        # Fed whether or not the graph shows it: a deferred subgraph (an RNN over sequences of
        # any length) may read it only once it is built.
        if phase is not None and id(phase.node) not in fed:
            self._hidden.append((phase, np.asarray(False)))
        self._count = len(outs)
        self._fn = graph.Function(self.inputs + [x for x, _ in self._hidden],
                                  outs + [n.inputs[0] for n in self._prints], pairs)

    def __call__(self, inputs):
        if isinstance(inputs, dict):
            inputs = [inputs[x] for x in self.inputs]
        values = [_fed(x, v) for x, v in zip(self.inputs, inputs)]
        results = self._fn(values + [v for _, v in self._hidden])
        for node, value in zip(self._prints, results[self._count:]):
            print(node._keras_print, value)
        # 0-d results as numpy scalars, as TensorFlow's session gives them.
        return [r[()] if np.ndim(r) == 0 else r for r in results[:self._count]]


def _fed(x, value):
    """A value fed to placeholder `x`, as an array of booleans, integers or floats: numpy would
    cast complex numbers to real ones silently, and object or string arrays fail deep inside."""
    if hasattr(value, "toarray") and hasattr(value, "tocoo"):  # a scipy sparse matrix
        value = value.toarray()
    a = np.asarray(value)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"input {x.name} ({x.dtype}) cannot take an array of dtype {a.dtype}: "
                        "feed booleans, integers or floats")
    return a


def _update_list(updates):
    """Updates as a flat list; (variable, value) pairs stay pairs."""
    out = []
    for u in updates or []:
        if isinstance(u, (tuple, list)) and not (len(u) == 2 and isinstance(u[0], Variable)):
            out.extend(_update_list(u))
        else:
            out.append(u)
    return out


def _update_pair(u):
    if isinstance(u, (tuple, list)) and len(u) == 2:
        var, new = u
        if not isinstance(var, Variable):
            raise TypeError(f"an update's target must be a variable; got {var!r}")
        return var, graph.cast(new, var.dtype)
    if isinstance(u, Tensor) and hasattr(u, "_keras_update"):
        return u._keras_update
    raise TypeError(f"an update must be a (variable, new value) pair or an update op; got {u!r}")


def function(inputs, outputs, updates=None, **kwargs):
    unknown = set(kwargs) - {"name"}
    if unknown:
        raise ValueError(f"Invalid argument(s) {sorted(unknown)} passed to K.function with the "
                         "Tessera backend")
    return Function(inputs, outputs, updates, kwargs.get("name"))


# --- learning phase, uids, scopes --------------------------------------------------------------

_phase = {"value": None, "placeholder": None}


def learning_phase():
    """0 or 1 when set with set_learning_phase; else a bool placeholder, fed by Keras (a
    function that does not take it runs in the test phase)."""
    if _phase["value"] is not None:
        return _phase["value"]
    if _phase["placeholder"] is None:
        ph = graph.placeholder("bool", (), "keras_learning_phase")
        ph._is_placeholder = True
        _phase["placeholder"] = _keras_tensor(ph)
    return _phase["placeholder"]


def set_learning_phase(value):
    if value not in {0, 1}:
        raise ValueError("Expected learning phase to be 0 or 1.")
    _phase["value"] = int(value)


_uids = {}


def get_uid(prefix=""):
    _uids[prefix] = _uids.get(prefix, 0) + 1
    return _uids[prefix]


def reset_uids():
    _uids.clear()


def clear_session():
    """Forgets the uids and the learning phase. (The graph's static-shape probes hold tensors
    weakly: a model that is no longer referenced is freed with its variables.)"""
    reset_uids()
    _phase["value"] = _phase["placeholder"] = None


_manual_init = {"value": False}


def manual_variable_initialization(value):
    # Variables hold their initial values from creation on, on the device: nothing to defer.
    _manual_init["value"] = bool(value)


_scopes = []


@contextlib.contextmanager
def name_scope(name):
    _scopes.append(str(name))
    try:
        yield "/".join(_scopes)
    finally:
        _scopes.pop()


def _scoped(name):
    return "/".join(_scopes + [name]) if name and _scopes else name


def print_tensor(x, message=""):
    """`x`, printed with `message` each time a function that computes it runs."""
    y = graph.intrinsic("ident", x)
    y.node._keras_print = message
    return y


# float dtype -> (mantissa bits, least and greatest binary exponent)
_FLOAT_BITS = {"float32": (24, -150, 127), "float64": (53, -1080, 1023)}


def _stop(x):
    x = graph.as_tensor(x)
    if not x.dtype.startswith("float"):
        return graph.intrinsic("ident", x)
    if x.dtype == "float16":  # exact in float32, whose powers of two it needs
        return graph.cast(_stop(graph.cast(x, "float32")), "float16")
    # The graph has no node that autodiff leaves alone, but round() is one whose derivative is
    # zero. x is scaled by a power of two s that makes x * s an integer (|x * s| >= 2**(p-1) for
    # p mantissa bits; an exponent estimate off by one still gives one): x * s is exact,
    # round() keeps it, and dividing by s gives x back bit for bit. s is applied in two halves
    # so that neither overflows for the smallest x.
    bits, lo, hi = _FLOAT_BITS[x.dtype]
    e = graph.intrinsic("floor", graph.intrinsic("log", graph.intrinsic("abs", x)) /
                        float(np.log(2)))
    k = bits - graph.intrinsic("min", graph.intrinsic("max", e, float(lo)), float(hi))
    k1 = graph.intrinsic("floor", k * 0.5)
    s1, s2 = graph.intrinsic("pow", 2.0, k1), graph.intrinsic("pow", 2.0, k - k1)
    return graph.intrinsic("round", x * s1 * s2) / s2 / s1


def stop_gradient(variables):
    if isinstance(variables, (list, tuple)):
        return [stop_gradient(v) for v in variables]
    return _stop(variables)
