"""Inputs at and past Tessera's limits (issue 19), on every device this machine has: tensors too
large for a device or for an int64 size, programs 100,000 statements deep, outputs that cannot all
be written, and the odd arguments a user or an attacker tries. Each gets one clear error, exit code
1 and no file written, or the right result; never a crash."""
import json
import os
import pathlib
import re
import signal
import subprocess

import numpy as np
import pytest

import tessera as ts
from testpaths import PROGRAMS

DEVICES = ts.devices()
INT64_MAX = 2**63 - 1


def write(path, text):
    path = pathlib.Path(path)
    path.write_text(text)
    return path


def files_in(path):
    path = pathlib.Path(path)
    return sorted(p.name for p in path.iterdir()) if path.exists() else []


@pytest.fixture
def fails(tessera, tmp_path):
    """Runs tessera expecting exit code 1 with nothing on stdout and no new file; returns stderr."""
    def run(*args, env=None):
        before = files_in(tmp_path)
        proc = tessera(*args, check=False, cwd=tmp_path, env=env)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert proc.stdout == "", proc.stdout
        assert files_in(tmp_path) == before, "a failed command wrote files"
        assert "Segmentation" not in proc.stderr and "internal error" not in proc.stderr
        return proc.stderr
    return run


@pytest.fixture
def a4(tmp_path):
    np.save(tmp_path / "a4.npy", np.arange(4, dtype=np.float32))
    return "A=a4.npy"


def device_limit(tessera, device):
    for d in json.loads(tessera("devices", "--json").stdout):
        if d["name"] == device:
            return d["max_tensor_bytes"]
    raise AssertionError(device)


# --- tensors larger than a device holds ------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_a_temporary_larger_than_the_device_is_refused_before_allocating(tessera, fails, tmp_path, a4,
                                                                          device):
    write(tmp_path / "p.tile", "function (A[M]) -> (C) {\n"
                               "  T[i, j : 1000000, 1000000] = +(A[i]);\n"
                               "  C[i : 1] = +(T[i, j]);\n}\n")
    limit = device_limit(tessera, device)
    assert 0 < limit < 4 * 10**12
    err = fails("run", "p.tile", "--in", a4, "--device", device, "--out-dir", "o")
    assert err.startswith("p.tile:2:3: error: tensor 'T' float32[1000000, 1000000] needs "
                          f"4000000000000 bytes; device {device} holds at most {limit}\n"), err


@pytest.mark.parametrize("device", DEVICES)
def test_an_output_larger_than_the_device_is_refused(tessera, fails, tmp_path, a4, device):
    write(tmp_path / "p.tile", "function (A[M]) -> (C) {\n  C[i, j : 1000000, 1000000] = +(A[i]);\n}\n")
    err = fails("run", "p.tile", "--in", a4, "--device", device, "--out-dir", "o")
    assert re.match(r"p\.tile:2:3: error: tensor 'C' float32\[1000000, 1000000\] needs 4000000000000 "
                    rf"bytes; device {re.escape(device)} holds at most \d+\n", err), err


def test_a_large_tensor_from_python_names_the_tensor():
    with pytest.raises(ts.TileError, match=r"tensor 'C' float32\[1000000, 1000000\] needs 4000000000000 bytes"):
        ts.run("function (A[M]) -> (C) { C[i, j : 1000000, 1000000] = +(A[i]); }",
               {"A": np.zeros(4, np.float32)}, device="cpu")


# --- sizes that overflow int64 ---------------------------------------------------------------

OVERFLOW = f"needs more than {INT64_MAX} bytes; no device holds that much"


@pytest.mark.parametrize("device", DEVICES)
def test_an_output_whose_size_overflows_is_an_error_on_every_device(fails, tmp_path, a4, device):
    write(tmp_path / "p.tile",
          "function (A[M]) -> (C) {\n  C[i, j : 4294967296, 4294967296] = +(A[i]);\n}\n")
    err = fails("run", "p.tile", "--in", a4, "--device", device, "--out-dir", "o")
    assert err.startswith("p.tile:2:3: error: tensor 'C' float32[4294967296, 4294967296] " + OVERFLOW), err


def test_an_overflowing_size_from_python_is_an_error():
    with pytest.raises(ts.TileError, match=re.escape(OVERFLOW)):
        ts.run("function (A[M]) -> (C) { C[i, j : 4294967296, 4294967296] = +(A[i]); }",
               {"A": np.zeros(4, np.float32)}, device="interp")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [[4294967296, 4294967296], [2**62, 4]])
