"""PyTorch on the lent GPU's CUDA as the peer of the whole zoo: each model directory that
`tessera bench MODEL --emit-tile DIR` wrote becomes the same network with the same weights
(bench/compare/graph_torch.py), timed eager and, with --compile, under torch.compile. Strict fp32
(no TF32), as Tessera computes; median of 30 passes by CUDA events after 10 warm-up passes.
Prints one line per model and mode.   Usage: python3 torch_zoo.py [--compile] DIR..."""
import pathlib
import statistics
import sys

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench" / "compare"))
import graph_io  # noqa: E402
import graph_torch  # noqa: E402


def median_ms(fn, x, iterations=30):
    with torch.no_grad():
        for _ in range(10):
            fn(x)
        torch.cuda.synchronize()
        times = []
        for _ in range(iterations):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(x)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
    return statistics.median(times)


def main(args):
    compile_too = "--compile" in args
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    print(torch.__version__, torch.cuda.get_device_name(), flush=True)
    for directory in (a for a in args if a != "--compile"):
        model = graph_io.Model(directory)
        module = graph_torch.build(model).cuda()
        x = torch.from_numpy(np.load(pathlib.Path(directory) / "X.npy")).cuda()
        batch = x.shape[0]
        print(f"{model.name} b{batch} torch-cuda eager fp32: {median_ms(module, x):.3f} ms", flush=True)
        if compile_too:
            compiled = torch.compile(module)
            print(f"{model.name} b{batch} torch-cuda compile fp32: {median_ms(compiled, x):.3f} ms",
                  flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
