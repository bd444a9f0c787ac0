"""The tuner and the kernel cache through the CLI: `tessera run` (policy full) tunes on first use
and is served from the cache the second time, in another process; policy online never makes the
first run wait and tunes hot kernels between runs; `tessera tune` fills the cache with its table;
two processes tuning into one file at once lose nothing; a process killed while tuning leaves a
valid cache; a bad cache file never stops a run."""
import json
import os
import signal
import sqlite3
import subprocess
import time

import numpy as np
import pytest

from testpaths import PROGRAMS

CONV = "function (I[N, H, W, C], K[3, 3, C, F], B[F]) -> (O) {\n" \
       "  T[n, x, y, f : N, H - 2, W - 2, F] = +(I[n, x + i, y + j, c] * K[i, j, c, f]);\n" \
       "  O = relu(T + B);\n}\n"
CONV_SPEC = {"inputs": {"I": {"dtype": "float32", "shape": [2, 18, 18, 16]},
                        "K": {"dtype": "float32", "shape": [3, 3, 16, 32]},
                        "B": {"dtype": "float32", "shape": [32]}}}


@pytest.fixture
def conv(tmp_path):
    (tmp_path / "conv.tile").write_text(CONV)
    (tmp_path / "conv.json").write_text(json.dumps(CONV_SPEC))
    return tmp_path / "conv.tile", tmp_path / "conv.json"


def env_with(tmp_path, policy, cache="cache.db"):
    return dict(os.environ, TESSERA_TUNE=policy, TESSERA_CACHE=str(tmp_path / cache))


def run_stats(tessera, tmp_path, program, spec, env, tag):
    stats = tmp_path / f"{tag}.json"
    tessera("run", program, "--spec", spec, "--random", "3", "--out-dir", tmp_path / tag, "--stats", stats, env=env)
    return json.loads(stats.read_text()), np.load(tmp_path / tag / "O.npy")


def test_second_process_is_served_from_the_cache(tessera, tmp_path, conv):
    program, spec = conv
    env = env_with(tmp_path, "full")
    first, out1 = run_stats(tessera, tmp_path, program, spec, env, "first")
    second, out2 = run_stats(tessera, tmp_path, program, spec, env, "second")
    assert first["tuning_trials"] > 1 and first["cache_misses"] == first["kernels"] and first["cache_hits"] == 0
    assert second["tuning_trials"] == 0 and second["cache_hits"] == first["cache_misses"]
    assert second["cache_misses"] == 0 and second["tune_seconds"] == 0
    _, want = run_stats(tessera, tmp_path, program, spec, dict(env, TESSERA_DEVICE="interp"), "interp")
    np.testing.assert_allclose(out1, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out2, want, rtol=1e-4, atol=1e-5)


def test_policies_cached_and_off_never_time(tessera, tmp_path, conv):
    program, spec = conv
    cached, _ = run_stats(tessera, tmp_path, program, spec, env_with(tmp_path, "cached"), "cached")
    assert cached["tuning_trials"] == 0 and cached["cache_misses"] == cached["kernels"]
    off, _ = run_stats(tessera, tmp_path, program, spec, env_with(tmp_path, "off", "other.db"), "off")
    assert off["tuning_trials"] == 0 and off["cache_hits"] == 0 and off["cache_misses"] == 0
    assert not (tmp_path / "other.db").exists()  # off never opens the cache


@pytest.mark.parametrize("device", ["cpu", "opencl:0", "vulkan:0"])
def test_policy_off_creates_no_cache_file_on_any_device(tessera, tmp_path, conv, device):
    if device not in {d["name"] for d in json.loads(tessera("devices", "--json").stdout)}:
        pytest.skip(f"no {device} on this machine")
    program, spec = conv
    env = dict(env_with(tmp_path, "off"), TESSERA_DEVICE=device)
    off, _ = run_stats(tessera, tmp_path, program, spec, env, "off")
    assert off["tuning_trials"] == 0 and off["cache_hits"] == 0 and off["cache_misses"] == 0
    assert not (tmp_path / "cache.db").exists()  # neither schedules nor compiled binaries are stored


def test_unknown_policy_is_an_error(tessera, tmp_path, conv):
    program, spec = conv
    proc = tessera("run", program, "--spec", spec, "--random", "1", "--out-dir", tmp_path,
                   env=env_with(tmp_path, "sometimes"), check=False)
    assert proc.returncode == 1
    assert "TESSERA_TUNE must be online, full, cached or off (it is 'sometimes')" in proc.stderr


