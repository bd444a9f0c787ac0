"""Compares Tessera with ONNX Runtime, OpenVINO, PyTorch and PlaidML on the model zoo of `tessera bench`
(README.md here). Runs in the ort venv (setup.sh); each engine runs in its own worker process and venv.

For each model and batch: `tessera bench MODEL --batch B --emit-tile DIR` writes the Tile program, the
layer graph, the weights and a sample input; every engine's worker loads it; each engine's output for
DIR/X.npy is compared with the reference engine's (ONNX Runtime); then the engines take turns, round by
round (round r starts at engine r, so none always runs first or after the same neighbour), each timing
K iterations. Medians and p90s of the per-iteration times go to bench/results/compare-CPU.{md,json,png}.
"""
import argparse
import json
import os
import pathlib
import shlex
import subprocess
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

import report  # noqa: E402
from graph_io import Model  # noqa: E402

# TESSERA_CPU: the CPU Tessera compiles for (x86-64-v3: AVX2 code); ONEDNN_MAX_CPU_ISA: the widest
# kernels OpenVINO's CPU plugin takes. The workers inherit them; ONNX Runtime and PyTorch have none.
ISA_SETTINGS = ("TESSERA_CPU", "ONEDNN_MAX_CPU_ISA")
VENVS = pathlib.Path(os.environ.get("BENCH_VENVS", REPO / "build" / "bench-venvs"))
DEFAULT_ENGINES = "ort,openvino,torch-eager,torch-compile,tessera-cpu"


def tessera_python():
    return os.environ.get("TESSERA_PYTHON", str(REPO / ".venv" / "bin" / "python"))


def tessera_binary():
    if "TESSERA_BIN" in os.environ:
        return os.environ["TESSERA_BIN"]
    for p in (REPO / ".venv" / "bin" / "tessera", REPO / "build" / "frontends" / "cli" / "tessera"):
        if p.exists():
            return str(p)
    raise SystemExit("no tessera binary: build it (make build) or set TESSERA_BIN")


def tessera_devices():
    """`tessera devices`: what opencl:0 and vulkan:0 are here (on a machine without a GPU, pocl and
    llvmpipe: the same CPU cores)."""
    try:
        return subprocess.run([tessera_binary(), "devices"], capture_output=True, text=True, timeout=120).stdout.strip()
    except (OSError, SystemExit, subprocess.SubprocessError) as e:
        return f"unknown ({e})"


def stale_module(engines):
    """A warning where a Tessera worker would import a module older than the binary: the workers
    import the project venv's module, which `make build` installs, while `ninja` alone refreshes
    only the binary (TESSERA_BIN). A run of the older module once timed code two commits behind."""
    if not any(e.startswith("tessera-") for e in engines):
        return ""
    try:
        module = subprocess.run([tessera_python(), "-c", "from tessera import _native; print(_native.__file__)"],
                                capture_output=True, text=True, timeout=120, check=True).stdout.strip()
        binary = tessera_binary()
    except (OSError, SystemExit, subprocess.SubprocessError):
        return ""
    if os.path.getmtime(binary) - os.path.getmtime(module) < 60:
        return ""
    return (f"warning: the Tessera workers import {module}, older than {binary}: "
            "`make build` installs the module the binary was built with")


