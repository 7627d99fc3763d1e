"""RESIZE_BILINEAR (NHWC), float32, uint8, int8 and int16; numba fast path.

Matches TFLite's reference kernels (``BUILTIN_REF``):

* float32 and uint8, ``reference_ops::ResizeBilinear<T>`` (float arithmetic)::

      scale = float32(in) / out          # (in - 1) / (out - 1) with align_corners, out > 1
      src = (dst + 0.5f) * scale - 0.5f  if half_pixel_centers  else  dst * scale
      lo = max(int(floor(src)), 0);  hi = min(int(ceil(src)), in - 1)
      v = p00*(1-dy)*(1-dx) + p10*dy*(1-dx) + p01*(1-dy)*dx + p11*dy*dx + offset
      out = T(v)                          # offset 0.5 for uint8 (truncating cast), 0 for float

  all in float32, left to right, with ``dy = src_y - lo_y``.

* int8 / int16, ``reference_ops::ResizeBilinearInteger`` (10-bit fixed point)::

      scale10 = ((1 << 10) * in + out / 2) / out     # align: ((1<<10)(in-1) + (out-1)/2)/(out-1)
      src = dst * scale10 + scale10 / 2 - (1 << 9)    if half_pixel_centers  else  dst * scale10
      lo = max(src / 1024, 0);  hi = min((src + 1023) / 1024, in - 1)      # C '/' truncates
      v20 = sum(corner * wy * wx)   (weights in 1/1024)
      out = (v20 + (v20 > 0 ? 2**19 : -2**19)) / 2**20                     # C '/' truncates
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import empty, greater, lesser
from nnsim.kernels._jit import njit

__all__ = ["resize_bilinear", "float_scale", "integer_scale"]


def float_scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    """The float32 source/destination scale of the float template."""
    if align_corners and out_size > 1:
        return np.float32(np.float32(in_size - 1) / np.float32(out_size - 1))
    return np.float32(np.float32(in_size) / np.float32(out_size))


def integer_scale(in_size: int, out_size: int, align_corners: bool) -> int:
    """The 10-bit fixed-point scale of the integer kernel."""
    if align_corners and out_size > 1:
        return ((1 << 10) * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
    return ((1 << 10) * in_size + out_size // 2) // out_size


def resize_bilinear(x, out_h, out_w, *, align_corners=False, half_pixel_centers=False):
    """Bilinear resize of the spatial dimensions.

    Parameters
    ----------
    x : ndarray [N, H, W, C]
        float32, uint8, int8 or int16 (quantized values are resized raw: TFLite requires the
        output to share the input's quantization).
    out_h, out_w : int
        Output size (>= 1).
    align_corners, half_pixel_centers : bool
        TFLite's options (not both).

    Returns
    -------
    ndarray [N, out_h, out_w, C], dtype of ``x``.
    """
    x = np.asarray(x)
    cm.check_rank("input", x, 4)
    cm.check_dtype("input", x, (np.float32, np.uint8, np.int8, np.int16))
    out_h, out_w = int(out_h), int(out_w)
    if out_h < 1 or out_w < 1:
        raise ValueError(f"output size must be positive, got {out_h}x{out_w}")
    if align_corners and half_pixel_centers:
        raise ValueError("align_corners and half_pixel_centers cannot both be set")
    n, h, w, c = x.shape
    out = np.empty((n, out_h, out_w, c), dtype=x.dtype)
    xc = np.ascontiguousarray(x)
    if x.dtype in (np.int8, np.int16):
        _resize_integer_core(xc, integer_scale(h, out_h, align_corners),
                             integer_scale(w, out_w, align_corners), bool(half_pixel_centers),
                             out)
        return out
    offset = np.float32(0.5) if x.dtype == np.uint8 else np.float32(0.0)
    _resize_float_core(xc, float_scale(h, out_h, align_corners),
                       float_scale(w, out_w, align_corners), bool(half_pixel_centers), offset,
                       out)
    return out


@njit(inner=True)
def _interp_float(dst, scale, half_pixel, in_size):
    if half_pixel:
        src = (np.float32(dst) + np.float32(0.5)) * scale - np.float32(0.5)
    else:
        src = np.float32(dst) * scale
    lo = greater(np.int64(np.floor(src)), 0)
    hi = lesser(np.int64(np.ceil(src)), in_size - 1)
    return np.float32(src), lo, hi


@njit
def _resize_float_core(x, scale_h, scale_w, half_pixel, offset, out):
    n, in_h, in_w, depth = x.shape
    _, out_h, out_w, _ = out.shape
    one = np.float32(1.0)
    # each column's corners and weight, once (computed per output pixel, with their floor
    # and ceil, they took more than half the time: DeepLab's 33x33x21 -> 513x513 layer 7.3
    # -> 3.0 ms)
    x0s, x1s = empty(out_w, np.int64), empty(out_w, np.int64)
    dxs = empty(out_w, np.float32)
    for ox in range(out_w):
        sx, x0s[ox], x1s[ox] = _interp_float(ox, scale_w, half_pixel, in_w)
        dxs[ox] = np.float32(sx - np.float32(x0s[ox]))
    for b in range(n):
        for oy in range(out_h):
            sy, y0, y1 = _interp_float(oy, scale_h, half_pixel, in_h)
            dy = np.float32(sy - np.float32(y0))
            w00 = np.float32(one - dy)
            for ox in range(out_w):
                x0, x1, dx = x0s[ox], x1s[ox], dxs[ox]
                w01 = np.float32(one - dx)
                for c in range(depth):
                    v = np.float32(np.float32(np.float32(x[b, y0, x0, c]) * w00) * w01)
                    v = np.float32(v + np.float32(np.float32(np.float32(x[b, y1, x0, c]) * dy)
                                                  * w01))
                    v = np.float32(v + np.float32(np.float32(np.float32(x[b, y0, x1, c]) * w00)
                                                  * dx))
                    v = np.float32(v + np.float32(np.float32(np.float32(x[b, y1, x1, c]) * dy)
                                                  * dx))
                    v = np.float32(v + offset)
                    out[b, oy, ox, c] = v
    return out


@njit(inner=True)
def _interp_int(dst, scale10, half_pixel, in_size):
    if half_pixel:
        src = dst * scale10 + scale10 // 2 - (1 << 9)
    else:
        src = dst * scale10
    lo_q = src // 1024 if src >= 0 else -((-src) // 1024)
    lo = greater(lo_q, 0)
    t = src + 1023
    hi_q = t // 1024 if t >= 0 else -((-t) // 1024)
    hi = lesser(hi_q, in_size - 1)
    return src, lo, hi


@njit
def _resize_integer_core(x, scale_h, scale_w, half_pixel, out):
    n, in_h, in_w, depth = x.shape
    _, out_h, out_w, _ = out.shape
    x0s, x1s, wx1s = (empty(out_w, np.int64), empty(out_w, np.int64),
                      empty(out_w, np.int64))
    for ox in range(out_w):   # each column's corners and weight, once
        sx, x0s[ox], x1s[ox] = _interp_int(np.int64(ox), scale_w, half_pixel, in_w)
        wx1s[ox] = sx - 1024 * x0s[ox]
    for b in range(n):
        for oy in range(out_h):
            sy, y0, y1 = _interp_int(np.int64(oy), scale_h, half_pixel, in_h)
            wy1 = sy - 1024 * y0
            wy0 = 1024 - wy1
            for ox in range(out_w):
                x0, x1, wx1 = x0s[ox], x1s[ox], wx1s[ox]
                wx0 = 1024 - wx1
                for c in range(depth):
                    v = (np.int64(x[b, y0, x0, c]) * wy0 * wx0
                         + np.int64(x[b, y1, x0, c]) * wy1 * wx0
                         + np.int64(x[b, y0, x1, c]) * wy0 * wx1
                         + np.int64(x[b, y1, x1, c]) * wy1 * wx1)
                    v = v + (524288 if v > 0 else -524288)
                    q = v // 1048576 if v >= 0 else -((-v) // 1048576)
                    out[b, oy, ox, c] = q
    return out
