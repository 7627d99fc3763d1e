"""ARGMAX (39) and ARGMIN (40).

Inputs: 0 input, 1 axis (INT32 in [-rank, rank)). Output 0: TENSOR_INT32, the input shape
without the axis ([1] for a 1-D input); ties go to the lowest index, quantized values compare
raw, float16 compares its own values.

Types: float32, float16, int32, quant8-asymm and quant8-signed are all FL3 in the validator
(T13 validateOperation ARGMAX / ARGMIN; the signed operand type alone makes the model FL4).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.argminmax import arg_max, arg_min
from nnsim.ops.base import OperationSpec
from nnsim.ops.gather import TYPES, axis_argument
from nnsim.types import FL3, OperandType, OperationCode

T = OperandType
C = OperationCode


def validate(ctx):
    ctx.check_counts(2, 1)
    t = ctx.check_input_type_in(0, TYPES)
    ctx.check_input_types((t, T.INT32))
    ctx.check_output_types((T.TENSOR_INT32,))
    return FL3


def prepare(ctx):
    shape = ctx.input(0).shape
    axis = axis_argument(ctx, len(shape))
    ctx.set_output_shape(0, (shape[:axis] + shape[axis + 1:]) if len(shape) > 1 else (1,))


def execute(ctx):
    x = ctx.input(0)
    if x.dtype == np.float16:
        x = x.astype(np.float32)  # order-preserving
    kernel = arg_max if ctx.code == C.ARGMAX else arg_min
    y = kernel(x, axis_argument(ctx, x.ndim), out_dtype=np.int32)
    ctx.set_output(0, y.reshape(ctx.output_shapes[0]))


ARGMAX = OperationSpec(C.ARGMAX, validate, prepare, execute)
ARGMIN = OperationSpec(C.ARGMIN, validate, prepare, execute)
