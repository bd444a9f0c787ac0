"""Independent numpy references for tests/programs/*.tile, and how to generate their inputs.

REFERENCES[name](**inputs) returns {output name: expected array} for every output of the program.
Inputs are passed by name (`#`/`$` escapes are not part of a name). The references are written from
the semantics of DESIGN.md §3 with plain numpy (explicit loops where that is clearest), never from
Tessera's output. Float references compute in float64 and round once to the program's dtype.

INPUTS[name][input](rng, shape, dtype) overrides the default random data for one input, where a
program needs positive values, an integer range, indices in range or zeros in a divisor.
"""
import numpy as np


# ---- input generation ----------------------------------------------------------------------------

_INT_RANGES = {
    "int8": (-128, 128), "uint8": (0, 256), "int16": (-1000, 1000), "uint16": (0, 65536),
    "int32": (-1000, 1000), "uint32": (0, 2**32), "int64": (-2**40, 2**40), "uint64": (0, 2**40),
}


def default_input(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind == "f":
        return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
    lo, hi = _INT_RANGES[dtype.name]
    return rng.integers(lo, hi, size=shape, dtype=np.int64 if dtype.name != "uint64" else np.uint64).astype(dtype)


def uniform(lo, hi):
    return lambda rng, shape, dtype: rng.uniform(lo, hi, size=shape).astype(dtype)


def integers(lo, hi, zero_every=None):
    """Integers in [lo, hi); with zero_every=k every k-th element is 0 (divisors, as_bool)."""
    def make(rng, shape, dtype):
        a = rng.integers(lo, hi, size=shape, dtype=np.int64)
        if zero_every:
            a.reshape(-1)[::zero_every] = 0
        return a.astype(dtype)
    return make


def one_hot_rows(rng, shape, dtype):
    """Targets of a classifier: one random class per row."""
    return np.eye(shape[1], dtype=dtype)[rng.integers(0, shape[1], shape[0])]


def with_specials(values, base):
    """`base` data with `values` written over its first elements (edge cases such as -128 / -1)."""
    def make(rng, shape, dtype):
        a = base(rng, shape, dtype)
        flat = a.reshape(-1)
        flat[:len(values)] = np.array(values).astype(dtype)
        return a
    return make


INPUTS = {
    "max_pool": {"I": uniform(-2.0, -1.0)},      # all negative: padding must not act as 0
    "min_pool": {"I": uniform(1.0, 2.0)},        # all positive: padding must not act as 0
    "max_empty": {"X": uniform(-2.0, -1.0), "Y": uniform(1.0, 2.0)},
    "prod_reduce": {"X": uniform(0.5, 1.5)},
    "log_softmax": {"X": uniform(-3.0, 3.0)},
    "softmax": {"X": uniform(-3.0, 3.0)},
    "gather": {"I": integers(-2, 7), "J": integers(0, 5)},    # -2, -1, 5, 6 are clamped
    "scatter": {"I": integers(0, 4)},
    "comparisons": {"A": integers(0, 3), "B": integers(0, 3)},
    "bitops_int32": {"A": integers(-2**20, 2**20), "B": integers(-2**20, 2**20), "S": integers(0, 8)},
    "bitops_uint8": {"S": integers(0, 8)},
    "int8_wrap": {"A": with_specials([-128, 7, -7, 100], integers(-128, 128)),
                  "B": with_specials([-1, 2, 2, 0], integers(-128, 128, zero_every=9))},
    "uint16_ops": {"B": integers(0, 65536, zero_every=7)},
    "int64_ops": {"A": integers(-2**30, 2**30)},
    "int_contractions": {"A": integers(-10, 10), "B": integers(-10, 10)},
    "int_div": {"A": integers(-50, 50), "B": integers(-5, 5, zero_every=6)},
    "float16_ops": {"X": uniform(0.5, 1.5)},
    "casts": {"F": uniform(-100.0, 100.0), "I": integers(0, 250), "J": integers(-5, 5, zero_every=4)},
    "intrinsics": {"X": uniform(-2.0, 2.0), "P": uniform(0.5, 2.0), "Y": uniform(-2.0, 2.0)},
    "mixed_promotion": {"I": integers(-1000, 1000)},
    "wide_unsigned": {"B": integers(0, 2**32, zero_every=5), "C": integers(0, 2**62)},
    "plaidml_builtins": {"X": uniform(-3.0, 3.0), "P": uniform(0.05, 0.95), "T": uniform(0.0, 1.0)},
    # NaN against a number in both orders, infinities, signed zeros, a tie, saturating sigmoids
    "plaidml_inline_defs": {
        "X": with_specials([np.nan, 1.0, -0.0, np.inf, -np.inf, 1.5, 100.0, -100.0, -1000.0, np.nan, 0.0],
                           uniform(-3.0, 3.0)),
        "Y": with_specials([1.0, np.nan, 0.0, -np.inf, 2.0, 1.5, -3.0, 0.0, 5.0, np.nan, -0.0],
                           uniform(-3.0, 3.0))},
    "keras_classifier": {"X_I_3": one_hot_rows},
}


# ---- helpers ---------------------------------------------------------------------------------------

def f64(a):
    return np.asarray(a, dtype=np.float64)


def conv2d(I, K, out_hw, stride=(1, 1), dilation=(1, 1), pad=(0, 0)):
    """NHWC input, HWIO kernel; input position = stride * out + dilation * tap - pad; taps that fall
    outside the input contribute nothing."""
    N, H, W, CI = I.shape
    KH, KW, _, CO = K.shape
    OH, OW = out_hw
    O = np.zeros((N, OH, OW, CO))
    for kx in range(KH):
        for ky in range(KW):
            for x in range(OH):
                ix = stride[0] * x + dilation[0] * kx - pad[0]
                if not 0 <= ix < H:
                    continue
                for y in range(OW):
                    iy = stride[1] * y + dilation[1] * ky - pad[1]
                    if 0 <= iy < W:
                        O[:, x, y, :] += f64(I[:, ix, iy, :]) @ f64(K[kx, ky])
    return O.astype(I.dtype)


def conv1d(I, K, out_len, stride=1, dilation=1, pad=0):
    O = conv2d(I[:, :, None, :], K[:, None, :, :], (out_len, 1), (stride, 1), (dilation, 1), (pad, 0))
    return O[:, :, 0, :]


def pool2d(I, out_hw, window, stride, pad, reduce):
    """reduce(list of in-range taps as arrays [N, C]) -> [N, C]; every window here has a tap."""
    N, H, W, C = I.shape
    O = np.zeros((N,) + tuple(out_hw) + (C,))
    for x in range(out_hw[0]):
        for y in range(out_hw[1]):
            taps = [f64(I[:, stride * x + i - pad, stride * y + j - pad, :])
                    for i in range(window) for j in range(window)
                    if 0 <= stride * x + i - pad < H and 0 <= stride * y + j - pad < W]
            O[:, x, y, :] = reduce(taps)
    return O.astype(I.dtype)


def trunc_div(a, b, dtype):
    """C-style integer division: toward zero, x / 0 = 0, wrapping to `dtype`."""
    a = np.asarray(a, dtype=np.int64)
    b = np.broadcast_to(np.asarray(b, dtype=np.int64), a.shape)
    safe = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(safe) * np.sign(a) * np.sign(safe)
    return np.where(b == 0, 0, q).astype(dtype)


def wrap(a, dtype):
    """Exact integer arithmetic result wrapped to `dtype` (two's complement)."""
    return np.asarray(a, dtype=np.int64).astype(dtype)


def round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def softmax_rows(X):
    X = f64(X)
    E = np.exp(X - X.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)


# ---- references --------------------------------------------------------------------------------------

def binary_crossentropy(p, t):
    p, t = f64(p), f64(t)
    return -t * np.log(p) - (1 - t) * np.log(1 - p)


def _plaidml_builtins(X, P, T, S):
    soft = softmax_rows(X)
    out = {"Soft": soft, "LogSoft": np.log(soft), "Bce": binary_crossentropy(P, T), "Rev": f64(X),
           "Nested": 1 - softmax_rows(f64(X) * 2) + f64(P) * f64(S)}
    return {k: v.astype(np.float32) for k, v in out.items()}


def _plaidml_inline_defs(X, Y):
    """Tessera's intrinsics (numpy's NaN-propagating maximum/minimum) and PlaidML's definitions."""
    x, y = f64(X), f64(Y)
    with np.errstate(invalid="ignore", over="ignore"):
        out = {"Abs": np.abs(x), "PAbs": np.where(x < 0, -x, x),
               "Max": np.maximum(x, y), "PMax": np.where(x < y, y, x),
               "Min": np.minimum(x, y), "PMin": np.where(x < y, x, y),
               "Relu": np.maximum(x, 0.0), "PRelu": np.where(x < 0, 0.0, x),
               "Sig": 1 / (1 + np.exp(-x)), "PSig": 1 / (1 + np.exp(-x))}
    return {k: v.astype(np.float32) for k, v in out.items()}


def _keras_classifier(X_I_0, X_I_1, X_I_2, X_I_3):
    probs = softmax_rows(f64(X_I_0) @ f64(X_I_1) + f64(X_I_2))
    clipped = np.clip(probs, 1e-07, 0.9999999)
    loss = binary_crossentropy(clipped, X_I_3).mean(axis=1).mean()
    return {"X_T3": probs.astype(np.float32), "X_T19": np.array(loss, np.float32)}


def _design_same_conv(I, K):
    KH, KW = K.shape[:2]
    return {"O": conv2d(I, K, I.shape[1:3], pad=((KH - 1) // 2, (KW - 1) // 2))}


def _depthwise(I, K, K2):
    N, H, W, C = I.shape
    Ip = np.pad(f64(I), ((0, 0), (1, 1), (1, 1), (0, 0)))
    O = np.zeros((N, H, W, C))
    for k0 in range(3):
        for k1 in range(3):
            O += Ip[:, k0:k0 + H, k1:k1 + W, :] * f64(K[k0, k1, :, 0])
    M2 = K2.shape[3]
    O2 = np.zeros((N, H - 2, W - 2, C * M2))
    for c in range(C):
        for m in range(M2):
            for kx in range(3):
                for ky in range(3):
                    O2[:, :, :, c * M2 + m] += f64(I[:, kx:kx + H - 2, ky:ky + W - 2, c]) * f64(K2[kx, ky, c, m])
    return {"O": O.astype(np.float32), "O2": O2.astype(np.float32)}


def _conv_transpose1d(I, K):
    L, CI = I.shape
    KL, _, CO = K.shape
    O = np.zeros((2 * (L - 1) + KL, CO))
    for i in range(L):
        for k in range(KL):
            O[2 * i + k] += f64(I[i]) @ f64(K[k])
    return {"O1": O.astype(np.float32), "O2": O.astype(np.float32)}


def _avg_pool(I):
    N, H, W, C = I.shape
    mean = lambda taps: sum(taps) / len(taps)
    return {"O": pool2d(I, (H, W), 3, 1, 1, mean),
            "O2": pool2d(I, ((H + 1) // 2, (W + 1) // 2), 2, 2, 0, mean)}


def _argmax(X):
    a = np.argmax(X, axis=1).astype(np.int32)
    return {"A": a, "B": a}


def _cumsum(I, X):
    return {"O": np.cumsum(f64(I)).astype(np.float32), "O2": np.cumsum(f64(X), axis=1).astype(np.float32)}


def _concat(A, B, U, V):
    ab = np.concatenate([A, B], axis=1)
    return {"O": ab, "P2": ab, "R": np.concatenate([U, V])}


def _default_pad(X, F):
    P = np.pad(X, 1)
    Q = F.copy()
    Q[1:-1, 1:-1] = X
    return {"P": P, "Q": Q}


def _gather(T, I, J):
    n = T.shape[0]
    return {"O": T[np.clip(I, 0, n - 1)], "P": T[np.clip(J, 0, n - 1)]}


def _scatter(V, I, S):
    O = np.zeros(S.shape)
    np.add.at(O, I, f64(V))
    return {"O": O.astype(np.float32)}


def _index(X):
    n, m = X.shape
    i0 = np.broadcast_to(np.arange(n, dtype=np.int32)[:, None], (n, m)).copy()
    i1 = np.broadcast_to(np.arange(m, dtype=np.int32)[None, :], (n, m)).copy()
    return {"I0": i0, "I1": i1, "C": (i0 * m + i1).astype(np.int32)}


def _ternary_cond(X, Y):
    return {"O": np.where(X > Y, X, Y - np.float32(1)),
            "P": np.where(X < 0, -X, X),
            "Q": np.where(X < 0, np.float32(0), X),
            "R": np.where(X > 0, X, (f64(0.1) * f64(X)).astype(np.float32))}


def _comparisons(X, Y, A, B):
    return {"Lt": X < Y, "Le": A <= B, "Gt": X > Y, "Ge": A >= B, "Eq": A == B, "Ne": A != B,
            "Ceq": A == B, "Cne": X != Y, "Clt": A < 1}


def _bitops_int32(A, B, S):
    a, b, s = (x.astype(np.int64) for x in (A, B, S))
    return {"And": A & B, "Or": A | B, "Xor": A ^ B, "Not": ~A, "Not2": ~B,
            "Shl": wrap(a << s, np.int32), "Shr": wrap(a >> s, np.int32), "Shl2": wrap(a << 3, np.int32),
            "F": (A & B) ^ (A | np.int32(255))}


def _bitops_uint8(A, B, S):
    a, s = A.astype(np.int64), S.astype(np.int64)
    return {"And": A & B, "Or": A | B, "Xor": A ^ B, "Not": ~A,
            "Shl": wrap(a << s, np.uint8), "Shr": wrap(a >> s, np.uint8)}


def _int8_wrap(A, B):
    a, b = A.astype(np.int64), B.astype(np.int64)
    return {"S": wrap(a + b, np.int8), "D": wrap(a - b, np.int8), "P": wrap(a * b, np.int8),
            "Q": trunc_div(a, b, np.int8), "L": wrap(a + 100, np.int8)}


def _uint16_ops(A, B):
    a, b = A.astype(np.int64), B.astype(np.int64)
    return {"S": wrap(a + b, np.uint16), "D": wrap(a - b, np.uint16), "P": wrap(a * b, np.uint16),
            "Q": trunc_div(a, b, np.uint16), "Mx": np.maximum(A, B), "Mn": np.minimum(A, B)}


def _int_contractions(A, B, U, C, F):
    return {"AB": (A.astype(np.int64) @ B.astype(np.int64)).astype(np.int32),
            "Usum": wrap(U.astype(np.int64).sum(axis=1), np.uint8),
            "Cmax": C.max(axis=1),
            "FB": (f64(F) @ f64(B)).astype(np.float32)}


def _outer_ops(A, B, X):
    return {"Mul": (f64(A)[:, None] * f64(B)[None, :]).astype(np.float32),
            "Add": A[:, None] + B[None, :],
            "MaxSum": A + B.max(),
            "Eqs": np.ones(X.shape, np.float32)}


def _float16_ops(X, Y):
    return {"O": (f64(X) * 0.5 + f64(Y)).astype(np.float16),
            "S": f64(X).sum(axis=1).astype(np.float16),
            "E": np.exp(f64(X)).astype(np.float16)}


def _casts(F, I, J, B):
    return {"F2I": np.trunc(F).astype(np.int32), "F2I8": np.trunc(F).astype(np.int8),
            "I2F": I.astype(np.float32), "I2F64": I.astype(np.float64), "I2U8": I.astype(np.uint8),
            "ToBool": J != 0, "B2F": B.astype(np.float32), "F2F16": F.astype(np.float16),
            "B2I": B.astype(np.int16)}


def _intrinsics(X, P, Y):
    x, p, y = f64(X), f64(P), f64(Y)
    x3 = f64(X * np.float32(3))
    out = {"Exp": np.exp(x), "Log": np.log(p), "Sqrt": np.sqrt(p), "Pow": np.power(p, y),
           "Tanh": np.tanh(x), "Sin": np.sin(x), "Cos": np.cos(x), "Abs": np.abs(x),
           "Floor": np.floor(x3), "Ceil": np.ceil(x3), "Round": round_half_away(x3),
           "Min": np.minimum(x, y), "Max": np.maximum(x, y), "Sig": 1.0 / (1.0 + np.exp(-x)),
           "Relu": np.maximum(x, 0.0)}
    return {k: v.astype(np.float32) for k, v in out.items()}


def _rational_index(I):
    O = np.zeros(2 * I.shape[0], np.float32)
    O[::2] = I
    return {"O": O, "P": np.repeat(I, 2)}


def _constraints(A, X):
    n = A.shape[0]
    i, j = np.indices((n, n))
    return {"L": np.where(j <= i, A, 0).astype(np.float32),
            "S": (f64(X[:, 0]) + f64(X[:, 1])).astype(np.float32),
            "D": np.where(np.abs(i - j) <= 1, A, 0).astype(np.float32)}


def _function_call_ops(X, Y):
    n, m = X.shape
    return {"O1": (f64(X) + 0.5 * f64(Y)).astype(np.float32), "O2": X - Y,
            "O3": (f64(X) / n).astype(np.float32), "O4": -X, "O5": np.where(X < Y, X, Y),
            "O6": (f64(X * Y) / (m + 1)).astype(np.float32), "O7": X >= Y}


def _int_div(A, B):
    return {"Q": trunc_div(A, B, np.int32), "H": trunc_div(A, 2, np.int32), "D": trunc_div(A, -3, np.int32)}


def _max_empty(X, Y):
    O = np.zeros(X.shape[0] + 2, np.float32)
    P = np.zeros(Y.shape[0] + 2, np.float32)
    O[2:] = X
    P[2:] = Y
    return {"O": O, "P": P}


def _avg_pool_index(I):
    N, H, W, C = I.shape
    return {"O": pool2d(I, (H, W), 3, 1, 1, lambda taps: sum(taps) / len(taps))}


def _mixed_promotion(A, U, V, W, I, H, D, F, B, C):
    return {"AU": A.astype(np.int16) + U.astype(np.int16), "VA": V.astype(np.int32) + A.astype(np.int32),
            "WI": W.astype(np.int64) + I.astype(np.int64), "UI": U.astype(np.int32) * I,
            "HD": H.astype(np.float64) + D, "FI": (f64(F) * f64(I)).astype(np.float32),
            "BC": B & C, "BX": B ^ C, "BF": np.where(B, F, -F)}


def _gram_trace(A, X):
    return {"G": (f64(X) @ f64(X).T).astype(np.float32), "Diag": np.diagonal(A).copy(),
            "Tr": np.array(np.trace(f64(A)), np.float32)}


def _wide_unsigned(A, B, C, D):
    return {"S": A + B, "P": C * C, "R": C >> np.uint64(7), "Q": trunc_div(A, B, np.uint32),
            "M": np.maximum(A, B), "DS": wrap(D.astype(np.int64).sum(keepdims=True), np.int16)}


def _no_defract(A):
    S = f64(A).sum(axis=1)                     # [2, W]
    return {"O": S.T.reshape(-1).astype(np.float32)}   # O[i + 2x] = S[i, x]


REFERENCES = {
    "design_same_conv": _design_same_conv,
    "conv2d_same_even": _design_same_conv,
    "matmul": lambda A, B: {"C": (f64(A) @ f64(B)).astype(np.float32)},
    "matmul_plaidml": lambda X_I_0, X_I_1: {"X_T1": (f64(X_I_0) @ f64(X_I_1)).astype(np.float32)},
    "batched_matmul": lambda A, X: {"C": np.einsum("bmk,bkn->bmn", f64(A), f64(X)).astype(np.float32)},
    "dense_bias_relu": lambda X, W, Bias: {
        "R": np.maximum(f64(X) @ f64(W) + f64(Bias), 0).astype(np.float32),
        "R2": np.maximum(f64(X) @ f64(W) + f64(Bias), 0).astype(np.float32)},
    "conv1d_valid": lambda I, K: {"O": conv1d(I, K, I.shape[1] - K.shape[0] + 1)},
    "conv2d_valid": lambda I, K: {"O": conv2d(I, K, (I.shape[1] - K.shape[0] + 1, I.shape[2] - K.shape[1] + 1))},
    "conv2d_strided": lambda I, K: {"O": conv2d(I, K, ((I.shape[1] - K.shape[0]) // 2 + 1,
                                                       (I.shape[2] - K.shape[1]) // 2 + 1), stride=(2, 2))},
    "conv2d_dilated": lambda I, K: {"O": conv2d(I, K, (I.shape[1] - 2 * (K.shape[0] - 1),
                                                       I.shape[2] - 2 * (K.shape[1] - 1)), dilation=(2, 2))},
    "conv1d_same_strided": lambda I, K: {"O": conv1d(I, K, (I.shape[1] + 1) // 2, stride=2, pad=1)},
    "depthwise_conv": _depthwise,
    "conv_transpose1d": _conv_transpose1d,
    "max_pool": lambda I: {
        "O": pool2d(I, (I.shape[1] // 2, I.shape[2] // 2), 2, 2, 0, lambda t: np.max(t, axis=0)),
        "P": pool2d(I, I.shape[1:3], 3, 1, 1, lambda t: np.max(t, axis=0))},
    "min_pool": lambda I: {
        "O": pool2d(I, (I.shape[1] // 2, I.shape[2] // 2), 2, 2, 0, lambda t: np.min(t, axis=0)),
        "P": pool2d(I, I.shape[1:3], 3, 1, 1, lambda t: np.min(t, axis=0))},
    "avg_pool": _avg_pool,
    "global_avg_pool": lambda I: {"O": f64(I).mean(axis=(1, 2)).astype(np.float32)},
    "softmax": lambda X: {"O": softmax_rows(X).astype(np.float32)},
    "log_softmax": lambda X: {"O": np.log(softmax_rows(X)).astype(np.float32)},
    "argmax": _argmax,
    "cumsum": _cumsum,
    "concat": _concat,
    "default_pad": _default_pad,
    "mean": lambda X: {"O": f64(X).mean(axis=1).astype(np.float32), "P": f64(X).mean(axis=1).astype(np.float32),
                       "R": f64(X).mean(axis=0).astype(np.float32)},
    "sum_axes": lambda X: {"S02": f64(X).sum(axis=(0, 2)).astype(np.float32),
                           "S1": f64(X).sum(axis=1).astype(np.float32),
                           "T": np.array(f64(X).sum(), dtype=np.float32)},
    "prod_reduce": lambda X: {"P": np.prod(f64(X), axis=1).astype(np.float32),
                              "Q": np.prod(f64(X), axis=0).astype(np.float32)},
    "reshape": lambda X: {"R": X.reshape(6, 4), "S": X.reshape(X.shape[0], -1), "T": X.reshape(-1)},
    "gather": _gather,
    "scatter": _scatter,
    "shape": lambda X, Y: {"S": np.array(X.shape, np.int32), "T": np.array(Y.shape, np.int32)},
    "index": _index,
    "transpose": lambda X, Y: {"T": X.T.copy(), "U": np.transpose(Y, (2, 0, 1)).copy()},
    "slice_stride": lambda X, Y: {"S": X[::2].copy(), "R": X[::-1].copy(), "T": Y[1:4, ::3].copy()},
    "broadcast": lambda A, B, C: {"O": A + B, "P": (f64(B) * f64(C) - f64(A)).astype(np.float32)},
    "ternary_cond": _ternary_cond,
    "comparisons": _comparisons,
    "bitops_int32": _bitops_int32,
    "bitops_uint8": _bitops_uint8,
    "int8_wrap": _int8_wrap,
    "uint16_ops": _uint16_ops,
    "int64_ops": lambda A, B: {"S": A * 3 + 1, "P": B.sum(axis=1), "R": A * A},
    "int_contractions": _int_contractions,
    "outer_ops": _outer_ops,
    "float16_ops": _float16_ops,
    "float64_ops": lambda A, B: {"C": A @ B, "E": np.exp(A) * 0.25 + np.sqrt(A * A + 1)},
    "casts": _casts,
    "intrinsics": _intrinsics,
    "rational_index": _rational_index,
    "constraints": _constraints,
    "no_defract": _no_defract,
    "attributes": lambda X, Y: {"O": X + Y, "P": np.array([f64(X).sum()], np.float32)},
    "escaped_names": lambda lower, Up: {"out": lower * np.float32(2), "Sum": f64(Up).sum(axis=1).astype(np.float32)},
    "comments": lambda A, B: {"O": A * B + A},
    "function_call_ops": _function_call_ops,
    "int_div": _int_div,
    "max_empty": _max_empty,
    "avg_pool_index": _avg_pool_index,
    "mixed_promotion": _mixed_promotion,
    "scalar_input": lambda X, S, T: {"O": X * S, "P": (f64(X) + f64(T)).astype(np.float32), "Q": S.copy()},
    "gram_trace": _gram_trace,
    "wide_unsigned": _wide_unsigned,
    "plaidml_builtins": _plaidml_builtins,
    "plaidml_inline_defs": _plaidml_inline_defs,
    "keras_classifier": _keras_classifier,
}
