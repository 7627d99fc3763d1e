"""Which TFLite nodes the VX delegate takes: ``Delegate::SupportedOp`` of tflite-vx-delegate.

Spec: npu-drivers.md section 3 (read against ``op_map.cc`` / ``delegate_main.cc``, HEAD
3f4759e). For every node, in this order:

1. a custom op is looked up in ``SupportedBuiltinCustomOps()`` (``vsi-npu``, the NBG op, and
   ``WRNN_BIDI_SEQGRU``, whose mapper refuses everything); any other custom op falls through
   to the builtin table with builtin code 32 (CUSTOM);
2. a builtin missing from ``SupportedBuiltinOps()`` logs ``Fallback unsupported op %d to
   TfLite`` (WARNING) and is refused;
3. ``OpMapperBase::IsSupported``: the global checks on every input (int64 unless the op is
   BROADCAST_TO, string, rank > 6, a 0 dimension, a non-batch dimension > 65535) and output
   (int16, int64, a 0 dimension);
4. the mapper's own ``IsOpSupported`` (mappers.py).

Every refusal carries the line the delegate logs (``TFLITE_LOG_PROD`` severity and text, typos
included) or, where the source refuses silently, a description. Tensors are seen as the
delegate sees them at Prepare: propagated shapes, "constant" = ``kTfLiteMmapRo`` (a buffer in
the file).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import TensorType as TT
from nnsim.tflite.vx.mappers import CUSTOM_MAPPERS, MAPPERS, SUPPORTED_BUILTINS, NodeView, rank

__all__ = ["VxVerdict", "check_node", "global_checks", "mapper_of", "SUPPORTED_BUILTINS",
           "SUPPORTED_OP", "GLOBAL_CHECKS"]

ERROR, WARNING = logging.ERROR, logging.WARNING
SUPPORTED_OP = "SupportedBuiltinOps"
GLOBAL_CHECKS = "OpMapperBase::IsSupported"
BROADCAST_TO_CODE = 130
FALLBACK_LINE = "Fallback unsupported op {code} to TfLite"


@dataclass(frozen=True)
class VxVerdict:
    """The delegate's answer for one node. ``where``: the function that refused (""
    when supported); ``message``: its log line (or a description when it logs nothing);
    ``level``: the log severity, 0 when the source logs nothing."""
    supported: bool
    where: str = ""
    message: str = ""
    level: int = 0


# -- OpMapperBase::IsSupported ---------------------------------------------------------------------
def global_checks(node: NodeView, code: int):
    """The checks every mapper runs first; (level, line) of the first refusal, or None."""
    for i in node.inputs:
        if i < 0:
            continue
        t = node.t(i)
        if t.type == TT.INT64 and code != BROADCAST_TO_CODE:
            return ERROR, "Int64 input is not supported"
        if t.type == TT.STRING:
            return ERROR, "String input is not supported"
        if rank(t) > 6:
            return ERROR, ("vx-delegate doesn't support the tensor whose dimension is greater "
                           "than 6.")
        for j, d in enumerate(t.shape):
            if d == 0:
                return ERROR, "vx-delegate doesn't support the tensor of which one of dims is 0"
            if d > 65535 and j > 0:
                return ERROR, "vx-delegate doesn't support tensor height/width > 65535"
    for o in node.outputs:
        t = node.t(o)
        if t.type == TT.INT16:
            return ERROR, "Int16 output is not supported"
        if t.type == TT.INT64:
            return ERROR, "Int64 output is not supported"
        if any(d == 0 for d in t.shape):
            return ERROR, "vx-delegate doesn't support the tensor of which one of dims is 0"
    return None




def mapper_of(op) -> tuple[str, object] | None:
    """(mapper name, check) the delegate uses for ``op``, None when it has none."""
    if op.builtin == B.CUSTOM and op.custom_code in CUSTOM_MAPPERS:
        return CUSTOM_MAPPERS[op.custom_code]
    return MAPPERS.get(op.builtin)


def check_node(sg, n: int, dynamic=frozenset()) -> VxVerdict:
    """``Delegate::SupportedOp`` for node ``n`` of subgraph ``sg``; ``dynamic``: tensors whose
    allocation is kTfLiteDynamic (their size is only known at Invoke)."""
    op = sg.operators[n]
    mapper = mapper_of(op)
    if mapper is None:
        return VxVerdict(False, SUPPORTED_OP, FALLBACK_LINE.format(code=int(op.builtin)),
                         WARNING)
    node = NodeView(sg, op, dynamic)
    refusal = global_checks(node, int(op.builtin))
    if refusal is not None:
        return VxVerdict(False, GLOBAL_CHECKS, refusal[1], refusal[0])
    name, check = mapper
    refusal = check(node) if check is not None else None
    if refusal is not None:
        return VxVerdict(False, f"{name}::IsOpSupported", refusal[1], refusal[0])
    return VxVerdict(True)
