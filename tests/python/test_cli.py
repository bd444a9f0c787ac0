"""The `tessera` binary: `run` against numpy, --spec/--random, --stats, `devices`, and every
bad-input case (exit code 1, one clear message, no output file written)."""
import json
import os
import pathlib
import re

import numpy as np
import pytest

from testpaths import ROOT

MATMUL = "function (A[N, K], B[K, M]) -> (C) { C[n, m : N, M] = +(A[n, k] * B[k, m]); }\n"
COPY = "function (A) -> (B) { B = A; }\n"
MASK64 = (1 << 64) - 1


def write(path, text):
    path = pathlib.Path(path)
    path.write_text(text)
    return path


def rand(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(dtype)


def expected_random(name, seed, dtype, shape):
    """The documented stream of --random (frontends/cli/RandomInput.h), written independently."""
    h = 0xcbf29ce484222325
    for byte in name.encode():
        h = ((h ^ byte) * 0x100000001b3) & MASK64
    state = seed ^ h
    p = {np.float16: 11, np.float32: 24, np.float64: 53}[dtype]
    values = []
    for _ in range(int(np.prod(shape, dtype=np.int64))):
        state = (state + 0x9e3779b97f4a7c15) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & MASK64
        z ^= z >> 31
        values.append(0.5 + (z >> (65 - p)) * 2.0 ** -(p - 1))
    return np.array(values, dtype=np.float64).reshape(shape).astype(dtype)


def files_in(path):
    path = pathlib.Path(path)
    return sorted(p.name for p in path.iterdir()) if path.exists() else []


# --- run -------------------------------------------------------------------------------------

def test_run_matmul_with_in_and_out_dir(tessera, tmp_path):
    prog = write(tmp_path / "matmul.tile", MATMUL)
    a, b = rand((2, 3), seed=1), rand((3, 4), seed=2)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    proc = tessera("run", prog, "--in", "A=a.npy", "--in", "B=b.npy", "--out-dir", "out/sub",
                   cwd=tmp_path)
    c = np.load(tmp_path / "out" / "sub" / "C.npy")
    assert c.dtype == np.float32 and c.shape == (2, 4)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-6)
    assert files_in(tmp_path / "out" / "sub") == ["C.npy"]
    match = re.fullmatch(r"C: float32\[2, 4\] sum=(\S+) -> out/sub/C\.npy\n", proc.stdout)
    assert match, proc.stdout
    total = float(c.astype(np.float64).sum())
    assert float(match.group(1)) == pytest.approx(total, rel=1e-6, abs=1e-9)
    assert proc.stderr == ""


def test_run_writes_to_the_current_directory_by_default(tessera, tmp_path):
    prog = write(tmp_path / "matmul.tile", MATMUL)
    a, b = np.arange(6, dtype=np.int32).reshape(2, 3), np.arange(12, dtype=np.int32).reshape(3, 4)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    proc = tessera("run", "matmul.tile", "--in", "A=a.npy", "--in", "B=b.npy", cwd=tmp_path)
    c = np.load(tmp_path / "C.npy")
    assert c.dtype == np.int32
    np.testing.assert_array_equal(c, a @ b)
    assert proc.stdout == f"C: int32[2, 4] sum={float((a @ b).sum()):.6e} -> C.npy\n"
    assert prog.exists()


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                   np.uint16, np.uint32, np.uint64, np.float16, np.float32,
                                   np.float64])
def test_run_round_trips_every_dtype_through_npy(tessera, tmp_path, dtype):
    prog = write(tmp_path / "copy.tile", COPY)
    rng = np.random.default_rng(5)
    if dtype == np.bool_:
        a = rng.integers(0, 2, (3, 5)).astype(np.bool_)
    elif np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, (3, 5), dtype=dtype, endpoint=True)
    else:
        a = rng.standard_normal((3, 5)).astype(dtype)
    np.save(tmp_path / "a.npy", a)
    tessera("run", prog, "--in", f"A={tmp_path / 'a.npy'}", "--out-dir", tmp_path / "out")
    b = np.load(tmp_path / "out" / "B.npy")
    assert b.dtype == a.dtype and b.shape == a.shape
    np.testing.assert_array_equal(b, a)


