"""The fuzzer's model of a Tile program: plain dataclasses that the generator builds, the reducer
rewrites and `text()` prints. Sizes are concrete; dimension names are only printed."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np


@dataclass
class Poly:
    """An affine index polynomial: sum of coeff * var, plus const."""
    coeffs: dict  # var -> Fraction
    const: int = 0

    def vars(self):
        return [v for v, c in self.coeffs.items() if c != 0]

    def text(self):
        parts = []
        for v, c in self.coeffs.items():
            if c == 0:
                continue
            mag = abs(c)
            term = v if mag == 1 else (f"{mag.numerator}*{v}" if mag.denominator == 1 else
                                       (f"{v}/{mag.denominator}" if mag.numerator == 1 else
                                        f"{mag.numerator}*{v}/{mag.denominator}"))
            parts.append(("- " if c < 0 else "+ ") + term)
        if self.const or not parts:
            parts.append(("- " if self.const < 0 else "+ ") + str(abs(self.const)))
        s = " ".join(parts)
        return s[2:] if s.startswith("+ ") else "-" + s[2:]


@dataclass
class Expr:
    """An elementwise expression: op is 'ref' (name), 'lit' (value), an infix operator, 'cond',
    or a function name (exp, max, bit_and, as_int, ...); casts keep their bit width in `bits`."""
    op: str
    args: list = field(default_factory=list)
    name: str = ""
    value: object = None
    bits: int = 0

    INFIX = {"+", "-", "*", "/", "==", "!=", "<", ">", "<=", ">=", "<<", ">>", "&", "|", "^"}

    def text(self):
        if self.op == "ref":
            return self.name
        if self.op == "lit":
            return repr(float(self.value)) if isinstance(self.value, float) else str(int(self.value))
        a = [x.text() for x in self.args]
        if self.op in self.INFIX:
            return f"({a[0]} {self.op} {a[1]})"
        if self.op == "?:":
            return f"({a[0]} ? {a[1]} : {a[2]})"
        if self.op == "~":
            return f"(~{a[0]})"
        if self.op in ("as_int", "as_uint", "as_float"):
            return f"{self.op}({a[0]}, {self.bits})"
        return f"{self.op}({', '.join(a)})"

    def refs(self):
        if self.op == "ref":
            return {self.name}
        out = set()
        for a in self.args:
            out |= a.refs()
        return out

    def nodes(self):
        yield self
        for a in self.args:
            yield from a.nodes()


@dataclass
class Elementwise:
    name: str
    expr: Expr

    def refs(self):
        return self.expr.refs()

    def text(self):
        return f"{self.name} = {self.expr.text()};"


@dataclass
class Contraction:
    name: str
    out_idx: list  # Poly per output dim
    out_sizes: list  # int per output dim
    agg: str  # + * > < =
    comb: str  # '' (one operand), '*', '+', '==', '?' (A == B ? C)
    operands: list  # [(tensor name, [Poly, ...]), ...]
    constraints: list = field(default_factory=list)  # [(Poly, bound int)]
    default: str = ""
    size_names: list = field(default_factory=list)  # per output dim: '' or a printed size expression

    def refs(self):
        return {t for t, _ in self.operands} | ({self.default} if self.default else set())

    def vars(self):
        vs = []
        for p in self.out_idx + [p for _, ps in self.operands for p in ps] + [p for p, _ in self.constraints]:
            for v in p.vars():
                if v not in vs:
                    vs.append(v)
        return vs

    def text(self):
        def access(t, ps):
            return f"{t}[{', '.join(p.text() for p in ps)}]"
        sizes = [(self.size_names[i] if i < len(self.size_names) and self.size_names[i] else str(s))
                 for i, s in enumerate(self.out_sizes)]
        if self.out_idx:
            lhs = f"{self.name}[{', '.join(p.text() for p in self.out_idx)} : {', '.join(sizes)}]"
        else:
            lhs = f"{self.name}[]"
        ops = [access(t, ps) for t, ps in self.operands]
        if self.comb == "":
            rhs = ops[0]
        elif self.comb == "?":
            rhs = f"{ops[0]} == {ops[1]} ? {ops[2]}"
        else:
            rhs = f" {self.comb} ".join(ops)
        s = f"{lhs} = {self.agg}({rhs})"
        for p, b in self.constraints:
            s += f", {p.text()} < {b}"
        if self.default:
            s += f" default {self.default}"
        return s + ";"


@dataclass
class Input:
    name: str
    dtype: str
    values: np.ndarray
    dim_names: list

    @property
    def shape(self):
        return tuple(self.values.shape)


@dataclass
class Program:
    inputs: list  # [Input]
    stmts: list  # [Elementwise | Contraction]
    outputs: list  # [name]

    def text(self):
        sig = ", ".join(f"{i.name}[{', '.join(i.dim_names)}]" if i.dim_names else f"{i.name}[]"
                        for i in self.inputs)
        body = "\n".join("  " + s.text() for s in self.stmts)
        return f"function ({sig}) -> ({', '.join(self.outputs)}) {{\n{body}\n}}\n"

    def input_arrays(self):
        return {i.name: i.values for i in self.inputs}

    def copy(self):
        return copy.deepcopy(self)

    def prune(self):
        """Drops statements and inputs that no output needs (inputs keep at least one)."""
        live = set(self.outputs)
        kept = []
        for s in reversed(self.stmts):
            if s.name in live:
                kept.append(s)
                live |= s.refs()
        self.stmts = kept[::-1]
        sizes = " ".join(n for s in self.stmts if isinstance(s, Contraction) for n in s.size_names)
        ins = [i for i in self.inputs if i.name in live or any(d in sizes.split() for d in i.dim_names)]
        self.inputs = ins or self.inputs[:1]
        return self


def poly_values(p, grid):
    """Evaluates a Poly over a dict var -> int array; returns (values, is_integer) arrays."""
    den = 1
    for c in p.coeffs.values():
        den = den * Fraction(c).denominator // np.gcd(den, Fraction(c).denominator)
    num = np.full(next(iter(grid.values())).shape if grid else (), p.const * den, dtype=np.int64)
    for v, c in p.coeffs.items():
        if c:
            num = num + grid[v] * int(Fraction(c) * den)
    return num // den, num % den == 0


def infer_shapes(program):
    """Each tensor's shape, or None for a program whose elementwise shapes do not broadcast."""
    shapes = {i.name: i.shape for i in program.inputs}
    for s in program.stmts:
        if isinstance(s, Contraction):
            shapes[s.name] = tuple(s.out_sizes)
            continue
        try:
            shapes[s.name] = tuple(np.broadcast_shapes(*[shapes[n] for n in s.refs()])) if s.refs() else ()
        except (ValueError, KeyError):
            return None
    return shapes
