"""DEQUANTIZE (OperationCode 6).

Inputs: 0 input (rank <= 4): TENSOR_QUANT8_ASYMM, TENSOR_QUANT8_ASYMM_SIGNED,
TENSOR_QUANT8_SYMM or TENSOR_QUANT8_SYMM_PER_CHANNEL (scales along its channelDim).
Output 0: same shape, TENSOR_FLOAT32 or TENSOR_FLOAT16, x = (q - zp) * scale.

Feature levels: quant8-asymm -> float32 FL1; every other accepted combination FL3 (the
validator returns FL3 for quant8-signed inputs too, although that type itself is FL4, so a
model using it is FL4 overall) (T13 common/types/operations/src/Dequantize.cpp).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels._common import aligned_empty
from nnsim.kernels.quantize import dequantize as dequantize_kernel
from nnsim.kernels.quantize import bind_dequantize, dequantize_into
from nnsim.ops._common import bound_runner
from nnsim.ops.base import OperationSpec, context_runner
from nnsim.types import FL1, FL3, OperandType, OperationCode

T = OperandType
_INPUTS = (T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED, T.TENSOR_QUANT8_SYMM,
           T.TENSOR_QUANT8_SYMM_PER_CHANNEL)


def validate(ctx):
    ctx.check_counts(1, 1)
    ctx.require(ctx.input_rank(0) <= 4, f"input has rank {ctx.input_rank(0)}, expected <= 4")
    in_t, out_t = ctx.input_type(0), ctx.output_type(0)
    if in_t == T.TENSOR_QUANT8_ASYMM and out_t == T.TENSOR_FLOAT32:
        return FL1
    ctx.check_input_type_in(0, _INPUTS)
    ctx.require(out_t in (T.TENSOR_FLOAT16, T.TENSOR_FLOAT32),
                f"output has unsupported type {T(out_t).name}; expected TENSOR_FLOAT32 or "
                f"TENSOR_FLOAT16")
    return FL3


def prepare(ctx):
    ctx.set_output_shape(0, ctx.input(0).shape)


def execute(ctx):
    src = ctx.input_operand(0)
    kwargs = dict(in_scale=src.scale, in_zp=src.zero_point)
    if src.type == T.TENSOR_QUANT8_SYMM_PER_CHANNEL:
        kwargs.update(in_scale=1.0, in_zp=0,
                      channel_scales=np.asarray(src.channel_quant.scales, dtype=np.float32),
                      channel_axis=src.channel_quant.channelDim)
    ctx.set_output(0, dequantize_kernel(ctx.input(0), **kwargs))


def plan(ctx):
    """Per-tensor 8-bit in, float32 out: the output written into one buffer kept across
    executions."""
    src = ctx.input_operand(0)
    general = context_runner(SPEC, ctx)
    if src.type == T.TENSOR_QUANT8_SYMM_PER_CHANNEL or \
            ctx.output_operand(0).type != T.TENSOR_FLOAT32:
        return general
    buffer = aligned_empty(ctx.output_shapes[0], np.float32)
    result = [buffer]

    def fallback(values):
        if dequantize_into(values[0], buffer, in_scale=src.scale, in_zp=src.zero_point):
            return result
        return general(values)
    # bound to its input array: a compiled call in an executor chain (no Python call)
    return bound_runner(lambda x: bind_dequantize(x, buffer, in_scale=src.scale,
                                                  in_zp=src.zero_point), fallback, result)


SPEC = OperationSpec(OperationCode.DEQUANTIZE, validate, prepare, execute,
                     allow_zero_sized_input=True, plan=plan)
