# Entry points: `make demo` and `make test` (both set up, configure and build first).
REPO := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD := $(REPO)/build
VENV_PYTHON := $(REPO)/.venv/bin/python
# pytest against this build's binary and Python module. tests/python and tests/e2e run separately:
# e2e imports tests/python's modules as helpers, and each folder has its own pytest.ini.
# Suites that are not about tuning use the cost model (TESSERA_TUNE=off) and never touch the user's
# kernel cache; the tuning tests set their own policy and cache file.
PYTEST := TESSERA_BIN=$(REPO)/.venv/bin/tessera POCL_CACHE_DIR=$(BUILD)/pocl-cache \
  TESSERA_TUNE=off TESSERA_CACHE=$(BUILD)/test-cache.db \
  $(VENV_PYTHON) -m pytest -q -p no:cacheprovider

# The differential fuzzer (tests/fuzz/tessera_fuzz): random Tile programs on interp and every
# compiled device. `make test` runs a fixed seed and program count, so a run is reproducible.
DIFF_FUZZ := PYTHONPATH=$(REPO)/tests/fuzz TESSERA_TUNE=off \
  TESSERA_CACHE=$(BUILD)/fuzz-cache.db POCL_CACHE_DIR=$(BUILD)/pocl-cache $(VENV_PYTHON) -m tessera_fuzz
DIFF_FUZZ_PROGRAMS ?= 60

.PHONY: setup configure build demo test keras-test fuzz sanitize

setup:
	$(REPO)/scripts/setup.sh

configure: setup
	cmake -S $(REPO) -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_WERROR=ON \
	  -DPython_EXECUTABLE=$(VENV_PYTHON) --log-level=WARNING

# ninja builds everything (tests included); `pip install .` then installs the package and the
# `tessera` command into the venv from the same build folder, which the tests and the demo use.
build: configure
	ninja -C $(BUILD) -j2
	$(VENV_PYTHON) -m pip install --quiet --disable-pip-version-check --no-build-isolation --no-deps $(REPO)

demo: build
	$(REPO)/scripts/demo.sh

# Every test, slow ones included (Xception on interp, and on each compiled device against interp:
# a few minutes each); the whole of `make test` stays far below CI's 90 minutes. ctest also runs
# tests/e2e without its slow tests (E2eDevicesMatchInterp), so only those run here.
test: build
	cd $(BUILD) && ctest --output-on-failure --no-tests=error -j2
	$(PYTEST) $(REPO)/tests/python
	$(PYTEST) $(BUILD)/keras-tests
	$(PYTEST) -m slow $(REPO)/tests/e2e
	$(REPO)/scripts/fuzz.sh
	$(PYTEST) $(REPO)/tests/fuzz
	$(DIFF_FUZZ) --seed 1 --programs $(DIFF_FUZZ_PROGRAMS)

# Keras 2.3.1's own tests on tessera.keras.backend: scripts/keras-tests.sh (run by setup) fetches
# them into build/keras-tests; tests/keras/conftest.py selects and maps them, tests/keras/xfail.txt
# lists the expected failures with reasons; a summary per file ends the run.
keras-test: build
	$(PYTEST) $(BUILD)/keras-tests

# The parser fuzzer (scripts/fuzz.sh) and the differential fuzzer for FUZZ_SECONDS each (default 60);
# FUZZ_SEED picks both fuzzers' inputs (default: a new seed each run, printed); FUZZ_RUNS bounds the
# parser fuzzer by inputs instead of time, to repeat a run exactly.
fuzz: build
	$(REPO)/scripts/fuzz.sh
	$(DIFF_FUZZ) --seed $${FUZZ_SEED:-$$(date +%s)} --seconds $${FUZZ_SECONDS:-60} \
	  --save-dir $(BUILD)/fuzz-cases --log $(BUILD)/fuzz-diff.log

# The unit and e2e suites built with AddressSanitizer and UndefinedBehaviorSanitizer (build-asan);
# not in `make test`, which it would outlast. CTEST_ARGS narrows it (e.g. CTEST_ARGS="-R Parser").
sanitize:
	$(REPO)/scripts/sanitize.sh $(CTEST_ARGS)
