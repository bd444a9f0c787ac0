"""Activations and elementwise math against numpy and scipy on the interp device."""
import numpy as np
import pytest
from scipy import special

from ops_math_util import assert_close, random_shape, run_op

FLOATS = [np.float32, np.float64]
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def keras_relu(x, alpha=0.0, max_value=None, threshold=0.0):
    """tf.keras.backend.relu, step by step."""
    negative_part = np.maximum(threshold - x, 0) if alpha != 0 else 0
    y = x * (x > threshold) if threshold != 0 else np.maximum(x, 0)
    if max_value is not None:
        y = np.clip(y, 0, max_value)
    return y - alpha * negative_part


def elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


# name -> (numpy reference on float64, attrs, input range)
UNARY = {
    "relu": (lambda x: np.maximum(x, 0), {}, (-3, 3)),
    "relu6": (lambda x: np.clip(x, 0, 6), {}, (-3, 9)),
    "leaky_relu": (lambda x: np.where(x >= 0, x, 0.2 * x), {}, (-3, 3)),
    "elu": (elu, {}, (-3, 3)),
    "selu": (lambda x: SELU_SCALE * elu(x, SELU_ALPHA), {}, (-3, 3)),
    "sigmoid": (special.expit, {}, (-8, 8)),
    "hard_sigmoid": (lambda x: np.clip(0.2 * x + 0.5, 0, 1), {}, (-4, 4)),
    "tanh": (np.tanh, {}, (-4, 4)),
    "softplus": (lambda x: np.logaddexp(0, x), {}, (-10, 10)),
    "softsign": (lambda x: x / (1 + np.abs(x)), {}, (-5, 5)),
    "gelu": (lambda x: 0.5 * x * (1 + special.erf(x / np.sqrt(2))), {}, (-4, 4)),
    "exp": (np.exp, {}, (-4, 4)),
    "log": (np.log, {}, (0.01, 10)),
    "sqrt": (np.sqrt, {}, (0, 10)),
    "square": (np.square, {}, (-4, 4)),
    "abs": (np.abs, {}, (-4, 4)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_on_a_random_shape(rng, name, dtype):
    ref, attrs, (lo, hi) = UNARY[name]
    x = rng.uniform(lo, hi, size=random_shape(rng)).astype(dtype)
    assert_close(run_op(name, [x], **attrs), ref(x.astype(np.float64)), dtype)


@pytest.mark.parametrize("name", ["relu", "sigmoid", "tanh", "gelu", "softplus", "elu", "hard_sigmoid", "exp"])
def test_unary_float16(rng, name):
    ref, attrs, (lo, hi) = UNARY[name]
    x = rng.uniform(lo, hi, size=(3, 5)).astype(np.float16)
    assert_close(run_op(name, [x], **attrs), ref(x.astype(np.float64)), np.float16)


@pytest.mark.parametrize("attrs", [
    {"alpha": 0.1},
    {"max_value": 2.5},
    {"max_value": 6.0},
    {"threshold": 0.5},
    {"threshold": -0.5},
    {"alpha": 0.3, "max_value": 1.5},
    {"alpha": 0.2, "threshold": 1.0},
    {"alpha": 0.1, "max_value": 2.0, "threshold": 0.5},
])
@pytest.mark.parametrize("dtype", FLOATS)
def test_relu_with_keras_options(rng, attrs, dtype):
    x = rng.uniform(-4, 4, size=(4, 7)).astype(dtype)
    assert_close(run_op("relu", [x], **attrs), keras_relu(x.astype(np.float64), **attrs), dtype)


def test_relu_hand_computed_values():
    x = np.array([-2.0, -0.5, 0.0, 0.5, 1.0, 3.0], np.float32)
    np.testing.assert_array_equal(run_op("relu", [x], alpha=0.5, max_value=2.0, threshold=0.5),
                                  [-1.25, -0.5, -0.25, 0.0, 1.0, 2.0])


def test_leaky_relu_and_elu_alpha(rng):
    x = rng.uniform(-3, 3, size=(5, 4)).astype(np.float64)
    assert_close(run_op("leaky_relu", [x], alpha=0.05), np.where(x >= 0, x, 0.05 * x), np.float64)
    assert_close(run_op("elu", [x], alpha=0.7), elu(x, 0.7), np.float64)


@pytest.mark.parametrize("dtype", FLOATS)
def test_gelu_tanh_approximation(rng, dtype):
    x = rng.uniform(-4, 4, size=(3, 6)).astype(dtype)
    xf = x.astype(np.float64)
    want = 0.5 * xf * (1 + np.tanh(np.sqrt(2 / np.pi) * (xf + 0.044715 * xf**3)))
    assert_close(run_op("gelu", [x], approximate="tanh"), want, dtype)
    with pytest.raises(ValueError, match="gelu: approximate must be 'none' or 'tanh'"):
        run_op("gelu", [x], approximate="erf")


def test_softplus_does_not_overflow():
    x = np.array([-100.0, -20.0, 0.0, 20.0, 100.0], np.float32)
    got = run_op("softplus", [x])
    assert np.all(np.isfinite(got))
    assert_close(got, np.logaddexp(0, x.astype(np.float64)), np.float32)


@pytest.mark.parametrize("dtype", FLOATS + [np.int32])
def test_sign_keeps_the_type(rng, dtype):
    x = rng.integers(-3, 4, size=(4, 5)).astype(dtype)
    got = run_op("sign", [x])
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, np.sign(x))


@pytest.mark.parametrize("dtype", FLOATS)
def test_binary_ops_broadcast_like_numpy(rng, dtype):
    a = rng.uniform(0.5, 2, size=(3, 1, 4)).astype(dtype)
    b = rng.uniform(-2, 2, size=(5, 1)).astype(dtype)
    af, bf = a.astype(np.float64), b.astype(np.float64)
    assert_close(run_op("pow", [a, b]), np.power(af, bf), dtype)
    assert_close(run_op("minimum", [a, b]), np.minimum(af, bf), dtype)
    assert_close(run_op("maximum", [a, b]), np.maximum(af, bf), dtype)


@pytest.mark.parametrize("name", ["where", "switch"])
def test_where_selects_with_broadcasting(rng, name):
    cond = rng.random(size=(4, 1)) < 0.5
    a = rng.normal(size=(4, 3)).astype(np.float32)
    b = rng.normal(size=(3,)).astype(np.float32)
    assert_close(run_op(name, [cond, a, b]), np.where(cond, a, b), np.float32)


@pytest.mark.parametrize("dtype", FLOATS + [np.float16])
def test_clip(rng, dtype):
    x = rng.uniform(-3, 3, size=random_shape(rng)).astype(dtype)
    assert_close(run_op("clip", [x], min=-1.0, max=0.5), np.clip(x.astype(np.float64), -1.0, 0.5), dtype)
    assert_close(run_op("clip", [x], min=0), np.maximum(x.astype(np.float64), 0), dtype)
    assert_close(run_op("clip", [x], max=1), np.minimum(x.astype(np.float64), 1), dtype)


def test_clip_with_min_above_max_raises():
    with pytest.raises(ValueError, match="clip: min 2 is greater than max 1"):
        run_op("clip", [np.zeros(3, np.float32)], min=2.0, max=1.0)


def test_wrong_input_counts_raise_naming_the_op():
    x = np.zeros(3, np.float32)
    with pytest.raises(ValueError, match="relu: expects 1 input, got 2"):
        run_op("relu", [x, x])
    with pytest.raises(ValueError, match="where: expects 3 inputs, got 2"):
        run_op("where", [x, x])
