"""`tessera run --profile`: one timed entry per kernel of the program on every device,
times that add up to no more than the run, and a clear error (exit 1, no file) for bad use."""
import json

import pytest

TWO_MATMULS = "function (A[N, K], B[K, M], E[M, P]) -> (D) {\n" \
              "  C[n, m : N, M] = +(A[n, k] * B[k, m]);\n" \
              "  D[n, p : N, P] = +(C[n, m] * E[m, p]);\n}\n"
SPEC = {"inputs": {"A": {"dtype": "float32", "shape": [64, 32]},
                   "B": {"dtype": "float32", "shape": [32, 48]},
                   "E": {"dtype": "float32", "shape": [48, 16]}}}
PROFILING_DEVICES = ["cpu", "opencl:0", "vulkan:0"]


@pytest.fixture
def program(tmp_path):
    (tmp_path / "two.tile").write_text(TWO_MATMULS)
    (tmp_path / "two.json").write_text(json.dumps(SPEC))
    return tmp_path / "two.tile", tmp_path / "two.json"


def listed_devices(tessera):
    return {d["name"] for d in json.loads(tessera("devices", "--json").stdout)}


@pytest.mark.parametrize("device", PROFILING_DEVICES)
def test_profile_times_each_kernel_within_the_run(tessera, tmp_path, program, device):
    if device not in listed_devices(tessera):
        pytest.skip(f"no {device} on this machine")
    prog, spec = program
    # One run: its steps' times must add up to at most its own time.
    proc = tessera("run", prog, "--spec", spec, "--random", 1, "--device", device, "--out-dir", tmp_path,
                   "--stats", tmp_path / "stats.json", "--profile", tmp_path / "profile.json")
    profile = json.loads((tmp_path / "profile.json").read_text())
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert profile["device"] == device and profile["runs"] == 1
    kernels = [s for s in profile["steps"] if s["kind"] == "kernel"]
    assert [k["name"] for k in kernels] == ["C", "D"]
    for step in profile["steps"]:
        assert step["kind"] in ("kernel", "host", "transfer", "fill")
        assert step["calls"] >= 1 and 0 <= step["min_seconds"] <= step["seconds"], step
    assert all(k["calls"] == 1 and k["origin"] == "model" and k["seconds"] > 0 for k in kernels)
    # Two per multiply-add: C is 64x48 outputs of 32 terms, D 64x16 of 48.
    assert [k["flops"] for k in kernels] == [2 * 64 * 48 * 32, 2 * 64 * 16 * 48]
    total = sum(s["seconds"] for s in profile["steps"])
    assert total == pytest.approx(profile["steps_seconds"])
    assert total <= profile["run_seconds"] == stats["run_seconds"]
    assert proc.stderr.startswith("profile: run ") and "2 kernels" in proc.stderr


def test_profile_takes_medians_over_repeats(tessera, tmp_path, program):
    prog, spec = program
    tessera("run", prog, "--spec", spec, "--random", 1, "--device", "cpu", "--repeat", 3,
            "--out-dir", tmp_path, "--profile", tmp_path / "profile.json")
    profile = json.loads((tmp_path / "profile.json").read_text())
    assert profile["runs"] == 3
    kernels = [s for s in profile["steps"] if s["kind"] == "kernel"]
    assert [(s["name"], s["calls"]) for s in kernels] == [("C", 1), ("D", 1)]
    # The fastest of three runs is at most their median.
    assert all(0 < s["min_seconds"] <= s["seconds"] for s in kernels)


def failed_run(tessera, tmp_path, program, *args):
    prog, spec = program
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = tessera("run", prog, "--spec", spec, "--random", 1, "--out-dir", ".", *args, check=False,
                   cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "a failed run wrote files"
    return proc.stderr


def test_unwritable_profile_path_is_an_error(tessera, tmp_path, program):
    stderr = failed_run(tessera, tmp_path, program, "--device", "cpu", "--profile", "no/such/dir/profile.json")
    assert "no/such/dir/profile.json" in stderr and "error" in stderr


def test_interp_profiles_its_host_steps(tessera, tmp_path, program):
    # The interpreter runs every statement as a host step through the same step loop.
    prog, spec = program
    tessera("run", prog, "--spec", spec, "--random", 1, "--device", "interp", "--out-dir", tmp_path,
            "--profile", tmp_path / "profile.json")
    profile = json.loads((tmp_path / "profile.json").read_text())
    assert [s["name"] for s in profile["steps"] if s["kind"] == "host"] == ["C", "D"]
    assert not [s for s in profile["steps"] if s["kind"] == "kernel"]
