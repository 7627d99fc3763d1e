"""DETECTION_POSTPROCESSING (67): SSD box decoding and NMS.

Inputs: 0 class scores [N, A, C] (class 0 is the background), 1 box encodings [N, A, L]
(L >= 4: ycenter, xcenter, h, w offsets first), 2 anchors [A, 4] (ycenter, xcenter, h, w),
3-6 scale y, x, h, w (> 0), 7 use regular NMS (BOOL), 8 max detections (> 0), 9 max classes
per detection, 10 max detections per class, 11 score threshold (>= 0), 12 IoU threshold
(>= 0), 13 background in label (BOOL: class ids keep the background's slot). Outputs:
0 scores [N, D], 1 boxes [N, D, 4] (y1, x1, y2, x2), 2 classes [N, D] (INT32), 3 number of
detections [N] (INT32); D = max detections for regular NMS, max detections * max classes per
detection otherwise. Rows past the detections are zero.

Types (T13 GenerateProposals.cpp validation): float32 or float16 throughout (scalars of the
tensor's float type), FL3. Computed in float32 (``nnsim.kernels.detection_ops``).
"""
from __future__ import annotations

from nnsim.kernels.detection_ops import detection_postprocess
from nnsim.ops import _boxes as bx
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, OperandType, OperationCode

T = OperandType


def validate(ctx):
    ctx.check_counts(14, 4)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16))
    s = T.FLOAT32 if t == T.TENSOR_FLOAT32 else T.FLOAT16
    ctx.check_input_types((t, t, t, s, s, s, s, T.BOOL, T.INT32, T.INT32, T.INT32, s, s, T.BOOL))
    ctx.check_output_types((t, t, T.TENSOR_INT32, T.TENSOR_INT32))
    return FL3


def prepare(ctx):
    bx.check_no_zero_sized_input(ctx)
    scores, deltas, anchors = (ctx.input_shape(i) for i in range(3))
    cm.check(ctx, (len(scores), len(deltas), len(anchors)) == (3, 3, 2),
             "scores and box encodings must have rank 3, anchors rank 2")
    n, a, classes = scores
    cm.check(ctx, deltas[:2] == (n, a) and anchors == (a, 4),
             f"inconsistent shapes {scores}, {deltas}, {anchors}")
    cm.check(ctx, all(ctx.scalar(i) > 0 for i in (3, 4, 5, 6)), "scales must be positive")
    cm.check(ctx, ctx.scalar(11) >= 0 and ctx.scalar(12) >= 0,
             "IoU and score thresholds must be >= 0")
    cm.check(ctx, classes > 1 and deltas[2] >= 4, "need 2+ classes and 4+ box encoding values")
    max_det, max_classes = int(ctx.scalar(8)), int(ctx.scalar(9))
    cm.check(ctx, max_det > 0, "max detections must be positive")
    if bool(ctx.scalar(7)):
        cm.check(ctx, int(ctx.scalar(10)) > 0, "max detections per class must be positive")
        d = max_det
    else:
        cm.check(ctx, max_classes > 0, "max classes per detection must be positive")
        d = max_det * max_classes
    for i, shape in enumerate(((n, d), (n, d, 4), (n, d), (n,))):
        ctx.set_output_shape(i, shape)


def execute(ctx):
    outs = detection_postprocess(
        bx.to_float32(ctx, 0), bx.to_float32(ctx, 1), bx.to_float32(ctx, 2),
        *(ctx.scalar(i) for i in (3, 4, 5, 6)), bool(ctx.scalar(7)),
        *(int(ctx.scalar(i)) for i in (8, 9, 10)), ctx.scalar(12), ctx.scalar(11),
        bool(ctx.scalar(13)))
    for i, value in enumerate(outs):
        ctx.set_output(i, value)


SPEC = OperationSpec(OperationCode.DETECTION_POSTPROCESSING, validate, prepare, execute)