def engine_command(engine, model_dir, args):
    """The worker's command line for an engine name: ort, openvino, torch-eager, torch-compile,
    plaidml (PlaidML 0.7 on llvm_cpu.0 through Keras 2.2.4, in the venv bench/keras/setup_plaidml.sh makes),
    plaidml-opencl (the same on its OpenCL device over PoCL, shown as a GPU by pocl_as_gpu.c),
    tessera-cpu, tessera-opencl (opencl:0), tessera-vulkan (vulkan:0), tessera-DEVICE."""
    py = lambda family: str(VENVS / family / "bin" / "python")  # noqa: E731
    if engine == "ort":
        return [py("ort"), HERE / "worker_ort.py", model_dir]
    if engine == "openvino":
        return [py("ort"), HERE / "worker_openvino.py", model_dir]
    if engine == "plaidml":
        return [py("plaidml"), HERE / "worker_plaidml.py", model_dir]
    if engine == "plaidml-opencl":
        return [py("plaidml"), HERE / "worker_plaidml.py", model_dir, "--device", "opencl"]
    if engine.startswith("torch-"):
        return [py("torch"), HERE / "worker_torch.py", model_dir, "--mode", engine[len("torch-"):]]
    if engine.startswith("tessera-"):
        device = engine[len("tessera-"):]
        device = {"opencl": "opencl:0", "vulkan": "vulkan:0"}.get(device, device)
        return [tessera_python(), HERE / "worker_tessera.py", model_dir, "--device", device,
                "--tune-seconds", str(args.tessera_tune_seconds), "--weights", args.tessera_weights]
    raise SystemExit(f"unknown engine {engine!r}")


def tune_policy(setting, engine):
    """TESSERA_TUNE for an engine from --tessera-tune: one policy ("full"), or one per Tessera engine
    ("cpu=full,opencl=off"): tuning every kernel on a slow device can take longer than the run."""
    if "=" not in setting:
        return setting
    policies = dict(item.split("=", 1) for item in setting.split(","))
    return policies.get(engine[len("tessera-"):], "") if engine.startswith("tessera-") else ""


class Worker:
    def __init__(self, engine, model_dir, args, log):
        env = dict(os.environ, TESSERA_CACHE=str(args.cache), PYTHONUNBUFFERED="1")
        if engine == "plaidml-opencl":
            # The loader looks at LD_LIBRARY_PATH once, when the process starts.
            shim = VENVS / "plaidml" / "pocl-as-gpu"
            if not (shim / "libOpenCL.so").exists():
                raise RuntimeError(f"plaidml-opencl: no {shim}/libOpenCL.so; run bench/compare/setup.sh")
            env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(shim), env.get("LD_LIBRARY_PATH")]))
            env["PLAIDML_EXPERIMENTAL_CONFIG"] = str(HERE / "plaidml-pocl.json")
        tune = tune_policy(args.tessera_tune, engine)
        if tune:
            env["TESSERA_TUNE"] = tune
        cmd = [str(c) for c in engine_command(engine, model_dir, args)]
        self.engine = engine
        self.log = log
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                     text=True, env=env, cwd=HERE)
        self.info = self.read()

    def read(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.engine}: worker exited ({self.proc.wait()}); see {self.log.name}")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"{self.engine}: {reply['error']}")
        return reply

    def ask(self, **cmd):
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return self.read()

    def close(self):
        try:
            self.proc.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
        except Exception:  # noqa: BLE001 - a worker that already died
            self.proc.kill()


def emit(model, batch, args):
    d = args.work / f"{model}-b{batch}"
    if model.startswith("toy_"):                      # the hand-written graphs: the plumbing's test
        import toy_models
        getattr(toy_models, model)(args.work / f"_{model}-b{batch}", batch=batch)
        return args.work / f"_{model}-b{batch}" / model
    cmd = [tessera_binary(), "bench", model, "--batch", str(batch), "--emit-tile", str(d),
           *shlex.split(args.bench_args)]
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)
    return d


def tolerance(model):
    """(atol, rtol): the largest abs difference allowed is atol + rtol * max |reference|.
    Probabilities (tempered: graph_io.temper_logits): 1e-3 of the largest. Hidden states (bert):
    also 1e-3 absolute, as float32 sums of 768 terms through 12 layers drift."""
    last = model.nodes[-1]["op"]
    return (0.0, 1e-3) if last == "softmax" else (1e-3, 1e-3)


