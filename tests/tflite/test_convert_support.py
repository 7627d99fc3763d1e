"""Helpers (no tests) for the converter and validator tests: small TFLite graphs built with
``ModelWriter`` and views of the resulting NNAPI model in the order it was built."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nnsim.tflite.convert import ConvertOptions, build_nnapi_model
from nnsim.tflite.reader import Quantization, read_model
from nnsim.tflite.schema import TensorType as TT
from nnsim.tflite.writer import ModelWriter
from nnsim.types import OperandLifeTime as L
from nnsim.types import OperandType as T
from nnsim.types import OperationCode as C

MODELS = Path(__file__).resolve().parents[2].parent / "shared" / "models"


def shared_model(name: str):
    """A shared model by file stem, or skip when ../shared/models is absent."""
    path = MODELS / f"{name}.tflite"
    if not path.is_file():
        pytest.skip(f"shared model not found: {path}")
    return read_model(path)


class Graph:
    """A tiny one-subgraph model: ``t(...)`` adds a tensor, ``op(...)`` a node."""

    def __init__(self):
        self.w = ModelWriter()

    def t(self, shape, ttype=TT.FLOAT32, data=None, q=None, name=None):
        if isinstance(q, tuple) and isinstance(q[0], (list, tuple, np.ndarray)):
            scales, zps, dim = q
            q = Quantization(scales, zps, dim)
        name = name or f"t{len(self.w._tensors)}"
        return self.w.add_tensor(name, shape, ttype, data=data, quantization=q)

    def op(self, builtin, inputs, outputs, options=None, version=1, custom_code=None):
        return self.w.add_operator(builtin, inputs, outputs, options, version=version,
                                   custom_code=custom_code)

    def model(self, inputs=None, outputs=None):
        m = self.w.to_model()
        sg = m.subgraphs[0]
        produced = {o for op in sg.operators for o in op.outputs}
        used = {i for op in sg.operators for i in op.inputs if i >= 0}
        if inputs is None:
            inputs = sorted(i for i in used - produced if sg.tensors[i].data is None)
        if outputs is None:
            outputs = sorted(produced - used)
        self.w.set_inputs(inputs)
        self.w.set_outputs(outputs)
        return self.w.to_model()


def partition_io(model, nodes, subgraph_index: int = 0):
    """Partition tensor lists as PartitionGraphIntoIndependentNodeSubsets gives them (6.4)."""
    sg = model.subgraphs[subgraph_index]
    node_set = set(nodes)
    produced = {o for n in nodes for o in sg.operators[n].outputs}
    inputs = sorted({i for n in nodes for i in sg.operators[n].inputs if i >= 0} - produced)
    read_outside = {i for k, op in enumerate(sg.operators) if k not in node_set
                    for i in op.inputs}
    outputs = sorted(t for t in produced if t in sg.outputs or t in read_outside)
    return inputs, outputs


def convert(model, nodes=None, fl: int = 31, sdk: int | None = None, allow_fp16=False):
    sg = model.subgraphs[0]
    nodes = list(range(len(sg.operators))) if nodes is None else list(nodes)
    inputs, outputs = partition_io(model, nodes)
    if sdk is None:
        sdk = fl if fl < 1000 else 31
    return build_nnapi_model(model, 0, nodes, inputs, outputs,
                             ConvertOptions(fl, sdk, allow_fp16))


def ops_in_added_order(nn_model):
    """(code name, inputs, outputs) per operation, in the order operations were added."""
    ops = [None] * len(nn_model.operations)
    for pos, orig in enumerate(nn_model.sorted_to_original):
        op = nn_model.operations[pos]
        ops[orig] = (C(op.type).name, tuple(op.inputs), tuple(op.outputs))
    return ops


def operand_summary(nn_model, index):
    """(type name, dims, scale, zero point, lifetime name, value or None) of an operand."""
    o = nn_model.operands[index]
    value = None
    if o.lifetime in (L.CONSTANT_COPY, L.CONSTANT_REFERENCE):
        arr = o.array()
        value = arr.tolist() if isinstance(arr, np.ndarray) else arr.item()
    return (T(o.type).name, tuple(o.dimensions), o.scale, o.zero_point,
            L(o.lifetime).name, value)
