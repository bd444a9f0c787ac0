"""Keras 2.3.1 models on tessera.keras.backend, end to end: a CNN trained with SGD and Adam against
a numpy reference of the same steps (dropout masks replayed), gradients against finite
differences, recurrent layers (masked too), a custom C++ op in a Lambda layer, save and load, the
same losses on every device, and bad input that must raise a clear Python exception."""
import atexit
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

# Before Keras is imported: our backend, and a Keras home of our own (Keras writes keras.json
# there, naming tensorflow unless one exists, and never into ~/.keras then).
os.environ["KERAS_BACKEND"] = "tessera.keras.backend"
KERAS_HOME = tempfile.mkdtemp(prefix="keras-home-")
atexit.register(shutil.rmtree, KERAS_HOME, True)
pathlib.Path(KERAS_HOME, "keras.json").write_text(json.dumps(
    {"floatx": "float32", "epsilon": 1e-07, "backend": os.environ["KERAS_BACKEND"],
     "image_data_format": "channels_last"}))
os.environ["KERAS_HOME"] = KERAS_HOME

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import tessera  # noqa: E402
import tessera.keras  # noqa: E402,F401  (the Python 3.11 aliases, before Keras is imported)
import keras  # noqa: E402
import keras.backend as K  # noqa: E402
from keras import layers  # noqa: E402

from testpaths import ROOT  # noqa: E402

LIBRARY = ROOT / "build" / "examples" / "custom_op" / "libtessera_example_ops.so"


@pytest.fixture(autouse=True)
def cpu():
    tessera.set_device("cpu")
    yield
    tessera.set_device("cpu")


def test_keras_runs_on_tessera_with_a_private_home():
    assert K.backend() == "tessera.keras.backend" and keras.__version__ == "2.3.1"
    assert os.environ["KERAS_HOME"] == KERAS_HOME


