"""`tessera cache stats|list|export|import|clear [--json]` on a TESSERA_CACHE file filled by importing
hand-written JSON lines; bad input exits 1 with one message and changes nothing."""
import json
import os
import re

import pytest

SCHEDULE = {"tile_sizes": [8, 32, 1], "loop_order": [1, 0, 2], "vector_index": 1, "vector_width": 16,
            "unroll": 2, "parallel_loops": 1, "workgroup": [], "use_local_memory": False}
OTHER_SCHEDULE = dict(SCHEDULE, tile_sizes=[4, 4, 1], unroll=1)
MATMUL = "kernel kernel(p0: float32[4] out) {\n  p0[0] = 0.0\n}\n"
CONV = "kernel conv(p0: float32[8] out) {\n  p0[1] = 1.0\n}\n"
CPU = "backend=llvm;cores=2;cpu=rocketlake;vector_bits=512"
GPU = "backend=opencl;compute_units=2;device=Some GPU;vendor=X"


def fnv1a_128(text):
    """The cache key's hash (KernelCache::hash), written independently."""
    h = 0x6c62272e07bb014262b821756295c58d
    for byte in text.encode():
        h = ((h ^ byte) * ((1 << 88) + 0x13b)) % (1 << 128)
    return f"{h:032x}"


def line(kernel, device, seconds, schedule=SCHEDULE, name="matmul", **extra):
    entry = {"kernel_name": name, "kernel": kernel, "device": device, "version": "0.1.0", "seconds": seconds,
             "untuned_seconds": 4 * seconds, "trials": 6, "flops": 2e9, "schedule": schedule}
    entry.update(extra)
    return json.dumps(entry) + "\n"


@pytest.fixture
def cache(tessera, tmp_path):
    """Runs `tessera cache ARGS...` on tmp_path/c/cache.db; returns the CompletedProcess."""
    env = dict(os.environ, TESSERA_CACHE=str(tmp_path / "c" / "cache.db"))

    def run(*args, check=True, file=None):
        if file is not None:
            env["TESSERA_CACHE"] = str(file)
        return tessera("cache", *args, check=check, env=env)

    return run


def fill(cache, tmp_path, text, name="in.jsonl"):
    path = tmp_path / name
    path.write_text(text)
    return json.loads(cache("import", path, "--json").stdout)


def test_empty_cache(cache, tmp_path):
    stats = json.loads(cache("stats", "--json").stdout)
    assert stats["path"] == str(tmp_path / "c" / "cache.db")
    assert (stats["schedules"], stats["binaries"], stats["devices"]) == (0, 0, 0)
    assert (tmp_path / "c" / "cache.db").exists()
    assert json.loads(cache("list", "--json").stdout) == []
    assert "schedules  0" in cache("stats").stdout


def test_import_then_stats_and_list(cache, tmp_path):
    result = fill(cache, tmp_path, line(MATMUL, CPU, 0.5) + "\n" + line(CONV, GPU, 0.25, json.dumps(OTHER_SCHEDULE), "conv"))
    assert (result["added"], result["improved"], result["kept"]) == (2, 0, 0)
    stats = json.loads(cache("stats", "--json").stdout)
    assert (stats["schedules"], stats["devices"]) == (2, 2)
    assert stats["file_bytes"] > 0

    entries = json.loads(cache("list", "--json").stdout)
    assert [e["kernel_name"] for e in entries] == ["conv", "matmul"]
    conv, matmul = entries
    assert matmul["kernel_hash"] == fnv1a_128(MATMUL)
    assert (matmul["device"], matmul["version"], matmul["trials"]) == (CPU, "0.1.0", 6)
    assert (matmul["seconds"], matmul["untuned_seconds"], matmul["flops"]) == (0.5, 2.0, 2e9)
    assert matmul["schedule"] == SCHEDULE
    assert conv["schedule"] == OTHER_SCHEDULE  # given as a JSON string, stored as the schedule

    table = cache("list").stdout.splitlines()
    assert table[0].split()[:4] == ["kernel", "hash", "device", "version"]
    row = next(r for r in table if r.startswith("matmul"))
    # kernel, hash prefix, short device, version, trials, untuned ms, tuned ms, speed-up, GFLOP/s (2e9 / 0.5 s)
    assert row.split()[:9] == ["matmul", fnv1a_128(MATMUL)[:12], "llvm:rocketlake", "0.1.0", "6", "2000.000",
                               "500.000", "4.00x", "4.0"]
    assert "opencl:Some" in next(r for r in table if r.startswith("conv"))
    assert table[-1] == f"2 schedules in {tmp_path / 'c' / 'cache.db'}"


