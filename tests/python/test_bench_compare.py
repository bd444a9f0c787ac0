"""bench/compare's reference evaluator (graph_numpy) and the claim the comparison rests on: the layer
graph `tessera bench MODEL --emit-tile DIR` writes is the same network as its Tile program.

Needs only the project venv. The zoo's tests run when the tessera binary ($TESSERA_BIN, as the other
tests) has `tessera bench`; the peers' exporters (ONNX, torch) are checked by bench/compare itself
against ONNX Runtime, in the peers' venvs."""
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from testpaths import ROOT

sys.path.insert(0, str(ROOT / "bench" / "compare"))
import graph_io  # noqa: E402
import graph_numpy as gn  # noqa: E402
import toy_models  # noqa: E402

RNG = np.random.default_rng(0)


def conv_loops(x, w, b, strides, pads, dilations, groups):
    """conv2d as its definition: output[n, i, j, o] = sum over the window and the group's channels."""
    B, H, W, C = x.shape
    KH, KW, CIG, CO = w.shape
    xp = np.pad(x, ((0, 0), (pads[0], pads[1]), (pads[2], pads[3]), (0, 0)))
    HO = (H + pads[0] + pads[1] - dilations[0] * (KH - 1) - 1) // strides[0] + 1
    WO = (W + pads[2] + pads[3] - dilations[1] * (KW - 1) - 1) // strides[1] + 1
    out = np.zeros((B, HO, WO, CO))
    cog = CO // groups
    for n in range(B):
        for i in range(HO):
            for j in range(WO):
                for o in range(CO):
                    g = o // cog
                    s = 0.0
                    for kh in range(KH):
                        for kw in range(KW):
                            for k in range(CIG):
                                s += (xp[n, i * strides[0] + kh * dilations[0], j * strides[1] + kw * dilations[1],
                                         g * CIG + k] * w[kh, kw, k, o])
                    out[n, i, j, o] = s + (b[o] if b is not None else 0)
    return out


@pytest.mark.parametrize("groups,strides,pads,dilations", [
    (1, [1, 1], [0, 0, 0, 0], [1, 1]),
    (1, [2, 2], [1, 2, 0, 1], [1, 1]),      # asymmetric padding, [top, bottom, left, right]
    (2, [1, 2], [1, 1, 1, 1], [1, 1]),      # grouped
    (4, [1, 1], [2, 2, 2, 2], [2, 2]),      # depthwise, dilated
])
def test_conv2d_is_the_definition(groups, strides, pads, dilations):
    x = RNG.normal(size=(2, 6, 7, 4))
    w = RNG.normal(size=(3, 3, 4 // groups, 4))
    b = RNG.normal(size=4)
    got = gn.conv2d(x, w, b, strides, pads, dilations, groups)
    np.testing.assert_allclose(got, conv_loops(x, w, b, strides, pads, dilations, groups), rtol=1e-12, atol=1e-12)


def test_pools_ignore_padding():
    x = np.arange(1, 10, dtype=np.float64).reshape(1, 3, 3, 1) - 20   # all negative: padding 0 would win a max
    mx = gn.pool(x, "max", [2, 2], [2, 2], [1, 0, 1, 0])[0, :, :, 0]
    np.testing.assert_array_equal(mx, [[-19, -17], [-13, -11]])
    av = gn.pool(x, "avg", [2, 2], [2, 2], [1, 0, 1, 0])[0, :, :, 0]
    # windows: {x00}, {x01, x02}, {x10, x20}, {x11, x12, x21, x22}: padding is not counted
    np.testing.assert_allclose(av, [[-19, -17.5], [-14.5, -13]])


def test_elementwise_and_normalizations_known_values():
    assert gn.run_node("gelu", [np.array([1.0, 0.0, -1.0])], {}) == pytest.approx(
        [0.8413447460685429, 0.0, -0.15865525393145707])
    assert gn.run_node("relu6", [np.array([-1.0, 3.0, 7.0])], {}) == pytest.approx([0, 3, 6])
    x = np.array([[1.0, 2.0, 3.0, 4.0]])
    ln = gn.run_node("layer_norm", [x, np.full(4, 2.0), np.full(4, 1.0)], {"epsilon": 0.0})
    assert ln[0] == pytest.approx(2 * (x[0] - 2.5) / math.sqrt(1.25) + 1)
    bn = gn.run_node("batch_norm", [x, np.ones(4), np.zeros(4), np.arange(4.0), np.full(4, 4.0)], {"epsilon": 0.0})
    assert bn[0] == pytest.approx([0.5, 0.5, 0.5, 0.5])
    sm = gn.run_node("softmax", [np.log(np.array([[1.0, 3.0]]))], {"axis": -1})
    assert sm[0] == pytest.approx([0.25, 0.75])


def test_flatten_and_concat_are_nhwc():
    x = np.arange(2 * 2 * 2 * 3.0).reshape(2, 2, 2, 3)
    assert gn.run_node("flatten", [x], {})[1].tolist() == list(range(12, 24))
    assert gn.run_node("concat", [x, x[..., :1]], {"axis": -1}).shape == (2, 2, 2, 4)
    assert gn.run_node("gather", [np.arange(6.0).reshape(3, 2), np.array([[2, 0]])], {}).tolist() == [[[4, 5], [0, 1]]]


def test_toy_graphs_evaluate(tmp_path):
    cnn = graph_io.Model(toy_models.toy_cnn(tmp_path))
    y = gn.evaluate(cnn)
    assert y.shape == (2, 10)
    np.testing.assert_allclose(y.sum(axis=1), 1.0)
    bert = graph_io.Model(toy_models.toy_bert(tmp_path))
    env = gn.evaluate(bert, keep=True)
    y = env["Y"]
    assert y.shape == (2, 5, 16)
    # The last layer norm's output, less beta, over gamma: mean 0 and variance 1 on every row.
    z = (y - bert.weights["ln2_b"]) / bert.weights["ln2_g"]
    np.testing.assert_allclose(z.mean(axis=-1), 0, atol=1e-9)
    np.testing.assert_allclose(z.var(axis=-1), 1, atol=1e-6)
    # The first token embedding row is the table's row for that id.
    assert np.array_equal(env[bert.nodes[0]["output"]][0, 0], bert.weights["tok_emb"][bert.sample_input()[0, 0]])


@pytest.mark.parametrize("weights", ["const", "inputs"])
def test_tessera_worker_answers_with_the_graphs_output(tmp_path, weights):
    """The Tessera worker (weights compiled in or uploaded once, X written each run) on a graph with its
    Tile program."""
    d = toy_models.toy_mlp(tmp_path)
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "compare" / "worker_tessera.py"), str(d),
                           "--device", "cpu", "--weights", weights],
                          input=json.dumps({"cmd": "run", "iterations": 3}) + "\n"
                          + json.dumps({"cmd": "output", "path": str(tmp_path / "y.npy")}) + "\n",
                          capture_output=True, text=True, timeout=600, cwd=ROOT / "bench" / "compare")
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 0, proc.stderr
    assert replies[0]["ready"] and len(replies[1]["times"]) == 3
    y = np.load(replies[2]["path"])
    np.testing.assert_allclose(y, gn.evaluate(graph_io.Model(d)), atol=1e-6)


