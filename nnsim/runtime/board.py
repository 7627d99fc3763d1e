"""Installing a board: its drivers into the DeviceManager, its properties, its timing.

A board profile (:mod:`nnsim.drivers.profiles`: a built-in name such as ``imx8mp`` or
``vs680``, or the path of a profile file, ``/path/to/board.json``) names the board's devices;
:func:`nnsim.drivers.boards.board_drivers` makes them. ``apply_board`` installs them here, in the
runtime layer, which may reach both the drivers and the DeviceManager (the drivers never
reach the runtime).
"""
from __future__ import annotations

import os
import threading

from nnsim.drivers.boards import board_drivers
from nnsim.drivers.profiles import DEFAULT_BOARD, Board, get_board, set_current_board
from nnsim.platform.properties import setprop
from nnsim.runtime.devices import get_device_manager

BOARD_ENV = "NNSIM_BOARD"
_lock = threading.Lock()


def apply_board(name: str) -> Board:
    """Make ``name`` (a board name or a profile path) the current board: set its properties and
    the DeviceManager's drivers (fresh instances, in the board's discovery order;
    nnapi-reference is always appended by the DeviceManager itself). Returns the Board."""
    board = get_board(name)
    drivers = board_drivers(board)
    with _lock:
        for key, value in board.properties.items():
            setprop(key, value)
        setprop("ro.nnsim.board", board.name)
        get_device_manager().set_drivers(drivers)
        set_current_board(board.name)
    return board


def ensure_board() -> Board | None:
    """The TFLite Python API's board: when no devices were chosen in this process yet
    (``nnsim.set_board``, a test, a plugin), apply ``$NNSIM_BOARD`` (a board name or a profile
    path) or the default (``imx8mp``), so a script's ``load_delegate("nnapi", ...)`` meets a
    board's devices. Returns the board applied, None when devices were already chosen."""
    if get_device_manager().configured:
        return None
    return apply_board(os.environ.get(BOARD_ENV) or DEFAULT_BOARD)
