"""ONNX Runtime worker (build/bench-venvs/ort): the graph exported by graph_onnx.py, CPU execution
provider, 2 intra-op threads, all graph optimizations. See worker_common.py for the protocol."""
import onnxruntime as ort

import graph_onnx
from worker_common import THREADS, serve


class OrtEngine:
    name = "onnxruntime"
    version = ort.__version__

    def __init__(self, model, args):
        proto = graph_onnx.export(model)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = THREADS
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(proto.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        self.input = self.session.get_inputs()[0].name

    def infer(self, x):
        return self.session.run(None, {self.input: x})[0]


if __name__ == "__main__":
    serve(OrtEngine)
