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

__all__ = ["getprop", "setprop", "reset_props", "__version__"]
