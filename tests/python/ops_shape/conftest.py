"""Fixtures of the shape-op tests."""
import numpy as np
import pytest


@pytest.fixture
def rng(request):
    # A fixed seed per test id, so that parametrized cases see different but repeatable data.
    seed = sum(map(ord, request.node.nodeid)) % (2**32)
    return np.random.default_rng(seed)
