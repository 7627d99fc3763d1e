"""Simulated board time of TFLite nodes that stay on the CPU (TFLite's own kernels).

The same CPU cost model as nnapi-reference (drivers/timing.py ``cpu_op_cost``: MACs at a
per-type rate, bytes at the memory bandwidth, a per-op overhead, board profile ``cpu``
section) applied to the TFLite node's tensors.
"""
from __future__ import annotations

import numpy as np

from nnsim.drivers.timing import OpStats, count_macs, cpu_op_cost
from nnsim.drivers.timing import op_class as op_class_of
from nnsim.tflite.convert.mapping import nnapi_code_for_builtin
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.types import OperandType, OperationCode

_FILTER_CODES = (OperationCode.CONV_2D, OperationCode.GROUPED_CONV_2D,
                 OperationCode.DEPTHWISE_CONV_2D, OperationCode.FULLY_CONNECTED)

_TYPES = {"UINT8": OperandType.TENSOR_QUANT8_ASYMM, "INT8": OperandType.TENSOR_QUANT8_ASYMM_SIGNED,
          "FLOAT32": OperandType.TENSOR_FLOAT32, "FLOAT16": OperandType.TENSOR_FLOAT16}


def _size(t) -> int:
    return int(np.prod(t.shape, dtype=np.int64)) if t.shape else 1


def _nbytes(t) -> int:
    return _size(t) * (np.dtype(t.data.dtype).itemsize if t.data is not None else
                       {"FLOAT32": 4, "INT32": 4, "INT64": 8, "FLOAT16": 2}.get(t.type.name, 1))


def node_stats(sg, node: int) -> OpStats:
    """What one TFLite node does, in the NNAPI timing model's terms: the NNAPI operation the
    delegate maps it to (convert/mapping.py) and ``timing.count_macs`` on the node's tensors
    (TFLite and NNAPI share the filter layouts)."""
    op = sg.operators[node]
    ins = [sg.tensors[i] for i in op.inputs if i >= 0]
    outs = [sg.tensors[o] for o in op.outputs if o >= 0]
    data_ins = [t for t in ins if t.data is None]
    out_elems = sum(_size(t) for t in outs)
    in_elems = _size(data_ins[0]) if data_ins else (_size(ins[0]) if ins else 0)
    code = nnapi_code_for_builtin(op.builtin) if op.builtin != B.CUSTOM else None
    code = OperationCode.OEM_OPERATION if code is None else code
    filter_dims, window, adj_x = None, (1, 1), False
    opts = op.options
    if code == OperationCode.TRANSPOSE_CONV_2D and len(op.inputs) > 2:
        filter_dims, in_elems = sg.tensors[op.inputs[1]].shape, _size(sg.tensors[op.inputs[2]])
    elif code in _FILTER_CODES and len(ins) > 1:
        filter_dims = ins[1].shape
    elif code == OperationCode.BATCH_MATMUL and ins:
        filter_dims, adj_x = ins[0].shape, bool(getattr(opts, "adj_x", False))
    elif hasattr(opts, "filter_width"):
        window = (opts.filter_width, opts.filter_height)
    op_class = op_class_of(code) or "other"
    macs = count_macs(code, op_class, out_elems, in_elems, filter_dims, window, adj_x)
    in_type = _TYPES.get(ins[0].type.name, OperandType.TENSOR_INT32) if ins else \
        OperandType.TENSOR_INT32
    return OpStats(node, int(code), op_class, int(in_type), int(macs),
                   sum(_nbytes(t) for t in data_ins), sum(_nbytes(t) for t in outs),
                   sum(_nbytes(t) for t in ins if t.data is not None))


def cpu_node_ns(sg, node: int, board) -> float:
    """Simulated time of one TFLite CPU node on ``board``'s CPU."""
    return cpu_op_cost(node_stats(sg, node), board.cpu).total_ns
