"""The layer graph (docs/bench-models.md) as a Keras 2.2.4 functional model with the same math and
weights, for PlaidML 0.7 through its Keras backend (worker_plaidml.py). Keras's default layout is
channels_last, the graph's NHWC, so images stay as they are and weights go in unchanged (conv kernels
are HWIO in both).

Layer by layer, as a Keras user would write it:
  conv2d           Conv2D; depthwise (groups == CI, kernel [KH,KW,1,CO]) DepthwiseConv2D with the
                   kernel as [KH,KW,CI,CO/CI]; pads: 'valid' when zero, 'same' when they are the pads
                   Keras's 'same' makes (TF's: the odd one at the end), else ZeroPadding2D + 'valid'.
                   Other group counts raise NotImplementedError (Keras 2.2.4 has no grouped conv).
  max_pool         MaxPooling2D, pads as conv2d; ZeroPadding2D only where the input is a relu's (>= 0,
                   so a padded 0 never wins), else PlaidML's own pool with explicit pads (a padded tap
                   is out of bounds in Tile, so it never wins either).
  avg_pool         AveragePooling2D 'valid'/'same' (PlaidML divides by the count of real elements, as
                   the graph does); other pads: PlaidML's pool with explicit pads (the same count).
  batch_norm       BatchNormalization(epsilon) with [gamma, beta, mean, variance].
  relu, relu6      ReLU(), ReLU(max_value=6).
  add, concat      Add, Concatenate(axis); a weight operand of add becomes a constant in a Lambda.
  flatten, global_avg_pool, dense, softmax
                   Flatten (NHWC order, as the graph), GlobalAveragePooling2D, Dense (any rank),
                   Activation('softmax') on rank 2, Softmax(axis) otherwise.
  gather           Embedding with the table as its weights.
  layer_norm, reshape, transpose, matmul, mul_scalar
                   Lambdas over backend ops (Keras 2.2.4 has no LayerNormalization; matmul is
                   PlaidML's numpy-style op.matmul).
  gelu             NotImplementedError: the graph's gelu is the exact erf form and PlaidML 0.7's Tile
                   has no erf (its intrinsics stop at exp, log, tanh, the trigonometric functions).
"""
import numpy as np

import keras
from keras import backend as K
from keras import layers


