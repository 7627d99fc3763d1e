"""SQUEEZE (34) and EXPAND_DIMS (50): reshapes that remove or insert size-1 dimensions.

SQUEEZE inputs: 0 input (rank <= 4), 1 squeeze dims (TENSOR_INT32 1-D, in [-rank, rank), each
naming a size-1 dimension; may be omitted: then every size-1 dimension goes). Output: the input
without those dimensions ([1] when all go). Types: float32 / quant8-asymm FL2; float16 FL3;
quant8-signed FL4 (T13 common/types/operations/src/Squeeze.cpp).

EXPAND_DIMS inputs: 0 input, 1 axis (INT32 in [-(rank + 1), rank]). Output: the input with a
size-1 dimension inserted at ``axis``. Types: float32, float16, int32, quant8-asymm FL3;
quant8-signed FL4 (T13 validateOperation EXPAND_DIMS, expand_dims::prepare).
Both keep the input's quantization; the data is copied unchanged.
"""
from __future__ import annotations

from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec, reshape_plan, type_feature_level
from nnsim.types import FL2, FL3, FL4, OperandType, OperationCode

T = OperandType
C = OperationCode
_TYPES = (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED)


def validate_squeeze(ctx):
    ctx.check_counts(2, 1)
    t = ctx.check_input_type_in(0, _TYPES)
    ctx.check_input_types((t, T.TENSOR_INT32))
    ctx.check_output_types((t,))
    ctx.check_rank(0, range(0, 5))
    return max(FL2, type_feature_level(t))


def _squeezed_shape(ctx) -> tuple:
    shape = ctx.input(0).shape
    rank = len(shape)
    cm.check(ctx, rank <= 4, f"input has rank {rank}, expected <= 4")
    dims = ctx.input(1)
    if dims is None:
        drop = {d for d in range(rank) if shape[d] == 1}
    else:
        cm.check(ctx, dims.ndim == 1, "squeeze dims must be a 1-D tensor")
        drop = set()
        for v in (int(d) for d in dims):
            d = v + rank if v < 0 else v
            cm.check(ctx, 0 <= d < rank and shape[d] == 1,
                     f"squeeze dim {v} is out of range or not of size 1 for shape {shape}")
            drop.add(d)
    return tuple(s for d, s in enumerate(shape) if d not in drop) or (1,)


def prepare_squeeze(ctx):
    ctx.set_output_shape(0, _squeezed_shape(ctx))


def execute_reshape(ctx):
    ctx.set_output(0, ctx.input(0).reshape(ctx.output_shapes[0]))


def validate_expand_dims(ctx):
    ctx.check_counts(2, 1)
    t = ctx.check_input_type_in(0, _TYPES + (T.TENSOR_INT32,))
    ctx.check_input_types((t, T.INT32))
    ctx.check_output_types((t,))
    return FL4 if t == T.TENSOR_QUANT8_ASYMM_SIGNED else FL3


def prepare_expand_dims(ctx):
    shape = ctx.input(0).shape
    axis = int(ctx.scalar(1))
    rank = len(shape) + 1
    cm.check(ctx, -rank <= axis < rank, f"axis {axis} out of range for output rank {rank}")
    axis %= rank
    ctx.set_output_shape(0, shape[:axis] + (1,) + shape[axis:])


SQUEEZE = OperationSpec(C.SQUEEZE, validate_squeeze, prepare_squeeze, execute_reshape,
                        allow_omitted_operand=True,
                        plan=lambda ctx: reshape_plan(SQUEEZE, ctx))
EXPAND_DIMS = OperationSpec(C.EXPAND_DIMS, validate_expand_dims, prepare_expand_dims,
                            execute_reshape, plan=lambda ctx: reshape_plan(EXPAND_DIMS, ctx))
