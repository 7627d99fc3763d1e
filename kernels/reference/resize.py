"""Reference RESIZE_BILINEAR (numpy, vectorised over the image): oracle for
:mod:`nnsim.kernels.resize`."""

from __future__ import annotations

import numpy as np

from nnsim.kernels.resize import float_scale, integer_scale


def _coords_float(out_size, in_size, scale, half_pixel):
    dst = np.arange(out_size, dtype=np.float32)
    src = (dst + np.float32(0.5)) * scale - np.float32(0.5) if half_pixel else dst * scale
    src = src.astype(np.float32)
    lo = np.maximum(np.floor(src).astype(np.int64), 0)
    hi = np.minimum(np.ceil(src).astype(np.int64), in_size - 1)
    return (src - lo.astype(np.float32)).astype(np.float32), lo, hi


def _trunc_div(v, d):
    return np.where(v >= 0, v // d, -((-v) // d))


def _coords_int(out_size, in_size, scale10, half_pixel):
    dst = np.arange(out_size, dtype=np.int64)
    src = dst * scale10 + scale10 // 2 - (1 << 9) if half_pixel else dst * scale10
    lo = np.maximum(_trunc_div(src, 1024), 0)
    hi = np.minimum(_trunc_div(src + 1023, 1024), in_size - 1)
    return src - 1024 * lo, lo, hi


def resize_bilinear(x, out_h, out_w, *, align_corners=False, half_pixel_centers=False):
    """See :func:`nnsim.kernels.resize.resize_bilinear`."""
    x = np.asarray(x)
    _, h, w, _ = x.shape
    if x.dtype in (np.int8, np.int16):
        wy1, y0, y1 = _coords_int(out_h, h, integer_scale(h, out_h, align_corners),
                                  half_pixel_centers)
        wx1, x0, x1 = _coords_int(out_w, w, integer_scale(w, out_w, align_corners),
                                  half_pixel_centers)
        wy1, wx1 = wy1[None, :, None, None], wx1[None, None, :, None]
        wy0, wx0 = 1024 - wy1, 1024 - wx1
        v = x.astype(np.int64)
        total = (v[:, y0][:, :, x0] * wy0 * wx0 + v[:, y1][:, :, x0] * wy1 * wx0
                 + v[:, y0][:, :, x1] * wy0 * wx1 + v[:, y1][:, :, x1] * wy1 * wx1)
        total = total + np.where(total > 0, 1 << 19, -(1 << 19))
        return _trunc_div(total, 1 << 20).astype(x.dtype)
    dy, y0, y1 = _coords_float(out_h, h, float_scale(h, out_h, align_corners),
                               half_pixel_centers)
    dx, x0, x1 = _coords_float(out_w, w, float_scale(w, out_w, align_corners),
                               half_pixel_centers)
    dy, dx = dy[None, :, None, None], dx[None, None, :, None]
    one = np.float32(1)
    v = x.astype(np.float32)
    total = v[:, y0][:, :, x0] * (one - dy) * (one - dx)
    total = total + v[:, y1][:, :, x0] * dy * (one - dx)
    total = total + v[:, y0][:, :, x1] * (one - dy) * dx
    total = total + v[:, y1][:, :, x1] * dy * dx
    if x.dtype == np.uint8:
        total = total + np.float32(0.5)
    return total.astype(np.float32).astype(x.dtype)