def test_run_scalar_and_version_2_npy(tessera, tmp_path):
    prog = write(tmp_path / "copy.tile", COPY)
    with open(tmp_path / "a.npy", "wb") as f:
        np.lib.format.write_array(f, np.array(2.5, dtype=np.float64), version=(2, 0))
    proc = tessera("run", prog, "--in", "A=a.npy", cwd=tmp_path)
    b = np.load(tmp_path / "B.npy")
    assert b.shape == () and b.dtype == np.float64 and b == 2.5
    assert proc.stdout == "B: float64[] sum=2.500000e+00 -> B.npy\n"


# --- --spec / --random ------------------------------------------------------------------------

def matmul_spec(tmp_path, dtype="float32"):
    spec = {"source": "test", "inputs": {"A": {"dtype": dtype, "shape": [3, 5]},
                                         "B": {"dtype": dtype, "shape": [5, 2]}},
            "outputs": {"C": {"dtype": dtype, "shape": [3, 2]}}}
    return write(tmp_path / "spec.json", json.dumps(spec))


def test_random_inputs_follow_the_documented_stream(tessera, tmp_path):
    prog = write(tmp_path / "matmul.tile", MATMUL)
    spec = matmul_spec(tmp_path)
    tessera("run", prog, "--spec", spec, "--random", 7, "--out-dir", tmp_path / "s7")
    a = expected_random("A", 7, np.float32, (3, 5))
    b = expected_random("B", 7, np.float32, (5, 2))
    assert a.min() >= 0.5 and a.max() < 1.5 and len(np.unique(a)) == a.size
    c = np.load(tmp_path / "s7" / "C.npy")
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5)


def test_random_is_deterministic_per_seed(tessera, tmp_path):
    prog = write(tmp_path / "matmul.tile", MATMUL)
    spec = matmul_spec(tmp_path)
    for out, seed in [("first", 3), ("again", 3), ("other", 4)]:
        tessera("run", prog, "--spec", spec, "--random", seed, "--out-dir", tmp_path / out)
    first, again, other = (np.load(tmp_path / d / "C.npy") for d in ("first", "again", "other"))
    assert first.tobytes() == again.tobytes()
    assert not np.array_equal(first, other)


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_random_values_of_other_float_types(tessera, tmp_path, dtype):
    prog = write(tmp_path / "copy.tile", COPY)
    name = np.dtype(dtype).name
    spec = write(tmp_path / "spec.json",
                 json.dumps({"inputs": {"A": {"dtype": name, "shape": [4, 64]}}}))
    tessera("run", prog, "--spec", spec, "--random", 11, cwd=tmp_path)
    b = np.load(tmp_path / "B.npy")
    assert b.dtype == dtype
    np.testing.assert_array_equal(b, expected_random("A", 11, dtype, (4, 64)))
    assert b.min() >= 0.5 and b.max() < 1.5


def test_random_integer_and_bool_inputs_are_one(tessera, tmp_path):
    prog = write(tmp_path / "matmul.tile", MATMUL)
    tessera("run", prog, "--spec", matmul_spec(tmp_path, "int32"), "--random", 1, cwd=tmp_path)
    np.testing.assert_array_equal(np.load(tmp_path / "C.npy"), np.full((3, 2), 5, dtype=np.int32))
    copy = write(tmp_path / "copy.tile", COPY)
    spec = write(tmp_path / "b.json",
                 json.dumps({"inputs": {"A": {"dtype": "bool", "shape": [3]}}}))
    tessera("run", copy, "--spec", spec, "--random", 1, cwd=tmp_path)
    np.testing.assert_array_equal(np.load(tmp_path / "B.npy"), np.ones(3, dtype=np.bool_))


