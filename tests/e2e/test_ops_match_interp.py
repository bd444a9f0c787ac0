"""Every op of the op library (tessera.op_names()) on each compiled device against the reference
interpreter, on small random inputs with fixed seeds. Tolerances per dtype (the compiled code sums
in another order, uses float32 math where the interpreter uses double, and fast vector exp/log):
float16 rtol 2e-3 / atol 2e-3, float32 rtol 1e-4 / atol 1e-5, float64 rtol 1e-10 / atol 1e-12;
every integer and bool result exactly. An op missing from TABLE fails test_every_op_has_a_case,
so the table must grow with the library."""
import numpy as np
import pytest

import tessera as ts

DEVICES = [d for d in ts.devices() if d != "interp"]

TOLERANCES = {
    np.dtype(np.float16): (2e-3, 2e-3),
    np.dtype(np.float32): (1e-4, 1e-5),
    np.dtype(np.float64): (1e-10, 1e-12),
}

R = np.random.default_rng(2024)


def f32(*shape, lo=-2.0, hi=2.0):
    return R.uniform(lo, hi, size=shape).astype(np.float32)


def f64(*shape, lo=-2.0, hi=2.0):
    return R.uniform(lo, hi, size=shape)


def with_nan(*shape, every=5):
    """f32 values with a NaN at every `every`-th element (and an infinity beside some)."""
    x = f32(*shape).reshape(-1)
    x[::every] = np.nan
    x[2::every * 3] = np.inf
    return x.reshape(shape)


def pos(*shape):
    return R.uniform(0.25, 2.0, size=shape).astype(np.float32)


def ints(*shape, lo=0, hi=4, dtype=np.int32):
    return R.integers(lo, hi, size=shape).astype(dtype)


def prng_state(n=8):
    return R.integers(0, 2**32, size=(3, n), dtype=np.uint32)


def probs(*shape):
    p = R.uniform(0.1, 1.0, size=shape).astype(np.float32)
    return p / p.sum(axis=-1, keepdims=True)


