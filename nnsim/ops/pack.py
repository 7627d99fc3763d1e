"""PACK (OperationCode 103).

Inputs: 0 axis (INT32 scalar in [0, rank]; no negative values), 1.. one or more tensors of the
same shape (rank >= 1) and type. Output 0: rank + 1 dimensions, the tensors stacked along the
new dimension ``axis`` (of size the number of tensors).

Types (T13 common/types/operations/src/Pack.cpp): output float16, float32, quant8-asymm,
quant8-signed or int32; every input of the output's type and, quantized, of its exact scale and
zero point; every input of one rank, the output's rank - 1 when known. FL6 for every type,
which this runtime (FL5) refuses at finish.
"""
from __future__ import annotations

from nnsim.kernels import movement
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL6, OperandType, OperationCode

T = OperandType
_TYPES = (T.TENSOR_FLOAT16, T.TENSOR_FLOAT32, T.TENSOR_QUANT8_ASYMM,
          T.TENSOR_QUANT8_ASYMM_SIGNED, T.TENSOR_INT32)


def validate(ctx):
    ctx.require(ctx.num_inputs >= 2, f"expected at least 2 inputs, got {ctx.num_inputs}")
    ctx.require(ctx.num_outputs == 1, f"expected 1 output, got {ctx.num_outputs}")
    ctx.check_input_types((T.INT32,))
    out = ctx.output(0)
    name = T(out.type).name if out.type in T._value2member_map_ else str(out.type)
    ctx.require(out.type in _TYPES, f"output 0 (operand {ctx.outputs[0]}) has unsupported "
                f"type {name}")
    required = len(out.dimensions) - 1 if out.dimensions else 0
    for i in range(1, ctx.num_inputs):
        ctx.check_input_types((out.type,), start=i)
        src = ctx.input(i)
        if cm.is_quant8(out.type):
            ctx.require(src.scale == out.scale and src.zero_point == out.zero_point,
                        f"input {i} quantization ({src.scale}, {src.zero_point}) differs from "
                        f"the output's ({out.scale}, {out.zero_point})")
        rank = len(src.dimensions)
        if rank and required:
            ctx.require(rank == required, f"input {i} has rank {rank}, expected {required}")
        elif rank:
            required = rank
    return FL6


def _axis(ctx) -> int:
    first = ctx.input(1)
    cm.check(ctx, first.ndim >= 1, "input tensors must have rank >= 1")
    for i in range(2, ctx.num_inputs):
        cm.check(ctx, ctx.input(i).shape == first.shape,
                 f"input {i} has shape {ctx.input(i).shape}, input 1 has {first.shape}")
    axis = int(ctx.scalar(0))
    cm.check(ctx, 0 <= axis <= first.ndim, f"axis {axis} out of range [0, {first.ndim}]")
    return axis


def prepare(ctx):
    axis, shape = _axis(ctx), ctx.input(1).shape
    ctx.set_output_shape(0, shape[:axis] + (ctx.num_inputs - 1,) + shape[axis:])


def execute(ctx):
    tensors = [ctx.input(i) for i in range(1, ctx.num_inputs)]
    ctx.set_output(0, movement.pack(tensors, _axis(ctx)))


SPEC = OperationSpec(OperationCode.PACK, validate, prepare, execute)
