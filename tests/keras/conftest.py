"""Runs Keras 2.3.1's own tests against tessera.keras.backend.

scripts/keras-tests.sh extracts the tests of Keras's source distribution into build/keras-tests and
links this file and pytest.ini there, so this conftest sits at the root of Keras's `tests/` tree
and node ids read as in Keras (`tests/keras/layers/core_test.py::test_dense`). Run them with
`make keras-test`, or `pytest build/keras-tests` (a subset: name its files or use -k).

What this file does, in order:
- Before Keras is imported: KERAS_BACKEND names our backend (a value already set wins, so another
  backend can be tried), and KERAS_HOME is a fresh temporary folder holding a keras.json that names
  the same backend. Keras writes ~/.keras/keras.json naming tensorflow whenever none exists, even
  when KERAS_BACKEND is set (load_backend.py writes it first), and reads it before the variable.
- Runs only the selected files (SELECTED below); any file named on the command line runs too.
- Maps the backend handles of tests/keras/backend/backend_test.py. It compares `KTF` (from
  `keras.backend.tensorflow_backend`, else the Theano or CNTK handle, by K.backend()) against
  Keras's numpy reference, keras/backend/numpy_backend.py, which ships in the keras package. Here
  `keras.backend.tensorflow_backend` and `keras.backend.theano_backend` are BackendHandle modules
  put in sys.modules and on keras.backend: each answers with keras.backend's names (our functions,
  with Keras's own epsilon/floatx/image_data_format), then with the backend module's. They are two
  objects, not one: backend_test.py flips conv kernels for `k == KTH`. The CNTK handle stays None
  (its import fails), so the CNTK-only paths never run. K.backend() stays 'tessera.keras.backend',
  so tests guarded by `K.backend() == 'tensorflow'` skip themselves.
- Gives Keras's numpy reference a stable sort in in_top_k (see _stable_in_top_k).
- Applies xfail.txt (next to this file): one `nodeid  reason` per line, two or more spaces apart.
  A node id without `[params]` covers every parametrization, a file or class id everything in it;
  the first line that covers a test decides. A reason that starts with `skip:` skips instead: for
  a test that would crash or hang the run.
- Seeds `random` and numpy from each test's node id, so a run repeats (applications_test.py picks
  its models with random.choice).
- Prints passed / failed / error / xfailed / xpassed / skipped per file at the end.
"""
import atexit
import collections
import fnmatch
import importlib
import json
import os
import pathlib
import random
import re
import shutil
import sys
import tempfile
import types
import zlib

import numpy as np
import pytest

HERE = pathlib.Path(__file__).parent  # build/keras-tests, where the tests are
SOURCE = pathlib.Path(__file__).resolve().parent  # tests/keras, where this file is kept
BACKEND = os.environ.setdefault("KERAS_BACKEND", "tessera.keras.backend")

# Keras's tests and its numpy reference backend (keras/backend/numpy_backend.py, the oracle of
# backend_test.py) use `np.bool`, an alias numpy 1.24 removed; the tests need it, not the backend.
if not hasattr(np, "bool") or "bool" in getattr(np, "__former_attrs__", {}):
    np.bool = bool

# Keras's test files that run, relative to HERE; fnmatch patterns, `*` stays within a folder.
SELECTED = (
    "tests/keras/backend/backend_test.py",
    "tests/keras/layers/*_test.py",
    "tests/keras/engine/*.py",
    "tests/keras/optimizers_test.py",
    "tests/keras/activations_test.py",
    "tests/keras/initializers_test.py",
    "tests/keras/regularizers_test.py",
    "tests/keras/constraints_test.py",
    "tests/integration_tests/*.py",
    "tests/integration_tests/preprocessing/*.py",
)
# Selected by a pattern above but downloading data sets (cifar, imdb, mnist, ...).
NOT_SELECTED = ("tests/integration_tests/test_datasets.py",)


def _keras_home():
    home = tempfile.mkdtemp(prefix="keras-home-")
    atexit.register(shutil.rmtree, home, True)
    config = {"floatx": "float32", "epsilon": 1e-07, "backend": BACKEND,
              "image_data_format": "channels_last"}
    (pathlib.Path(home) / "keras.json").write_text(json.dumps(config, indent=4))
    return home


os.environ["KERAS_HOME"] = _keras_home()
try:
    import keras  # noqa: E402
    import keras.backend as K  # noqa: E402
except ValueError as error:
    # load_backend.py turns any ImportError of the backend into this ValueError: show the cause.
    cause = error.__context__
    pytest.exit(f"keras cannot load KERAS_BACKEND={BACKEND}: {error}"
                + (f" (because {type(cause).__name__}: {cause})" if cause else ""), 3)


class BackendHandle(types.ModuleType):
    """A backend handle of backend_test.py: keras.backend's names, then the backend module's."""

    def __init__(self, name):
        super().__init__(name, f"{BACKEND} standing in for {name}")

    def __getattr__(self, name):
        try:
            return getattr(K, name)
        except AttributeError:
            return getattr(sys.modules[BACKEND], name)


for handle in ("tensorflow_backend", "theano_backend"):
    sys.modules[f"keras.backend.{handle}"] = BackendHandle(f"keras.backend.{handle}")
    setattr(K, handle, sys.modules[f"keras.backend.{handle}"])


