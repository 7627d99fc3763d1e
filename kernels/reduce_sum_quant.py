"""SUM over axes of a quantized tensor (uint8 / int8 / int16); numba fast path.

TFLite ``reference_ops::QuantizedMeanOrSum`` with ``compute_sum`` (the SUM kernel's quantized
path, ``reduce.cc``), typed for the tensor (LiteRT's ``BUILTIN_REF`` resolver passes every
quantized type to it as uint8 -- a bug; see nnsim/tflite/builtins/norm.py)::

    M, S = QuantizeMultiplier(double(in_scale) / double(out_scale));  n = prod(reduced dims)
    out = clamp(MBQM(int32(sum(x) - in_zp * n), M, S) + out_zp)      # sum wraps in int32

An input with a zero-sized dimension gives an output of zeros (TFLite clears the output before
returning early). Repeated and negative axes count once; no axes at all is ``n = 1``.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import greater, lesser
from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import (multiply_by_quantized_multiplier, qrange,
                                       quantize_multiplier, wrap_int32)

__all__ = ["sum_quantized", "sum_params"]

_TYPES = (np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16))


def sum_quantized(x, axes, keep_dims, *, in_scale, in_zp, out_scale, out_zp):
    """Quantized sum of ``x`` over ``axes``.

    Parameters
    ----------
    x : ndarray
        uint8 / int8 / int16.
    axes : sequence of int
        Axes to reduce (negative allowed, duplicates ignored).
    keep_dims : bool
        Keep reduced dimensions with size 1.
    in_scale, in_zp, out_scale, out_zp
        Quantization of the input and the output (same integer type).

    Returns
    -------
    ndarray
        The reduced tensor, ``x.dtype``.
    """
    x = np.asarray(x)
    cm.check_dtype("input", x, _TYPES)
    rank = x.ndim
    reduced = sorted({cm.normalize_axis(a, rank) for a in np.asarray(axes).reshape(-1)})
    shape = tuple(1 if d in reduced else s for d, s in enumerate(x.shape)) if keep_dims \
        else tuple(s for d, s in enumerate(x.shape) if d not in reduced)
    out = np.zeros(shape, x.dtype)
    if x.size == 0:
        return out
    count = int(np.prod([x.shape[d] for d in reduced], dtype=np.int64))
    sums = x.sum(axis=tuple(reduced), dtype=np.int64).reshape(-1)   # exact; wrapped below
    m, s = sum_params(in_scale, out_scale)
    qmin, qmax = qrange(x.dtype)
    _requantize_core(sums, int(in_zp) * count, m, s, int(out_zp), qmin, qmax, out.reshape(-1))
    return out


def sum_params(in_scale, out_scale):
    """``(M, S)``: ``QuantizeMultiplier(double(in_scale) / double(out_scale))``."""
    return quantize_multiplier(float(np.float32(in_scale)) / float(np.float32(out_scale)))


@njit
def _requantize_core(sums, subtract, m, shift, out_zp, qmin, qmax, out):
    for i in range(sums.size):
        total = wrap_int32(wrap_int32(sums[i]) - subtract)
        v = multiply_by_quantized_multiplier(total, m, shift) + out_zp
        out[i] = lesser(greater(v, qmin), qmax)
    return out
