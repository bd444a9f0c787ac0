"""Layer by layer: Tessera's kernels against OpenVINO's layers for one model of bench/compare.

    build/bench-venvs/ort/bin/python bench/compare/layers.py build/compare/resnet50-b1 [--top 20]

Runs the model directory's ONNX graph (run.py writes it) on OpenVINO's CPU plugin with per-layer
counters (f32, 2 threads, as worker_openvino.py), and its Tile program with `tessera run --profile`
(weights compiled in, as worker_tessera.py; the schedules of `--cache`, build/compare-cache.db by
default, so a model that run.py tuned runs its tuned kernels), each `--repeat` times, and prints
the medians as one markdown report (the engines alternate in `--rounds` rounds of `--repeat`
runs each):

- the totals: each engine's run, the sum of its layers, and how much of each sum the matched
  contractions take;
- the contractions (convolutions, dense layers, matrix products) matched one to one, ordered by
  how much longer Tessera takes than OpenVINO: output shape, GFLOP/s each, the time ratio.

A contraction is matched by its floating-point operations (2 per multiply-add, counted from the
layer's shapes on OpenVINO's side and carried in the profile on Tessera's), in execution order
among equals: both count every tap of a padded window, so a layer's count is the same integer on
both sides, and equal counts (a residual network's repeated blocks) pair in the order they run.
What does not match (OpenVINO's fused elementwise layers, Tessera's elementwise kernels and host
steps) is the rest, summed by OpenVINO's layer type and by Tessera's kernel size.
"""
import argparse
import collections
import json
import math
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
CONTRACTIONS = ("Convolution", "GroupConvolution", "FullyConnected", "MatMul", "Gemm")


