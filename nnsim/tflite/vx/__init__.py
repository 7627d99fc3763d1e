"""The VX delegate (VeriSilicon tflite-vx-delegate over TIM-VX) on a simulated board's NPU.

``nnsim.tflite.load_delegate("libvx_delegate.so", options={...})`` returns a
:class:`VxDelegate`, as LiteRT's external-delegate loading does; give it to an Interpreter's
``experimental_delegates``. Modules: ``rules`` / ``mappers`` (which nodes it takes and why
not), ``options`` (its option parsing and creation echo), ``delegate`` (partitioning and
kernels), ``timing`` (board time of a partition), ``nbg_cache`` (``allowed_cache_mode``),
``estimate`` (simulated times of a delegated plan without running it), ``report`` (summary
lines). ``nnsim explain`` for the VX delegate and the other-delegate recommendation are tools,
in ``nnsim.explain_vx``.

For a tool comparing delegates and boards (one model, one board at a time)::

    nnsim.set_board("imx8mp")
    d = load_delegate("libvx_delegate.so")            # or NnApiDelegate(...)
    ip = Interpreter(model_path=path, experimental_delegates=[d]); ip.allocate_tensors()
    r = d.result                        # nodes_replaced, nodes_total, kernels (partitions)
    placements(ip.model, ip.delegation) # nnsim.tflite.placement: where each node ran (PLACEMENT,
                                        # an NNAPI device, or "TFLite CPU")
    estimate_plan(ip.model, ip.delegation, board)  # steady_ns / first_ns without running
    fallback_reasons(r)                 # {node: "Conv2dMapper::IsOpSupported: hybrid ..."}

(both functions take the NNAPI delegate's result as well). After ``ip.invoke()`` a VX kernel's
``last_simulated_ns`` is the board time of its last invoke, ``first_run`` what its first one
did (compile, NBG write or load).
"""
from __future__ import annotations

import logging
import os

from nnsim.tflite import tflog
from nnsim.tflite.vx.delegate import (DELEGATE_NAME, LIBRARY, PLACEMENT, VxDelegate,
                                      VxDelegateKernel, VxDelegationResult, VxInvokeError)
from nnsim.tflite.vx.options import FLAGS, VxDelegateOptions, VxOptionError, parse_options
from nnsim.tflite.vx.estimate import PlanEstimate, fallback_reasons
from nnsim.tflite.vx.estimate import estimate as estimate_plan
from nnsim.tflite.vx.rules import SUPPORTED_BUILTINS, VxVerdict, check_node

__all__ = ["VxDelegate", "VxDelegateKernel", "VxDelegateOptions", "VxDelegationResult",
           "VxInvokeError", "VxOptionError", "VxVerdict", "DELEGATE_NAME", "LIBRARY",
           "PLACEMENT", "SUPPORTED_BUILTINS", "PlanEstimate", "check_node", "estimate_plan",
           "fallback_reasons", "is_vx_library", "load_vx_delegate"]

LIBRARY_ALIASES = ("vx", "vx_delegate", "libvx_delegate", LIBRARY)


def is_vx_library(library) -> bool:
    """True for ``libvx_delegate.so`` under any directory (``/vendor/lib64/...``)."""
    name = os.path.basename(str(library)).lower()
    return name in LIBRARY_ALIASES


def load_vx_delegate(library, options=None) -> VxDelegate:
    """``tflite_plugin_create_delegate`` of libvx_delegate.so on string options; raises
    ValueError worded like LiteRT's ``load_delegate`` when an option does not parse."""
    try:
        parsed = parse_options(options or {})
    except VxOptionError as e:
        for line in str(e).splitlines():
            tflog.log(logging.ERROR, line)
        hint = ""
        if any(f"'{name}'" in str(e) for name, kind, _ in FLAGS if kind is bool):
            hint = " (tflite::Flags reads a boolean from true, false, 1 or 0"
            if any(isinstance(v, bool) for v in dict(options or {}).values()):
                hint += "; LiteRT passes str(value) to the library, and str(True) is 'True'"
            hint += ")"
        raise ValueError(f"Failed to load delegate from {library}\n{e}{hint}") from None
    return VxDelegate(parsed, library=str(library))
