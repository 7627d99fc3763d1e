"""Reference quantized FULLY_CONNECTED with single-rounding requantization (numpy): the
oracle for :mod:`nnsim.kernels.fc_quant`."""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels.reference import _fixed_point as fx


def fully_connected_quant(x, w, bias, *, fuse=0, in_scale, in_zp=0, w_scales, w_zp=0,
                          out_scale, out_zp=0, out_dtype=None):
    x, w = np.asarray(x), np.asarray(w)
    units = w.shape[0]
    scales = cm.filter_scales(w_scales, units)
    mults, shifts = cm.conv_multipliers(in_scale, scales, out_scale, units, scales.size == 1)
    acc = (x.astype(np.int64) - int(in_zp)) @ (w.astype(np.int64) - int(w_zp)).T
    if bias is not None:
        acc = acc + np.asarray(bias, np.int64)
    acc = fx.wrap32(acc)
    total = 31 - shifts.astype(np.int64)
    v = (acc * mults.astype(np.int64) + (np.int64(1) << (total - 1))) >> total
    odt = np.dtype(x.dtype if out_dtype is None else out_dtype)
    lo, hi = cm.quant_clamp(fuse, out_scale, out_zp, odt)
    return np.clip(v + int(out_zp), lo, hi).astype(odt)
