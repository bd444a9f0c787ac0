"""Tessera worker (the project venv, `tessera` Python module): compiles DIR/MODEL.tile, the program
`tessera bench MODEL --emit-tile DIR` wrote, for one device (--device cpu, opencl:0, vulkan:0).
The weights are compiled in as constants (--weights const, the default: batch norm folded into the
convolutions, as ONNX Runtime and OpenVINO fold it) or uploaded once as inputs that stay on the
device (--weights inputs); an iteration writes X into its device tensor, runs, and reads Y back. Schedules come from the kernel cache ($TESSERA_CACHE; run.py sets
build/compare-cache.db), tuned online the first time. See worker_common.py for the protocol."""
import datetime
import json
import pathlib

import numpy as np
import tessera as ts
from tessera import _native

from graph_io import program_inputs
from worker_common import serve


def _build():
    # Which build ran: the module the worker imported (the one installed into .venv by `make
    # build`, or PYTHONPATH's) and when it was linked; `ninja` alone does not refresh .venv's copy.
    path = pathlib.Path(_native.__file__)
    built = datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.timezone.utc)
    return f"{ts.__version__} ({path}, built {built:%Y-%m-%d %H:%M} UTC)"


class TesseraEngine:
    version = _build()

    def __init__(self, model, args):
        self.name = f"tessera-{args.device}"
        text = model.tile_path.read_text()
        spec = json.loads(model.spec_path.read_text())["inputs"]
        in_names, out_names = _native.tile_signature(text, str(model.tile_path))
        ph = {n: _native.placeholder(spec[n]["dtype"], spec[n]["shape"], n) for n in in_names}
        out = _native.call_tile(text, ph, str(model.tile_path))["Y"]
        program = _native.build([("Y", out)], [ph[n] for n in in_names])
        self.device = ts.Device(args.device)
        arrays = {n: np.ascontiguousarray(a) for n, a in program_inputs(model, in_names).items()}
        self.x_name = model.inputs[0]["name"] if model.inputs[0]["name"] in in_names else in_names[0]
        constants = {}
        if args.weights == "const":
            constants = {n: a for n, a in arrays.items() if n != self.x_name}
            arrays = {self.x_name: arrays[self.x_name]}
        # tune_seconds bounds the tuning of the whole program (0: each new kernel ~1 s).
        self.exe = self.device.compile(program, tune_seconds=args.tune_seconds, constants=constants)
        self.inputs = {n: self.device.upload(a) for n, a in arrays.items()}

    def infer(self, x):
        self.inputs[self.x_name].write(x)
        return self.exe.run_on_device(self.inputs)["Y"].read()


if __name__ == "__main__":
    serve(TesseraEngine)