def test_tune_prints_a_table_and_fills_the_cache(tessera, tmp_path):
    env = env_with(tmp_path, "off")  # tune tunes whatever the policy says for runs
    proc = tessera("tune", PROGRAMS / "matmul.tile", "--in", "A=f32[64,96]", "--in", "B=f32[96,80]",
                   "--trials", "4", env=env)
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:6] == ["kernel", "from", "trials", "untuned", "ms", "tuned"]
    row = lines[1].split()
    assert row[0] == "C" and row[1] == "tuned" and int(row[2]) == 4
    assert "1 kernels on cpu: 1 tuned (4 trials), 0 from the cache" in proc.stdout
    assert "tuning kernel 1 of 1: C" in proc.stderr  # plain progress lines when not on a terminal
    listed = json.loads(tessera("cache", "list", "--json", env=env).stdout)
    entries = listed["entries"] if isinstance(listed, dict) else listed
    assert [e["kernel_name"] for e in entries] == ["C"] and entries[0]["trials"] == 4
    again = tessera("tune", PROGRAMS / "matmul.tile", "--in", "A=f32[64,96]", "--in", "B=f32[96,80]", env=env)
    assert "1 tuned" not in again.stdout and "1 from the cache" in again.stdout


def test_tune_errors(tessera, tmp_path):
    env = env_with(tmp_path, "off")
    proc = tessera("tune", PROGRAMS / "matmul.tile", "--in", "Z=f32[2,2]", env=env, check=False)
    assert proc.returncode == 1 and "--in names 'Z', which is not an input of" in proc.stderr
    proc = tessera("tune", PROGRAMS / "matmul.tile", "--in", "A=f32[2,x]", env=env, check=False)
    assert proc.returncode == 1 and "'x' is not a dimension size" in proc.stderr
    proc = tessera("tune", PROGRAMS / "matmul.tile", "--in", "A=f32[2,3]", "--in", "B=f32[3,2]", "--trials", "0",
                   env=env, check=False)
    assert proc.returncode == 1 and "--trials" in proc.stderr


CONV_BN = "function (I[N, H, W, C], K[3, 3, C, F], M[F], V[F], G[F], B[F]) -> (O) {\n" \
          "  T[n, x, y, f : N, H - 2, W - 2, F] = +(I[n, x + i, y + j, c] * K[i, j, c, f]);\n" \
          "  D = T - M;\n  S = sqrt(V + 0.001);\n  E = D / S;\n  O = relu(E * G + B);\n}\n"


