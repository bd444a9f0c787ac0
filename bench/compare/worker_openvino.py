"""OpenVINO worker (build/bench-venvs/ort): the ONNX model from graph_onnx.py read by OpenVINO's ONNX
frontend, compiled for its CPU plugin in f32 (INFERENCE_PRECISION_HINT: no bf16/f16 shortcuts, the
same arithmetic as the others), 2 threads, latency mode. See worker_common.py for the protocol."""
import openvino as ov

import graph_onnx
from worker_common import THREADS, serve


class OpenVinoEngine:
    name = "openvino"
    version = ov.get_version()

    def __init__(self, model, args):
        path = model.dir / f"{model.name}.onnx"
        if not path.exists():
            import onnx
            onnx.save(graph_onnx.export(model), str(path))
        core = ov.Core()
        compiled = core.compile_model(core.read_model(str(path)), "CPU", {
            "INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": THREADS,
            "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1})
        self.request = compiled.create_infer_request()

    def infer(self, x):
        self.request.infer({0: x})
        return self.request.get_output_tensor(0).data.copy()


if __name__ == "__main__":
    serve(OpenVinoEngine)
