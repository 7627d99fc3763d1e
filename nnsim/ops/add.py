"""ADD / SUB / MUL / DIV: elementwise with numpy broadcasting and a fused activation.

Inputs: 0 input1, 1 input2 (same type), 2 fuse code (INT32). Output 0.
Feature levels (T13 common/types/operations/src/Broadcast.cpp): ADD/MUL float32 & quant8 FL1;
SUB/DIV float32 FL2; quant8 SUB FL3; float16 FL3; quant8-signed and TENSOR_INT32 FL4.
DIV never accepts quant8; quant8 (and quant8-signed) MUL is rejected unless
output scale > input1 scale * input2 scale; ranks <= 4 are checked when both are known.
TENSOR_INT32 needs fuse NONE, checked at execution as the CPU kernel does (executeInt32).
"""
from __future__ import annotations

from functools import partial

import numpy as np

from nnsim.kernels import elementwise, int32_arith
from nnsim.kernels._common import aligned_empty, direct
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec, context_runner
from nnsim.types import FL1, FL2, FL3, FL4, OperandType, OperationCode

T = OperandType
C = OperationCode
_KERNELS = {C.ADD: elementwise.add, C.SUB: elementwise.sub, C.MUL: elementwise.mul,
            C.DIV: getattr(elementwise, "div", None)}
_INT32_OPS = {C.ADD: int32_arith.ADD, C.SUB: int32_arith.SUB, C.MUL: int32_arith.MUL}


def validate(ctx):
    ctx.check_counts(3, 1)
    allowed = [T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_INT32]
    if ctx.code != C.DIV:
        allowed += [T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED]
    t = ctx.check_input_type_in(0, allowed)
    ctx.check_input_types((t, t, T.INT32))
    ctx.check_output_types((t,))
    if ctx.input_rank(0) and ctx.input_rank(1):
        ctx.check_rank(0, range(1, 5))
        ctx.check_rank(1, range(1, 5))
    if ctx.code == C.MUL and cm.is_quant8(t):
        ctx.require(ctx.output(0).scale > ctx.input(0).scale * ctx.input(1).scale,
                    "quantized MUL needs output scale > input1 scale * input2 scale")
    base = FL1 if ctx.code in (C.ADD, C.MUL) else FL2
    if t == T.TENSOR_FLOAT32:
        return base
    if t == T.TENSOR_QUANT8_ASYMM:
        return base if ctx.code != C.SUB else FL3
    if t == T.TENSOR_FLOAT16:
        return FL3
    return FL4


def prepare(ctx):
    if ctx.input_operand(0).type == T.TENSOR_INT32:
        cm.check(ctx, int(ctx.scalar(2)) == 0, "TENSOR_INT32 operands only support FUSED_NONE")
    cm.set_broadcast_output_shape(ctx)


def _kernel_kwargs(ctx) -> dict:
    """The fused activation and, for quant8, the operands' scales and zero points."""
    kwargs = {"fuse": int(ctx.scalar(2))}
    if cm.is_quant8(ctx.input_operand(0).type):
        i1, i2, o = ctx.input_operand(0), ctx.input_operand(1), ctx.output_operand(0)
        kwargs.update(in1_scale=i1.scale, in1_zp=i1.zero_point, in2_scale=i2.scale,
                      in2_zp=i2.zero_point, out_scale=o.scale, out_zp=o.zero_point,
                      out_dtype=cm.out_dtype(o.type))
    return kwargs


def execute(ctx):
    a, b = ctx.input(0), ctx.input(1)
    t = ctx.input_operand(0).type
    if t == T.TENSOR_INT32:  # executeInt32 (fuse NONE was checked in prepare)
        ctx.set_output(0, int32_arith.int32_binary(_INT32_OPS[ctx.code], a, b))
        return
    ctx.set_output(0, _KERNELS[ctx.code](a, b, **_kernel_kwargs(ctx)))


def plan(ctx):
    """Multipliers and the output buffer computed once per input shapes (float and quant8).
    A constant input that broadcasts against the other is expanded to the output's shape
    once (same values, element for element), so the kernel runs on equal shapes, bound to
    the buffers (e.g. the ADD of a zero the delegate puts after a requantizing MEAN)."""
    a, b = ctx.input(0), ctx.input(1)
    t = ctx.input_operand(0).type
    if t == T.TENSOR_INT32 or a.size == 0 or b.size == 0:
        return context_runner(_SPECS[ctx.code], ctx)
    fixed = [None, None]   # the expanded constant input, by position
    shape = np.broadcast_shapes(a.shape, b.shape)
    for pos, (x, other) in enumerate(((a, b), (b, a))):
        if x.shape != shape and other.shape == shape and ctx.input_operand(pos).is_constant:
            fixed[pos] = np.ascontiguousarray(np.broadcast_to(x, shape))
    a = a if fixed[0] is None else fixed[0]
    b = b if fixed[1] is None else fixed[1]
    kernel_plan = elementwise.prepare_binary(_BINARY_OP[ctx.code], a.shape, b.shape, a.dtype,
                                             b.dtype, **_kernel_kwargs(ctx))
    buffer = aligned_empty(kernel_plan.shape, kernel_plan.out_dtype)
    buffers, result = [buffer], [buffer]
    bound = [None, None, None, None]   # (a, b, kernel call bound to them and the buffer,
                                       #  the call as bound)

    def run(values):
        a = values[0] if fixed[0] is None else fixed[0]
        b = values[1] if fixed[1] is None else fixed[1]
        if a is bound[0] and b is bound[1]:
            bound[2]()
            return result
        call = kernel_plan.bind(a, b, buffers[0])
        if call is None:
            return [kernel_plan.run(a, b, buffers[0])]
        call()
        bound[:] = a, b, direct(call), call   # compiled by the call
        return result

    def bound_call(values):
        a = values[0] if fixed[0] is None else fixed[0]
        b = values[1] if fixed[1] is None else fixed[1]
        return bound[3] if a is bound[0] and b is bound[1] else None
    run.adopt = partial(cm.adopt_buffer, buffers, result, bound)
    run.bound_call = bound_call
    return run


ADD = OperationSpec(C.ADD, validate, prepare, execute,
                    allow_zero_sized_input=True, plan=plan)
SUB = OperationSpec(C.SUB, validate, prepare, execute,
                    allow_zero_sized_input=True, plan=plan)
MUL = OperationSpec(C.MUL, validate, prepare, execute,
                    allow_zero_sized_input=True, plan=plan)
_SPECS = {C.ADD: ADD, C.SUB: SUB, C.MUL: MUL}
_BINARY_OP = {C.ADD: 0, C.SUB: 1, C.MUL: 2}
