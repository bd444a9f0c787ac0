"""Shims that let Keras 2.3.1 run on Python 3.11 with h5py 3, installed when this is imported.

Keras 2.3.1 (2019) predates both:

- It reads aliases that Python 3.10 removed from `collections`: `from collections import Iterable`
  at import time (keras/callbacks/callbacks.py line 19), and `collections.Mapping`, `Sequence` and
  `Container` when a model is compiled or fit (keras/engine/training_utils.py lines 639, 696, 811,
  823, 857, 927). keras_applications 1.0.8 and keras_preprocessing 1.1.2 use none.
- It calls `.decode('utf8')` on HDF5 attributes it wrote as bytes or str: keras/engine/saving.py
  lines 273 and 345 (model and training config), 278 and 282 (keras_version and backend of a
  saved model), 377 (optimizer weight names), 722 (layer and weight names), 1183, 1187, 1262 and
  1266 (load_weights, by name or not). h5py 2 read them back as bytes; h5py 3 reads
  variable-length strings back as `str`, so `load_model` and `Model.load_weights` raise
  AttributeError. Here every `str` (and every str element of an object array) read through
  `h5py.AttributeManager` comes back as a `str` subclass that also has `.decode()`: code that
  expects bytes works, code that expects str is unaffected. Fixed-length strings (dtype `S`),
  which h5py 3 still returns as bytes (the chunked names of saving.py line 728 and
  keras/utils/io_utils.py line 313), are left as they are.

Importing this module installs both; install() again is harmless. That must happen before
`keras.callbacks` is imported: importing it from the backend is early enough, since
keras/__init__.py imports keras.utils, which imports keras.backend (and so the backend module
named by KERAS_BACKEND) before anything reads the aliases. No other name of collections.abc is
read through `collections` by Keras, keras_applications, keras_preprocessing or what they import
(h5py, yaml, scipy, six). This module imports neither keras nor keras.backend.common:
keras.backend.load_backend imports the backend module while keras is half initialised, and
importing keras from there would import the backend again.
"""
import collections
import collections.abc

# The collections.abc names that Keras 2.3.1 reads from `collections`.
COLLECTIONS_ALIASES = ("Container", "Iterable", "Mapping", "Sequence")


def install():
    """Installs the collections aliases and the h5py attribute patch; safe to call many times."""
    for name in COLLECTIONS_ALIASES:
        if not hasattr(collections, name):
            setattr(collections, name, getattr(collections.abc, name))
    _patch_h5py_attribute_strings()


class DecodableStr(str):
    """A str that also answers `.decode()`, as the bytes that h5py 2 returned did."""

    __slots__ = ()

    def decode(self, encoding="utf-8", errors="strict"):
        return str(self)


def _decodable(value):
    if isinstance(value, str):
        return DecodableStr(value)
    dtype = getattr(value, "dtype", None)
    if dtype is None or dtype.kind != "O":
        return value
    out = value.copy()
    for index, element in enumerate(value.flat):
        if isinstance(element, str):
            out.flat[index] = DecodableStr(element)
    return out


def _patch_h5py_attribute_strings():
    try:
        import h5py
    except ImportError:  # Keras runs without h5py; it only cannot save or load then
        return
    if int(h5py.__version__.split(".")[0]) < 3:
        return
    manager = h5py.AttributeManager
    if getattr(manager.__getitem__, "_tessera_decodable", False):
        return
    original = manager.__getitem__

    def __getitem__(self, name):
        return _decodable(original(self, name))

    __getitem__._tessera_decodable = True
    __getitem__.__wrapped__ = original
    manager.__getitem__ = __getitem__


install()
