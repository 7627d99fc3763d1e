"""GATHER (51), ARGMAX (39), ARGMIN (40) and CAST (45).

GATHER inputs: 0 input, 1 axis (INT32 in [-rank, rank)), 2 indices (TENSOR_INT32, each in
[0, dims[axis]), checked at execution). Output: ``dims[:axis] + indices.dims + dims[axis+1:]``,
same quantization. Types: float32, float16, int32, quant8-asymm FL3; quant8-signed FL4 (T13
Gather.cpp).

ARGMAX / ARGMIN inputs: 0 input, 1 axis (INT32). Output: TENSOR_INT32, the input without the
axis ([1] for a 1-D input); ties go to the lowest index, quantized values compare raw. Every
input type (float32, float16, int32, quant8 asymm and signed) is FL3 in the validator (T13
validateOperation ARGMAX / ARGMIN; the signed operand type alone makes the model FL4).

CAST inputs: 0 input; output of the same shape. float32, float16, int32 and quant8-asymm
(raw values, no dequantization) convert into each other at FL3: float to integer truncates,
and anything to quant8-asymm saturates to [0, 255] first (CastExecution.cpp). bool8,
quant16 asymm/symm, quant8 signed/symm only cast to themselves, FL4.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.argminmax import arg_max, arg_min
from nnsim.kernels.cast import cast
from nnsim.kernels.transform import gather
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType
C = OperationCode
_TYPES = (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_INT32, T.TENSOR_QUANT8_ASYMM,
          T.TENSOR_QUANT8_ASYMM_SIGNED)
_CAST_NUMERIC = (T.TENSOR_FLOAT16, T.TENSOR_FLOAT32, T.TENSOR_INT32, T.TENSOR_QUANT8_ASYMM)
_CAST_IDENTITY = (T.TENSOR_BOOL8, T.TENSOR_QUANT16_ASYMM, T.TENSOR_QUANT16_SYMM,
                  T.TENSOR_QUANT8_ASYMM_SIGNED, T.TENSOR_QUANT8_SYMM)


def validate(ctx):
    if ctx.code == C.CAST:
        return _validate_cast(ctx)
    if ctx.code == C.GATHER:
        ctx.check_counts(3, 1)
        t = ctx.check_input_type_in(0, _TYPES)
        ctx.check_input_types((t, T.INT32, T.TENSOR_INT32))
        ctx.check_output_types((t,))
        return FL4 if t == T.TENSOR_QUANT8_ASYMM_SIGNED else FL3
    ctx.check_counts(2, 1)
    t = ctx.check_input_type_in(0, _TYPES)
    ctx.check_input_types((t, T.INT32))
    ctx.check_output_types((T.TENSOR_INT32,))
    return FL3


def _validate_cast(ctx):
    ctx.check_counts(1, 1)
    src, dst = ctx.input_type(0), ctx.output_type(0)
    if src in _CAST_NUMERIC and dst in _CAST_NUMERIC:
        level = FL3
    else:
        ctx.check_input_type_in(0, _CAST_NUMERIC + _CAST_IDENTITY)
        ctx.check_output_types((src,))
        level = FL4
    a, b = ctx.input_shape(0), ctx.output(0).dimensions
    ctx.require(not a or not b or 0 in b or tuple(a) == tuple(b),
                f"output dimensions {b} differ from the input's {a}")
    return level


def _axis(ctx, rank: int) -> int:
    axis = int(ctx.scalar(1))
    cm.check(ctx, -rank <= axis < rank, f"axis {axis} out of range for rank {rank}")
    return axis % rank


def prepare(ctx):
    shape = ctx.input(0).shape
    if ctx.code == C.CAST:
        out = shape
    elif ctx.code == C.GATHER:
        axis = _axis(ctx, len(shape))
        out = shape[:axis] + ctx.input(2).shape + shape[axis + 1:]
    else:
        axis = _axis(ctx, len(shape))
        out = (shape[:axis] + shape[axis + 1:]) if len(shape) > 1 else (1,)
    ctx.set_output_shape(0, out)


def execute(ctx):
    x = ctx.input(0)
    if ctx.code == C.CAST:
        dst = ctx.output_operand(0)
        if dst.type == T.TENSOR_QUANT8_ASYMM and x.dtype != np.uint8:
            x = np.clip(x, 0, 255)
        y = cast(x, dst.dtype())
    elif ctx.code == C.GATHER:
        y = gather(x, ctx.input(2), axis=_axis(ctx, x.ndim))
    else:
        if x.dtype == np.float16:
            x = x.astype(np.float32)  # order-preserving
        kernel = arg_max if ctx.code == C.ARGMAX else arg_min
        y = kernel(x, _axis(ctx, x.ndim), out_dtype=np.int32)
    ctx.set_output(0, y.reshape(ctx.output_shapes[0]))


GATHER = OperationSpec(C.GATHER, validate, prepare, execute)
ARGMAX = OperationSpec(C.ARGMAX, validate, prepare, execute)
ARGMIN = OperationSpec(C.ARGMIN, validate, prepare, execute)
CAST = OperationSpec(C.CAST, validate, prepare, execute)
