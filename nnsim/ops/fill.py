"""FILL (OperationCode 100).

Inputs: 0 dims (TENSOR_INT32 1-D: the output shape), 1 value (FLOAT16, FLOAT32 or INT32 scalar,
matching the output). Output 0: a tensor of shape ``dims`` with every element ``value``.

Types (T13 common/types/operations/src/Fill.cpp): output TENSOR_FLOAT16 / TENSOR_FLOAT32 /
TENSOR_INT32 with the value scalar of the same element type, all FL4. The output type is
checked first, because it decides the value's type.
"""
from __future__ import annotations

from nnsim.kernels import movement
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL4, OperandType, OperationCode

T = OperandType
_VALUE_TYPE = {T.TENSOR_FLOAT16: T.FLOAT16, T.TENSOR_FLOAT32: T.FLOAT32,
               T.TENSOR_INT32: T.INT32}


def validate(ctx):
    ctx.check_counts(2, 1)
    t = ctx.output_type(0)
    name = T(t).name if t in T._value2member_map_ else str(t)
    ctx.require(t in _VALUE_TYPE, f"output 0 (operand {ctx.outputs[0]}) has unsupported type "
                f"{name}; expected TENSOR_FLOAT16, TENSOR_FLOAT32 or TENSOR_INT32")
    ctx.check_input_types((T.TENSOR_INT32, _VALUE_TYPE[t]))
    return FL4


def _shape(ctx) -> tuple:
    dims = ctx.input(0)
    cm.check(ctx, dims.ndim == 1, f"dims must be a 1-D tensor, got rank {dims.ndim}")
    shape = tuple(int(d) for d in dims)
    cm.check(ctx, min(shape, default=0) >= 0, f"dims {shape} must be >= 0")
    return shape


def prepare(ctx):
    ctx.set_output_shape(0, _shape(ctx))


def execute(ctx):
    dtype = ctx.output_operand(0).dtype()
    ctx.set_output(0, movement.fill(ctx.output_shapes[0], ctx.input(1), dtype))


SPEC = OperationSpec(OperationCode.FILL, validate, prepare, execute)
