"""softmax, log_softmax, batch_norm, moments and layer_norm against numpy on the interp device."""
import numpy as np
import pytest

from ops_math_util import assert_close, random_shape, run_op

FLOATS = [np.float32, np.float64]


def np_softmax(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def np_log_softmax(x, axis):
    s = x - np.max(x, axis=axis, keepdims=True)
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", range(4))
def test_softmax_and_log_softmax_over_a_random_axis(rng, dtype, case):
    shape = random_shape(rng)
    x = rng.normal(scale=3, size=shape).astype(dtype)
    axis = int(rng.integers(-len(shape), len(shape)))
    assert_close(run_op("softmax", [x], axis=axis), np_softmax(x.astype(np.float64), axis), dtype)
    assert_close(run_op("log_softmax", [x], axis=axis), np_log_softmax(x.astype(np.float64), axis), dtype)


def test_softmax_defaults_to_the_last_axis_and_sums_to_one(rng):
    x = rng.normal(size=(3, 5)).astype(np.float32)
    got = run_op("softmax", [x])
    assert_close(got, np_softmax(x.astype(np.float64), -1), np.float32)
    np.testing.assert_allclose(got.sum(axis=-1), 1, rtol=1e-6)


def test_softmax_over_several_axes(rng):
    x = rng.normal(size=(2, 3, 4)).astype(np.float64)
    assert_close(run_op("softmax", [x], axis=[0, 2]), np_softmax(x, (0, 2)), np.float64)


def test_softmax_is_stable_for_large_inputs():
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]], np.float32)
    got = run_op("softmax", [x])
    assert np.all(np.isfinite(got))
    assert_close(got, np_softmax(x.astype(np.float64), -1), np.float32)
    got = run_op("log_softmax", [x])
    assert np.all(np.isfinite(got))
    assert_close(got, np_log_softmax(x.astype(np.float64), -1), np.float32)


def test_softmax_float16(rng):
    x = rng.normal(size=(4, 6)).astype(np.float16)
    assert_close(run_op("softmax", [x]), np_softmax(x.astype(np.float64), -1), np.float16)


def np_batch_norm(x, mean, var, beta, gamma, eps, axis):
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    r = lambda p: p.reshape(shape)  # noqa: E731
    return (x - r(mean)) / np.sqrt(r(var) + eps) * r(gamma) + r(beta)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", range(3))
def test_batch_norm_inference(rng, dtype, case):
    shape = random_shape(rng, min_rank=2)
    # Case 0 takes the defaults (axis -1, epsilon 1e-3); the others a random axis and epsilon 1e-5.
    axis = -1 if case == 0 else int(rng.integers(-len(shape), len(shape)))
    eps = 1e-3 if case == 0 else 1e-5
    attrs = {} if case == 0 else {"axis": axis, "epsilon": eps}
    c = shape[axis]
    x = rng.normal(size=shape).astype(dtype)
    mean, beta, gamma = (rng.normal(size=c).astype(dtype) for _ in range(3))
    var = rng.uniform(0.1, 2, size=c).astype(dtype)
    got = run_op("batch_norm", [x, mean, var, beta, gamma], **attrs)
    f = lambda a: a.astype(np.float64)  # noqa: E731
    assert_close(got, np_batch_norm(f(x), f(mean), f(var), f(beta), f(gamma), eps, axis), dtype)


def test_batch_norm_without_scale_and_with_broadcast_parameters(rng):
    x = rng.normal(size=(2, 3, 4)).astype(np.float32)
    mean = rng.normal(size=(1, 3, 1)).astype(np.float32)
    var = rng.uniform(0.5, 1, size=(1, 3, 1)).astype(np.float32)
    got = run_op("batch_norm", [x, mean, var], axis=1, epsilon=0.01)
    assert_close(got, (x - mean) / np.sqrt(var.astype(np.float64) + 0.01), np.float32)


def test_batch_norm_parameters_must_match_the_axis():
    x = np.zeros((2, 3, 4), np.float32)
    p3, p4 = np.ones(3, np.float32), np.ones(4, np.float32)
    with pytest.raises(ValueError, match=r"batch_norm: mean has shape \[3\] but x \[2, 3, 4\] needs \[4\]"):
        run_op("batch_norm", [x, p3, p3, p3, p3])
    with pytest.raises(ValueError, match=r"batch_norm: gamma has shape \[4\]"):
        run_op("batch_norm", [x, p3, p3, p3, p4], axis=1)
    with pytest.raises(ValueError, match="batch_norm: axis 3 is out of range"):
        run_op("batch_norm", [x, p3, p3], axis=3)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("keepdims", [False, True])
def test_moments(rng, dtype, keepdims):
    x = rng.normal(loc=2, size=(3, 4, 5)).astype(dtype)
    for axes in ([0], [0, 2], [-1], [0, 1, 2]):
        mean, var = run_op("moments", [x], axis=axes, keepdims=keepdims)
        xf = x.astype(np.float64)
        assert_close(mean, np.mean(xf, axis=tuple(axes), keepdims=keepdims), dtype)
        assert_close(var, np.var(xf, axis=tuple(axes), keepdims=keepdims), dtype)


def np_layer_norm(x, axes, eps, gamma=None, beta=None):
    m = np.mean(x, axis=axes, keepdims=True)
    v = np.var(x, axis=axes, keepdims=True)
    y = (x - m) / np.sqrt(v + eps)
    shape = [x.shape[a] if a in axes else 1 for a in range(x.ndim)]
    if gamma is not None:
        y = y * gamma.reshape(shape)
    if beta is not None:
        y = y + beta.reshape(shape)
    return y


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", range(4))
def test_layer_norm(rng, dtype, case):
    x = rng.normal(scale=2, size=(2, 3, 4)).astype(dtype)
    axes = [[2], [1, 2], [0, 2], [1]][case]
    sizes = [x.shape[a] for a in axes]
    gamma = rng.normal(size=sizes).astype(dtype)
    beta = rng.normal(size=sizes).astype(dtype)
    f = lambda a: a.astype(np.float64)  # noqa: E731
    got = run_op("layer_norm", [x, gamma, beta], axis=axes, epsilon=1e-5)
    assert_close(got, np_layer_norm(f(x), tuple(axes), 1e-5, f(gamma), f(beta)), dtype)
    got = run_op("layer_norm", [x], axis=[a - 3 for a in axes])  # negative axes, default epsilon 1e-3
    assert_close(got, np_layer_norm(f(x), tuple(axes), 1e-3), dtype)


def test_layer_norm_defaults_to_the_last_axis_with_gamma_only(rng):
    x = rng.normal(size=(5, 1, 6)).astype(np.float32)
    gamma = rng.normal(size=6).astype(np.float32)
    got = run_op("layer_norm", [x, gamma])
    assert_close(got, np_layer_norm(x.astype(np.float64), (2,), 1e-3, gamma.astype(np.float64)), np.float32)


def test_layer_norm_gamma_must_match_the_axes():
    x = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(ValueError, match=r"layer_norm: gamma has shape \[3\] but x \[2, 3, 4\] needs \[4\]"):
        run_op("layer_norm", [x, np.ones(3, np.float32)])
