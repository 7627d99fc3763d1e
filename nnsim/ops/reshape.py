"""RESHAPE (OperationCode 22).

Inputs: 0 tensor (rank <= 4), 1 shape (TENSOR_INT32, 1-D; at most one -1, which takes the
size that keeps the element count). Output 0: the same data, same quantization, new shape.

Types: float32 / quant8-asymm FL1; float16 FL3; quant8-signed FL4; TENSOR_INT32 FL6
(T13 common/types/operations/src/Reshape.cpp validateReshape; shape rules from
common/cpu_operations OperationsUtils.cpp reshapePrepare).
"""
from __future__ import annotations

import numpy as np

from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec, reshape_plan
from nnsim.types import FL1, FL3, FL4, FL6, OperandType, OperationCode

T = OperandType
_LEVEL = {T.TENSOR_FLOAT32: FL1, T.TENSOR_QUANT8_ASYMM: FL1, T.TENSOR_FLOAT16: FL3,
          T.TENSOR_QUANT8_ASYMM_SIGNED: FL4, T.TENSOR_INT32: FL6}


def validate(ctx):
    ctx.check_counts(2, 1)
    t = ctx.check_input_type_in(0, tuple(_LEVEL))
    ctx.require(ctx.input_rank(0) <= 4, f"input has rank {ctx.input_rank(0)}, expected <= 4")
    ctx.check_input_types((t, T.TENSOR_INT32))
    ctx.check_output_types((t,))
    return _LEVEL[t]


def _target_shape(ctx) -> tuple:
    target = ctx.input(1)
    cm.check(ctx, target.ndim == 1, "the shape operand must be 1-D")
    n_in = int(ctx.input(0).size)
    dims = [int(d) for d in target]
    cm.check(ctx, dims.count(-1) <= 1, "more than one dimension is -1")
    known = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
    if -1 in dims:
        cm.check(ctx, known != 0, "cannot infer the -1 dimension with a zero-sized target")
        k = dims.index(-1)
        dims[k] = n_in // known
        known *= dims[k]
    cm.check(ctx, known == n_in and all(d >= 0 for d in dims),
             f"cannot reshape {n_in} elements into {tuple(int(d) for d in target)}")
    return tuple(dims)


def prepare(ctx):
    ctx.set_output_shape(0, _target_shape(ctx))


def execute(ctx):
    ctx.set_output(0, np.array(ctx.input(0)).reshape(_target_shape(ctx)))


SPEC = OperationSpec(OperationCode.RESHAPE, validate, prepare, execute,
                     plan=lambda ctx: reshape_plan(SPEC, ctx))
