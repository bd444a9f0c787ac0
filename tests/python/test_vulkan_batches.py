"""vulkan:N submits recorded dispatches in batches (TESSERA_VULKAN_SUBMIT_EVERY, default 16)
without waiting, so that the device runs one batch while the host records the next. A chain of
kernels that each read the last, a host step in the middle and a product whose descriptor set is
rebound in every repeated run must give the same results submitted one dispatch at a time, in
batches, and only at the host's waits, and interp's."""
import json
import os

import numpy as np
import pytest

# 40 contractions, each its own kernel reading its predecessor (a batch boundary falls between
# every pair with TESSERA_VULKAN_SUBMIT_EVERY=1), and prng_step, which runs on the host and reads Q back mid-run.
CHAIN = "\n".join(f"  T{i + 1}[n, k : N, K] = >(T{i}[n, k] + A[n, k]);" for i in range(40))
PROGRAM = ("function (A[N, K], B[K, M], P[3, 2048]) -> (C, R, Z) {\n  T0 = add(A, 1);\n" + CHAIN +
           "\n  Q = add(P, 1);\n  X = prng_step(Q, 4, 4, 32);\n  R = prng_value(X);\n"
           "  C[n, m : N, M] = +(T40[n, k] * B[k, m]);\n  Z = sub(C, 2);\n}\n")
SPEC = {"inputs": {"A": {"dtype": "float32", "shape": [33, 20]},
                   "B": {"dtype": "float32", "shape": [20, 47]},
                   "P": {"dtype": "uint32", "shape": [3, 2048]}}}
OUTPUTS = ("C", "R", "Z")


def has_vulkan(tessera):
    return "vulkan:0" in {d["name"] for d in json.loads(tessera("devices", "--json").stdout)}


@pytest.fixture
def program(tmp_path):
    (tmp_path / "p.tile").write_text(PROGRAM)
    (tmp_path / "p.json").write_text(json.dumps(SPEC))
    return tmp_path / "p.tile", tmp_path / "p.json"


def outputs(tessera, program, out_dir, device, every=None):
    prog, spec = program
    out_dir.mkdir()
    env = dict(os.environ, TESSERA_TUNE="off")
    env.pop("TESSERA_VULKAN_SUBMIT_EVERY", None)
    if every is not None:
        env["TESSERA_VULKAN_SUBMIT_EVERY"] = every
    tessera("run", prog, "--spec", spec, "--random", 7, "--device", device, "--repeat", 3,
            "--out-dir", out_dir, env=env)
    return {n: np.load(out_dir / f"{n}.npy") for n in OUTPUTS}


def test_batched_submissions_give_what_one_submission_per_wait_and_interp_do(tessera, tmp_path,
                                                                              program):
    if not has_vulkan(tessera):
        pytest.skip("no vulkan:0 on this machine")
    reference = outputs(tessera, program, tmp_path / "interp", "interp")
    at_waits = outputs(tessera, program, tmp_path / "every0", "vulkan:0", "0")
    for every in ("1", "3", None):
        got = outputs(tessera, program, tmp_path / f"every{every}", "vulkan:0", every)
        for name in OUTPUTS:
            assert np.array_equal(got[name], at_waits[name]), (every, name)
            np.testing.assert_allclose(got[name], reference[name], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("value", ["x", "-1", "16k", "2000000"])
def test_a_bad_batch_size_is_a_clear_error(tessera, tmp_path, program, value):
    if not has_vulkan(tessera):
        pytest.skip("no vulkan:0 on this machine")
    prog, spec = program
    proc = tessera("run", prog, "--spec", spec, "--random", 7, "--device", "vulkan:0", "--out-dir",
                   tmp_path, env=dict(os.environ, TESSERA_VULKAN_SUBMIT_EVERY=value), check=False)
    assert proc.returncode == 1
    assert f"TESSERA_VULKAN_SUBMIT_EVERY is '{value}'; expected the dispatches per submission" \
        in proc.stderr
    assert not list(tmp_path.glob("*.npy"))
