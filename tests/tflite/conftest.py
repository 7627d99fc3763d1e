"""Fixtures for the .tflite reader/writer tests.

``shared_models`` is ``../shared/models`` beside the repository (the repo is /work/main, the
models are /work/shared/models); tests that need it skip cleanly when it is absent, so a fresh
clone still passes. A test that takes ``model_path`` runs once per shared .tflite file.
"""
from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
MODELS_DIR = SHARED / "models"
SKIP_REASON = f"shared models not found at {MODELS_DIR}"


def _model_files() -> list[Path]:
    return sorted(MODELS_DIR.glob("*.tflite")) if MODELS_DIR.is_dir() else []


@pytest.fixture(scope="session")
def shared_models() -> Path:
    """The directory of shared .tflite models, or skip."""
    if not _model_files():
        pytest.skip(SKIP_REASON)
    return MODELS_DIR


def pytest_generate_tests(metafunc):
    if "model_path" in metafunc.fixturenames:
        files = _model_files()
        if files:
            metafunc.parametrize("model_path", files, ids=[f.stem for f in files])
        else:
            metafunc.parametrize("model_path", [pytest.param(None, marks=pytest.mark.skip(
                reason=SKIP_REASON))])


def assert_same_model(a, b) -> None:
    """Structural equality of two TfliteModels (everything but path and source)."""
    import numpy as np

    assert (a.version, a.description) == (b.version, b.description)
    assert a.operator_codes == b.operator_codes
    assert len(a.subgraphs) == len(b.subgraphs)
    for sa, sb in zip(a.subgraphs, b.subgraphs):
        assert (sa.name, sa.inputs, sa.outputs) == (sb.name, sb.inputs, sb.outputs)
        assert len(sa.tensors) == len(sb.tensors)
        for ta, tb in zip(sa.tensors, sb.tensors):
            assert ta == tb, f"tensor {ta.index} '{ta.name}' differs"
        assert sa.operators == sb.operators
    assert a.signatures == b.signatures
    assert a.metadata == b.metadata
    assert len(a.buffers) == len(b.buffers)
    for i, (x, y) in enumerate(zip(a.buffers, b.buffers)):
        assert np.array_equal(x, y), f"buffer {i} differs"


@pytest.fixture
def same_model():
    """``same_model(a, b)`` asserts two TfliteModels are structurally equal."""
    return assert_same_model
