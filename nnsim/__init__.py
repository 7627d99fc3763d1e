"""nnsim: the Android NNAPI runtime, the TFLite NNAPI delegate and simulated NPU drivers,
in pure Python. See README.md and docs/architecture.md (in the repository's shared docs).

Public surface: :mod:`nnsim.nnapi` (the C-shaped API), :mod:`nnsim.runtime` (the Pythonic
classes it wraps), ``setprop`` / ``getprop`` for the emulated Android properties, and

* ``set_board(name)``: choose the emulated board (``"imx8mp"``, ``"vs680"``, ...): its NNAPI
  devices, its properties and its timing, for the NNAPI and TFLite APIs alike. Without a call,
  the TFLite API's first NNAPI delegate applies ``$NNSIM_BOARD`` or ``imx8mp``. Returns the
  board.
* ``current_board()``: the board applied last (``imx8mp`` before any).
"""
import importlib as _importlib
import logging as _logging

from nnsim.platform.properties import getprop, reset_props, setprop

__version__ = "0.1.0"

# Library code logs through ``logging``; only the CLI prints. Keep Python's last-resort
# handler from printing logcat ERROR lines to stderr when no handler is configured.
_logging.getLogger("nnsim").addHandler(_logging.NullHandler())

# Names imported on first use (module __getattr__, PEP 562), so that ``import nnsim`` stays
# light (properties only): the board functions live with the drivers, whose import loads
# numpy, the operation specs and the simulated drivers. name -> (module, attribute)
_LAZY = {
    "set_board": ("nnsim.runtime.board", "apply_board"),
    "current_board": ("nnsim.drivers.boards", "current_board"),
}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'nnsim' has no attribute {name!r}")
    module, attribute = _LAZY[name]
    value = getattr(_importlib.import_module(module), attribute)
    globals()[name] = value   # resolved once
    return value


__all__ = ["getprop", "setprop", "reset_props", "set_board", "current_board", "__version__"]
