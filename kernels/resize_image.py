"""RESIZE_NEAREST_NEIGHBOR and NNAPI's int8 RESIZE_BILINEAR (NHWC); numba fast path.

NNAPI's CPU executor (``ResizeImageOps.cpp``) differs from TFLite in two places, both here:

* RESIZE_BILINEAR calls the *template* ``reference_ops::ResizeBilinear<T>`` for every type,
  int8 included (TFLite's own kernel uses the 10-bit integer ``ResizeBilinearInteger`` for
  int8). :func:`resize_bilinear_template` is that float template (float32 arithmetic, +0.5 and
  a truncating cast for integer types); float32 / uint8 are also in ``nnsim.kernels.resize``.
* RESIZE_NEAREST_NEIGHBOR is NNAPI's own loop (same result as TFLite's reference)::

      scale = in / out   ((in - 1) / (out - 1) with align_corners and out > 1), float32
      src = (dst + 0.5) * scale  if half_pixel_centers  else  dst * scale
      i = min(align_corners ? int(roundf(src)) : int(floorf(src)), in - 1)
      half_pixel_centers: i = max(i, 0)
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import greater, lesser
from nnsim.kernels._jit import njit

__all__ = ["resize_nearest_neighbor", "resize_bilinear_template", "resize_scale"]


def resize_scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    """``calculateResizeScale``: the float32 source / destination ratio."""
    if align_corners and out_size > 1:
        return np.float32(np.float32(in_size - 1) / np.float32(out_size - 1))
    return np.float32(np.float32(in_size) / np.float32(out_size))


def _check(x, out_h, out_w, align_corners, half_pixel_centers):
    x = np.asarray(x)
    cm.check_rank("input", x, 4)
    if int(out_h) < 1 or int(out_w) < 1:
        raise ValueError(f"output size must be positive, got {out_h}x{out_w}")
    if align_corners and half_pixel_centers:
        raise ValueError("align_corners and half_pixel_centers cannot both be set")
    return x


def resize_nearest_neighbor(x, out_h, out_w, *, align_corners=False, half_pixel_centers=False):
    """Nearest-neighbour resize of the spatial dimensions.

    Parameters
    ----------
    x : ndarray [N, H, W, C]
        Any dtype (values are copied).
    out_h, out_w : int
        Output size (>= 1).
    align_corners, half_pixel_centers : bool
        Not both.

    Returns
    -------
    ndarray [N, out_h, out_w, C], dtype of ``x``.
    """
    x = _check(x, out_h, out_w, align_corners, half_pixel_centers)
    n, h, w, c = x.shape
    rows = _nearest_index(h, int(out_h), align_corners, half_pixel_centers)
    cols = _nearest_index(w, int(out_w), align_corners, half_pixel_centers)
    return np.ascontiguousarray(x[:, rows][:, :, cols])


def _nearest_index(in_size, out_size, align_corners, half_pixel_centers) -> np.ndarray:
    out = np.empty(out_size, dtype=np.int64)
    _nearest_index_core(in_size, resize_scale(in_size, out_size, align_corners),
                        bool(align_corners), bool(half_pixel_centers), out)
    return out


def resize_bilinear_template(x, out_h, out_w, *, align_corners=False, half_pixel_centers=False):
    """``reference_ops::ResizeBilinear<T>`` for any dtype (NNAPI uses it for int8 too).

    Integer types add 0.5 before the truncating cast (``static_cast<T>``, toward zero).

    Returns
    -------
    ndarray [N, out_h, out_w, C], dtype of ``x``.
    """
    x = _check(x, out_h, out_w, align_corners, half_pixel_centers)
    n, h, w, c = x.shape
    out = np.empty((n, int(out_h), int(out_w), c), dtype=x.dtype)
    offset = np.float32(0.5) if x.dtype.kind in "iu" else np.float32(0.0)
    _bilinear_core(np.ascontiguousarray(x).astype(np.float32),
                   resize_scale(h, int(out_h), align_corners),
                   resize_scale(w, int(out_w), align_corners), bool(half_pixel_centers), offset,
                   out)
    return out


@njit
def _nearest_index_core(in_size, scale, align_corners, half_pixel, out):
    for d in range(out.size):
        src = (np.float32(d) + np.float32(0.5)) * scale if half_pixel else np.float32(d) * scale
        src = np.float32(src)
        if align_corners:  # roundf: half away from zero
            i = np.int64(np.floor(src + np.float32(0.5))) if src >= 0 else \
                -np.int64(np.floor(-src + np.float32(0.5)))
        else:
            i = np.int64(np.floor(src))
        i = lesser(i, in_size - 1)
        if half_pixel:
            i = greater(i, 0)
        out[d] = i
    return out


@njit
def _source(dst, scale, half_pixel, in_size):
    if half_pixel:
        v = np.float32(np.float32(np.float32(dst) + np.float32(0.5)) * scale) - np.float32(0.5)
    else:
        v = np.float32(dst) * scale
    v = np.float32(v)
    return v, greater(np.int64(np.floor(v)), 0), lesser(np.int64(np.ceil(v)), in_size - 1)


@njit
def _bilinear_core(x, scale_h, scale_w, half_pixel, offset, out):
    n, in_h, in_w, depth = x.shape
    one = np.float32(1.0)
    for b in range(n):
        for oy in range(out.shape[1]):
            sy, y0, y1 = _source(oy, scale_h, half_pixel, in_h)
            dy = np.float32(sy - np.float32(y0))
            for ox in range(out.shape[2]):
                sx, x0, x1 = _source(ox, scale_w, half_pixel, in_w)
                dx = np.float32(sx - np.float32(x0))
                for c in range(depth):
                    v = np.float32(np.float32(x[b, y0, x0, c] * (one - dy)) * (one - dx))
                    v = np.float32(v + np.float32(np.float32(x[b, y1, x0, c] * dy) * (one - dx)))
                    v = np.float32(v + np.float32(np.float32(x[b, y0, x1, c] * (one - dy)) * dx))
                    v = np.float32(v + np.float32(np.float32(x[b, y1, x1, c] * dy) * dx))
                    out[b, oy, ox, c] = np.float32(v + offset)
    return out
