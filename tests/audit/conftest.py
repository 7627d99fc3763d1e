"""Fixtures of the compare/audit tests: the tiny hand-built models, the shared models."""
from __future__ import annotations

import pytest

from tests.audit.models import MODELS, SMALL, write_zoo


@pytest.fixture(scope="session")
def zoo(tmp_path_factory):
    """name -> path of the tiny models (good ones and the error-row ones)."""
    return write_zoo(tmp_path_factory.mktemp("zoo"))


@pytest.fixture
def small_model():
    path = MODELS / SMALL
    if not path.is_file():
        pytest.skip(f"shared model {SMALL} not found at {MODELS}")
    return path
