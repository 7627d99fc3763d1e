"""Detection and ROI operations on nnapi-reference: AXIS_ALIGNED_BBOX_TRANSFORM,
BOX_WITH_NMS_LIMIT, GENERATE_PROPOSALS, DETECTION_POSTPROCESSING, ROI_ALIGN, ROI_POOLING and
HEATMAP_MAX_KEYPOINT. Hand-computed cases (float, quant8 asymm and signed, quant16 boxes),
data-dependent output shapes, feature levels and rejections (AOSP semantics)."""
import math

import numpy as np
import pytest

from nnsim.errors import OperationValidationError, OpFailedError
from nnsim.types import FL3, FL4
from nnsim.types import OperandType as T
from nnsim.types import OperationCode as C

from .ophelp import (
    boolean,
    build,
    f16,
    f32,
    feature_level,
    fl16,
    fl32,
    i32,
    i32t,
    q8,
    run,
    s8,
    tensor,
)


def q16(dims, value=None, scale=0.125, zp=0):
    return tensor(T.TENSOR_QUANT16_ASYMM, dims, scale, zp, value)


def q16s(dims, value=None, scale=0.125):
    return tensor(T.TENSOR_QUANT16_SYMM, dims, scale, 0, value)


# -- AXIS_ALIGNED_BBOX_TRANSFORM -------------------------------------------------------------------
# roi (0, 0, 10, 10): centre (5, 5), size 10. Class 0 deltas (0.1, 0.2, 0, 0) move the centre to
# (6, 7): (1, 2, 11, 12), clipped to the 8-wide, 100-high image: (1, 2, 8, 12). Class 1 doubles
# the width (dw = ln 2): (-5, 0, 15, 10) -> (0, 0, 8, 10).

