"""Reference AVERAGE_POOL_2D / MAX_POOL_2D (numpy): the oracle for :mod:`nnsim.kernels.pooling`.

The input is padded (zeros for the average with a separate tap-count array, the type's lowest
value for the max) and every window tap is a strided slice.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels.reference import _fixed_point as fx


def _taps(array, fh, fw, sh, sw, pads, fill):
    """Yield the strided slice of every window tap over ``array`` padded with ``fill``."""
    pt, pb, pl, pr = pads
    n, h, w = array.shape[:3]
    oh = cm.conv_out_size(h, fh, sh, 1, pt, pb)
    ow = cm.conv_out_size(w, fw, sw, 1, pl, pr)
    padded = np.pad(array, ((0, 0), (pt, pb), (pl, pr), (0, 0)), constant_values=fill)
    for ky in range(fh):
        for kx in range(fw):
            yield padded[:, ky: ky + (oh - 1) * sh + 1: sh, kx: kx + (ow - 1) * sw + 1: sw, :]


def average_pool_2d(
    x, *, filter_h, filter_w, stride_h, stride_w, pad_top, pad_bottom, pad_left, pad_right,
    fuse=0, out_scale=None, out_zp=0,
):
    """Reference average pool; see :func:`nnsim.kernels.pooling.average_pool_2d`."""
    x = np.asarray(x)
    geo = (filter_h, filter_w, stride_h, stride_w, (pad_top, pad_bottom, pad_left, pad_right))
    quantized = cm.is_quantized(x.dtype)
    values = x.astype(np.int64) if quantized else x.astype(np.float64)
    total = sum(_taps(values, *geo, 0))
    count = sum(_taps(np.ones(x.shape[:3] + (1,), np.int64), *geo, 0))
    count = np.maximum(count, 1)
    if not quantized:
        lo, hi = cm.float_activation_range(fuse)
        return np.clip(total / count, lo, hi).astype(np.float32).astype(x.dtype)
    half = count // 2
    avg = np.where(total > 0, (total + half) // count, -((half - total) // count))
    lo, hi = cm.quant_clamp(fuse, out_scale, out_zp, x.dtype)
    return fx.clamp_cast(avg, lo, hi, x.dtype)


def max_pool_2d(
    x, *, filter_h, filter_w, stride_h, stride_w, pad_top, pad_bottom, pad_left, pad_right,
    fuse=0, out_scale=None, out_zp=0,
):
    """Reference max pool; see :func:`nnsim.kernels.pooling.max_pool_2d`."""
    x = np.asarray(x)
    geo = (filter_h, filter_w, stride_h, stride_w, (pad_top, pad_bottom, pad_left, pad_right))
    if cm.is_quantized(x.dtype):
        lowest = np.iinfo(x.dtype).min
        result = np.maximum.reduce(list(_taps(x.astype(np.int64), *geo, lowest)))
        lo, hi = cm.quant_clamp(fuse, out_scale, out_zp, x.dtype)
        return fx.clamp_cast(result, lo, hi, x.dtype)
    lowest = np.finfo(np.float32).min
    result = np.maximum.reduce(list(_taps(x.astype(np.float32), *geo, lowest)))
    lo, hi = cm.float_activation_range(fuse)
    return np.clip(result, lo, hi).astype(np.float32).astype(x.dtype)
