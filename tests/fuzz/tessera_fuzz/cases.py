"""Regression cases: a reduced program as `<id>.tile` (its header comments say what was found) and
its inputs and expectations as `<id>.json`. Known disagreements, being fixed elsewhere, carry an
`xfail` reason that `known_reason` assigns."""
import hashlib
import json
from pathlib import Path

import numpy as np


CASES = Path(__file__).resolve().parents[1] / "cases"


def known_reason(program_text, finding):
    """Why a finding is expected today, or None when it is new."""
    del program_text
    if finding.kind == "interp-error" and "is unbounded" in finding.message:
        # Not a Tessera bug: bind rightly rejects `A[2*i + j, ...]` where i and j appear only
        # together (i can grow as j shrinks). The generator should not write such accesses.
        return ("the generator wrote an index variable that appears only in a combination with "
                "another (2*i + j), which no inequality bounds; bind rejects it, as it should")
    return None


def _encode(v):
    v = np.asarray(v)
    if v.dtype.kind == "f":
        out = []
        for x in v.ravel().tolist():
            out.append("nan" if x != x else "inf" if x == float("inf") else "-inf" if x == float("-inf")
                       else "-0.0" if x == 0 and str(x).startswith("-") else x)
        return out
    return v.ravel().tolist()


def decode_inputs(spec):
    out = {}
    for name, s in spec.items():
        vals = [float(x) if isinstance(x, str) else x for x in s["values"]]
        out[name] = np.array(vals, dtype=np.dtype(s["dtype"])).reshape(s["shape"])
    return out


def save_case(program, findings, seed, directory=CASES):
    """Writes the case; returns its .tile path. findings: those of one (device, kind) signature."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    text = program.text()
    digest = hashlib.sha1(text.encode() + repr(sorted(program.input_arrays())).encode()).hexdigest()[:8]
    kind = findings[0].kind
    case_id = f"{kind}-{digest}"
    xfail = known_reason(text, findings[0])
    header = [f"// Found by tests/fuzz (seed {seed}): {kind} on {', '.join(f.device for f in findings)}"]
    header += [f"//   {f.device}: {f.message.splitlines()[0][:300]}" for f in findings]
    if xfail:
        header.append(f"// Known: {xfail}")
    (directory / f"{case_id}.tile").write_text("\n".join(header) + "\n" + text)
    meta = {
        "devices": sorted({f.device for f in findings}),
        "kind": kind,
        "found": {f.device: f.message for f in findings},
        "seed": seed,
        "inputs": {i.name: {"dtype": i.dtype, "shape": list(i.shape), "values": _encode(i.values)}
                   for i in program.inputs},
    }
    if xfail:
        meta["xfail"] = xfail
    (directory / f"{case_id}.json").write_text(json.dumps(meta, indent=1) + "\n")
    return directory / f"{case_id}.tile"


def load_cases(directory=CASES):
    for tile in sorted(Path(directory).glob("*.tile")):
        meta = json.loads(tile.with_suffix(".json").read_text())
        yield tile.stem, tile.read_text(), decode_inputs(meta["inputs"]), meta
