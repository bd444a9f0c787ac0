"""Tile's type rules as the fuzzer needs them (mirrors tile/DataType.cpp and tile/Bind.cpp): the
generator predicts each statement's dtype so that it only writes valid programs."""
FLOATS = ["float16", "float32", "float64"]
SIGNED = ["int8", "int16", "int32", "int64"]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]
DTYPES = FLOATS + SIGNED + UNSIGNED + ["bool"]

ARITH = {"+", "-", "*", "/", "add", "sub", "mul", "div", "max", "min"}
COMPARE = {"==", "!=", "<", ">", "<=", ">=", "cmp_eq", "cmp_ne", "cmp_lt", "cmp_gt", "cmp_le", "cmp_ge"}
BITWISE = {"&", "|", "^", "<<", ">>", "~", "bit_and", "bit_or", "bit_xor", "bit_not", "bit_left", "bit_right"}
FLOAT_MATH = {"exp", "log", "sqrt", "pow", "tanh", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
              "cosh", "erf", "sigmoid"}
SAME_TYPE = {"neg", "abs", "floor", "ceil", "round", "relu", "ident"}


def bits(dt):
    return 1 if dt == "bool" else int("".join(c for c in dt if c.isdigit()))


def is_float(dt):
    return dt in FLOATS


def is_int(dt):
    return dt in SIGNED or dt in UNSIGNED


def promote_strong(a, b):
    if a == b:
        return a
    if a == "bool":
        return b
    if b == "bool":
        return a
    if is_float(a) or is_float(b):
        if is_float(a) and is_float(b):
            return f"float{max(bits(a), bits(b))}"
        return a if is_float(a) else b
    if (a in SIGNED) == (b in SIGNED):
        return (a if bits(a) >= bits(b) else b)
    s, u = (a, b) if a in SIGNED else (b, a)
    return s if bits(s) > bits(u) else f"int{min(64, 2 * bits(u))}"


def promote(a, b):
    """a, b: (dtype, weak) pairs."""
    if a[1] and b[1]:
        return ("float32" if is_float(a[0]) or is_float(b[0]) else "int32", True)
    if a[1] != b[1]:
        strong, weak = (b, a) if a[1] else (a, b)
        if is_float(weak[0]) and not is_float(strong[0]):
            return ("float32", False)
        if strong[0] == "bool":
            return (weak[0], False)
        return strong
    return (promote_strong(a[0], b[0]), False)


def expr_type(e, env):
    """The (dtype, weak) of an Expr; env maps tensor names to dtypes."""
    if e.op == "ref":
        return (env[e.name], False)
    if e.op == "lit":
        return ("float32" if isinstance(e.value, float) else "int32", True)
    ts = [expr_type(a, env) for a in e.args]
    op = e.op
    if op in ("as_int", "as_uint", "as_float"):
        return ({"as_int": "int", "as_uint": "uint", "as_float": "float"}[op] + str(e.bits), False)
    if op == "as_bool":
        return ("bool", False)
    if op in COMPARE:
        return ("bool", False)
    if op in ARITH:
        return promote(ts[0], ts[1])
    if op in BITWISE:
        t = ts[0]
        for x in ts:
            if is_float(x[0]):
                raise TypeError(f"{op} of a float")
            t = promote(t, x)
        return t
    if op in ("?:", "cond"):
        return promote(ts[1], ts[2])
    if op in FLOAT_MATH:
        t = promote(ts[0], ts[1]) if len(ts) == 2 else ts[0]
        return t if is_float(t[0]) else ("float32", t[1])
    if op in SAME_TYPE:
        return ts[0]
    raise KeyError(op)
