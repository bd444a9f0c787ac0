"""Random valid Tile programs with their inputs. The generator tracks, per tensor, its shape and
dtype (so every program binds) and a rough value profile: `special` (may hold NaN, Inf, huge or
denormal values, or values whose result depends on evaluation order once summed) and `mag` (a bound
on |value| for floats). Special values flow only through order-independent operations: elementwise
ops and `=`, `>`, `<` contractions; `+` and `*` contractions take only tame floats and any integers
(integer arithmetic wraps exactly, so order never matters)."""
import math
import random
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .program import Contraction, Elementwise, Expr, Input, Poly, Program, poly_values
from .types import DTYPES, FLOATS, SIGNED, UNSIGNED, bits, expr_type, is_float, is_int

# Above these magnitudes a float tensor counts as special: sums of it may overflow or lose bits
# depending on order.
TAME = {"float16": 200.0, "float32": 1e6, "float64": 1e12}
VARS = ["i", "j", "k", "l", "m"]
SIZES = [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8, 9, 13, 16]


@dataclass
class Info:
    shape: tuple
    dtype: str
    special: bool
    mag: float  # floats: bound on |value| (inf when unknown); ints: unused
    terms: int  # reduction terms accumulated along the way (for the tolerance)


def special_floats(rng, dtype, n):
    fi = np.finfo(dtype)
    pool = [np.nan, np.inf, -np.inf, 0.0, -0.0, float(fi.max), -float(fi.max), float(fi.max) / 3,
            float(fi.smallest_subnormal), -float(fi.smallest_subnormal) * 3, float(fi.tiny) / 2,
            float(fi.tiny), 1.0, -1.0, 1e-30, 1e30]
    out = rng.uniform(-2, 2, size=n).astype(dtype)
    with np.errstate(over="ignore"):
        return _sprinkle(rng, out, pool, dtype)


def _sprinkle(rng, out, pool, dtype):
    n = out.size
    for i in range(n):
        if rng.random() < 0.5:
            out[i] = np.array(pool[rng.integers(len(pool))]).astype(dtype)
    return out


def make_values(rng, dtype, shape, profile):
    n = int(np.prod(shape)) if shape else 1
    if dtype == "bool":
        v = rng.random(n) < 0.5
    elif is_float(dtype):
        if profile == "special":
            v = special_floats(rng, dtype, n)
        elif profile == "positive":
            v = rng.uniform(0.25, 2.0, size=n).astype(dtype)
        else:
            v = rng.uniform(-2.0, 2.0, size=n).astype(dtype)
    else:
        info = np.iinfo(dtype)
        if profile == "wide":
            v = rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)
            edges = np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1 if info.min else 2],
                             dtype=dtype)
            mask = rng.random(n) < 0.3
            v[mask] = edges[rng.integers(len(edges), size=int(mask.sum()))]
        else:
            lo = 0 if dtype in UNSIGNED else -8
            v = rng.integers(lo, 9, size=n).astype(dtype)
    return np.asarray(v).reshape(shape)


