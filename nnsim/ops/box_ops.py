"""AXIS_ALIGNED_BBOX_TRANSFORM (61) and BOX_WITH_NMS_LIMIT (63).

AXIS_ALIGNED_BBOX_TRANSFORM: 0 rois [R, 4] (x1, y1, x2, y2), 1 deltas [R, 4K] (dx, dy, dw,
dh), 2 batch index per roi (TENSOR_INT32 [R]), 3 image info [B, 2] (height, width); output
[R, 4K] boxes clipped to the image. Types (T13 GenerateProposals.cpp validation, FL3 for all):
float32 / float16 throughout, or quant16-asymm rois / image info / output (scale 0.125, zero
point 0) with quant8 (asymm or signed) deltas.

BOX_WITH_NMS_LIMIT: 0 scores [R, C], 1 rois [R, 4C], 2 batch index per roi, 3 score
threshold, 4 max detections (< 0: all), 5 NMS kernel (0 hard, 1 linear, 2 gaussian), 6 IoU
threshold, 7 sigma, 8 NMS score threshold. Outputs 0 scores [K], 1 rois [K, 4], 2 classes
[K], 3 batch index [K]; K is known only after execution. Types: float32 / float16 (FL3),
quant8-asymm (FL3) or quant8-signed (FL4) scores with quant16-asymm rois (scale 0.125).
Both operations allow zero-sized inputs (zero rois give zero outputs).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels import detection_ops as K
from nnsim.ops import _boxes as bx
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType
FLOATS = (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16)


# -- AXIS_ALIGNED_BBOX_TRANSFORM ---------------------------------------------------------------

def validate_bbox(ctx):
    ctx.check_counts(4, 1)
    t, delta = ctx.input_type(0), ctx.input_type(1)
    if t in FLOATS:
        ctx.check_input_types((t, t, T.TENSOR_INT32, t))
    elif t == T.TENSOR_QUANT16_ASYMM and delta in cm.QUANT8_TYPES:
        ctx.check_input_types((t, delta, T.TENSOR_INT32, t))
    else:
        ctx.fail(f"unsupported types of inputs 0 and 1: {t}, {delta}")
    ctx.check_output_types((t,))
    return FL3


def _bbox_shapes(ctx):
    rois, deltas, batches, info = (ctx.input_shape(i) for i in range(4))
    cm.check(ctx, (len(rois), len(deltas), len(batches), len(info)) == (2, 2, 1, 2),
             "rois, deltas and image info must have rank 2, batches rank 1")
    num_rois, classes = rois[0], deltas[1] // 4
    cm.check(ctx, classes > 0 and info[0] > 0, "need at least one class and one batch")
    cm.check(ctx, rois[1] == 4 and deltas == (num_rois, 4 * classes) and batches == (num_rois,)
             and info[1] == 2, f"inconsistent shapes {rois}, {deltas}, {batches}, {info}")
    return num_rois, classes


def prepare_bbox(ctx):
    num_rois, classes = _bbox_shapes(ctx)
    if ctx.input_operand(0).type == T.TENSOR_QUANT16_ASYMM:
        for i in (0, 3):
            src = ctx.input_operand(i)
            cm.check(ctx, np.float32(src.scale) == np.float32(0.125) and src.zero_point == 0,
                     f"input {i} must have scale 0.125 and zero point 0")
        bx.check_output_params(ctx, 0, 0.125, 0)
    ctx.set_output_shape(0, (num_rois, 4 * classes))


def execute_bbox(ctx):
    if 0 in ctx.output_shapes[0]:
        ctx.set_output(0, np.zeros(ctx.output_shapes[0], ctx.output_operand(0).dtype()))
        return
    boxes = K.bbox_transform(bx.to_float32(ctx, 0), bx.to_float32(ctx, 1), ctx.input(2),
                             bx.to_float32(ctx, 3))
    ctx.set_output(0, bx.from_float32(ctx, 0, boxes, 0.125, 0))


# -- BOX_WITH_NMS_LIMIT ----------------------------------------------------------------------------

def validate_nms(ctx):
    ctx.check_counts(9, 4)
    t = ctx.input_type(0)
    if t in FLOATS:
        scalar = T.FLOAT32 if t == T.TENSOR_FLOAT32 else T.FLOAT16
        rois = t
    elif t in cm.QUANT8_TYPES:
        scalar, rois = T.FLOAT32, T.TENSOR_QUANT16_ASYMM
    else:
        ctx.fail(f"unsupported score type {t}")
    ctx.check_input_types((t, rois, T.TENSOR_INT32, scalar, T.INT32, T.INT32, scalar, scalar,
                           scalar))
    ctx.check_output_types((t, rois, T.TENSOR_INT32, T.TENSOR_INT32))
    return FL4 if t == T.TENSOR_QUANT8_ASYMM_SIGNED else FL3


def prepare_nms(ctx):
    scores, rois, batches = (ctx.input_shape(i) for i in range(3))
    cm.check(ctx, (len(scores), len(rois), len(batches)) == (2, 2, 1),
             "scores and rois must have rank 2, batches rank 1")
    num_rois, classes = scores
    cm.check(ctx, rois == (num_rois, 4 * classes) and batches == (num_rois,) and classes > 1,
             f"inconsistent shapes {scores}, {rois}, {batches} (need more than one class)")
    score_op, roi_op = ctx.input_operand(0), ctx.input_operand(1)
    quant = score_op.type in cm.QUANT8_TYPES
    if quant:
        cm.check(ctx, np.float32(roi_op.scale) == np.float32(0.125) and roi_op.zero_point == 0,
                 "rois must have scale 0.125 and zero point 0")
    bx.check_output_params(ctx, 0, score_op.scale, score_op.zero_point)
    bx.check_output_params(ctx, 1, 0.125 if quant else 0.0, 0)
    for i, shape in enumerate(((0,), (0, 4), (0,), (0,))):
        bx.set_dynamic_shape(ctx, i, shape)


def execute_nms(ctx):
    if ctx.input_shape(0)[0] == 0:
        _zeros(ctx)
        return
    selected, scores, batches = K.box_with_nms_limit(
        bx.to_float32(ctx, 0), bx.to_float32(ctx, 1), ctx.input(2), ctx.scalar(3),
        int(ctx.scalar(4)), int(ctx.scalar(5)), ctx.scalar(6), ctx.scalar(7), ctx.scalar(8))
    if len(selected) == 0:      # AOSP leaves the outputs as prepared
        _zeros(ctx)
        return
    k = len(selected)
    for i, shape in enumerate(((k,), (k, 4), (k,), (k,))):
        ctx.set_output_shape(i, shape)
    score_op = ctx.input_operand(0)
    ctx.set_output(0, bx.from_float32(ctx, 0, scores, score_op.scale, score_op.zero_point))
    ctx.set_output(1, ctx.input(1).reshape(-1, 4)[selected])     # the input boxes, as stored
    ctx.set_output(2, selected % ctx.input_shape(0)[1])
    ctx.set_output(3, batches)


def _zeros(ctx):
    for i in range(4):
        ctx.set_output(i, np.zeros(ctx.output_shapes[i], ctx.output_operand(i).dtype()))


AXIS_ALIGNED_BBOX_TRANSFORM = OperationSpec(OperationCode.AXIS_ALIGNED_BBOX_TRANSFORM,
                                            validate_bbox, prepare_bbox, execute_bbox,
                                            allow_zero_sized_input=True)
BOX_WITH_NMS_LIMIT = OperationSpec(OperationCode.BOX_WITH_NMS_LIMIT, validate_nms, prepare_nms,
                                   execute_nms, allow_zero_sized_input=True)
