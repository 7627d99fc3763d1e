"""Build one-operation models through the public ModelBuilder and run them on the CPU."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nnsim.runtime.model import ModelBuilder
from nnsim.common.operand import OperandTypeSpec, SymmPerChannelQuantParams
from nnsim.types import NUMPY_DTYPE, OperandType

T = OperandType


@dataclass
class Opnd:
    """An operand of a test model: ``value`` makes it a constant, otherwise a model input."""
    type: int
    dims: tuple = ()
    scale: float = 0.0
    zp: int = 0
    value: object = None
    channel_quant: tuple | None = None  # (channelDim, scales)
    omitted: bool = False

    def array(self, data) -> np.ndarray:
        return np.asarray(data, dtype=NUMPY_DTYPE[T(self.type)]).reshape(self.dims)


def tensor(type_, dims, scale=0.0, zp=0, value=None, channel_quant=None) -> Opnd:
    return Opnd(type_, tuple(dims), scale, zp, value, channel_quant)


def f32(dims, value=None) -> Opnd:
    return tensor(T.TENSOR_FLOAT32, dims, value=value)


def f16(dims, value=None) -> Opnd:
    return tensor(T.TENSOR_FLOAT16, dims, value=value)


def q8(dims, scale, zp, value=None) -> Opnd:
    return tensor(T.TENSOR_QUANT8_ASYMM, dims, scale, zp, value)


def s8(dims, scale, zp, value=None) -> Opnd:
    return tensor(T.TENSOR_QUANT8_ASYMM_SIGNED, dims, scale, zp, value)


def i32t(dims, value=None, scale=0.0) -> Opnd:
    return tensor(T.TENSOR_INT32, dims, scale, 0, value)


def i32(v) -> Opnd:
    return Opnd(T.INT32, (), value=v)


def fl32(v) -> Opnd:
    return Opnd(T.FLOAT32, (), value=v)


def fl16(v) -> Opnd:
    return Opnd(T.FLOAT16, (), value=v)


def boolean(v) -> Opnd:
    return Opnd(T.BOOL, (), value=v)


def _value_bytes(o: Opnd) -> np.ndarray:
    dtype = NUMPY_DTYPE[T(o.type)]
    if o.dims:
        return np.asarray(o.value, dtype=dtype).reshape(o.dims)
    return np.asarray([o.value], dtype=dtype)


def add_operation(mb: ModelBuilder, code, inputs, outputs) -> tuple[list, list]:
    """Add the operands and the operation; returns (model input indexes, output indexes)."""
    model_inputs, in_idx, out_idx = [], [], []
    for o in inputs:
        k = mb.add_operand(OperandTypeSpec(o.type, o.dims, o.scale, o.zp))
        if o.channel_quant is not None:
            mb.set_operand_symm_per_channel_quant_params(
                k, SymmPerChannelQuantParams(o.channel_quant[0], o.channel_quant[1]))
        if o.omitted:
            mb.set_operand_value(k, None)
        elif o.value is not None:
            mb.set_operand_value(k, _value_bytes(o))
        else:
            model_inputs.append(k)
        in_idx.append(k)
    for o in outputs:
        out_idx.append(mb.add_operand(OperandTypeSpec(o.type, o.dims, o.scale, o.zp)))
    mb.add_operation(code, in_idx, out_idx)
    return model_inputs, out_idx


def build(code, inputs, outputs, relax: bool = False) -> ModelBuilder:
    mb = ModelBuilder()
    model_inputs, outs = add_operation(mb, code, inputs, outputs)
    mb.identify_inputs_and_outputs(model_inputs, outs)
    if relax:
        mb.relax_computation_float32_to_float16(True)
    mb.finish()
    return mb


def feature_level(code, inputs, outputs) -> int:
    """The validator's minimum feature level for this single operation (as at addOperation;
    finish would also reject a model newer than the runtime's feature level)."""
    from nnsim.ops.base import ValidationContext
    from nnsim.ops.registry import lookup
    mb = ModelBuilder()
    add_operation(mb, code, inputs, outputs)
    op = mb.operations[0]
    return int(lookup(code).validate(ValidationContext(mb.operands, code, op.inputs, op.outputs)))


def run(code, inputs, outputs, feeds=(), relax: bool = False) -> list[np.ndarray]:
    """Build and run; ``feeds`` are the values of the non-constant inputs, in order."""
    from nnsim.ops.executor import run_model
    model = build(code, inputs, outputs, relax)
    variable = [o for o in inputs if o.value is None and not o.omitted]
    arrays = [o.array(v) for o, v in zip(variable, feeds)]
    return run_model(model, arrays)


def run1(code, inputs, outputs, *feeds) -> np.ndarray:
    return run(code, inputs, outputs, feeds)[0]
