"""Reference FULLY_CONNECTED (numpy): the oracle for :mod:`nnsim.kernels.fully_connected`."""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels.reference.conv import requantize_accumulators


def fully_connected(
    x, w, bias, *, fuse=0, in_scale=None, in_zp=0, w_scales=None, w_zp=0, out_scale=None,
    out_zp=0, out_dtype=None,
):
    """Reference fully connected; see :func:`nnsim.kernels.fully_connected.fully_connected`."""
    x, w = np.asarray(x), np.asarray(w)
    units = w.shape[0]
    if not cm.is_quantized(x.dtype):
        acc = x.astype(np.float64) @ w.astype(np.float64).T
        b = np.zeros(units) if bias is None else np.asarray(bias, np.float64)
        lo, hi = cm.float_activation_range(fuse)
        return np.clip(acc + b, lo, hi).astype(np.float32).astype(x.dtype)

    acc = (x.astype(np.int64) - int(in_zp)) @ (w.astype(np.int64) - int(w_zp)).T
    scales = cm.filter_scales(w_scales, units)
    mults, shifts = cm.conv_multipliers(in_scale, scales, out_scale, units, scales.size == 1)
    odt = cm.output_dtype(out_dtype, x.dtype)
    lo, hi = cm.quant_clamp(fuse, out_scale, out_zp, odt)
    return requantize_accumulators(acc, bias, mults, shifts, out_zp, lo, hi, odt)
