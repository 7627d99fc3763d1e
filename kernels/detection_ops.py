"""NNAPI box operations on float32 boxes (AOSP ``common/cpu_operations/GenerateProposals.cpp``).

AXIS_ALIGNED_BBOX_TRANSFORM, the NMS of BOX_WITH_NMS_LIMIT (hard, linear, gaussian),
GENERATE_PROPOSALS and DETECTION_POSTPROCESSING. Every type is computed in float32 exactly as
AOSP's float path (float16 and quantized inputs are converted by the operation first), with
float32 rounding at every step. Boxes are corner encoded ``(x1, y1, x2, y2)``.

Selection order follows AOSP bit for bit: the in-place greedy NMS takes the *first* maximum
of the remaining candidates, moves a discarded candidate's slot to the end of the range
(``swap(*i--, *--end)``), and the final orderings are stable sorts by decreasing score (what
libc++'s ``std::sort`` does on the short ranges these operations see; on exact ties over
long ranges AOSP's order is unspecified).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels._builtins import empty, greater, lesser

from nnsim.kernels._jit import njit

__all__ = [
    "GAUSSIAN",
    "HARD",
    "LINEAR",
    "bbox_transform",
    "box_with_nms_limit",
    "detection_postprocess",
    "generate_proposals",
]

F32 = np.float32
HARD, LINEAR, GAUSSIAN = 0, 1, 2     # BOX_WITH_NMS_LIMIT's soft NMS kernels
_DROP_BY_IOU = -1                    # plain hard NMS: discard when IoU >= threshold


# -- AXIS_ALIGNED_BBOX_TRANSFORM ---------------------------------------------------------------

def bbox_transform(rois, deltas, batches, image_info):
    """Apply ``deltas [R, 4K]`` to ``rois [R, 4]``, clip to the image of each roi's batch.

    ``image_info [B, 2]`` holds (height, width). Returns float32 ``[R, 4K]``; raises
    ValueError for a batch index out of range or a roi with x2 < x1 or y2 < y1.
    """
    rois = np.ascontiguousarray(rois, dtype=F32).reshape(-1, 4)
    deltas = np.ascontiguousarray(deltas, dtype=F32).reshape(rois.shape[0], -1)
    out = np.empty_like(deltas)
    bad = _bbox_transform_core(rois, deltas, np.ascontiguousarray(batches, dtype=np.int32),
                               np.ascontiguousarray(image_info, dtype=F32).reshape(-1, 2), out)
    if bad >= 0:
        raise ValueError(f"roi {bad}: batch index out of range or x2 < x1 or y2 < y1")
    return out


@njit(inner=True)
def _clip(v, hi):
    """``std::min(std::max(v, 0.0f), hi)``."""
    if v < F32(0.0):
        v = F32(0.0)
    if hi < v:
        v = hi
    return v


@njit
def _bbox_transform_core(rois, deltas, batches, image_info, out):
    two = F32(2.0)
    for r in range(rois.shape[0]):
        b = batches[r]
        if b < 0 or b >= image_info.shape[0]:
            return r
        x1, y1, x2, y2 = rois[r, 0], rois[r, 1], rois[r, 2], rois[r, 3]
        if not (x1 <= x2 and y1 <= y2):
            return r
        height, width = image_info[b, 0], image_info[b, 1]
        w, h = x2 - x1, y2 - y1
        cx, cy = (x1 + x2) / two, (y1 + y2) / two
        for k in range(0, deltas.shape[1], 4):
            nw = np.exp(deltas[r, k + 2]) * w
            nh = np.exp(deltas[r, k + 3]) * h
            nx = cx + deltas[r, k] * w
            ny = cy + deltas[r, k + 1] * h
            out[r, k] = _clip(nx - nw / two, width)
            out[r, k + 1] = _clip(ny - nh / two, height)
            out[r, k + 2] = _clip(nx + nw / two, width)
            out[r, k + 3] = _clip(ny + nh / two, height)
    return -1


# -- greedy NMS ----------------------------------------------------------------------------------

@njit
def _iou(boxes, a, b):
    """AOSP ``getIoUAxisAligned`` in float32 (0/0 gives NaN, which never suppresses)."""
    area1 = (boxes[a, 2] - boxes[a, 0]) * (boxes[a, 3] - boxes[a, 1])
    area2 = (boxes[b, 2] - boxes[b, 0]) * (boxes[b, 3] - boxes[b, 1])
    x1 = greater(boxes[a, 0], boxes[b, 0])
    x2 = lesser(boxes[a, 2], boxes[b, 2])
    y1 = greater(boxes[a, 1], boxes[b, 1])
    y2 = lesser(boxes[a, 3], boxes[b, 3])
    w = x2 - x1
    h = y2 - y1
    if w < F32(0.0):
        w = F32(0.0)
    if h < F32(0.0):
        h = F32(0.0)
    inter = w * h
    return inter / (area1 + area2 - inter)


@njit(error_model="numpy")
def _nms(scores, boxes, roi_div, kind, iou_threshold, sigma, score_threshold, max_detections,
         select, start, end):
    """Greedy NMS over candidate indices ``select[start:end]`` (in place); returns the new end.

    A candidate ``i`` is box row ``i // roi_div``. ``kind`` -1 discards a candidate whose IoU
    with the kept box is >= ``iou_threshold``; the soft kinds scale its score (HARD: by 0 when
    IoU >= threshold, LINEAR: by 1 - IoU, GAUSSIAN: by exp(-IoU^2 / sigma)) and discard it
    when the score falls below ``score_threshold``. At most ``max_detections`` are kept
    (all when negative).
    """
    if max_detections < 0:
        max_detections = end - start
    kept = 0
    while start < end and kept < max_detections:
        best = start
        for i in range(start + 1, end):
            if scores[select[best]] < scores[select[i]]:
                best = i
        select[start], select[best] = select[best], select[start]
        top = select[start] // roi_div
        i = start + 1
        while i < end:
            iou = _iou(boxes, select[i] // roi_div, top)
            if kind == _DROP_BY_IOU:
                drop = iou >= iou_threshold
            else:
                if kind == GAUSSIAN:
                    factor = np.exp(F32(-1.0) * iou * iou / sigma)
                elif iou < iou_threshold:
                    factor = F32(1.0)
                elif kind == LINEAR:
                    factor = F32(1.0) - iou
                else:
                    factor = F32(0.0)
                scores[select[i]] = scores[select[i]] * factor
                drop = scores[select[i]] < score_threshold
            if drop:
                end -= 1
                select[i], select[end] = select[end], select[i]
            else:
                i += 1
        start += 1
        kept += 1
    return start


@njit(inner=True)
def _sort_by_score(scores, select, n):
    """``select[:n]`` reordered by decreasing score (stable)."""
    keys = empty(n, np.float32)
    for i in range(n):
        keys[i] = -scores[select[i]]
    return select[:n][np.argsort(keys, kind="mergesort")]


@njit(error_model="numpy", inner=True)
def _nms_multiclass(scores, num_rois, num_classes, boxes, roi_div, kind, iou_threshold, sigma,
                    score_threshold, nms_score_threshold, max_detections, max_per_class):
    """Per class 1..C-1 (0 is the background): candidates ``score > score_threshold`` go
    through :func:`_nms`; the union is sorted by score and cut to ``max_detections``."""
    select = empty(num_rois * num_classes, np.int64)
    n = 0
    for c in range(1, num_classes):
        first = n
        for r in range(num_rois):
            if scores[r * num_classes + c] > score_threshold:
                select[n] = r * num_classes + c
                n += 1
        n = _nms(scores, boxes, roi_div, kind, iou_threshold, sigma, nms_score_threshold,
                 max_per_class, select, first, n)
    order = _sort_by_score(scores, select, n)
    if 0 <= max_detections < n:
        order = order[:max_detections]
    return order


# -- BOX_WITH_NMS_LIMIT ----------------------------------------------------------------------------

def box_with_nms_limit(scores, rois, batches, score_threshold, max_detections, kernel,
                       iou_threshold, sigma, nms_score_threshold):
    """BOX_WITH_NMS_LIMIT on float32 ``scores [R, C]`` and ``rois [R, 4C]``.

    Returns ``(selected, out_scores, batch_ids)``: flat indices ``r * C + c`` of the kept boxes
    (class ``c`` = index % C, box = ``rois.reshape(-1, 4)[index]``), their (soft-NMS adjusted)
    float32 scores and batch ids. Within a batch (consecutive equal ids) the order is by class,
    then by decreasing score. Raises ValueError for an unknown kernel or a malformed box.
    """
    if kernel not in (HARD, LINEAR, GAUSSIAN):
        raise ValueError(f"unsupported soft NMS kernel {kernel}")
    scores = np.array(scores, dtype=F32).reshape(len(batches), -1)     # modified in place
    num_classes = scores.shape[1]
    boxes = np.ascontiguousarray(rois, dtype=F32).reshape(-1, 4)
    selected, bad = _box_with_nms_core(
        scores.ravel(), num_classes, boxes, np.ascontiguousarray(batches, dtype=np.int32),
        F32(score_threshold), int(max_detections), int(kernel), F32(iou_threshold), F32(sigma),
        F32(nms_score_threshold))
    if bad >= 0:
        raise ValueError(f"box {bad} has x2 < x1 or y2 < y1")
    batch_ids = np.asarray(batches, dtype=np.int32)[selected // num_classes]
    return selected, scores.ravel()[selected], batch_ids


@njit(error_model="numpy")
def _box_with_nms_core(scores, num_classes, boxes, batches, score_threshold, max_detections,
                       kernel, iou_threshold, sigma, nms_score_threshold):
    num_rois = batches.shape[0]
    out = empty(scores.shape[0], np.int64)
    n_out = 0
    start = 0
    while start < num_rois:
        stop = start + 1
        while stop < num_rois and batches[stop] == batches[start]:
            stop += 1
        # AOSP checks rows start*C .. start*C + (stop - start) - 1 only (it steps by one box).
        for i in range(stop - start):
            row = start * num_classes + i
            if not (boxes[row, 0] <= boxes[row, 2] and boxes[row, 1] <= boxes[row, 3]):
                return out[:0], row
        base = start * num_classes
        local = _nms_multiclass(scores[base:stop * num_classes], stop - start, num_classes,
                                boxes[base:stop * num_classes], 1, kernel, iou_threshold,
                                sigma, score_threshold, nms_score_threshold, max_detections,
                                max_detections)
        # then by class (stable: scores stay decreasing within a class)
        classes = empty(local.shape[0], np.int64)
        for i in range(local.shape[0]):
            classes[i] = local[i] % num_classes
        local = local[np.argsort(classes, kind="mergesort")]
        for i in range(local.shape[0]):
            out[n_out] = base + local[i]
            n_out += 1
        start = stop
    return out[:n_out], -1


# -- GENERATE_PROPOSALS ----------------------------------------------------------------------------

def generate_proposals(scores, deltas, anchors, image_info, height_stride, width_stride,
                       pre_nms_top_n, post_nms_top_n, iou_threshold, min_size):
    """GENERATE_PROPOSALS on float32 NHWC ``scores [N, H, W, A]``, ``deltas [N, H, W, 4A]``,
    ``anchors [A, 4]`` and ``image_info [N, 2]``.

    Returns ``(out_scores, out_rois [K, 4], batch_ids)`` as float32 / float32 / int32.
    """
    n, height, width, num_anchors = scores.shape
    anchors = np.asarray(anchors, dtype=F32).reshape(num_anchors, 4)
    # Anchor a at cell (h, w), shifted by (w * width_stride, h * height_stride).
    hs = np.arange(height, dtype=F32) * F32(height_stride)
    ws = np.arange(width, dtype=F32) * F32(width_stride)
    shift = np.zeros((height, width, 1, 4), dtype=F32)
    shift[..., 0] = shift[..., 2] = ws[None, :, None]
    shift[..., 1] = shift[..., 3] = hs[:, None, None]
    grid = (anchors[None, None] + shift).reshape(-1, 4)
    zeros = np.zeros(grid.shape[0], dtype=np.int32)
    out_scores, out_rois, out_batches = [], [], []
    for b in range(n):
        score = np.ascontiguousarray(scores[b], dtype=F32).ravel()
        boxes = bbox_transform(grid, deltas[b].reshape(-1, 4), zeros, image_info[b][None])
        select = np.arange(score.shape[0], dtype=np.int64)
        if 0 < pre_nms_top_n < select.shape[0]:
            select = np.argsort(-score, kind="stable")[:pre_nms_top_n]
        select = select[_keep_min_size(boxes[select], image_info[b], min_size)]
        end = _nms(score, boxes, 1, _DROP_BY_IOU, F32(iou_threshold), F32(0.0), F32(0.0),
                   int(post_nms_top_n), select, 0, select.shape[0])
        select = select[:end]
        out_scores.append(score[select])
        out_rois.append(boxes[select])
        out_batches.append(np.full(end, b, dtype=np.int32))
    return (np.concatenate(out_scores), np.concatenate(out_rois).reshape(-1, 4),
            np.concatenate(out_batches))


def _keep_min_size(boxes, image_info, min_size):
    """AOSP ``filterBoxes``: both sides > min_size and the centre inside the image (float32)."""
    w = boxes[:, 2] - boxes[:, 0]
    h = boxes[:, 3] - boxes[:, 1]
    cx = boxes[:, 0] + w / F32(2.0)
    cy = boxes[:, 1] + h / F32(2.0)
    m = F32(min_size)
    return (w > m) & (h > m) & (cx < image_info[1]) & (cy < image_info[0])


# -- DETECTION_POSTPROCESSING --------------------------------------------------------------------

def detection_postprocess(scores, deltas, anchors, scale_y, scale_x, scale_h, scale_w,
                          use_regular_nms, max_detections, max_classes_per_detection,
                          max_per_class, iou_threshold, score_threshold, is_bg_in_label):
    """DETECTION_POSTPROCESSING on float32 ``scores [N, A, C]``, ``deltas [N, A, L]`` (L >= 4,
    CenterSize ``(y, x, h, w)``) and ``anchors [A, 4]`` (ycenter, xcenter, h, w).

    Returns ``(scores [N, D], boxes [N, D, 4] (y1, x1, y2, x2), classes [N, D],
    detections [N])`` with ``D = max_detections`` (regular NMS) or
    ``max_detections * max_classes_per_detection``; unused rows are zero.
    """
    n = scores.shape[0]
    d = max_detections if use_regular_nms else max_detections * max_classes_per_detection
    out = (np.zeros((n, d), F32), np.zeros((n, d, 4), F32), np.zeros((n, d), np.int32),
           np.zeros(n, np.int32))
    scale = np.array([scale_y, scale_x, scale_h, scale_w], dtype=F32)
    _detection_core(np.ascontiguousarray(scores, dtype=F32),
                    np.ascontiguousarray(deltas, dtype=F32),
                    np.ascontiguousarray(anchors, dtype=F32), scale, bool(use_regular_nms),
                    int(max_detections), int(max_classes_per_detection), int(max_per_class),
                    F32(iou_threshold), F32(score_threshold), 0 if is_bg_in_label else 1, *out)
    return out


@njit(error_model="numpy")
def _detection_core(scores, deltas, anchors, scale, regular, max_detections, max_classes,
                    max_per_class, iou_threshold, score_threshold, label_offset,
                    out_scores, out_boxes, out_classes, out_count):
    num_anchors, num_classes = scores.shape[1], scores.shape[2]
    boxes = empty((num_anchors, 4), np.float32)
    half = F32(0.5)
    for b in range(scores.shape[0]):
        for a in range(num_anchors):
            y = anchors[a, 0] + anchors[a, 2] * deltas[b, a, 0] / scale[0]
            x = anchors[a, 1] + anchors[a, 3] * deltas[b, a, 1] / scale[1]
            hh = anchors[a, 2] * np.exp(deltas[b, a, 2] / scale[2]) * half
            hw = anchors[a, 3] * np.exp(deltas[b, a, 3] / scale[3]) * half
            boxes[a, 0], boxes[a, 1], boxes[a, 2], boxes[a, 3] = y - hh, x - hw, y + hh, x + hw
        flat = scores[b].ravel()
        if regular:
            select = _nms_multiclass(flat, num_anchors, num_classes, boxes, num_classes,
                                     _DROP_BY_IOU, iou_threshold, F32(0.0), score_threshold,
                                     F32(0.0), max_detections, max_per_class)
            for i in range(select.shape[0]):
                out_scores[b, i] = flat[select[i]]
                out_boxes[b, i] = boxes[select[i] // num_classes]
                out_classes[b, i] = select[i] % num_classes - label_offset
            out_count[b] = select.shape[0]
            continue
        per_box = lesser(num_classes - 1, max_classes)
        best = empty(num_anchors, np.float32)
        select = empty(num_anchors, np.int64)
        n = 0
        for a in range(num_anchors):
            best[a] = scores[b, a, 1:].max()
            if best[a] > score_threshold:
                select[n] = a
                n += 1
        n = _nms(best, boxes, 1, _DROP_BY_IOU, iou_threshold, F32(0.0), F32(0.0),
                 max_detections, select, 0, n)
        k = 0
        for i in range(n):
            a = select[i]
            order = np.argsort(-scores[b, a, 1:], kind="mergesort")
            for j in range(per_box):
                out_scores[b, k] = scores[b, a, 1 + order[j]]
                out_boxes[b, k] = boxes[a]
                out_classes[b, k] = 1 + order[j] - label_offset
                k += 1
        out_count[b] = n * per_box