def test_tune_const_tunes_the_kernels_of_inference_with_the_weights_compiled_in(tessera, tmp_path):
    # An operator tunes `run --const-except I`'s kernels (batch norm folded into the weights, the
    # weights laid out while compiling) without the weights: tune compiles them with random values,
    # and the run with the real ones finds every kernel. Plain `tune` tunes other kernels.
    (tmp_path / "conv.tile").write_text(CONV_BN)
    shapes = {"I": [1, 10, 10, 8], "K": [3, 3, 8, 16], "M": [16], "V": [16], "G": [16], "B": [16]}
    (tmp_path / "conv.json").write_text(json.dumps(
        {"inputs": {n: {"dtype": "float32", "shape": s} for n, s in shapes.items()}}))
    rng = np.random.default_rng(5)
    args = []
    for name, shape in shapes.items():
        value = rng.uniform(0.1, 2.0, shape).astype(np.float32) - (0.5 if name in "IKMB" else 0)
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--in", f"{name}={tmp_path / name}.npy"]

    def const_run(env, tag):
        stats = tmp_path / f"{tag}.json"
        tessera("run", tmp_path / "conv.tile", *args, "--const-except", "I", "--out-dir", tmp_path / tag,
                "--stats", stats, env=env)
        return json.loads(stats.read_text()), np.load(tmp_path / tag / "O.npy")

    tune = ["tune", tmp_path / "conv.tile", "--spec", tmp_path / "conv.json", "--trials", "2", "--seconds", "1"]
    plain = env_with(tmp_path, "cached", "plain.db")
    tessera(*tune, env=plain)
    missed, _ = const_run(plain, "plain")
    assert missed["constants_folded"] > 0 and missed["cache_misses"] == missed["kernels"]

    const = env_with(tmp_path, "cached", "const.db")
    proc = tessera(*tune, "--const-except", "I", env=const)
    assert "1 kernels on cpu: 1 tuned (2 trials)" in proc.stdout
    served, out = const_run(const, "const")
    assert served["cache_hits"] == served["kernels"] == 1 and served["cache_misses"] == 0
    _, want = const_run(dict(const, TESSERA_DEVICE="interp"), "interp")
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)

    proc = tessera(*tune, "--const-except", "Z", env=const, check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip() == "tessera: error: --const-except names 'Z', which is not an input"


def test_two_processes_tuning_into_one_file_lose_nothing(tessera, tmp_path):
    env = env_with(tmp_path, "off")
    binary = tessera("--version").args[0]
    shapes = [("A=f32[32,48]", "B=f32[48,64]"), ("A=f32[40,32]", "B=f32[32,96]")]
    procs = [subprocess.Popen([binary, "tune", str(PROGRAMS / "matmul.tile"), "--in", a, "--in", b, "--trials", "3"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for a, b in shapes]
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
    listed = json.loads(tessera("cache", "list", "--json", env=env).stdout)
    entries = listed["entries"] if isinstance(listed, dict) else listed
    assert len(entries) == 2 and all(e["trials"] == 3 for e in entries)


def test_a_corrupt_cache_is_set_aside_and_the_run_goes_on(tessera, tmp_path, conv):
    program, spec = conv
    (tmp_path / "cache.db").write_bytes(b"this is not a database" * 100)
    env = env_with(tmp_path, "full")
    proc = tessera("run", program, "--spec", spec, "--random", "1", "--out-dir", tmp_path / "o", env=env)
    assert proc.stderr.count("cannot be used") == 1 and "moved aside" in proc.stderr
    second, _ = run_stats(tessera, tmp_path, program, spec, env, "after")
    assert second["cache_misses"] == 0 and second["cache_hits"] >= 1 and second["tuning_trials"] == 0


def test_online_never_waits_and_tunes_between_runs(tessera, tmp_path, conv):
    program, spec = conv
    env = env_with(tmp_path, "online")
    one, _ = run_stats(tessera, tmp_path, program, spec, env, "one")
    assert one["tuning_trials"] == 0 and one["tune_seconds"] == 0  # the compile times nothing
    assert one["online"]["runs"] == 1 and one["online"]["kernels"] == []  # nor does one run
    # A budget far beyond the runs' time: the conv kernel is tuned between runs and settled. (Runs
    # take tens of microseconds, and the budget grows with their time: with a share of 1000 a CI
    # run once ended the 40 runs with a search done but its trial, seven runs, not finished.)
    env = dict(env, TESSERA_TUNE_SHARE="1000000")
    stats = tmp_path / "many.json"
    tessera("run", program, "--spec", spec, "--random", "3", "--repeat", "40", "--out-dir", tmp_path / "many",
            "--stats", stats, env=env)
    online = json.loads(stats.read_text())["online"]
    assert online["runs"] == 40 and online["trials"] >= 1 and online["tune_seconds"] > 0
    conv_kernel = online["kernels"][0]
    assert conv_kernel["kernel"] == "O" and conv_kernel["seconds_before"] > 0
    assert conv_kernel["outcome"] in ("swapped", "kept", "untuned")
    assert [s["kernel"] for s in online["swaps"]] == [k["kernel"] for k in online["kernels"] if k["outcome"] == "swapped"]
    assert all(s["run"] > 2 for s in online["swaps"])  # never in the first run, which nothing tuned
    _, want = run_stats(tessera, tmp_path, program, spec, dict(env, TESSERA_DEVICE="interp"), "interp")
    np.testing.assert_allclose(np.load(tmp_path / "many" / "O.npy"), want, rtol=1e-4, atol=1e-5)
    # The next process starts from the decisions.
    after, out = run_stats(tessera, tmp_path, program, spec, env_with(tmp_path, "online"), "after")
    assert after["cache_hits"] >= 1 and after["tuning_trials"] == 0
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)


def test_a_process_killed_while_tuning_leaves_a_valid_cache(tessera, tmp_path):
    """Kernels tuned between runs are stored one transaction each: a SIGKILL in the middle loses
    none that were stored, and the file opens and serves them afterwards."""
    # Many distinct kernels, so that tuning is still going on when the process is killed.
    lines = [f"  T{i}[i, j : M, N{i}] = +(A[i, k] * B{i}[k, j]);" for i in range(12)]
    outs = ", ".join(f"T{i}" for i in range(12))
    ins = ", ".join(f"B{i}[K, N{i}]" for i in range(12))
    (tmp_path / "mm.tile").write_text(f"function (A[M, K], {ins}) -> ({outs}) {{\n" + "\n".join(lines) + "\n}\n")
    spec = {"A": {"dtype": "float32", "shape": [64, 64]}}
    spec.update({f"B{i}": {"dtype": "float32", "shape": [64, 40 + 8 * i]} for i in range(12)})
    (tmp_path / "mm.json").write_text(json.dumps({"inputs": spec}))
    env = dict(env_with(tmp_path, "online"), TESSERA_TUNE_SHARE="1000000")
    binary = tessera("--version").args[0]
    proc = subprocess.Popen([binary, "run", str(tmp_path / "mm.tile"), "--spec", str(tmp_path / "mm.json"),
                             "--random", "1", "--repeat", "1000000", "--out-dir", str(tmp_path / "o")],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stored():
        try:
            with sqlite3.connect(f"file:{tmp_path / 'cache.db'}?mode=ro", uri=True, timeout=5) as db:
                return {row[0] for row in db.execute("SELECT kernel_name FROM schedules")}
        except sqlite3.Error:
            return set()

    deadline = time.monotonic() + 120
    while len(stored()) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    seen = stored()
    assert len(seen) >= 2, "tuning stored nothing within 120 s"
    listed = json.loads(tessera("cache", "list", "--json", env=env).stdout)
    entries = listed["entries"] if isinstance(listed, dict) else listed
    assert seen <= {e["kernel_name"] for e in entries}
    with sqlite3.connect(tmp_path / "cache.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    stats = tmp_path / "again.json"
    tessera("run", tmp_path / "mm.tile", "--spec", tmp_path / "mm.json", "--random", "1", "--out-dir", tmp_path / "o2",
            "--stats", stats, env=env_with(tmp_path, "cached"))
    assert json.loads(stats.read_text())["cache_hits"] >= len(seen)
