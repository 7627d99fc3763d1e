"""RESIZE_BILINEAR (23) and RESIZE_NEAREST_NEIGHBOR (94).

Inputs: 0 input [N,H,W,C], 1 output width, 2 output height (both INT32; or both FLOAT32 /
FLOAT16 scales, output = floor(in * scale)), [3 layout (BOOL), 4 align_corners (BOOL),
5 half_pixel_centers (BOOL), not both]. RESIZE_NEAREST_NEIGHBOR needs the layout argument.
Output 0 [N, out_h, out_w, C], same quantization as the input.

Feature levels (T13 ResizeImageOps.cpp): float32 with INT32 sizes and 3 inputs FL1; float16,
quant8-asymm, float scales or a layout argument FL3; quant8-signed or align_corners /
half_pixel_centers arguments FL4. Bilinear is TFLite's float template for every type
(``nnsim.kernels.resize``; int8 through ``nnsim.kernels.resize_image``); float16 computes in
float32.
"""
from __future__ import annotations

import math

import numpy as np

from nnsim.kernels import resize as bilinear_kernel
from nnsim.kernels import resize_image
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec, type_feature_level
from nnsim.types import FL1, FL3, FL4, OperandType, OperationCode

T = OperandType
C = OperationCode


def validate(ctx):
    low = 3 if ctx.code == C.RESIZE_BILINEAR else 4
    ctx.check_counts(range(low, 7), 1)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM,
                                    T.TENSOR_QUANT8_ASYMM_SIGNED))
    level = type_feature_level(t, quant8_fl=FL3)
    scalar = ctx.input_type(2)
    if scalar != T.INT32:
        want = T.FLOAT16 if t == T.TENSOR_FLOAT16 else T.FLOAT32
        ctx.require(scalar == want, f"output size scalars must be INT32 or {T(want).name}")
        level = max(level, FL3)
    ctx.check_input_types((t, scalar, scalar) + (T.BOOL,) * (ctx.num_inputs - 3))
    ctx.check_output_types((t,))
    extra = {3: FL1, 4: FL3}.get(ctx.num_inputs, FL4)
    return max(level, extra)


def _params(ctx):
    x = ctx.input(0)
    cm.check(ctx, x.ndim == 4, f"input has rank {x.ndim}, expected 4")
    nchw, align, half = (cm.optional_bool(ctx, i) for i in (3, 4, 5))
    cm.check(ctx, not (align and half), "align_corners and half_pixel_centers are both set")
    n, h, w, c = cm.nhwc_dims(x.shape, nchw)
    cm.check(ctx, h > 0 and w > 0 and c > 0, "only the batch dimension may be zero")
    if ctx.input_operand(2).type == T.INT32:
        oh, ow = int(ctx.scalar(2)), int(ctx.scalar(1))
    else:
        oh = math.floor(np.float32(h) * np.float32(ctx.scalar(2)))
        ow = math.floor(np.float32(w) * np.float32(ctx.scalar(1)))
    cm.check(ctx, oh > 0 and ow > 0, f"output size {oh}x{ow} must be positive")
    return dict(nchw=nchw, align=align, half=half, shape=(n, oh, ow, c))


def prepare(ctx):
    p = _params(ctx)
    ctx.set_output_shape(0, cm.layout_shape(*p["shape"], p["nchw"]))


def execute(ctx):
    p = _params(ctx)
    x = cm.to_nhwc(ctx.input(0), p["nchw"])
    _, oh, ow, _ = p["shape"]
    kw = dict(align_corners=p["align"], half_pixel_centers=p["half"])
    if ctx.code == C.RESIZE_NEAREST_NEIGHBOR:
        y = resize_image.resize_nearest_neighbor(x, oh, ow, **kw)
    elif x.dtype == np.int8:
        y = resize_image.resize_bilinear_template(x, oh, ow, **kw)
    else:
        y = bilinear_kernel.resize_bilinear(x.astype(np.float32) if x.dtype == np.float16 else x,
                                            oh, ow, **kw).astype(x.dtype, copy=False)
    ctx.set_output(0, cm.from_nhwc(y, p["nchw"]))


RESIZE_BILINEAR = OperationSpec(C.RESIZE_BILINEAR, validate, prepare, execute,
                                allow_zero_sized_input=True)
RESIZE_NEAREST_NEIGHBOR = OperationSpec(C.RESIZE_NEAREST_NEIGHBOR, validate, prepare, execute,
                                        allow_zero_sized_input=True)
