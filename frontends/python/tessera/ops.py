"""Every op of the op library as a function on graph tensors: `tessera.ops.conv2d(x, k,
strides=[2, 2])`. Attributes are keyword arguments; an op with several outputs returns a list."""
import functools

from . import _native, graph


def _make(name):
    @functools.wraps(graph.op)
    def call(*inputs, **attrs):
        return graph.op(name, *inputs, **attrs)
    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"The op library's `{name}` on graph tensors (tessera.op_names() lists all)."
    return call


def __getattr__(name):
    if name in _native.op_names():
        fn = _make(name)
        globals()[name] = fn
        return fn
    raise AttributeError(f"tessera.ops has no op '{name}'; tessera.op_names() lists them")


def __dir__():
    return sorted(_native.op_names())