def test_a_spec_with_overflowing_shapes_writes_nothing(fails, tmp_path, device, shape):
    write(tmp_path / "p.tile", "function (A) -> (C) { C = A + 1; }\n")
    write(tmp_path / "s.json", json.dumps({"inputs": {"A": {"dtype": "float32", "shape": shape}}}))
    err = fails("run", "p.tile", "--spec", "s.json", "--random", "1", "--device", device, "--out-dir", "o")
    assert err == f"tessera: error: tensor 'A' float32[{shape[0]}, {shape[1]}] {OVERFLOW}\n", err


def test_a_spec_larger_than_the_device_writes_nothing(tessera, fails, tmp_path):
    write(tmp_path / "p.tile", "function (A) -> (C) { C = A + 1; }\n")
    write(tmp_path / "s.json", json.dumps({"inputs": {"A": {"dtype": "float32", "shape": [2**40]}}}))
    limit = device_limit(tessera, "cpu")
    err = fails("run", "p.tile", "--spec", "s.json", "--random", "1", "--device", "cpu", "--out-dir", "o")
    assert err == (f"s.json: error: tensor 'A' float32[{2**40}] needs {4 * 2**40} bytes; "
                   f"device cpu holds at most {limit}\n"), err


def test_lower_of_an_overflowing_matmul_is_an_error(fails):
    big = 4611686018427387904
    err = fails("lower", PROGRAMS / "matmul.tile", "--in", f"A=f32[{big},3]", "--in", f"B=f32[3,{big}]")
    assert f"error: tensor 'A' float32[{big}, 3] {OVERFLOW}" in err, err


def test_reshape_to_an_overflowing_shape_is_an_error(fails, tmp_path, a4):
    write(tmp_path / "p.tile", "function (A[M]) -> (C) {\n  C = reshape(A, 4294967296, 4294967296, 4);\n}\n")
    err = fails("run", "p.tile", "--in", a4, "--device", "interp", "--out-dir", "o")
    assert "cannot reshape float32[4] (4 elements) to float32[4294967296, 4294967296, 4] " \
           "(too many elements)" in err, err


# --- deep programs ---------------------------------------------------------------------------

def chain(n):
    lines = ["function (T0[N]) -> (R) {"]
    lines += [f"  T{k} = T{k - 1} + 1;" for k in range(1, n + 1)]
    lines += [f"  R = T{n};", "}"]
    return "\n".join(lines) + "\n"


def test_a_chain_of_100000_statements_compiles_and_runs(tessera, tmp_path):
    write(tmp_path / "deep.tile", chain(100000))
    np.save(tmp_path / "t.npy", np.array([0.0, 1.5, -2.0], np.float32))
    for device in ["interp", "cpu"]:
        tessera("run", "deep.tile", "--in", "T0=t.npy", "--device", device, "--out-dir", device, cwd=tmp_path)
        np.testing.assert_array_equal(np.load(tmp_path / device / "R.npy"),
                                      np.array([100000.0, 100001.5, 99998.0], np.float32))
    tile = tessera("lower", "deep.tile", "--in", "T0=f32[3]", "--emit", "tile", cwd=tmp_path).stdout
    assert "T99999 = " in tile


# --- output files ----------------------------------------------------------------------------

def test_an_output_that_cannot_be_written_leaves_no_other_output(tessera, tmp_path, a4):
    write(tmp_path / "p.tile", "function (A[N]) -> (C1, C2) {\n  C1 = A + 1;\n  C2 = A * 2;\n}\n")
    (tmp_path / "o2" / "C2.npy").mkdir(parents=True)
    (tmp_path / "o3").mkdir()
    np.save(tmp_path / "o3" / "C1.npy", np.zeros(2, np.int8))  # an earlier result stays as it was
    (tmp_path / "o3" / "C2.npy").mkdir()
    for out in ["o2", "o3"]:
        before = files_in(tmp_path / out)
        proc = tessera("run", "p.tile", "--in", a4, "--device", "interp", "--out-dir", out,
                       check=False, cwd=tmp_path)
        assert proc.returncode == 1
        assert proc.stderr == f"{out}/C2.npy: error: cannot write file: Is a directory\n", proc.stderr
        assert files_in(tmp_path / out) == before
    np.testing.assert_array_equal(np.load(tmp_path / "o3" / "C1.npy"), np.zeros(2, np.int8))


# --- odd arguments ---------------------------------------------------------------------------

def test_a_directory_as_the_program(fails, tmp_path):
    (tmp_path / "prog.tile").mkdir()
    assert fails("run", "prog.tile", "--out-dir", "o") == "prog.tile: error: is a directory\n"
    assert fails("lower", "prog.tile") == "prog.tile: error: is a directory\n"


