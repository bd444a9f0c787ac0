"""The Keras backend's control flow: gradients, switch, rnn unrolled with masks, map_fn and folds;
checked against numpy on `cpu`."""
import numpy as np
import pytest

import tessera
from tessera.keras.backend import _control as C
from tessera.keras.backend import _core as K
from tessera.keras.backend import _math as M


@pytest.fixture(autouse=True, scope="module")
def cpu():
    tessera.set_device("cpu")


rng = np.random.default_rng(2)


def test_switch():
    x = K.variable(rng.random((4, 3)))
    then, other = K.variable(np.ones((4, 3))), K.variable(np.zeros((4, 3)))
    np.testing.assert_array_equal(K.eval(C.switch(M.greater(x, 0.5), then, other)),
                                  (K.get_value(x) > 0.5).astype(np.float32))
    rows = K.variable(np.array([1.0, 0, 1, 0]))
    np.testing.assert_array_equal(K.eval(C.switch(rows, then, other))[:, 0], [1, 0, 1, 0])
    assert K.eval(C.switch(True, lambda: then, lambda: other)).sum() == 12
    s = K.variable(0.7)
    assert np.isclose(K.eval(C.switch(M.greater_equal(s, 0.5), s * 0.1, s * 0.2)), 0.07)


def _np_rnn(x, h0, wi, wh, mask, backwards):
    steps = range(x.shape[1])[::-1] if backwards else range(x.shape[1])
    h, out, outs = h0, np.zeros_like(h0), []
    for t in steps:
        y = x[:, t] @ wi + h @ wh
        if mask is not None:
            keep = mask[:, t:t + 1].astype(bool)
            y, h_new = np.where(keep, y, out), np.where(keep, y, h)
        else:
            h_new = y
        outs.append(y)
        out, h = y, h_new
    return outs[-1], np.stack(outs, 1), h


@pytest.mark.parametrize("backwards", [False, True])
@pytest.mark.parametrize("masked", [False, True])
def test_rnn(backwards, masked):
    x, h0 = rng.random((4, 5, 3)) - 0.5, rng.random((4, 2)) - 0.5
    wi, wh = rng.random((3, 2)) - 0.5, rng.random((2, 2)) - 0.5
    mask = rng.integers(0, 2, (4, 5)) if masked else None
    wi_k, wh_k = K.variable(wi), K.variable(wh)

    def step(inputs, states):
        y = M.dot(inputs, wi_k) + M.dot(states[0], wh_k)
        return y, [y]

    xp = K.placeholder(shape=(4, 5, 3))  # states of a fixed batch: a static batch
    last, outs, states = C.rnn(step, xp, [K.variable(h0)], go_backwards=backwards,
                               mask=None if mask is None else K.variable(mask))
    got = K.function([xp], [last, outs, states[0]])([x])
    for g, w in zip(got, _np_rnn(x, h0, wi, wh, mask, backwards)):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_gradients_match_numpy():
    x = K.placeholder(shape=(3, 2))
    w = K.variable(rng.random((2, 2)))
    loss = M.sum(M.square(M.dot(x, w)))
    gw, = C.gradients(loss, [w])
    a = rng.random((3, 2))
    want = 2 * a.T @ (a @ K.get_value(w))
    np.testing.assert_allclose(K.function([x], [gw])([a])[0], want, rtol=1e-5)


def test_map_and_folds():
    x = rng.random((10, 3)).astype(np.float32)
    vx = K.variable(x)
    np.testing.assert_allclose(K.eval(C.map_fn(M.sum, vx)), x.sum(1), rtol=1e-5)
    np.testing.assert_allclose(K.eval(C.map_fn(lambda i: M.sum(vx[i]), M.arange(10),
                                               dtype="float32")), x.sum(1), rtol=1e-5)
    np.testing.assert_allclose(K.eval(C.foldl(lambda a, b: a + b, vx)), x.sum(0), rtol=1e-5)
    v = K.variable(np.array([1e-20, 1e-20, 10, 10, 10], np.float32))
    assert K.eval(C.foldl(lambda a, b: a * b, v)) < K.eval(C.foldr(lambda a, b: a * b, v))


def test_ctc_says_why():
    with pytest.raises(NotImplementedError, match="ctc_batch_cost"):
        C.ctc_batch_cost(None, None, None, None)
