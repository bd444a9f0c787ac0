"""What Keras adds on top of Tessera's compiled programs: `predict` at batch 1 and `fit` per batch.

    KERAS_BACKEND=tessera.keras.backend TESSERA_DEVICE=cpu .venv/bin/python \
        bench/keras/predict_overhead.py [--repeats 20] [--fit-images 320]

predict: ResNet50(weights=None), one 224x224x3 image. After warm-up calls (the first compiles),
the median of --repeats calls of each, in this order:
  keras     model.predict(x, batch_size=1)
  backend   the backend function Keras calls (model.predict_function) with the same inputs
  function  the tessera.Function inside it, numpy in and out (uploads, runs, reads back)
  device    its compiled program's Executable.run_on_device with the inputs already on the device,
            plus reading the outputs back (the program alone)
fit: the demo's small ResNet, batch 16: `fit` per batch (whole epochs of full batches after one
epoch that compiles, divided by the batches) against as many calls of the train function's
tessera.Function and of its program, in turns.
The acceptance in issue 16: Keras predict within 1.1x of running the same compiled program.
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "keras")  # small_resnet.py: the model


def timed(calls, repeats, warmup=2):
    """Median seconds of each call, measured in turns (one call of each per turn, in an order that
    rotates) so that a busy spell of a shared machine slows them alike."""
    names = list(calls)
    for _ in range(warmup):
        for name in names:
            calls[name]()
    times = {name: [] for name in names}
    for i in range(repeats):
        for name in names[i % len(names):] + names[:i % len(names)]:
            start = time.perf_counter()
            calls[name]()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def graph_function(backend_fn):
    """The tessera.Function a Keras backend function runs (itself, or one of its attributes)."""
    from tessera import graph
    if isinstance(backend_fn, graph.Function):
        return backend_fn
    for value in vars(backend_fn).values():
        if isinstance(value, graph.Function):
            return value
    sys.exit(f"predict_overhead.py: no tessera.Function inside {type(backend_fn).__name__}")


class Recorder:
    """Stands in for a backend function for one call and keeps the inputs Keras gave it."""

    def __init__(self, fn):
        self.fn, self.inputs = fn, None

    def __call__(self, inputs):
        self.inputs = list(inputs)
        return self.fn(inputs)


def capture(model, attr, call):
    """Runs `call` once with model.<attr> recording, then puts the function back; its inputs."""
    fn = getattr(model, attr)
    recorder = Recorder(fn)
    setattr(model, attr, recorder)
    try:
        call()
    finally:
        setattr(model, attr, fn)
    return fn, recorder.inputs


def program(fn, values):
    """The compiled program fn runs for `values`, and a call of it with the inputs on the device."""
    from tessera import graph
    fn(values)  # compiles, where Keras has not yet called it with these shapes
    fed = {id(x.node): fn._check(x, v) for x, v in zip(fn.inputs, values)}
    key = tuple((fed[id(x.node)].shape, fed[id(x.node)].dtype.str) for x in fn.inputs)
    compiled = fn._compiled.get(key)
    if compiled is None or compiled.exe is None:
        sys.exit(f"predict_overhead.py: no compiled program for input shapes {key}")
    device = compiled.device
    uploaded = {}
    for name, ph, source in compiled.feeds:
        if isinstance(source, tuple):
            uploaded[name] = device.upload(source[1])
        elif isinstance(source, graph.VariableNode):
            uploaded[name] = source.var.device_tensor
        elif not isinstance(source, graph.RandomNode):
            uploaded[name] = device.upload(fed[id(source)])
    randoms = [(name, ph, source) for name, ph, source in compiled.feeds
               if isinstance(source, graph.RandomNode)]
    bound = {u: var.device_tensor for u, var in compiled.updates}
    outputs = [v for kind, v in compiled.outputs if kind == "native"]

    def run():
        inputs = dict(uploaded)
        for name, ph, source in randoms:  # drawn per run, as Function does
            inputs[name] = device.upload(source.sample(ph.shape))
        results = compiled.exe.run_on_device(inputs, bound)
        return [results[name].read() for name in outputs]

    return run


def predict(keras, args):
    import numpy as np
    model = keras.applications.ResNet50(weights=None)
    x = np.random.default_rng(1).uniform(size=(1, 224, 224, 3)).astype(np.float32)
    start = time.perf_counter()
    model.predict(x, batch_size=1)
    first = time.perf_counter() - start
    model._make_predict_function()
    backend_fn, ins = capture(model, "predict_function", lambda: model.predict(x, batch_size=1))
    fn = graph_function(backend_fn)
    values = list(ins) + [v for _, v in getattr(backend_fn, "_hidden", [])]
    device_run = program(fn, values)
    r = args.repeats
    t = timed({"keras": lambda: model.predict(x, batch_size=1),
               "backend": lambda: backend_fn(ins),
               "function": lambda: fn(values),
               "device": device_run}, r)
    print(f"ResNet50(weights=None) predict, batch 1: first call {first:.1f} s (it compiles);"
          f" medians of {r} calls:")
    for name, v in t.items():
        print(f"  {name:9s} {1000 * v:8.2f} ms")
    print(f"  Keras predict / Function call = {t['keras'] / t['function']:.2f}x; "
          f"Keras predict / program on the device = {t['keras'] / t['device']:.2f}x; "
          f"Function / program = {t['function'] / t['device']:.2f}x", flush=True)


def fit(keras, args):
    sys.path.insert(0, EXAMPLE)
    import small_resnet as demo_model
    batch = 16
    images, labels = demo_model.synthetic_images(args.fit_images // batch * batch)
    batches = len(images) // batch
    model = demo_model.small_resnet()
    model.compile(demo_model.sgd(), "categorical_crossentropy", metrics=["accuracy"])
    model.fit(images, labels, batch_size=batch, epochs=1, verbose=0)  # compiles
    backend_fn, ins = capture(model, "train_function",
                              lambda: model.fit(images[:batch], labels[:batch], batch_size=batch,
                                                epochs=1, verbose=0))
    fn = graph_function(backend_fn)
    values = list(ins) + [v for _, v in getattr(backend_fn, "_hidden", [])]
    device_run = program(fn, values)

    def batches_of(call):
        return lambda: [call() for _ in range(batches)]

    t = timed({"fit": lambda: model.fit(images, labels, batch_size=batch, epochs=1, verbose=0),
               "function": batches_of(lambda: fn(values)),
               "device": batches_of(device_run)}, args.fit_epochs, warmup=0)
    per_batch, t_fn, t_dev = (t[name] / batches for name in ("fit", "function", "device"))
    print(f"small ResNet fit, batch {batch}, {batches} batches an epoch, medians:")
    print(f"  fit per batch          {1000 * per_batch:8.2f} ms")
    print(f"  Function call          {1000 * t_fn:8.2f} ms")
    print(f"  program on the device  {1000 * t_dev:8.2f} ms")
    print(f"  Python overhead of fit per batch: {1000 * (per_batch - t_dev):.2f} ms over the "
          f"program ({per_batch / t_dev:.2f}x), {1000 * (per_batch - t_fn):.2f} ms over the "
          f"Function call", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--fit-images", type=int, default=320)
    parser.add_argument("--fit-epochs", type=int, default=5)
    parser.add_argument("--only", choices=["predict", "fit"])
    args = parser.parse_args()
    os.environ.setdefault("KERAS_BACKEND", "tessera.keras.backend")
    try:
        import tessera
        import tessera.keras  # noqa: F401  (Python 3.11 aliases before Keras is imported)
        import keras
        keras.backend.backend()
    except Exception as e:
        sys.exit(f"predict_overhead.py: Tessera cannot run Keras here: {type(e).__name__}: {e}")
    print(f"device {tessera.get_device().name}", flush=True)
    if args.only != "fit":
        predict(keras, args)
    if args.only != "predict":
        fit(keras, args)


if __name__ == "__main__":
    main()
