"""The graph API (tessera.graph): static shapes with unknown dimensions, ops, Tile ops, gradients,
Functions compiled per input shapes, variables updated in place on every device."""
import numpy as np
import pytest

import tessera as ts

RNG = np.random.default_rng(7)


def rand(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


def test_static_shapes_keep_unknown_dimensions():
    x = ts.placeholder("float32", (None, 8, 8, 3))
    k = ts.constant(rand(3, 3, 3, 4))
    y = ts.ops.conv2d(x, k, strides=[2, 2], padding="same")
    assert y.shape == (None, 4, 4, 4) and y.dtype == "float32"
    flat = ts.reshape(y, (-1, 64))
    assert flat.shape == (None, 64)
    assert ts.ops.matmul(flat, ts.constant(rand(64, 5))).shape == (None, 5)
    assert (x[:, 1:, ::2, 0]).shape == (None, 7, 4)
    assert ts.cast(x > 0, "int32").dtype == "int32"


def test_a_bad_op_fails_when_called_with_the_op_librarys_message():
    x = ts.placeholder("float32", (None, 3))
    with pytest.raises(ts.OpError, match="matmul"):
        ts.ops.matmul(x, ts.constant(rand(4, 2)))
    with pytest.raises(AttributeError, match="no op 'convolve'"):
        ts.ops.convolve(x)


def test_function_compiles_once_per_input_shape_and_runs_smaller_batches():
    x = ts.placeholder("float32", (None, 3))
    w = rand(3, 2)
    y = ts.ops.relu(ts.ops.matmul(x, ts.constant(w)))
    f = ts.Function([x], [y, ts.shape(x)])
    for rows in (4, 4, 1, 4):
        a = rand(rows, 3)
        got, shape = f([a])
        np.testing.assert_allclose(got, np.maximum(a @ w, 0), rtol=1e-5, atol=1e-6)
        assert list(shape) == [rows, 3]
    assert f.compiled_shapes == 2


def test_function_checks_its_inputs():
    x = ts.placeholder("float32", (None, 3), name="x")
    f = ts.Function([x], [x * 2])
    with pytest.raises(ValueError, match=r"input x expects shape \(None, 3\); got an array of shape \(2, 4\)"):
        f([np.ones((2, 4), np.float32)])
    with pytest.raises(ValueError, match="takes 1 inputs; got 2"):
        f([np.ones((2, 3)), np.ones((2, 3))])
    with pytest.raises(TypeError, match="must be placeholders"):
        ts.Function([x * 2], [x])
    z = ts.placeholder("float32", (2,), name="z")
    with pytest.raises(ValueError, match="not an input"):
        ts.Function([x], [z + 1])([np.ones((2, 3))])


def test_outputs_see_variables_before_the_updates_of_the_same_call():
    v = ts.Variable(np.array([1.0, 2.0], np.float32))
    f = ts.Function([], [v * 10], updates=[(v, v + 1)])
    np.testing.assert_array_equal(f([])[0], [10, 20])
    np.testing.assert_array_equal(f([])[0], [20, 30])
    np.testing.assert_array_equal(v.get_value(), [3, 4])
    with pytest.raises(ValueError, match="updated twice"):
        ts.Function([], [], updates=[(v, v + 1), (v, v * 2)])
    with pytest.raises(ValueError, match="shape"):
        v.set_value(np.zeros(3))


def test_gradients_match_finite_differences():
    x = ts.placeholder("float64", (None, 4))
    w = ts.Variable(RNG.normal(size=(4, 3)))
    loss = ts.ops.sum(ts.intrinsic("tanh", ts.ops.matmul(x, w)) ** 2)
    (dw,) = ts.gradients(loss, [w])
    assert dw.shape == (4, 3)
    f = ts.Function([x], [loss, dw])
    a = RNG.normal(size=(5, 4))
    value, grad = f([a])
    eps, w0 = 1e-6, w.get_value()
    numeric = np.zeros_like(w0)
    for i in np.ndindex(*w0.shape):
        for sign in (1, -1):
            w1 = w0.copy()
            w1[i] += sign * eps
            numeric[i] += sign * np.sum(np.tanh(a @ w1) ** 2) / (2 * eps)
    assert value == pytest.approx(np.sum(np.tanh(a @ w0) ** 2))
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)


