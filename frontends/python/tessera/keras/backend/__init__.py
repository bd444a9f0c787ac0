"""The Keras 2.3.1 backend: every function Keras imports from `keras.backend`, on Tessera graphs.

Keras loads it with KERAS_BACKEND=tessera.keras.backend. Tensors are tessera.Tensor; variables
are tessera.Variable (on the device between calls); `function` is a tessera.Function.
"""
from .. import _compat  # noqa: F401
from ._core import *  # noqa: F401,F403
from ._math import *  # noqa: F401,F403
from ._nn import *  # noqa: F401,F403
from ._control import *  # noqa: F401,F403
