"""nnsim: the Android NNAPI runtime, the TFLite NNAPI delegate and simulated NPU drivers,
in pure Python. See README.md and docs/architecture.md (in the repository's shared docs).

Public surface: :mod:`nnsim.nnapi` (the C-shaped API), :mod:`nnsim.runtime` (the Pythonic
classes it wraps), ``setprop`` / ``getprop`` for the emulated Android properties.
"""
import logging as _logging

from nnsim.runtime.properties import getprop, reset_props, setprop

__version__ = "0.1.0"

# Library code logs through ``logging``; only the CLI prints. Keep Python's last-resort
# handler from printing logcat ERROR lines to stderr when no handler is configured.
_logging.getLogger("nnsim").addHandler(_logging.NullHandler())



def set_board(name: str):
    """Choose the emulated board (``"imx8mp"``, ``"vs680"``, ...): its NNAPI devices, its
    properties and its timing, for the NNAPI and TFLite APIs alike. Without a call, the TFLite
    API's first NNAPI delegate applies ``$NNSIM_BOARD`` or ``imx8mp``. Returns the board."""
    from nnsim.drivers.boards import apply_board  # drivers load numba kernels: not at import
    return apply_board(name)


def current_board():
    """The board applied last (``imx8mp`` before any)."""
    from nnsim.drivers.boards import current_board as _current
    return _current()


__all__ = ["getprop", "setprop", "reset_props", "set_board", "current_board", "__version__"]