def test_tile_text_is_an_op():
    op = ts.TileOp("function (A[N, K], B[K, M]) -> (C, D) { C[n, m : N, M] = +(A[n, k] * B[k, m]); D = exp(C); }")
    a = ts.placeholder("float32", (None, 3))
    c, d = op(a, ts.constant(np.eye(3, dtype=np.float32)))
    assert c.shape == (None, 3) and c.name == "C" and d.name == "D"
    x = rand(2, 3)
    got_c, got_d = ts.Function([a], [c, d])([x])
    np.testing.assert_allclose(got_c, x, rtol=1e-6)
    np.testing.assert_allclose(got_d, np.exp(x), rtol=1e-5)
    with pytest.raises(ts.TileError, match=r"<tile op>:1:\d+: error"):
        ts.TileOp("function (A[N]) -> (B) { B = A + ; }")
    with pytest.raises(TypeError, match=r"takes inputs \['A', 'B'\]"):
        op(a)


def test_random_values_are_drawn_for_each_run():
    x = ts.placeholder("float32", (None, 2))
    r = ts.random(ts.shape(x), lambda rng, shape: rng.uniform(size=shape), seed=3)
    assert r.shape == (None, 2)
    f = ts.Function([x], [r])
    a, b = f([np.zeros((3, 2))])[0], f([np.zeros((3, 2))])[0]
    assert a.shape == (3, 2) and not np.array_equal(a, b) and ((0 <= a) & (a < 1)).all()


@pytest.mark.parametrize("device", ts.devices())
def test_training_steps_agree_on_every_device(device):
    """Three SGD steps of a small dense network: the losses and weights of each device match
    interp's within float32 tolerance."""
    def train(device_name):
        dev = ts.Device(device_name)
        rng = np.random.default_rng(0)
        x = ts.placeholder("float32", (None, 6))
        labels = ts.placeholder("float32", (None, 2))
        w1 = ts.Variable(rng.normal(0, 0.5, (6, 5)).astype(np.float32), device=dev)
        w2 = ts.Variable(rng.normal(0, 0.5, (5, 2)).astype(np.float32), device=dev)
        hidden = ts.ops.relu(ts.ops.matmul(x, w1))
        probs = ts.ops.softmax(ts.ops.matmul(hidden, w2))
        loss = ts.ops.mean(ts.ops.categorical_crossentropy(labels, probs))
        g1, g2 = ts.gradients(loss, [w1, w2])
        step = ts.Function([x, labels], [loss], updates=[(w1, w1 - 0.5 * g1), (w2, w2 - 0.5 * g2)],
                           device=dev)
        data = rng.normal(size=(8, 6)).astype(np.float32)
        onehot = np.eye(2, dtype=np.float32)[(data[:, 0] > 0).astype(int)]
        losses = [float(step([data, onehot])[0]) for _ in range(3)]
        return losses, w1.get_value()

    want_losses, want_w1 = train("interp")
    losses, w1 = train(device)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-4)
    np.testing.assert_allclose(w1, want_w1, rtol=1e-4, atol=1e-5)
    assert losses[2] < losses[0]


def test_python_errors_carry_readable_messages():
    """Issue 19's Python cases: undecodable source, huge attributes, bad names, huge views."""
    with pytest.raises(ts.TileError, match=r"<python>:1:1: error: .*\\xff\\xfe"):
        ts.run(b"\xff\xfe", {})
    x = np.ones((1, 4, 4, 1), np.float32)
    k = np.ones((2, 2, 1, 1), np.float32)
    with pytest.raises(ts.OpError, match="conv2d: attribute 'strides'.* does not fit a 64-bit integer"):
        ts.op("conv2d", [x, k], strides=10**30)
    with pytest.raises(ts.TileError, match="input name must be a str, got int"):
        ts.run("function (A[N]) -> (B) { B = A; }", {3: np.ones(2)})
    huge = np.lib.stride_tricks.as_strided(np.ones(1, np.float32), (10**6, 10**6), (0, 0))
    with pytest.raises(ts.TileError, match=r"float32\[1000000, 1000000\] needs 4000000000000 bytes"):
        ts.run("function (A[N, M]) -> (B) { B = A; }", {"A": huge})
    with pytest.raises(ts.TileError, match="expected a numpy array, got str"):
        ts.op("relu", ["x"])
    with pytest.raises(ts.TileError, match="empty device name"):
        ts.Device("")
    with pytest.raises(ts.TileError, match="unknown device"):
        ts.Device("gpu:7")


