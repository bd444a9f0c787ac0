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

.PHONY: setup configure build demo test keras-test fuzz

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

# Keras 2.3.1's own tests on tessera.keras.backend: scripts/keras-tests.sh (run by setup) fetches
# them into build/keras-tests; tests/keras/conftest.py selects and maps them, tests/keras/xfail.txt
# lists the expected failures with reasons; a summary per file ends the run.
keras-test: build
	$(PYTEST) $(BUILD)/keras-tests

fuzz: setup
	$(REPO)/scripts/fuzz.sh
