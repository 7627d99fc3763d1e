"""AVERAGE_POOL_2D and MAX_POOL_2D (NHWC), float and 8-bit quantized; numba fast path.

Matches TFLite ``reference_ops::AveragePool`` / ``MaxPool`` and the ``reference_integer_ops``
int8 versions. Quantized pools work on raw quantized values (input and output share scale and
zero point); only in-image taps count. The integer average rounds half away from zero::

    avg = (sum + count // 2) / count   if sum > 0   else   (sum - count // 2) / count   (C '/')

which for uint8 (sum >= 0) is TFLite's ``(sum + count / 2) / count``. The float average is the
float32 sum in (ky, kx) order divided by the float count. Results are clamped to the fused
activation range (computed from ``out_scale`` / ``out_zp`` for quantized tensors).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import empty, greater, lesser
from nnsim.kernels._jit import njit

__all__ = ["average_pool_2d", "max_pool_2d", "bind_pool_2d"]


def bind_pool_2d(kind, x, out, *, filter_h, filter_w, stride_h, stride_w, pad_top, pad_bottom,
                 pad_left, pad_right, fuse=0, out_scale=None, out_zp=0):
    """A function of no arguments writing the pool (``kind`` "avg" or "max") of the current
    contents of ``x`` into ``out`` (both fixed, C-contiguous, float32 / uint8 / int8, ``out``
    of the pool's shape and ``x``'s dtype), for an interpreter's fixed buffers; None when the
    arguments do not allow it (call :func:`average_pool_2d` / :func:`max_pool_2d` instead)."""
    x, out = np.asarray(x), np.asarray(out)
    pads = (pad_top, pad_bottom, pad_left, pad_right)
    if (x.ndim != 4 or out.dtype != x.dtype or not x.flags.c_contiguous
            or not out.flags.c_contiguous or x.dtype not in (np.uint8, np.int8, np.float32)
            or filter_h < 1 or filter_w < 1):
        return None
    cm.check_conv_geometry(stride_h, stride_w, 1, 1, pads)
    oh = cm.conv_out_size(x.shape[1], filter_h, stride_h, 1, pad_top, pad_bottom)
    ow = cm.conv_out_size(x.shape[2], filter_w, stride_w, 1, pad_left, pad_right)
    if out.shape != (x.shape[0], oh, ow, x.shape[3]):
        return None
    geometry = (filter_h, filter_w, stride_h, stride_w, pad_top, pad_left)
    if x.dtype == np.float32:
        lo, hi = cm.float_clamp(fuse)
        if kind == "avg":
            return partial(_avg_pool_float_core, x, *geometry, lo, hi, out)
        return partial(_max_pool_float_core, x, *geometry, np.finfo(np.float32).min, lo, hi, out)
    lo, hi = cm.quant_clamp(fuse, out_scale, out_zp, x.dtype)
    if kind == "avg":
        return partial(_avg_pool_quant_core, x.view(np.uint8), _flip(x.dtype), *geometry,
                       int(lo), int(hi), out.view(np.uint8))
    return partial(_max_pool_quant_core, x, *geometry, int(np.iinfo(x.dtype).min), int(lo),
                   int(hi), out)


def _pool(kind, x, filter_h, filter_w, stride_h, stride_w, pads, fuse, out_scale, out_zp):
    x = np.asarray(x)
    cm.check_rank("input", x, 4)
    pad_top, pad_bottom, pad_left, pad_right = pads
    cm.check_conv_geometry(stride_h, stride_w, 1, 1, pads)
    if filter_h < 1 or filter_w < 1:
        raise ValueError("filter size must be >= 1")
    oh = cm.conv_out_size(x.shape[1], filter_h, stride_h, 1, pad_top, pad_bottom)
    ow = cm.conv_out_size(x.shape[2], filter_w, stride_w, 1, pad_left, pad_right)
    geometry = (filter_h, filter_w, stride_h, stride_w, pad_top, pad_left)
    if cm.is_quantized(x.dtype):
        lo, hi = cm.quant_clamp(fuse, out_scale, out_zp, x.dtype)
        out = np.empty((x.shape[0], oh, ow, x.shape[3]), dtype=x.dtype)
        xc = np.ascontiguousarray(x)
        if kind == "avg":
            _avg_pool_quant_core(xc.view(np.uint8), _flip(x.dtype), *geometry, int(lo), int(hi),
                                 out.view(np.uint8))
        else:
            _max_pool_quant_core(xc, *geometry, int(np.iinfo(x.dtype).min), int(lo), int(hi), out)
        return out
    cm.check_dtype("input", x, cm.FLOAT_DTYPES)
    x32, dtype = cm.to_float32(x)
    lo, hi = cm.float_clamp(fuse)
    out = np.empty((x.shape[0], oh, ow, x.shape[3]), dtype=np.float32)
    if kind == "avg":
        _avg_pool_float_core(x32, *geometry, lo, hi, out)
    else:
        _max_pool_float_core(x32, *geometry, np.finfo(np.float32).min, lo, hi, out)
    return out.astype(dtype, copy=False)


def average_pool_2d(
    x, *, filter_h, filter_w, stride_h, stride_w, pad_top, pad_bottom, pad_left, pad_right,
    fuse=0, out_scale=None, out_zp=0,
):
    """Average pooling over in-image taps, NHWC.

    Parameters
    ----------
    x : ndarray [N, H, W, C]
        float32 / float16 / uint8 / int8; the output has the same dtype (and quantization).
    filter_h, filter_w, stride_h, stride_w, pad_top, pad_bottom, pad_left, pad_right : int
        Window geometry with explicit padding.
    fuse : int
        NNAPI fuse code.
    out_scale, out_zp
        Output quantization, used for the fused activation range only.

    Returns
    -------
    ndarray [N, OH, OW, C]
    """
    pads = (pad_top, pad_bottom, pad_left, pad_right)
    return _pool("avg", x, filter_h, filter_w, stride_h, stride_w, pads, fuse, out_scale, out_zp)


def max_pool_2d(
    x, *, filter_h, filter_w, stride_h, stride_w, pad_top, pad_bottom, pad_left, pad_right,
    fuse=0, out_scale=None, out_zp=0,
):
    """Max pooling over in-image taps, NHWC; arguments as :func:`average_pool_2d`."""
    pads = (pad_top, pad_bottom, pad_left, pad_right)
    return _pool("max", x, filter_h, filter_w, stride_h, stride_w, pads, fuse, out_scale, out_zp)


@njit(inline="always", inner=True)
def _window(o, stride, pad, size, filt):
    origin = o * stride - pad
    start = greater(0, -origin)
    end = lesser(filt, size - origin)
    return origin, start, end


def _flip(dtype):
    """The byte XOR that maps int8 to uint8 (x + 128); 0 for uint8."""
    return np.uint8(128 if np.dtype(dtype) == np.int8 else 0)


@njit
def _avg_pool_quant_core(x, flip, fh, fw, sh, sw, pad_top, pad_left, lo, hi, out):
    """``x``, ``out``: the bytes of uint8 or int8 tensors (int8 read as ``(x ^ flip) - 128``
    and written as its two's complement byte): one compiled variant for both types, not two
    (0.4 s of a cold start)."""
    batches, in_h, in_w, depth = x.shape
    _, out_h, out_w, _ = out.shape
    shift = np.int32(128 if flip else 0)
    acc = empty(depth, np.int32)
    for b in range(batches):
        for oy in range(out_h):
            y0, ys, ye = _window(oy, sh, pad_top, in_h, fh)
            for ox in range(out_w):
                x0, xs, xe = _window(ox, sw, pad_left, in_w, fw)
                acc[:] = 0
                count = 0
                for ky in range(ys, ye):
                    for kx in range(xs, xe):
                        count += 1
                        for c in range(depth):
                            acc[c] += np.int32(x[b, y0 + ky, x0 + kx, c] ^ flip) - shift
                count = greater(count, 1)  # an all-padding window averages to 0
                half = count // 2
                for c in range(depth):
                    s = np.int64(acc[c])
                    avg = (s + half) // count if s > 0 else -((half - s) // count)
                    out[b, oy, ox, c] = lesser(greater(avg, lo), hi) & 0xFF
    return out


@njit
def _max_pool_quant_core(x, fh, fw, sh, sw, pad_top, pad_left, type_min, lo, hi, out):
    batches, in_h, in_w, depth = x.shape
    _, out_h, out_w, _ = out.shape
    acc = empty(depth, np.int32)
    for b in range(batches):
        for oy in range(out_h):
            y0, ys, ye = _window(oy, sh, pad_top, in_h, fh)
            for ox in range(out_w):
                x0, xs, xe = _window(ox, sw, pad_left, in_w, fw)
                acc[:] = type_min
                for ky in range(ys, ye):
                    for kx in range(xs, xe):
                        for c in range(depth):
                            acc[c] = greater(acc[c], np.int32(x[b, y0 + ky, x0 + kx, c]))
                for c in range(depth):
                    out[b, oy, ox, c] = lesser(greater(acc[c], lo), hi)
    return out


@njit
def _avg_pool_float_core(x, fh, fw, sh, sw, pad_top, pad_left, lo, hi, out):
    batches, in_h, in_w, depth = x.shape
    _, out_h, out_w, _ = out.shape
    acc = empty(depth, np.float32)
    for b in range(batches):
        for oy in range(out_h):
            y0, ys, ye = _window(oy, sh, pad_top, in_h, fh)
            for ox in range(out_w):
                x0, xs, xe = _window(ox, sw, pad_left, in_w, fw)
                acc[:] = 0.0
                count = 0
                for ky in range(ys, ye):
                    for kx in range(xs, xe):
                        count += 1
                        for c in range(depth):
                            acc[c] += x[b, y0 + ky, x0 + kx, c]
                divisor = np.float32(greater(count, 1))
                for c in range(depth):
                    out[b, oy, ox, c] = lesser(greater(acc[c] / divisor, lo), hi)
    return out


@njit
def _max_pool_float_core(x, fh, fw, sh, sw, pad_top, pad_left, lowest, lo, hi, out):
    batches, in_h, in_w, depth = x.shape
    _, out_h, out_w, _ = out.shape
    acc = empty(depth, np.float32)
    for b in range(batches):
        for oy in range(out_h):
            y0, ys, ye = _window(oy, sh, pad_top, in_h, fh)
            for ox in range(out_w):
                x0, xs, xe = _window(ox, sw, pad_left, in_w, fw)
                acc[:] = lowest
                for ky in range(ys, ye):
                    for kx in range(xs, xe):
                        for c in range(depth):
                            acc[c] = greater(acc[c], x[b, y0 + ky, x0 + kx, c])
                for c in range(depth):
                    out[b, oy, ox, c] = lesser(greater(acc[c], lo), hi)
    return out