def test_unknown_dimensions_that_must_match_known_ones():
    """A placeholder with no known size (Keras's targets) against a (None, 3) output: the shapes
    come from size-1 probes, and the run checks the real sizes."""
    target = ts.placeholder("float32", (None, None))
    output = ts.ops.matmul(ts.placeholder("float32", (None, 2)), ts.constant(rand(2, 3)))
    x = output.node.inputs[0]
    diff = ts.ops.square(target - output)
    assert diff.shape == (None, 3)
    loss = ts.ops.mean(ts.ops.categorical_crossentropy(target, ts.ops.softmax(output)))
    assert loss.shape == ()
    f = ts.Function([x, target], [diff])
    a, t = rand(4, 2), rand(4, 3)
    np.testing.assert_allclose(f([a, t])[0], (t - a @ output.node.inputs[1].node.value) ** 2, rtol=1e-5)
    with pytest.raises(ts.OpError):
        f([a, rand(4, 5)])
    with pytest.raises(ts.OpError):  # wrong whatever the unknown sizes are
        ts.ops.matmul(ts.placeholder("float32", (None, 2)), ts.constant(rand(4, 3)))


def test_compile_options_choose_the_tuning_policy():
    x = ts.placeholder("float32", (None, 3))
    before = ts.compile_stats()
    try:
        ts.set_compile_options(tune="off")
        ts.Function([x], [ts.ops.relu(x)])([rand(2, 3)])
        after = ts.compile_stats()
        assert after["programs"] == before["programs"] + 1 and after["tuning_trials"] == before["tuning_trials"]
        ts.set_compile_options(tune="sometimes")
        with pytest.raises(ts.TileError, match="tune must be 'online', 'full', 'cached' or 'off'"):
            ts.Function([x], [ts.ops.relu(x)])([rand(2, 3)])
    finally:
        ts.set_compile_options()


def test_pack_stays_on_the_host_for_shapes_and_stacks_tensors():
    x = ts.placeholder("float32", (None, 2, 3))
    flat = ts.reshape(x, ts.pack([ts.shape(x)[0], -1]))
    assert flat.shape == (None, 6)
    count = ts.as_tensor([ts.shape(x)[1], ts.shape(x)[2]])
    rows = ts.pack([x[:, 0, 0], x[:, 1, 2] * 2], axis=1)
    assert rows.shape == (None, 2)
    a = rand(4, 2, 3)
    got_flat, got_count, got_rows = ts.Function([x], [flat, count, rows])([a])
    np.testing.assert_array_equal(got_flat, a.reshape(4, 6))
    assert got_count.tolist() == [2, 3]
    np.testing.assert_allclose(got_rows, np.stack([a[:, 0, 0], a[:, 1, 2] * 2], 1))


def test_unknown_dimensions_that_must_be_one():
    """A squeeze of an unknown dimension (Keras squeezes its sample weights): known as 1 at run."""
    w = ts.placeholder("float32", (None, None))
    squeezed = ts.ops.squeeze(w, axes=[1])
    assert squeezed.shape == (None,)
    np.testing.assert_array_equal(ts.Function([w], [squeezed * 2])([np.ones((3, 1), np.float32)])[0], [2, 2, 2])
    with pytest.raises(ts.OpError, match="squeeze"):
        ts.Function([w], [squeezed])([np.ones((3, 2), np.float32)])


def test_deferred_subgraphs_are_built_for_each_concrete_shape():
    """A loop over an unknown dimension, unrolled once a function is compiled for a length."""
    x = ts.placeholder("float32", (None, None, 2))

    def running_sum(seq):
        assert seq.shape[1] is not None  # concrete inside the build
        total = seq[:, 0]
        for t in range(1, seq.shape[1]):
            total = total + seq[:, t]
        return [total]

    (out,) = ts.deferred(running_sum, [x])
    assert out.shape == (None, 2)
    f = ts.Function([x], [out * 2])
    for steps in (1, 4, 9):
        a = rand(3, steps, 2)
        np.testing.assert_allclose(f([a])[0], 2 * a.sum(1), rtol=1e-5, atol=1e-6)
    assert f.compiled_shapes == 3
