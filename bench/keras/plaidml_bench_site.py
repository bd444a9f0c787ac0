"""Loaded at start-up in the PlaidML bench venv (setup_plaidml.sh installs it with a .pth file).

Keras 2.2.4 and plaidml-keras 0.7 use `collections.Mapping` and friends, which Python 3.10
moved to `collections.abc` only; and PlaidML needs a device chosen up front, or it asks for
`plaidml-setup` to be run interactively. Both are settled here, before any user code runs, so
that the venv's python works as it is. (Not a sitecustomize.py: Debian's own one in the standard
library would shadow it.) Settings already in the environment win.
"""
import collections
import collections.abc
import os

for _name in collections.abc.__all__:
    if not hasattr(collections, _name):
        setattr(collections, _name, getattr(collections.abc, _name))

# LLVM CPU is the only device PlaidML 0.7 offers here: its OpenCL HAL skips CPU-type devices
# such as PoCL's. It is listed only with the experimental device configuration.
os.environ.setdefault("PLAIDML_EXPERIMENTAL", "1")
os.environ.setdefault("PLAIDML_DEVICE_IDS", "llvm_cpu.0")
os.environ.setdefault("KERAS_BACKEND", "plaidml.keras.backend")
# An empty settings file keeps a user's ~/.plaidml (written by plaidml-setup) out of the bench.
_settings = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plaidml-bench-settings.json")
if os.path.exists(_settings):
    os.environ.setdefault("PLAIDML_SETTINGS", _settings)
