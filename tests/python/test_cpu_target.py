"""TESSERA_CPU names the CPU the `cpu` device compiles for (an LLVM CPU name), so that one machine
builds and runs another kind's code: AVX2 kernels on an AVX-512 host, SSE ones on either. The
kernels must then use that CPU's vectors only and give the host build's results; a name LLVM does
not know, or a CPU with instructions the host lacks, is one clear error, never a crash (the code
would stop at its first such instruction). CTest runs the e2e suite's cpu tests under x86-64-v3 and
x86-64-v2 (E2eCpuAsAvx2, E2eCpuAsSse)."""
import json
import os
import re

import numpy as np
import pytest

# A product (register tiles of the CPU's vectors) and float16 conversions, which CPUs without F16C
# (x86-64-v2 and older) do through libgcc's helpers.
PROGRAM = """function (A[64, 48], B[48, 40]) -> (C, H) {
  C[i, j : 64, 40] = +(A[i, k] * B[k, j]);
  H = as_float(C, 16) + 1;
}
"""
SPEC = {"inputs": {"A": {"dtype": "float32", "shape": [64, 48]},
                   "B": {"dtype": "float32", "shape": [48, 40]}}}
# CPU name -> the float vector the kernels must use (psABI levels: both machine kinds have them).
VECTORS = {"x86-64-v3": "<8 x float>", "x86-64-v2": "<4 x float>"}


@pytest.fixture
def program(tmp_path):
    (tmp_path / "p.tile").write_text(PROGRAM)
    (tmp_path / "p.json").write_text(json.dumps(SPEC))
    return tmp_path / "p.tile", tmp_path / "p.json"


def env_for(cpu):
    env = dict(os.environ, TESSERA_TUNE="off")
    env.pop("TESSERA_CPU", None)
    if cpu:
        env["TESSERA_CPU"] = cpu
    return env


def cpu_device(tessera, cpu):
    devices = json.loads(tessera("devices", "--json", env=env_for(cpu)).stdout)
    return next(d for d in devices if d["name"] == "cpu")


@pytest.mark.parametrize("cpu", sorted(VECTORS))
def test_the_cpu_device_compiles_for_the_named_cpu(tessera, program, tmp_path, cpu):
    device = cpu_device(tessera, cpu)
    assert device["description"].startswith(f"LLVM 15 JIT for {cpu} ")
    assert device["facts"]["cpu"] == cpu
    assert device["facts"]["vector_bits"] == str(int(VECTORS[cpu][1]) * 32)
    assert "avx512f" not in device["facts"]["features"].split(",")
    # The product alone: a float16 kernel's vectors hold as many halves as the CPU's vector does.
    product = tmp_path / "product.tile"
    product.write_text(PROGRAM.replace(", H)", ")").replace("  H = as_float(C, 16) + 1;\n", ""))
    source = tessera("lower", product, "--spec", program[1], "--emit", "source", "--device", "cpu",
                     env=env_for(cpu)).stdout
    widths = {w for w in ("<4 x float>", "<8 x float>", "<16 x float>") if w in source}
    assert widths == {VECTORS[cpu]}, f"{cpu}: the kernels use {sorted(widths)}"
    # What LLVM's code generator may use: the target machine's features, not only the vectors the
    # compiler asked for.
    features = re.findall(r'"target-features"="([^"]*)"', source)
    assert features
    for f in features:
        enabled = {x[1:] for x in f.split(",") if x.startswith("+")}
        assert "avx512f" not in enabled
        assert ("avx2" in enabled) == (cpu == "x86-64-v3") and ("avx" in enabled) == (cpu == "x86-64-v3")


@pytest.mark.parametrize("cpu", sorted(VECTORS))
def test_the_named_cpus_code_gives_interps_results(tessera, program, tmp_path, cpu):
    """The named CPU's code against the reference interpreter and the host's own code."""
    outs = {}
    for name, device in (("interp", "interp"), ("host", "cpu"), (cpu, "cpu")):
        out_dir = tmp_path / name
        out_dir.mkdir()
        tessera("run", program[0], "--spec", program[1], "--random", 3, "--out-dir", out_dir, "--device", device,
                env=env_for("" if name == "host" else cpu))
        outs[name] = {n: np.load(out_dir / f"{n}.npy") for n in ("C", "H")}
    for reference in ("interp", "host"):
        np.testing.assert_allclose(outs[cpu]["C"], outs[reference]["C"], rtol=1e-5, atol=1e-5)
        assert outs[cpu]["H"].dtype == np.float16
        np.testing.assert_allclose(outs[cpu]["H"].astype(np.float32),
                                   outs[reference]["H"].astype(np.float32), rtol=2e-3)


def lacking_cpu(tessera):
    """A CPU with an instruction this machine lacks: AMD's SSE4a on Intel, AVX512-FP16 on AMD."""
    features = cpu_device(tessera, "")["facts"]["features"].split(",")
    return "sapphirerapids" if "sse4a" in features else "znver3"


def test_the_hosts_own_cpu_name_is_accepted(tessera, program, tmp_path):
    """A VM may hide features no kernel uses (this project's Zen 4 VMs hide protection keys, pku)
    without making TESSERA_CPU=<the host's own name> an error."""
    host = cpu_device(tessera, "")["facts"]["cpu"]
    device = cpu_device(tessera, host)
    assert device["facts"]["cpu"] == host
    outs = {}
    for name, device in (("interp", "interp"), ("named", "cpu")):
        out_dir = tmp_path / name
        out_dir.mkdir()
        tessera("run", program[0], "--spec", program[1], "--random", 3, "--out-dir", out_dir, "--device", device,
                env=env_for(host))
        outs[name] = np.load(out_dir / "C.npy")
    np.testing.assert_allclose(outs["named"], outs["interp"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("cpu, message", [
    ("bogus", "error: TESSERA_CPU=bogus: LLVM 15 knows no such CPU"),
    (None, "its code would use "),
])
def test_a_cpu_that_cannot_run_here_is_a_clear_error(tessera, program, tmp_path, cpu, message):
    cpu = cpu or lacking_cpu(tessera)
    proc = tessera("run", program[0], "--spec", program[1], "--random", 1, "--out-dir", tmp_path,
                   "--device", "cpu", check=False, env=env_for(cpu))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert message in proc.stderr
    assert "lacks" in proc.stderr or "no such" in proc.stderr
    assert "is not a recognized processor" not in proc.stderr  # LLVM's own warning, not ours
    assert not list(tmp_path.glob("*.npy"))
    # Other devices are unaffected.
    tessera("run", program[0], "--spec", program[1], "--random", 1, "--out-dir", tmp_path, "--device", "interp",
            env=env_for(cpu))


@pytest.mark.parametrize("json_flag", [False, True])
def test_devices_lists_the_others_when_the_cpu_cannot_be_set_up(tessera, json_flag):
    args = ["devices", "--json"] if json_flag else ["devices"]
    good = tessera(*args, env=env_for(None))
    proc = tessera(*args, check=False, env=env_for("bogus"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "error: TESSERA_CPU=bogus: LLVM 15 knows no such CPU" in proc.stderr
    if json_flag:
        names = [d["name"] for d in json.loads(proc.stdout)]
        assert names == [d["name"] for d in json.loads(good.stdout) if d["name"] != "cpu"]
    else:
        assert proc.stdout.splitlines() == [l for l in good.stdout.splitlines() if not l.startswith("cpu ")]
    assert "interp" in proc.stdout