def compare_model(model_name, batch, engines, args, results):
    try:
        d = emit(model_name, batch, args)
    except subprocess.CalledProcessError as e:
        results += [{"model": model_name, "batch": batch, "engine": spec.partition("@")[0], "times": [],
                     "error": f"tessera bench failed ({e.returncode})"} for spec in engines]
        return
    model = Model(d)
    import onnx
    import onnxruntime
    import graph_onnx
    from graph_io import softmax_logits, temper_logits
    logit_scale = None
    logits, _ = softmax_logits(model)
    if logits and not args.keep_weights:
        # The logits ONNX Runtime computes for X decide the scale of the last layer (graph_io).
        sess = onnxruntime.InferenceSession(graph_onnx.export(model, logits).SerializeToString(),
                                            providers=["CPUExecutionProvider"])
        z = sess.run(None, {sess.get_inputs()[0].name: model.sample_input()})[1]
        logit_scale = temper_logits(model, z)
        print(f"  last dense layer scaled by {logit_scale:.3g} (logits' std was {np.std(z):.3g})", flush=True)
    # The ONNX file is made once here (the ort venv has onnx); OpenVINO reads it.
    onnx.save(graph_onnx.export(model), str(d / f"{model.name}.onnx"))
    logs = args.work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    workers, entries = {}, {}
    for spec in engines:
        engine, _, iters = spec.partition("@")
        entry = {"model": model_name, "batch": batch, "engine": engine, "options": args.bench_args,
                 "logit_scale": logit_scale,
                 "iterations": int(iters or args.iterations), "times": []}
        entries[engine] = entry
        results.append(entry)
        log = open(logs / f"{model_name}-b{batch}-{engine.replace(':', '')}.log", "w")
        t0 = time.perf_counter()
        try:
            workers[engine] = w = Worker(engine, d, args, log)
            entry.update(version=w.info["version"], load_s=w.info["load_s"], first_run_s=w.info["first_run_s"])
            print(f"  {engine}: ready in {time.perf_counter() - t0:.1f} s", flush=True)
        except Exception as e:  # noqa: BLE001 - recorded, shown in the report
            entry["error"] = str(e).strip().splitlines()[-1]
            print(f"  {engine}: FAILED: {e}", flush=True)

    # Correctness: every engine's output against the reference's, on the same X.
    outs = {}
    for engine, w in list(workers.items()):
        try:
            path = logs / f"{model_name}-b{batch}-{engine.replace(':', '')}.npy"
            outs[engine] = np.load(w.ask(cmd="output", path=str(path))["path"])
        except Exception as e:  # noqa: BLE001
            entries[engine]["error"] = str(e).strip().splitlines()[-1]
            workers.pop(engine).close()
    ref_name = args.reference if args.reference in outs else next(iter(outs), None)
    atol, rtol = tolerance(model)
    for engine, y in outs.items():
        ref = outs[ref_name]
        e = entries[engine]
        e["reference"] = ref_name
        if y.shape != ref.shape:
            e["max_abs_diff"], e["match"] = None, False
            e["error"] = f"output shape {list(y.shape)}, reference {list(ref.shape)}"
            continue
        diff = float(np.abs(y.astype(np.float64) - ref).max())
        e["max_abs_diff"] = diff
        e["tolerance"] = atol + rtol * float(np.abs(ref).max())
        e["match"] = bool(diff <= e["tolerance"])
        print(f"  {engine}: max |y - {ref_name}| = {diff:.3g} "
              f"({'ok' if e['match'] else 'MISMATCH'}, tolerance {e['tolerance']:.3g})", flush=True)

    # Timing: warm-up, then rounds with the order rotated.
    order = list(workers)
    for engine in order:
        workers[engine].ask(cmd="run", iterations=2)
    for r in range(args.rounds):
        for engine in order[r % len(order):] + order[:r % len(order)]:
            # Thread pools spin a while after a run (OpenMP's block time, ORT's spinning): on 2 cores
            # a spinning neighbour would stall the next engine's barriers, so the turn waits them out.
            time.sleep(args.pause)
            entries[engine]["times"] += workers[engine].ask(cmd="run", iterations=entries[engine]["iterations"])["times"]
    for engine, w in workers.items():
        w.close()
        t = np.array(entries[engine]["times"]) * 1e3
        print(f"  {engine}: median {np.median(t):.3f} ms, p90 {np.percentile(t, 90):.3f} ms", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="resnet50,mobilenet_v2")
    p.add_argument("--batch", default="1")
    p.add_argument("--engines", default=DEFAULT_ENGINES,
                   help="comma-separated; ENGINE@K runs K iterations a round for that engine "
                        "(e.g. tessera-vulkan@3)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--reference", default="ort")
    p.add_argument("--keep-weights", action="store_true",
                   help="do not scale the last dense layer to unsaturate the probabilities (graph_io.temper_logits)")
    p.add_argument("--pause", type=float, default=0.5, help="seconds between two engines' turns")
    p.add_argument("--bench-args", default="", help="more `tessera bench` options, e.g. '--image-size 64'")
    # full, not the default online: timed passes are to measure tuned kernels, not tuning between them.
    p.add_argument("--tessera-tune", default="full", help="TESSERA_TUNE for the Tessera workers (full, online, cached, "
                        "off; default full: every kernel tuned while compiling), or per engine: cpu=full,opencl=off,vulkan=off")
    p.add_argument("--tessera-tune-seconds", type=float, default=0.0,
                   help="bound on a Tessera program's tuning time (0: none)")
    # const, as ONNX Runtime and OpenVINO take a model's weights: known when the session is made.
    p.add_argument("--tessera-weights", choices=["const", "inputs"], default="const",
                   help="const (default): the weights are compiled in (batch norm folded into the "
                        "convolutions); inputs: they are run inputs, as in training")
    p.add_argument("--work", type=pathlib.Path, default=REPO / "build" / "compare")
    p.add_argument("--cache", type=pathlib.Path, default=REPO / "build" / "compare-cache.db")
    p.add_argument("--out", type=pathlib.Path, default=REPO / "bench" / "results")
    p.add_argument("--name", default="", help="results file stem (default compare-<cpu kind>)")
    p.add_argument("--append", action="store_true", help="keep the results file's other entries")
    args = p.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    machine = report.machine()
    stem = args.name or f"compare-{machine['cpu_kind']}"
    raw_path = args.out / f"{stem}.json"
    data = {"runs": [], "results": []}
    if args.append and raw_path.exists():
        data = json.loads(raw_path.read_text())
    command = "bench/compare/run.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    run = {"command": command, "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "machine": machine,
           "tessera_bin": os.environ.get("TESSERA_BIN", "default"),
           "tessera_devices": tessera_devices(),
           "tessera_python": tessera_python(),
           "tessera_tune": (args.tessera_tune or os.environ.get("TESSERA_TUNE", "online (default)"))
           + (f", at most {args.tessera_tune_seconds:g} s a program" if args.tessera_tune_seconds else ""),
           "tessera_weights": args.tessera_weights,
           # Settings that hold an engine to a narrower instruction set than the machine's.
           "isa_settings": {k: os.environ[k] for k in ISA_SETTINGS if k in os.environ}}
    results = []
    engines = args.engines.split(",")
    if warning := stale_module(engines):
        print(warning, flush=True)
    for model_name in args.models.split(","):
        for batch in [int(b) for b in args.batch.split(",")]:
            print(f"{model_name}, batch {batch}", flush=True)
            compare_model(model_name, batch, engines, args, results)
    # Each row names the run that measured it: ratios are taken within one run only.
    for r in results:
        r["run"] = len(data["runs"]) + 1
    keys = {(r["model"], r["batch"], r["engine"]) for r in results}
    data["results"] = [r for r in data["results"] if (r["model"], r["batch"], r["engine"]) not in keys] + results
    data["runs"].append(run)
    args.out.mkdir(parents=True, exist_ok=True)
    raw_path.write_text(json.dumps(data, indent=1))
    report.write(data, args.out, stem)
    print(f"wrote {raw_path} and {stem}.md", flush=True)
    if any(r.get("match") is False or "error" in r for r in results):
        print("some engines failed or disagree with the reference: see the report", flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