class Generator:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.np = np.random.default_rng(seed)
        self.inputs = []
        self.stmts = []
        self.info = {}
        self.n_tmp = 0

    # ---- inputs -------------------------------------------------------------------------------
    def pick_dtype(self):
        return self.r.choices(DTYPES, weights=[2, 6, 2, 1, 1, 3, 2, 1, 1, 1, 1, 2])[0]

    def pick_shape(self, max_rank=3):
        rank = self.r.choice([0, 1, 1, 2, 2, 2, 3][: 2 + 2 * max_rank - (max_rank == 3)])
        return tuple(self.r.choice(SIZES) for _ in range(min(rank, max_rank)))

    def new_input(self, dtype=None, shape=None):
        name = "ABCDEFGHJKLMNPQRSUVWXYZ"[len(self.inputs)] if len(self.inputs) < 23 else f"X{len(self.inputs)}"
        dtype = dtype or self.pick_dtype()
        shape = self.pick_shape() if shape is None else tuple(shape)
        if is_float(dtype):
            profile = self.r.choices(["normal", "positive", "special"], weights=[5, 2, 2])[0]
        elif is_int(dtype):
            profile = self.r.choices(["small", "wide"], weights=[3, 1])[0]
        else:
            profile = "bool"
        values = make_values(self.np, dtype, shape, profile)
        self.inputs.append(Input(name, dtype, values, [f"{name}{d}" for d in range(len(shape))]))
        self.info[name] = Info(shape, dtype, profile == "special", 2.0, 1)
        return name

    def tensors(self, pred=lambda n, i: True):
        return [n for n, i in self.info.items() if pred(n, i)]

    def pick_tensor(self, pred=lambda n, i: True, new_prob=0.15, **new_kw):
        pool = self.tensors(pred)
        if pool and self.r.random() > new_prob:
            # prefer recent tensors so that statements chain
            return pool[-1] if self.r.random() < 0.4 else self.r.choice(pool)
        return self.new_input(**new_kw)

    # ---- elementwise ----------------------------------------------------------------------------
    def leaf(self, shape):
        def fits(n, i):
            s = i.shape
            return len(s) <= len(shape) and all(a == b or a == 1 for a, b in zip(s[::-1], shape[::-1]))
        pool = self.tensors(fits)
        if pool and self.r.random() < 0.8:
            n = pool[-1] if self.r.random() < 0.3 else self.r.choice(pool)
            i = self.info[n]
            return Expr("ref", name=n), (i.dtype, False), i.special, i.mag
        if self.r.random() < 0.5:
            v = self.r.choice([0, 1, 2, 3, -1, 7, 100])
            return Expr("lit", value=v), ("int32", True), False, abs(v)
        v = self.r.choice([0.5, 1.0, -1.5, 2.0, 0.0, 1e-3, 3.25])
        return Expr("lit", value=v), ("float32", True), False, abs(v)

    def expr(self, shape, depth):
        if depth <= 0 or self.r.random() < 0.25:
            return self.leaf(shape)
        arity = self.r.choices([1, 2, 3], weights=[4, 5, 1])[0]
        kids = [self.expr(shape, depth - 1) for _ in range(arity)]
        env = {n: i.dtype for n, i in self.info.items()}
        if arity == 1:
            return self.unary(kids[0], env)
        if arity == 2:
            return self.binary(kids[0], kids[1], env)
        c, a, b = kids
        cond = c[0] if c[1][0] == "bool" or self.r.random() < 0.3 else Expr(">", [c[0], Expr("lit", value=0)])
        op = self.r.choice(["?:", "cond"])
        e = Expr(op, [cond, a[0], b[0]])
        return e, expr_type(e, env), a[2] or b[2], max(a[3], b[3])

    def unary(self, k, env):
        e, (dt, weak), sp, mag = k
        r = self.r
        if is_float(dt):
            op = r.choice(["neg", "abs", "floor", "ceil", "round", "relu", "exp", "log", "sqrt", "tanh",
                           "sin", "cos", "sigmoid", "erf", "atan", "cast", "cast", "cast", "tan", "asin",
                           "sinh"])
        elif dt == "bool":
            op = r.choice(["cast", "~", "bit_not", "as_bool", "neg_cmp"])
        else:
            op = r.choice(["neg", "abs", "relu", "~", "bit_not", "cast", "cast", "exp", "sqrt", "as_bool"])
        if op == "neg_cmp":
            out = Expr("==", [e, Expr("lit", value=0)])
            return out, ("bool", False), False, 1
        if op == "cast":
            kind = r.choice(["as_float", "as_int", "as_uint", "as_bool"])
            if kind == "as_bool":
                return Expr("as_bool", [e]), ("bool", False), False, 1
            nbits = r.choice([16, 32, 64]) if kind == "as_float" else r.choice([8, 16, 32, 64])
            arg = e
            if is_float(dt) and kind != "as_float":
                # float -> int outside the target's range is undefined on devices: keep in range
                lit = Expr("lit", value=0)
                inner = Expr("abs", [e]) if kind == "as_uint" else e
                arg = Expr("cond", [Expr("<", [Expr("abs", [e]), Expr("lit", value=100)]), inner, lit])
            out = Expr(kind, [arg], bits=nbits)
            odt = expr_type(out, env)[0]
            if is_float(odt):
                m = mag if is_float(dt) else (2.0 ** bits(dt) if not sp else math.inf)
                return out, (odt, False), sp or m > TAME[odt] or (is_int(dt) and m > 1e3), m
            return out, (odt, False), False, 1
        out = Expr(op, [e])
        odt = expr_type(out, env)
        if op in ("exp", "sinh"):
            m = math.exp(mag) if mag < 30 else math.inf
            return out, odt, sp or m > TAME[odt[0]], m
        if op in ("log", "sqrt", "tan", "asin"):
            return out, odt, True, math.inf
        if op in ("tanh", "sin", "cos", "sigmoid", "erf", "atan"):
            return out, odt, sp, 1.6
        return out, odt, sp, mag + 1

    def binary(self, ka, kb, env):
        (a, ta, sa, ma), (b, tb, sb, mb) = ka, kb
        r = self.r
        floaty = is_float(ta[0]) or is_float(tb[0])
        ops = ["+", "-", "*", "/", "add", "sub", "mul", "max", "min", "div", "<", ">", "==", "!=",
               "<=", ">=", "cmp_lt", "cmp_ne"]
        if not floaty:
            ops += ["&", "|", "^", "<<", ">>", "bit_and", "bit_or", "bit_xor", "bit_left", "bit_right"] * 2
        if floaty:
            ops += ["pow"]
        op = r.choice(ops)
        out = Expr(op, [a, b])
        t = expr_type(out, env)
        sp = sa or sb
        if not is_float(t[0]):
            return out, t, False, 1
        if op in ("+", "-", "add", "sub"):
            m = ma + mb
        elif op in ("*", "mul"):
            m = ma * mb
        elif op in ("max", "min"):
            m = max(ma, mb)
        else:  # division, pow
            return out, t, True, math.inf
        return out, t, sp or m > TAME[t[0]] or (not is_float(ta[0]) and not ta[1]) or (
            not is_float(tb[0]) and not tb[1]), m

    def elementwise(self):
        main = self.pick_tensor(new_prob=0.1)
        shape = self.info[main].shape
        for _ in range(20):
            e, t, sp, mag = self.expr(shape, self.r.choice([1, 2, 2, 3, 4]))
            if not t[1] and (e.refs() or self.r.random() < 0.05):
                break
        else:
            return None
        # the result's shape is the broadcast of the leaves' shapes
        rank_shapes = [self.info[n].shape for n in e.refs()]
        out_shape = tuple(np.broadcast_shapes(*rank_shapes)) if rank_shapes else ()
        name = self.fresh()
        terms = max([self.info[n].terms for n in e.refs()] + [1])
        self.stmts.append(Elementwise(name, e))
        self.info[name] = Info(out_shape, t[0], sp, mag, terms)
        return name

    def fresh(self):
        self.n_tmp += 1
        return f"T{self.n_tmp}"

    # ---- contractions ---------------------------------------------------------------------------
    def poly_for(self, dim, vs, used):
        r = self.r
        def var():
            fresh = [v for v in vs if v not in used]
            v = fresh[0] if fresh and r.random() < 0.7 else r.choice(vs)
            used.add(v)
            return v
        form = r.choices(["var", "shift", "sum", "stride", "const", "rational", "diff"],
                         weights=[10, 2, 3, 2, 1, 1, 1])[0]
        if form == "const":
            return Poly({}, r.randrange(max(dim, 1)))
        v = var()
        if form == "var":
            return Poly({v: Fraction(1)})
        if form == "shift":
            return Poly({v: Fraction(1)}, r.choice([-2, -1, 1, 2]))
        if form == "rational":
            return Poly({v: Fraction(1, 2)})
        w = var()
        if w == v:
            return Poly({v: Fraction(1)}, r.choice([-1, 1]))
        if form == "sum":
            return Poly({v: Fraction(1), w: Fraction(1)}, r.choice([0, 0, -1, -2]))
        if form == "stride":
            return Poly({v: Fraction(r.choice([2, 3])), w: Fraction(1)}, r.choice([0, -1]))
        return Poly({v: Fraction(1), w: Fraction(-1)}, r.choice([0, 1, 2]))

    def contraction(self):
        r = self.r
        comb = r.choices(["", "*", "+", "==", "?"], weights=[5, 5, 2, 1, 1])[0]
        n_ops = {"": 1, "*": 2, "+": 2, "==": 2, "?": 3}[comb]
        operands = [self.pick_tensor(lambda n, i: len(i.shape) <= 3) for _ in range(n_ops)]
        vs = VARS[: r.choice([1, 2, 2, 3, 3, 4])]
        used = set()
        accesses = [[self.poly_for(d, vs, used) for d in self.info[t].shape] for t in operands]
        used_list = [v for v in vs if v in used]
        out_rank = r.choice([0, 1, 1, 2, 2, 3])
        out_idx = []
        cand = used_list[:]
        r.shuffle(cand)
        for _ in range(out_rank):
            if cand and r.random() < 0.85:
                v = cand.pop()
                form = r.choices(["var", "shift", "stride", "sum"], weights=[10, 2, 1, 1])[0]
                if form == "var":
                    out_idx.append(Poly({v: Fraction(1)}))
                elif form == "shift":
                    out_idx.append(Poly({v: Fraction(1)}, r.choice([1, 2])))
                elif form == "stride":
                    out_idx.append(Poly({v: Fraction(2)}, r.choice([0, 1])))
                else:
                    w = r.choice(used_list)
                    out_idx.append(Poly({v: Fraction(1), w: Fraction(1)}) if w != v else Poly({v: Fraction(1)}))
            else:
                out_idx.append(Poly({}, r.choice([0, 0, 1])))
        constraints = []
        for _ in range(r.choice([0, 0, 0, 1, 1, 2])):
            if not used_list:
                break
            v = r.choice(used_list)
            w = r.choice(used_list)
            p = Poly({v: Fraction(1)}) if v == w else Poly({v: Fraction(1), w: Fraction(r.choice([1, -1]))},
                                                          r.choice([0, 1, 2]))
            constraints.append((p, r.randrange(1, 8)))
        c = Contraction(self.fresh(), out_idx, [0] * len(out_idx), "+", comb,
                        list(zip(operands, accesses)), constraints)
        shapes = {t: self.info[t].shape for t in operands}
        pts = valid_points(c, shapes, ignore_output=True)
        if pts is None:
            return None
        out_vals = [poly_values(p, pts)[0] for p in out_idx]
        extent = max([d for sh in shapes.values() for d in sh] + [1])
        for d, vals in enumerate(out_vals):
            vals = vals[vals >= 0]
            natural = min(int(vals.max()) + 1, extent + 2) if vals.size else r.randrange(4)
            c.out_sizes[d] = max(0, natural + r.choice([0, 0, 0, 0, -1, 1, 2]))
            if r.random() < 0.1:
                c.out_sizes[d] = 0
        self.name_sizes(c)
        pts = valid_points(c, shapes)
        out_cells = np.stack([poly_values(p, pts)[0] for p in out_idx], -1) if out_idx else \
            np.zeros((next(iter(pts.values())).size if pts else 1, 0), dtype=np.int64)
        if not pts:
            out_cells = np.zeros((1, 0), dtype=np.int64)
        n_pts = out_cells.shape[0]
        _, counts = np.unique(out_cells, axis=0, return_counts=True) if n_pts else (None, np.array([0]))
        terms = int(counts.max()) if n_pts else 0
        unique = terms <= 1
        # types and value profiles of the operands
        infos = [self.info[t] for t in operands]
        if comb == "==":
            dtype = "bool"
        elif comb == "?":
            dtype = infos[2].dtype
        elif comb == "":
            dtype = infos[0].dtype
        else:
            dtype = expr_type(Expr(comb, [Expr("ref", name=operands[0]), Expr("ref", name=operands[1])]),
                              {t: i.dtype for t, i in zip(operands, infos)})[0]
        floats = is_float(dtype)
        value_infos = infos[2:] if comb == "?" else infos
        special = any(i.special for i in value_infos)
        mag = 1.0
        for i in value_infos:
            mag = (mag * i.mag) if comb == "*" else max(mag, i.mag) * (2 if comb == "+" else 1)
        if comb == "" or comb == "?":
            mag = value_infos[0].mag
        aggs = [">", "<"] + (["="] if unique else [])
        if not floats or (not special and mag * max(terms, 1) <= TAME[dtype]):
            aggs += ["+", "+", "+"]
            if not floats or mag ** max(terms, 1) <= TAME[dtype]:
                aggs.append("*")
        c.agg = r.choice(aggs)
        if c.agg == "+":
            mag *= max(terms, 1)
        elif c.agg == "*":
            mag = mag ** max(terms, 1)
        if r.random() < 0.15:
            shape = tuple(c.out_sizes)
            c.default = self.pick_tensor(lambda n, i: i.shape == shape and i.dtype == dtype, new_prob=0.3,
                                         dtype=dtype, shape=shape)
            d = self.info[c.default]
            if d.shape != shape or d.dtype != dtype:
                c.default = ""
            else:
                special = special or d.special
                mag = max(mag, d.mag)
        self.stmts.append(c)
        t = max([i.terms for i in infos] + [1]) * max(terms, 1)
        self.info[c.name] = Info(tuple(c.out_sizes), dtype, special if floats else False, mag, t)
        return c.name

    def name_sizes(self, c):
        c.size_names = []
        for s in c.out_sizes:
            text = ""
            if self.r.random() < 0.15:
                for inp in self.inputs:
                    for dn, dv in zip(inp.dim_names, inp.shape):
                        if 0 <= s - dv <= 2:
                            text = dn if s == dv else f"{dn} + {s - dv}"
            c.size_names.append(text)

    # ---- whole programs ---------------------------------------------------------------------------
    def program(self):
        for _ in range(self.r.choice([1, 1, 2, 3])):
            self.new_input()
        n = self.r.choice([1, 2, 3, 3, 4, 5, 6, 8])
        made = []
        for _ in range(n * 3):
            if len(made) >= n:
                break
            name = self.contraction() if self.r.random() < 0.5 else self.elementwise()
            if name:
                made.append(name)
        if not made:
            made.append(self.elementwise() or self.contraction())
        outs = [made[-1]] + [m for m in made[:-1] if self.r.random() < 0.3]
        prog = Program(self.inputs, self.stmts, sorted(outs, key=made.index)).prune()
        # the shapes the generator knows, for the report; sizes come from the inputs at run time
        return prog, {n: (i.dtype, i.shape, i.terms, i.mag) for n, i in self.info.items() if n in prog.outputs}


