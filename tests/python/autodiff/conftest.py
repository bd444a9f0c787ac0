"""Fixtures of the autodiff tests; the finite-difference helpers are in gradcheck.py."""
import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