# name -> list of (inputs, attrs): the cases each op runs on. Shapes are odd-sized where possible
# so that vector loops get remainders and tiled loops get partial tiles.
TABLE = {
    "abs": [([f32(5, 7)], {}), ([ints(4, 9, lo=-5, hi=5)], {})],
    "argmax": [([f32(5, 7)], {"axis": 1}), ([f32(3, 4, 5)], {"axis": 0})],
    "argmin": [([f32(5, 7)], {"axis": 1})],
    "avg_pool": [([f32(1, 9, 9, 3)], {"pool_size": [3, 3], "strides": [2, 2], "padding": "same"})],
    "avg_pool1d": [([f32(2, 11, 3)], {"pool_size": 3, "strides": 1, "padding": "same"})],
    "avg_pool2d": [([f32(1, 8, 7, 2)], {"pool_size": 2}), ([f32(1, 9, 9, 3)], {"pool_size": 3, "padding": "same"})],
    "avg_pool3d": [([f32(1, 4, 5, 6, 2)], {"pool_size": 2})],
    "batch_norm": [([f32(4, 5, 3), f32(3), f32(3), f32(3), pos(3)], {})],
    "binary_crossentropy": [([ints(3, 5, hi=2).astype(np.float32), R.uniform(0.05, 0.95, (3, 5)).astype(np.float32)], {}),
                            ([ints(3, 5, hi=2).astype(np.float32), f32(3, 5)], {"from_logits": True})],
    "categorical_crossentropy": [([np.eye(5, dtype=np.float32)[[0, 3, 2]], probs(3, 5)], {}),
                                 ([np.eye(5, dtype=np.float32)[[1, 4]], f32(2, 5)], {"from_logits": True})],
    "clip": [([f32(6, 7)], {"min": -1.0, "max": 0.5})],
    "concatenate": [([f32(3, 4), f32(3, 5)], {"axis": 1}), ([f32(2, 3), f32(4, 3), f32(1, 3)], {"axis": 0})],
    "conv": [([f32(1, 9, 9, 3), f32(3, 3, 3, 4)], {"padding": "same"})],
    "conv1d": [([f32(2, 13, 3), f32(3, 3, 5)], {"padding": "same"}), ([f32(1, 13, 3), f32(3, 3, 5)], {"strides": 2})],
    "conv1d_transpose": [([f32(1, 6, 3), f32(3, 4, 3)], {"strides": 2})],
    "conv2d": [([f32(1, 11, 10, 3), f32(3, 3, 3, 8)], {}),
               ([f32(2, 12, 12, 4), f32(3, 3, 4, 6)], {"padding": "same", "strides": 2}),
               ([f32(1, 11, 11, 2), f32(3, 3, 2, 3)], {"dilation_rate": 2}),
               ([f32(1, 7, 7, 16), f32(1, 1, 16, 32)], {}),
               # big enough for register blocking, tiling and parallel loops with partial tiles
               ([f32(1, 30, 29, 16), f32(3, 3, 16, 40)], {"padding": "same"}),
               ([f32(1, 33, 33, 3), f32(7, 7, 3, 16)], {"padding": "same", "strides": 2})],
    "conv2d_transpose": [([f32(1, 5, 4, 3), f32(3, 3, 2, 3)], {"strides": 2, "padding": "same"}),
                         ([f32(1, 5, 5, 3), f32(3, 3, 4, 3)], {})],
    "conv3d": [([f32(1, 5, 6, 5, 2), f32(2, 3, 2, 2, 3)], {})],
    "conv3d_transpose": [([f32(1, 3, 4, 3, 2), f32(2, 2, 2, 3, 2)], {"strides": 2})],
    "conv_transpose": [([f32(1, 5, 4, 3), f32(3, 3, 2, 3)], {"strides": 2})],
    "cumprod": [([R.uniform(0.5, 1.5, (4, 6)).astype(np.float32)], {"axis": 1}),
                ([ints(3, 5, lo=1, hi=3)], {"axis": 1, "exclusive": True})],
    "cumsum": [([f32(5, 7)], {}), ([f32(4, 6)], {"axis": 1, "exclusive": True, "reverse": True})],
    "dense": [([f32(5, 7), f32(7, 9), f32(9)], {}), ([f32(3, 4), f32(4, 6)], {})],
    "dropout": [([f32(4, 8), prng_state()], {"rate": 0.5})],
    "elu": [([f32(5, 7)], {"alpha": 0.7})],
    "exp": [([f32(5, 7)], {}), ([f64(3, 5)], {})],
    "expand_dims": [([f32(3, 4)], {"axis": 1})],
    "flatten": [([f32(2, 3, 4)], {})],
    "gather": [([f32(6, 5), ints(4, hi=6)], {}), ([f32(3, 7), ints(2, 3, hi=7)], {"axis": 1})],
    "gelu": [([f32(5, 7)], {}), ([f32(5, 7)], {"approximate": "tanh"})],
    "global_avg_pool": [([f32(2, 5, 6, 3)], {})],
    "global_max_pool": [([f32(2, 5, 6, 3)], {})],
    "hard_sigmoid": [([f32(5, 7, lo=-4, hi=4)], {})],
    "layer_norm": [([f32(4, 9), pos(9), f32(9)], {}), ([f32(3, 4, 5)], {})],
    "leaky_relu": [([f32(5, 7)], {"alpha": 0.05})],
    "log": [([pos(5, 7)], {})],
    "log_softmax": [([f32(4, 9)], {}), ([f32(3, 4, 5)], {"axis": 1})],
    "matmul": [([f32(17, 13), f32(13, 19)], {}), ([f64(5, 7), f64(7, 3)], {}), ([ints(5, 6), ints(6, 4)], {}),
               ([f32(2, 5, 6), f32(2, 6, 3)], {}), ([f32(67, 129), f32(129, 71)], {})],
    "max": [([f32(5, 7)], {"axis": -1, "keepdims": True}), ([ints(4, 6, lo=-9, hi=9)], {}),
            ([with_nan(6, 37, every=41)], {"axis": 1})],
    "max_pool": [([f32(1, 9, 9, 3)], {"pool_size": [2, 2], "padding": "same"}),
                 ([with_nan(1, 8, 8, 3, every=13)], {"pool_size": [2, 2]})],
    "max_pool1d": [([f32(2, 9, 3)], {"pool_size": 2, "padding": "same"})],
    "max_pool2d": [([f32(1, 9, 8, 3)], {"pool_size": 3, "strides": 2}),
                   ([f32(1, 7, 7, 2)], {"pool_size": 3, "strides": 1, "padding": "same"})],
    "max_pool3d": [([f32(1, 4, 4, 5, 2)], {"pool_size": 2})],
    "maximum": [([f32(4, 5), f32(5)], {}), ([with_nan(4, 5, every=3), with_nan(5, every=2)], {})],
    "mean": [([f32(4, 5, 6)], {"axis": [0, 1]}), ([f32(7, 3)], {})],
    "min": [([f32(5, 7)], {"axis": 0}), ([with_nan(37, 6, every=41)], {"axis": 0})],
    "minimum": [([f32(4, 5), f32(4, 1)], {}), ([with_nan(4, 5, every=3), with_nan(4, 1, every=2)], {})],
    "moments": [([f32(4, 5, 6)], {"axis": [0, 1]})],
    "one_hot": [([ints(5, hi=4)], {"depth": 4}), ([ints(3, hi=3)], {"depth": 3, "axis": 0})],
    "pad": [([f32(3, 4, 2)], {"pads": [0, 2, 1, 0, 3, 1], "value": -2.5})],
    "pow": [([pos(4, 5), f32(4, 5)], {})],
    "prod": [([R.uniform(0.5, 1.5, (3, 4)).astype(np.float32)], {}), ([ints(2, 3, lo=1, hi=4)], {})],
    "relu": [([f32(5, 7)], {}), ([f32(5, 7)], {"alpha": 0.5, "max_value": 1.0, "threshold": 0.5})],
    "relu6": [([f32(5, 7, lo=-8, hi=8)], {})],
    "repeat": [([f32(3, 4)], {"repeats": 2, "axis": 1})],
    "reshape": [([f32(3, 4, 2)], {"shape": [4, 6]})],
    "resize": [([f32(1, 3, 4, 2)], {"size": [6, 8]}), ([f32(1, 3, 4, 2)], {"size": [5, 7], "method": "bilinear"})],
    "resize_bilinear": [([f32(1, 4, 3, 2)], {"size": [5, 7]})],
    "resize_nearest": [([f32(1, 3, 4, 2)], {"scale": [2, 3]})],
    "selu": [([f32(5, 7)], {})],
    "sigmoid": [([f32(5, 7, lo=-6, hi=6)], {}), ([f64(3, 4)], {})],
    "sign": [([f32(5, 7)], {})],
    "slice": [([f32(5, 7)], {"begin": [1, 0], "end": [4, 7], "step": [1, 2]}), ([f32(4, 5)], {"step": [1, -1]})],
    "softmax": [([f32(4, 9)], {}), ([f32(3, 4, 5)], {"axis": [0, 2]})],
    "softplus": [([f32(5, 7, lo=-6, hi=6)], {})],
    "softsign": [([f32(5, 7)], {})],
    "sparse_categorical_crossentropy": [([ints(4, hi=5), probs(4, 5)], {}),
                                        ([ints(3, hi=6), f32(3, 6)], {"from_logits": True})],
    "sqrt": [([pos(5, 7)], {})],
    "square": [([f32(5, 7)], {}), ([ints(3, 4, lo=-9, hi=9)], {})],
    "squeeze": [([f32(1, 4, 1, 3)], {}), ([f32(1, 4, 1, 3)], {"axes": [0]})],
    "sum": [([f32(5, 7)], {"axis": 0}), ([f32(3, 4, 5)], {}), ([ints(4, 5, lo=-9, hi=9)], {"axis": 1})],
    "switch": [([R.random((4, 1)) < 0.5, f32(4, 3), f32(3)], {})],
    "tanh": [([f32(5, 7, lo=-4, hi=4)], {}), ([f64(3, 4)], {})],
    "tile": [([f32(2, 3)], {"reps": [2, 3]})],
    "transpose": [([f32(3, 4, 5)], {"perm": [2, 0, 1]}), ([f32(6, 7)], {})],
    "where": [([R.random((4, 1)) < 0.5, f32(4, 3), f32(3)], {})],
}

