"""`tessera devices --json` for opencl:N: the facts the cost model and the kernel cache key use,
checked against clinfo's raw listing of the same device (an independent reader of the driver)."""
import json
import re
import shutil
import subprocess

import pytest

REQUIRED = ["vendor", "device", "driver_version", "compute_units", "local_memory_bytes", "max_workgroup_size",
            "preferred_vector_width_float", "subgroup_size", "fp16", "fp64", "device_type"]
CLINFO = {"compute_units": "CL_DEVICE_MAX_COMPUTE_UNITS", "local_memory_bytes": "CL_DEVICE_LOCAL_MEM_SIZE",
          "max_workgroup_size": "CL_DEVICE_MAX_WORK_GROUP_SIZE",
          "preferred_vector_width_float": "CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT", "device": "CL_DEVICE_NAME",
          "vendor": "CL_DEVICE_VENDOR"}


def opencl_devices(tessera):
    return [d for d in json.loads(tessera("devices", "--json").stdout) if d["backend"] == "opencl"]


def clinfo_values():
    """{(platform index, device index): {CL_NAME: value}} from `clinfo --raw`, devices in order."""
    out = subprocess.run(["clinfo", "--raw"], capture_output=True, text=True, check=True).stdout
    devices = {}
    for line in out.splitlines():
        m = re.match(r"\[([^/\]]+)/(\d+)\]\s+(CL_DEVICE_\w+)\s+(.*)$", line)
        if m:
            devices.setdefault((m.group(1), int(m.group(2))), {})[m.group(3)] = m.group(4).strip()
    return list(devices.values())


def test_opencl_devices_report_their_facts(tessera):
    devices = opencl_devices(tessera)
    if not devices:
        pytest.skip("no OpenCL device on this machine")
    for d in devices:
        missing = [k for k in REQUIRED if k not in d["facts"]]
        assert not missing, f"{d['name']} lacks {missing}"
        for k in ["compute_units", "local_memory_bytes", "max_workgroup_size", "preferred_vector_width_float"]:
            assert int(d["facts"][k]) >= 0, (d["name"], k)
        assert d["facts"]["fp64"] in ("yes", "no") and d["facts"]["fp16"] in ("yes", "no")


def test_opencl_facts_agree_with_clinfo(tessera):
    devices = opencl_devices(tessera)
    if not devices or not shutil.which("clinfo"):
        pytest.skip("no OpenCL device or no clinfo on this machine")
    listed = clinfo_values()
    assert len(listed) == len(devices), "clinfo and tessera see different device counts"
    for d, c in zip(devices, listed):
        for fact, cl_name in CLINFO.items():
            assert d["facts"][fact] == c[cl_name], f"{d['name']} {fact}: {d['facts'][fact]} vs clinfo {c[cl_name]}"
