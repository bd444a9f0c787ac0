"""PlaidML 0.7 worker (build/bench-venvs/plaidml, made by bench/keras/setup_plaidml.sh): graph_keras.py's
Keras 2.2.4 model on PlaidML's Keras backend, device llvm_cpu.0, or with --device opencl its OpenCL
device over PoCL (opencl_device() below; the venv's plaidml_bench_site.py sets
PLAIDML_EXPERIMENTAL=1, PLAIDML_DEVICE_IDS=llvm_cpu.0 and KERAS_BACKEND; they are set here too, should
the site file be missing). An iteration is `model.predict(X)`: numpy in, numpy out. PlaidML compiles
the program on the first predict, which the worker does before it says ready.

Threads: PlaidML 0.7 has no thread-count setting for llvm_cpu (no environment variable or config key
names one), so unlike the other workers it is not asked for 2; its predict runs on one core (process CPU
time about equal to wall time, measured on 2 cores); PoCL's device runs on every core. See
worker_common.py for the protocol.
"""
import os
import sys

os.environ.setdefault("PLAIDML_EXPERIMENTAL", "1")
os.environ["KERAS_BACKEND"] = "plaidml.keras.backend"

import plaidml  # noqa: E402


def opencl_device():
    """With --device opencl: PlaidML's OpenCL device, which here is PoCL's CPU device shown as a GPU
    (run.py's plaidml-opencl engine puts pocl_as_gpu.c's libOpenCL.so first and names
    plaidml-pocl.json, the device's config, in PLAIDML_EXPERIMENTAL_CONFIG)."""
    os.environ["PLAIDML_DEVICE_IDS"] = ""
    listed, unlisted = plaidml.devices(plaidml.Context(), limit=100, return_all=True)
    ids = [d.id.decode() for d in list(listed) + list(unlisted)]
    opencl = [i for i in ids if i.startswith("opencl")]
    if not opencl:
        raise SystemExit(f"PlaidML lists no OpenCL device (only {ids}): is pocl_as_gpu.c's libOpenCL.so "
                         "on LD_LIBRARY_PATH?")
    return opencl[0]


if "--device" in sys.argv and sys.argv[sys.argv.index("--device") + 1] == "opencl":
    os.environ["PLAIDML_DEVICE_IDS"] = opencl_device()
os.environ.setdefault("PLAIDML_DEVICE_IDS", "llvm_cpu.0")

import keras  # noqa: E402

import graph_keras  # noqa: E402
from worker_common import serve  # noqa: E402


class PlaidmlEngine:
    name = "plaidml-opencl" if os.environ["PLAIDML_DEVICE_IDS"].startswith("opencl") else "plaidml"
    version = f"plaidml {plaidml.__version__}, keras {keras.__version__}, {os.environ['PLAIDML_DEVICE_IDS']}"

    def __init__(self, model, args):
        self.model = graph_keras.build(model)
        self.batch = model.inputs[0]["shape"][0]

    def infer(self, x):
        return self.model.predict(x, batch_size=self.batch)


if __name__ == "__main__":
    serve(PlaidmlEngine)
