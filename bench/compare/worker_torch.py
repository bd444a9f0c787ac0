"""PyTorch worker (build/bench-venvs/torch): graph_torch.py's module, eager (--mode eager) or
torch.compile'd with inductor (--mode compile; it compiles on the first run, which the worker does
before it says ready), under inference_mode, 2 threads. See worker_common.py for the protocol."""
import torch

import graph_torch
from worker_common import THREADS, serve


class TorchEngine:
    version = torch.__version__

    def __init__(self, model, args):
        torch.set_num_threads(THREADS)
        torch.set_num_interop_threads(1)
        mode = args.mode or "eager"
        self.name = f"torch-{mode}"
        self.module = graph_torch.build(model)
        self.fn = torch.compile(self.module) if mode == "compile" else self.module

    def infer(self, x):
        with torch.inference_mode():
            return self.fn(torch.from_numpy(x)).numpy()


if __name__ == "__main__":
    serve(TorchEngine)