def contraction_flops(node_type, ins, outs):
    """2 x multiply-adds of an OpenVINO layer from its shapes, or 0 when it is not a contraction.
    Convolutions: each output takes weights / output channels terms (Cin x kh x kw, or Cin / groups
    of it: a group convolution's weights [G, Cout/G, Cin/G, kh, kw] hold G x Cout/G = Cout
    filters); products: K, the first operand's last axis."""
    if node_type not in CONTRACTIONS or len(ins) < 2 or not outs:
        return 0
    out = outs[0]
    if node_type in ("Convolution", "GroupConvolution"):
        return 2 * math.prod(out) * math.prod(ins[1]) // out[1]
    rows = math.prod(out[:-1])
    return 2 * math.prod(out) * (math.prod(ins[0]) // rows) if rows else 0


def match(tessera_kernels, openvino_layers):
    """Pairs (kernel, layer) of equal flops, in order among equals, and the unmatched of each."""
    queues = collections.defaultdict(collections.deque)
    for k in tessera_kernels:
        queues[k["flops"]].append(k)
    pairs, left = [], []
    for layer in openvino_layers:
        q = queues.get(layer["flops"]) if layer["flops"] else None
        if q:
            pairs.append((q.popleft(), layer))
        else:
            left.append(layer)
    matched = {id(k) for k, _ in pairs}
    return pairs, [k for k in tessera_kernels if id(k) not in matched], left


class OpenVinoProfile:
    """The model compiled once by OpenVINO with per-layer counters; `time(n)` adds n runs."""

    def __init__(self, onnx_path, x):
        import openvino as ov
        core = ov.Core()
        self.compiled = core.compile_model(core.read_model(str(onnx_path)), "CPU", {
            "INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 2, "PERFORMANCE_HINT": "LATENCY",
            "NUM_STREAMS": 1, "PERF_COUNT": True})
        self.shapes = {}
        for op in self.compiled.get_runtime_model().get_ordered_ops():
            ins = [list(op.input(i).get_partial_shape().to_shape()) for i in range(op.get_input_size())]
            outs = [list(op.get_output_partial_shape(i).to_shape()) for i in range(op.get_output_size())]
            self.shapes[op.get_friendly_name()] = (ins, outs)
        self.x = x
        self.request = self.compiled.create_infer_request()
        for _ in range(3):
            self.request.infer({0: x})
        self.runs, self.times, self.order = [], collections.defaultdict(list), []

    def time(self, n):
        for _ in range(n):
            start = time.perf_counter()
            self.request.infer({0: self.x})
            self.runs.append((time.perf_counter() - start) * 1e3)
            for p in self.request.get_profiling_info():
                if p.status != p.Status.EXECUTED:
                    continue
                if p.node_name not in self.times:
                    self.order.append((p.node_name, p.node_type, p.exec_type))
                self.times[p.node_name].append(p.real_time.total_seconds() * 1e3)

    def layers(self):
        """Per layer in execution order: name, type, OpenVINO's kernel, output shape, median ms, flops."""
        result = []
        for name, node_type, exec_type in self.order:
            ins, outs = self.shapes.get(name, ([], []))
            result.append({"name": name, "type": node_type, "exec": exec_type, "out": outs[0] if outs else [],
                           "ms": statistics.median(self.times[name]),
                           "flops": contraction_flops(node_type, ins, outs)})
        return result


def tessera_profile(model_dir, name, repeat, tessera, device, cache):
    """One `tessera run --profile` of the program with every input but X compiled in: per step its
    kind, name, median ms and flops (kernels), and the median run in ms."""
    inputs = json.loads((model_dir / f"{name}.spec.json").read_text())["inputs"]
    args = [tessera, "run", str(model_dir / f"{name}.tile"), "--device", device, "--repeat", str(repeat),
            "--const-except", "X"]
    for n in inputs:
        args += ["--in", f"{n}={model_dir / ('X.npy' if n == 'X' else f'weights/{n}.npy')}"]
    env = dict(os.environ, TESSERA_CACHE=str(cache), TESSERA_TUNE=os.environ.get("TESSERA_TUNE", "cached"))
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(args + ["--out-dir", tmp, "--profile", f"{tmp}/profile.json"], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        profile = json.loads(pathlib.Path(tmp, "profile.json").read_text())
    steps = [{"kind": s["kind"], "name": s["name"], "ms": s["seconds"] * 1e3, "flops": round(s.get("flops", 0))}
             for s in profile["steps"]]
    return steps, profile["run_seconds"] * 1e3


def median_steps(rounds):
    """Steps of several profiles of one program (the same steps in the same order) with the median
    of their times."""
    return [dict(steps[0], ms=statistics.median(s["ms"] for s in steps)) for steps in zip(*rounds)]


def gflops(flops, ms):
    return flops / ms / 1e6 if ms > 0 else 0.0


def summed(entries, key, top=None):
    """'KEY COUNT x MS ms, ...' of entries grouped by entries' `key`, longest total first."""
    groups = collections.defaultdict(lambda: [0, 0.0])
    for e in entries:
        groups[e[key]][0] += 1
        groups[e[key]][1] += e["ms"]
    ordered = sorted(groups.items(), key=lambda g: -g[1][1])[:top]
    return ", ".join(f"{k} {n} x {ms:.3f} ms" for k, (n, ms) in ordered)


def report(model, tessera_steps, tessera_run, openvino_layers, openvino_run, top):
    tessera_kernels = [s for s in tessera_steps if s["kind"] == "kernel"]
    tessera_other = sum(s["ms"] for s in tessera_steps if s["kind"] != "kernel")
    pairs, kernels_left, layers_left = match(tessera_kernels, openvino_layers)
    t_matched = sum(k["ms"] for k, _ in pairs)
    o_matched = sum(layer["ms"] for _, layer in pairs)
    t_rest = sum(k["ms"] for k in kernels_left) + tessera_other
    o_rest = sum(layer["ms"] for layer in layers_left)
    lines = [f"# {model}: Tessera's kernels against OpenVINO's layers", "",
             "| | Tessera | OpenVINO | Tessera / OpenVINO |", "|---|---|---|---|"]
    for label, t, o in (("run (median ms)", tessera_run, openvino_run),
                        ("sum of steps / layers", sum(k["ms"] for k in tessera_kernels) + tessera_other,
                         sum(layer["ms"] for layer in openvino_layers)),
                        (f"{len(pairs)} matched contractions", t_matched, o_matched),
                        (f"the rest ({len(kernels_left)} kernels and host steps / {len(layers_left)} layers)",
                         t_rest, o_rest)):
        lines.append(f"| {label} | {t:.3f} | {o:.3f} | {t / o if o else float('inf'):.2f} |")
    lines += ["", f"Contractions by Tessera's excess time (top {top}):", "",
              "| Tessera kernel | OpenVINO layer (its kernel) | output | MFLOP | Tessera ms | OpenVINO ms | "
              "Tessera GFLOP/s | OpenVINO GFLOP/s | ratio |",
              "|---|---|---|---|---|---|---|---|---|"]
    for k, layer in sorted(pairs, key=lambda p: p[1]["ms"] - p[0]["ms"])[:top]:
        shape = "x".join(map(str, layer["out"]))
        ratio = k["ms"] / layer["ms"] if layer["ms"] else float("inf")
        lines.append(f"| {k['name']} | {layer['name']} ({layer['exec']}) | {shape} | {k['flops'] / 1e6:.1f} | "
                     f"{k['ms']:.3f} | {layer['ms']:.3f} | {gflops(k['flops'], k['ms']):.0f} | "
                     f"{gflops(layer['flops'], layer['ms']):.0f} | {ratio:.2f} |")
    lines += ["", "The rest, OpenVINO's layers by type: " + summed(layers_left, "type"),
              "", "The rest, Tessera's kernels by flops (1 per output element): " + summed(kernels_left, "flops", top)
              + (f", host steps, transfers and fills {tessera_other:.3f} ms" if tessera_other else "")]
    unmatched = [f"{layer['name']} ({layer['type']}, {layer['flops'] / 1e6:.1f} MFLOP)"
                 for layer in layers_left if layer["flops"]]
    if unmatched:
        lines += ["", "OpenVINO contractions with no Tessera kernel of the same flops: " + ", ".join(unmatched)]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir", type=pathlib.Path, help="build/compare/MODEL-bB (run.py writes it)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of the two engines")
    parser.add_argument("--repeat", type=int, default=10, help="timed runs per engine and round (medians)")
    parser.add_argument("--top", type=int, default=20, help="contractions listed")
    parser.add_argument("--device", default="cpu", help="Tessera's device")
    parser.add_argument("--cache", type=pathlib.Path, default=REPO / "build/compare-cache.db",
                        help="Tessera's kernel cache (TESSERA_TUNE=cached unless set)")
    parser.add_argument("--tessera", default=os.environ.get("TESSERA_BIN", str(REPO / ".venv/bin/tessera")))
    args = parser.parse_args()
    graph = next(args.model_dir.glob("*.graph.json"), None)
    if graph is None:
        sys.exit(f"{args.model_dir}: no *.graph.json (run bench/compare/run.py for the model first)")
    name = json.loads(graph.read_text())["model"]
    onnx_path = args.model_dir / f"{name}.onnx"
    if not onnx_path.exists():
        sys.exit(f"{onnx_path}: missing (run.py writes it when it runs ort or openvino)")
    import numpy as np
    openvino = OpenVinoProfile(onnx_path, np.load(args.model_dir / "X.npy"))
    tessera_rounds, tessera_runs = [], []
    # Rounds alternate the engines, so that a slow spell of this shared machine falls on both.
    for _ in range(args.rounds):
        openvino.time(args.repeat)
        steps, run_ms = tessera_profile(args.model_dir, name, args.repeat, args.tessera, args.device, args.cache)
        tessera_rounds.append(steps)
        tessera_runs.append(run_ms)
    print(report(f"{name} ({args.model_dir.name}, {args.rounds} alternating rounds of {args.repeat} runs)",
                 median_steps(tessera_rounds), statistics.median(tessera_runs), openvino.layers(),
                 statistics.median(openvino.runs), args.top))

if __name__ == "__main__":
    main()
