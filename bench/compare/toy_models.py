"""Two small hand-written layer graphs (docs/bench-models.md) that use every op of the format: a CNN
(conv with bias and groups, batch norm, pools with padding, concat, flatten, dense, softmax) and a
one-layer BERT-like encoder (gather, layer norm, attention by reshape/transpose/matmul, gelu). They let
the exporters and the evaluator be tested without `tessera bench`, and without its zoo's sizes.

    python toy_models.py DIR     # writes DIR/toy_cnn and DIR/toy_bert
"""
import json
import pathlib
import sys

import numpy as np


class _Builder:
    def __init__(self, name, seed):
        self.rng = np.random.default_rng(seed)
        self.graph = {"model": name, "batch": 0, "flops": 0, "inputs": [], "outputs": ["Y"],
                      "weights": [], "nodes": []}
        self.values = {}
        self.count = 0

    def weight(self, name, shape, scale=None, positive=False):
        fan_in = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
        scale = scale if scale is not None else np.sqrt(2.0 / max(fan_in, 1))
        v = self.rng.normal(0, scale, shape).astype(np.float32)
        if positive:
            v = np.abs(v) + 0.5
        self.values[name] = v
        self.graph["weights"].append({"name": name, "dtype": "float32", "shape": list(shape)})
        return name

    def node(self, op, inputs, output=None, **attrs):
        output = output or f"t{self.count}"
        self.count += 1
        self.graph["nodes"].append({"op": op, "inputs": list(inputs), "output": output, "attrs": attrs})
        return output

    def write(self, directory, x):
        d = pathlib.Path(directory)
        (d / "weights").mkdir(parents=True, exist_ok=True)
        self.graph["batch"] = int(x.shape[0])
        self.graph["inputs"] = [{"name": "X", "dtype": str(x.dtype), "shape": list(x.shape),
                                 "layout": "NHWC" if x.ndim == 4 else "ids"}]
        (d / f"{self.graph['model']}.graph.json").write_text(json.dumps(self.graph, indent=1))
        for name, v in self.values.items():
            np.save(d / "weights" / f"{name}.npy", v)
        np.save(d / "X.npy", x)
        return d