def test_in_files_take_precedence_over_random(tessera, tmp_path):
    prog = write(tmp_path / "matmul.tile", MATMUL)
    a = rand((3, 5), seed=9)
    np.save(tmp_path / "a.npy", a)
    tessera("run", prog, "--spec", matmul_spec(tmp_path), "--random", 2, "--in", "A=a.npy",
            cwd=tmp_path)
    b = expected_random("B", 2, np.float32, (5, 2))
    np.testing.assert_allclose(np.load(tmp_path / "C.npy"), a.astype(np.float64) @ b, rtol=1e-5,
                               atol=1e-6)


# --- --stats, --repeat, devices, --version ----------------------------------------------------

def test_stats_has_every_key(tessera, tmp_path):
    prog = write(tmp_path / "matmul.tile", MATMUL)
    tessera("run", prog, "--spec", matmul_spec(tmp_path), "--random", 1, "--repeat", 3,
            "--stats", tmp_path / "stats.json", "--device", "interp", cwd=tmp_path)
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert set(stats) == {"kernels", "constants_folded", "epilogues_folded", "constant_panels", "cache_hits",
                          "cache_misses", "tuning_trials", "tune_seconds", "compile_seconds",
                          "run_seconds", "device", "online"}
    assert stats["device"] == "interp"
    # interp runs no kernels, so nothing is tuned between its runs
    assert stats["online"] == {"runs": 0, "run_seconds": 0, "tune_seconds": 0, "trials": 0, "kernels": [],
                               "swaps": []}
    for key in ("kernels", "cache_hits", "cache_misses", "tuning_trials"):
        assert isinstance(stats[key], int) and stats[key] >= 0
    for key in ("tune_seconds", "compile_seconds", "run_seconds"):
        assert isinstance(stats[key], float) and 0 <= stats[key] < 60
    assert files_in(tmp_path) == ["C.npy", "matmul.tile", "spec.json", "stats.json"]


def test_repeat_must_be_positive(tessera, tmp_path):
    prog = write(tmp_path / "matmul.tile", MATMUL)
    proc = tessera("run", prog, "--spec", matmul_spec(tmp_path), "--random", 1, "--repeat", 0,
                   check=False, cwd=tmp_path)
    assert proc.returncode == 1 and "--repeat" in proc.stderr
    assert not (tmp_path / "C.npy").exists()


def test_devices_lists_interp(tessera):
    proc = tessera("devices")
    lines = proc.stdout.splitlines()
    assert any(line.split()[:2] == ["interp", "interp"] for line in lines), proc.stdout
    listed = json.loads(tessera("devices", "--json").stdout)
    assert isinstance(listed, list) and len(listed) == len(lines)
    interp = next(d for d in listed if d["name"] == "interp")
    assert set(interp) == {"name", "backend", "description", "max_tensor_bytes", "facts"}
    assert interp["backend"] == "interp" and interp["description"]
    assert interp["max_tensor_bytes"] == os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert isinstance(interp["facts"], dict)


def test_version(tessera):
    version = re.search(r"project\(tessera VERSION (\S+)", (ROOT / "CMakeLists.txt").read_text())
    assert tessera("--version").stdout.strip() == f"tessera {version.group(1)}"


def test_device_comes_from_the_environment(tessera, tmp_path):
    prog = write(tmp_path / "matmul.tile", MATMUL)
    env = dict(os.environ, TESSERA_DEVICE="nope")
    proc = tessera("run", prog, "--spec", matmul_spec(tmp_path), "--random", 1, check=False,
                   cwd=tmp_path, env=env)
    assert proc.returncode == 1
    assert proc.stderr.startswith("tessera: error: unknown device 'nope'")
    env["TESSERA_DEVICE"] = "interp"
    tessera("run", prog, "--spec", matmul_spec(tmp_path), "--random", 1, "--stats", "s.json",
            cwd=tmp_path, env=env)
    assert json.loads((tmp_path / "s.json").read_text())["device"] == "interp"


# --- bad input --------------------------------------------------------------------------------

@pytest.fixture
def bad_run(tessera, tmp_path):
    """Runs `tessera run` expecting failure; returns stderr after checking the exit code and that
    no output file appeared."""
    def run(program, *args):
        prog = write(tmp_path / "prog.tile", program)
        before = files_in(tmp_path)
        proc = tessera("run", prog.name, *args, "--out-dir", "out", "--stats", "stats.json",
                       check=False, cwd=tmp_path)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert proc.stdout == ""
        assert files_in(tmp_path) == before, "a failed run wrote files"
        assert "--help" not in proc.stderr
        return proc.stderr
    return run


