"""Tessera: a portable tensor compiler for Tile programs.

Eager calls on numpy arrays:

    import numpy as np, tessera
    y = tessera.op("relu", [np.array([-1.0, 2.0], np.float32)])
    out = tessera.run("function (A[N]) -> (B) { B = exp(A); }", {"A": x})

A graph, compiled once per set of input shapes, with variables that stay on the device:

    x = tessera.placeholder("float32", (None, 3))
    w = tessera.Variable(np.ones((3, 2), np.float32))
    loss = tessera.ops.sum(tessera.ops.matmul(x, w))
    (dw,) = tessera.gradients(loss, [w])
    step = tessera.Function([x], [loss], updates=[(w, w - 0.1 * dw)])
    step([np.ones((4, 3), np.float32)])
"""
from . import ops  # noqa: F401
from ._native import (  # noqa: F401
    Device, DeviceTensor, OpError, TileError, __version__, default_device, devices, grad,
    load_op_library, op, op_grad, op_names, run)
from .graph import (  # noqa: F401
    Function, Tensor, TileOp, Variable, as_tensor, cast, compile_stats, constant, deferred,
    get_device, getitem, gradients, intrinsic, pack, placeholder, random, reshape,
    set_compile_options, set_device, shape, tuning_stats)
