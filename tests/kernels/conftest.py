"""Fixtures for the kernel tests."""

from __future__ import annotations

import zlib

import numpy as np
import pytest


@pytest.fixture
def rng(request):
    """A generator seeded from the test's node id (stable across runs and processes)."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
