"""Readable references for :mod:`nnsim.kernels.detection_ops` and :mod:`nnsim.kernels.roi`
(plain Python / numpy, float32 arithmetic): the oracles of their numba cores on inputs
without score ties (where every greedy formulation agrees)."""
from __future__ import annotations

import math

import numpy as np

f = np.float32


def iou(a, b):
    """IoU of two (x1, y1, x2, y2) float32 boxes."""
    area_a = f((a[2] - a[0]) * (a[3] - a[1]))
    area_b = f((b[2] - b[0]) * (b[3] - b[1]))
    w = max(f(min(a[2], b[2]) - max(a[0], b[0])), f(0))
    h = max(f(min(a[3], b[3]) - max(a[1], b[1])), f(0))
    inter = f(w * h)
    return f(inter / f(f(area_a + area_b) - inter))


def soft_nms(scores, boxes, kernel, iou_threshold, sigma, score_threshold, max_detections):
    """Greedy soft NMS on a dict {candidate: score}; returns [(candidate, score)] in pick
    order. kernel 0: score * 0 past the IoU threshold, 1: * (1 - IoU), 2: gaussian."""
    remaining = dict(scores)
    picked = []
    while remaining and (max_detections < 0 or len(picked) < max_detections):
        top = max(remaining, key=lambda c: remaining[c])
        picked.append((top, remaining.pop(top)))
        for c in list(remaining):
            v = iou(boxes[c], boxes[top])
            if kernel == 2:
                factor = f(math.exp(-(v * v) / sigma))
            else:
                factor = f(1) if v < iou_threshold else (f(1) - v if kernel == 1 else f(0))
            remaining[c] = f(remaining[c] * factor)
            if remaining[c] < score_threshold:
                del remaining[c]
    return picked


def box_with_nms_limit(scores, rois, batches, score_threshold, max_detections, kernel,
                       iou_threshold, sigma, nms_score_threshold):
    """(flat indices, scores) as the kernel's; batches are runs of equal ids."""
    scores = np.asarray(scores, f)
    num_classes = scores.shape[1]
    boxes = np.asarray(rois, f).reshape(-1, 4)
    out_idx, out_scores = [], []
    for b in dict.fromkeys(batches):
        rows = [r for r in range(len(batches)) if batches[r] == b]
        kept = []
        for c in range(1, num_classes):
            cand = {r * num_classes + c: scores[r, c] for r in rows
                    if scores[r, c] > f(score_threshold)}
            kept += soft_nms(cand, boxes, kernel, f(iou_threshold), f(sigma),
                             f(nms_score_threshold), max_detections)
        kept.sort(key=lambda p: -p[1])
        if max_detections >= 0:
            kept = kept[:max_detections]
        kept.sort(key=lambda p: p[0] % num_classes)
        out_idx += [i for i, _ in kept]
        out_scores += [s for _, s in kept]
    return np.array(out_idx, np.int64), np.array(out_scores, f)


def roi_align(x, rois, batches, out_h, out_w, h_stride, w_stride, h_ratio, w_ratio):
    """Float ROI_ALIGN (NHWC), one bilinear sample at a time."""
    _, height, width, depth = x.shape
    out = np.zeros((len(rois), out_h, out_w, depth), f)
    for r, (roi, b) in enumerate(zip(np.asarray(rois, f), batches)):
        x0, y0 = roi[0] * (f(1) / f(w_stride)), roi[1] * (f(1) / f(h_stride))
        x1, y1 = roi[2] * (f(1) / f(w_stride)), roi[3] * (f(1) / f(h_stride))
        step_w, step_h = max(x1 - x0, f(1)) / f(out_w), max(y1 - y0, f(1)) / f(out_h)
        rw = w_ratio if w_ratio > 0 else math.ceil(step_w)
        rh = h_ratio if h_ratio > 0 else math.ceil(step_h)
        bin_w, bin_h = step_w / f(rw), step_h / f(rh)
        for i in range(out_h):
            for j in range(out_w):
                acc = np.zeros(depth, f)
                for yi in range(rh):
                    for xi in range(rw):
                        y = step_h * f(i) + y0 + bin_h / f(2) + bin_h * f(yi)
                        xx = step_w * f(j) + x0 + bin_w / f(2) + bin_w * f(xi)
                        acc += _bilinear(x[b], xx, y, height, width)
                out[r, i, j] = acc / f(rh * rw)
    return out


def _bilinear(img, x, y, height, width):
    xl, yl = math.floor(x), math.floor(y)
    dx, dy = f(x - f(xl)), f(y - f(yl))
    xh, yh = xl + 1, yl + 1
    if xl >= width - 1:
        xl = xh = width - 1
        dx = f(0)
    if yl >= height - 1:
        yl = yh = height - 1
        dy = f(0)
    ex, ey = f(1) - dx, f(1) - dy
    return (ex * ey * img[yl, xl] + dx * ey * img[yl, xh] + ex * dy * img[yh, xl]
            + dx * dy * img[yh, xh]).astype(f)
