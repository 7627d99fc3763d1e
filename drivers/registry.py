"""Driver discovery: the one table from device names to drivers.

A device name resolves, in this order, to

1. a built-in simulated driver (:data:`BUILTIN`: ``vsi-npu``, ``synap-npu``, ``google-edgetpu``);
2. a driver of a Python file a board profile names (``"driver_files"``), or any file given to
   :func:`load_driver_file`: the file defines ``DRIVERS`` (a list) or ``DRIVER``;
3. a driver an installed package advertises under the ``nnsim.drivers`` entry-point group (the
   entry point's name is the device name).

Each entry (a file's ``DRIVERS`` item, an entry point) is a Driver instance, a Driver subclass or
a factory. A factory with a ``board`` parameter is called with the board's name, so its driver
can take its timing from the board profile (``get_board(board).timing(name)``); other factories
are called without arguments. Boards (:func:`nnsim.drivers.boards.make_driver`), the CLI and
Python code all resolve names here. ``DeviceManager`` (nnsim.runtime.devices) lists the drivers
in discovery order and appends ``nnapi-reference`` last, as
``DeviceManager::findAvailableDevices``.
"""
from __future__ import annotations

import importlib.util
import inspect
from importlib import metadata
from typing import Callable, Sequence

from nnsim.drivers.base import Driver
from nnsim.drivers.edgetpu import google_edgetpu
from nnsim.drivers.synap_npu import synap_npu
from nnsim.drivers.vsi_npu import vsi_npu

ENTRY_POINT_GROUP = "nnsim.drivers"

# name -> factory(board); each takes the board name (None: the driver's default board)
BUILTIN: dict[str, Callable[..., Driver]] = {
    "vsi-npu": vsi_npu, "synap-npu": synap_npu, "google-edgetpu": google_edgetpu}


def _entry_points():
    try:
        eps = metadata.entry_points(group=ENTRY_POINT_GROUP)
    except TypeError:  # Python < 3.10 API shape
        eps = metadata.entry_points().get(ENTRY_POINT_GROUP, [])
    return sorted(eps, key=lambda e: e.name)


def load_entry_point_drivers(board: str | None = None) -> list[Driver]:
    """Drivers advertised by installed packages under the ``nnsim.drivers`` group."""
    return [_instantiate(ep.load(), ep.name, board) for ep in _entry_points()]


def load_driver_file(path: str, board: str | None = None) -> list[Driver]:
    """Load drivers from a Python file defining ``DRIVERS`` (a list) or ``DRIVER``; factories
    taking a ``board`` get ``board``."""
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
    return [_instantiate(d, path, board) for d in found]


def create_driver(name: str, board: str | None = None,
                  driver_files: Sequence[str] = ()) -> Driver:
    """A fresh driver for the device ``name`` with the timing of ``board``: a built-in, one of
    ``driver_files``, or an installed plugin; ValueError when none is named so."""
    if name in BUILTIN:
        return BUILTIN[name](board)
    for path in driver_files:
        for driver in load_driver_file(path, board):
            if driver.name == name:
                return driver
    for ep in _entry_points():
        if ep.name == name:
            driver = _instantiate(ep.load(), ep.name, board)
            if driver.name != name:
                raise ValueError(f"entry point {ep.name}: made a driver named {driver.name!r}")
            return driver
    raise ValueError(f"no simulated driver named {name!r}")


def _takes_board(factory) -> bool:
    try:
        return "board" in inspect.signature(factory).parameters
    except (TypeError, ValueError):   # a builtin or C callable: no signature to read
        return False


def _instantiate(obj, where: str, board: str | None = None) -> Driver:
    if isinstance(obj, Driver):
        return obj
    if isinstance(obj, type) and issubclass(obj, Driver):
        return obj()
    if callable(obj):
        result = obj(board=board) if board is not None and _takes_board(obj) else obj()
        if isinstance(result, Driver):
            return result
    raise ValueError(f"{where}: does not provide an nnsim Driver")
