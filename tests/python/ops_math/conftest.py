"""Fixtures of the math-op tests."""
import numpy as np
import pytest


@pytest.fixture
def rng(request):
    # One fixed seed per test (its node id), so parametrized cases see different data.
    seed = sum(map(ord, request.node.nodeid)) % (2**32)
    return np.random.default_rng(seed)
