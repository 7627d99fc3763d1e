"""Shared fixtures: a clean property store and device list for every test, the shared folder."""
from __future__ import annotations

from pathlib import Path

import pytest

import nnsim
from nnsim.platform import vlog
from nnsim.runtime.devices import get_device_manager

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


@pytest.fixture(autouse=True)
def _clean_runtime_state():
    nnsim.reset_props()
    saved = get_device_manager().drivers()
    # Devices are chosen for every test (the drivers in place, nnapi-reference only unless a
    # test applies a board): the TFLite API's default board applies only in a fresh process.
    get_device_manager().set_drivers(saved)
    vlog.set_vlog_mask(0)
    yield
    nnsim.reset_props()
    get_device_manager().set_drivers(saved)
    vlog.set_vlog_mask(0)


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"shared folder not found at {SHARED}")
    return SHARED


@pytest.fixture
def logcat():
    """Capture logcat lines as (level, tag, message) tuples."""
    with vlog.LogCapture() as cap:
        yield cap
