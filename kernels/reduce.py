"""MEAN over axes, float and 8-bit quantized; numba fast path.

Quantized, ``variant="reference"`` (default; TFLite ``BUILTIN_REF`` for every axis set, and the
default kernel outside its fast path) = ``reference_ops::QuantizedMeanOrSum``::

    M, S = QuantizeMultiplier(double(in_scale) / double(out_scale));  n = prod(reduced dims)
    sh = min(floor(log2(n)), 32, 31 + S);  M' = int32((int64(M) << sh) / n);  S' = S - sh
    out = clamp(MBQM(int32(sum(x) - in_zp * n), M', S') + out_zp)

``variant="optimized"``: the default TFLite CPU kernel, whose 4-D ``keep_dims`` mean over axes
resolving to {1, 2} (a global average pool) uses ``optimized_ops::Mean``::

    t = float32(in_zp * in_scale / out_scale);  bias = out_zp - int(t +/- 0.5)
    M, S = QuantizeMultiplier(float32(in_scale / (float32(H * W) * out_scale)))
    out = clamp(MBQM(sum(x), M, S) + bias)

Float: float32 sum in input order divided by the float32 count (``reference_ops::Mean``).
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import (
    multiply_by_quantized_multiplier,
    qrange,
    quantize_multiplier,
    wrap_int32,
)

__all__ = ["mean", "mean_params", "mean_fast_4d_params", "is_mean_4d_fast_path"]


def mean(x, axes, keep_dims, *, in_scale=None, in_zp=0, out_scale=None, out_zp=0,
         variant="reference"):
    """Mean of ``x`` over ``axes``.

    Parameters
    ----------
    x : ndarray
        float32 / float16 / uint8 / int8.
    axes : sequence of int
        Axes to reduce (negative allowed, duplicates ignored).
    keep_dims : bool
        Keep reduced dimensions with size 1.
    in_scale, in_zp, out_scale, out_zp
        Quantization; the output defaults to the input's parameters.
    variant : {"reference", "optimized"}
        Which TFLite quantized kernel to match (see the module docstring).

    Returns
    -------
    ndarray
        Same dtype as ``x``.
    """
    x = np.asarray(x)
    raw_axes = [int(a) for a in np.atleast_1d(np.asarray(axes, dtype=np.int64))]
    reduced = sorted({cm.normalize_axis(a, x.ndim) for a in raw_axes})
    kept = [d for d in range(x.ndim) if d not in reduced]
    out_shape = tuple(1 if d in reduced else x.shape[d] for d in range(x.ndim)) if keep_dims \
        else tuple(x.shape[d] for d in kept)
    rows = np.ascontiguousarray(np.transpose(x, kept + reduced))
    count = int(np.prod([x.shape[d] for d in reduced], dtype=np.int64))
    rows = rows.reshape(int(np.prod([x.shape[d] for d in kept], dtype=np.int64)), count)

    if not cm.is_quantized(x.dtype):
        cm.check_dtype("input", x, cm.FLOAT_DTYPES)
        out = np.empty(rows.shape[0], dtype=np.float32)
        _mean_float_core(rows.astype(np.float32, copy=False), out)
        return out.reshape(out_shape).astype(x.dtype, copy=False)

    in_scale = cm.require(in_scale, "in_scale")
    if out_scale is None:
        out_scale, out_zp = in_scale, in_zp
    qmin, qmax = qrange(x.dtype)
    out = np.empty(rows.shape[0], dtype=x.dtype)
    if variant == "optimized" and is_mean_4d_fast_path(x.ndim, raw_axes, keep_dims):
        m, s, bias = mean_fast_4d_params(in_scale, in_zp, out_scale, out_zp, count)
        _mean_quant_core(rows, 0, m, s, bias, qmin, qmax, out)
    elif variant in ("reference", "optimized"):
        m, s = mean_params(in_scale, out_scale, count)
        _mean_quant_core(rows, int(in_zp) * count, m, s, int(out_zp), qmin, qmax, out)
    else:
        raise ValueError(f"unknown mean variant {variant!r}")
    return out.reshape(out_shape)


def is_mean_4d_fast_path(rank, axes, keep_dims):
    """TFLite's special case: 4-D input, keep_dims, axes resolving to exactly {1, 2}.

    (Checked against LiteRT: negative and repeated axes count once they resolve to H, W.)
    """
    resolved = {int(a) % rank for a in axes} if rank else set()
    return bool(keep_dims) and rank == 4 and resolved == {1, 2}


def mean_params(in_scale, out_scale, count):
    """``(M', S')`` of ``QuantizedMeanOrSum`` with the 1/count factor folded in."""
    m, s = quantize_multiplier(float(np.float32(in_scale)) / float(np.float32(out_scale)))
    if count <= 0:
        return m, s
    shift = min(int(count).bit_length() - 1, 32, 31 + s)
    return int(np.int32((m << shift) // count)), s - shift


def mean_fast_4d_params(in_scale, in_zp, out_scale, out_zp, count):
    """``(M, S, bias)`` of ``optimized_ops::Mean`` (uint8) / ``optimized_integer_ops::Mean``."""
    in_scale, out_scale = np.float32(in_scale), np.float32(out_scale)
    num = np.float32(count)
    t = np.float32(np.float32(np.float32(in_zp) * in_scale) / out_scale)
    t = np.float32(t + np.float32(0.5)) if t > 0 else np.float32(t - np.float32(0.5))
    bias = int(out_zp) - int(t)
    m, s = quantize_multiplier(float(np.float32(in_scale / np.float32(num * out_scale))))
    return m, s, bias


@njit
def _mean_quant_core(rows, zp_times_count, m, s, offset, qmin, qmax, out):
    n_rows, count = rows.shape
    for r in range(n_rows):
        total = np.int64(0)
        for i in range(count):
            total += rows[r, i]
        shifted = wrap_int32(total - zp_times_count)
        v = multiply_by_quantized_multiplier(shifted, m, s) + offset
        out[r] = min(max(v, qmin), qmax)
    return out


@njit
def _mean_float_core(rows, out):
    n_rows, count = rows.shape
    for r in range(n_rows):
        total = np.float32(0.0)
        for i in range(count):  # float32, in input order, as reference_ops::Mean
            total += rows[r, i]
        out[r] = total / np.float32(max(count, 1))
    return out
