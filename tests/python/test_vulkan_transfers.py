"""vulkan:N moves data between host and device by copies where it maps a tensor's memory, and
through a host-cached staging buffer that the device copies to or from where it does not
(TESSERA_VULKAN_MEMORY=device: tensors in device-local memory, as on a discrete GPU without a
resizable BAR) or where the host would read it uncached (a discrete GPU's mapped memory;
TESSERA_VULKAN_READBACK=staged stages every read). lavapipe's memory is all host-mapped and cached,
so those settings are how the staged paths run here: their results must be the direct transfers'
and interp's, for outputs of several sizes, a range of a larger buffer, and a run repeated (the
staging buffer grows and is reused)."""
import json
import os

import numpy as np
import pytest

# Outputs of two sizes and a host step (prng_step runs on the host) that reads Q back while T1 is
# alive: Q is a range of the temporaries' buffer, not at its start.
PROGRAM = "function (A[N, K], B[K, M], P[3, 2048]) -> (C, D, R) {\n" \
          "  T1[n, m : N, M] = +(A[n, k] * B[k, m]);\n" \
          "  Q = add(P, 1);\n" \
          "  X = prng_step(Q, 4, 4, 32);\n" \
          "  R = prng_value(X);\n" \
          "  C = add(T1, 0.5);\n" \
          "  D = sub(T1, 1.5);\n}\n"
SPEC = {"inputs": {"A": {"dtype": "float32", "shape": [33, 20]},
                   "B": {"dtype": "float32", "shape": [20, 47]},
                   "P": {"dtype": "uint32", "shape": [3, 2048]}}}
OUTPUTS = ("C", "D", "R")


@pytest.fixture
def program(tmp_path):
    (tmp_path / "p.tile").write_text(PROGRAM)
    (tmp_path / "p.json").write_text(json.dumps(SPEC))
    return tmp_path / "p.tile", tmp_path / "p.json"


def outputs(tessera, program, out_dir, device, **settings):
    prog, spec = program
    out_dir.mkdir()
    env = dict(os.environ, TESSERA_TUNE="off")
    for name in ("TESSERA_VULKAN_READBACK", "TESSERA_VULKAN_MEMORY"):
        env.pop(name, None)
    env.update(settings)
    tessera("run", prog, "--spec", spec, "--random", 7, "--device", device, "--repeat", 3,
            "--out-dir", out_dir, env=env)
    return {n: np.load(out_dir / f"{n}.npy") for n in OUTPUTS}


@pytest.mark.parametrize("settings", [{"TESSERA_VULKAN_READBACK": "staged"},
                                      {"TESSERA_VULKAN_MEMORY": "device"},
                                      {"TESSERA_VULKAN_MEMORY": "device", "TESSERA_VULKAN_READBACK": "staged"}],
                         ids=["staged-reads", "device-memory", "both"])
def test_staged_transfers_give_what_direct_ones_and_interp_do(tessera, tmp_path, program, settings):
    if "vulkan:0" not in {d["name"] for d in json.loads(tessera("devices", "--json").stdout)}:
        pytest.skip("no vulkan:0 on this machine")
    staged = outputs(tessera, program, tmp_path / "staged", "vulkan:0", **settings)
    direct = outputs(tessera, program, tmp_path / "direct", "vulkan:0",
                     TESSERA_VULKAN_READBACK="auto", TESSERA_VULKAN_MEMORY="auto")
    reference = outputs(tessera, program, tmp_path / "interp", "interp")
    for name in OUTPUTS:
        assert np.array_equal(staged[name], direct[name]), name
        np.testing.assert_allclose(staged[name], reference[name], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("variable, value, expected", [
    ("TESSERA_VULKAN_READBACK", "cached", "TESSERA_VULKAN_READBACK is 'cached'; expected auto"),
    ("TESSERA_VULKAN_MEMORY", "host", "TESSERA_VULKAN_MEMORY is 'host'; expected auto"),
])
def test_an_unknown_transfer_mode_is_a_clear_error(tessera, tmp_path, program, variable, value, expected):
    if "vulkan:0" not in {d["name"] for d in json.loads(tessera("devices", "--json").stdout)}:
        pytest.skip("no vulkan:0 on this machine")
    prog, spec = program
    proc = tessera("run", prog, "--spec", spec, "--random", 7, "--device", "vulkan:0", "--out-dir", tmp_path,
                   env=dict(os.environ, **{variable: value}), check=False)
    assert proc.returncode == 1
    assert expected in proc.stderr
    assert not list(tmp_path.glob("*.npy"))
