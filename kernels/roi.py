"""Region-of-interest kernels: ROI_ALIGN, ROI_POOLING and HEATMAP_MAX_KEYPOINT.

Semantics of AOSP ``common/cpu_operations/RoiAlign.cpp``, ``RoiPooling.cpp`` and
``HeatmapMaxKeypoint.cpp``, NHWC layout. A roi is ``(x1, y1, x2, y2)`` in image coordinates
and is mapped onto the feature map by ``1 / stride`` (float32 arithmetic throughout; the
float16 ROI_POOLING bin bounds are computed in float16 as AOSP's ``_Float16`` template does).
The per-roi quantities are precomputed with numpy in the wrappers; the numba cores do the
per-bin, per-sample and per-channel work.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels._builtins import empty, greater, lesser, zeros

from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import (
    multiply_by_quantized_multiplier,
    quantize_multiplier,
)

__all__ = ["heatmap_max_keypoint", "roi_align", "roi_pooling"]

F32 = np.float32


def _check(cond, message):
    if not np.all(cond):
        raise ValueError(message)


# -- ROI_ALIGN -------------------------------------------------------------------------------------

def roi_align(x, rois, batches, out_h, out_w, h_stride, w_stride, h_ratio, w_ratio, *,
              quant=None):
    """ROI_ALIGN of NHWC ``x [N, H, W, C]`` over ``rois [R, 4]``; returns ``[R, out_h, out_w, C]``.

    Each output bin averages ``h_ratio x w_ratio`` bilinear samples (a ratio of 0 means
    ``ceil(bin size)``). Float inputs compute in float32. With ``quant = (in_scale, in_zp,
    out_scale, out_zp)`` ``x`` is uint8 / int8 and ``rois`` the raw uint16 values of scale
    0.125: the bilinear weights are quantized to 1/255 and the sum requantized with a
    per-roi multiplier (AOSP ``roiAlignQuantNhwc``).
    """
    n, height, width, depth = x.shape
    batches = np.asarray(batches, dtype=np.int32)
    _check((batches >= 0) & (batches < n), "roi batch index out of range")
    hs, ws = F32(1.0) / F32(h_stride), F32(1.0) / F32(w_stride)
    if quant is None:
        r = np.asarray(rois, dtype=F32).reshape(-1, 4)
        _check(r >= 0, "roi coordinates must be >= 0")
        x1, y1, x2, y2 = r[:, 0] * ws, r[:, 1] * hs, r[:, 2] * ws, r[:, 3] * hs
        _check((r[:, 0] <= r[:, 2]) & (r[:, 1] <= r[:, 3]), "roi has x2 < x1 or y2 < y1")
    else:
        r = np.asarray(rois, dtype=np.uint16).reshape(-1, 4).astype(F32)
        eighth = F32(0.125)
        x1, y1, x2, y2 = r[:, 0] * ws * eighth, r[:, 1] * hs * eighth, \
            r[:, 2] * ws * eighth, r[:, 3] * hs * eighth
        _check((x1 <= x2) & (y1 <= y2), "roi has x2 < x1 or y2 < y1")
    _check((x1 <= width) & (x2 <= width) & (y1 <= height) & (y2 <= height),
           "roi lies outside the feature map")
    bin_w = np.maximum(x2 - x1, F32(1.0)) / F32(out_w)
    bin_h = np.maximum(y2 - y1, F32(1.0)) / F32(out_h)
    ratio_w = np.full(len(r), w_ratio, np.int64) if w_ratio > 0 else np.ceil(bin_w).astype(np.int64)
    ratio_h = np.full(len(r), h_ratio, np.int64) if h_ratio > 0 else np.ceil(bin_h).astype(np.int64)
    geom = np.stack([x1, y1, bin_w, bin_h, bin_w / ratio_w.astype(F32),
                     bin_h / ratio_h.astype(F32)], axis=1)
    ratios = np.stack([ratio_h, ratio_w], axis=1)
    if quant is None:
        src = np.ascontiguousarray(x, dtype=F32)
        out = np.empty((len(r), out_h, out_w, depth), F32)
        _roi_align_float_core(src, batches, geom, ratios, out)
        return out.astype(x.dtype, copy=False)
    in_scale, in_zp, out_scale, out_zp = quant
    points = (ratio_h * ratio_w).astype(F32)
    real = F32(in_scale) * (F32(1.0) / F32(255.0)) / F32(out_scale) / points
    _check(real < 1.0, "requantization multiplier must be < 1")
    mult = np.array([quantize_multiplier(float(m)) for m in real], dtype=np.int64)
    info = np.iinfo(x.dtype)
    out = np.empty((len(r), out_h, out_w, depth), x.dtype)
    _roi_align_quant_core(np.ascontiguousarray(x), batches, geom, ratios, mult, int(in_zp),
                          int(out_zp), info.min, info.max, out)
    return out


@njit(inner=True)
def _sample(x, y, height, width):
    """Corner indices and weights of the bilinear sample at (x, y) (edge samples clamp)."""
    x1, y1 = np.int64(np.floor(x)), np.int64(np.floor(y))
    x2, y2 = x1 + 1, y1 + 1
    dx, dy = x - F32(x1), y - F32(y1)
    if x1 >= width - 1:
        x1 = x2 = width - 1
        dx = F32(0.0)
    if y1 >= height - 1:
        y1 = y2 = height - 1
        dy = F32(0.0)
    ex, ey = F32(1.0) - dx, F32(1.0) - dy
    return x1, y1, x2, y2, ex * ey, dx * ey, ex * dy, dx * dy


@njit
def _roi_align_float_core(src, batches, geom, ratios, out):
    height, width, depth = src.shape[1], src.shape[2], src.shape[3]
    half = F32(2.0)
    for r in range(out.shape[0]):
        img = src[batches[r]]
        x0, y0, step_w, step_h, bin_w, bin_h = (geom[r, 0], geom[r, 1], geom[r, 2],
                                                 geom[r, 3], geom[r, 4], geom[r, 5])
        rh, rw = ratios[r, 0], ratios[r, 1]
        count = F32(rh * rw)
        for i in range(out.shape[1]):
            h_start = step_h * F32(i) + y0
            for j in range(out.shape[2]):
                w_start = step_w * F32(j) + x0
                acc = zeros(depth, np.float32)
                for yi in range(rh):
                    y = h_start + bin_h / half + bin_h * F32(yi)
                    for xi in range(rw):
                        x = w_start + bin_w / half + bin_w * F32(xi)
                        x1, y1, x2, y2, w11, w12, w21, w22 = _sample(x, y, height, width)
                        for k in range(depth):
                            v = F32(0.0)
                            v += w11 * img[y1, x1, k]
                            v += w12 * img[y1, x2, k]
                            v += w21 * img[y2, x1, k]
                            v += w22 * img[y2, x2, k]
                            acc[k] += v
                for k in range(depth):
                    out[r, i, j, k] = acc[k] / count


@njit
def _round_half_away(v):
    """``std::round`` of a float32 (in float64, where ``v + 0.5`` is exact)."""
    d = np.float64(v)
    return np.floor(d + 0.5) if d >= 0.0 else -np.floor(-d + 0.5)


@njit
def _roi_align_quant_core(src, batches, geom, ratios, mult, in_zp, out_zp, qmin, qmax, out):
    height, width, depth = src.shape[1], src.shape[2], src.shape[3]
    half = F32(2.0)
    w_scale = F32(1.0) / F32(255.0)
    for r in range(out.shape[0]):
        img = src[batches[r]]
        x0, y0, step_w, step_h, bin_w, bin_h = (geom[r, 0], geom[r, 1], geom[r, 2],
                                                 geom[r, 3], geom[r, 4], geom[r, 5])
        rh, rw = ratios[r, 0], ratios[r, 1]
        for i in range(out.shape[1]):
            h_start = step_h * F32(i) + y0
            for j in range(out.shape[2]):
                w_start = step_w * F32(j) + x0
                acc = zeros(depth, np.int64)
                for yi in range(rh):
                    y = h_start + bin_h / half + bin_h * F32(yi)
                    for xi in range(rw):
                        x = w_start + bin_w / half + bin_w * F32(xi)
                        x1, y1, x2, y2, w11, w12, w21, w22 = _sample(x, y, height, width)
                        q11 = np.int64(_round_half_away(w11 / w_scale))
                        q12 = np.int64(_round_half_away(w12 / w_scale))
                        q21 = np.int64(_round_half_away(w21 / w_scale))
                        q22 = np.int64(_round_half_away(w22 / w_scale))
                        for k in range(depth):
                            acc[k] += (q11 * (np.int64(img[y1, x1, k]) - in_zp)
                                       + q12 * (np.int64(img[y1, x2, k]) - in_zp)
                                       + q21 * (np.int64(img[y2, x1, k]) - in_zp)
                                       + q22 * (np.int64(img[y2, x2, k]) - in_zp))
                for k in range(depth):
                    v = multiply_by_quantized_multiplier(acc[k], mult[r, 0], mult[r, 1]) + out_zp
                    out[r, i, j, k] = lesser(greater(v, qmin), qmax)


# -- ROI_POOLING -----------------------------------------------------------------------------------

def roi_pooling(x, rois, batches, out_h, out_w, h_stride, w_stride, *, zero_point=0):
    """ROI_POOLING of NHWC ``x`` over float ``rois [R, 4]`` (float16 rois compute in float16);
    returns ``[R, out_h, out_w, C]`` of x's dtype. Each bin is the max over its cells; an
    empty bin gives ``zero_point``."""
    n, height, width, _ = x.shape
    batches = np.asarray(batches, dtype=np.int32)
    t = np.float16 if np.asarray(rois).dtype == np.float16 else F32
    r = np.asarray(rois).astype(t).reshape(-1, 4)
    hs, ws = t(F32(1.0) / F32(h_stride)), t(F32(1.0) / F32(w_stride))
    _check((batches >= 0) & (batches < n), "roi batch index out of range")
    _check(r >= 0, "roi coordinates must be >= 0")
    _check((r[:, 0] * ws <= width) & (r[:, 2] * ws <= width) & (r[:, 1] * hs <= height)
           & (r[:, 3] * hs <= height), "roi lies outside the feature map")
    _check((r[:, 0] <= r[:, 2]) & (r[:, 1] <= r[:, 3]), "roi has x2 < x1 or y2 < y1")
    start_w, start_h = _round(r[:, 0] * ws), _round(r[:, 1] * hs)
    end_w, end_h = _round(r[:, 2] * ws), _round(r[:, 3] * hs)
    w_bounds = _bin_bounds(start_w, end_w, out_w, width, t)
    h_bounds = _bin_bounds(start_h, end_h, out_h, height, t)
    # float16 maxima are exact in float32 (numba has no float16)
    src = np.ascontiguousarray(x, dtype=F32 if x.dtype == np.float16 else x.dtype)
    out = np.empty((len(r), out_h, out_w, x.shape[3]), src.dtype)
    _roi_pool_core(src, batches, h_bounds, w_bounds, src.dtype.type(zero_point), out)
    return out.astype(x.dtype, copy=False)


def _round(v):
    """``std::round`` of a float: half away from zero, as int64."""
    v = v.astype(np.float64)
    return (np.sign(v) * np.floor(np.abs(v) + 0.5)).astype(np.int64)


def _bin_bounds(start, end, bins, size, t):
    """[R, bins, 2] cell ranges: floor(step * j + start), ceil(step * (j + 1) + start), step
    = max(end - start + 1, 1) / bins in the roi type ``t``, clamped to ``size``."""
    step = np.maximum(end - start + 1, 1).astype(t) / t(bins)
    j = np.arange(bins + 1).astype(t)
    edges = step[:, None] * j[None, :] + start.astype(t)[:, None]
    lo = np.floor(edges[:, :-1].astype(F32)).astype(np.int64)
    hi = np.ceil(edges[:, 1:].astype(F32)).astype(np.int64)
    return np.minimum(np.stack([lo, hi], axis=2), size)


@njit
def _roi_pool_core(src, batches, h_bounds, w_bounds, fill, out):
    for r in range(out.shape[0]):
        img = src[batches[r]]
        for i in range(out.shape[1]):
            h0, h1 = h_bounds[r, i, 0], h_bounds[r, i, 1]
            for j in range(out.shape[2]):
                w0, w1 = w_bounds[r, j, 0], w_bounds[r, j, 1]
                for k in range(out.shape[3]):
                    best = fill
                    first = True
                    for h in range(h0, h1):
                        for w in range(w0, w1):
                            if first or img[h, w, k] > best:
                                best = img[h, w, k]
                                first = False
                    out[r, i, j, k] = best


# -- HEATMAP_MAX_KEYPOINT --------------------------------------------------------------------------

def heatmap_max_keypoint(heatmap, boxes, fp_atol=1e-5, fp_rtol=1e-5):
    """HEATMAP_MAX_KEYPOINT on float32 NHWC ``heatmap [R, S, S, K]`` and ``boxes [R, 4]``.

    Returns ``(scores [R, K], keypoints [R, K, 2])`` float32: the heatmap maximum refined by a
    second-order Taylor expansion over its 3x3 neighbourhood (edges mirrored), mapped into the
    box as (x, y). AOSP uses ``fp_atol = fp_rtol = 1e-5`` (1e-3 for float16) to decide that
    the Hessian is singular.
    """
    heatmap = np.ascontiguousarray(heatmap, dtype=F32)
    boxes = np.ascontiguousarray(boxes, dtype=F32).reshape(-1, 4)
    _check((boxes[:, 0] <= boxes[:, 2]) & (boxes[:, 1] <= boxes[:, 3]),
           "box has x2 < x1 or y2 < y1")
    r, _, _, k = heatmap.shape
    scores = np.empty((r, k), F32)
    points = np.empty((r, k, 2), F32)
    _heatmap_core(heatmap, boxes, F32(fp_atol), F32(fp_rtol), scores, points)
    return scores, points


@njit(inner=True)
def _mirror(i, size):
    return 1 if i < 0 else (size - 2 if i >= size else i)


@njit(error_model="numpy")
def _heatmap_core(heatmap, boxes, atol, rtol, scores, points):
    size = heatmap.shape[1]
    two, four, half = F32(2.0), F32(4.0), F32(0.5)
    grid = empty((3, 3), np.float32)
    for r in range(heatmap.shape[0]):
        for j in range(heatmap.shape[3]):
            best, arg = F32(-3.4028234663852886e38), 0
            for p in range(size * size):
                if best < heatmap[r, p // size, p % size, j]:
                    best, arg = heatmap[r, p // size, p % size, j], p
            mh, mw = arg // size, arg % size
            for dh in range(3):
                for dw in range(3):
                    grid[dh, dw] = heatmap[r, _mirror(mh + dh - 1, size),
                                           _mirror(mw + dw - 1, size), j]
            # 2nd order Taylor expansion at the centre: solve A delta = b
            b0 = -(grid[1, 2] - grid[1, 0]) / two
            b1 = -(grid[2, 1] - grid[0, 1]) / two
            a00 = grid[1, 0] - two * grid[1, 1] + grid[1, 2]
            a01 = (grid[2, 2] - grid[2, 0] - grid[0, 2] + grid[0, 0]) / four
            a11 = grid[0, 1] - two * grid[1, 1] + grid[2, 1]
            cross = a00 * a11
            det = cross - a01 * a01
            d0, d1, score = F32(0.0), F32(0.0), best
            if not (abs(det) < atol + rtol * cross):
                d0 = (a11 * b0 - a01 * b1) / det
                d1 = (a00 * b1 - a01 * b0) / det
                if abs(d0) > F32(1.5) or abs(d1) > F32(1.5):
                    s = F32(1.5) / greater(abs(d0), abs(d1))
                    d0 *= s
                    d1 *= s
                score = grid[1, 1] - b0 * d0 - b1 * d1 + \
                    ((a00 * d0 + a01 * d1) * d0 + (a01 * d0 + a11 * d1) * d1) / two
            x1, y1, x2, y2 = boxes[r, 0], boxes[r, 1], boxes[r, 2], boxes[r, 3]
            wpos = (F32(mw) + d0 + half) / F32(size)
            hpos = (F32(mh) + d1 + half) / F32(size)
            scores[r, j] = score
            points[r, j, 0] = wpos * (x2 - x1) + x1
            points[r, j, 1] = hpos * (y2 - y1) + y1
