"""Runs Tile programs on devices, each device in a worker process of its own, so that a crash or a
hang of one device is a finding and not the end of the fuzzer. A worker imports `tessera` once and
answers (program text, inputs) with ("ok", outputs), ("error", kind, message) or, when it died,
("crash", how)."""
import multiprocessing as mp
import os


def _serve(conn, device):
    import tessera
    while True:
        try:
            req = conn.recv()
        except EOFError:
            return
        text, inputs = req
        try:
            conn.send(("ok", {k: v for k, v in tessera.run(text, inputs, device=device).items()}))
        except Exception as e:  # noqa: BLE001 - every failure is reported back
            conn.send(("error", type(e).__name__, str(e)))


class Worker:
    def __init__(self, device, timeout):
        self.device, self.timeout = device, timeout
        self.proc = None

    def start(self):
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, self.device), daemon=True)
        self.proc.start()
        child.close()

    def submit(self, text, inputs):
        if self.proc is None or not self.proc.is_alive():
            self.start()
        self.conn.send((text, inputs))

    def result(self):
        if not self.conn.poll(self.timeout):
            self.stop()
            return ("crash", f"no answer within {self.timeout} s (hang)")
        try:
            return self.conn.recv()
        except (EOFError, ConnectionResetError):
            self.proc.join(5)
            code = self.proc.exitcode
            self.proc = None
            return ("crash", f"the process died (exit code {code})")

    def stop(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.join(5)
            self.proc = None


class Runner:
    """One worker per device; run() sends a program to several devices at once and waits for all."""

    def __init__(self, devices, timeout=60):
        self.workers = {d: Worker(d, timeout) for d in devices}
        self.runs = {d: 0 for d in devices}

    def run(self, text, inputs_per_device):
        """inputs_per_device: {device: [inputs, ...]}; returns {device: [result, ...]}."""
        out = {d: [] for d in inputs_per_device}
        pending = {d: list(ins) for d, ins in inputs_per_device.items()}
        while any(pending.values()):
            active = [d for d in pending if pending[d]]
            for d in active:
                self.workers[d].submit(text, pending[d][0])
            for d in active:
                out[d].append(self.workers[d].result())
                self.runs[d] += 1
                pending[d].pop(0)
        return out

    def close(self):
        for w in self.workers.values():
            w.stop()


def device_env(cache_dir):
    """The environment workers inherit: the cost model, and a scratch kernel cache."""
    os.environ.setdefault("TESSERA_TUNE", "off")
    os.environ.setdefault("TESSERA_CACHE", os.path.join(cache_dir, "fuzz-cache.db"))
    os.environ.setdefault("POCL_CACHE_DIR", os.path.join(cache_dir, "pocl-cache"))
