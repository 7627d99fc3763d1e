"""Data-movement kernels: CONCATENATION (with TFLite's requantizing concatenation).

Quantized inputs whose (scale, zero point) differ from the output's are requantized as in
TFLite ``reference_ops::ConcatenationWithScaling``, all in float32::

    scale = in_scale * (1.0f / out_scale);  bias = -in_zp * scale
    out = clamp(int(round(x * scale + bias)) + out_zp)        # round half away from zero
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import greater, lesser
from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import qrange

__all__ = ["concatenation", "concat_requant_params"]


def concatenation(arrays, axis, *, in_scales=None, in_zps=None, out_scale=None, out_zp=0):
    """Concatenate along ``axis``.

    Parameters
    ----------
    arrays : sequence of ndarray
        Same dtype and rank; equal dimensions except along ``axis``.
    axis : int
        Concatenation axis (negative counts from the end).
    in_scales, in_zps : sequences, optional
        Per-input quantization (quantized inputs only). Omitted: no requantization.
    out_scale, out_zp : optional
        Output quantization; inputs with different parameters are requantized.

    Returns
    -------
    ndarray
        A new array of the inputs' dtype.
    """
    arrays = [np.asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("concatenation needs at least one input")
    dtype, rank = arrays[0].dtype, arrays[0].ndim
    for i, a in enumerate(arrays):
        if a.dtype != dtype or a.ndim != rank:
            raise ValueError(f"input {i}: dtype/rank {a.dtype}/{a.ndim} != {dtype}/{rank}")
    axis = cm.normalize_axis(axis, rank)
    if cm.is_quantized(dtype) and out_scale is not None and in_scales is not None:
        zps = [0] * len(arrays) if in_zps is None else list(in_zps)
        qmin, qmax = qrange(dtype)
        converted = []
        for a, s, z in zip(arrays, in_scales, zps):
            params = concat_requant_params(s, z, out_scale, out_zp)
            if params is None:
                converted.append(a)
                continue
            out = np.empty(a.size, dtype=dtype)
            _requant_core(np.ascontiguousarray(a).reshape(-1), params[0], params[1],
                          int(out_zp), qmin, qmax, out)
            converted.append(out.reshape(a.shape))
        arrays = converted
    return np.concatenate(arrays, axis=axis)


def concat_requant_params(in_scale, in_zp, out_scale, out_zp):
    """``(scale, bias)`` as float32 for an input needing requantization, or None."""
    in_scale, out_scale = np.float32(in_scale), np.float32(out_scale)
    if in_scale == out_scale and int(in_zp) == int(out_zp):
        return None
    scale = np.float32(in_scale * (np.float32(1.0) / out_scale))
    bias = np.float32(np.float32(-int(in_zp)) * scale)
    return scale, bias


@njit
def _requant_core(x, scale, bias, out_zp, qmin, qmax, out):
    for i in range(x.size):
        v = np.float32(np.float32(x[i]) * scale) + bias
        r = np.floor(np.abs(np.float64(v)) + 0.5)  # std::round: half away from zero
        q = np.int64(r) if v >= 0 else -np.int64(r)
        out[i] = lesser(greater(q + out_zp, qmin), qmax)
    return out
