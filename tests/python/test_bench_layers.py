"""bench/compare/layers.py: OpenVINO's layers counted in the flops Tessera's profile carries, and
matched to Tessera's kernels one to one in execution order (OpenVINO itself runs in the peers'
venv, not here: these check the counting, the matching and the report)."""
import sys

from testpaths import ROOT

sys.path.insert(0, str(ROOT / "bench" / "compare"))
import layers  # noqa: E402


def test_convolution_flops_count_every_tap_of_the_window():
    # 3x3 convolution 64 -> 128 channels on 28x28 outputs (NCHW, weights [Cout, Cin, kh, kw]).
    assert layers.contraction_flops("Convolution", [[1, 64, 28, 28], [128, 64, 3, 3]],
                                    [[1, 128, 28, 28]]) == 2 * 128 * 28 * 28 * 64 * 9


def test_depthwise_flops_take_one_channel_per_filter():
    # Weights [G, Cout/G, Cin/G, kh, kw]: 96 groups of one channel.
    assert layers.contraction_flops("GroupConvolution", [[1, 96, 56, 56], [96, 1, 1, 3, 3]],
                                    [[1, 96, 56, 56]]) == 2 * 96 * 56 * 56 * 9


def test_product_flops_sum_over_the_first_operands_last_axis():
    assert layers.contraction_flops("FullyConnected", [[1, 128, 768], [3072, 768]],
                                    [[1, 128, 3072]]) == 2 * 128 * 3072 * 768
    assert layers.contraction_flops("MatMul", [[1, 12, 128, 64], [1, 12, 64, 128]],
                                    [[1, 12, 128, 128]]) == 2 * 12 * 128 * 128 * 64
    assert layers.contraction_flops("Eltwise", [[1, 8], [1, 8]], [[1, 8]]) == 0


def test_equal_flops_pair_in_execution_order_and_the_rest_stays_apart():
    kernels = [{"name": n, "ms": ms, "flops": f} for n, ms, f in
               [("a", 1.0, 100), ("relu", 0.1, 8), ("b", 2.0, 100), ("c", 3.0, 50)]]
    ov = [{"name": n, "ms": ms, "flops": f} for n, ms, f in
          [("A", 0.5, 100), ("B", 2.5, 100), ("X", 0.2, 0), ("D", 1.0, 70)]]
    pairs, kernels_left, layers_left = layers.match(kernels, ov)
    assert [(k["name"], layer["name"]) for k, layer in pairs] == [("a", "A"), ("b", "B")]
    assert [k["name"] for k in kernels_left] == ["relu", "c"]
    assert [layer["name"] for layer in layers_left] == ["X", "D"]


def test_report_orders_contractions_by_tesseras_excess_time():
    steps = [{"kind": "kernel", "name": "k1", "ms": 1.0, "flops": 2_000_000},
             {"kind": "kernel", "name": "k2", "ms": 4.0, "flops": 6_000_000},
             {"kind": "kernel", "name": "add", "ms": 0.5, "flops": 1000},
             {"kind": "transfer", "name": "X", "ms": 0.25, "flops": 0}]
    ov = [{"name": "L1", "type": "Convolution", "exec": "jit", "out": [1, 8], "ms": 2.0, "flops": 2_000_000},
          {"name": "L2", "type": "Convolution", "exec": "jit", "out": [1, 8], "ms": 1.0, "flops": 6_000_000},
          {"name": "S", "type": "Subgraph", "exec": "jit", "out": [1, 8], "ms": 0.3, "flops": 0}]
    text = layers.report("toy", steps, 6.0, ov, 3.5, top=5)
    rows = [line for line in text.splitlines() if line.startswith("| k")]
    assert [r.split(" | ")[0] for r in rows] == ["| k2", "| k1"]
    assert "| 2 matched contractions | 5.000 | 3.000 | 1.67 |" in text
    assert "| the rest (1 kernels and host steps / 1 layers) | 0.750 | 0.300 | 2.50 |" in text
    assert "Subgraph 1 x 0.300 ms" in text and "host steps, transfers and fills 0.250 ms" in text


def test_rounds_take_the_median_of_each_step():
    rounds = [[{"kind": "kernel", "name": "a", "ms": t, "flops": 1}] for t in (3.0, 1.0, 2.0)]
    assert layers.median_steps(rounds) == [{"kind": "kernel", "name": "a", "ms": 2.0, "flops": 1}]