def valid_points(c, shapes, ignore_output=False):
    """The valid index points of a contraction as a dict var -> int array, by enumerating a box."""
    vs = c.vars()
    if not vs:
        return {}
    extent = max([d for s in shapes.values() for d in s] + c.out_sizes + [1])
    lo, hi = {}, {}
    for v in vs:
        lo[v], hi[v] = -2 * extent - 4, 3 * extent + 4
        for t, ps in c.operands:
            for p, d in zip(ps, shapes[t]):
                if p.vars() == [v]:
                    coef = p.coeffs[v]
                    a, b = sorted([(0 - p.const) / coef, (d - 1 - p.const) / coef])
                    lo[v], hi[v] = max(lo[v], math.floor(a)), min(hi[v], math.ceil(b))
    total = 1
    for v in vs:
        total *= max(0, hi[v] - lo[v] + 1)
    if total > 400_000:
        return None
    axes = np.meshgrid(*[np.arange(lo[v], hi[v] + 1, dtype=np.int64) for v in vs], indexing="ij")
    grid = {v: a.ravel() for v, a in zip(vs, axes)}
    ok = np.ones(total, dtype=bool)
    checks = [(p, d) for t, ps in c.operands for p, d in zip(ps, shapes[t])]
    if not ignore_output:
        checks += list(zip(c.out_idx, c.out_sizes))
    checks += c.constraints
    for p, d in checks:
        val, integral = poly_values(p, grid) if p.vars() else (np.full(total, p.const), np.ones(total, bool))
        ok &= integral & (val >= 0) & (val < d)
    # a valid point on the box's border means the index set may be unbounded (`A[i + j]` alone):
    # bind rightly rejects such a program, so the generator does not write it
    for v in vs:
        g = grid[v][ok]
        if g.size and ((g.min() == lo[v] and lo[v] == -2 * extent - 4) or (g.max() == hi[v] and hi[v] == 3 * extent + 4)):
            return None
    return {v: g[ok] for v, g in grid.items()}


def generate(seed):
    """One program with its inputs; the same seed gives the same program."""
    for attempt in range(50):
        g = Generator(seed * 1000 + attempt)
        try:
            prog, info = g.program()
        except TypeError:
            continue
        if prog.stmts:
            return prog, info
    raise RuntimeError(f"no program from seed {seed}")