def test_export_import_round_trip(cache, tmp_path):
    fill(cache, tmp_path, line(MATMUL, CPU, 0.5) + line(CONV, GPU, 0.25, OTHER_SCHEDULE, "conv"))
    out = tmp_path / "export.jsonl"
    assert json.loads(cache("export", out, "--json").stdout) == {"file": str(out), "schedules": 2}
    assert cache("export", out).stdout == f"exported 2 schedules to {out}\n"
    lines = [json.loads(l) for l in out.read_text().splitlines()]
    assert [(l["kernel"], l["device"], l["seconds"], l["schedule"]) for l in lines] == [
        (CONV, GPU, 0.25, OTHER_SCHEDULE), (MATMUL, CPU, 0.5, SCHEDULE)]
    assert all(l["kernel_hash"] == fnv1a_128(l["kernel"]) for l in lines)

    other = tmp_path / "other" / "cache.db"
    result = json.loads(cache("import", out, "--json", file=other).stdout)
    assert (result["added"], result["improved"], result["kept"]) == (2, 0, 0)
    again = tmp_path / "again.jsonl"
    cache("export", again, file=other)
    assert again.read_text() == out.read_text()
    assert cache("export", "-", file=other).stdout == out.read_text()


def test_import_never_replaces_a_better_timing(cache, tmp_path):
    fill(cache, tmp_path, line(MATMUL, CPU, 0.5))
    result = fill(cache, tmp_path, line(MATMUL, CPU, 0.75, OTHER_SCHEDULE), "slower.jsonl")
    assert (result["added"], result["improved"], result["kept"]) == (0, 0, 1)
    [entry] = json.loads(cache("list", "--json").stdout)
    assert (entry["seconds"], entry["schedule"]) == (0.5, SCHEDULE)
    result = fill(cache, tmp_path, line(MATMUL, CPU, 0.125, OTHER_SCHEDULE), "faster.jsonl")
    assert (result["added"], result["improved"], result["kept"]) == (0, 1, 0)
    [entry] = json.loads(cache("list", "--json").stdout)
    assert (entry["seconds"], entry["schedule"]) == (0.125, OTHER_SCHEDULE)
    text = cache("import", tmp_path / "slower.jsonl").stdout
    assert text.startswith(f"imported {tmp_path / 'slower.jsonl'}: 0 added, 0 improved, 1 kept")