def _stable_in_top_k(predictions, targets, k):
    """numpy_backend.in_top_k with a stable sort. The reference ranks with np.argsort(-predictions),
    whose order among equal values numpy 1.25+ leaves to its AVX-512 sort where the CPU has one:
    test_in_top_k's tied predictions then put its target (class 0) behind an equal class at random,
    and the oracle's answer depends on the machine (4 of 20 rows differed on the Intel CI kind;
    the AMD kind's sort kept the order). Stable, the target comes first among equals: the order
    the test's ties were written for, and TensorFlow's rule that ties at the boundary count."""
    top_k = np.argsort(-predictions, kind="stable")[:, :k]
    return np.any(targets.reshape(-1, 1) == top_k, axis=-1)


importlib.import_module("keras.backend.numpy_backend").in_top_k = _stable_in_top_k


def _relative(path):
    try:
        return pathlib.Path(path).relative_to(HERE).as_posix()
    except ValueError:
        return None


def _matches(rel, pattern):
    """Whether the path rel matches the leading components of pattern, component by component."""
    parts, pattern_parts = rel.split("/"), pattern.split("/")
    return len(parts) <= len(pattern_parts) and all(
        fnmatch.fnmatchcase(part, p) for part, p in zip(parts, pattern_parts))


def pytest_ignore_collect(collection_path, config):
    rel = _relative(collection_path)
    if rel is None or rel == "." or collection_path.name == "conftest.py":
        return None
    if collection_path.is_dir():  # a folder is visited when some pattern reaches below it
        deeper = [p for p in SELECTED if p.count("/") > rel.count("/")]
        return not any(_matches(rel, p) for p in deeper) or None
    selected = rel not in NOT_SELECTED and any(
        _matches(rel, p) and rel.count("/") == p.count("/") for p in SELECTED)
    return not selected or None


def _read_xfail_list():
    entries = []
    for number, line in enumerate((SOURCE / "xfail.txt").read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = re.split(r"\s{2,}|\t", line, maxsplit=1)
        if len(parts) != 2 or not parts[1].strip():
            raise pytest.UsageError(f"xfail.txt:{number}: expected `nodeid  reason`, got {line!r}")
        entries.append((parts[0], parts[1].strip()))
    return entries


def _covers(entry, nodeid):
    return nodeid == entry or nodeid.startswith(entry + "::") or nodeid.startswith(entry + "[")


def pytest_collection_modifyitems(config, items):
    entries = _read_xfail_list()
    for item in items:
        for entry, reason in entries:
            if not _covers(entry, item.nodeid):
                continue
            if reason.startswith("skip:"):
                item.add_marker(pytest.mark.skip(reason=reason[len("skip:"):].strip()))
            else:
                item.add_marker(pytest.mark.xfail(reason=reason, strict=False))
            break


@pytest.fixture(autouse=True)
def _seed_from_node_id(request):
    seed = zlib.crc32(request.node.nodeid.encode())
    random.seed(seed)
    np.random.seed(seed)


@pytest.fixture(autouse=True)
def _clear_session_after_test():
    """Keras's own tests/conftest.py clears the session after each test for TensorFlow and CNTK
    only (K.backend() names neither here). Without it a test's K.set_learning_phase leaks into
    the next ones, as it would on TensorFlow. (keras.backend has no clear_session for a backend
    it does not know: the backend module's own is called.)"""
    yield
    importlib.import_module(BACKEND).clear_session()


def pytest_report_header(config):
    return [f"keras {keras.__version__} on KERAS_BACKEND={BACKEND} "
            f"(K.backend() = {K.backend()!r}), KERAS_HOME={os.environ['KERAS_HOME']}",
            "backend_test.py's KTF and KTH handles: keras.backend, then the backend module"]


OUTCOMES = ("passed", "failed", "error", "xfailed", "xpassed", "skipped")
_outcomes = collections.defaultdict(dict)  # file -> nodeid -> outcome
_collection_errors = collections.Counter()  # file -> 1 when it could not be collected


def _outcome(report):
    if hasattr(report, "wasxfail"):
        return "xfailed" if report.skipped else "xpassed"
    if report.when != "call" and report.failed:
        return "error"
    return report.outcome


def pytest_runtest_logreport(report):
    file, outcome = report.nodeid.split("::")[0], _outcome(report)
    seen = _outcomes[file].get(report.nodeid)
    # One outcome per test: the call's, unless setup or teardown erred (or setup skipped it).
    if report.when == "call" or seen is None or seen == "passed" and outcome != "passed":
        _outcomes[file][report.nodeid] = outcome


def pytest_collectreport(report):
    if report.failed:
        _collection_errors[report.nodeid] += 1


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    files = sorted(set(_outcomes) | set(_collection_errors))
    if not files:
        return
    write = terminalreporter.write_line
    terminalreporter.section("Keras tests per file")
    width = max(len(f) for f in files)
    write(f"{'file':<{width}}  " + " ".join(f"{o:>7}" for o in OUTCOMES))
    total = collections.Counter()
    for file in files:
        counts = collections.Counter(_outcomes[file].values())
        total.update(counts)
        line = f"{file:<{width}}  " + " ".join(f"{counts[o]:>7}" for o in OUTCOMES)
        if _collection_errors[file]:
            line += "  (could not be collected)"
        write(line)
    write(f"{'total':<{width}}  " + " ".join(f"{total[o]:>7}" for o in OUTCOMES))
    ran = sum(total[o] for o in OUTCOMES if o != "skipped")
    if ran:
        share = 100 * total["passed"] / ran
        write(f"passed {total['passed']} of {ran} tests that ran ({share:.1f}%); "
              f"{len(_collection_errors)} file(s) could not be collected")
    xpassed = sorted(n for f in _outcomes.values() for n, o in f.items() if o == "xpassed")
    if xpassed:
        write("these pass now: take them out of tests/keras/xfail.txt")
        for nodeid in xpassed:
            write(f"  {nodeid}")
