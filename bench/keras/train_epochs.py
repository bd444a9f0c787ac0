"""Trains the demo's small ResNet with Keras `fit` and prints each epoch's time as JSON.

The same script runs under Tessera (Keras 2.3.1, KERAS_BACKEND=tessera.keras.backend, the
project venv; it tunes within --tune-seconds per program, as the demo does) and under PlaidML
0.7 (Keras 2.2.4, the venv of setup_plaidml.sh): same network,
same 3000 images, batch 16, SGD(0.05, momentum 0.9), as examples/keras/train_resnet.py. The one
JSON line on stdout has the engine, the device, per-epoch seconds, losses and accuracies, and
under Tessera the per-epoch compile statistics. run.sh calls it; alone:

    KERAS_BACKEND=tessera.keras.backend TESSERA_DEVICE=cpu \
        .venv/bin/python bench/keras/train_epochs.py
    build/bench-venvs/plaidml/bin/python bench/keras/train_epochs.py
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "keras")  # small_resnet.py: the model


def engine_name():
    backend = os.environ.get("KERAS_BACKEND", "")
    if backend.startswith("plaidml"):
        return "plaidml"
    if backend.startswith("tessera"):
        return "tessera"
    sys.exit(f"train_epochs.py: KERAS_BACKEND is {backend!r}; want tessera.keras.backend or "
             "plaidml.keras.backend")


def import_keras(engine):
    """Imports Keras on the engine's backend, or exits with a message saying what is missing."""
    try:
        if engine == "tessera":
            import tessera.keras  # noqa: F401  (Python 3.11 aliases before Keras is imported)
        import keras
        keras.backend.backend()
        return keras
    except Exception as e:  # an engine that is not there ends this run, not the bench
        sys.exit(f"train_epochs.py: {engine} cannot run Keras here: {type(e).__name__}: {e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--images", type=int, default=3000)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--tune-seconds", type=float, default=60,
                        help="Tessera's tuning budget per compiled program, as the demo's")
    parser.add_argument("--label", default="", help="copied into the JSON line")
    args = parser.parse_args()

    engine = engine_name()
    keras = import_keras(engine)
    sys.path.insert(0, EXAMPLE)
    import small_resnet as demo_model

    stats = None
    if engine == "tessera":
        import tessera
        tessera.set_compile_options(tune_seconds=args.tune_seconds)
        device = tessera.get_device().name
        stats = getattr(tessera, "compile_stats", None)
    else:
        device = os.environ.get("PLAIDML_DEVICE_IDS", "")

    images, labels = demo_model.synthetic_images(args.images)
    model = demo_model.small_resnet()
    model.compile(demo_model.sgd(), "categorical_crossentropy", metrics=["accuracy"])
    record = {"engine": engine, "device": device, "keras": keras.__version__,
              "label": args.label, "epoch_s": [], "loss": [], "accuracy": [], "compile": []}

    class EpochTimes(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.before = stats() if stats else None
            self.start = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            record["epoch_s"].append(time.perf_counter() - self.start)
            record["loss"].append(float(logs["loss"]))
            record["accuracy"].append(float(demo_model.accuracy(logs)))
            if stats:
                now = stats()
                record["compile"].append({k: now[k] - self.before[k] for k in now})
            print(f"{engine} {device} epoch {epoch + 1}: {record['epoch_s'][-1]:.1f} s",
                  file=sys.stderr, flush=True)

    model.fit(images, labels, batch_size=args.batch_size, epochs=args.epochs, verbose=0,
              callbacks=[EpochTimes()])
    print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
