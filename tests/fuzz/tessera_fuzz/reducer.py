"""Delta debugging of a failing program: greedy passes that each try smaller variants (fewer
outputs and statements, simpler expressions and index maps, smaller sizes, plainer input values)
and keep a variant when the same finding (device, kind) persists, until nothing shrinks or the
budget is spent."""
import time
from fractions import Fraction

import numpy as np

from .oracle import check
from .generator import valid_points
from .program import Contraction, Elementwise, Poly, infer_shapes


class Reducer:
    def __init__(self, runner, finding, budget_s=120, max_tests=3000):
        self.runner, self.target = runner, finding.signature()
        self.device = finding.device
        self.deadline = time.monotonic() + budget_s
        self.tests_left = max_tests
        self.tests = 0

    def still_fails(self, p):
        if time.monotonic() > self.deadline or self.tests_left <= 0:
            return False
        self.tests_left -= 1
        self.tests += 1
        p.prune()
        if not p.stmts or not bounded(p):
            return False
        devices = [] if self.device == "interp" else [self.device]
        return any(f.signature() == self.target for f in check(self.runner, p.text(), p.input_arrays(), devices))

    def reduce(self, p):
        p = p.copy().prune()
        changed = True
        while changed and time.monotonic() < self.deadline and self.tests_left > 0:
            changed = False
            for candidates in (self.fewer_outputs, self.simpler_statements, self.smaller_sizes,
                               self.plainer_values, self.simpler_indices):
                for cand in candidates(p):
                    if self.still_fails(cand):
                        p, changed = cand, True
                        break
                if changed:
                    break
        return p

    # Each pass yields candidates built from `p`; the first that still fails is kept.
    def fewer_outputs(self, p):
        names = [s.name for s in p.stmts]
        for n in names:  # one statement's value alone, earliest first
            if p.outputs != [n]:
                c = p.copy()
                c.outputs = [n]
                yield c
        for n in p.outputs:
            if len(p.outputs) > 1:
                c = p.copy()
                c.outputs = [o for o in p.outputs if o != n]
                yield c

    def simpler_statements(self, p):
        for si, s in enumerate(p.stmts):
            if isinstance(s, Elementwise):
                nodes = list(s.expr.nodes())
                for ni, node in enumerate(nodes):
                    for ki in range(len(node.args)):
                        c = p.copy()
                        cn = list(c.stmts[si].expr.nodes())
                        kid = cn[ni].args[ki]
                        if ni == 0:
                            c.stmts[si].expr = kid
                        else:
                            _replace(c.stmts[si].expr, cn[ni], kid)
                        yield c
                continue
            if s.default:
                c = p.copy()
                c.stmts[si].default = ""
                yield c
            for k in range(len(s.constraints)):
                c = p.copy()
                del c.stmts[si].constraints[k]
                yield c
            if len(s.operands) > 1:
                for k in range(len(s.operands)):
                    c = p.copy()
                    c.stmts[si].operands = [s.operands[k]] if s.comb != "?" else [s.operands[2]]
                    c.stmts[si].comb = ""
                    yield c
            for agg in ("=", "+", ">"):
                if s.agg != agg and (agg != "+" or s.agg == "*"):
                    c = p.copy()
                    c.stmts[si].agg = agg
                    yield c

    def smaller_sizes(self, p):
        for ii, inp in enumerate(p.inputs):
            for d, n in enumerate(inp.shape):
                for new in sorted({1, n // 2, n - 1}):
                    if 0 <= new < n:
                        c = p.copy()
                        sl = tuple(slice(0, new) if k == d else slice(None) for k in range(len(inp.shape)))
                        c.inputs[ii].values = np.ascontiguousarray(inp.values[sl])
                        yield c
        for si, s in enumerate(p.stmts):
            if isinstance(s, Contraction):
                for d, n in enumerate(s.out_sizes):
                    for new in sorted({1, n - 1}):
                        if 0 <= new < n:
                            c = p.copy()
                            c.stmts[si].out_sizes[d] = new
                            if d < len(s.size_names):
                                c.stmts[si].size_names[d] = ""
                            yield c

    def plainer_values(self, p):
        for ii, inp in enumerate(p.inputs):
            v = inp.values
            if v.size == 0:
                continue
            for const in (1, 0, 2):
                if not np.all(v == const):
                    c = p.copy()
                    c.inputs[ii].values = np.full(v.shape, const, dtype=v.dtype)
                    yield c
            flat = v.ravel()
            n = flat.size
            chunk = n // 2
            while chunk >= 1:  # replace chunks by 1, coarse to fine
                for start in range(0, n, chunk):
                    seg = flat[start:start + chunk]
                    if np.all(seg == 1):
                        continue
                    c = p.copy()
                    f = c.inputs[ii].values.ravel().copy()
                    f[start:start + chunk] = 1
                    c.inputs[ii].values = f.reshape(v.shape)
                    yield c
                chunk //= 2

    def simpler_indices(self, p):
        for si, s in enumerate(p.stmts):
            if not isinstance(s, Contraction):
                continue
            polys = [("out", k) for k in range(len(s.out_idx))] + \
                    [("op", o, k) for o in range(len(s.operands)) for k in range(len(s.operands[o][1]))]
            for where in polys:
                poly = _poly(s, where)
                options = []
                if poly.const:
                    options.append(Poly(dict(poly.coeffs), 0))
                for v, coef in poly.coeffs.items():
                    if coef != 1 and coef != 0:
                        options.append(Poly({**poly.coeffs, v: Fraction(1)}, poly.const))
                    if len(poly.vars()) > 1:
                        options.append(Poly({w: c for w, c in poly.coeffs.items() if w != v}, poly.const))
                for o in options:
                    c = p.copy()
                    _set_poly(c.stmts[si], where, o)
                    yield c


def bounded(p):
    """Whether every contraction's index set is finite, so that bind must accept it."""
    shapes = infer_shapes(p)
    if shapes is None:
        return True  # let the devices judge
    for s in p.stmts:
        if isinstance(s, Contraction) and s.vars():
            if any(t not in shapes for t, _ in s.operands):
                return True
            if valid_points(s, {t: shapes[t] for t, _ in s.operands}) is None:
                return False
    return True


def _replace(root, old, new):
    for i, a in enumerate(root.args):
        if a is old:
            root.args[i] = new
            return True
        if _replace(a, old, new):
            return True
    return False


def _poly(s, where):
    return s.out_idx[where[1]] if where[0] == "out" else s.operands[where[1]][1][where[2]]


def _set_poly(s, where, poly):
    if where[0] == "out":
        s.out_idx[where[1]] = poly
    else:
        s.operands[where[1]][1][where[2]] = poly