def save(tmp_path, name, array, **kwargs):
    np.save(tmp_path / name, array, **kwargs)
    return f"{name[0].upper()}={name}"


def one_line(stderr):
    assert stderr.endswith("\n") and stderr.count("\n") == 1, stderr
    return stderr.rstrip("\n")


def test_syntax_error(bad_run):
    err = bad_run("function (A[N]) -> (B) {\n  B = A +;\n}\n")
    assert re.match(r"\S*prog\.tile:2:\d+: error: ", err), err
    assert "  B = A +;" in err and "^" in err


def test_unknown_name(bad_run, tmp_path):
    err = bad_run("function (A[N]) -> (B) {\n  B = A + Q;\n}\n",
                  "--in", save(tmp_path, "a.npy", rand(3)))
    assert re.match(r"\S*prog\.tile:2:11: error: .*'Q'", err), err


def test_shape_mismatch_with_npy(bad_run, tmp_path):
    err = bad_run(MATMUL, "--in", save(tmp_path, "a.npy", rand((2, 3))),
                  "--in", save(tmp_path, "b.npy", rand((4, 5))))
    first = err.splitlines()[0]
    assert re.match(r"\S*prog\.tile:1:\d+: error: dimension K bound to ", first), err
    assert re.search(r"\b3\b", first) and re.search(r"\b4\b", first), err


def test_missing_input(bad_run, tmp_path):
    err = bad_run(MATMUL, "--in", save(tmp_path, "a.npy", rand((2, 3))))
    assert re.match(r"\S*prog\.tile:1:\d+: error: .*input 'B'", err), err


def test_truncated_npy(bad_run, tmp_path):
    np.save(tmp_path / "a.npy", rand((3, 4), dtype=np.float64))
    data = (tmp_path / "a.npy").read_bytes()
    (tmp_path / "a.npy").write_bytes(data[:128 + 40])
    err = bad_run(MATMUL, "--in", "A=a.npy", "--in", save(tmp_path, "b.npy", rand((4, 2))))
    assert one_line(err) == "a.npy: error: truncated file: expected 96 bytes of data, found 40"


def test_fortran_order_npy(bad_run, tmp_path):
    np.save(tmp_path / "a.npy", np.asfortranarray(rand((3, 4))))
    err = bad_run(MATMUL, "--in", "A=a.npy", "--in", save(tmp_path, "b.npy", rand((4, 2))))
    assert one_line(err) == ("a.npy: error: Fortran-order arrays are not supported "
                             "(save with np.ascontiguousarray)")


def test_unsupported_dtype(bad_run, tmp_path):
    np.save(tmp_path / "a.npy", np.ones((3, 4), dtype=np.complex64))
    err = bad_run(MATMUL, "--in", "A=a.npy", "--in", save(tmp_path, "b.npy", rand((4, 2))))
    assert one_line(err) == "a.npy: error: unsupported dtype '<c8' (complex64)"


def test_big_endian_npy(bad_run, tmp_path):
    np.save(tmp_path / "a.npy", rand((3, 4)).astype(">f4"))
    err = bad_run(MATMUL, "--in", "A=a.npy", "--in", save(tmp_path, "b.npy", rand((4, 2))))
    assert one_line(err).startswith("a.npy: error: big-endian arrays are not supported")


def test_not_an_npy_file(bad_run, tmp_path):
    write(tmp_path / "a.npy", "1,2,3\n")
    err = bad_run(MATMUL, "--in", "A=a.npy", "--in", save(tmp_path, "b.npy", rand((4, 2))))
    assert one_line(err) == "a.npy: error: not a .npy file"


def test_missing_npy_file(bad_run, tmp_path):
    err = bad_run(MATMUL, "--in", "A=nothere.npy", "--in", save(tmp_path, "b.npy", rand((4, 2))))
    assert one_line(err) == "nothere.npy: error: cannot open file: No such file or directory"


