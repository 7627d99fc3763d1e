"""RANK (OperationCode 101).

Inputs: 0 input (a tensor of any type below). Output 0: an INT32 *scalar*, the number of
dimensions of the input as seen at execution.

Types (T13 common/types/operations/src/Rank.cpp): input TENSOR_FLOAT16, TENSOR_FLOAT32,
TENSOR_INT32, TENSOR_QUANT8_ASYMM, TENSOR_QUANT16_SYMM, TENSOR_BOOL8,
TENSOR_QUANT8_SYMM_PER_CHANNEL, TENSOR_QUANT16_ASYMM, TENSOR_QUANT8_SYMM or
TENSOR_QUANT8_ASYMM_SIGNED; output INT32; FL4 for every type.
"""
from __future__ import annotations

import numpy as np

from nnsim.ops.base import OperationSpec
from nnsim.types import FL4, OperandType, OperationCode

T = OperandType
_TYPES = (T.TENSOR_FLOAT16, T.TENSOR_FLOAT32, T.TENSOR_INT32, T.TENSOR_QUANT8_ASYMM,
          T.TENSOR_QUANT16_SYMM, T.TENSOR_BOOL8, T.TENSOR_QUANT8_SYMM_PER_CHANNEL,
          T.TENSOR_QUANT16_ASYMM, T.TENSOR_QUANT8_SYMM, T.TENSOR_QUANT8_ASYMM_SIGNED)


def validate(ctx):
    ctx.check_counts(1, 1)
    ctx.check_input_type_in(0, _TYPES)
    ctx.check_output_types((T.INT32,))
    return FL4


def prepare(ctx):
    ctx.set_output_shape(0, ())


def execute(ctx):
    ctx.set_output(0, np.int32(np.ndim(ctx.input(0))))


SPEC = OperationSpec(OperationCode.RANK, validate, prepare, execute)
