"""tessera.op_grad for every registered op with a float input, against central finite differences
in float64 on interp.

Each CASE runs an op on small float64 inputs (a few dozen elements each: the interpreter is slow and
differences cost two runs per element), takes a random seed for its first output, and compares the
gradient of sum(output * seed) with respect to every float input with central differences (eps 1e-6).
The error is max|analytic - numeric| / max|numeric| over each input; `rtol` is the bound the
test asserts for that case (1e-6 unless a case states otherwise; measured errors are ~1e-9).
Inputs stay away from kinks (relu at 0, clip bounds, max ties) by more than eps, so the
differences are of a smooth function. Ops that cannot be differentiated are listed in
NON_DIFFERENTIABLE with the reason; a test checks that every registered op is in one of the two.
"""
import numpy as np
import pytest

import tessera

from gradcheck import numeric_grad

R = np.random.default_rng(7)


def a(*shape):
    return R.standard_normal(shape)


def pos(*shape):
    """Positive values in [0.5, 1.5): logs, square roots, divisions."""
    return R.uniform(0.5, 1.5, shape)


def distinct(*shape):
    """Values at least 0.1 apart in random order: no ties for max / min / argmax, no value near 0."""
    n = int(np.prod(shape))
    v = (R.permutation(n) - n / 2 + 0.5) * 0.3 + R.uniform(-0.05, 0.05, n)
    return v.reshape(shape)


def away(kinks, *shape, scale=1.0):
    """Normal values (times `scale`) at least 0.05 from every kink in `kinks`."""
    x = a(*shape) * scale
    for k in kinks:
        near = np.abs(x - k) < 0.05
        x[near] = k + np.where(x[near] >= k, 0.1, -0.1)
    return x


def with_first(values, x):
    """`x` with `values` written over its first elements (points past every kink)."""
    x.reshape(-1)[:len(values)] = values
    return x


def i32(x):
    return np.asarray(x, np.int32)


def state(seed, n):
    return np.random.default_rng(seed).integers(0, 2**32, size=(3, n), dtype=np.uint32)


class Case:
    def __init__(self, op, inputs, rtol=1e-6, **attrs):
        self.op, self.inputs, self.rtol, self.attrs = op, inputs, rtol, attrs