def test_unknown_device(bad_run, tmp_path):
    err = bad_run(MATMUL, "--device", "gpu:7", "--in", save(tmp_path, "a.npy", rand((2, 3))),
                  "--in", save(tmp_path, "b.npy", rand((3, 4))))
    assert re.fullmatch(r"tessera: error: unknown device 'gpu:7' \(this machine has: (cpu, )?interp.*\)",
                        one_line(err)), err


def test_unknown_in_name(bad_run, tmp_path):
    err = bad_run(MATMUL, "--in", save(tmp_path, "a.npy", rand((2, 3))),
                  "--in", save(tmp_path, "b.npy", rand((3, 4))), "--in", "Z=a.npy")
    assert one_line(err) == ("tessera: error: --in names 'Z', which is not an input of prog.tile "
                             "(its inputs: A, B)")


def test_in_named_twice(bad_run, tmp_path):
    err = bad_run(MATMUL, "--in", save(tmp_path, "a.npy", rand((2, 3))), "--in", "A=a.npy")
    assert one_line(err) == "tessera: error: --in names 'A' twice"


@pytest.mark.parametrize("argument", ["A", "=a.npy", "A="])
def test_malformed_in(bad_run, argument):
    err = bad_run(MATMUL, "--in", argument)
    assert one_line(err) == f"tessera: error: malformed --in '{argument}': expected NAME=FILE.npy"


@pytest.mark.parametrize("text, message", [
    ("{not json", "spec.json: error: not valid JSON"),
    ("[1, 2]", 'spec.json: error: expected a JSON object with "inputs"'),
    ('{"outputs": {}}', 'spec.json: error: expected an "inputs" object mapping names to types'),
    ('{"inputs": {"A": {"dtype": "float33", "shape": [2, 3]}}}',
     "spec.json: error: input 'A': unknown dtype 'float33'"),
    ('{"inputs": {"A": {"dtype": "float32", "shape": [2, -3]}}}',
     "spec.json: error: input 'A': \"shape\" must hold non-negative integers, not -3"),
    ('{"inputs": {"A": {"dtype": "float32"}}}',
     "spec.json: error: input 'A': \"shape\" must be an array of sizes"),
    ('{"inputs": {"X": {"dtype": "float32", "shape": [2]}}}',
     "spec.json: error: 'X' is not an input of prog.tile (its inputs: A, B)"),
])
def test_bad_spec(bad_run, tmp_path, text, message):
    write(tmp_path / "spec.json", text)
    err = bad_run(MATMUL, "--spec", "spec.json", "--random", "1")
    assert one_line(err) == message


def test_in_file_must_match_the_spec(bad_run, tmp_path):
    matmul_spec(tmp_path)
    np.save(tmp_path / "a.npy", rand((3, 5), dtype=np.float64))
    err = bad_run(MATMUL, "--spec", "spec.json", "--random", "1", "--in", "A=a.npy")
    assert one_line(err) == ("a.npy: error: holds float64[3, 5] but spec.json says input 'A' is "
                             "float32[3, 5]")


def test_spec_without_random_needs_every_input(bad_run, tmp_path):
    matmul_spec(tmp_path)
    err = bad_run(MATMUL, "--spec", "spec.json", "--in", save(tmp_path, "a.npy", rand((3, 5))))
    assert one_line(err) == ("tessera: error: no data for input 'B': pass --in B=FILE.npy, or "
                             "--random SEED to fill it with random values")


def test_const_names_an_input(bad_run, tmp_path):
    a, b = save(tmp_path, "a.npy", rand((2, 3))), save(tmp_path, "b.npy", rand((3, 2)))
    assert one_line(bad_run(MATMUL, "--in", a, "--in", b, "--const", "B,Q")) == \
        "tessera: error: --const names 'Q', which is not an input"
    assert one_line(bad_run(MATMUL, "--in", a, "--in", b, "--const-except", "Z")) == \
        "tessera: error: --const-except names 'Z', which is not an input"
    err = bad_run(MATMUL, "--in", a, "--in", b, "--const", "A", "--const-except", "B")
    assert "excludes" in err


