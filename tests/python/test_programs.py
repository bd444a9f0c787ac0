"""Runs every tests/programs/*.tile on the interp device with random inputs and compares each output
with the independent numpy reference in references.py."""
import json
import pathlib
import zlib

import numpy as np
import pytest

from testpaths import PROGRAMS
from references import INPUTS, REFERENCES, default_input

PROGRAM_NAMES = sorted(p.stem for p in PROGRAMS.glob("*.tile"))

# (rtol, atol) per float dtype. atol covers results that cancel to near 0, where the order of
# summation (numpy pairwise vs. the interpreter's loop) dominates the relative error.
TOLERANCES = {
    np.dtype(np.float16): (1e-3, 2e-3),
    np.dtype(np.float32): (1e-5, 1e-5),
    np.dtype(np.float64): (1e-12, 1e-12),
}


def seed_of(name):
    return zlib.crc32(name.encode())


def make_inputs(name):
    spec = json.loads((PROGRAMS / f"{name}.json").read_text())["inputs"]
    rng = np.random.default_rng(seed_of(name))
    hints = INPUTS.get(name, {})
    inputs = {}
    for input_name, s in spec.items():
        make = hints.get(input_name, default_input)
        # np.array, not np.ascontiguousarray: that would turn a scalar into shape [1]
        array = np.array(make(rng, tuple(s["shape"]), np.dtype(s["dtype"])), order="C")
        assert array.dtype == np.dtype(s["dtype"]) and array.shape == tuple(s["shape"]), input_name
        inputs[input_name] = array
    return inputs


def assert_matches(name, output, got, want):
    want = np.asarray(want)
    where = f"{name}: output {output}"
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype}, expected {want.dtype}"
    assert got.shape == want.shape, f"{where}: shape {got.shape}, expected {want.shape}"
    if want.dtype in TOLERANCES:
        rtol, atol = TOLERANCES[want.dtype]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=where)
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)


def test_corpus_is_large_enough():
    assert len(PROGRAM_NAMES) >= 45


def test_every_program_has_a_spec_and_a_reference():
    missing_spec = [n for n in PROGRAM_NAMES if not (PROGRAMS / f"{n}.json").exists()]
    missing_ref = [n for n in PROGRAM_NAMES if n not in REFERENCES]
    stale = sorted(set(REFERENCES) - set(PROGRAM_NAMES)) + sorted(set(INPUTS) - set(PROGRAM_NAMES))
    assert not missing_spec, f"programs without NAME.json: {missing_spec}"
    assert not missing_ref, f"programs without a numpy reference: {missing_ref}"
    assert not stale, f"references or input hints for programs that do not exist: {stale}"


@pytest.mark.parametrize("name", PROGRAM_NAMES)
def test_program_matches_numpy(name, tessera, tmp_path):
    inputs = make_inputs(name)
    args = ["run", PROGRAMS / f"{name}.tile", "--device", "interp"]
    for input_name, array in inputs.items():
        path = tmp_path / f"in_{input_name}.npy"
        np.save(path, array)
        args += ["--in", f"{input_name}={path}"]
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    tessera(*args, "--out-dir", out_dir)

    expected = REFERENCES[name](**{k: v.copy() for k, v in inputs.items()})
    written = sorted(p.stem for p in out_dir.glob("*.npy"))
    assert written == sorted(expected), f"{name}: wrote {written}, expected {sorted(expected)}"
    for output, want in expected.items():
        got = np.load(out_dir / f"{output}.npy", allow_pickle=False)
        assert_matches(name, output, got, want)


def test_assign_writing_one_element_twice_is_an_error(tessera, tmp_path):
    # every X[i] assigns O[0]: `=` must not write one element twice (DESIGN.md §3)
    program = tmp_path / "twice.tile"
    program.write_text("function (X[N]) -> (O) {\n  O[0 : 1] = =(X[i]);\n}\n")
    np.save(tmp_path / "x.npy", np.arange(3, dtype=np.float32))
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    proc = tessera("run", program, "--device", "interp", "--in", f"X={tmp_path / 'x.npy'}",
                   "--out-dir", out_dir, check=False)
    assert proc.returncode != 0
    assert "twice.tile:2:3: error:" in proc.stderr and "more than once" in proc.stderr, proc.stderr
    assert not list(out_dir.iterdir())
    # one element is fine
    np.save(tmp_path / "x1.npy", np.array([4.5], dtype=np.float32))
    tessera("run", program, "--device", "interp", "--in", f"X={tmp_path / 'x1.npy'}", "--out-dir", out_dir)
    np.testing.assert_array_equal(np.load(out_dir / "O.npy"), np.array([4.5], np.float32))