@pytest.mark.parametrize("command", ["run", "lower", "tune"])
def test_an_empty_device_name_is_an_error(fails, tmp_path, command):
    write(tmp_path / "p.tile", "function (A[N]) -> (C) { C = A + 1; }\n")
    types = ["--in", "A=f32[4]"] if command != "run" else ["--spec", write(tmp_path / "s.json", json.dumps(
        {"inputs": {"A": {"dtype": "float32", "shape": [4]}}})).name, "--random", "1"]
    err = fails(command, "p.tile", *types, "--device", "")
    assert err.startswith("tessera: error: --device: no device is named ''"), err


def test_tune_with_a_cache_it_cannot_open_is_an_error(fails, tmp_path):
    write(tmp_path / "blocker", "a file where the cache's directory should be")
    env = dict(os.environ, TESSERA_CACHE=str(tmp_path / "blocker" / "cache.db"))
    err = fails("tune", PROGRAMS / "matmul.tile", "--in", "A=f32[8,8]", "--in", "B=f32[8,8]", env=env)
    assert err.splitlines()[-1] == (f"tessera: error: cannot tune without the kernel cache "
                                    f"{tmp_path}/blocker/cache.db, which cannot be opened"), err


def test_ctrl_c_during_tune_says_what_the_cache_keeps(tessera, tmp_path):
    binary = tessera("--version").args[0]
    write(tmp_path / "two.tile", "function (A[M, K], B[K, N]) -> (D) {\n"
                                 "  C[m, n : M, N] = +(A[m, k] * B[k, n]);\n"
                                 "  D[m, n : M, N] = +(C[m, k] * B[k, n]);\n}\n")
    cache = tmp_path / "cache.db"
    env = dict(os.environ, TESSERA_CACHE=str(cache))
    proc = subprocess.Popen([binary, "tune", "two.tile", "--in", "A=f32[96,96]", "--in", "B=f32[96,96]",
                             "--trials", "100000", "--seconds", "3"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        for line in proc.stderr:  # plain progress lines: not a terminal
            lines.append(line)
            if line.startswith("tuning kernel 2 of 2"):
                break
        proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read()
        assert proc.wait(timeout=60) == 130
    finally:
        proc.kill()
    assert rest == (f"tessera: interrupted while tuning kernel 2 of 2; kernel cache {cache} keeps "
                    "the 1 kernels tuned before it\n"), "".join(lines) + rest
    listed = json.loads(tessera("cache", "list", "--json", env=env).stdout)
    entries = listed["entries"] if isinstance(listed, dict) else listed
    assert [e["kernel_name"] for e in entries] == ["C"]


# --- op attributes from Python ---------------------------------------------------------------

def test_op_attributes_are_checked():
    x, k = np.zeros((1, 6, 6, 2), np.float32), np.zeros((3, 3, 2, 4), np.float32)
    with pytest.raises(Exception, match=r"conv2d: unknown attribute 'bogus' \(known: .*strides"):
        ts.op("conv2d", [x, k], device="interp", bogus=1)
    with pytest.raises(Exception, match=r"conv2d: unknown attribute 'dilations'"):
        ts.op("conv2d", [x, k], device="interp", dilations=0)
    with pytest.raises(Exception, match=r"conv2d: dilation\[0\] is 0; dilation must be positive"):
        ts.op("conv2d", [x, k], device="interp", dilation_rate=0)
    assert ts.op("conv2d", [x, k], device="interp", dilation_rate=1).shape == (1, 4, 4, 4)


# --- gradients and generated code ------------------------------------------------------------

def test_grad_of_a_default_of_another_rank_is_a_located_error(fails, tmp_path):
    write(tmp_path / "p.tile", "function (A[N], B[N, N]) -> (O) {\n"
                               "  O[i, j : N, N] = +(B[i, j]) default A;\n}\n")
    err = fails("grad", "p.tile", "--wrt", "A,B")
    assert err.startswith("p.tile:2:39: error: the default 'A' has rank 1 but the output 'O' has "
                          "rank 2; a default must have the output's shape\n"), err


RESERVED = ["int8_t", "uint16_t", "float16_t", "int64_t", "f16vec2", "i8vec4", "float4x4", "quad",
            "ptrdiff_t", "mod", "texture", "precision", "sample", "half8", "event_t"]


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "interp"])
def test_indices_named_like_reserved_words_compile(device):
    # Two of the names at a time: each is an index of a contraction and a loop variable in the code.
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    for x, y in zip(RESERVED[::2], RESERVED[1::2] + ["k"]):
        program = f"function (A[M, N]) -> (R) {{ R[{x} : N] = +(A[{y}, {x}]); }}"
        np.testing.assert_array_equal(ts.run(program, {"A": a}, device=device)["R"], a.sum(axis=0))