CASES = [(name, i) for name in sorted(TABLE) for i in range(len(TABLE[name]))]


def assert_same(where, got, want):
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype}, interp gives {want.dtype}"
    assert got.shape == want.shape, f"{where}: shape {got.shape}, interp gives {want.shape}"
    if want.dtype in TOLERANCES:
        rtol, atol = TOLERANCES[want.dtype]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=where)
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)


def as_list(result):
    return [np.asarray(r) for r in result] if isinstance(result, (list, tuple)) else [np.asarray(result)]


def test_every_op_has_a_case():
    missing = sorted(set(ts.op_names()) - set(TABLE))
    assert not missing, f"ops without a case in TABLE: {missing}"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,case", CASES, ids=[f"{n}-{i}" for n, i in CASES])
def test_op(device, name, case):
    inputs, attrs = TABLE[name][case]
    want = as_list(ts.op(name, inputs, device="interp", **attrs))
    got = as_list(ts.op(name, inputs, device=device, **attrs))
    assert len(got) == len(want), name
    for k, (g, w) in enumerate(zip(got, want)):
        assert_same(f"{name} case {case} on {device}: output {k}", g, w)


# Gradients whose Tile programs need the output basis change (strided, dilated and pooling
# backward): tessera.op_grad on each device against interp, same tolerances.
GRAD_CASES = {
    "conv2d_strided_same": ("conv2d", [f32(1, 13, 13, 4), f32(3, 3, 4, 6)], {"padding": "same", "strides": 2}),
    "conv2d_dilated": ("conv2d", [f32(1, 12, 12, 3), f32(3, 3, 3, 5)], {"dilation_rate": 2}),
    "conv2d_stride3": ("conv2d", [f32(1, 12, 11, 3), f32(3, 3, 3, 5)], {"strides": 3}),
    "conv1d_stride3_same": ("conv1d", [f32(1, 17, 3), f32(4, 3, 2)], {"strides": 3, "padding": "same"}),
    "max_pool2d": ("max_pool2d", [f32(1, 10, 10, 3)], {"pool_size": 3, "strides": 2}),
    "avg_pool2d_same": ("avg_pool2d", [f32(1, 10, 10, 3)], {"pool_size": 2, "padding": "same"}),
    "conv2d_transpose": ("conv2d_transpose", [f32(1, 5, 5, 4), f32(3, 3, 2, 4)], {"strides": 2}),
    "layer_norm": ("layer_norm", [f32(4, 9)], {}),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_op_grad(device, case):
    name, inputs, attrs = GRAD_CASES[case]
    out = as_list(ts.op(name, inputs, device="interp", **attrs))[0]
    seed = np.random.default_rng(3).uniform(-1, 1, out.shape).astype(out.dtype)
    want = as_list(ts.op_grad(name, inputs, seed, device="interp", **attrs))
    got = as_list(ts.op_grad(name, inputs, seed, device=device, **attrs))
    assert len(got) == len(want), case
    for k, (g, w) in enumerate(zip(got, want)):
        assert_same(f"gradient of {case} on {device}: input {k}", g, w)
