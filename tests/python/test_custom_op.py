"""A custom C++ op (examples/custom_op: attention) loaded from a shared library, called by name
eagerly and in graphs, differentiated by autodiff and trained."""
import numpy as np
import pytest

import tessera as ts
from testpaths import ROOT

LIBRARY = ROOT / "build" / "examples" / "custom_op" / "libtessera_example_ops.so"


@pytest.fixture(scope="module", autouse=True)
def attention_op():
    if "attention" not in ts.op_names():
        assert ts.load_op_library(str(LIBRARY)) == ["attention"]


def reference(q, k, v):
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    w = np.exp(scores - scores.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ v


def test_the_loaded_op_runs_eagerly_and_in_graphs():
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=s).astype(np.float32) for s in [(2, 3, 4), (2, 5, 4), (2, 5, 6)])
    np.testing.assert_allclose(ts.op("attention", [q, k, v]), reference(q, k, v), rtol=1e-5, atol=1e-6)
    inputs = [ts.placeholder("float32", (None, None, 4)), ts.placeholder("float32", (None, 5, 4)),
              ts.placeholder("float32", (None, 5, 6))]
    out = ts.ops.attention(*inputs)
    assert out.shape == (None, None, 6)
    got = ts.Function(inputs, [out])([q, k, v])[0]
    np.testing.assert_allclose(got, reference(q, k, v), rtol=1e-5, atol=1e-6)


def test_a_self_attention_layer_trains_through_the_custom_op():
    rng = np.random.default_rng(1)
    x = ts.placeholder("float32", (None, 4, 3))
    target = ts.placeholder("float32", (None, 4, 3))
    w = ts.Variable(rng.normal(0, 0.3, (3, 3)).astype(np.float32))
    projected = ts.reshape(ts.ops.matmul(ts.reshape(x, (-1, 3)), w), (-1, 4, 3))
    loss = ts.ops.mean(ts.ops.square(ts.ops.attention(projected, x, x) - target))
    (dw,) = ts.gradients(loss, [w])
    step = ts.Function([x, target], [loss], updates=[(w, w - 0.5 * dw)])
    data = rng.normal(size=(8, 4, 3)).astype(np.float32)
    goal = reference(data @ np.eye(3, dtype=np.float32) * 2, data, data)
    losses = [float(step([data, goal])[0]) for _ in range(20)]
    assert losses[-1] < 0.5 * losses[0]


def test_loaded_ops_are_told_apart_from_the_op_library():
    assert "attention" in ts.op_names() and "attention" not in ts.op_names(loaded=False)
    assert "conv2d" in ts.op_names(loaded=False)


def test_a_library_without_the_entry_point_is_refused_with_its_path():
    with pytest.raises(ts.TileError, match="not an op library"):
        ts.load_op_library(ts._native.__file__)
    with pytest.raises(ts.TileError, match="cannot load op library"):
        ts.load_op_library("/nonexistent/libops.so")