# The zoo at reduced sizes, as `tessera bench` options.
ZOO = {
    "small_resnet": ["--batch", "2"],
    "resnet50": ["--batch", "2", "--image-size", "32", "--width-divisor", "16"],
    "mobilenet_v2": ["--batch", "2", "--image-size", "32", "--width-divisor", "16"],
    "vgg16": ["--batch", "2", "--image-size", "32", "--width-divisor", "16"],
    "inception_v3": ["--batch", "2", "--image-size", "75", "--width-divisor", "16"],
    "bert_base": ["--batch", "2", "--layers", "2", "--seq-len", "8", "--width-divisor", "16"],
}


def bench_binary():
    path = os.path.abspath(os.environ.get("TESSERA_BIN", str(ROOT / "build" / "frontends" / "cli" / "tessera")))
    if not os.path.exists(path):
        return None
    # `tessera bench --help` before the subcommand existed printed the top-level help with status 0.
    proc = subprocess.run([path, "bench", "--help"], capture_output=True, text=True)
    return path if proc.returncode == 0 and "--emit-tile" in proc.stdout else None


@pytest.mark.parametrize("model", list(ZOO))
def test_zoo_graph_is_the_tile_program(model, tmp_path):
    binary = bench_binary()
    if binary is None:
        pytest.skip("no `tessera bench` in this tessera binary")
    d = tmp_path / model
    subprocess.run([binary, "bench", model, *ZOO[model], "--emit-tile", str(d)], check=True, timeout=600)
    m = graph_io.Model(d)
    logits, _ = graph_io.softmax_logits(m)
    if logits:  # unsaturate the probabilities, or the comparison would check only the argmax
        graph_io.temper_logits(m, gn.evaluate(m, keep=True)[logits])
    spec = json.loads(m.spec_path.read_text())["inputs"]
    arrays = graph_io.program_inputs(m, list(spec))
    files = []
    for name, a in arrays.items():
        f = tmp_path / "inputs" / f"{name}.npy"
        f.parent.mkdir(exist_ok=True)
        np.save(f, a)
        files += ["--in", f"{name}={f}"]
    env = dict(os.environ, TESSERA_TUNE="off")   # schedules from the cost model: this checks values only
    proc = subprocess.run([binary, "run", str(m.tile_path), *files, "--device", "cpu", "--out-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=1200, env=env)
    assert proc.returncode == 0, proc.stderr
    y = np.load(tmp_path / "Y.npy")
    ref = gn.evaluate(m)
    assert y.shape == ref.shape
    err = np.abs(y - ref).max() / np.abs(ref).max()
    print(f"{model}: max |tessera - graph| = {err:.3g} of max |graph| ({np.abs(ref).max():.3g})")
    assert err < 1e-4, f"{model}: max |tessera - graph| is {err:.3g} of max |graph|"


def test_peer_exporters_on_the_toy_graphs(tmp_path):
    """ONNX (ONNX Runtime, OpenVINO), torch and Keras (PlaidML) builds of the toy graphs agree with the
    reference, through run.py itself. Needs the peers' venvs (bench/compare/setup.sh); skipped without them."""
    venvs = ROOT / "build" / "bench-venvs"
    if not (venvs / "ort" / "bin" / "python").exists():
        pytest.skip("no peers' venvs: bench/compare/setup.sh makes them")
    engines = ["ort", "openvino"] + (["torch-eager"] if (venvs / "torch" / "bin" / "python").exists() else [])
    # PlaidML (bench/keras/setup_plaidml.sh's venv) runs toy_mlp; toy_cnn's groups=2 convolution (Keras
    # 2.2.4 has none) and toy_bert's exact gelu (PlaidML 0.7 has no erf) must fail saying so.
    engines += ["plaidml"] if (venvs / "plaidml" / "bin" / "python").exists() else []
    plaidml_refusals = {"toy_cnn": "groups=2", "toy_bert": "erf"}
    out = tmp_path / "results"
    proc = subprocess.run([str(venvs / "ort" / "bin" / "python"), str(ROOT / "bench" / "compare" / "run.py"),
                           "--models", "toy_mlp,toy_cnn,toy_bert", "--batch", "2", "--engines",
                           ",".join(engines + ["tessera-cpu"]), "--rounds", "1", "--iterations", "1", "--pause", "0",
                           "--out", str(out), "--work", str(tmp_path / "work"), "--name", "toys"],
                          capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, TESSERA_PYTHON=sys.executable))
    results = json.loads((out / "toys.json").read_text())["results"]
    for r in results:
        if r["engine"] == "tessera-cpu" and r["model"] != "toy_mlp":
            assert ".tile" in r.get("error", ""), r         # only toy_mlp has a Tile program
            continue
        if r["engine"] == "plaidml" and r["model"] in plaidml_refusals:
            assert "NotImplementedError" in r.get("error", "") and plaidml_refusals[r["model"]] in r["error"], r
            continue
        assert r.get("match") is True, (r, proc.stdout, proc.stderr)
    assert (out / "toys.md").exists() and (out / "toys-toy_cnn.png").exists()


def test_report_names_the_instruction_set_a_run_was_held_to(tmp_path):
    import report

    machine = {"cpu": "a CPU", "cpu_family_model": "family 25, model 17", "cores": 2, "memory_gib": 8,
               "kernel": "6.1", "flags": {"avx2": True}, "load_average": (0.5, 0.5, 0.5)}
    run = {"date": "today", "command": "bench/compare/run.py", "machine": machine, "tessera_tune": "off"}
    times = {"ort": [0.010, 0.011], "openvino": [0.009, 0.010], "tessera-cpu": [0.008, 0.009]}
    results = [{"model": "m", "batch": 1, "engine": e, "run": 1, "times": t, "reference": "ort",
                "max_abs_diff": 0.0, "match": True} for e, t in times.items()]
    held = dict(run, isa_settings={"TESSERA_CPU": "x86-64-v3", "ONEDNN_MAX_CPU_ISA": "AVX2"})
    report.write({"runs": [run, held], "results": results}, tmp_path, "r")
    lines = (tmp_path / "r.md").read_text().splitlines()
    runs = [i for i, line in enumerate(lines) if line.startswith("- run ")]
    assert len(runs) == 2
    # The first run had no setting: no line follows it; the second names both.
    assert not lines[runs[0] + 1].startswith("  - held")
    assert lines[runs[1] + 1] == ("  - held to a narrower instruction set: `TESSERA_CPU=x86-64-v3`, "
                                  "`ONEDNN_MAX_CPU_ISA=AVX2` (ONNX Runtime and PyTorch use the machine's widest)")
    assert any("| m | 1 | tessera-cpu | 1 | 8.50 |" in line and "0.89x openvino" in line for line in lines)
