"""TFLite NON_MAX_SUPPRESSION_V4 / V5 (``reference_ops::NonMaxSuppression``), bit for bit.

Greedy selection by descending score with hard suppression at ``iou >= iou_threshold`` and,
when ``soft_nms_sigma > 0``, Gaussian score decay (``score * exp(scale * iou * iou)`` with
``scale = -0.5 / sigma``); a candidate whose score decayed is queued again and re-examined
only against the boxes selected since. All box arithmetic is float32, in TFLite's order.

The candidate queue is ``std::priority_queue`` over a deque, i.e. libstdc++'s binary heap
(``push_heap`` / ``pop_heap`` / ``__adjust_heap``), emulated step by step: with equal scores
the order in which candidates come out is the heap's, not the box order, and the selected
indices depend on it.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels._builtins import empty, greater, lesser

from nnsim.kernels._jit import njit
from nnsim.kernels.expf import libm_expf

__all__ = ["non_max_suppression"]


def non_max_suppression(boxes, scores, max_output_size, iou_threshold, score_threshold,
                        soft_nms_sigma=0.0):
    """Select boxes.

    Parameters
    ----------
    boxes : ndarray float32 (num_boxes, 4)
        Corners ``y1, x1, y2, x2`` in any order per axis.
    scores : ndarray float32 (num_boxes,)
    max_output_size : int >= 0
    iou_threshold, score_threshold, soft_nms_sigma : float32 scalars
        ``soft_nms_sigma`` 0 is plain NMS (V4); must not be negative.

    Returns
    -------
    (indices int32 (max_output_size,), scores float32 (max_output_size,), count int)
        Unused entries are 0, as LiteRT's ``ResetUnusedElementsToZeroes``.
    """
    boxes = np.ascontiguousarray(boxes, np.float32).reshape(-1, 4)
    scores = np.ascontiguousarray(scores, np.float32).reshape(-1)
    if scores.size != boxes.shape[0]:
        raise ValueError(f"{scores.size} scores for {boxes.shape[0]} boxes")
    max_output_size = int(max_output_size)
    if max_output_size < 0:
        raise ValueError(f"max_output_size {max_output_size} is negative")
    sigma = np.float32(soft_nms_sigma)
    if sigma < 0:
        raise ValueError(f"invalid soft NMS sigma {float(sigma)}")
    # float scale = -0.5 / sigma: a double division, stored as float
    scale = np.float32(-0.5 / float(sigma)) if sigma > 0 else np.float32(0)
    out_idx = np.zeros(max_output_size, np.int32)
    out_scores = np.zeros(max_output_size, np.float32)
    n = _nms_core(boxes, scores, max_output_size, np.float32(iou_threshold),
                  np.float32(score_threshold), sigma, scale, out_idx, out_scores)
    return out_idx, out_scores, int(n)


@njit
def _iou(boxes, i, j):
    """TFLite ``ComputeIntersectionOverUnion`` in float32."""
    zero = np.float32(0.0)
    iy0, iy1 = lesser(boxes[i, 0], boxes[i, 2]), greater(boxes[i, 0], boxes[i, 2])
    ix0, ix1 = lesser(boxes[i, 1], boxes[i, 3]), greater(boxes[i, 1], boxes[i, 3])
    jy0, jy1 = lesser(boxes[j, 0], boxes[j, 2]), greater(boxes[j, 0], boxes[j, 2])
    jx0, jx1 = lesser(boxes[j, 1], boxes[j, 3]), greater(boxes[j, 1], boxes[j, 3])
    area_i = np.float32((iy1 - iy0) * (ix1 - ix0))
    area_j = np.float32((jy1 - jy0) * (jx1 - jx0))
    if area_i <= zero or area_j <= zero:
        return zero
    h = greater(np.float32(lesser(iy1, jy1) - greater(iy0, jy0)), zero)
    w = greater(np.float32(lesser(ix1, jx1) - greater(ix0, jx0)), zero)
    inter = np.float32(h * w)
    return np.float32(inter / np.float32(np.float32(area_i + area_j) - inter))


@njit
def _push(h_idx, h_score, h_begin, size, idx, score, begin):
    """libstdc++ ``push_heap`` of a new last element; returns the new size."""
    hole = size
    parent = (hole - 1) // 2
    while hole > 0 and h_score[parent] < score:
        h_idx[hole], h_score[hole], h_begin[hole] = h_idx[parent], h_score[parent], \
            h_begin[parent]
        hole = parent
        parent = (hole - 1) // 2
    h_idx[hole], h_score[hole], h_begin[hole] = idx, score, begin
    return size + 1


@njit
def _pop(h_idx, h_score, h_begin, size):
    """libstdc++ ``pop_heap`` + ``pop_back``: moves the top out; returns the new size."""
    last = size - 1
    if last <= 0:
        return last
    v_idx, v_score, v_begin = h_idx[last], h_score[last], h_begin[last]
    h_idx[last], h_score[last], h_begin[last] = h_idx[0], h_score[0], h_begin[0]
    length = last
    hole = 0
    child = 0
    while child < (length - 1) // 2:        # __adjust_heap
        child = 2 * (child + 1)
        if h_score[child] < h_score[child - 1]:
            child -= 1
        h_idx[hole], h_score[hole], h_begin[hole] = h_idx[child], h_score[child], h_begin[child]
        hole = child
    if (length & 1) == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        h_idx[hole], h_score[hole], h_begin[hole] = h_idx[child - 1], h_score[child - 1], \
            h_begin[child - 1]
        hole = child - 1
    parent = (hole - 1) // 2                # __push_heap back up to the top
    while hole > 0 and h_score[parent] < v_score:
        h_idx[hole], h_score[hole], h_begin[hole] = h_idx[parent], h_score[parent], \
            h_begin[parent]
        hole = parent
        parent = (hole - 1) // 2
    h_idx[hole], h_score[hole], h_begin[hole] = v_idx, v_score, v_begin
    return last


@njit
def _nms_core(boxes, scores, max_output_size, iou_threshold, score_threshold, sigma, scale,
              out_idx, out_scores):
    n = scores.shape[0]
    h_idx = empty(n + 1, np.int64)
    h_score = empty(n + 1, np.float32)
    h_begin = empty(n + 1, np.int64)
    size = 0
    for i in range(n):
        if scores[i] > score_threshold:
            size = _push(h_idx, h_score, h_begin, size, i, scores[i], 0)
    num_outputs = lesser(size, max_output_size)
    selected = 0
    soft = sigma > np.float32(0.0)
    while selected < num_outputs and size > 0:
        idx, score, begin = h_idx[0], h_score[0], h_begin[0]
        original = score
        size = _pop(h_idx, h_score, h_begin, size)
        suppressed = False
        j = selected - 1
        while j >= begin:
            iou = _iou(boxes, idx, out_idx[j])
            if iou >= iou_threshold:
                suppressed = True
                break
            if soft:
                score = np.float32(score * libm_expf(np.float32(np.float32(scale * iou) * iou)))
            if score <= score_threshold:
                break
            j -= 1
        begin = selected    # set before the count moves: a re-queued pick meets itself
        if not suppressed:
            if score == original:
                out_idx[selected] = idx
                out_scores[selected] = score
                selected += 1
            if score > score_threshold:
                size = _push(h_idx, h_score, h_begin, size, idx, score, begin)
    return selected
