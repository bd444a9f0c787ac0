"""Tessera: a portable tensor compiler for Tile programs.

    import numpy as np, tessera
    y = tessera.op("relu", [np.array([-1.0, 2.0], np.float32)])
    out = tessera.run("function (A[N]) -> (B) { B = exp(A); }", {"A": x})
"""
from ._native import OpError, TileError, __version__, devices, grad, op, op_grad, op_names, run  # noqa: F401
