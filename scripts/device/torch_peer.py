"""The peer on the lent GPU machine: PyTorch eager on CUDA, the zoo's ResNet-50 and MobileNetV2 at
batch 1, median of timed passes (CUDA events), strict fp32 (no TF32) as Tessera computes, and with
PyTorch's default TF32 convolutions for reference."""
import statistics

import torch
import torchvision


def median_ms(model, x, iterations=30):
    with torch.no_grad():
        for _ in range(10):
            model(x)
        times = []
        for _ in range(iterations):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            model(x)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
    return statistics.median(times)


torch.backends.cudnn.benchmark = True
print(torch.__version__, torch.cuda.get_device_name())
for name in ("resnet50", "mobilenet_v2"):
    model = getattr(torchvision.models, name)(weights=None).cuda().eval()
    x = torch.randn(1, 3, 224, 224, device="cuda")
    for tf32 in (False, True):
        torch.backends.cudnn.allow_tf32 = tf32
        torch.backends.cuda.matmul.allow_tf32 = tf32
        print(f"{name} b1 torch-cuda eager {'tf32' if tf32 else 'fp32'}: {median_ms(model, x):.3f} ms")
