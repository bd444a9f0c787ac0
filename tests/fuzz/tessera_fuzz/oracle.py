"""The differential check: a program runs on interp (on its inputs and on two perturbed copies,
compare.py) and on each compiled device; every difference is a Finding."""
import re
from dataclasses import dataclass

import numpy as np

from .compare import compare_output, perturb


# Errors by which a device declines a program it cannot run (its features), which are not findings.
UNSUPPORTED = re.compile(r"GLSL has no float64 '|has no (float64|float16|int64|int16|int8)\b.*support|has no float64 \(cl_khr_fp64\)")


@dataclass
class Finding:
    device: str
    kind: str  # interp-error, error, crash, missing-output, or compare_output's kinds
    message: str

    def signature(self):
        msg = ""
        if self.kind in ("interp-error", "error"):
            # the message without numbers, names and positions: the same error, smaller program
            first = self.message.splitlines()[0] if self.message else ""
            msg = re.sub(r"'[^']*'|\d+|<python>:?", "_", first)
        return (self.device, self.kind, msg)


def check(runner, text, inputs, devices, seed=0):
    """Findings of one program (Tile text and its inputs) on `devices` (compiled ones, not interp)."""
    rng = np.random.default_rng(seed)
    plan = {"interp": [inputs, perturb(inputs, rng), perturb(inputs, rng)]}
    plan.update({d: [inputs] for d in devices})
    results = runner.run(text, plan)
    base = results["interp"][0]
    if base[0] == "crash":
        return [Finding("interp", "crash", base[1])]
    if base[0] == "error":
        return [Finding("interp", "interp-error", f"{base[1]}: {base[2]}")]
    want = base[1]
    perturbed = [r[1] for r in results["interp"][1:] if r[0] == "ok"]
    findings = []
    for d in devices:
        r = results[d][0]
        if r[0] == "crash":
            findings.append(Finding(d, "crash", r[1]))
            continue
        if r[0] == "error" and UNSUPPORTED.search(r[2]):
            continue  # a documented device limitation (lavapipe: no float64 transcendentals)
        if r[0] == "error":
            findings.append(Finding(d, "error", f"{r[1]}: {r[2]}"))
            continue
        got = r[1]
        if sorted(got) != sorted(want):
            findings.append(Finding(d, "missing-output", f"outputs {sorted(got)}, interp gives {sorted(want)}"))
            continue
        for name in want:
            diff = compare_output(got[name], want[name], [p[name] for p in perturbed if name in p])
            if diff:
                findings.append(Finding(d, diff[0], f"output {name}: {diff[1]}"))
                break
    return findings