def test_random_needs_spec(bad_run):
    err = bad_run(MATMUL, "--random", "1")
    assert one_line(err) == "tessera: error: --random requires --spec"


def test_run_time_error_writes_no_output(bad_run, tmp_path):
    # C alone could be written; the run fails on B, so neither appears.
    err = bad_run("function (A[N]) -> (C, B) {\n  C = A * 2;\n  B[0 : 1] = =(A[i]);\n}\n",
                  "--in", save(tmp_path, "a.npy", rand(3)))
    assert re.match(r"prog\.tile:3:3: error: .*more than once", err), err


def test_failing_output_write_publishes_nothing(tessera, tmp_path):
    prog = write(tmp_path / "matmul.tile", MATMUL)
    proc = tessera("run", prog, "--spec", matmul_spec(tmp_path), "--random", 1, "--out-dir", "out",
                   "--stats", "no/such/dir/stats.json", check=False, cwd=tmp_path)
    assert proc.returncode == 1
    assert one_line(proc.stderr) == ("no/such/dir/stats.json: error: cannot write file: "
                                     "No such file or directory")
    assert files_in(tmp_path / "out") == []  # neither C.npy nor a temporary file


def test_lower_emits_each_devices_source(tessera, tmp_path):
    prog = write(tmp_path / "mm.tile", MATMUL)
    types = ["--in", "A=f32[4,8]", "--in", "B=f32[8,16]"]
    loops = tessera("lower", prog, *types, "--emit", "loops").stdout
    assert "for " in loops and "C[" in loops
    llvm_ir = tessera("lower", prog, *types, "--emit", "source", "--device", "cpu").stdout
    assert "define" in llvm_ir and "tk_C" in llvm_ir
    devices = tessera("devices").stdout
    if "opencl:0" in devices:
        assert "__kernel void tk_C" in tessera("lower", prog, *types, "--emit", "source", "--device", "opencl:0").stdout
    proc = tessera("lower", prog, *types, "--emit", "source", "--device", "interp", check=False)
    assert proc.returncode == 1
    assert "device 'interp' has no source form to show" in proc.stderr


CONV_BN = """function (I[N, H, W, C], K[3, 3, C, F], G[F], B[F]) -> (O) {
  T[n, i, j, f : N, H, W, F] = +(I[n, i + k - 1, j + l - 1, c] * K[k, l, c, f]);
  S = mul(T, G);
  U = add(S, B);
  O = relu(U);
}
"""


def test_lower_shows_what_constants_compile_to(tessera, tmp_path):
    # As `run --const-except I` compiles it: the scale and shift folded into the weights and one
    # shift, the weights read from a panel laid out while compiling; without --const, K, G and B
    # are read as written.
    prog = write(tmp_path / "conv.tile", CONV_BN)
    types = ["--in", "I=f32[1,16,16,64]", "--in", "K=f32[3,3,64,128]", "--in", "G=f32[128]",
             "--in", "B=f32[128]"]
    plain = tessera("lower", prog, *types, "--device", "cpu").stdout
    const = tessera("lower", prog, *types, "--device", "cpu", "--const-except", "I").stdout
    kernel = [line for line in const.splitlines() if line.startswith("kernel ")]
    assert len(kernel) == 1, kernel
    assert "T_shift: float32[128] in" in kernel[0] and "T_weights@panel" in kernel[0], kernel
    assert "G: float32[128] in" in plain and "@panel" not in plain
    assert tessera("lower", prog, *types, "--device", "cpu", "--const", "K,G,B").stdout == const
    proc = tessera("lower", prog, *types, "--const-except", "X", check=False)
    assert proc.returncode == 1
    assert one_line(proc.stderr) == "tessera: error: --const-except names 'X', which is not an input"
    proc = tessera("lower", prog, *types, "--const-except", "I", "--target", "generic", check=False)
    assert proc.returncode == 1
    assert one_line(proc.stderr) == ("tessera: error: --const shows a device's lowering; "
                                     "drop --target generic")