NHWC = (1, 4, 4, 2)
# case id -> Case. The id is the op name, or "op[variant]" for further attribute sets.
CASES = {
    # ---- elementwise (Elementwise.h) ----
    "abs": Case("abs", [away([0], 2, 3)]),
    "clip": Case("clip", [away([-0.5, 0.5], 3, 4)], min=-0.5, max=0.5),
    "elu": Case("elu", [away([0], 2, 4)], alpha=0.7),
    "exp": Case("exp", [a(2, 3)]),
    "gelu": Case("gelu", [a(2, 4)]),
    "gelu[tanh]": Case("gelu", [a(2, 4)], approximate="tanh"),
    "hard_sigmoid": Case("hard_sigmoid", [away([-2.5, 2.5], 3, 4, scale=2.5)]),
    "leaky_relu": Case("leaky_relu", [away([0], 2, 4)], alpha=0.3),
    "log": Case("log", [pos(2, 3)]),
    "maximum": Case("maximum", [distinct(2, 3), distinct(2, 3)[::-1].copy() + 0.05]),
    "maximum[broadcast]": Case("maximum", [distinct(2, 3), np.array([0.02, -0.43, 0.21])]),
    "minimum": Case("minimum", [distinct(2, 3), distinct(2, 3)[::-1].copy() + 0.05]),
    "pow": Case("pow", [pos(2, 3), a(2, 3)]),
    "pow[broadcast]": Case("pow", [pos(2, 3), a(3)]),
    "relu": Case("relu", [away([0], 2, 4)]),
    "relu[max_value,threshold,alpha]": Case("relu", [away([0.25, 1.0], 3, 4)], alpha=0.1, max_value=1.0,
                                           threshold=0.25),
    "relu6": Case("relu6", [with_first([7.3, 6.2], away([0, 6], 3, 4, scale=4))]),
    "selu": Case("selu", [away([0], 2, 4)]),
    "sigmoid": Case("sigmoid", [a(2, 4)]),
    "sign": Case("sign", [away([0], 2, 3)]),  # zero gradient away from 0 (checked with atol)
    "softplus": Case("softplus", [a(2, 4) * 3]),
    "softsign": Case("softsign", [away([0], 2, 4)]),
    "sqrt": Case("sqrt", [pos(2, 3)]),
    "square": Case("square", [a(2, 3)]),
    "tanh": Case("tanh", [a(2, 3)]),
    "switch": Case("switch", [np.array([[True, False, True], [False, False, True]]), a(2, 3), a(2, 3)]),
    "where": Case("where", [np.array([True, False, True]), a(2, 3), a(1, 3)]),
    # ---- linear algebra and convolutions (Linear.h, Conv.h) ----
    "matmul": Case("matmul", [a(2, 3), a(3, 4)]),
    "matmul[batched,broadcast]": Case("matmul", [a(2, 2, 3), a(3, 2)]),
    "matmul[vector]": Case("matmul", [a(3), a(3, 2)]),
    "matmul[dot]": Case("matmul", [a(4), a(4)]),  # a scalar output
    "dense": Case("dense", [a(2, 3), a(3, 4), a(4)]),
    "conv": Case("conv", [a(1, 5, 2), a(3, 2, 3)]),
    "conv1d": Case("conv1d", [a(2, 7, 2), a(3, 2, 2), a(2)], strides=2, padding="same"),
    "conv2d": Case("conv2d", [a(1, 5, 5, 2), a(3, 3, 2, 2)], strides=2, padding=[1, 1, 0, 1]),
    "conv2d[dilated,channels_first]": Case("conv2d", [a(1, 2, 5, 5), a(2, 2, 2, 2)], dilation_rate=2,
                                          data_format="channels_first"),
    "conv2d[groups]": Case("conv2d", [a(1, 4, 4, 4), a(2, 2, 2, 4)], groups=2, padding="same"),
    "conv3d": Case("conv3d", [a(1, 3, 3, 3, 2), a(2, 2, 2, 2, 2)]),
    "conv_transpose": Case("conv_transpose", [a(1, 3, 2), a(3, 2, 2)], strides=2),
    "conv1d_transpose": Case("conv1d_transpose", [a(1, 4, 2), a(3, 2, 2), a(2)], strides=2, padding="same"),
    "conv2d_transpose": Case("conv2d_transpose", [a(1, 3, 3, 2), a(2, 2, 2, 2)], strides=2, padding="same"),
    "conv2d_transpose[channels_first,bias,output_padding]": Case(
        "conv2d_transpose", [a(1, 2, 2, 3), a(3, 2, 2, 2), a(2)], strides=[2, 2], output_padding=[1, 0],
        data_format="channels_first"),
    "conv3d_transpose": Case("conv3d_transpose", [a(1, 2, 2, 2, 1), a(2, 2, 2, 2, 1)], strides=2),
    # ---- pooling (Pool.h) ----
    "avg_pool": Case("avg_pool", [a(1, 5, 2)], pool_size=2),
    "avg_pool1d": Case("avg_pool1d", [a(2, 7, 2)], pool_size=3, strides=2, padding="same"),
    "avg_pool2d": Case("avg_pool2d", [a(*NHWC)], pool_size=3, strides=2, padding="same"),
    "avg_pool3d": Case("avg_pool3d", [a(1, 3, 3, 3, 1)], pool_size=2),
    "avg_pool2d[channels_first]": Case("avg_pool2d", [a(1, 2, 4, 5)], pool_size=[2, 3], strides=[2, 1],
                                       data_format="channels_first"),
    "max_pool": Case("max_pool", [distinct(1, 6, 2)], pool_size=2),
    "max_pool1d": Case("max_pool1d", [distinct(2, 7, 2)], pool_size=3, strides=2, padding="same"),
    "max_pool2d": Case("max_pool2d", [distinct(*NHWC)], pool_size=2, strides=1, padding="same"),
    "max_pool2d[channels_first]": Case("max_pool2d", [distinct(1, 2, 5, 4)], pool_size=2, strides=2,
                                       data_format="channels_first"),
    "max_pool3d": Case("max_pool3d", [distinct(1, 3, 3, 3, 1)], pool_size=2),
    "global_avg_pool": Case("global_avg_pool", [a(2, 3, 3, 2)]),
    "global_max_pool": Case("global_max_pool", [distinct(2, 3, 3, 2)], keepdims=True),
    # ---- reductions (Reduce.h) ----
    "sum": Case("sum", [a(2, 3, 2)], axis=[0, 2]),
    "sum[all,keepdims]": Case("sum", [a(2, 3)], keepdims=True),
    "mean": Case("mean", [a(2, 3, 2)], axis=[1], keepdims=True),
    "max": Case("max", [distinct(3, 4)], axis=[1]),
    "min": Case("min", [distinct(3, 4)]),
    "prod": Case("prod", [pos(2, 4) * np.sign(a(2, 4))], axis=[1]),
    "prod[zeros]": Case("prod", [np.array([[0.0, 1.5, -0.7], [0.0, 0.0, 2.0], [0.4, 1.2, -0.9]])], axis=[1]),
    # ---- normalization and losses (Normalize.h, Loss.h) ----
    "softmax": Case("softmax", [a(2, 4)]),
    "softmax[axis0]": Case("softmax", [a(3, 2)], axis=[0]),
    "softmax[two axes]": Case("softmax", [a(2, 2, 3)], axis=[0, 2]),
    "log_softmax": Case("log_softmax", [a(2, 4)]),
    "batch_norm": Case("batch_norm", [a(3, 2), a(2), pos(2), a(2), a(2)], epsilon=0.01),
    "batch_norm[channels_first]": Case("batch_norm", [a(2, 3, 2), a(3), pos(3)], axis=1),
    "moments": Case("moments", [a(3, 4)], axis=[0]),  # output 0 (the mean); the variance: layer_norm
    "layer_norm": Case("layer_norm", [a(2, 4), a(4), a(4)]),
    "layer_norm[axes]": Case("layer_norm", [a(2, 3, 2)], axis=[1, 2], epsilon=1e-5),
    "layer_norm[gamma only]": Case("layer_norm", [a(3, 4), a(4)]),
    "categorical_crossentropy": Case("categorical_crossentropy", [R.dirichlet([1, 1, 1], 2), pos(2, 3)]),
    "categorical_crossentropy[from_logits]": Case("categorical_crossentropy", [R.dirichlet([1, 1, 1], 2), a(2, 3)],
                                                  from_logits=True),
    "sparse_categorical_crossentropy": Case("sparse_categorical_crossentropy", [i32([2, 0, 1]), pos(3, 4)]),
    "sparse_categorical_crossentropy[from_logits]": Case("sparse_categorical_crossentropy",
                                                         [i32([1, 3]), a(2, 4)], from_logits=True),
    "binary_crossentropy": Case("binary_crossentropy", [R.uniform(0, 1, (2, 3)), R.uniform(0.1, 0.9, (2, 3))]),
    "binary_crossentropy[from_logits]": Case("binary_crossentropy", [R.uniform(0, 1, (2, 3)), a(2, 3) * 3],
                                             from_logits=True),
    "dropout": Case("dropout", [a(3, 4), state(5, 4)], rate=0.5),  # output 0; the mask is fixed by the state
    # ---- shapes and data movement (Shape.h, Gather.h, Resize.h, Scan.h) ----
    "concatenate": Case("concatenate", [a(2, 3), a(2, 2), a(2, 1)], axis=1),
    "expand_dims": Case("expand_dims", [a(2, 3)], axis=1),
    "flatten": Case("flatten", [a(2, 3, 2)]),
    "gather": Case("gather", [a(4, 3), i32([[3, 0], [1, 3], [-1, 7]])]),  # repeats and clamped indices
    "gather[axis1]": Case("gather", [a(2, 4), i32([2, 2, 0])], axis=1),
    "gather[scalar index]": Case("gather", [a(3, 2), i32(1)]),
    "pad": Case("pad", [a(2, 3)], pads=[1, 0, 2, 1], value=0.5),
    "repeat": Case("repeat", [a(2, 3)], repeats=2, axis=1),
    "repeat[flattened]": Case("repeat", [a(2, 3)], repeats=3),
    "reshape": Case("reshape", [a(2, 3)], shape=[3, -1]),
    "resize": Case("resize", [a(1, 2, 3, 2)], method="bilinear", size=[3, 5]),
    "resize_bilinear": Case("resize_bilinear", [a(1, 3, 2, 1)], size=[5, 4]),
    "resize_nearest": Case("resize_nearest", [a(1, 2, 2, 2)], scale=[2, 3]),
    "slice": Case("slice", [a(4, 5)], begin=[3, 0], end=[0, 5], step=[-2, 2]),
    "slice[masks]": Case("slice", [a(3, 4)], begin=[1, 3], end=[0, 0], begin_mask=0, end_mask=3, step=[1, -1]),
    "squeeze": Case("squeeze", [a(2, 1, 3)]),
    "squeeze[axes]": Case("squeeze", [a(1, 2, 1, 3)], axes=[2]),
    "tile": Case("tile", [a(2, 3)], reps=[2, 1]),
    "tile[new axis]": Case("tile", [a(2, 3)], reps=[2, 1, 2]),
    "transpose": Case("transpose", [a(2, 3, 2)], perm=[2, 0, 1]),
    "cumsum": Case("cumsum", [a(2, 4)], axis=1),
    "cumsum[exclusive,reverse]": Case("cumsum", [a(3, 2)], axis=0, exclusive=True, reverse=True),
    "cumprod[exclusive]": Case("cumprod", [pos(2, 3)], axis=1, exclusive=True),
    "cumprod": Case("cumprod", [pos(2, 4) * np.sign(a(2, 4))], axis=1),
    "cumprod[zeros,reverse]": Case("cumprod", [np.array([[1.5, 0.0, -0.8, 2.0], [0.0, 1.1, 0.0, 0.7]])], axis=1,
                                   reverse=True),
}