def _same_pads(size, window, stride, dilation=1):
    """(before, after) that Keras's padding='same' gives along one axis (TensorFlow's rule, which
    PlaidML's backend follows as SAME_UPPER)."""
    out = -(-size // stride)
    total = max((out - 1) * stride + dilation * (window - 1) + 1 - size, 0)
    return total // 2, total - total // 2


def _padding(shape, window, strides, pads, dilations=(1, 1)):
    """'valid', 'same' or None (explicit padding needed) for NHWC `shape` and pads [t, b, l, r]."""
    t, b, l, r = pads
    if (t, b, l, r) == (0, 0, 0, 0):
        return "valid"
    if (_same_pads(shape[1], window[0], strides[0], dilations[0]) == (t, b)
            and _same_pads(shape[2], window[1], strides[1], dilations[1]) == (l, r)):
        return "same"
    return None


def _plaidml_pool(x, mode, size, strides, pads):
    """PlaidML's pool with explicit pads [t, b, l, r] (NHWC): out-of-bounds taps are skipped by max
    and not counted by avg."""
    import plaidml.op as op
    t, b, l, r = pads
    return op.pool(x, op.PoolMode.MAX if mode == "max" else op.PoolMode.AVG, tuple(size), tuple(strides),
                   pads=(t, l, b, r), padding=op.AutoPadding.EXPLICIT, data_format=op.PoolDataFormat.NXC)


def _layer_norm(x, gamma, beta, eps):
    mean = K.mean(x, axis=-1, keepdims=True)
    c = x - mean
    var = K.mean(c * c, axis=-1, keepdims=True)
    return c / K.sqrt(var + eps) * K.constant(gamma) + K.constant(beta)


def _same_shape(shape):
    return shape


def _matmul(ab):
    import plaidml.op as op
    return op.matmul(ab[0], ab[1])


def _matmul_shape(shapes):
    a, b = shapes
    batch = np.broadcast_shapes(tuple(a[:-2]), tuple(b[:-2]))
    return tuple(batch) + (a[-2], b[-1])


def _reshape_shape(shape, target):
    target = list(target)
    if -1 in target:
        known = int(np.prod([d for d in target if d != -1]))
        target[target.index(-1)] = int(np.prod(shape)) // known
    return tuple(target)


def build(model):
    """A keras.models.Model computing the graph's output from its input (fixed batch: the graph's)."""
    spec = model.inputs[0]
    dtype = "int32" if spec["dtype"].startswith("int") else "float32"
    inp = layers.Input(batch_shape=tuple(spec["shape"]), dtype=dtype, name=spec["name"])
    env = {spec["name"]: inp}
    producer = {}
    W = model.weights

    def shape(name):
        return tuple(W[name].shape) if name in W else tuple(K.int_shape(env[name]))

    for node in model.nodes:
        op, ins, out, a = node["op"], node["inputs"], node["output"], node.get("attrs", {})
        x = env.get(ins[0])
        if op == "conv2d":
            w = W[ins[1]]
            kh, kw, cig, co = w.shape
            ci = shape(ins[0])[3]
            groups = a.get("groups", 1)
            strides = tuple(a.get("strides", [1, 1]))
            dil = tuple(a.get("dilations", [1, 1]))
            pads = a.get("pads", [0, 0, 0, 0])
            bias = [W[ins[2]]] if len(ins) > 2 else []
            padding = _padding(shape(ins[0]), (kh, kw), strides, pads, dil)
            if padding is None:
                x = layers.ZeroPadding2D(((pads[0], pads[1]), (pads[2], pads[3])))(x)
                padding = "valid"
            if groups == 1:
                layer = layers.Conv2D(co, (kh, kw), strides=strides, padding=padding, dilation_rate=dil,
                                      use_bias=bool(bias))
                y = layer(x)
                layer.set_weights([w] + bias)
            elif groups == ci and cig == 1 and co % ci == 0:
                if dil != (1, 1):
                    raise NotImplementedError(f"conv2d: depthwise with dilations {list(dil)} (Keras 2.2.4's "
                                              "DepthwiseConv2D has no dilation_rate)")
                layer = layers.DepthwiseConv2D((kh, kw), strides=strides, padding=padding,
                                               depth_multiplier=co // ci, use_bias=bool(bias))
                y = layer(x)
                layer.set_weights([w.reshape(kh, kw, ci, co // ci)] + bias)
            else:
                raise NotImplementedError(f"conv2d with groups={groups} (input channels {ci}): Keras 2.2.4 "
                                          "has plain and depthwise convolutions only")
        elif op in ("max_pool", "avg_pool"):
            size = tuple(a["size"])
            strides = tuple(a.get("strides", a["size"]))
            pads = a.get("pads", [0, 0, 0, 0])
            padding = _padding(shape(ins[0]), size, strides, pads)
            cls = layers.MaxPooling2D if op == "max_pool" else layers.AveragePooling2D
            if padding is not None:
                y = cls(size, strides, padding=padding)(x)
            elif op == "max_pool" and producer.get(ins[0]) in ("relu", "relu6"):
                y = layers.ZeroPadding2D(((pads[0], pads[1]), (pads[2], pads[3])))(x)
                y = cls(size, strides, padding="valid")(y)
            else:
                n, h, w_, c = shape(ins[0])
                ho = (h + pads[0] + pads[1] - size[0]) // strides[0] + 1
                wo = (w_ + pads[2] + pads[3] - size[1]) // strides[1] + 1
                y = layers.Lambda(lambda t, m=op[:3], s=size, st=strides, p=pads: _plaidml_pool(t, m, s, st, p),
                                  output_shape=lambda _, o=(n, ho, wo, c): o)(x)
        elif op == "batch_norm":
            layer = layers.BatchNormalization(axis=-1, epsilon=a.get("epsilon", 1e-3))
            y = layer(x)
            layer.set_weights([W[i] for i in ins[1:5]])
        elif op == "relu":
            y = layers.ReLU()(x)
        elif op == "relu6":
            y = layers.ReLU(max_value=6.0)(x)
        elif op == "gelu":
            raise NotImplementedError("gelu: the graph's gelu is exact, 0.5 x (1 + erf(x / sqrt 2)), and "
                                      "PlaidML 0.7 has no erf (neither its Keras backend nor Tile's intrinsics)")
        elif op == "add":
            if ins[0] in W and ins[1] in W:
                raise NotImplementedError("add of two weights")
            if ins[0] in W or ins[1] in W:
                t_name, w_name = (ins[1], ins[0]) if ins[0] in W else (ins[0], ins[1])
                out_shape = np.broadcast_shapes(shape(t_name), shape(w_name))
                y = layers.Lambda(lambda t, c=W[w_name]: t + K.constant(c),
                                  output_shape=lambda _, o=tuple(out_shape): o)(env[t_name])
            else:
                y = layers.Add()([env[ins[0]], env[ins[1]]])
        elif op == "mul_scalar":
            y = layers.Lambda(lambda t, v=float(a["value"]): t * v, output_shape=_same_shape)(x)
        elif op == "concat":
            y = layers.Concatenate(axis=a.get("axis", -1))([env[i] for i in ins])
        elif op == "flatten":
            y = layers.Flatten()(x)
        elif op == "global_avg_pool":
            y = layers.GlobalAveragePooling2D()(x)
        elif op == "dense":
            w = W[ins[1]]
            bias = [W[ins[2]]] if len(ins) > 2 else []
            layer = layers.Dense(w.shape[1], use_bias=bool(bias))
            y = layer(x)
            layer.set_weights([w] + bias)
        elif op == "softmax":
            axis = a.get("axis", -1)
            rank = len(shape(ins[0]))
            y = (layers.Activation("softmax")(x) if rank == 2 and axis in (-1, 1)
                 else layers.Softmax(axis=axis)(x))
        elif op == "gather":
            table = W[ins[0]]
            layer = layers.Embedding(table.shape[0], table.shape[1])
            y = layer(env[ins[1]])
            layer.set_weights([table])
        elif op == "layer_norm":
            y = layers.Lambda(lambda t, g=W[ins[1]], b=W[ins[2]], e=a.get("epsilon", 1e-3): _layer_norm(t, g, b, e),
                              output_shape=_same_shape)(x)
        elif op == "reshape":
            target = _reshape_shape(shape(ins[0]), a["shape"])
            y = layers.Lambda(lambda t, s=target: K.reshape(t, s), output_shape=lambda _, s=target: s)(x)
        elif op == "transpose":
            perm = tuple(a["perm"])
            target = tuple(shape(ins[0])[p] for p in perm)
            y = layers.Lambda(lambda t, p=perm: K.permute_dimensions(t, p), output_shape=lambda _, s=target: s)(x)
        elif op == "matmul":
            y = layers.Lambda(_matmul, output_shape=_matmul_shape)([env[ins[0]], env[ins[1]]])
        else:
            raise NotImplementedError(f"graph_keras: op {op!r}")
        env[out] = y
        producer[out] = op
    return keras.models.Model(inp, env[model.outputs[0]])
