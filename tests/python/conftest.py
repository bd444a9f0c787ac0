"""Shared fixtures: where the `tessera` binary is and how to run it."""
import os
import pathlib
import subprocess

import pytest

from testpaths import PROGRAMS, ROOT, SHARED  # noqa: F401


def tessera_binary():
    path = os.path.abspath(os.environ.get("TESSERA_BIN", str(ROOT / "build" / "frontends" / "cli" / "tessera")))
    if not os.path.exists(path):
        pytest.exit(f"tessera binary not found at {path}; build first or set TESSERA_BIN", 2)
    return path


@pytest.fixture(scope="session")
def tessera():
    """Runs `tessera ARGS...`; returns the CompletedProcess (text mode)."""
    binary = tessera_binary()

    def run(*args, check=True, cwd=None, env=None):
        proc = subprocess.run([binary, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                              env=env, timeout=1800)
        if check and proc.returncode != 0:
            raise AssertionError(f"tessera {' '.join(map(str, args))} failed "
                                 f"({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc

    return run
