"""`tessera bench`: the zoo's models timed per batch size, written out as Tile, and its errors.

Small variants (`--width-divisor`, `--image-size`) keep these fast; tests/unit/bench checks every
model against `interp` on every device, tests/python/test_bench_compare.py the layer graph.
"""
import json

import numpy as np
import pytest

SMALL = ["--image-size", "32", "--width-divisor", "4", "--tune", "off"]


def test_times_each_batch_size_and_writes_json(tessera, tmp_path):
    out = tmp_path / "r.json"
    proc = tessera("bench", "small_resnet", "--batch", "1,2", "--iterations", "3", "--warmup", "1",
                   "--warmup-seconds", "0.2", "--json", out, *SMALL)
    report = json.loads(out.read_text())
    assert report["model"] == "small_resnet" and report["device"] == "cpu"
    assert report["warmup"] == 1 and report["warmup_seconds"] == 0.2
    assert not report["train"] and report["iterations"] == 3
    assert [r["batch"] for r in report["results"]] == [1, 2]
    for r in report["results"]:
        assert r["kernels"] > 0 and r["passes"] == 3 and len(r["latencies_ms"]) == 3
        assert 0 < r["latency_median_ms"] <= r["latency_p90_ms"] <= max(r["latencies_ms"])
        assert r["cold_compile_seconds"] > 0 and r["cached_compile_seconds"] > 0
        assert r["items_per_second"] > 0 and r["gflops_per_second"] > 0
        assert r["forward_flops"] > 0
    # The table: a header and one row per batch size.
    rows = [line.split() for line in proc.stdout.splitlines() if line.split()[:1] in (["1"], ["2"])]
    assert [row[0] for row in rows] == ["1", "2"]


def test_constant_weights(tessera, tmp_path):
    out = tmp_path / "c.json"
    proc = tessera("bench", "small_resnet", "--const-weights", "--iterations", "2", "--warmup", "1",
                   "--json", out, *SMALL)
    assert "inference (constant weights)" in proc.stdout
    report = json.loads(out.read_text())
    assert report["constant_weights"] and report["results"][0]["passes"] == 2


def test_training_step_and_streams(tessera, tmp_path):
    out = tmp_path / "t.json"
    tessera("bench", "small_resnet", "--train", "--iterations", "2", "--warmup", "1", "--json", out,
            *SMALL)
    report = json.loads(out.read_text())
    assert report["train"] and report["results"][0]["passes"] == 2
    assert "gflops_per_second" not in report["results"][0]
    tessera("bench", "small_resnet", "--streams", "2", "--iterations", "2", "--warmup", "0",
            "--json", out, *SMALL)
    assert json.loads(out.read_text())["results"][0]["passes"] == 4


def emitted(tessera, tmp_path, model):
    """`tessera bench MODEL --emit-tile` at batch 2: the directory and the `--in` options that feed
    its program the image and the weights it wrote."""
    d = tmp_path / "m"
    tessera("bench", model, "--batch", "2", "--emit-tile", d, *SMALL)
    spec = json.loads((d / f"{model}.spec.json").read_text())["inputs"]
    graph = json.loads((d / f"{model}.graph.json").read_text())
    weights = [w["name"] for w in graph["weights"]]
    assert list(spec) == ["X"] + weights or sorted(spec) == sorted(["X"] + weights)
    args = ["--in", f"X={d / 'X.npy'}"]
    for name in weights:
        args += ["--in", f"{name}={d / 'weights' / (name + '.npy')}"]
    return d, args


def test_emitted_program_runs_with_its_weights(tessera, tmp_path):
    d, args = emitted(tessera, tmp_path, "small_resnet")
    tessera("run", d / "small_resnet.tile", *args, "--out-dir", tmp_path / "o")
    y = np.load(tmp_path / "o" / "Y.npy")
    assert y.shape == (2, 10) and np.isfinite(y).all()
    np.testing.assert_allclose(y.sum(axis=1), 1, rtol=1e-5)
    # With the weights compiled in (batch norm folded into the convolutions): the same outputs
    # up to rounding, and fewer statements left to run.
    tessera("run", d / "small_resnet.tile", *args, "--const-except", "X", "--out-dir",
            tmp_path / "oc", "--stats", tmp_path / "stats.json", "--device", "cpu")
    np.testing.assert_allclose(np.load(tmp_path / "oc" / "Y.npy"), y, rtol=1e-4, atol=1e-6)
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["epilogues_folded"] > 0 and stats["constants_folded"] > 0
    # The spec alone runs it too (random weights), as `tessera tune` takes it.
    tessera("run", d / "small_resnet.tile", "--spec", d / "small_resnet.spec.json", "--random", "1",
            "--out-dir", tmp_path / "o2")


def test_emitted_weights_compiled_in_are_read_from_panels(tessera, tmp_path):
    # MobileNetV2's 1x1 convolutions split their weights into vector tiles, laid out tile by tile
    # while compiling (small_resnet's kernels each take all their weights' columns in one tile).
    d, args = emitted(tessera, tmp_path, "mobilenet_v2")
    tessera("run", d / "mobilenet_v2.tile", *args, "--out-dir", tmp_path / "o", "--device", "cpu")
    tessera("run", d / "mobilenet_v2.tile", *args, "--const-except", "X", "--out-dir", tmp_path / "oc",
            "--stats", tmp_path / "stats.json", "--device", "cpu")
    assert json.loads((tmp_path / "stats.json").read_text())["constant_panels"] > 0
    np.testing.assert_allclose(np.load(tmp_path / "oc" / "Y.npy"), np.load(tmp_path / "o" / "Y.npy"),
                               rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("args, message", [
    (["nomodel"], "unknown model 'nomodel' (known: resnet50, "),
    (["small_resnet", "--batch", "0"], "--batch: sizes must be positive"),
    (["small_resnet", "--train", "--streams", "2"], "--train runs one stream"),
    (["small_resnet", "--train", "--const-weights"], "--const-weights is for inference"),
    (["small_resnet", "--batch", "1,2", "--emit-tile", "d"], "give one --batch"),
    (["small_resnet", "--tune", "bogus"], "unknown policy 'bogus'"),
    (["inception_v3", "--image-size", "20"], "inception_v3: the input is too small"),
])
def test_errors(tessera, tmp_path, args, message):
    proc = tessera("bench", *args, check=False, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr and not list(tmp_path.iterdir())
