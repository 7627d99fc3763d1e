"""ROI_ALIGN (81) and ROI_POOLING (82).

Inputs: 0 feature map [N, H, W, C] (NCHW when the layout flag is set), 1 rois [R, 4] (x1, y1,
x2, y2 in image coordinates), 2 batch index per roi (TENSOR_INT32 [R]), 3 output height,
4 output width, 5 height stride, 6 width stride (image / feature map ratio, > 0);
ROI_ALIGN then has 7 height and 8 width sampling ratio (0 = adaptive); last the layout
(BOOL). Output [R, out_h, out_w, C] in the input's type.

ROI_ALIGN averages bilinear samples per bin, ROI_POOLING takes the max over the bin's cells
(``nnsim.kernels.roi``). Types (T13 RoiAlign.cpp / RoiPooling.cpp): float32 / float16 (the
stride scalars FLOAT16), FL3; quant8-asymm (FL3) or quant8-signed (FL4) input with
quant16-asymm rois of scale 0.125, zero point 0. ROI_ALIGN allows zero rois (ROI_POOLING
does not allow zero-sized inputs); ROI_POOLING's output keeps the input's quantization.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.roi import roi_align, roi_pooling
from nnsim.ops import _boxes as bx
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType
C = OperationCode


def validate(ctx):
    align = ctx.code == C.ROI_ALIGN
    ctx.check_counts(10 if align else 8, 1)
    t = ctx.input_type(0)
    if t in (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16):
        rois, s = t, (T.FLOAT32 if t == T.TENSOR_FLOAT32 else T.FLOAT16)
    elif t in cm.QUANT8_TYPES:
        rois, s = T.TENSOR_QUANT16_ASYMM, T.FLOAT32
    else:
        ctx.fail(f"unsupported input type {t}")
    ratios = (T.INT32, T.INT32) if align else ()
    ctx.check_input_types((t, rois, T.TENSOR_INT32, T.INT32, T.INT32, s, s) + ratios + (T.BOOL,))
    ctx.check_output_types((t,))
    return FL4 if t == T.TENSOR_QUANT8_ASYMM_SIGNED else FL3


def _params(ctx):
    align = ctx.code == C.ROI_ALIGN
    nchw = bool(ctx.scalar(9 if align else 7))
    x, rois, batches = (ctx.input_shape(i) for i in range(3))
    cm.check(ctx, len(x) == 4 and len(rois) == 2, "input must have rank 4 and rois rank 2")
    n, h, w, c = cm.nhwc_dims(x, nchw)
    if align:
        cm.check(ctx, min(n, h, w, c) > 0, "only the number of rois may be zero")
    else:
        bx.check_no_zero_sized_input(ctx)
    cm.check(ctx, rois[1] == 4 and len(batches) >= 1 and batches[0] == rois[0],
             f"rois {rois} and batch indices {batches} do not match")
    out_h, out_w = int(ctx.scalar(3)), int(ctx.scalar(4))
    h_stride, w_stride = ctx.scalar(5), ctx.scalar(6)
    cm.check(ctx, out_h > 0 and out_w > 0 and h_stride > 0 and w_stride > 0,
             "output size and strides must be positive")
    ratios = (int(ctx.scalar(7)), int(ctx.scalar(8))) if align else ()
    cm.check(ctx, all(r >= 0 for r in ratios), "sampling ratios must be >= 0")
    roi_op = ctx.input_operand(1)
    if roi_op.type == T.TENSOR_QUANT16_ASYMM:
        cm.check(ctx, np.float32(roi_op.scale) == np.float32(0.125) and roi_op.zero_point == 0,
                 "rois must have scale 0.125 and zero point 0")
    return {"nchw": nchw, "size": (out_h, out_w), "strides": (h_stride, w_stride),
            "ratios": ratios, "shape": cm.layout_shape(rois[0], out_h, out_w, c, nchw)}


def prepare(ctx):
    p = _params(ctx)
    if ctx.code == C.ROI_POOLING:      # the output shape is a copy of the input's
        src = ctx.input_operand(0)
        bx.check_output_params(ctx, 0, src.scale, src.zero_point)
    ctx.set_output_shape(0, p["shape"])


def execute(ctx):
    p = _params(ctx)
    if ctx.input_shape(1)[0] == 0:
        ctx.set_output(0, np.zeros(p["shape"], ctx.output_operand(0).dtype()))
        return
    x = cm.to_nhwc(ctx.input(0), p["nchw"])
    src, out = ctx.input_operand(0), ctx.output_operand(0)
    quant = src.type in cm.QUANT8_TYPES
    if ctx.code == C.ROI_ALIGN:
        q = (src.scale, src.zero_point, out.scale, out.zero_point) if quant else None
        y = roi_align(x, ctx.input(1), ctx.input(2), *p["size"], *p["strides"], *p["ratios"],
                      quant=q)
    else:
        rois = bx.to_float32(ctx, 1) if quant else ctx.input(1)
        y = roi_pooling(x, rois, ctx.input(2), *p["size"], *p["strides"],
                        zero_point=src.zero_point)
    ctx.set_output(0, cm.from_nhwc(y, p["nchw"]))


ROI_ALIGN = OperationSpec(C.ROI_ALIGN, validate, prepare, execute, allow_zero_sized_input=True)
ROI_POOLING = OperationSpec(C.ROI_POOLING, validate, prepare, execute)
