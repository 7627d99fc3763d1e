"""A board's drivers: its device names resolved through the registry.

The board data (``Board``, ``BOARDS``, ``get_board``, ``current_board``, ...) lives in
:mod:`nnsim.drivers.profiles` and is re-exported here for the callers that import it from this
module. ``make_driver(device, board)`` makes one fresh driver, ``board_drivers(board)`` the
board's whole device list in discovery order; a name may be a built-in, a driver of one of the
profile's ``driver_files`` or an installed plugin (:mod:`nnsim.drivers.registry`). Installing a
board into the runtime (the DeviceManager and the properties) is
:func:`nnsim.runtime.board.apply_board`.
"""
from __future__ import annotations

from nnsim.drivers.base import Driver
from nnsim.drivers.profiles import (BOARDS, CPU_DEVICE_NAME, DATA_DIR, DEFAULT_BOARD,  # noqa: F401
                                    Board, _current, current_board, get_board, is_board_file,
                                    load_board, set_current_board)
from nnsim.drivers.registry import create_driver


def make_driver(device: str, board: str | Board) -> Driver:
    """A fresh driver instance for ``device`` with the timing of ``board``."""
    board = get_board(board) if isinstance(board, str) else board
    return create_driver(device, board.name, board.driver_files)


def board_drivers(board: str | Board) -> list[Driver]:
    """Fresh drivers for the board's devices in discovery order (``nnapi-reference``, which
    the DeviceManager always appends itself, excluded)."""
    board = get_board(board) if isinstance(board, str) else board
    return [make_driver(d, board) for d in board.devices if d != CPU_DEVICE_NAME]
