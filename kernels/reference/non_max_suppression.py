"""Readable reference for ``kernels.non_max_suppression`` (TFLite NMS V4 / V5).

Same algorithm in plain Python: the candidate queue is a list kept as libstdc++'s binary heap
(the order equal scores come out in is that heap's), boxes and scores in float32, and
C's ``expf`` for the soft-NMS decay.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.expf import expf

F = np.float32


def _iou(b, i, j):
    iy0, iy1 = min(b[i][0], b[i][2]), max(b[i][0], b[i][2])
    ix0, ix1 = min(b[i][1], b[i][3]), max(b[i][1], b[i][3])
    jy0, jy1 = min(b[j][0], b[j][2]), max(b[j][0], b[j][2])
    jx0, jx1 = min(b[j][1], b[j][3]), max(b[j][1], b[j][3])
    area_i, area_j = F((iy1 - iy0) * (ix1 - ix0)), F((jy1 - jy0) * (jx1 - jx0))
    if area_i <= 0 or area_j <= 0:
        return F(0)
    inter = F(max(F(min(iy1, jy1) - max(iy0, jy0)), F(0)) *
              max(F(min(ix1, jx1) - max(ix0, jx0)), F(0)))
    return F(inter / F(F(area_i + area_j) - inter))


def _sift_up(heap, hole, item):
    while hole > 0 and heap[(hole - 1) // 2][1] < item[1]:
        heap[hole] = heap[(hole - 1) // 2]
        hole = (hole - 1) // 2
    heap[hole] = item


def _push(heap, item):
    heap.append(item)
    _sift_up(heap, len(heap) - 1, item)


def _pop(heap):
    """``pop_heap`` then ``pop_back``: returns the top."""
    top, last = heap[0], heap.pop()
    n = len(heap)
    if n == 0:
        return top
    hole = child = 0
    while child < (n - 1) // 2:                    # hole down to a leaf, larger child first
        child = 2 * (child + 1)
        if heap[child][1] < heap[child - 1][1]:
            child -= 1
        heap[hole], hole = heap[child], child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        heap[hole], hole = heap[child - 1], child - 1
    _sift_up(heap, hole, last)
    return top


def non_max_suppression(boxes, scores, max_output_size, iou_threshold, score_threshold,
                        soft_nms_sigma=0.0):
    boxes = np.asarray(boxes, F).reshape(-1, 4).tolist()
    boxes = [[F(v) for v in row] for row in boxes]
    scores = [F(s) for s in np.asarray(scores, F).reshape(-1)]
    iou_t, score_t, sigma = F(iou_threshold), F(score_threshold), F(soft_nms_sigma)
    scale = F(-0.5 / float(sigma)) if sigma > 0 else F(0)
    heap = []
    for i, s in enumerate(scores):
        if s > score_t:
            _push(heap, (i, s, 0))
    selected, sel_scores = [], []
    num_outputs = min(len(heap), int(max_output_size))
    while len(selected) < num_outputs and heap:
        idx, score, begin = _pop(heap)
        original, suppressed = score, False
        for j in range(len(selected) - 1, begin - 1, -1):
            iou = _iou(boxes, idx, selected[j])
            if iou >= iou_t:
                suppressed = True
                break
            if sigma > 0:
                score = F(score * expf(F(F(scale * iou) * iou)))
            if score <= score_t:
                break
        begin = len(selected)
        if not suppressed:
            if score == original:
                selected.append(idx)
                sel_scores.append(score)
            if score > score_t:
                _push(heap, (idx, score, begin))
    pad = int(max_output_size) - len(selected)
    return (np.array(selected + [0] * pad, np.int32),
            np.array(sel_scores + [0.0] * pad, F), len(selected))
