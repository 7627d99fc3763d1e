"""Driver discovery: built-in simulated drivers, ``nnsim.drivers`` entry points, file paths.

``DeviceManager`` (nnsim.runtime.devices) lists the discovered drivers in discovery order and
appends ``nnapi-reference`` last, as ``DeviceManager::findAvailableDevices``.
"""
from __future__ import annotations

import importlib.util
from importlib import metadata

from nnsim.drivers.base import Driver

ENTRY_POINT_GROUP = "nnsim.drivers"


def load_entry_point_drivers() -> list[Driver]:
    """Drivers advertised by installed packages under the ``nnsim.drivers`` group.

    Each entry point names a Driver subclass, a Driver instance or a zero-argument factory.
    """
    drivers = []
    try:
        eps = metadata.entry_points(group=ENTRY_POINT_GROUP)
    except TypeError:  # Python < 3.10 API shape
        eps = metadata.entry_points().get(ENTRY_POINT_GROUP, [])
    for ep in sorted(eps, key=lambda e: e.name):
        drivers.append(_instantiate(ep.load(), ep.name))
    return drivers


def load_driver_file(path: str) -> list[Driver]:
    """Load drivers from a Python file defining ``DRIVERS`` (a list) or ``DRIVER``."""
    spec = importlib.util.spec_from_file_location(f"nnsim_user_driver_{abs(hash(path))}", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found = getattr(module, "DRIVERS", None)
    if found is None and hasattr(module, "DRIVER"):
        found = [module.DRIVER]
    if not found:
        raise ValueError(f"{path}: defines neither DRIVERS nor DRIVER")
    return [_instantiate(d, path) for d in found]


def _instantiate(obj, where: str) -> Driver:
    if isinstance(obj, Driver):
        return obj
    if isinstance(obj, type) and issubclass(obj, Driver):
        return obj()
    if callable(obj):
        result = obj()
        if isinstance(result, Driver):
            return result
    raise ValueError(f"{where}: does not provide an nnsim Driver")
