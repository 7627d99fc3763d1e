"""QUANTIZE (OperationCode 72).

Inputs: 0 input (TENSOR_FLOAT32 or TENSOR_FLOAT16). Output 0: same shape,
TENSOR_QUANT8_ASYMM (FL3) or TENSOR_QUANT8_ASYMM_SIGNED (FL4), q = round(x / scale) + zp
saturated (T13 common/types/operations/src/Quantize.cpp).
"""
from __future__ import annotations

from nnsim.kernels._common import aligned_empty
from nnsim.kernels.quantize import quantize as quantize_kernel
from nnsim.kernels.quantize import bind_quantize, quantize_into
from nnsim.ops import _common as cm
from nnsim.ops._common import bound_runner
from nnsim.ops.base import OperationSpec, context_runner
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType


def validate(ctx):
    ctx.check_counts(1, 1)
    ctx.check_input_type_in(0, (T.TENSOR_FLOAT16, T.TENSOR_FLOAT32))
    out_t = ctx.output_type(0)
    ctx.require(out_t in cm.QUANT8_TYPES,
                f"output has unsupported type {T(out_t).name}; expected TENSOR_QUANT8_ASYMM "
                f"or TENSOR_QUANT8_ASYMM_SIGNED")
    return FL4 if out_t == T.TENSOR_QUANT8_ASYMM_SIGNED else FL3


def prepare(ctx):
    ctx.set_output_shape(0, ctx.input(0).shape)


def execute(ctx):
    out = ctx.output_operand(0)
    ctx.set_output(0, quantize_kernel(ctx.input(0), out_scale=out.scale, out_zp=out.zero_point,
                                      out_dtype=cm.out_dtype(out.type)))


def plan(ctx):
    """float32 in: the output written into one buffer kept across executions."""
    out = ctx.output_operand(0)
    buffer = aligned_empty(ctx.output_shapes[0], cm.out_dtype(out.type))
    result, general = [buffer], context_runner(SPEC, ctx)

    def fallback(values):
        if quantize_into(values[0], buffer, out_scale=out.scale, out_zp=out.zero_point):
            return result
        return general(values)
    # bound to its input array: a compiled call in an executor chain (no Python call)
    return bound_runner(lambda x: bind_quantize(x, buffer, out_scale=out.scale,
                                                out_zp=out.zero_point), fallback, result)


SPEC = OperationSpec(OperationCode.QUANTIZE, validate, prepare, execute,
                     allow_zero_sized_input=True, plan=plan)
