"""The Keras backend's math: elementwise ops, reductions, dot and batch_dot, shape operations;
checked against numpy on `cpu`."""
import numpy as np
import pytest

import tessera
from tessera.keras.backend import _core as K
from tessera.keras.backend import _math as M


@pytest.fixture(autouse=True, scope="module")
def cpu():
    tessera.set_device("cpu")


rng = np.random.default_rng(1)
X = (rng.random((4, 2, 3)) - 0.5).astype(np.float32)


def ev(fn, *args, **kw):
    return K.eval(fn(*[K.variable(a) for a in args], **kw))


@pytest.mark.parametrize("name,ref", [
    ("abs", np.abs), ("square", np.square), ("exp", np.exp), ("sin", np.sin), ("cos", np.cos),
    ("sign", np.sign), ("round", np.round), ("sqrt", lambda x: np.sqrt(np.maximum(x, 0))),
])
def test_unary(name, ref):
    np.testing.assert_allclose(ev(getattr(M, name), X), ref(X), rtol=1e-5, atol=1e-6)


def test_round_half_to_even_and_clip():
    v = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 0.4], np.float32)
    np.testing.assert_array_equal(ev(M.round, v), np.round(v))
    np.testing.assert_allclose(ev(M.clip, X, min_value=-0.1, max_value=0.2), np.clip(X, -0.1, 0.2))
    np.testing.assert_allclose(ev(M.pow, X, a=3), X ** 3, rtol=1e-5)


@pytest.mark.parametrize("name", ["equal", "not_equal", "greater", "greater_equal", "less",
                                  "less_equal", "maximum", "minimum"])
def test_binary(name):
    y = np.where(rng.random(X.shape) < 0.3, X, -X)
    ref = {"maximum": np.maximum, "minimum": np.minimum}.get(name, getattr(np, name, None))
    np.testing.assert_array_equal(ev(getattr(M, name), X, y), ref(X, y))


@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, True), ([1, -1], False),
                                           (-1, True)])
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "std", "var", "any",
                                  "all", "logsumexp"])
def test_reductions(name, axis, keepdims):
    x = X if name not in ("any", "all") else (X > 0)
    ref = {"logsumexp": lambda a, axis, keepdims: np.log(np.sum(np.exp(a), axis=axis,
                                                               keepdims=keepdims))}.get(
        name, getattr(np, name, None))
    want = ref(x, axis=tuple(axis) if isinstance(axis, list) else axis, keepdims=keepdims)
    got = K.eval(getattr(M, name)(K.variable(x, dtype=x.dtype), axis=axis, keepdims=keepdims))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_reductions_of_lists_of_tensors_stack_them():
    # BatchNormalization takes K.prod of a list of K.shape entries; TensorFlow packs such lists.
    x = K.placeholder((None, 4, 3))
    size = M.prod([K.shape(x)[a] for a in (0, 1)])
    total = M.sum([[K.shape(x)[2], 2], (3, K.shape(x)[0])])
    f = K.function([x], [size, total])
    assert f([np.zeros((5, 4, 3), np.float32)]) == [20, 13]


def test_arg_and_scans():
    np.testing.assert_array_equal(ev(M.argmax, X), np.argmax(X, -1))
    np.testing.assert_array_equal(ev(M.argmin, X, axis=1), np.argmin(X, 1))
    np.testing.assert_allclose(ev(M.cumsum, X, axis=1), np.cumsum(X, 1), rtol=1e-5)
    np.testing.assert_allclose(ev(M.cumprod, X), np.cumprod(X, 0), rtol=1e-5)


@pytest.mark.parametrize("xs,ys", [((4, 2), (2, 4)), ((4, 2), (5, 2, 3)), ((3, 4, 2), (2,)),
                                   ((2, 3, 4), (4, 5))])
def test_dot(xs, ys):
    a, b = rng.random(xs).astype(np.float32), rng.random(ys).astype(np.float32)
    want = np.dot(a, b)
    np.testing.assert_allclose(ev(M.dot, a, b), want, rtol=1e-5)


@pytest.mark.parametrize("xs,ys,axes", [((4, 2, 3), (4, 5, 3), (2, 2)), ((4, 2, 3), (4, 3), (2, 1)),
                                        ((4, 2), (4, 2, 3), (1, 1)), ((6, 5), (6, 5), 1),
                                        ((3, 4), (3, 4), None), ((2, 3, 4, 5), (2, 2, 3, 4), (2, 3))])
