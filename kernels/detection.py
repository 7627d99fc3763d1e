"""TFLite_Detection_PostProcess (the SSD custom op); numba fast path for the NMS core.

Port of ``tensorflow/lite/kernels/detection_postprocess.cc`` (batch 1):

1. Decode every anchor's CenterSize encoding into corners. uint8 inputs are dequantized as
   ``(float32(q) - zp) * scale`` (float32); then, in double and rounded to float32::

       ycenter = y / y_scale * anchor_h + anchor_y      half_h = 0.5 * exp(h / h_scale) * anchor_h
       xcenter = x / x_scale * anchor_w + anchor_x      half_w = 0.5 * exp(w / w_scale) * anchor_w
       box = (ycenter - half_h, xcenter - half_w, ycenter + half_h, xcenter + half_w)  # float32

2. uint8 class scores become ``float32(double(scale) * (q - zp))``.
3. Fast NMS (``use_regular_nms`` false, TFLite's default): each anchor keeps its best
   ``max_classes_per_detection`` classes (the first maximum for one class); a single-class NMS
   runs on the anchors' best scores. Regular NMS: one NMS per class with
   ``detections_per_class``, results merged by score (stable), ``max_detections`` kept.
   Single-class NMS: scores ``>= nms_score_threshold`` kept, stable-sorted by decreasing score,
   greedy selection dropping boxes whose float32 IoU with a selected box is
   ``> nms_iou_threshold``.

Outputs (float32): boxes [1, D, 4], classes [1, D], scores [1, D], num_detections [1] with
``D = max_detections * max_classes_per_detection``; rows past the detections are zero.
With several classes per anchor TFLite orders ties with a non-stable partial sort; nnsim
uses a stable order there (ties are then the only possible difference).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nnsim.kernels._builtins import empty, greater, lesser

from nnsim.kernels._jit import njit

__all__ = ["DetectionParams", "detection_postprocess", "decode_boxes", "dequantize_scores"]


@dataclass(frozen=True)
class DetectionParams:
    max_detections: int
    max_classes_per_detection: int
    num_classes: int
    nms_score_threshold: float
    nms_iou_threshold: float
    y_scale: float
    x_scale: float
    h_scale: float
    w_scale: float
    detections_per_class: int = 100
    use_regular_nms: bool = False


def _dequantize_f32(q, scale, zp):
    """``(float32(q) - zp) * scale`` in float32 (the op's ``Dequantizer``)."""
    return (q.astype(np.float32) - np.float32(int(zp))) * np.float32(scale)


def decode_boxes(box_encodings, anchors, params, box_q=None, anchor_q=None):
    """Corner boxes ``[N, 4]`` (ymin, xmin, ymax, xmax) as float32."""
    enc = np.asarray(box_encodings)
    enc = enc.reshape(enc.shape[-2], enc.shape[-1])[:, :4]
    anc = np.asarray(anchors).reshape(-1, 4)
    if enc.dtype == np.uint8:
        enc = _dequantize_f32(enc, *box_q)
        anc = _dequantize_f32(anc, *anchor_q)
    enc = enc.astype(np.float32).astype(np.float64)
    anc = anc.astype(np.float32).astype(np.float64)
    p = params
    sy, sx, sh, sw = (float(np.float32(v)) for v in (p.y_scale, p.x_scale, p.h_scale, p.w_scale))
    ycenter = (enc[:, 0] / sy * anc[:, 2] + anc[:, 0]).astype(np.float32)
    xcenter = (enc[:, 1] / sx * anc[:, 3] + anc[:, 1]).astype(np.float32)
    half_h = (0.5 * np.exp(enc[:, 2] / sh) * anc[:, 2]).astype(np.float32)
    half_w = (0.5 * np.exp(enc[:, 3] / sw) * anc[:, 3]).astype(np.float32)
    return np.stack([ycenter - half_h, xcenter - half_w, ycenter + half_h, xcenter + half_w],
                    axis=1).astype(np.float32)


def dequantize_scores(scores, score_q=None):
    """Class scores ``[N, C]`` as float32."""
    s = np.asarray(scores)
    s = s.reshape(s.shape[-2], s.shape[-1])
    if s.dtype == np.uint8:
        scale, zp = score_q
        return (float(np.float32(scale)) * (s.astype(np.float64) - int(zp))).astype(np.float32)
    return s.astype(np.float32)


def detection_postprocess(box_encodings, class_predictions, anchors, params, *, box_q=None,
                          score_q=None, anchor_q=None):
    """Run the op; ``*_q`` are ``(scale, zero_point)`` of uint8 inputs.

    Returns ``(boxes, classes, scores, num_detections)``.
    """
    p = params
    boxes = decode_boxes(box_encodings, anchors, p, box_q, anchor_q)
    scores = dequantize_scores(class_predictions, score_q)
    num_boxes, with_background = scores.shape
    if boxes.shape[0] != num_boxes:
        raise ValueError(f"{boxes.shape[0]} boxes but {num_boxes} score rows")
    label_offset = with_background - p.num_classes
    if not 0 <= label_offset <= 1:
        raise ValueError(f"{with_background} score columns for {p.num_classes} classes")
    if np.any(boxes[:, 0] > boxes[:, 2]) or np.any(boxes[:, 1] > boxes[:, 3]):
        raise ValueError("decoded boxes are invalid (min > max)")
    iou = np.float32(p.nms_iou_threshold)
    if not 0 < iou <= 1:
        raise ValueError(f"nms_iou_threshold {iou} must be in (0, 1]")
    class_scores = np.ascontiguousarray(scores[:, label_offset:])
    if p.use_regular_nms:
        return _regular(boxes, class_scores, p, iou)
    return _fast(boxes, class_scores, p, iou)


def single_class_nms(boxes, scores, threshold, iou_threshold, max_detections):
    """Indices of the boxes kept by ``NonMaxSuppressionSingleClassHelper``, in order."""
    keep = np.nonzero(scores >= np.float32(threshold))[0]
    order = keep[np.argsort(-scores[keep], kind="stable")]
    selected = np.empty(max(min(order.size, max_detections), 0), dtype=np.int64)
    n = _nms_core(boxes, np.ascontiguousarray(order), np.float32(iou_threshold), selected)
    return selected[:n]


def _fast(boxes, class_scores, p, iou):
    num_boxes, num_classes = class_scores.shape
    per_anchor = min(p.max_classes_per_detection, num_classes)
    if per_anchor <= 0:
        raise ValueError("max_classes_per_detection must be positive")
    if per_anchor == 1:
        classes = np.argmax(class_scores, axis=1)[:, None]  # first maximum, as ArgMaxVector
    else:
        classes = np.argsort(-class_scores, axis=1, kind="stable")[:, :per_anchor]
    best = class_scores[np.arange(num_boxes), classes[:, 0]]
    selected = single_class_nms(boxes, best, p.nms_score_threshold, iou, p.max_detections)
    d = p.max_detections * p.max_classes_per_detection
    out_boxes = np.zeros((1, d, 4), np.float32)
    out_classes = np.zeros((1, d), np.float32)
    out_scores = np.zeros((1, d), np.float32)
    for k, anchor in enumerate(selected):
        for col in range(per_anchor):
            row = p.max_classes_per_detection * k + col
            out_boxes[0, row] = boxes[anchor]
            out_classes[0, row] = classes[anchor, col]
            out_scores[0, row] = class_scores[anchor, classes[anchor, col]]
    return out_boxes, out_classes, out_scores, np.array([len(selected)], np.float32)


def _regular(boxes, class_scores, p, iou):
    num_boxes, num_classes = class_scores.shape
    per_class = min(p.detections_per_class, p.max_detections)
    if per_class <= 0:
        raise ValueError("detections_per_class must be positive")
    merged = []  # (score, anchor, class), kept sorted by decreasing score, stable
    for c in range(num_classes):
        col = np.ascontiguousarray(class_scores[:, c])
        chosen = single_class_nms(boxes, col, p.nms_score_threshold, iou, per_class)
        if chosen.size == 0:
            continue
        new = [(float(col[a]), int(a), c) for a in chosen]
        merged = sorted(merged + new, key=lambda e: -e[0])[:p.max_detections]
    d = p.max_detections * p.max_classes_per_detection
    out_boxes = np.zeros((1, d, 4), np.float32)
    out_classes = np.zeros((1, d), np.float32)
    out_scores = np.zeros((1, d), np.float32)
    for k, (score, anchor, c) in enumerate(merged[:d]):
        out_boxes[0, k] = boxes[anchor]
        out_classes[0, k] = c
        out_scores[0, k] = score
    return out_boxes, out_classes, out_scores, np.array([len(merged)], np.float32)


@njit
def _iou(boxes, i, j):
    zero = np.float32(0.0)
    area_i = (boxes[i, 2] - boxes[i, 0]) * (boxes[i, 3] - boxes[i, 1])
    area_j = (boxes[j, 2] - boxes[j, 0]) * (boxes[j, 3] - boxes[j, 1])
    if area_i <= zero or area_j <= zero:
        return zero
    ymin = greater(boxes[i, 0], boxes[j, 0])
    xmin = greater(boxes[i, 1], boxes[j, 1])
    ymax = lesser(boxes[i, 2], boxes[j, 2])
    xmax = lesser(boxes[i, 3], boxes[j, 3])
    inter = greater(np.float32(ymax - ymin), zero) * greater(np.float32(xmax - xmin), zero)
    return np.float32(inter / np.float32(np.float32(area_i + area_j) - inter))


@njit
def _nms_core(boxes, order, iou_threshold, selected):
    n = order.size
    limit = selected.size
    active = empty(n, np.bool_)
    active[:] = True
    num_active = n
    count = 0
    for i in range(n):
        if num_active == 0 or count >= limit:
            break
        if not active[i]:
            continue
        selected[count] = order[i]
        count += 1
        active[i] = False
        num_active -= 1
        for j in range(i + 1, n):
            if active[j]:
                if _iou(boxes, order[i], order[j]) > iou_threshold:
                    active[j] = False
                    num_active -= 1
    return count
