"""Reference RESIZE_NEAREST_NEIGHBOR and bilinear template (numpy, vectorised over the
output grid): the oracle for :mod:`nnsim.kernels.resize_image`."""

from __future__ import annotations

import numpy as np

from nnsim.kernels.resize_image import resize_scale


def _round_half_away(v):
    return np.where(v >= 0, np.floor(v + np.float32(0.5)), -np.floor(-v + np.float32(0.5)))


def _nearest(in_size, out_size, align, half):
    scale = resize_scale(in_size, out_size, align)
    d = np.arange(out_size, dtype=np.float32)
    src = ((d + np.float32(0.5)) * scale if half else d * scale).astype(np.float32)
    i = (_round_half_away(src) if align else np.floor(src)).astype(np.int64)
    i = np.minimum(i, in_size - 1)
    return np.maximum(i, 0) if half else i


def resize_nearest_neighbor(x, out_h, out_w, *, align_corners=False, half_pixel_centers=False):
    """Reference; see :func:`nnsim.kernels.resize_image.resize_nearest_neighbor`."""
    x = np.asarray(x)
    rows = _nearest(x.shape[1], out_h, align_corners, half_pixel_centers)
    cols = _nearest(x.shape[2], out_w, align_corners, half_pixel_centers)
    return x[:, rows[:, None], cols[None, :], :]


def _grid(in_size, out_size, align, half):
    scale = resize_scale(in_size, out_size, align)
    d = np.arange(out_size, dtype=np.float32)
    src = ((d + np.float32(0.5)) * scale - np.float32(0.5) if half else d * scale)
    src = src.astype(np.float32)
    lo = np.maximum(np.floor(src).astype(np.int64), 0)
    hi = np.minimum(np.ceil(src).astype(np.int64), in_size - 1)
    return (src - lo.astype(np.float32)).astype(np.float32), lo, hi


def resize_bilinear_template(x, out_h, out_w, *, align_corners=False, half_pixel_centers=False):
    """Reference; see :func:`nnsim.kernels.resize_image.resize_bilinear_template`."""
    x = np.asarray(x)
    dy, y0, y1 = _grid(x.shape[1], out_h, align_corners, half_pixel_centers)
    dx, x0, x1 = _grid(x.shape[2], out_w, align_corners, half_pixel_centers)
    f = x.astype(np.float32)
    one = np.float32(1.0)
    wy0, wy1 = (one - dy)[None, :, None, None], dy[None, :, None, None]
    wx0, wx1 = (one - dx)[None, None, :, None], dx[None, None, :, None]
    r0, r1 = f[:, y0], f[:, y1]
    v = (r0[:, :, x0] * wy0) * wx0
    v = v + (r1[:, :, x0] * wy1) * wx0
    v = v + (r0[:, :, x1] * wy0) * wx1
    v = v + (r1[:, :, x1] * wy1) * wx1
    if x.dtype.kind in "iu":
        v = np.trunc(v + np.float32(0.5))
    return v.astype(x.dtype)
