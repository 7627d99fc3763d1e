"""FULLY_CONNECTED, float and 8-bit quantized; numba fast path.

Matches TFLite ``reference_ops::FullyConnected`` (uint8 / per-tensor) and
``reference_integer_ops::FullyConnected[PerChannel]`` (int8)::

    acc = bias[u] + sum_i (w[u, i] - w_zp) * (x[b, i] - in_zp)        # int32, wrapping
    out = clamp(MultiplyByQuantizedMultiplier(acc, M[u], S[u]) + out_zp, act_min, act_max)

Per-tensor multiplier: ``double(float32(in_scale * w_scale)) / double(out_scale)``; per-channel:
``double(in_scale) * double(w_scale[u]) / double(out_scale)``.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import empty, greater, lesser
from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import multiply_by_quantized_multiplier, wrap_int32

__all__ = ["fully_connected"]


def fully_connected(
    x,
    w,
    bias,
    *,
    fuse=0,
    in_scale=None,
    in_zp=0,
    w_scales=None,
    w_zp=0,
    out_scale=None,
    out_zp=0,
    out_dtype=None,
):
    """Fully connected layer ``out = x @ w.T + bias``.

    Parameters
    ----------
    x : ndarray [batches, in_size]
        float32 / float16, or uint8 / int8 (the caller flattens higher-rank inputs).
    w : ndarray [units, in_size]
        Float, or uint8 / int8 for quantized ``x``.
    bias : ndarray [units] or None
        float32 or int32.
    fuse : int
        NNAPI fuse code.
    in_scale, in_zp, w_scales, w_zp, out_scale, out_zp, out_dtype
        Quantization (``w_scales`` with 1 or ``units`` entries).

    Returns
    -------
    ndarray [batches, units]
    """
    x, w = np.asarray(x), np.asarray(w)
    cm.check_rank("input", x, 2)
    cm.check_rank("weights", w, 2)
    if w.shape[1] != x.shape[1]:
        raise ValueError(f"weights shape {w.shape} does not match input size {x.shape[1]}")
    units = w.shape[0]
    if cm.is_quantized(x.dtype):
        cm.check_dtype("weights", w, (np.uint8, np.int8))
        scales = cm.filter_scales(w_scales, units)
        mults, shifts = cm.conv_multipliers(in_scale, scales, out_scale, units, scales.size == 1)
        odt = cm.output_dtype(out_dtype, x.dtype)
        lo, hi = cm.quant_clamp(fuse, out_scale, out_zp, odt)
        out = np.empty((x.shape[0], units), dtype=odt)
        _fc_quant_core(np.ascontiguousarray(x), int(in_zp), np.ascontiguousarray(w), int(w_zp),
                       cm.bias_int32(bias, units), mults, shifts, int(out_zp), int(lo), int(hi),
                       out)
        return out

    cm.check_dtype("input", x, cm.FLOAT_DTYPES)
    x32, dtype = cm.to_float32(x)
    lo, hi = cm.float_clamp(fuse)
    out = np.empty((x.shape[0], units), dtype=np.float32)
    _fc_float_core(x32, np.ascontiguousarray(w, dtype=np.float32), cm.bias_float32(bias, units),
                   lo, hi, out)
    return out.astype(dtype, copy=False)


@njit
def _fc_quant_core(x, in_zp, w, w_zp, bias, mults, shifts, out_zp, lo, hi, out):
    batches, size = x.shape
    units = w.shape[0]
    row = empty(size, np.int32)
    for b in range(batches):
        row_sum = np.int64(0)
        for i in range(size):
            row[i] = np.int32(x[b, i]) - in_zp
            row_sum += row[i]
        for u in range(units):
            acc = np.int64(0)
            for i in range(size):
                acc += row[i] * np.int32(w[u, i])
            # sum (w - w_zp) * x' == sum w * x' - w_zp * sum x'   (mod 2**32, like int32 C++)
            acc = wrap_int32(acc - w_zp * row_sum + bias[u])
            v = multiply_by_quantized_multiplier(acc, mults[u], shifts[u]) + out_zp
            out[b, u] = lesser(greater(v, lo), hi)
    return out


@njit
def _fc_float_core(x, w, bias, lo, hi, out):
    batches, size = x.shape
    units = w.shape[0]
    for b in range(batches):
        for u in range(units):
            total = np.float32(0.0)
            for i in range(size):
                total += x[b, i] * w[u, i]
            v = total + bias[u]
            out[b, u] = lesser(greater(v, lo), hi)
    return out
