"""Compiles tests/unit/PublicHeaders.cpp as the build does (compile_commands.json) with -H and fails
when any header it reads lives in compiler/ or backends/: the public C++ API (include/tessera) must
not expose the loop IR or a backend."""
import json
import shlex
import subprocess
import sys

build = sys.argv[1]
entry = next(e for e in json.load(open(f"{build}/compile_commands.json"))
             if e["file"].endswith("tests/unit/PublicHeaders.cpp"))
args = shlex.split(entry["command"])
out = args.index("-o")
del args[out:out + 2]  # no object file: -fsyntax-only
proc = subprocess.run(args + ["-fsyntax-only", "-H"], cwd=entry["directory"], capture_output=True, text=True)
if proc.returncode != 0:
    sys.exit(f"PublicHeaders.cpp does not compile:\n{proc.stderr}")
headers = [line.lstrip(". ").strip() for line in proc.stderr.splitlines() if line.startswith(".")]
inner = [h for h in headers if "/compiler/" in h or "/backends/" in h]
if inner:
    sys.exit("the public headers include:\n  " + "\n  ".join(sorted(set(inner))))
print(f"{len(headers)} headers read, none from compiler/ or backends/")