def test_bbox_transform_float32():
    out, = run(C.AXIS_ALIGNED_BBOX_TRANSFORM,
               [f32([1, 4]), f32([1, 8]), i32t([1]), f32([1, 2])], [f32([1, 8])],
               [[0, 0, 10, 10], [0.1, 0.2, 0, 0, 0, 0, math.log(2), 0], [0], [100, 8]])
    np.testing.assert_allclose(out, [[1, 2, 8, 12, 0, 0, 8, 10]], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("delta", [q8([1, 4], 0.1, 128), s8([1, 4], 0.1, 0)])
def test_bbox_transform_quant(delta):
    zp = delta.zp
    out, = run(C.AXIS_ALIGNED_BBOX_TRANSFORM, [q16([1, 4]), delta, i32t([1]), q16([1, 2])],
               [q16([1, 4])], [[0, 0, 80, 80], [1 + zp, 2 + zp, zp, zp], [0], [800, 64]])
    assert out.dtype == np.uint16 and out.tolist() == [[8, 16, 64, 96]]   # (1, 2, 8, 12) / 0.125


def test_bbox_transform_rejections():
    with pytest.raises(OpFailedError):      # batch index 1 of a single image
        run(C.AXIS_ALIGNED_BBOX_TRANSFORM, [f32([1, 4]), f32([1, 4]), i32t([1]), f32([1, 2])],
            [f32([1, 4])], [[0, 0, 1, 1], [0, 0, 0, 0], [1], [10, 10]])
    with pytest.raises(OpFailedError):      # x2 < x1
        run(C.AXIS_ALIGNED_BBOX_TRANSFORM, [f32([1, 4]), f32([1, 4]), i32t([1]), f32([1, 2])],
            [f32([1, 4])], [[5, 0, 1, 1], [0, 0, 0, 0], [0], [10, 10]])
    with pytest.raises(OpFailedError):      # quant16 rois must have scale 0.125
        run(C.AXIS_ALIGNED_BBOX_TRANSFORM, [q16([1, 4], scale=0.25), q8([1, 4], 0.1, 128),
                                            i32t([1]), q16([1, 2])], [q16([1, 4])],
            [[0, 0, 8, 8], [128] * 4, [0], [80, 80]])
    with pytest.raises(OperationValidationError):   # float rois with quant8 deltas
        build(C.AXIS_ALIGNED_BBOX_TRANSFORM, [f32([1, 4]), q8([1, 4], 0.1, 128), i32t([1]),
                                              f32([1, 2])], [f32([1, 4])])


# -- BOX_WITH_NMS_LIMIT ----------------------------------------------------------------------------
# Three rois, class 1 boxes A (0,0,10,10) 0.9, B (1,1,11,11) 0.8, C (20,20,30,30) 0.7. IoU(A, B)
# = 81 / 119; B is the only box A suppresses (C is disjoint).
BOXES = [[0, 0, 1, 1, 0, 0, 10, 10], [0, 0, 1, 1, 1, 1, 11, 11], [0, 0, 1, 1, 20, 20, 30, 30]]
SCORES = [[0.1, 0.9], [0.1, 0.8], [0.1, 0.7]]
IOU_AB = 81 / 119


def _nms(kernel, scores=SCORES, boxes=BOXES, batches=(0, 0, 0), max_det=-1, nms_thr=0.1,
         iou=0.5, sigma=0.5, types=(f32, f32)):
    r = len(scores)
    ins = [types[0]([r, 2]), types[1]([r, 8]), i32t([r]), fl32(0.3), i32(max_det), i32(kernel),
           fl32(iou), fl32(sigma), fl32(nms_thr)]
    outs = [types[0]([0]), types[1]([0, 4]), i32t([0]), i32t([0])]
    return run(C.BOX_WITH_NMS_LIMIT, ins, outs, [scores, boxes, list(batches)])


def test_box_with_nms_hard():
    scores, rois, classes, batches = _nms(0)
    np.testing.assert_allclose(scores, [0.9, 0.7], rtol=1e-6)
    assert rois.tolist() == [[0, 0, 10, 10], [20, 20, 30, 30]]
    assert classes.tolist() == [1, 1] and batches.tolist() == [0, 0]
    assert _nms(0, max_det=1)[0].shape == (1,)


def test_box_with_nms_linear_and_gaussian():
    scores, rois, _, _ = _nms(1)          # B kept with 0.8 * (1 - IoU)
    np.testing.assert_allclose(scores, [0.9, 0.7, 0.8 * (1 - IOU_AB)], rtol=1e-5)
    assert rois[2].tolist() == [1, 1, 11, 11]
    scores, _, _, _ = _nms(2)             # 0.8 * exp(-IoU^2 / sigma)
    np.testing.assert_allclose(scores, [0.9, 0.7, 0.8 * math.exp(-IOU_AB ** 2 / 0.5)],
                               rtol=1e-5)
    assert _nms(1, nms_thr=0.3)[0].shape == (2,)   # below the NMS score threshold: dropped


def test_box_with_nms_batches_and_classes():
    """Two batches; within a batch the output is ordered by class, then by score."""
    scores = [[0, 0.9, 0.1], [0, 0.2, 0.95], [0, 0.8, 0.0]]
    boxes = [[0, 0, 1, 1, 0, 0, 10, 10, 0, 0, 10, 10],
             [0, 0, 1, 1, 50, 50, 60, 60, 50, 50, 60, 60],
             [0, 0, 1, 1, 0, 0, 10, 10, 0, 0, 10, 10]]
    ins = [f32([3, 3]), f32([3, 12]), i32t([3]), fl32(0.15), i32(-1), i32(0), fl32(0.5),
           fl32(0.5), fl32(0.1)]
    outs = [f32([0]), f32([0, 4]), i32t([0]), i32t([0])]
    sc, _, cls, bat = run(C.BOX_WITH_NMS_LIMIT, ins, outs, [scores, boxes, [0, 0, 1]])
    np.testing.assert_allclose(sc, [0.9, 0.2, 0.95, 0.8], rtol=1e-6)
    assert cls.tolist() == [1, 1, 2, 1] and bat.tolist() == [0, 0, 0, 1]


@pytest.mark.parametrize("make,zp", [(q8, 0), (s8, -128)])
def test_box_with_nms_quant(make, zp):
    scores = [[10 + zp, 90 + zp], [10 + zp, 80 + zp], [10 + zp, 70 + zp]]   # scale 0.01
    boxes = [[v * 8 for v in b] for b in BOXES]
    ins = [make([3, 2], 0.01, zp), q16([3, 8]), i32t([3]), fl32(0.3), i32(-1), i32(0),
           fl32(0.5), fl32(0.5), fl32(0.1)]
    outs = [make([0], 0.01, zp), q16([0, 4]), i32t([0]), i32t([0])]
    sc, rois, cls, _ = run(C.BOX_WITH_NMS_LIMIT, ins, outs, [scores, boxes, [0, 0, 0]])
    assert sc.tolist() == [90 + zp, 70 + zp]
    assert rois.dtype == np.uint16 and rois.tolist() == [[0, 0, 80, 80], [160, 160, 240, 240]]
    assert cls.tolist() == [1, 1]


def test_box_with_nms_zero_rois_and_rejections():
    outs = _nms(0, scores=np.zeros((0, 2)), boxes=np.zeros((0, 8)), batches=())
    assert [o.shape for o in outs] == [(0,), (0, 4), (0,), (0,)]
    with pytest.raises(OpFailedError):      # soft NMS kernel 3 does not exist
        _nms(3)
    with pytest.raises(OpFailedError):      # a declared output size that is not the result's
        run(C.BOX_WITH_NMS_LIMIT, [f32([3, 2]), f32([3, 8]), i32t([3]), fl32(0.3), i32(-1),
                                   i32(0), fl32(0.5), fl32(0.5), fl32(0.1)],
            [f32([3]), f32([3, 4]), i32t([3]), i32t([3])], [SCORES, BOXES, [0, 0, 0]])


# -- GENERATE_PROPOSALS ----------------------------------------------------------------------------
# One anchor (0, 0, 4, 4) over a 1 x 2 grid with width stride 4: boxes (0, 0, 4, 4) score 0.5
# and (4, 0, 8, 4) score 0.7 (zero deltas), disjoint, in a 10 x 10 image.

def _proposals(pre=-1, post=-1, min_size=1.0, types="float", nchw=False):
    if types == "float":
        ins = [f32([1, 1, 2, 1]), f32([1, 1, 2, 4]), f32([1, 4]), f32([1, 2])]
        feeds = [[0.5, 0.7], [0] * 8, [0, 0, 4, 4], [10, 10]]
        outs = [f32([0]), f32([0, 4]), i32t([0])]
    else:
        make, zp = (q8, 0) if types == "quant8" else (s8, -100)
        ins = [make([1, 1, 2, 1], 0.01, zp), make([1, 1, 2, 4], 0.1, zp), q16s([1, 4]),
               q16([1, 2])]
        feeds = [[50 + zp, 70 + zp], [zp] * 8, [0, 0, 32, 32], [80, 80]]
        outs = [make([0], 0.01, zp), q16([0, 4]), i32t([0])]
    if nchw:   # [N, A, H, W]: H = 1, so only the channel axis moves
        ins[0] = ins[0].__class__(ins[0].type, (1, 1, 1, 2), ins[0].scale, ins[0].zp)
        ins[1] = ins[1].__class__(ins[1].type, (1, 4, 1, 2), ins[1].scale, ins[1].zp)
        feeds[1] = [0] * 8 if types == "float" else feeds[1]
    ins += [fl32(1.0), fl32(4.0), i32(pre), i32(post), fl32(0.5), fl32(min_size), boolean(nchw)]
    return run(C.GENERATE_PROPOSALS, ins, outs, feeds)


def test_generate_proposals_float32():
    scores, rois, batches = _proposals()
    np.testing.assert_allclose(scores, [0.7, 0.5], rtol=1e-6)
    assert rois.tolist() == [[4, 0, 8, 4], [0, 0, 4, 4]] and batches.tolist() == [0, 0]
    assert _proposals(pre=1)[1].tolist() == [[4, 0, 8, 4]]       # pre-NMS top 1
    assert _proposals(post=1)[1].tolist() == [[4, 0, 8, 4]]      # post-NMS top 1
    assert _proposals(nchw=True)[1].tolist() == [[4, 0, 8, 4], [0, 0, 4, 4]]
    assert [o.shape for o in _proposals(min_size=4.0)] == [(0,), (0, 4), (0,)]   # sides 4 <= 4


@pytest.mark.parametrize("types,zp", [("quant8", 0), ("signed", -100)])
def test_generate_proposals_quant(types, zp):
    scores, rois, _ = _proposals(types=types)
    assert scores.tolist() == [70 + zp, 50 + zp]
    assert rois.dtype == np.uint16 and rois.tolist() == [[32, 0, 64, 32], [0, 0, 32, 32]]


# -- DETECTION_POSTPROCESSING ----------------------------------------------------------------------
# Anchors (ycenter, xcenter, h, w) (0.5, 0.5, 1, 1) and (0.5, 2.5, 1, 1); anchor 1 has dy = 1
# with scale_y 10: its box moves by 0.1. Class 0 is the background.
DP_SCORES = [[[0.0, 0.9, 0.2], [0.0, 0.3, 0.8]]]
DP_DELTAS = [[[0, 0, 0, 0], [1, 0, 0, 0]]]
DP_ANCHORS = [[0.5, 0.5, 1, 1], [0.5, 2.5, 1, 1]]
BOX0, BOX1 = [0, 0, 1, 1], [0.1, 2, 1.1, 3]


def _detect(regular, max_det, max_classes, per_class=1, t=f32, s=fl32):
    ins = [t([1, 2, 3]), t([1, 2, 4]), t([2, 4]), s(10.0), s(10.0), s(5.0), s(5.0),
           boolean(regular), i32(max_det), i32(max_classes), i32(per_class), s(0.1), s(0.5),
           boolean(False)]
    d = max_det if regular else max_det * max_classes
    outs = [t([1, d]), t([1, d, 4]), i32t([1, d]), i32t([1])]
    return run(C.DETECTION_POSTPROCESSING, ins, outs, [DP_SCORES, DP_DELTAS, DP_ANCHORS])


def test_detection_postprocessing_fast_nms():
    scores, boxes, classes, count = _detect(False, 2, 1)
    np.testing.assert_allclose(scores, [[0.9, 0.8]], rtol=1e-6)
    np.testing.assert_allclose(boxes, [[BOX0, BOX1]], rtol=1e-6, atol=1e-6)
    assert classes.tolist() == [[0, 1]] and count.tolist() == [2]
    scores, boxes, classes, count = _detect(False, 2, 2)     # two classes per anchor
    np.testing.assert_allclose(scores, [[0.9, 0.2, 0.8, 0.3]], rtol=1e-6)
    assert classes.tolist() == [[0, 1, 1, 0]] and count.tolist() == [4]


def test_detection_postprocessing_regular_nms_and_float16():
    scores, boxes, classes, count = _detect(True, 3, 1)
    np.testing.assert_allclose(scores, [[0.9, 0.8, 0]], rtol=1e-6)
    np.testing.assert_allclose(boxes, [[BOX0, BOX1, [0, 0, 0, 0]]], rtol=1e-6, atol=1e-6)
    assert classes.tolist() == [[0, 1, 0]] and count.tolist() == [2]
    scores, boxes, classes, count = _detect(True, 3, 1, t=f16, s=fl16)
    assert scores.dtype == np.float16
    np.testing.assert_allclose(boxes, [[BOX0, BOX1, [0, 0, 0, 0]]], atol=1e-3)
    assert count.tolist() == [2]
    with pytest.raises(OpFailedError):      # max detections must be positive
        _detect(True, 0, 1)


# -- ROI_ALIGN and ROI_POOLING ---------------------------------------------------------------------
# Feature map value 4 * y + x on a 4 x 4 grid: bilinear samples of it are exact.
GRID = np.arange(16).reshape(1, 4, 4, 1)


def _roi_align(x_opnd, roi_opnd, rois, ratio, out_opnd, x=GRID, nchw=False):
    ins = [x_opnd, roi_opnd, i32t([len(rois)]), i32(2), i32(2), fl32(1.0), fl32(1.0),
           i32(ratio), i32(ratio), boolean(nchw)]
    return run(C.ROI_ALIGN, ins, [out_opnd], [x, rois, [0] * len(rois)])[0]


def test_roi_align_float32():
    # ratio 1: one sample per 2 x 2 bin at (1, 1), (3, 1), (1, 3), (3, 3); x = 3 and y = 3
    # are past the last interpolation cell and clamp to it.
    out = _roi_align(f32([1, 4, 4, 1]), f32([1, 4]), [[0, 0, 4, 4]], 1, f32([1, 2, 2, 1]))
    assert out.ravel().tolist() == [5, 7, 13, 15]
    # ratio 2: bin (0, 1) samples x in {2.5, 3.5 -> 3} (mean 2.75), y in {0.5, 1.5} (mean 1):
    # 4 * 1 + 2.75; bin (1, 1) has mean y 2.75 too: 11 + 2.75
    out = _roi_align(f32([1, 4, 4, 1]), f32([1, 4]), [[0, 0, 4, 4]], 2, f32([1, 2, 2, 1]))
    np.testing.assert_allclose(out.ravel(), [5, 6.75, 12, 13.75], rtol=1e-6)
    out = _roi_align(f32([1, 1, 4, 4]), f32([1, 4]), [[0, 0, 4, 4]], 1, f32([1, 1, 2, 2]),
                     x=GRID.reshape(1, 1, 4, 4), nchw=True)
    assert out.ravel().tolist() == [5, 7, 13, 15]


@pytest.mark.parametrize("make,zp", [(q8, 0), (s8, -8)])
def test_roi_align_quant(make, zp):
    x = GRID + zp
    out = _roi_align(make([1, 4, 4, 1], 1.0, zp), q16([1, 4]), [[0, 0, 32, 32]], 1,
                     make([1, 2, 2, 1], 1.0, zp), x=x)
    assert (out.ravel() - zp).tolist() == [5, 7, 13, 15]
    # ratio 2, bin (0, 1): weights 0.25 quantize to 64/255 and 0.5 to 128/255; the sum
    # 64 * (2+3+6+7) + 128 * (3+7) + 64 * (6+7+10+11) + 128 * (7+11) = 6912 times
    # 1 / 255 / 4 is 6.78 -> 7 (float: 6.75).
    out = _roi_align(make([1, 4, 4, 1], 1.0, zp), q16([1, 4]), [[0, 0, 32, 32]], 2,
                     make([1, 2, 2, 1], 1.0, zp), x=x)
    assert out.ravel()[1] - zp == 7


def test_roi_align_rejections_and_zero_rois():
    with pytest.raises(OpFailedError):      # x2 = 5 is outside the 4-wide map
        _roi_align(f32([1, 4, 4, 1]), f32([1, 4]), [[0, 0, 5, 4]], 1, f32([1, 2, 2, 1]))
    out = _roi_align(f32([1, 4, 4, 1]), f32([0, 4]), np.zeros((0, 4)), 1, f32([0, 2, 2, 1]))
    assert out.shape == (0, 2, 2, 1)


def _roi_pool(x_opnd, roi_opnd, rois, out_opnd, x=GRID, stride=fl32):
    ins = [x_opnd, roi_opnd, i32t([1]), i32(2), i32(2), stride(2.0), stride(2.0), boolean(False)]
    return run(C.ROI_POOLING, ins, [out_opnd], [x, rois, [0]])[0]


def test_roi_pooling():
    # roi (0, 0, 6, 6) / stride 2 -> cells 0..3, 2 x 2 bins of 2 x 2 cells: their maxima
    out = _roi_pool(f32([1, 4, 4, 1]), f32([1, 4]), [[0, 0, 6, 6]], f32([1, 2, 2, 1]))
    assert out.ravel().tolist() == [5, 7, 13, 15]
    out = _roi_pool(f16([1, 4, 4, 1]), f16([1, 4]), [[0, 0, 2, 2]], f16([1, 2, 2, 1]),
                    stride=fl16)
    assert out.dtype == np.float16 and out.ravel().tolist() == [0, 1, 4, 5]   # cells 0..1
    for make, zp in ((q8, 3), (s8, -5)):
        out = _roi_pool(make([1, 4, 4, 1], 0.5, zp), q16([1, 4]), [[0, 0, 48, 48]],
                        make([1, 2, 2, 1], 0.5, zp), x=GRID + zp)
        assert (out.ravel() - zp).tolist() == [5, 7, 13, 15]
    with pytest.raises(OpFailedError):      # the output keeps the input's quantization
        _roi_pool(q8([1, 4, 4, 1], 0.5, 3), q16([1, 4]), [[0, 0, 48, 48]],
                  q8([1, 2, 2, 1], 0.25, 3), x=GRID + 3)


# -- HEATMAP_MAX_KEYPOINT --------------------------------------------------------------------------
# f(x, y) = 2 - (x - 1.25)^2 - (y - 0.75)^2 on a 3 x 3 grid: the quadratic fit around the grid
# maximum (1, 1) is exact: delta (0.25, -0.25), score 2. In box (0, 0, 3, 3) the keypoint is
# ((1 + 0.25 + 0.5) / 3 * 3, (1 - 0.25 + 0.5) / 3 * 3) = (1.75, 1.25).
HEAT = np.array([[2 - (x - 1.25) ** 2 - (y - 0.75) ** 2 for x in range(3)] for y in range(3)])


def test_heatmap_max_keypoint_float():
    ins = [f32([1, 3, 3, 1]), f32([1, 4]), boolean(False)]
    scores, points = run(C.HEATMAP_MAX_KEYPOINT, ins, [f32([1, 1]), f32([1, 1, 2])],
                         [HEAT.reshape(1, 3, 3, 1), [[0, 0, 3, 3]]])
    np.testing.assert_allclose(scores, [[2.0]], rtol=1e-6)
    np.testing.assert_allclose(points, [[[1.75, 1.25]]], rtol=1e-6)
    ins = [f16([1, 1, 3, 3]), f16([1, 4]), boolean(True)]
    scores, points = run(C.HEATMAP_MAX_KEYPOINT, ins, [f16([1, 1]), f16([1, 1, 2])],
                         [HEAT.reshape(1, 1, 3, 3), [[0, 0, 3, 3]]])
    np.testing.assert_allclose(points, [[[1.75, 1.25]]], rtol=1e-3)


@pytest.mark.parametrize("make,zp", [(q8, 20), (s8, 0)])
def test_heatmap_max_keypoint_quant(make, zp):
    heat = (HEAT / 0.0625 + zp).astype(int).reshape(1, 3, 3, 1)    # exact multiples of 1/16
    ins = [make([1, 3, 3, 1], 0.0625, zp), q16([1, 4]), boolean(False)]
    scores, points = run(C.HEATMAP_MAX_KEYPOINT, ins,
                         [make([1, 1], 0.0625, zp), q16([1, 1, 2])], [heat, [[0, 0, 24, 24]]])
    assert scores.tolist() == [[32 + zp]] and points.tolist() == [[[14, 10]]]


# -- feature levels --------------------------------------------------------------------------------

def test_feature_levels():
    nms = lambda t, r: feature_level(
        C.BOX_WITH_NMS_LIMIT, [t([3, 2], 0.01, 0), r([3, 8]), i32t([3]), fl32(0.3), i32(-1),
                               i32(0), fl32(0.5), fl32(0.5), fl32(0.1)],
        [t([0], 0.01, 0), r([0, 4]), i32t([0]), i32t([0])])
    assert nms(q8, q16) == FL3 and nms(s8, q16) == FL4
    assert feature_level(C.ROI_ALIGN, [s8([1, 4, 4, 1], 1, 0), q16([1, 4]), i32t([1]), i32(2),
                                       i32(2), fl32(1), fl32(1), i32(0), i32(0), boolean(False)],
                         [s8([1, 2, 2, 1], 1, 0)]) == FL4
    assert feature_level(C.ROI_POOLING, [f16([1, 4, 4, 1]), f16([1, 4]), i32t([1]), i32(2),
                                         i32(2), fl16(1), fl16(1), boolean(False)],
                         [f16([1, 2, 2, 1])]) == FL3
    # AOSP keeps AXIS_ALIGNED_BBOX_TRANSFORM at FL3 even with signed deltas (the operand
    # type itself raises the model's level)
    assert feature_level(C.AXIS_ALIGNED_BBOX_TRANSFORM, [q16([1, 4]), s8([1, 4], 0.1, 0),
                                                         i32t([1]), q16([1, 2])],
                         [q16([1, 4])]) == FL3
    assert feature_level(C.HEATMAP_MAX_KEYPOINT, [s8([1, 3, 3, 1], 1, 0), q16([1, 4]),
                                                  boolean(False)],
                         [s8([1, 1], 1, 0), q16([1, 1, 2])]) == FL4
    with pytest.raises(OperationValidationError):   # quant8 scores need quant16 rois
        nms(q8, f32)
    with pytest.raises(OperationValidationError):   # DETECTION_POSTPROCESSING is float only
        build(C.DETECTION_POSTPROCESSING,
              [q8([1, 2, 3], 1, 0), q8([1, 2, 4], 1, 0), q8([2, 4], 1, 0), fl32(1), fl32(1),
               fl32(1), fl32(1), boolean(False), i32(1), i32(1), i32(1), fl32(0), fl32(0),
               boolean(False)],
              [q8([1, 1], 1, 0), q8([1, 1, 4], 1, 0), i32t([1, 1]), i32t([1])])


# -- numba cores against the readable references (random inputs without score ties) -----------

@pytest.mark.parametrize("kernel", [0, 1, 2])
def test_box_with_nms_kernel_matches_reference(kernel):
    from nnsim.kernels import detection_ops
    from nnsim.kernels.reference import detection_ops as ref
    rng = np.random.default_rng(kernel)
    r, c = 40, 4
    scores = rng.permutation(r * c).reshape(r, c).astype(np.float32) / (r * c)
    xy = rng.uniform(0, 20, (r, c, 2)).astype(np.float32)
    rois = np.concatenate([xy, xy + rng.uniform(1, 10, (r, c, 2))], axis=2).astype(np.float32)
    batches = np.repeat([0, 1, 3], [15, 20, 5]).astype(np.int32)
    args = (0.2, 12, kernel, 0.4, 0.5, 0.25)
    got, got_scores, got_batches = detection_ops.box_with_nms_limit(scores, rois, batches, *args)
    want, want_scores = ref.box_with_nms_limit(scores, rois, batches.tolist(), *args)
    assert len(want) > 10
    assert got.tolist() == want.tolist()
    np.testing.assert_allclose(got_scores, want_scores, rtol=1e-6)
    assert got_batches.tolist() == batches[want // c].tolist()


def test_roi_align_kernel_matches_reference():
    from nnsim.kernels.reference import detection_ops as ref
    from nnsim.kernels.roi import roi_align
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 6, 7, 3)).astype(np.float32)
    lo = rng.uniform(0, 6, (5, 2))
    rois = np.concatenate([lo, lo + rng.uniform(0, 6, (5, 2))], axis=1).astype(np.float32)
    rois = np.minimum(rois, [14, 12, 14, 12]).astype(np.float32)   # stride 2 on a 7 x 6 map
    batches = np.array([0, 1, 1, 0, 1], np.int32)
    for ratio in (0, 2):
        got = roi_align(x, rois, batches, 3, 2, 2.0, 2.0, ratio, ratio)
        want = ref.roi_align(x, rois, batches, 3, 2, 2.0, 2.0, ratio, ratio)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
