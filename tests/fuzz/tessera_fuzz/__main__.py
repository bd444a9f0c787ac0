"""python -m tessera_fuzz: generate programs, run them on interp and every compiled device, reduce
and save each disagreement. Exits 1 when a finding is not a known one (cases.known_reason)."""
import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter

from .cases import known_reason, save_case
from .generator import generate
from .oracle import check
from .reducer import Reducer
from .runner import Runner, device_env


def main(argv=None):
    ap = argparse.ArgumentParser(prog="tessera_fuzz", description=__doc__)
    ap.add_argument("--seed", type=int, default=1, help="the run's seed (program k uses seed*100000+k)")
    ap.add_argument("--programs", type=int, default=0, help="how many programs (0: until --seconds)")
    ap.add_argument("--seconds", type=float, default=0, help="stop after this long")
    ap.add_argument("--devices", default="", help="compiled devices, comma-separated (default: all)")
    ap.add_argument("--reduce-seconds", type=float, default=120, help="budget per reduction")
    ap.add_argument("--reductions-per-kind", type=int, default=2,
                    help="reduce at most this many findings of one (device, kind)")
    ap.add_argument("--save-dir", default="", help="where reduced cases go (default: a temp dir)")
    ap.add_argument("--log", default="", help="JSON lines: one per program, one per reduced finding")
    ap.add_argument("--timeout", type=float, default=120, help="seconds a device may take per program")
    args = ap.parse_args(argv)
    if not args.programs and not args.seconds:
        args.programs = 100

    scratch = tempfile.mkdtemp(prefix="tessera-fuzz-")
    device_env(scratch)
    import tessera
    devices = [d for d in (args.devices.split(",") if args.devices else tessera.devices()) if d and d != "interp"]
    save_dir = args.save_dir or os.path.join(scratch, "cases")
    log = open(args.log, "a") if args.log else None
    runner = Runner(["interp"] + devices, timeout=args.timeout)
    start = time.monotonic()
    tried = Counter()
    reduced_per_sig, new_cases, known_cases, findings_seen = Counter(), [], [], Counter()
    print(f"tessera_fuzz: seed {args.seed}, devices {', '.join(devices)}, "
          f"{args.programs or 'unbounded'} programs, {args.seconds or 'unbounded'} s", flush=True)
    k = 0
    try:
        while (not args.programs or k < args.programs) and (not args.seconds or time.monotonic() - start < args.seconds):
            seed = args.seed * 100000 + k
            k += 1
            prog, _ = generate(seed)
            text = prog.text()
            findings = check(runner, text, prog.input_arrays(), devices, seed=seed)
            for d in ["interp"] + devices:
                tried[d] += 1
            if log:
                log.write(json.dumps({"seed": seed, "statements": len(prog.stmts),
                                      "findings": [(f.device, f.kind, f.message[:200]) for f in findings]}) + "\n")
            for f in findings:
                sig = f.signature()
                findings_seen[sig[:2]] += 1
                known = known_reason(text, f)
                limit = 1 if known else args.reductions_per_kind
                if reduced_per_sig[sig] >= limit:
                    continue
                reduced_per_sig[sig] += 1
                print(f"\n[{seed}] {f.device}: {f.kind}: {f.message.splitlines()[0][:300]}", flush=True)
                t0 = time.monotonic()
                red = Reducer(runner, f, budget_s=args.reduce_seconds)
                small = red.reduce(prog)
                # which devices disagree on the reduced program, in the same way
                again = check(runner, small.text(), small.input_arrays(), devices, seed=seed)
                same = [g for g in again if g.kind == f.kind] or [f]
                for g in same:
                    reduced_per_sig[g.signature()] = max(reduced_per_sig[g.signature()], limit)
                reason = known_reason(small.text(), same[0])
                path = save_case(small, same, seed, save_dir)
                (known_cases if reason else new_cases).append(path)
                print(f"reduced in {red.tests} runs, {time.monotonic() - t0:.0f} s; "
                      f"{'known: ' + reason if reason else 'NEW'}; saved {path}")
                for g in same:
                    print(f"  {g.device}: {g.kind}: {g.message.splitlines()[0][:300]}")
                print(small.text())
                for i in small.inputs:
                    print(f"  {i.name}: {i.dtype}{list(i.shape)} = {i.values.ravel().tolist()[:32]}")
                sys.stdout.flush()
                if log:
                    log.write(json.dumps({"seed": seed, "reduced": small.text(), "known": reason,
                                          "devices": [g.device for g in same], "kind": f.kind,
                                          "messages": [g.message for g in same], "case": str(path)}) + "\n")
    finally:
        runner.close()
        if log:
            log.close()
    elapsed = time.monotonic() - start
    print(f"\ntessera_fuzz: {k} programs in {elapsed:.0f} s; runs per device: "
          + ", ".join(f"{d} {runner.runs[d]}" for d in runner.runs) + " (interp runs each program 3 times)")
    print("findings (device, kind): " + (", ".join(f"{s} x{n}" for s, n in findings_seen.items()) or "none"))
    print(f"reduced: {len(new_cases)} new, {len(known_cases)} known; cases in {save_dir}")
    return 1 if new_cases else 0


if __name__ == "__main__":
    sys.exit(main())
