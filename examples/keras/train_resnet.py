"""The demo: unchanged Keras 2.3.1 code trains a small ResNet on Tessera.

3000 synthetic 100x100x3 images in 4 classes (each class its own stripe orientation, under noise),
batch 16, 3 epochs of `fit` on the default device ($TESSERA_DEVICE, else this machine's). Per
epoch: its time, the kernels compiled and served from the kernel cache, the kernels tuned between
training steps and swapped for faster ones, and the accuracy. Epoch 1 compiles without waiting
for tuning ($TESSERA_TUNE=online, the default): the hot kernels of each compiled function are
tuned between its runs within a share of its run time ($TESSERA_TUNE_SHARE, 0.2) and at most
--tune-seconds per program; a later run of the demo starts from what the cache kept. Then
ResNet50(weights=None) predicts a batch and its latency is printed.

    KERAS_BACKEND=tessera.keras.backend python examples/keras/train_resnet.py [--epochs 3]
"""
import argparse
import os
import time

os.environ.setdefault("KERAS_BACKEND", "tessera.keras.backend")

import numpy as np  # noqa: E402

import tessera  # noqa: E402
import tessera.keras  # noqa: E402,F401  (Python 3.11 aliases before Keras is imported)
import keras  # noqa: E402
from small_resnet import sgd, small_resnet, synthetic_images  # noqa: E402  (beside this file)


class EpochReport(keras.callbacks.Callback):
    """One line per epoch: time, what was compiled, tuned and found in the cache, accuracy."""

    def on_epoch_begin(self, epoch, logs=None):
        self.start, self.before = time.perf_counter(), tessera.compile_stats()
        self.tuned_before = tessera.tuning_stats()

    def on_epoch_end(self, epoch, logs=None):
        now, tuned = tessera.compile_stats(), tessera.tuning_stats()
        d = {k: now[k] - self.before[k] for k in now}
        swaps = len(tuned["swaps"]) - len(self.tuned_before["swaps"])
        print(f"epoch {epoch + 1}: {time.perf_counter() - self.start:6.1f} s  "
              f"kernels compiled {d['kernels']:4d} (from the cache {d['cache_hits']:4d}) in "
              f"{d['compile_seconds']:.1f} s; tuned between steps "
              f"{tuned['kernels_tuned'] - self.tuned_before['kernels_tuned']:3d} kernels in "
              f"{tuned['tune_seconds'] - self.tuned_before['tune_seconds']:.1f} s, {swaps} swapped  "
              f"loss {logs['loss']:.3f}  accuracy {logs['accuracy']:.3f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--images", type=int, default=3000)
    parser.add_argument("--resnet50-batch", type=int, default=1)
    parser.add_argument("--tune-seconds", type=float, default=60,
                        help="tuning budget per compiled program (kernels past it keep their "
                             "schedule now and are tuned by a later run)")
    args = parser.parse_args()
    tessera.set_compile_options(tune_seconds=args.tune_seconds)

    print(f"device {tessera.get_device().name}; kernel cache "
          f"{os.environ.get('TESSERA_CACHE', '~/.cache/tessera/kernels.db')}", flush=True)
    images, labels = synthetic_images(args.images)
    model = small_resnet()
    model.compile(sgd(), "categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(images, labels, batch_size=16, epochs=args.epochs, verbose=0,
              callbacks=[EpochReport()])

    resnet = keras.applications.ResNet50(weights=None)
    batch = np.random.default_rng(1).uniform(size=(args.resnet50_batch, 224, 224, 3))
    start = time.perf_counter()
    resnet.predict(batch, batch_size=args.resnet50_batch)
    first = time.perf_counter() - start
    times = []
    for _ in range(5):
        start = time.perf_counter()
        resnet.predict(batch, batch_size=args.resnet50_batch)
        times.append(time.perf_counter() - start)
    print(f"ResNet50(weights=None) predict, batch {args.resnet50_batch}: first call {first:.1f} s "
          f"(compile included), then median {1000 * np.median(times):.1f} ms", flush=True)


if __name__ == "__main__":
    main()
