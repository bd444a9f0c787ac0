"""Crossentropies (Keras backend semantics) against numpy on the interp device."""
import numpy as np
import pytest

from ops_math_util import assert_close, random_shape, run_op

FLOATS = [np.float32, np.float64]
EPS = 1e-7


def np_log_probs(output, from_logits, axis):
    if from_logits:
        s = output - output.max(axis=axis, keepdims=True)
        return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))
    p = output / output.sum(axis=axis, keepdims=True)
    return np.log(np.clip(p, EPS, 1 - EPS))


def random_case(rng, dtype, from_logits):
    shape = random_shape(rng, min_rank=1, max_rank=3)
    axis = int(rng.integers(-len(shape), len(shape)))
    output = (rng.normal(scale=2, size=shape) if from_logits else rng.uniform(0.05, 1, size=shape)).astype(dtype)
    return shape, axis, output


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("from_logits", [False, True])
@pytest.mark.parametrize("case", range(3))
def test_categorical_crossentropy(rng, dtype, from_logits, case):
    shape, axis, output = random_case(rng, dtype, from_logits)
    target = rng.uniform(0, 1, size=shape)
    target = (target / target.sum(axis=axis, keepdims=True)).astype(dtype)  # a distribution along axis
    got = run_op("categorical_crossentropy", [target, output], from_logits=from_logits, axis=axis)
    want = -np.sum(target.astype(np.float64) * np_log_probs(output.astype(np.float64), from_logits, axis), axis=axis)
    assert_close(got, want, dtype)


def test_categorical_crossentropy_defaults_and_clipping():
    # A zero probability is clipped to 1e-7; probabilities are renormalized first.
    output = np.array([[0.0, 2.0, 2.0], [1.0, 1.0, 2.0]], np.float32)
    target = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], np.float32)
    got = run_op("categorical_crossentropy", [target, output])
    assert_close(got, np.array([-np.log(1e-7), -np.log(0.5)]), np.float32)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("from_logits", [False, True])
@pytest.mark.parametrize("target_dtype", [np.int32, np.int64])
def test_sparse_categorical_crossentropy(rng, dtype, from_logits, target_dtype):
    shape, axis, output = random_case(rng, dtype, from_logits)
    a = axis % len(shape)
    target_shape = shape[:a] + shape[a + 1:]
    target = rng.integers(0, shape[a], size=target_shape).astype(target_dtype)
    got = run_op("sparse_categorical_crossentropy", [target, output], from_logits=from_logits, axis=axis)
    log_probs = np_log_probs(output.astype(np.float64), from_logits, a)
    want = -np.take_along_axis(log_probs, np.expand_dims(target, a).astype(np.int64), axis=a).squeeze(a)
    assert_close(got, want, dtype)
    # A target with a size-1 class axis is accepted too (Keras' [batch, 1] labels).
    got = run_op("sparse_categorical_crossentropy", [np.expand_dims(target, a), output],
                 from_logits=from_logits, axis=axis)
    assert_close(got, want, dtype)


def test_sparse_matches_categorical_with_one_hot_targets(rng):
    logits = rng.normal(size=(5, 4)).astype(np.float32)
    labels = rng.integers(0, 4, size=5).astype(np.int32)
    one_hot = np.eye(4, dtype=np.float32)[labels]
    sparse = run_op("sparse_categorical_crossentropy", [labels, logits], from_logits=True)
    dense = -np.sum(one_hot * np_log_probs(logits.astype(np.float64), True, -1), axis=-1)
    assert_close(sparse, dense, np.float32)


@pytest.mark.parametrize("dtype", FLOATS)
def test_binary_crossentropy(rng, dtype):
    shape = random_shape(rng)
    target = rng.uniform(0, 1, size=shape).astype(dtype)
    probs = rng.uniform(0, 1, size=shape).astype(dtype)
    probs.flat[0] = 0  # clipped to 1e-7
    p = np.clip(probs.astype(np.float64), EPS, 1 - EPS)
    t = target.astype(np.float64)
    assert_close(run_op("binary_crossentropy", [target, probs]), -(t * np.log(p) + (1 - t) * np.log(1 - p)), dtype)
    logits = rng.normal(scale=5, size=shape).astype(dtype)
    z = logits.astype(np.float64)
    want = np.maximum(z, 0) - z * t + np.log1p(np.exp(-np.abs(z)))
    assert_close(run_op("binary_crossentropy", [target, logits], from_logits=True), want, dtype)


def test_binary_crossentropy_from_large_logits_is_finite():
    z = np.array([-200.0, -30.0, 0.0, 30.0, 200.0], np.float32)
    t = np.array([1.0, 0.0, 1.0, 1.0, 0.0], np.float32)
    got = run_op("binary_crossentropy", [t, z], from_logits=True)
    assert np.all(np.isfinite(got))
    zf = z.astype(np.float64)
    assert_close(got, np.logaddexp(0, zf) - zf * t, np.float32)


def test_losses_reject_mismatched_targets():
    out = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"categorical_crossentropy: target has shape \[2, 4\] but output has shape"):
        run_op("categorical_crossentropy", [np.ones((2, 4), np.float32), out])
    with pytest.raises(ValueError, match=r"sparse_categorical_crossentropy: target has shape \[3\] but output "
                                         r"\[2, 3\] needs \[2\]"):
        run_op("sparse_categorical_crossentropy", [np.zeros(3, np.int32), out])
    with pytest.raises(ValueError, match="sparse_categorical_crossentropy: target must hold integer class ids"):
        run_op("sparse_categorical_crossentropy", [np.zeros(2, np.float32), out])
    with pytest.raises(ValueError, match=r"binary_crossentropy: target has shape \[3\]"):
        run_op("binary_crossentropy", [np.ones(3, np.float32), out])
    with pytest.raises(ValueError, match="categorical_crossentropy: axis 2 is out of range"):
        run_op("categorical_crossentropy", [out, out], axis=2)
