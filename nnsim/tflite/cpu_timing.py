"""Simulated board time of TFLite nodes that stay on the CPU (TFLite's own kernels).

The same CPU cost model as nnapi-reference (drivers/timing.py ``cpu_op_cost``: MACs at a
per-type rate, bytes at the memory bandwidth, a per-op overhead, board profile ``cpu``
section) applied to the TFLite node's tensors.
"""
from __future__ import annotations

import numpy as np

from nnsim.drivers.timing import OpStats, cpu_op_cost
from nnsim.types import OperandType, OperationCode

_TYPES = {"UINT8": OperandType.TENSOR_QUANT8_ASYMM, "INT8": OperandType.TENSOR_QUANT8_ASYMM_SIGNED,
          "FLOAT32": OperandType.TENSOR_FLOAT32, "FLOAT16": OperandType.TENSOR_FLOAT16}


def _size(t) -> int:
    return int(np.prod(t.shape, dtype=np.int64)) if t.shape else 1


def _nbytes(t) -> int:
    return _size(t) * (np.dtype(t.data.dtype).itemsize if t.data is not None else
                       {"FLOAT32": 4, "INT32": 4, "INT64": 8, "FLOAT16": 2}.get(t.type.name, 1))


def node_stats(sg, node: int) -> OpStats:
    op = sg.operators[node]
    ins = [sg.tensors[i] for i in op.inputs if i >= 0]
    outs = [sg.tensors[o] for o in op.outputs if o >= 0]
    out_elems = sum(_size(t) for t in outs)
    name = op.name
    macs = out_elems
    if name in ("CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV") and len(ins) > 1:
        w = ins[1].shape
        taps = int(np.prod(w[1:3])) if len(w) == 4 else 1
        macs = out_elems * taps * (w[3] if name == "CONV_2D" and len(w) == 4 else 1)
    elif name == "FULLY_CONNECTED" and len(ins) > 1:
        macs = out_elems * (ins[1].shape[-1] if ins[1].shape else 1)
    elif name in ("AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D", "MEAN", "SUM", "REDUCE_MAX",
                  "ARG_MAX", "ARG_MIN"):
        macs = max(out_elems, sum(_size(t) for t in ins if t.data is None))
    elif name in ("RESIZE_BILINEAR", "SOFTMAX", "LOGISTIC", "TANH"):
        macs = out_elems * 4
    in_type = _TYPES.get(ins[0].type.name, OperandType.TENSOR_INT32) if ins else \
        OperandType.TENSOR_INT32
    code = getattr(OperationCode, name, OperationCode.OEM_OPERATION)
    return OpStats(node, int(code), "other", int(in_type), int(macs),
                   sum(_nbytes(t) for t in ins if t.data is None),
                   sum(_nbytes(t) for t in outs), sum(_nbytes(t) for t in ins if t.data is not None))


def cpu_node_ns(sg, node: int, board) -> float:
    """Simulated time of one TFLite CPU node on ``board``'s CPU."""
    return cpu_op_cost(node_stats(sg, node), board.cpu).total_ns
