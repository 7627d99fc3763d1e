"""Fixtures for the driver tests: a private nnsim state directory, fresh SyNAP statistics, the
current board restored, and NNAPI models of the shared .tflite files."""
from __future__ import annotations

import pytest

from nnsim.drivers import boards
from nnsim.platform import sysfs
from tests.drivers.helpers import SHARED, nnapi_model_of


@pytest.fixture(autouse=True)
def _driver_state(tmp_path, monkeypatch):
    monkeypatch.setenv("NNSIM_STATE_DIR", str(tmp_path / "state"))
    saved_board = boards._current[0]
    sysfs.clear()
    sysfs.synap_statistics().networks.clear()
    yield
    boards._current[0] = saved_board
    sysfs.clear()


@pytest.fixture
def models_dir():
    path = SHARED / "models"
    if not path.is_dir():
        pytest.skip(f"shared models not found at {path}")
    return path


@pytest.fixture
def load_nnapi(models_dir):
    """``load_nnapi(file_name)`` -> the finished NNAPI model of the whole .tflite graph."""
    def load(name: str, feature_level: int = 30, sdk: int = 31):
        path = models_dir / name
        if not path.exists():
            pytest.skip(f"{path} not found")
        return nnapi_model_of(str(path), feature_level, sdk)
    return load
