"""REDUCE_PROD (79), REDUCE_SUM (80), REDUCE_MAX (77), REDUCE_MIN (78), REDUCE_ALL (75),
REDUCE_ANY (76).

Inputs: 0 input (rank <= 4), 1 axes (TENSOR_INT32 1-D, each in [-rank, rank), duplicates
allowed), 2 keep_dims (BOOL). Output 0: the reduced shape ([1] when everything goes), same
quantization as the input (quantized values compare raw; ``reduce::prepare`` copies the input's
scale and zero point, so a model output must declare the same ones).

Types (T13 Reduce.cpp): REDUCE_SUM / REDUCE_PROD float32 / float16 FL3 (computed in the input
type: float16 rounds every partial result); REDUCE_MAX / REDUCE_MIN float32, float16,
quant8-asymm FL3, quant8-signed FL4; REDUCE_ALL / REDUCE_ANY TENSOR_BOOL8 FL3.
"""
from __future__ import annotations

from nnsim.kernels import reduce_ext
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType
C = OperationCode
_KERNELS = {C.REDUCE_SUM: reduce_ext.reduce_sum, C.REDUCE_PROD: reduce_ext.reduce_prod,
            C.REDUCE_MAX: reduce_ext.reduce_max, C.REDUCE_MIN: reduce_ext.reduce_min,
            C.REDUCE_ALL: reduce_ext.reduce_all, C.REDUCE_ANY: reduce_ext.reduce_any}
_FLOATS = (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16)
_TYPES = {C.REDUCE_SUM: _FLOATS, C.REDUCE_PROD: _FLOATS,
          C.REDUCE_MAX: _FLOATS + cm.QUANT8_TYPES, C.REDUCE_MIN: _FLOATS + cm.QUANT8_TYPES,
          C.REDUCE_ALL: (T.TENSOR_BOOL8,), C.REDUCE_ANY: (T.TENSOR_BOOL8,)}


def validate(ctx):
    ctx.check_counts(3, 1)
    t = ctx.check_input_type_in(0, _TYPES[ctx.code])
    ctx.check_input_types((t, T.TENSOR_INT32, T.BOOL))
    ctx.check_output_types((t,))
    ctx.check_rank(0, range(0, 5))
    return FL4 if t == T.TENSOR_QUANT8_ASYMM_SIGNED else FL3


def _axes(ctx) -> list:
    x, axes = ctx.input(0), ctx.input(1)
    cm.check(ctx, x.ndim <= 4, f"input has rank {x.ndim}, expected <= 4")
    cm.check(ctx, axes.ndim == 1, "axes must be a 1-D tensor")
    values = [int(a) for a in axes]
    for a in values:
        cm.check(ctx, -x.ndim <= a < x.ndim, f"axis {a} out of range for rank {x.ndim}")
    return values


def prepare(ctx):
    axes = {a % ctx.input(0).ndim for a in _axes(ctx)}
    keep = bool(ctx.scalar(2))
    shape = ctx.input(0).shape
    out = tuple(1 if d in axes else s for d, s in enumerate(shape) if keep or d not in axes)
    ctx.set_output_shape(0, out or (1,))
    src = ctx.input_operand(0)
    cm.check_model_output_quant(ctx, 0, src.scale, src.zero_point)


def execute(ctx):
    y = _KERNELS[ctx.code](ctx.input(0), _axes(ctx), bool(ctx.scalar(2)))
    ctx.set_output(0, y.reshape(ctx.output_shapes[0]))


REDUCE_SUM = OperationSpec(C.REDUCE_SUM, validate, prepare, execute)
REDUCE_PROD = OperationSpec(C.REDUCE_PROD, validate, prepare, execute)
REDUCE_MAX = OperationSpec(C.REDUCE_MAX, validate, prepare, execute)
REDUCE_MIN = OperationSpec(C.REDUCE_MIN, validate, prepare, execute)
REDUCE_ALL = OperationSpec(C.REDUCE_ALL, validate, prepare, execute)
REDUCE_ANY = OperationSpec(C.REDUCE_ANY, validate, prepare, execute)