@pytest.mark.parametrize("bad, message", [
    ("{not json", "malformed JSON"),
    (json.dumps({"kernel": "K", "device": "d", "version": "v", "schedule": SCHEDULE}), "missing field 'seconds'"),
    (line(CONV, GPU, 0.5, {"unroll": 0}), "field 'schedule': malformed schedule JSON"),
    (line(CONV, GPU, 0.5, kernel_hash="0" * 32), "field 'kernel_hash'"),
])
def test_a_bad_import_file_changes_nothing(cache, tmp_path, bad, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(line(MATMUL, CPU, 0.5) + bad + "\n" + line(CONV, GPU, 0.5))
    proc = cache("import", path, check=False)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert re.fullmatch(re.escape(f"{path}:2: error: {message}") + r".*\n", proc.stderr), proc.stderr
    assert json.loads(cache("stats", "--json").stdout)["schedules"] == 0


def test_missing_files_are_errors(cache, tmp_path):
    proc = cache("import", tmp_path / "absent.jsonl", check=False)
    assert (proc.returncode, proc.stderr) == (1, f"{tmp_path / 'absent.jsonl'}: error: cannot read file\n")
    fill(cache, tmp_path, line(MATMUL, CPU, 0.5))
    target = tmp_path / "no-such-dir" / "out.jsonl"
    proc = cache("export", target, check=False)
    assert proc.returncode == 1 and "error" in proc.stderr and str(target) in proc.stderr
    assert not target.parent.exists() or not any(target.parent.iterdir())


def test_clear(cache, tmp_path):
    fill(cache, tmp_path, line(MATMUL, CPU, 0.5) + line(CONV, GPU, 0.25))
    cleared = json.loads(cache("clear", "--json").stdout)
    assert (cleared["schedules_removed"], cleared["binaries_removed"]) == (2, 0)
    assert json.loads(cache("stats", "--json").stdout)["schedules"] == 0
    assert cache("clear").stdout.startswith("cleared ")


def test_a_garbage_cache_file_is_set_aside_once(cache, tmp_path):
    path = tmp_path / "c" / "cache.db"
    path.parent.mkdir()
    path.write_bytes(bytes(range(256)) * 64)
    proc = cache("stats", "--json")
    assert proc.stderr == (f"tessera: warning: kernel cache {path} cannot be used (it is not a SQLite database); "
                           f"moved aside to {path}.bad-1\n")
    assert (tmp_path / "c" / "cache.db.bad-1").read_bytes() == bytes(range(256)) * 64
    assert json.loads(proc.stdout)["schedules"] == 0
    fill(cache, tmp_path, line(MATMUL, CPU, 0.5))
    proc = cache("stats", "--json")
    assert proc.stderr == ""
    assert json.loads(proc.stdout)["schedules"] == 1


def test_the_default_file_follows_xdg_cache_home(tessera, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TESSERA_CACHE"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    stats = json.loads(tessera("cache", "stats", "--json", env=env).stdout)
    assert stats["path"] == str(tmp_path / "xdg" / "tessera" / "cache.db")
    assert (tmp_path / "xdg" / "tessera" / "cache.db").exists()


# Rows of 99: a whole number of no vector width (4, 8, 16), so the reduction stays one kernel on every CPU
# (docs/runtime.md: row reductions in two stages).
ROW_MAX = "function (A[N, K, L]) -> (B) {\n  B[n, k : N, K] = >(A[n, k, l]);\n}\n"


@pytest.mark.parametrize("line_of, other", [("cost model", json.dumps(OTHER_SCHEDULE)),
                                             ("search space", "1")])
def test_a_schedule_tuned_from_another_proposal_or_search_is_a_miss(tessera, tmp_path, line_of, other):
    """The cache keys a tuned schedule by its kernel, the cost model's schedule it beat and the
    search space's version: what an older build tuned against another proposal, or chose among
    other candidates, is not taken, so that tuning starts again from the new ones."""
    prog = tmp_path / "max.tile"
    prog.write_text(ROW_MAX)
    spec = tmp_path / "max.json"
    spec.write_text(json.dumps({"inputs": {"A": {"dtype": "float32", "shape": [12, 128, 99]}}}))
    tuned = tmp_path / "tuned.db"
    tessera("tune", prog, "--spec", spec, "--trials", 2, env=dict(os.environ, TESSERA_CACHE=str(tuned)))

    def cache_counts(cache_file):
        env = dict(os.environ, TESSERA_CACHE=str(cache_file), TESSERA_TUNE="cached")
        tessera("run", prog, "--spec", spec, "--random", 1, "--out-dir", tmp_path,
                "--stats", tmp_path / "stats.json", env=env)
        stats = json.loads((tmp_path / "stats.json").read_text())
        return stats["cache_hits"], stats["cache_misses"]

    def imported(entry, name):
        path = tmp_path / f"{name}.jsonl"
        path.write_text(json.dumps(entry) + "\n")
        cache_file = tmp_path / f"{name}.db"
        tessera("cache", "import", path, env=dict(os.environ, TESSERA_CACHE=str(cache_file)))
        return cache_file

    assert cache_counts(tuned) == (1, 0)
    exported = tmp_path / "tuned.jsonl"
    tessera("cache", "export", exported, env=dict(os.environ, TESSERA_CACHE=str(tuned)))
    entry = json.loads(exported.read_text())
    assert cache_counts(imported(entry, "same")) == (1, 0)  # as it is, a hit
    lines = entry["kernel"].splitlines(keepends=True)
    marked = [i for i, text in enumerate(lines) if text.startswith(f"// {line_of}: ")]
    assert len(marked) == 1, entry["kernel"]
    assert lines[marked[0]] != f"// {line_of}: {other}\n"
    # The same entry as a build that proposed OTHER_SCHEDULE, or searched version 1's space, stored it.
    lines[marked[0]] = f"// {line_of}: {other}\n"
    entry["kernel"] = "".join(lines)
    del entry["kernel_hash"]
    assert cache_counts(imported(entry, "older")) == (0, 1)
