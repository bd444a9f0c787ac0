# lit configuration of the golden tests: each .tile file below carries its own RUN lines
# (`tessera lower %s ... | FileCheck %s`) and the CHECK lines that state what its output must show.
#
#   python3 /usr/lib/llvm-15/build/utils/lit/lit.py -sv -Dtessera=build/frontends/cli/tessera tests/golden
#
# Parameters (-DNAME=VALUE), else environment variables: tessera (TESSERA_BIN; default
# build/frontends/cli/tessera), filecheck (FILECHECK; default FileCheck from llvm-15-tools) and
# exec_root (where lit keeps its scratch Output/ folders; default a folder under the temp dir).
# Features: `opencl` and `vulkan` when `tessera devices` lists opencl:0 / vulkan:0, so that a test
# with `REQUIRES: opencl` is UNSUPPORTED, not failed, on a machine without the device.
# Substitutions: %tessera, FileCheck, and %{opencl_float_lanes}, opencl:0's preferred float vector
# width (PoCL: 16 with AVX-512, 8 with AVX2), which the OpenCL tests give FileCheck as -D#W=... so
# that one file states the kernels' shape on either kind of CPU.
import json
import os
import shutil
import subprocess
import tempfile

import lit.formats

config.name = "Tessera golden"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tile"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(os.path.dirname(config.test_source_root))


def setting(param, env, default):
    value = lit_config.params.get(param) or os.environ.get(env) or default
    return os.path.abspath(value) if value and os.sep in value else value


config.test_exec_root = setting("exec_root", "TESSERA_LIT_EXEC_ROOT",
                                os.path.join(tempfile.gettempdir(), "tessera-golden-lit"))

tessera = setting("tessera", "TESSERA_BIN", os.path.join(repo, "build", "frontends", "cli", "tessera"))
if not os.access(tessera, os.X_OK):
    lit_config.fatal(f"no tessera binary at {tessera}: pass -Dtessera=PATH")
filecheck = setting("filecheck", "FILECHECK",
                    shutil.which("FileCheck") or "/usr/lib/llvm-15/bin/FileCheck")
if not filecheck or not os.access(filecheck, os.X_OK):
    lit_config.fatal(f"no FileCheck at {filecheck}: install llvm-15-tools or pass -Dfilecheck=PATH")

# lit runs tests in a bare environment; the devices need their caches and drivers' settings.
for name, value in os.environ.items():
    if name in ("HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR") or name.startswith(
            ("TESSERA_", "POCL_", "OCL_", "VK_", "MESA_", "LP_")):
        config.environment[name] = value

config.substitutions.append(("%tessera", tessera))
# A bare word FileCheck, not one inside a path.
config.substitutions.append((r"(?<![\w/.-])FileCheck(?![\w.-])", filecheck))

devices = subprocess.run([tessera, "devices", "--json"], capture_output=True, text=True,
                         env={**os.environ, **config.environment})
if devices.returncode != 0:
    lit_config.fatal(f"`{tessera} devices --json` failed: {devices.stderr.strip()}")
for device in json.loads(devices.stdout):
    if device["name"] in ("opencl:0", "vulkan:0"):
        config.available_features.add(device["backend"])
    if device["name"] == "opencl:0":
        lanes = device["facts"].get("preferred_vector_width_float", "")
        if not lanes.isdigit():
            lit_config.fatal(f"opencl:0 reports no preferred float vector width: {device['facts']}")
        config.substitutions.append(("%{opencl_float_lanes}", lanes))