# op -> why it has no gradient to check. Nothing flows through these (autodiff's rule for integer
# and bool values), and finite differences of a piecewise-constant function are 0 or undefined.
NON_DIFFERENTIABLE = {
    "argmax": "integer output (positions): piecewise constant in x",
    "argmin": "integer output (positions): piecewise constant in x",
    "one_hot": "its only input is integer indices; the output is a function of them alone",
}


def test_every_registered_op_is_checked_or_listed_as_non_differentiable():
    ops = set(tessera.op_names(loaded=False))  # not ops other tests loaded from libraries
    covered = {c.op for c in CASES.values()}
    assert not covered & set(NON_DIFFERENTIABLE), covered & set(NON_DIFFERENTIABLE)
    missing = sorted(ops - covered - set(NON_DIFFERENTIABLE))
    unknown = sorted((covered | set(NON_DIFFERENTIABLE)) - ops)
    assert not missing, f"ops with no gradient case and not listed as non-differentiable: {missing}"
    assert not unknown, f"cases for ops that are not registered: {unknown}"


def first(out):
    return out[0] if isinstance(out, list) else out


def as_f64(x):
    x = np.asarray(x)
    return np.array(x, np.float64) if x.dtype.kind == "f" else x.copy()


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_op_gradient_matches_finite_differences(case_id):
    case = CASES[case_id]
    inputs = [as_f64(x) for x in case.inputs]
    assert max(x.size for x in inputs) <= 64, "keep finite differences cheap"
    out = first(tessera.op(case.op, inputs, device="interp", **case.attrs))
    assert out.dtype == np.float64, out.dtype
    seed = np.random.default_rng(len(case_id)).standard_normal(out.shape)
    grads = tessera.op_grad(case.op, inputs, seed, device="interp", **case.attrs)
    floats = [i for i, x in enumerate(inputs) if x.dtype.kind == "f"]
    assert len(grads) == len(floats)
    for g, i in zip(grads, floats):
        def f():
            return float(np.sum(first(tessera.op(case.op, inputs, device="interp", **case.attrs)) * seed))
        num = numeric_grad(f, inputs[i])
        assert g.shape == inputs[i].shape
        scale = np.max(np.abs(num))
        if scale < 1e-8:  # a zero gradient (sign): compare absolutely
            np.testing.assert_allclose(g, num, atol=1e-8, err_msg=f"{case_id} input {i}")
            continue
        err = float(np.max(np.abs(g - num)) / scale)
        print(f"relative error {case_id} input {i}: {err:.1e}")  # pytest -s shows the table's errors
        assert err <= case.rtol, f"{case_id} input {i}: relative error {err:.2e} > {case.rtol:.0e}"
