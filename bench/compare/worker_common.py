"""The protocol every engine worker speaks: one long-lived process per engine and model, in the engine's
own venv, so that loading and compiling happen once and the timed loop runs in a warm process.

    python worker_ENGINE.py MODEL_DIR [--device D]
    -> {"ready": true, "engine": ..., "version": ..., "load_s": ..., "first_run_s": ...}
    <- {"cmd": "run", "iterations": K}        -> {"times": [seconds of each iteration]}
    <- {"cmd": "output", "path": "Y.npy"}     -> {"path": "Y.npy"}   (the output for DIR/X.npy)
    <- {"cmd": "quit"}
Any failure answers {"error": "..."} (then the worker exits). Replies are JSON lines on the process's
original stdout; everything else the libraries print goes to stderr, so it cannot break a reply.

An iteration is host to host: DIR/X.npy's array in, the output as a host array out, as an
application would call the engine. Every engine is asked for 2 threads.
"""
import argparse
import json
import os
import sys
import time
import traceback

import numpy as np

from graph_io import Model

THREADS = 2


def serve(make_engine):
    """make_engine(model, args) -> an object with .name, .version and .infer(x) -> numpy output."""
    parser = argparse.ArgumentParser()
    parser.add_argument("model_dir")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--mode", default="")
    parser.add_argument("--tune-seconds", type=float, default=0.0)
    parser.add_argument("--weights", choices=["const", "inputs"], default="const")
    args = parser.parse_args()
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)                      # the libraries' prints (and C++ ones) go to stderr
    sys.stdout = sys.stderr

    def reply(obj):
        replies.write(json.dumps(obj) + "\n")
        replies.flush()

    try:
        model = Model(args.model_dir)
        x = model.sample_input()
        t0 = time.perf_counter()
        engine = make_engine(model, args)
        t1 = time.perf_counter()
        engine.infer(x)                # the first run: lazy compilation in some engines (torch.compile)
        t2 = time.perf_counter()
        reply({"ready": True, "engine": engine.name, "version": engine.version,
               "load_s": t1 - t0, "first_run_s": t2 - t1})
        for line in sys.stdin:
            if not line.strip():
                continue
            cmd = json.loads(line)
            if cmd["cmd"] == "run":
                times = []
                for _ in range(int(cmd["iterations"])):
                    s = time.perf_counter()
                    engine.infer(x)
                    times.append(time.perf_counter() - s)
                reply({"times": times})
            elif cmd["cmd"] == "output":
                np.save(cmd["path"], np.asarray(engine.infer(x), dtype=np.float32))
                reply({"path": cmd["path"]})
            elif cmd["cmd"] == "quit":
                break
            else:
                raise ValueError(f"unknown command {cmd!r}")
    except Exception:  # noqa: BLE001 - the driver shows the worker's traceback
        reply({"error": traceback.format_exc()})
        sys.exit(1)
