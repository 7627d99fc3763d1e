"""GENERATE_PROPOSALS (73).

Inputs: 0 scores [N, H, W, A], 1 bbox deltas [N, H, W, 4A], 2 anchors [A, 4] (x1, y1, x2,
y2), 3 image info [N, 2] (height, width), 4 height stride, 5 width stride, 6 pre-NMS top N
(<= 0: all), 7 post-NMS top N (< 0: all), 8 IoU threshold, 9 min size, 10 layout (BOOL, true
= NCHW for inputs 0 and 1). Outputs: 0 scores [K], 1 rois [K, 4], 2 batch index [K]; K is
known only after execution.

Per batch: anchors shifted over the H x W grid, transformed by the deltas and clipped
(AXIS_ALIGNED_BBOX_TRANSFORM), the pre-NMS top N by score kept, boxes with a side <= min size
or the centre outside the image dropped, then hard NMS (``nnsim.kernels.detection_ops``).

Types (T13 GenerateProposals.cpp validation): float32 / float16 (FL3); quant8-asymm (FL3) or
quant8-signed (FL4) scores and deltas with quant16-symm anchors and quant16-asymm image info
and output rois. Zero-sized inputs are refused (no allowZeroSizedInput).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.detection_ops import generate_proposals
from nnsim.ops import _boxes as bx
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType


def validate(ctx):
    ctx.check_counts(11, 3)
    t = ctx.input_type(0)
    if t in (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16):
        s = T.FLOAT32 if t == T.TENSOR_FLOAT32 else T.FLOAT16
        tensors, rois = (t, t, t, t), t
    elif t in cm.QUANT8_TYPES:
        s, rois = T.FLOAT32, T.TENSOR_QUANT16_ASYMM
        tensors = (t, t, T.TENSOR_QUANT16_SYMM, T.TENSOR_QUANT16_ASYMM)
    else:
        ctx.fail(f"unsupported score type {t}")
    ctx.check_input_types(tensors + (s, s, T.INT32, T.INT32, s, s, T.BOOL))
    ctx.check_output_types((t, rois, T.TENSOR_INT32))
    return FL4 if t == T.TENSOR_QUANT8_ASYMM_SIGNED else FL3


def _nhwc(ctx, i):
    x = bx.to_float32(ctx, i)
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1)) if bool(ctx.scalar(10)) else x


def prepare(ctx):
    bx.check_no_zero_sized_input(ctx)
    nchw = bool(ctx.scalar(10))
    scores, deltas, anchors, info = (ctx.input_shape(i) for i in range(4))
    cm.check(ctx, (len(scores), len(deltas), len(anchors), len(info)) == (4, 4, 2, 2),
             "scores and deltas must have rank 4, anchors and image info rank 2")
    n, h, w, a = cm.nhwc_dims(scores, nchw)
    cm.check(ctx, cm.nhwc_dims(deltas, nchw) == (n, h, w, 4 * a) and info == (n, 2)
             and anchors == (a, 4), f"inconsistent shapes {scores}, {deltas}, {anchors}, {info}")
    score_op = ctx.input_operand(0)
    rois_scale, rois_zp = 0.0, 0
    if score_op.type == T.TENSOR_QUANT8_ASYMM:   # AOSP checks (and sets) these for uint8 only
        cm.check(ctx, np.float32(ctx.input_operand(2).scale) == np.float32(0.125)
                 and np.float32(ctx.input_operand(3).scale) == np.float32(0.125)
                 and ctx.input_operand(3).zero_point == 0,
                 "anchors and image info must have scale 0.125 (image info zero point 0)")
        rois_scale = 0.125
    elif score_op.type == T.TENSOR_QUANT8_ASYMM_SIGNED:
        out = ctx.output_operand(1)
        rois_scale, rois_zp = out.scale, out.zero_point
    bx.check_output_params(ctx, 0, score_op.scale, score_op.zero_point)
    bx.check_output_params(ctx, 1, rois_scale, rois_zp)
    for i, shape in enumerate(((0,), (0, 4), (0,))):
        bx.set_dynamic_shape(ctx, i, shape)
    return rois_scale, rois_zp


def execute(ctx):
    rois_scale, rois_zp = prepare(ctx)
    h_stride, w_stride, iou, min_size = (ctx.scalar(i) for i in (4, 5, 8, 9))
    scores, rois, batches = generate_proposals(
        _nhwc(ctx, 0), _nhwc(ctx, 1), bx.to_float32(ctx, 2), bx.to_float32(ctx, 3),
        h_stride, w_stride, int(ctx.scalar(6)), int(ctx.scalar(7)), iou, min_size)
    k = len(scores)
    if k == 0:      # AOSP leaves the outputs as prepared
        for i in range(3):
            ctx.set_output(i, np.zeros(ctx.output_shapes[i], ctx.output_operand(i).dtype()))
        return
    for i, shape in enumerate(((k,), (k, 4), (k,))):
        ctx.set_output_shape(i, shape)
    score_op = ctx.input_operand(0)
    ctx.set_output(0, bx.from_float32(ctx, 0, scores, score_op.scale, score_op.zero_point))
    ctx.set_output(1, bx.from_float32(ctx, 1, rois, rois_scale, rois_zp))
    ctx.set_output(2, batches)


SPEC = OperationSpec(OperationCode.GENERATE_PROPOSALS, validate, prepare, execute)