def toy_cnn(directory, batch=2, size=9, seed=3):
    b = _Builder("toy_cnn", seed)
    t = b.node("conv2d", ["X", b.weight("c1_w", [3, 3, 3, 8]), b.weight("c1_b", [8], 0.1)],
               strides=[2, 2], pads=[1, 1, 0, 1], dilations=[1, 1], groups=1)
    t = b.node("batch_norm", [t, b.weight("bn_g", [8], positive=True), b.weight("bn_b", [8], 0.1),
                              b.weight("bn_m", [8], 0.1), b.weight("bn_v", [8], positive=True)], epsilon=1e-3)
    t = b.node("relu", [t])
    dw = b.node("conv2d", [t, b.weight("dw_w", [3, 3, 1, 8])], strides=[1, 1], pads=[1, 1, 1, 1],
                dilations=[1, 1], groups=8)
    dw = b.node("relu6", [dw])
    g2 = b.node("conv2d", [t, b.weight("g2_w", [1, 2, 4, 6])], strides=[1, 1], pads=[0, 0, 0, 1],
                dilations=[1, 1], groups=2)
    dil = b.node("conv2d", [t, b.weight("dil_w", [3, 3, 8, 4])], strides=[1, 1], pads=[2, 2, 2, 2],
                 dilations=[2, 2], groups=1)
    t = b.node("concat", [dw, g2, dil], axis=-1)                       # 8 + 6 + 4 channels
    mp = b.node("max_pool", [t], size=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    ap = b.node("avg_pool", [t], size=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    t = b.node("add", [mp, ap])
    t = b.node("concat", [t, mp], axis=2)                              # along the width
    t = b.node("mul_scalar", [t], value=0.5)
    f = b.node("flatten", [t])
    gp = b.node("global_avg_pool", [t])
    h1, w1 = (size + 2 - 3) // 2 + 1, (size + 1 - 3) // 2 + 1          # after c1
    h2, w2 = (h1 + 2 - 3) // 2 + 1, (w1 + 2 - 3) // 2 + 1              # after the pools
    d1 = b.node("dense", [f, b.weight("fc_w", [h2 * 2 * w2 * 18, 10]),
                          b.weight("fc_b", [10], 0.1)])
    d2 = b.node("dense", [gp, b.weight("gp_w", [18, 10])])
    t = b.node("add", [d1, d2])
    b.node("softmax", [t], "Y", axis=-1)
    x = np.random.default_rng(seed + 1).normal(size=(batch, size, size, 3)).astype(np.float32)
    return b.write(pathlib.Path(directory) / "toy_cnn", x)


def toy_bert(directory, batch=2, seq=5, hidden=16, heads=2, vocab=30, seed=4):
    b = _Builder("toy_bert", seed)
    hd = hidden // heads
    t = b.node("gather", [b.weight("tok_emb", [vocab, hidden], 0.5), "X"])
    t = b.node("add", [t, b.weight("pos_emb", [seq, hidden], 0.5)])
    t = b.node("layer_norm", [t, b.weight("ln0_g", [hidden], positive=True), b.weight("ln0_b", [hidden], 0.1)],
               epsilon=1e-12)
    x0 = t

    def heads_of(name):
        y = b.node("dense", [x0, b.weight(f"{name}_w", [hidden, hidden]), b.weight(f"{name}_b", [hidden], 0.1)])
        y = b.node("reshape", [y], shape=[batch, seq, heads, hd])
        return b.node("transpose", [y], perm=[0, 2, 1, 3])

    q, k, v = heads_of("q"), heads_of("k"), heads_of("v")
    kt = b.node("transpose", [k], perm=[0, 1, 3, 2])
    s = b.node("mul_scalar", [b.node("matmul", [q, kt])], value=float(1 / np.sqrt(hd)))
    p = b.node("softmax", [s], axis=-1)
    c = b.node("transpose", [b.node("matmul", [p, v])], perm=[0, 2, 1, 3])
    c = b.node("reshape", [c], shape=[batch, seq, -1])
    c = b.node("dense", [c, b.weight("o_w", [hidden, hidden]), b.weight("o_b", [hidden], 0.1)])
    t = b.node("layer_norm", [b.node("add", [c, x0]), b.weight("ln1_g", [hidden], positive=True),
                              b.weight("ln1_b", [hidden], 0.1)], epsilon=1e-12)
    h = b.node("gelu", [b.node("dense", [t, b.weight("f1_w", [hidden, 4 * hidden]), b.weight("f1_b", [4 * hidden], 0.1)])])
    h = b.node("dense", [h, b.weight("f2_w", [4 * hidden, hidden]), b.weight("f2_b", [hidden], 0.1)])
    b.node("layer_norm", [b.node("add", [h, t]), b.weight("ln2_g", [hidden], positive=True),
                          b.weight("ln2_b", [hidden], 0.1)], "Y", epsilon=1e-12)
    x = np.random.default_rng(seed + 1).integers(0, vocab, size=(batch, seq)).astype(np.int32)
    return b.write(pathlib.Path(directory) / "toy_bert", x)


TOY_MLP_TILE = """function (X[N, I], W1[I, H], B1[H], W2[H, O], B2[O]) -> (Y) {
  A[n, h : N, H] = +(X[n, i] * W1[i, h]);
  Z = A + B1;
  C = 0;
  R = cond(cmp_lt(Z, C), C, Z);
  L[n, o : N, O] = +(R[n, h] * W2[h, o]);
  L2 = L + B2;
  M[n, 0 : N, 1] = >(L2[n, o]);
  E = exp(L2 - M);
  S[n, 0 : N, 1] = +(E[n, o]);
  Y = E / S;
}
"""


def toy_mlp(directory, batch=4, inputs=12, hidden=16, outputs=5, seed=5):
    """A graph that comes with its Tile program and spec, as `tessera bench --emit-tile` writes them:
    for the Tessera worker and the comparison's plumbing before the zoo exists."""
    b = _Builder("toy_mlp", seed)
    t = b.node("dense", ["X", b.weight("W1", [inputs, hidden]), b.weight("B1", [hidden], 0.1)])
    t = b.node("relu", [t])
    t = b.node("dense", [t, b.weight("W2", [hidden, outputs]), b.weight("B2", [outputs], 0.1)])
    b.node("softmax", [t], "Y", axis=-1)
    x = np.random.default_rng(seed + 1).normal(size=(batch, inputs)).astype(np.float32)
    d = b.write(pathlib.Path(directory) / "toy_mlp", x)
    (d / "toy_mlp.tile").write_text(TOY_MLP_TILE)
    spec = {"X": {"dtype": "float32", "shape": list(x.shape)}}
    spec.update({w["name"]: {"dtype": w["dtype"], "shape": w["shape"]} for w in b.graph["weights"]})
    (d / "toy_mlp.spec.json").write_text(json.dumps({"inputs": spec}, indent=1))
    return d


if __name__ == "__main__":
    for d in (toy_cnn(sys.argv[1]), toy_bert(sys.argv[1]), toy_mlp(sys.argv[1])):
        print(d)
