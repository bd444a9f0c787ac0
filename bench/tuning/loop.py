"""A training-like loop of one Tile program under tuning between runs (TESSERA_TUNE=online)
against the cost model (off): per policy, a process compiles the program and runs it N times on
the same device tensors. It reports the compile, the first run, the tuning overhead after the
first n runs (the tuner's own account: tuning seconds over run seconds), the steady state (median of
the last quarter of the runs), each kernel tuned, and a second online process that starts from the
cache the first filled. Repeated --rounds times with fresh caches; medians.

    .venv/bin/python bench/tuning/loop.py PROG.tile SPEC.json [--runs 200] [--device cpu] [--rounds 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHECKPOINTS = (10, 25, 50, 100, 200, 400, 800)


def one_process(args):
    """Compile and run under one policy; print one JSON line."""
    import numpy as np
    import tessera as ts
    from tessera import _native

    text = open(args.program).read()
    spec = json.load(open(args.spec))["inputs"]
    names, _ = _native.tile_signature(text, args.program)
    ph = {n: _native.placeholder(spec[n]["dtype"], spec[n]["shape"], n) for n in names}
    outs = _native.call_tile(text, ph, args.program)
    program = _native.build(sorted(outs.items()), [ph[n] for n in names])
    device = ts.Device(args.device)
    start = time.perf_counter()
    exe = device.compile(program, tune=args.policy)
    compile_seconds = time.perf_counter() - start
    rng = np.random.default_rng(1)
    inputs = {n: device.upload(rng.uniform(0.5, 1.5, spec[n]["shape"]).astype(spec[n]["dtype"]))
              for n in names}
    calls, overhead = [], {}
    for i in range(args.runs):
        t = time.perf_counter()
        exe.run_on_device(inputs)
        calls.append(time.perf_counter() - t)
        if i + 1 in CHECKPOINTS:
            r = exe.tuning
            overhead[i + 1] = r["tune_seconds"] / r["run_seconds"] if r["run_seconds"] else 0.0
    tail = calls[-max(1, len(calls) // 4):]
    print(json.dumps({"compile_seconds": compile_seconds, "first_run": calls[0],
                      "steady": statistics.median(tail), "calls_total": sum(calls),
                      "overhead": overhead, "report": exe.report, "tuning": exe.tuning}))


def spawn(args, policy, cache):
    env = dict(os.environ, TESSERA_CACHE=cache)
    cmd = [sys.executable, __file__, args.program, args.spec, "--runs", str(args.runs), "--device", args.device,
           "--policy", policy, "--one"]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("program")
    p.add_argument("spec")
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--device", default="cpu")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--policy", default="online")
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one:
        return one_process(args)
    rows = {"off": [], "online": [], "online, 2nd process": []}
    last = None
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as d:
            rows["off"].append(spawn(args, "off", os.path.join(d, "off.db")))
            rows["online"].append(spawn(args, "online", os.path.join(d, "on.db")))
            rows["online, 2nd process"].append(spawn(args, "online", os.path.join(d, "on.db")))
            last = rows["online"][-1]
    med = lambda key, name: statistics.median(r[key] for r in rows[name])  # noqa: E731
    print(f"{args.program} on {args.device}, {args.runs} runs, medians of {args.rounds} rounds "
          f"(steady: median of the last {max(1, args.runs // 4)} runs)")
    print(f"{'policy':<22}{'compile s':>10}{'first run ms':>14}{'steady ms':>11}{'all runs s':>12}  vs off")
    off_steady = med("steady", "off")
    for name in rows:
        print(f"{name:<22}{med('compile_seconds', name):>10.2f}{med('first_run', name) * 1e3:>14.2f}"
              f"{med('steady', name) * 1e3:>11.2f}{med('calls_total', name):>12.2f}  "
              f"{med('steady', name) / off_steady:.3f}")
    print("online tuning / run time after n runs (each round): " + "; ".join(
        f"{n}: " + " ".join(f"{r['overhead'].get(str(n), 0):.0%}" for r in rows["online"])
        for n in CHECKPOINTS if n <= args.runs))
    print("kernels tuned (last round): kernel, steps, trials, tune s, in the run before -> after ms, outcome")
    for k in last["tuning"]["kernels"]:
        after = f"{k['seconds_after'] * 1e3:.3f}" if k["seconds_after"] else "-"
        when = f" from run {k['first_run']}" if k["outcome"] == "swapped" else ""
        print(f"  {k['kernel']:<12}{k['steps']:>3}{k['trials']:>4}{k['tune_seconds']:>7.2f}"
              f"{k['seconds_before'] * 1e3:>9.3f} -> {after:<8} {k['outcome'].split(':')[0]}{when}")


if __name__ == "__main__":
    main()
