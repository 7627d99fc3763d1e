"""DeviceManager: the device list, in upstream discovery order (runtime/Manager.cpp).

Every discovered driver device in discovery order, then ``nnapi-reference`` last. With
``debug.nn.cpuonly=1`` the list is just ``[nnapi-reference]``; ``debug.nn.enabled-devices``
(a regular expression, full match, default ``.*``) filters driver devices, never the CPU.
"""
from __future__ import annotations

import re
import threading

from nnsim.drivers.base import Driver
from nnsim.drivers.reference import CPU_DEVICE
from nnsim.platform import vlog
from nnsim.platform.properties import getprop, getprop_int

TAG = "Manager"


class DeviceManager:
    """Process-wide registry of driver devices (``DeviceManager::get()``)."""

    def __init__(self):
        self._lock = threading.RLock()
        self._drivers: list[Driver] = []
        self._configured = False   # drivers chosen (a board, a test, a plugin) vs never set

    # -- configuration -------------------------------------------------------------------------
    def set_drivers(self, drivers) -> None:
        """Replace the discovered drivers (board profiles, tests). Order = discovery order."""
        names = [d.name for d in drivers]
        if len(set(names)) != len(names) or CPU_DEVICE.name in names:
            raise ValueError(f"duplicate or reserved device names in {names}")
        with self._lock:
            self._drivers = list(drivers)
            self._configured = True

    def reset(self) -> None:
        """Back to a process that chose no devices: no drivers, not configured."""
        with self._lock:
            self._drivers = []
            self._configured = False

    @property
    def configured(self) -> bool:
        """True once the drivers were set (``set_drivers`` / ``register_driver``)."""
        return self._configured

    def register_driver(self, driver: Driver) -> None:
        with self._lock:
            if any(d.name == driver.name for d in self._drivers) or driver.name == CPU_DEVICE.name:
                raise ValueError(f"a device named {driver.name!r} is already registered")
            self._drivers.append(driver)
            self._configured = True

    def drivers(self) -> list[Driver]:
        with self._lock:
            return list(self._drivers)

    # -- queries --------------------------------------------------------------------------------
    def get_devices(self, log: bool = False) -> list[Driver]:
        """Devices as ``ANeuralNetworks_getDevice`` and ``Compilation_create`` see them."""
        if getprop_int("debug.nn.cpuonly", 0) == 1:
            return [CPU_DEVICE]
        pattern = getprop("debug.nn.enabled-devices") or ".*"
        try:
            rx = re.compile(pattern)
        except re.error:
            rx = re.compile(".*")
        out = []
        if log:
            vlog.log_info(TAG, f"Enabled devices: {pattern}")
        for d in self.drivers():
            if rx.fullmatch(d.name):
                if log:
                    vlog.log_info(TAG, f"Found interface {d.name} (version = {d.version_string})")
                out.append(d)
            elif log:
                vlog.log_info(TAG, f"Ignored interface {d.name} (version = {d.version_string})")
        out.append(CPU_DEVICE)
        return out

    @staticmethod
    def cpu_device() -> Driver:
        return CPU_DEVICE

    @staticmethod
    def partitioning() -> int:
        """``debug.nn.partition``: 0 none, 1 with fallback (default), 2 without fallback."""
        value = getprop_int("debug.nn.partition", 1)
        return value if value in (0, 1, 2) else 1


_MANAGER = DeviceManager()


def get_device_manager() -> DeviceManager:
    return _MANAGER
