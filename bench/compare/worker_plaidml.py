"""PlaidML 0.7 worker (build/bench-venvs/plaidml, made by bench/keras/setup_plaidml.sh): graph_keras.py's
Keras 2.2.4 model on PlaidML's Keras backend, device llvm_cpu.0 (the venv's plaidml_bench_site.py sets
PLAIDML_EXPERIMENTAL=1, PLAIDML_DEVICE_IDS=llvm_cpu.0 and KERAS_BACKEND; they are set here too, should
the site file be missing). An iteration is `model.predict(X)`: numpy in, numpy out. PlaidML compiles
the program on the first predict, which the worker does before it says ready.

Threads: PlaidML 0.7 has no thread-count setting for llvm_cpu (no environment variable or config key
names one), so unlike the other workers it is not asked for 2; its predict runs on one core (process CPU
time about equal to wall time, measured on 2 cores). See worker_common.py for the protocol.
"""
import os

os.environ.setdefault("PLAIDML_EXPERIMENTAL", "1")
os.environ.setdefault("PLAIDML_DEVICE_IDS", "llvm_cpu.0")
os.environ["KERAS_BACKEND"] = "plaidml.keras.backend"

import keras  # noqa: E402
import plaidml  # noqa: E402

import graph_keras  # noqa: E402
from worker_common import serve  # noqa: E402


class PlaidmlEngine:
    name = "plaidml"
    version = f"plaidml {plaidml.__version__}, keras {keras.__version__}, {os.environ['PLAIDML_DEVICE_IDS']}"

    def __init__(self, model, args):
        self.model = graph_keras.build(model)
        self.batch = model.inputs[0]["shape"][0]

    def infer(self, x):
        return self.model.predict(x, batch_size=self.batch)


if __name__ == "__main__":
    serve(PlaidmlEngine)
