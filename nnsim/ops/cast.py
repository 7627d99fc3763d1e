"""CAST (OperationCode 45).

Inputs: 0 input. Output 0: same shape, another type. float32, float16, int32 and
quant8-asymm (raw values, no dequantization) convert into each other at FL3: float to integer
truncates, and anything to quant8-asymm saturates to [0, 255] first (CastExecution.cpp).
bool8, quant16 asymm/symm, quant8 signed/symm only cast to themselves, FL4. Known output
dimensions must equal the input's (T13 Cast.cpp).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.cast import cast
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType
_NUMERIC = (T.TENSOR_FLOAT16, T.TENSOR_FLOAT32, T.TENSOR_INT32, T.TENSOR_QUANT8_ASYMM)
_IDENTITY = (T.TENSOR_BOOL8, T.TENSOR_QUANT16_ASYMM, T.TENSOR_QUANT16_SYMM,
             T.TENSOR_QUANT8_ASYMM_SIGNED, T.TENSOR_QUANT8_SYMM)


def validate(ctx):
    ctx.check_counts(1, 1)
    src, dst = ctx.input_type(0), ctx.output_type(0)
    if src in _NUMERIC and dst in _NUMERIC:
        level = FL3
    else:
        ctx.check_input_type_in(0, _NUMERIC + _IDENTITY)
        ctx.check_output_types((src,))
        level = FL4
    a, b = ctx.input_shape(0), ctx.output(0).dimensions
    ctx.require(not a or not b or 0 in b or tuple(a) == tuple(b),
                f"output dimensions {b} differ from the input's {a}")
    return level


def prepare(ctx):
    ctx.set_output_shape(0, ctx.input(0).shape)


def execute(ctx):
    x = ctx.input(0)
    dst = ctx.output_operand(0)
    if dst.type == T.TENSOR_QUANT8_ASYMM and x.dtype != np.uint8:
        x = np.clip(x, 0, 255)
    ctx.set_output(0, cast(x, dst.dtype()))


SPEC = OperationSpec(OperationCode.CAST, validate, prepare, execute)