class BatchLogs(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.batches = []

    def on_batch_end(self, batch, logs=None):
        self.batches.append(dict(logs))


# --- 1. a CNN against a numpy reference of the same steps -----------------------------------

EPS_BN, MOMENTUM_BN, RATE = 1e-3, 0.99, 0.25


def cnn():
    return keras.models.Sequential([
        layers.Conv2D(4, 3, use_bias=False, input_shape=(6, 6, 2)),  # BN makes a bias moot
        layers.BatchNormalization(momentum=MOMENTUM_BN, epsilon=EPS_BN),
        layers.Activation("relu"),
        layers.MaxPooling2D(2),
        layers.Flatten(),
        layers.Dropout(RATE),
        layers.Dense(3, activation="softmax"),
    ])


def im2col(x, k):
    n, h, w, c = x.shape
    rows = [x[:, i:i + k, j:j + k, :].reshape(n, -1) for i in range(h - k + 1)
            for j in range(w - k + 1)]
    return np.stack(rows, 1).reshape(n, h - k + 1, w - k + 1, k * k * c)


def cnn_reference_step(params, stats, x, t, mask):
    """Forward (training mode) and backward of cnn() in float64: (loss, correct, gradients);
    updates the batch norm's moving statistics in `stats` as Keras does."""
    kernel, gamma, beta, w, b = params
    n = len(x)
    cols = im2col(x, 3)
    z = cols @ kernel.reshape(-1, kernel.shape[-1])
    m = z.size // z.shape[-1]
    mean, var = z.mean((0, 1, 2)), z.var((0, 1, 2))
    xhat = (z - mean) / np.sqrt(var + EPS_BN)
    y = gamma * xhat + beta
    a = np.maximum(y, 0)
    windows = a.reshape(n, 2, 2, 2, 2, -1)  # n, i, di, j, dj, channel
    p = windows.max((2, 4))
    flat = p.reshape(n, -1)
    dropped = flat * mask * (1 / (1 - RATE))
    logits = dropped @ w + b
    e = np.exp(logits - logits.max(1, keepdims=True))
    probs = e / e.sum(1, keepdims=True)
    loss = -np.mean(np.sum(t * np.log(probs), 1))
    correct = np.argmax(probs, 1) == np.argmax(t, 1)
    # Keras: moving = moving - (moving - batch value) * (1 - momentum), with the sample variance
    # scaled by m / (m - (1 + epsilon)).
    stats[0] -= (stats[0] - mean) * (1 - MOMENTUM_BN)
    stats[1] -= (stats[1] - var * m / (m - (1 + EPS_BN))) * (1 - MOMENTUM_BN)
    dlogits = (probs - t) / n
    dw, db = dropped.T @ dlogits, dlogits.sum(0)
    dflat = (dlogits @ w.T) * mask * (1 / (1 - RATE))
    # The max's gradient goes where the max is (ties are ReLU zeros, whose gradient is 0 anyway).
    at_max = windows == p[:, :, None, :, None, :]
    dwindows = at_max * dflat.reshape(p.shape)[:, :, None, :, None, :]
    dy = dwindows.reshape(a.shape) * (y > 0)
    dgamma, dbeta = (dy * xhat).sum((0, 1, 2)), dy.sum((0, 1, 2))
    dxhat = dy * gamma
    dz = (m * dxhat - dxhat.sum((0, 1, 2)) - xhat * (dxhat * xhat).sum((0, 1, 2))) / (
        m * np.sqrt(var + EPS_BN))
    dkernel = (cols.reshape(-1, cols.shape[-1]).T @ dz.reshape(-1, dz.shape[-1]))
    return loss, correct, [dkernel.reshape(kernel.shape), dgamma, dbeta, dw, db]


def cnn_reference_inference(params, stats, x):
    kernel, gamma, beta, w, b = params
    z = im2col(x, 3) @ kernel.reshape(-1, kernel.shape[-1])
    a = np.maximum(gamma * (z - stats[0]) / np.sqrt(stats[1] + EPS_BN) + beta, 0)
    logits = a.reshape(len(x), 2, 2, 2, 2, -1).max((2, 4)).reshape(len(x), -1) @ w + b
    e = np.exp(logits - logits.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


class SGDReference:
    """keras.optimizers.SGD.get_updates: v = momentum * v - lr * g; p += v."""

    def __init__(self, lr, momentum):
        self.lr, self.momentum, self.v = lr, momentum, None

    def __call__(self, params, grads):
        self.v = self.v or [np.zeros_like(p) for p in params]
        self.v = [self.momentum * v - self.lr * g for v, g in zip(self.v, grads)]
        return [p + v for p, v in zip(params, self.v)]


class AdamReference:
    """keras.optimizers.Adam.get_updates (amsgrad off): lr_t = lr * sqrt(1 - beta_2^t) /
    (1 - beta_1^t); p -= lr_t * m / (sqrt(v) + epsilon), epsilon = K.epsilon()."""

    def __init__(self, lr, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
        self.lr, self.b1, self.b2, self.eps = lr, beta_1, beta_2, epsilon
        self.t, self.m, self.v = 0, None, None

    def __call__(self, params, grads):
        self.t += 1
        self.m = self.m or [np.zeros_like(p) for p in params]
        self.v = self.v or [np.zeros_like(p) for p in params]
        lr_t = self.lr * np.sqrt(1 - self.b2 ** self.t) / (1 - self.b1 ** self.t)
        self.m = [self.b1 * m + (1 - self.b1) * g for m, g in zip(self.m, grads)]
        self.v = [self.b2 * v + (1 - self.b2) * g * g for v, g in zip(self.v, grads)]
        return [p - lr_t * m / (np.sqrt(v) + self.eps) for p, m, v in zip(params, self.m, self.v)]


def learnable_images(count, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(count, 6, 6, 2)).astype(np.float32)
    teacher = rng.normal(size=(72, 3))
    return x, keras.utils.to_categorical(np.argmax(x.reshape(count, -1) @ teacher, 1), 3)


@pytest.mark.parametrize("optimizer,reference", [
    (lambda: keras.optimizers.SGD(0.1, momentum=0.9), lambda: SGDReference(0.1, 0.9)),
    (lambda: keras.optimizers.Adam(0.01), lambda: AdamReference(0.01)),
], ids=["sgd", "adam"])
def test_cnn_training_matches_a_numpy_reference_of_the_same_steps(optimizer, reference,
                                                                  monkeypatch):
    np.random.seed(0)
    model = cnn()
    model.compile(optimizer(), "categorical_crossentropy", metrics=["accuracy"])
    x, t = learnable_images(16, seed=1)
    masks = []
    sample = tessera.graph.RandomNode.sample

    def recorded(node, shape):
        masks.append(sample(node, shape))
        return masks[-1]

    monkeypatch.setattr(tessera.graph.RandomNode, "sample", recorded)
    start = model.get_weights()  # kernel, gamma, beta, moving mean and variance, w, b
    before = model.evaluate(x, t, verbose=0)
    drawn = len(masks)  # evaluate draws masks too, and does not use them
    logs = BatchLogs()
    model.fit(x, t, batch_size=8, epochs=3, shuffle=False, verbose=0, callbacks=[logs])
    steps = len(logs.batches)
    masks = masks[drawn:]
    assert steps == 6 and len(masks) == steps and masks[0].shape == (8, 16)

    params = [start[i].astype(np.float64) for i in (0, 1, 2, 5, 6)]
    stats = [start[3].astype(np.float64), start[4].astype(np.float64)]
    update = reference()
    losses, accuracies, correct = [], [], []
    for step, mask in enumerate(masks):
        batch = slice(8 * (step % 2), 8 * (step % 2) + 8)
        loss, right, grads = cnn_reference_step(params, stats, x[batch], t[batch], mask)
        params = update(params, grads)
        correct = ([] if step % 2 == 0 else correct) + list(right)  # Keras's metric: per epoch
        losses.append(loss), accuracies.append(np.mean(correct))
    np.testing.assert_allclose([b["loss"] for b in logs.batches], losses, rtol=2e-5)
    np.testing.assert_allclose([b["accuracy"] for b in logs.batches], accuracies)
    got = model.get_weights()
    want = [params[0], params[1], params[2], stats[0], stats[1], params[3], params[4]]
    for g, w, name in zip(got, want, [w.name for w in model.weights]):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=name)
    # Inference: the moving statistics, no dropout; the accuracy the reference reaches.
    probs = model.predict(x)
    np.testing.assert_allclose(probs, cnn_reference_inference(params, stats, x), rtol=1e-4,
                               atol=1e-6)
    after = model.evaluate(x, t, verbose=0)
    assert after[1] == np.mean(np.argmax(probs, 1) == np.argmax(t, 1))
    assert after[0] < before[0] and after[1] > before[1]


# --- 2. gradients of a model's loss against finite differences ------------------------------


@pytest.fixture
def float64():
    before = K.floatx()
    K.set_floatx("float64")
    yield
    K.set_floatx(before)


def test_gradients_of_a_models_loss_match_finite_differences(float64):
    np.random.seed(2)
    model = keras.models.Sequential([
        layers.Conv1D(3, 2, activation="tanh", input_shape=(5, 2)),
        layers.Flatten(),
        layers.Dense(2, activation="softmax", kernel_regularizer=keras.regularizers.l2(0.01)),
    ])
    model.compile("sgd", "categorical_crossentropy")
    weights = model.trainable_weights
    assert all(K.dtype(w) == "float64" for w in weights) and len(weights) == 4
    inputs = model._feed_inputs + model._feed_targets + model._feed_sample_weights
    loss = K.function(inputs, [model.total_loss])
    grads = K.function(inputs, K.gradients(model.total_loss, weights))
    rng = np.random.default_rng(3)
    x = rng.normal(size=(6, 5, 2))
    feed = [x, keras.utils.to_categorical(rng.integers(0, 2, 6), 2), np.ones(6)]
    h = 1e-6
    for w, g in zip(weights, grads(feed)):
        value = K.get_value(w)
        numeric = np.zeros_like(value)
        for i in np.ndindex(value.shape):
            for sign in (1, -1):
                shifted = value.copy()
                shifted[i] += sign * h
                K.set_value(w, shifted)
                numeric[i] += sign * loss(feed)[0] / (2 * h)
        K.set_value(w, value)
        np.testing.assert_allclose(g, numeric, rtol=1e-6, atol=1e-9, err_msg=w.name)


# --- 3. recurrent layers ------------------------------------------------------------------------


def running_means(count, steps, seed):
    """Sequences of 2 features; the target is the mean of feature 0 minus feature 1 so far."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(count, steps, 2)).astype(np.float32)
    diff = x[..., 0] - x[..., 1]
    return x, (np.cumsum(diff, 1) / np.arange(1, steps + 1))[..., None].astype(np.float32)


def epoch_losses(model, x, y, epochs):
    model.compile(keras.optimizers.Adam(0.03), "mse")
    return model.fit(x, y, batch_size=16, epochs=epochs, shuffle=False, verbose=0).history["loss"]


@pytest.mark.parametrize("cell", [layers.LSTM, layers.GRU, layers.SimpleRNN])
def test_recurrent_layers_train(cell):
    np.random.seed(4)
    x, y = running_means(32, 4, seed=5)
    model = keras.models.Sequential([cell(6, input_shape=(4, 2)), layers.Dense(1)])
    losses = epoch_losses(model, x, y[:, -1], epochs=6)
    assert losses[-1] < 0.5 * losses[0], losses


def test_a_masked_lstm_returning_sequences_trains_and_holds_its_state_over_masked_steps():
    np.random.seed(6)
    x, y = running_means(32, 5, seed=7)
    lengths = np.random.default_rng(8).integers(2, 6, 32)
    padded = np.arange(5)[None, :] >= lengths[:, None]
    x[padded], y[padded] = 0, 0
    model = keras.models.Sequential([
        layers.Masking(0.0, input_shape=(5, 2)),
        layers.LSTM(6, return_sequences=True),
        layers.TimeDistributed(layers.Dense(1)),
    ])
    losses = epoch_losses(model, x, y, epochs=6)
    assert losses[-1] < 0.5 * losses[0], losses
    # A masked step repeats the output of the last step that was not masked.
    out = model.predict(x)
    last = out[np.arange(32), lengths - 1]
    for i, n in enumerate(lengths):
        np.testing.assert_allclose(out[i, n:], np.broadcast_to(last[i], out[i, n:].shape),
                                   rtol=1e-6)


# --- 4. a custom C++ op in a Lambda layer -----------------------------------------------------


def attention_reference(q, k, v):
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    w = np.exp(scores - scores.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ v


@pytest.mark.filterwarnings("ignore:`output_shape` argument not specified")  # Keras, not TF
def test_a_custom_cpp_op_in_a_lambda_layer_trains():
    if "attention" not in tessera.op_names():
        assert tessera.load_op_library(str(LIBRARY)) == ["attention"]
    np.random.seed(9)
    rng = np.random.default_rng(10)
    x = rng.normal(size=(16, 4, 3)).astype(np.float32)
    y = attention_reference(2 * x, 2 * x, 2 * x).astype(np.float32)
    model = keras.models.Sequential([
        layers.Dense(3, use_bias=False, input_shape=(4, 3)),
        layers.Lambda(lambda h: tessera.ops.attention(h, h, h)),
    ])
    model.compile(keras.optimizers.Adam(0.05), "mse")
    first = model.predict(x)
    h = x @ model.get_weights()[0]
    np.testing.assert_allclose(first, attention_reference(h, h, h), rtol=1e-5, atol=1e-6)
    losses = model.fit(x, y, batch_size=8, epochs=8, verbose=0).history["loss"]
    assert losses[-1] < 0.5 * losses[0], losses


# --- 5. save and load ---------------------------------------------------------------------------


def small_model():
    return keras.models.Sequential([
        layers.Dense(4, input_shape=(5,)),
        layers.BatchNormalization(),
        layers.Dropout(0.5),
        layers.Dense(3, activation="softmax"),
    ])


def test_save_load_predict_gives_the_same_outputs(tmp_path):
    np.random.seed(11)
    model = small_model()
    model.compile(keras.optimizers.Adam(0.01), "categorical_crossentropy", metrics=["accuracy"])
    rng = np.random.default_rng(12)
    x = rng.normal(size=(8, 5)).astype(np.float32)
    t = keras.utils.to_categorical(rng.integers(0, 3, 8), 3)
    model.fit(x, t, batch_size=4, epochs=1, verbose=0)  # moving statistics and Adam's moments
    want = model.predict(x)

    model.save(str(tmp_path / "model.h5"))
    loaded = keras.models.load_model(str(tmp_path / "model.h5"))
    np.testing.assert_array_equal(loaded.predict(x), want)
    for a, b in zip(loaded.optimizer.get_weights(), model.optimizer.get_weights()):
        np.testing.assert_array_equal(a, b)

    model.save_weights(str(tmp_path / "weights.h5"))
    fresh = small_model()
    fresh.load_weights(str(tmp_path / "weights.h5"))
    np.testing.assert_array_equal(fresh.predict(x), want)


# --- 6. the same losses on every device ---------------------------------------------------------


def train_steps(device):
    """Per-step losses and the final weights of a small conv + dense model trained with SGD on
    `device`, from the same initial weights and data."""
    tessera.set_device(device)
    np.random.seed(14)
    model = keras.models.Sequential([
        layers.Conv2D(3, 3, activation="relu", input_shape=(5, 5, 2)),
        layers.Flatten(),
        layers.Dense(3, activation="softmax"),
    ])
    model.compile(keras.optimizers.SGD(0.1, momentum=0.9), "categorical_crossentropy")
    assert model.weights[0].device.name == device
    rng = np.random.default_rng(13)
    x = rng.normal(size=(8, 5, 5, 2)).astype(np.float32)
    t = keras.utils.to_categorical(rng.integers(0, 3, 8), 3)
    return [float(model.train_on_batch(x, t)) for _ in range(4)], model.get_weights()


@pytest.fixture(scope="module")
def on_cpu():
    return train_steps("cpu")


@pytest.mark.parametrize("device", ["opencl:0", "vulkan:0"])
def test_training_on_a_device_gives_the_losses_of_cpu(device, on_cpu):
    if device not in tessera.devices():
        pytest.skip(f"this machine has no {device} (it has {', '.join(tessera.devices())})")
    losses, weights = train_steps(device)
    np.testing.assert_allclose(losses, on_cpu[0], rtol=1e-5)
    assert losses[-1] < losses[0]
    for a, b in zip(weights, on_cpu[1]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


# --- 7. bad input -------------------------------------------------------------------------------


def dense_model():
    model = keras.models.Sequential([layers.Dense(2, input_shape=(4,))])
    model.compile("sgd", "mse")
    return model


def test_a_wrong_input_shape_raises_a_clear_error():
    model = dense_model()
    with pytest.raises(ValueError, match=r"expected dense_\d+_input to have shape \(4,\) but "
                                         r"got array with shape \(5,\)"):
        model.fit(np.ones((8, 5), np.float32), np.ones((8, 2), np.float32), verbose=0)
    with pytest.raises(ValueError, match=r"got array with shape \(8, 4, 1\)"):
        model.predict(np.ones((8, 4, 1), np.float32))
    # A shape that Keras cannot check (a sequence shorter than the kernel) fails in Tessera.
    conv = keras.models.Sequential([layers.Conv1D(2, 5, input_shape=(None, 3)),
                                    layers.GlobalMaxPooling1D()])
    conv.compile("sgd", "mse")
    with pytest.raises(ValueError, match="conv1d"):
        conv.fit(np.ones((4, 3, 3), np.float32), np.ones((4, 2), np.float32), verbose=0)


@pytest.mark.parametrize("bad", [
    np.ones((8, 4), np.complex128),
    np.array([[1.0, 2.0, 3.0, 4.0]] * 8, dtype=object),
    np.full((8, 4), "1.5"),
], ids=["complex128", "object", "str"])
def test_an_unsupported_dtype_raises_a_clear_error(bad):
    model = dense_model()
    with pytest.raises(TypeError, match=f"dtype {bad.dtype}"):
        model.fit(bad, np.ones((8, 2), np.float32), verbose=0)
    with pytest.raises(TypeError, match=f"dtype {bad.dtype}"):
        model.predict(bad)


def test_an_unknown_device_in_tessera_device_raises_a_python_exception():
    script = ("import tessera.keras, keras\n"
              "model = keras.models.Sequential([keras.layers.Dense(2, input_shape=(3,))])\n")
    env = dict(os.environ, TESSERA_DEVICE="gpu:9")
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 1, proc.stderr  # an exception, not a signal
    assert "Traceback" in proc.stderr
    assert "unknown device 'gpu:9'" in proc.stderr.splitlines()[-1], proc.stderr
