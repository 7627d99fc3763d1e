"""DIV (OperationCode 30): elementwise ``input1 / input2`` with broadcasting.

Inputs: 0 input1, 1 input2 (same type, rank <= 4), 2 fuse code (INT32). Output 0: the
broadcast shape. TENSOR_INT32 is floor division (0 for a zero divisor) and needs fuse NONE.
Validation and shapes are ADD/SUB/MUL's (``nnsim.ops.add``, T13 Broadcast.cpp): float32 FL2,
float16 FL3, TENSOR_INT32 FL4; quantized types are rejected.
"""
from __future__ import annotations

from nnsim.kernels.div import div
from nnsim.ops import add
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import OperationCode


def prepare(ctx):
    for i in (0, 1):
        cm.check(ctx, ctx.input(i).ndim <= 4, f"input {i} has rank {ctx.input(i).ndim} > 4")
    add.prepare(ctx)


def execute(ctx):
    ctx.set_output(0, div(ctx.input(0), ctx.input(1), fuse=int(ctx.scalar(2))))


SPEC = OperationSpec(OperationCode.DIV, add.validate, prepare, execute,
                     allow_zero_sized_input=True)
