"""FULLY_CONNECTED (OperationCode 9).

Inputs: 0 input (rank 2..4, read as [batch, input_size] with input_size = weights dim 1),
1 weights [num_units, input_size], 2 bias [num_units] (TENSOR_INT32 for quantized inputs,
scale input_scale * weights_scale), 3 fuse code (INT32). Output 0 [batch, num_units].

Types: float32 FL1; quant8-asymm FL1, or FL3 when output_scale <= input_scale * weights_scale;
float16 FL3; quant8-signed FL4. Shapes are checked at validation when every rank is known
(T13 common/types/operations/src/FullyConnected.cpp).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.conv import prepare_conv_2d
from nnsim.kernels.fully_connected import fully_connected as fc_kernel
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec, context_runner, type_feature_level
from nnsim.types import FL3, OperandType, OperationCode

T = OperandType


def _shape_problem(in_dims, w_dims, b_dims) -> str | None:
    """FullyConnected.cpp validateShapes (without the output): a message or None."""
    if not 2 <= len(in_dims) <= 4:
        return f"input has rank {len(in_dims)}, expected 2 to 4"
    if len(w_dims) != 2 or len(b_dims) != 1:
        return "weights must have rank 2 and bias rank 1"
    units, in_size = w_dims
    if in_size and int(np.prod(in_dims)) % in_size:
        return f"input element count is not a multiple of input_size {in_size}"
    if units and b_dims[0] and units != b_dims[0]:
        return f"bias size {b_dims[0]} does not match num_units {units}"
    return None


def validate(ctx):
    ctx.check_counts(4, 1)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM,
                                    T.TENSOR_QUANT8_ASYMM_SIGNED))
    bias_t = T.TENSOR_INT32 if cm.is_quant8(t) else t
    ctx.check_input_types((t, t, bias_t, T.INT32))
    ctx.check_output_types((t,))
    level = type_feature_level(t)
    if t == T.TENSOR_QUANT8_ASYMM and not (
            ctx.output(0).scale > ctx.input(0).scale * ctx.input(1).scale):
        level = max(level, FL3)
    dims = [ctx.input_shape(i) for i in range(3)]
    if all(len(d) for d in dims):
        problem = _shape_problem(*dims)
        ctx.require(problem is None, problem or "")
    return level


def _geometry(ctx):
    x, w, b = ctx.input(0), ctx.input(1), ctx.input(2)
    problem = _shape_problem(x.shape, w.shape, b.shape)
    cm.check(ctx, problem is None, problem or "")
    units, in_size = w.shape
    cm.check(ctx, units > 0 and in_size > 0, "num_units and input_size must be positive")
    return x.size // in_size, units, in_size


def prepare(ctx):
    batch, units, _ = _geometry(ctx)
    ctx.set_output_shape(0, (batch, units))


def execute(ctx):
    batch, _, in_size = _geometry(ctx)
    x = ctx.input(0).reshape(batch, in_size)
    kwargs = {"fuse": int(ctx.scalar(3))}
    if cm.is_quant8(ctx.input_operand(0).type):
        w_scales, w_zp = cm.filter_quant(ctx.input_operand(1))
        kwargs.update(cm.quant_kwargs(ctx), w_scales=w_scales, w_zp=w_zp)
    ctx.set_output(0, fc_kernel(x, ctx.input(1), ctx.input(2), **kwargs))


def plan(ctx):
    """Constant weights and bias: a 1x1 convolution plan over [batch, 1, 1, input_size]
    (weights packed, multipliers computed once per input shape), the arithmetic of
    :func:`execute`'s kernel: the same sums in the same order, AOSP's float32 scale product
    (``cm.conv_quant_kwargs``, as GetQuantizedConvolutionMultipler), double rounding."""
    x = ctx.input(0)
    if x.size == 0 or not ctx.input_operand(1).is_constant or \
            not ctx.input_operand(2).is_constant:
        return context_runner(SPEC, ctx)
    batch, units, in_size = _geometry(ctx)
    kwargs = {"stride_h": 1, "stride_w": 1, "pad_top": 0, "pad_bottom": 0, "pad_left": 0,
              "pad_right": 0, "fuse": int(ctx.scalar(3))}
    if cm.is_quant8(ctx.input_operand(0).type):
        kwargs.update(cm.conv_quant_kwargs(ctx))
    x_shape = (batch, 1, 1, in_size)
    kplan, out_shape = prepare_conv_2d(x_shape, x.dtype, ctx.input(1).reshape(units, 1, 1,
                                                                               in_size),
                                       ctx.input(2), **kwargs)
    return cm.kernel_plan_runner(kplan, out_shape, x.dtype, False, x_shape=x_shape,
                                 result_shape=(batch, units))


SPEC = OperationSpec(OperationCode.FULLY_CONNECTED, validate, prepare, execute,
                     allow_zero_sized_input=True, plan=plan)
