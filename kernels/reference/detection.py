"""Reference single-class NMS (plain Python): the oracle for the numba core of
:mod:`nnsim.kernels.detection`."""

from __future__ import annotations

import numpy as np


def _iou(b, i, j):
    f = np.float32
    area_i = f(f(b[i, 2] - b[i, 0]) * f(b[i, 3] - b[i, 1]))
    area_j = f(f(b[j, 2] - b[j, 0]) * f(b[j, 3] - b[j, 1]))
    if area_i <= 0 or area_j <= 0:
        return f(0)
    inter = f(max(f(min(b[i, 2], b[j, 2]) - max(b[i, 0], b[j, 0])), f(0))
              * max(f(min(b[i, 3], b[j, 3]) - max(b[i, 1], b[j, 1])), f(0)))
    return f(inter / f(f(area_i + area_j) - inter))


def single_class_nms(boxes, scores, threshold, iou_threshold, max_detections):
    kept = [i for i in range(len(scores)) if scores[i] >= np.float32(threshold)]
    kept.sort(key=lambda i: -scores[i])  # stable
    selected, active = [], [True] * len(kept)
    for a, i in enumerate(kept):
        if len(selected) >= max_detections or not any(active):
            break
        if not active[a]:
            continue
        selected.append(i)
        active[a] = False
        for b in range(a + 1, len(kept)):
            if active[b] and _iou(boxes, i, kept[b]) > np.float32(iou_threshold):
                active[b] = False
    return np.array(selected, dtype=np.int64)
