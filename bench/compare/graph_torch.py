"""The layer graph (docs/bench-models.md) as a torch.nn.Module with the same math and weights, for
PyTorch eager and torch.compile. As in graph_onnx.py, images are NCHW inside (torch's conv layout):
the input is permuted once, ops that keep images keep NCHW, and an op that reads element order
(flatten, dense, reshape, ...) gets the tensor back in NHWC first."""
import math

import numpy as np
import torch
import torch.nn.functional as F

NCHW_OF_NHWC_AXIS = {0: 0, 1: 2, 2: 3, 3: 1}


class GraphModule(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.nodes = model.nodes
        self.x_name = model.inputs[0]["name"]
        self.x_image = model.input_is_image()
        self.out_name = model.outputs[0]
        self.buffer_of = {}
        conv_weights = {n["inputs"][1] for n in model.nodes if n["op"] == "conv2d"}
        for i, (name, value) in enumerate(model.weights.items()):
            if name in conv_weights:
                value = value.transpose(3, 2, 0, 1)               # HWIO -> OIHW ([CO, CI/g, KH, KW])
            self.register_buffer(f"w{i}", torch.from_numpy(np.ascontiguousarray(value)))
            self.buffer_of[name] = f"w{i}"

    def forward(self, x):
        env = {}
        nchw = set()

        def plain(n):
            return env[n].permute(0, 2, 3, 1) if n in nchw else env[n]

        def image(n):
            return env[n] if n in nchw else env[n].permute(0, 3, 1, 2)

        for name, buf in self.buffer_of.items():
            env[name] = getattr(self, buf)
        env[self.x_name] = x
        if self.x_image:
            env[self.x_name] = x.permute(0, 3, 1, 2)
            nchw.add(self.x_name)
        for node in self.nodes:
            op, ins, out, a = node["op"], node["inputs"], node["output"], node.get("attrs", {})
            image_out = False
            if op == "conv2d":
                t, b, l, r = a.get("pads", [0, 0, 0, 0])
                xi = F.pad(image(ins[0]), (l, r, t, b)) if (t, l) != (b, r) else image(ins[0])
                pad = 0 if (t, l) != (b, r) else (t, l)
                y = F.conv2d(xi, env[ins[1]], env[ins[2]] if len(ins) > 2 else None,
                             stride=a.get("strides", [1, 1]), padding=pad,
                             dilation=a.get("dilations", [1, 1]), groups=a.get("groups", 1))
                image_out = True
            elif op in ("max_pool", "avg_pool"):
                t, b, l, r = a.get("pads", [0, 0, 0, 0])
                size, strides = a["size"], a.get("strides", a["size"])
                xi = image(ins[0])
                if op == "max_pool":
                    y = F.max_pool2d(F.pad(xi, (l, r, t, b), value=-math.inf), size, strides)
                else:  # padding excluded from the count: sum of x over sum of ones
                    ones = torch.ones_like(xi[:1, :1])
                    s = F.avg_pool2d(F.pad(xi, (l, r, t, b)), size, strides)
                    c = F.avg_pool2d(F.pad(ones, (l, r, t, b)), size, strides)
                    y = s / c
                image_out = True
            elif op == "batch_norm":
                g, beta, mean, var = (env[i] for i in ins[1:])
                eps = a.get("epsilon", 1e-3)
                if env[ins[0]].dim() == 4:
                    y = F.batch_norm(image(ins[0]), mean, var, g, beta, False, 0.0, eps)
                    image_out = True
                else:
                    y = (env[ins[0]] - mean) / torch.sqrt(var + eps) * g + beta
            elif op in ("relu", "relu6", "gelu", "mul_scalar"):
                xv = env[ins[0]]
                y = {"relu": F.relu, "relu6": F.relu6, "gelu": lambda v: F.gelu(v, approximate="none"),
                     "mul_scalar": lambda v: v * a.get("value", 1.0)}[op](xv)
                image_out = ins[0] in nchw
            elif op == "add":
                if ins[0] in nchw and ins[1] in nchw:
                    y, image_out = env[ins[0]] + env[ins[1]], True
                else:
                    y = plain(ins[0]) + plain(ins[1])
            elif op == "concat":
                if all(i in nchw for i in ins):
                    y = torch.cat([env[i] for i in ins], NCHW_OF_NHWC_AXIS[a.get("axis", -1) % 4])
                    image_out = True
                else:
                    y = torch.cat([plain(i) for i in ins], a.get("axis", -1))
            elif op == "global_avg_pool":
                y = image(ins[0]).mean(dim=(2, 3))
            elif op == "flatten":
                xv = plain(ins[0])
                y = xv.reshape(xv.shape[0], -1)
            elif op == "dense":
                y = torch.matmul(plain(ins[0]), env[ins[1]])
                if len(ins) > 2:
                    y = y + env[ins[2]]
            elif op == "softmax":
                y = torch.softmax(plain(ins[0]), a.get("axis", -1))
            elif op == "gather":
                y = env[ins[0]][plain(ins[1]).long()]
            elif op == "layer_norm":
                xv = plain(ins[0])
                y = F.layer_norm(xv, xv.shape[-1:], env[ins[1]], env[ins[2]], a.get("epsilon", 1e-3))
            elif op == "reshape":
                y = plain(ins[0]).reshape(a["shape"])
            elif op == "transpose":
                y = plain(ins[0]).permute(a["perm"])
            elif op == "matmul":
                y = torch.matmul(plain(ins[0]), plain(ins[1]))
            else:
                raise ValueError(f"graph_torch: unknown op {op!r}")
            env[out] = y
            if image_out:
                nchw.add(out)
            else:
                nchw.discard(out)
        return plain(self.out_name)


def build(model):
    return GraphModule(model).eval()
