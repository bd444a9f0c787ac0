"""Reads a model directory that `tessera bench MODEL --emit-tile DIR` writes (docs/bench-models.md):
DIR/MODEL.graph.json (the layer graph), DIR/weights/NAME.npy and DIR/X.npy.

Numpy only, so that every engine's venv (numpy 1.x in the project venv, 2.x in the peers') can use it.
"""
import json
import pathlib

import numpy as np


class Model:
    """A layer graph with its weights and sample input, loaded from a model directory."""

    def __init__(self, directory):
        self.dir = pathlib.Path(directory)
        graphs = sorted(self.dir.glob("*.graph.json"))
        if len(graphs) != 1:
            raise ValueError(f"{self.dir}: expected one *.graph.json, found {[g.name for g in graphs]}")
        self.graph_path = graphs[0]
        self.graph = json.loads(self.graph_path.read_text())
        self.name = self.graph["model"]
        self.nodes = self.graph["nodes"]
        self.inputs = self.graph["inputs"]
        self.outputs = self.graph["outputs"]
        self.weights = {w["name"]: np.load(self.dir / "weights" / f"{w['name']}.npy")
                        for w in self.graph["weights"]}
        for w in self.graph["weights"]:
            got = self.weights[w["name"]]
            if list(got.shape) != list(w["shape"]):
                raise ValueError(f"weight {w['name']}: file has shape {got.shape}, graph says {w['shape']}")

    @property
    def tile_path(self):
        return self.dir / f"{self.name}.tile"

    @property
    def spec_path(self):
        return self.dir / f"{self.name}.spec.json"

    def sample_input(self):
        """DIR/X.npy: the one input every engine is checked on."""
        return np.load(self.dir / "X.npy")

    def input_is_image(self):
        x = self.inputs[0]
        return len(x["shape"]) == 4 and x.get("layout", "NHWC") == "NHWC"


def pool_output_size(size, window, stride, pad_begin, pad_end, dilation=1):
    """Output length of a convolution or pool along one axis (floor mode, as the op library)."""
    return (size + pad_begin + pad_end - dilation * (window - 1) - 1) // stride + 1


def program_inputs(model, names):
    """The arrays for a Tile program's inputs `names` (X, then every weight in the graph's order, as
    docs/bench-models.md says), matched by name; should the program spell a weight's name otherwise
    (a Tile identifier is stricter than a file name), by position."""
    x_name = model.inputs[0]["name"]
    weights = [w["name"] for w in model.graph["weights"]]
    arrays = {}
    rest = [n for n in names if n != x_name]
    if all(n in model.weights for n in rest):
        arrays.update({n: model.weights[n] for n in rest})
    elif len(rest) == len(weights):
        arrays.update({n: model.weights[w] for n, w in zip(rest, weights)})
    else:
        raise ValueError(f"{model.tile_path}: inputs {names[:4]}... do not match the graph's X and "
                         f"{len(weights)} weights")
    arrays[x_name if x_name in names else names[0]] = model.sample_input()
    return arrays


def softmax_logits(model):
    """(logits tensor, dense node) when the graph ends in softmax(dense(...)), else (None, None)."""
    last = model.nodes[-1]
    if last["op"] != "softmax":
        return None, None
    producer = next((n for n in model.nodes if n["output"] == last["inputs"][0]), None)
    return (last["inputs"][0], producer) if producer and producer["op"] == "dense" else (None, None)


def temper_logits(model, logits):
    """Scales the last dense layer (weights and bias) so that its logits have standard deviation 1.

    Random weights give resnet50 logits so spread out that softmax says 1.0 for one class and 0 for
    the rest: comparing such probabilities checks only the argmax. A linear layer scaled by s has
    logits scaled by s, so after this the probabilities depend on every logit again. Rewrites
    DIR/weights (every engine reads the same files); returns s."""
    _, dense = softmax_logits(model)
    s = float(1.0 / max(np.std(logits), 1e-30))
    for name in dense["inputs"][1:]:
        model.weights[name] = (model.weights[name] * s).astype(model.weights[name].dtype)
        np.save(model.dir / "weights" / f"{name}.npy", model.weights[name])
    return s
