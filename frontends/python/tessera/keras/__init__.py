"""Keras 2.3.1 on Tessera: `KERAS_BACKEND=tessera.keras.backend`."""
from . import _compat  # noqa: F401  (before Keras is imported)
