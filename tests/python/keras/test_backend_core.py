"""The Keras backend's core: variables, placeholders, function with updates and the learning
phase, control dependencies, stop_gradient, random tensors; checked against numpy on `cpu`."""
import numpy as np
import pytest

import tessera
from tessera.keras.backend import _control as C
from tessera.keras.backend import _core as K
from tessera.keras.backend import _math as M


@pytest.fixture(autouse=True, scope="module")
def cpu():
    tessera.set_device("cpu")


def test_variable_and_values():
    v = K.variable(np.arange(6).reshape(2, 3), name="v")
    assert K.dtype(v) == "float32" and K.int_shape(v) == (2, 3) and K.count_params(v) == 6
    assert K.is_variable(v) and K.is_tensor(v) and not K.is_keras_tensor(v)
    K.set_value(v, np.ones((2, 3)))
    np.testing.assert_array_equal(K.get_value(v), np.ones((2, 3)))
    s = K.variable(0.5)
    assert K.int_shape(s) == () and K.eval(s * 2) == 1.0
    assert K.dtype(K.variable(False, dtype="bool")) == "bool"
    with pytest.raises(TypeError):
        K.variable("", dtype="unsupported")
    with pytest.raises(ValueError):
        K.is_keras_tensor(np.ones(2))


def test_creation():
    np.testing.assert_array_equal(K.eval(K.eye((3, 4))), np.eye(3, 4))
    x = K.variable(np.array([[1.0, np.nan]]))
    np.testing.assert_array_equal(K.eval(K.zeros_like(x)), [[0, 0]])
    np.testing.assert_array_equal(K.eval(K.ones_like(x, dtype="int32")), [[1, 1]])
    assert K.eval(K.constant(2, shape=(2, 2))).tolist() == [[2, 2], [2, 2]]


def test_function_with_updates_and_smaller_last_batch():
    w = K.variable(np.ones((3, 2)))
    x = K.placeholder(shape=(None, 3))
    y = M.dot(x, w)
    f = K.function([x], [y], updates=[(w, w * 2), K.update_add(K.variable(0.0), 1.0)])
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_allclose(f([a])[0], a @ np.ones((3, 2)))
    np.testing.assert_allclose(f([a[:1]])[0], a[:1] @ (2 * np.ones((3, 2))))
    np.testing.assert_allclose(K.get_value(w), 4 * np.ones((3, 2)))


@pytest.mark.parametrize("bad", [np.ones(3, np.complex64), np.array([1.0, 2.0, 3.0], object),
                                 np.array(["a", "b", "c"])], ids=["complex", "object", "str"])
def test_function_refuses_arrays_that_are_not_numbers(bad):
    x = K.placeholder(shape=(None,), name="numbers")
    f = K.function([x], [x * 2])
    with pytest.raises(TypeError, match=f"input numbers \\(float32\\) cannot take an array of "
                                        f"dtype {bad.dtype}"):
        f([bad])
    np.testing.assert_array_equal(f([np.array([True, False])])[0], [2, 0])


def test_update_ops_and_eval():
    v = K.variable(np.ones((2, 2)))
    K.eval(K.update_add(v, np.full((2, 2), 2.0)))
    K.eval(K.update_sub(v, np.ones((2, 2))))
    np.testing.assert_allclose(K.get_value(v), 2 * np.ones((2, 2)))
    K.eval(K.moving_average_update(v, np.zeros((2, 2)), 0.75))
    np.testing.assert_allclose(K.get_value(v), 1.5 * np.ones((2, 2)))


def test_control_dependencies_read_updated_values():
    total, count = K.variable(0.0), K.variable(0.0)
    x = K.placeholder(shape=(None,))
    ops = [K.update_add(total, M.sum(x)), K.update_add(count, K.cast(K.size(x), "float32"))]
    with K.control_dependencies(ops):
        result = total / count
    before = total / count
    f = K.function([x], [result, before], updates=ops)
    r, b = f([np.array([1.0, 2.0, 3.0])])
    assert r == 2.0 and np.isnan(b)
    r, b = f([np.array([10.0])])
    assert r == 4.0 and b == 2.0


def test_learning_phase_placeholder_and_default():
    x = K.placeholder(shape=(2,))
    y = C.in_train_phase(x * 2, x * 3)
    assert y._uses_learning_phase
    assert K.function([x, K.learning_phase()], [y])([np.ones(2), 1])[0].tolist() == [2, 2]
    assert K.function([x, K.learning_phase()], [y])([np.ones(2), 0])[0].tolist() == [3, 3]
    assert K.function([x], [y])([np.ones(2)])[0].tolist() == [3, 3]  # test phase by default
    with pytest.raises(ValueError):
        K.set_learning_phase(2)


def test_rank_only_placeholder_broadcasts():
    y_true = K.placeholder(ndim=2)
    y_pred = K.placeholder(shape=(None, 4))
    loss = M.mean(M.square(y_pred - y_true), axis=-1)
    assert K.int_shape(loss) == (None,)
    a, b = np.ones((3, 4)), np.zeros((3, 4))
    np.testing.assert_allclose(K.function([y_true, y_pred], [loss])([a, b])[0], np.ones(3))


def test_stop_gradient_exact_and_zero_gradient():
    rng = np.random.default_rng(0)
    v = (rng.standard_normal(300) * 10.0 ** rng.integers(-40, 38, 300)).astype(np.float32)
    v = np.concatenate([v, np.float32([0, 1e-45, 3.4e38, np.inf, -np.inf])])
    x = K.placeholder(shape=(None,))
    np.testing.assert_array_equal(K.function([x], [K.stop_gradient(x)])([v])[0], v)
    x = K.placeholder(shape=(4, 2))
    loss = M.sum(x * M.exp(x))
    g, = C.gradients(loss + K.stop_gradient(loss), [x])
    g0, = C.gradients(loss, [x])
    val = rng.random((4, 2))
    a, b = K.function([x], [g, g0])([val])
    np.testing.assert_allclose(a, b, rtol=1e-6)


def test_random():
    r = K.eval(K.random_normal((200, 200), mean=-10.0, stddev=5.0))
    assert abs(r.mean() + 10) < 0.1 and abs(r.std() - 5) < 0.1
    t = K.eval(K.truncated_normal((100, 100)))
    assert np.abs(t).max() <= 2
    b = K.eval(K.random_binomial((100, 100), 0.3))
    assert set(np.unique(b)) == {0.0, 1.0}
    x = K.placeholder(shape=(None, 3))
    u = K.random_uniform(K.shape(x), -1.0, 1.0)
    assert K.function([x], [u])([np.zeros((5, 3))])[0].shape == (5, 3)


def test_print_tensor(capsys):
    x = K.placeholder((1, 1))
    K.function([x], [K.print_tensor(x, "msg")])([np.ones((1, 1))])
    assert capsys.readouterr().out == "msg [[1.]]\n"


def test_uids_and_scopes():
    K.reset_uids()
    assert K.get_uid("dense") == 1 and K.get_uid("dense") == 2 and K.get_uid() == 1
    with K.name_scope("outer"):
        assert K.variable(1.0, name="w").name == "outer/w"
