"""dropout from the prng state on the interp device: masks, scaling, rate, determinism."""
import numpy as np
import pytest

from ops_math_util import run_op


def state(seed, n=8):
    return np.random.default_rng(seed).integers(0, 2**32, size=(3, n), dtype=np.uint32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rate", [0.2, 0.5, 0.75])
def test_dropout_zeroes_or_scales_each_element(rate, dtype):
    x = np.random.default_rng(1).uniform(1, 2, size=(4, 5, 6)).astype(dtype)  # no zeros of its own
    y, new_state = run_op("dropout", [x, state(7)], rate=rate)
    assert y.dtype == np.dtype(dtype) and y.shape == x.shape
    kept = y != 0
    np.testing.assert_allclose(y[kept], x[kept] / dtype(1 - rate), rtol=1e-6 if dtype == np.float32 else 1e-14)
    assert 0 < kept.sum() < x.size
    assert new_state.dtype == np.uint32 and new_state.shape == (3, 8)


@pytest.mark.parametrize("rate", [0.1, 0.3, 0.6])
def test_dropout_drops_about_rate_of_a_large_tensor(rate):
    x = np.ones((64, 64), np.float32)
    y, _ = run_op("dropout", [x, state(3)], rate=rate)
    dropped = np.mean(y == 0)
    # Binomial with n = 4096: the standard deviation of the fraction is below 0.008.
    assert abs(dropped - rate) < 0.04, dropped


def test_dropout_is_deterministic_per_state_and_the_state_advances():
    x = np.ones((16, 16), np.float32)
    s = state(11)
    y1, s1 = run_op("dropout", [x, s], rate=0.5)
    y2, s2 = run_op("dropout", [x, s], rate=0.5)
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(s1, s2)
    assert not np.array_equal(s1, s)
    # The next state gives a different mask; so does another state.
    y3, _ = run_op("dropout", [x, s1], rate=0.5)
    y4, _ = run_op("dropout", [x, state(12)], rate=0.5)
    assert not np.array_equal(y1, y3)
    assert not np.array_equal(y1, y4)


def test_dropout_rate_zero_is_the_identity():
    x = np.random.default_rng(2).normal(size=(3, 7)).astype(np.float32)
    y, _ = run_op("dropout", [x, state(5)], rate=0.0)
    np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize("rate", [-0.1, 1.0, 1.5])
def test_dropout_rate_outside_zero_one_raises(rate):
    with pytest.raises(ValueError, match="dropout: rate .* is outside \\[0, 1\\)"):
        run_op("dropout", [np.ones(4, np.float32), state(1)], rate=rate)


def test_dropout_needs_a_uint32_state_and_a_rate():
    x = np.ones(4, np.float32)
    with pytest.raises(ValueError, match=r"dropout: state must be uint32 \[3, N\], not int32 \[3, 8\]"):
        run_op("dropout", [x, state(1).astype(np.int32)], rate=0.5)
    with pytest.raises(ValueError, match=r"dropout: state must be uint32 \[3, N\], not uint32 \[2, 8\]"):
        run_op("dropout", [x, state(1)[:2]], rate=0.5)
    with pytest.raises(ValueError, match="dropout: missing attribute 'rate'"):
        run_op("dropout", [x, state(1)])
