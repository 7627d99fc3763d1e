"""HEATMAP_MAX_KEYPOINT (71).

Inputs: 0 heatmaps [R, S, S, K] (NCHW [R, K, S, S] when the layout flag is set; S >= 2),
1 boxes [R, 4] (x1, y1, x2, y2), 2 layout (BOOL). Outputs: 0 scores [R, K], 1 keypoints
[R, K, 2] (x, y). The maximum of each heatmap is refined by a quadratic fit over its 3x3
neighbourhood and mapped into its box (``nnsim.kernels.roi``).

Types (T13 HeatmapMaxKeypoint.cpp): float32 / float16 throughout (FL3); quant8-asymm (FL3) or
quant8-signed (FL4) heatmaps and scores with quant16-asymm boxes and keypoints (scale 0.125,
zero point 0). Computed in float32; quantized inputs are dequantized first and the scores
requantized with the score output's own parameters. Zero-sized inputs are refused.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.roi import heatmap_max_keypoint
from nnsim.ops import _boxes as bx
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType


def validate(ctx):
    ctx.check_counts(3, 2)
    t = ctx.input_type(0)
    if t in (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16):
        boxes = t
    elif t in cm.QUANT8_TYPES:
        boxes = T.TENSOR_QUANT16_ASYMM
    else:
        ctx.fail(f"unsupported heatmap type {t}")
    ctx.check_input_types((t, boxes, T.BOOL))
    ctx.check_output_types((t, boxes))
    return FL4 if t == T.TENSOR_QUANT8_ASYMM_SIGNED else FL3


def prepare(ctx):
    bx.check_no_zero_sized_input(ctx)
    nchw = bool(ctx.scalar(2))
    heatmap, boxes = ctx.input_shape(0), ctx.input_shape(1)
    cm.check(ctx, len(heatmap) == 4 and len(boxes) == 2, "heatmaps need rank 4, boxes rank 2")
    r, s, s2, k = cm.nhwc_dims(heatmap, nchw)
    cm.check(ctx, s == s2 and s >= 2 and boxes == (r, 4),
             f"heatmaps {heatmap} must be square (size >= 2) with one box each, got {boxes}")
    quant = ctx.input_operand(0).type in cm.QUANT8_TYPES
    if quant:
        box_op = ctx.input_operand(1)
        cm.check(ctx, np.float32(box_op.scale) == np.float32(0.125) and box_op.zero_point == 0,
                 "boxes must have scale 0.125 and zero point 0")
    bx.check_output_params(ctx, 1, 0.125 if quant else 0.0, 0)
    ctx.set_output_shape(0, (r, k))
    ctx.set_output_shape(1, (r, k, 2))


def execute(ctx):
    heatmap = bx.to_float32(ctx, 0)
    if bool(ctx.scalar(2)):
        heatmap = heatmap.transpose(0, 2, 3, 1)
    tol = 1e-3 if ctx.input_operand(0).type == T.TENSOR_FLOAT16 else 1e-5
    scores, points = heatmap_max_keypoint(heatmap, bx.to_float32(ctx, 1), tol, tol)
    ctx.set_output(0, bx.from_float32(ctx, 0, scores))
    ctx.set_output(1, bx.from_float32(ctx, 1, points, 0.125, 0))


SPEC = OperationSpec(OperationCode.HEATMAP_MAX_KEYPOINT, validate, prepare, execute)
