"""nnsim's TFLite layer: reader/writer, the NNAPI delegate, CPU builtins and the interpreter.

``from nnsim.tflite import Interpreter, load_delegate`` is a drop-in for
``from ai_edge_litert.interpreter import Interpreter, load_delegate``.

The public names below are a dispatch table, resolved on first use (``__getattr__``, PEP 562),
not imported here: every ``import nnsim.tflite.<module>`` runs this file first, and the
interpreter and delegates bring in the runtime, the drivers and the numba kernels (about 0.6 s),
which the light modules (``reader``, ``tflog``, ``schema``, which the CLI's log set-up and the
readers use alone) must not pay for.
"""
from __future__ import annotations

import importlib

__all__ = ["Interpreter", "SignatureRunner", "OpResolverType", "load_delegate", "Delegate",
           "NnApiDelegate", "VxDelegate", "DelegateError", "read_model", "ModelFileError"]

# public name -> the module that defines it
_LAZY = {
    "Interpreter": "nnsim.tflite.interpreter",
    "SignatureRunner": "nnsim.tflite.interpreter",
    "OpResolverType": "nnsim.tflite.interpreter",
    "load_delegate": "nnsim.tflite.delegate_loader",
    "NNAPI_LIBRARY_NAMES": "nnsim.tflite.delegate_loader",
    "NnApiDelegate": "nnsim.tflite.delegate",
    "VxDelegate": "nnsim.tflite.vx",
    "DelegateError": "nnsim.tflite.delegate",
    "read_model": "nnsim.tflite.reader",
    "ModelFileError": "nnsim.errors",
}


def __getattr__(name):
    if name == "Delegate":  # the type load_delegate returns
        return __getattr__("NnApiDelegate")
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'nnsim.tflite' has no attribute {name!r}")
