"""The layer graph (docs/bench-models.md) as an ONNX model with the same math and the same weights, for
ONNX Runtime and OpenVINO.

Images: the graph is NHWC; ONNX's Conv and pools are NCHW. The input is transposed once, and image
tensors stay NCHW through the ops that keep images (conv2d, batch_norm, pools, concat, elementwise);
an op that reads a tensor's element order (flatten, dense, reshape, softmax, ...) gets it transposed
back to NHWC first, so that e.g. flatten's order is the graph's. Kernels go HWIO -> OIHW at export
([KH,KW,CI/g,CO] -> [CO,CI/g,KH,KW] is ONNX's grouped layout too).

    python graph_onnx.py DIR [OUT.onnx]     # default DIR/MODEL.onnx
"""
import math
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from graph_io import Model

OPSET = 17  # LayerNormalization is a single op from 17 on
NCHW_OF_NHWC_AXIS = {0: 0, 1: 2, 2: 3, 3: 1}

_DTYPES = {"float32": TensorProto.FLOAT, "int32": TensorProto.INT32, "int64": TensorProto.INT64}


class _Exporter:
    def __init__(self, model):
        self.model = model
        self.nodes = []
        self.inits = {}
        self.nchw = set()        # names of tensors held NCHW (images); all others are as in the graph
        self.nhwc_copy = {}      # image name -> its NHWC transpose, made once
        self.nchw_copy = {}      # NHWC name (the input X) -> its NCHW transpose, made once
        self.count = 0

    def fresh(self, hint):
        self.count += 1
        return f"{hint}__{self.count}"

    def const(self, value, hint):
        name = self.fresh(hint)
        self.inits[name] = numpy_helper.from_array(np.asarray(value), name)
        return name

    def add(self, op, inputs, output=None, **attrs):
        output = output or self.fresh(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [output], **attrs))
        return output

    def plain(self, name):
        """The tensor in the graph's own layout (NHWC for images)."""
        if name not in self.nchw:
            return name
        if name not in self.nhwc_copy:
            self.nhwc_copy[name] = self.add("Transpose", [name], self.fresh(name + "_nhwc"), perm=[0, 2, 3, 1])
        return self.nhwc_copy[name]

    def image(self, name):
        """The tensor as NCHW (it is a rank-4 NHWC image in the graph)."""
        if name in self.nchw:
            return name
        if name not in self.nchw_copy:
            out = self.add("Transpose", [name], self.fresh(name + "_nchw"), perm=[0, 3, 1, 2])
            self.nchw.add(out)
            self.nchw_copy[name] = out
        return self.nchw_copy[name]

    def as_image_out(self, op, inputs, output, **attrs):
        self.add(op, inputs, output, **attrs)
        self.nchw.add(output)
        return output

    def node(self, n):
        op, ins, out, a = n["op"], n["inputs"], n["output"], n.get("attrs", {})
        W = self.model.weights
        if op == "conv2d":
            w = W[ins[1]].transpose(3, 2, 0, 1)                     # HWIO -> OIHW
            args = [self.image(ins[0]), self.const(w.astype(np.float32), ins[1])]
            if len(ins) > 2:
                args.append(ins[2])
            t, b, l, r = a.get("pads", [0, 0, 0, 0])
            return self.as_image_out("Conv", args, out, kernel_shape=list(w.shape[2:]),
                                     strides=a.get("strides", [1, 1]), pads=[t, l, b, r],
                                     dilations=a.get("dilations", [1, 1]), group=a.get("groups", 1))
        if op in ("max_pool", "avg_pool"):
            t, b, l, r = a.get("pads", [0, 0, 0, 0])
            kw = dict(kernel_shape=a["size"], strides=a.get("strides", a["size"]), pads=[t, l, b, r])
            if op == "avg_pool":
                kw["count_include_pad"] = 0
            return self.as_image_out("MaxPool" if op == "max_pool" else "AveragePool",
                                     [self.image(ins[0])], out, **kw)
        if op == "batch_norm":
            eps = a.get("epsilon", 1e-3)
            if ins[0] in self.nchw or self._rank(ins[0]) == 4:
                return self.as_image_out("BatchNormalization", [self.image(ins[0])] + ins[1:], out, epsilon=eps)
            x, g, beta, mean, var = ins                            # over the last axis of a non-image
            scale = self.add("Div", [g, self.add("Sqrt", [self.add("Add", [var, self.const(np.float32(eps), "eps")])])])
            return self.add("Add", [self.add("Mul", [self.add("Sub", [x, mean]), scale]), beta], out)
        if op in ("relu", "relu6", "gelu", "mul_scalar"):
            x = ins[0]
            keep = x in self.nchw                                   # elementwise: any layout
            if op == "relu":
                self.add("Relu", [x], out)
            elif op == "relu6":
                self.add("Clip", [x, self.const(np.float32(0), "zero"), self.const(np.float32(6), "six")], out)
            elif op == "mul_scalar":
                self.add("Mul", [x, self.const(np.float32(a["value"]), "scalar")], out)
            else:                                                   # 0.5 x (1 + erf(x / sqrt 2))
                e = self.add("Erf", [self.add("Div", [x, self.const(np.float32(math.sqrt(2)), "sqrt2")])])
                h = self.add("Mul", [x, self.add("Add", [e, self.const(np.float32(1), "one")])])
                self.add("Mul", [h, self.const(np.float32(0.5), "half")], out)
            if keep:
                self.nchw.add(out)
            return out
        if op == "add":
            if ins[0] in self.nchw and ins[1] in self.nchw:
                return self.as_image_out("Add", ins, out)
            return self.add("Add", [self.plain(i) for i in ins], out)
        if op == "concat":
            if all(i in self.nchw for i in ins):
                axis = NCHW_OF_NHWC_AXIS[a.get("axis", -1) % 4]
                return self.as_image_out("Concat", ins, out, axis=axis)
            return self.add("Concat", [self.plain(i) for i in ins], out, axis=a.get("axis", -1))
        if op == "global_avg_pool":
            g = self.add("GlobalAveragePool", [self.image(ins[0])])
            return self.add("Flatten", [g], out, axis=1)
        if op == "flatten":
            return self.add("Flatten", [self.plain(ins[0])], out, axis=1)
        if op == "dense":
            y = self.add("MatMul", [self.plain(ins[0]), ins[1]], out if len(ins) == 2 else None)
            return y if len(ins) == 2 else self.add("Add", [y, ins[2]], out)
        if op == "softmax":
            return self.add("Softmax", [self.plain(ins[0])], out, axis=a.get("axis", -1))
        if op == "gather":
            return self.add("Gather", [ins[0], self.plain(ins[1])], out, axis=0)
        if op == "layer_norm":
            return self.add("LayerNormalization", [self.plain(ins[0]), ins[1], ins[2]], out, axis=-1,
                            epsilon=a.get("epsilon", 1e-3))
        if op == "reshape":
            return self.add("Reshape", [self.plain(ins[0]), self.const(np.array(a["shape"], np.int64), "shape")], out)
        if op == "transpose":
            return self.add("Transpose", [self.plain(ins[0])], out, perm=a["perm"])
        if op == "matmul":
            return self.add("MatMul", [self.plain(ins[0]), self.plain(ins[1])], out)
        raise ValueError(f"graph_onnx: unknown op {op!r}")

    def _rank(self, name):
        return self.ranks.get(name, 0)

    def export(self):
        m = self.model
        # Ranks of every tensor, from a shape-only pass of the reference evaluator on zeros would be
        # costly; the graph's ops keep rank except the few that change it, tracked here.
        self.ranks = {i["name"]: len(i["shape"]) for i in m.inputs}
        self.ranks.update({k: v.ndim for k, v in m.weights.items()})
        for n in m.nodes:
            op, ins = n["op"], n["inputs"]
            r = {"global_avg_pool": 2, "flatten": 2, "reshape": len(n.get("attrs", {}).get("shape", [])),
                 "gather": self.ranks.get(ins[-1], 0) + 1}.get(op)
            if op in ("add", "matmul"):
                r = max(self.ranks[i] for i in ins)
            self.ranks[n["output"]] = r if r is not None else self.ranks[ins[0]]
        x = m.inputs[0]
        for n in m.nodes:
            self.node(n)
        y = m.outputs[0]
        final = self.plain(y)
        outputs = []
        if final != y:
            self.add("Identity", [final], "Y_out")
            out_name = "Y_out"
        else:
            out_name = y
        for w in m.graph["weights"]:
            if w["name"] not in self.inits and any(w["name"] in nd.input for nd in self.nodes):
                self.inits[w["name"]] = numpy_helper.from_array(m.weights[w["name"]], w["name"])
        outputs.append(helper.make_tensor_value_info(
            out_name, TensorProto.FLOAT, [f"y{i}" for i in range(self.ranks[y])]))
        inp = helper.make_tensor_value_info(x["name"], _DTYPES[x["dtype"]], x["shape"])
        g = helper.make_graph(self.nodes, m.name, [inp], outputs, initializer=list(self.inits.values()))
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="tessera-bench-compare")
        model.ir_version = 8  # readable by every runtime of the last few years
        onnx.checker.check_model(model)
        return model


def export(model, extra_output=None):
    """An onnx.ModelProto for a graph_io.Model; its input is the graph's X (NHWC for images).
    extra_output: the name of another tensor of the graph to output too (in the graph's layout)."""
    e = _Exporter(model)
    proto = e.export()
    if extra_output:
        name = e.plain(extra_output)
        proto.graph.node.extend(e.nodes[len(proto.graph.node):])   # a transpose plain() may add
        proto.graph.output.append(helper.make_tensor_value_info(
            name, TensorProto.FLOAT, [f"z{i}" for i in range(e.ranks[extra_output])]))
    return proto


def output_name(proto):
    return proto.graph.output[0].name


if __name__ == "__main__":
    mdl = Model(sys.argv[1])
    path = sys.argv[2] if len(sys.argv) > 2 else str(mdl.dir / f"{mdl.name}.onnx")
    proto = export(mdl)
    onnx.save(proto, path)
    print(path)
