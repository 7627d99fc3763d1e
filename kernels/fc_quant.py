"""Quantized FULLY_CONNECTED as LiteRT's ``BUILTIN_REF`` resolver computes it; numba fast path.

LiteRT 2.x requantizes the FULLY_CONNECTED accumulators with a *single* rounding step,
unlike CONV_2D / DEPTHWISE_CONV_2D (double rounding, ``nnsim.kernels.conv``)::

    acc = bias[u] + sum_i (w[u, i] - w_zp) * (x[b, i] - in_zp)          # int32, wrapping
    out = clamp((acc * M[u] + 2**(30 - S[u])) >> (31 - S[u]) + out_zp)  # round half up

Multipliers as TFLite prepares them: per-tensor ``double(float32(in_scale * w_scale)) /
out_scale``, per-channel ``double(in_scale) * double(w_scale[u]) / double(out_scale)``.
Measured against ``ai_edge_litert`` 2.3 (uint8 per-tensor, int8 per-tensor and per-channel):
single rounding matches every output, double rounding differs in about 1 output of 64 at
small shifts. ``nnsim.kernels.fully_connected`` keeps the double-rounding rule (NNAPI's CPU
path); this module is the TFLite CPU path.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import empty, greater, lesser
from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import multiply_by_quantized_multiplier_single_rounding, wrap_int32

__all__ = ["fully_connected_quant"]


def fully_connected_quant(x, w, bias, *, fuse=0, in_scale, in_zp=0, w_scales, w_zp=0,
                          out_scale, out_zp=0, out_dtype=None):
    """``out = requant(x @ (w - w_zp).T + bias)`` for uint8 / int8 ``x [batches, in_size]``.

    Arguments as :func:`nnsim.kernels.fully_connected.fully_connected` (quantized only).
    """
    x, w = np.asarray(x), np.asarray(w)
    cm.check_rank("input", x, 2)
    cm.check_rank("weights", w, 2)
    cm.check_dtype("input", x, (np.uint8, np.int8))
    cm.check_dtype("weights", w, (np.uint8, np.int8))
    if w.shape[1] != x.shape[1]:
        raise ValueError(f"weights shape {w.shape} does not match input size {x.shape[1]}")
    units = w.shape[0]
    scales = cm.filter_scales(w_scales, units)
    mults, shifts = cm.conv_multipliers(in_scale, scales, out_scale, units, scales.size == 1)
    odt = cm.output_dtype(out_dtype, x.dtype)
    lo, hi = cm.quant_clamp(fuse, out_scale, out_zp, odt)
    out = np.empty((x.shape[0], units), dtype=odt)
    _fc_single_rounding_core(np.ascontiguousarray(x), int(in_zp), np.ascontiguousarray(w),
                             int(w_zp), cm.bias_int32(bias, units), mults, shifts, int(out_zp),
                             int(lo), int(hi), out)
    return out


@njit
def _fc_single_rounding_core(x, in_zp, w, w_zp, bias, mults, shifts, out_zp, lo, hi, out):
    batches, size = x.shape
    units = w.shape[0]
    row = empty(size, np.int64)
    for b in range(batches):
        row_sum = np.int64(0)
        for i in range(size):
            row[i] = np.int64(x[b, i]) - in_zp
            row_sum += row[i]
        for u in range(units):
            acc = np.int64(0)
            for i in range(size):
                acc += row[i] * np.int64(w[u, i])
            acc = wrap_int32(acc - w_zp * row_sum + bias[u])
            v = multiply_by_quantized_multiplier_single_rounding(acc, mults[u], shifts[u])
            out[b, u] = lesser(greater(v + out_zp, lo), hi)
    return out