def test_batch_dot(xs, ys, axes):
    a, b = rng.random(xs).astype(np.float32), rng.random(ys).astype(np.float32)
    ax = [axes, axes] if isinstance(axes, int) else list(axes) if axes else \
        [a.ndim - 1, b.ndim - 1 if b.ndim == 2 else b.ndim - 2]
    want = np.array([np.tensordot(p, q, (ax[0] - 1, ax[1] - 1)) for p, q in zip(a, b)])
    want = want[:, None] if want.ndim == 1 else want
    np.testing.assert_allclose(ev(M.batch_dot, a, b, axes=axes), want, rtol=1e-5)
    x, y = K.placeholder(ndim=len(xs)), K.placeholder(shape=(None,) + ys[1:])
    got = K.function([x, y], [M.batch_dot(x, y, axes)])([a, b])[0]
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_shape_ops():
    np.testing.assert_array_equal(ev(M.transpose, X[0]), X[0].T)
    np.testing.assert_array_equal(ev(M.permute_dimensions, X, pattern=(2, 0, 1)),
                                  X.transpose(2, 0, 1))
    np.testing.assert_array_equal(ev(M.reshape, X, shape=(-1, 3)), X.reshape(-1, 3))
    np.testing.assert_array_equal(ev(M.reverse, X, axes=(0, -1)), X[::-1, :, ::-1])
    np.testing.assert_array_equal(ev(M.repeat_elements, X, rep=2, axis=1), np.repeat(X, 2, 1))
    np.testing.assert_array_equal(ev(M.repeat, X[:, 0], n=3), np.repeat(X[:, None, 0], 3, 1))
    np.testing.assert_array_equal(ev(M.tile, X, n=(1, 2)), np.tile(X, (1, 2)))
    np.testing.assert_array_equal(ev(M.flatten, X), X.reshape(-1))
    np.testing.assert_array_equal(ev(M.batch_flatten, X), X.reshape(4, -1))
    np.testing.assert_array_equal(ev(M.expand_dims, X, axis=-1), X[..., None])
    np.testing.assert_array_equal(ev(M.squeeze, X[:, :1], axis=1), X[:, 0])
    np.testing.assert_array_equal(ev(M.slice, X, start=(1, 0, 1), size=(2, 2, 2)), X[1:3, :, 1:3])
    np.testing.assert_array_equal(K.eval(M.stack([K.variable(X), K.variable(X)], axis=-1)),
                                  np.stack([X, X], -1))
    np.testing.assert_array_equal(K.eval(M.concatenate([K.variable(X), K.variable(X)], axis=1)),
                                  np.concatenate([X, X], 1))
    x = K.placeholder(shape=(None, 2, 3))
    f = K.function([x], [M.batch_flatten(x), M.reshape(x, (K.shape(x)[0], -1))])
    assert [r.shape for r in f([X])] == [(4, 6), (4, 6)]


def test_gather_one_hot_arange_in_top_k():
    ref = np.arange(60.0).reshape(10, 2, 3)
    np.testing.assert_array_equal(K.eval(M.gather(K.variable(ref), K.variable([1, 7], "int32"))),
                                  ref[[1, 7]])
    idx = rng.integers(0, 5, (3, 4))
    np.testing.assert_array_equal(K.eval(M.one_hot(K.variable(idx, "int32"), 5)), np.eye(5)[idx])
    for args in [(-20,), (10,), (-5, 5, 2)]:
        np.testing.assert_array_equal(K.eval(M.arange(*args)), np.arange(*args))
    assert len(K.eval(M.arange(K.constant(-1, dtype="int32")))) == 0
    assert K.dtype(M.arange(3, dtype="float32")) == "float32"
    p = rng.random((20, 10)).astype(np.float32)
    p[:, 5] = p[:, 0]
    t = np.zeros(20, np.int32)
    for k in (1, 3, 10):
        above = (p > p[:, :1]).sum(1)
        np.testing.assert_array_equal(
            K.eval(M.in_top_k(K.variable(p), K.variable(t, "int32"), k)), above < k)
