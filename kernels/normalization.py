"""L2_NORMALIZATION along one axis, float and 8-bit quantized; numba fast path.

Float (``l2normFloat32Impl`` / ``optimized_ops::L2Normalization``): per row, the float32 sum of
squares in order, ``l2 = max(sqrt(sum), 1e-6)``, ``out = x / l2``; float16 computes in float32.

Quantized (output scale 1/128, zero point 128 for uint8 / 0 for int8)::

    d = x - in_zp;  (M, S) = GetInvSqrtQuantizedMultiplierExp(sum(d * d), reverse_shift=-1)
    uint8, and int8 off the last axis:  out = RDBPOT(SRDHM(128 * d, M), -S) (+ 128 for uint8)
    int8 on the last axis (reference_integer_ops::L2Normalization): out = MBQM(d, M, S + 7)
    clamped to the type.

``GetInvSqrtQuantizedMultiplierExp`` (``internal/common.h``) is a gemmlowp Newton-Raphson
inverse square root in Q3.28, ported in :func:`_inv_sqrt_multiplier`.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import greater, lesser
from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import (
    count_leading_zeros_u32,
    multiply_by_quantized_multiplier,
    qrange,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
    saturating_rounding_multiply_by_pot,
    wrap_int32,
)

__all__ = ["l2_normalization", "inv_sqrt_multiplier"]

_EPSILON = np.float32(1e-6)


def l2_normalization(x, axis=-1, *, in_zp=0):
    """Divide ``x`` by its L2 norm along ``axis``.

    Parameters
    ----------
    x : ndarray
        float32 / float16 / uint8 / int8, rank >= 1.
    axis : int
        Normalisation axis (negative counts from the end).
    in_zp : int
        Input zero point (quantized only; the input scale cancels out).

    Returns
    -------
    ndarray
        Same shape and dtype; quantized outputs are on scale 1/128 with zero point 128
        (uint8) or 0 (int8).
    """
    x = np.asarray(x)
    axis = cm.normalize_axis(axis, x.ndim)
    last = axis == x.ndim - 1
    moved = np.ascontiguousarray(np.moveaxis(x, axis, -1))
    rows = moved.reshape(-1, moved.shape[-1]) if moved.size else moved.reshape(0, 1)
    if cm.is_quantized(x.dtype):
        qmin, qmax = qrange(x.dtype)
        out = np.empty(rows.shape, dtype=x.dtype)
        _l2norm_quant_core(rows, int(in_zp), qmin == 0, last, qmin, qmax, out)
    else:
        cm.check_dtype("input", x, cm.FLOAT_DTYPES)
        out = np.empty(rows.shape, dtype=np.float32)
        _l2norm_float_core(rows.astype(np.float32), out)
        out = out.astype(x.dtype, copy=False)
    return np.moveaxis(out.reshape(moved.shape), -1, axis)


def inv_sqrt_multiplier(value: int):
    """``GetInvSqrtQuantizedMultiplierExp(value, -1)`` as ``(multiplier, shift)``."""
    m, s = _inv_sqrt_multiplier(np.int64(value))
    return int(m), int(s)


@njit
def _inv_sqrt_multiplier(value):
    if value <= 1:
        return np.int64(2147483647), np.int64(0)
    shift = np.int64(11)
    while value >= (1 << 29):
        value //= 4
        shift += 1
    pairs = (count_leading_zeros_u32(value) - 1) // 2 - 1
    shift -= pairs
    value = value << (2 * pairs)
    x_in = value >> 1                                   # Q3.28
    # (np.int64 constants: numba compiles a variant of a callee per literal argument)
    half_in = rounding_divide_by_pot(x_in, np.int64(1))
    half_three = np.int64((1 << 28) + (1 << 27))        # 1.5 in Q3.28
    x = np.int64(1 << 28)                               # 1.0
    for _ in range(5):
        x3 = saturating_rounding_doubling_high_mul(x, x)
        x3 = saturating_rounding_doubling_high_mul(x3, x)
        x3 = saturating_rounding_multiply_by_pot(x3, np.int64(6))
        t = wrap_int32(saturating_rounding_doubling_high_mul(half_three, x)
                       - saturating_rounding_doubling_high_mul(half_in, x3))
        x = saturating_rounding_multiply_by_pot(t, np.int64(3))
    result = saturating_rounding_doubling_high_mul(x, np.int64(1518500250))   # * sqrt(2) / 2
    if shift < 0:
        result = wrap_int32(result << (-shift))
        shift = np.int64(0)
    return result, -shift


@njit
def _l2norm_quant_core(rows, in_zp, unsigned, last_axis, qmin, qmax, out):
    n_rows, depth = rows.shape
    for r in range(n_rows):
        total = np.int64(0)
        for i in range(depth):
            d = np.int64(rows[r, i]) - in_zp
            total += d * d
        m, shift = _inv_sqrt_multiplier(wrap_int32(total))
        for i in range(depth):
            d = np.int64(rows[r, i]) - in_zp
            if last_axis and not unsigned:
                v = multiply_by_quantized_multiplier(d, m, shift + 7)
            else:
                v = rounding_divide_by_pot(saturating_rounding_doubling_high_mul(d * 128, m),
                                           -shift)
                if unsigned:
                    v += 128
            out[r, i] = lesser(greater(v, qmin), qmax)
    return out


@njit(error_model="numpy")
def _l2norm_float_core(rows, out):
    n_rows, depth = rows.shape
    for r in range(n_rows):
        total = np.float32(0.0)
        for i in range(depth):
            total += rows[r, i] * rows[r, i]
        norm = greater(np.float32(np.sqrt(total)), _EPSILON)
        for i in range(depth):
            out[r, i] = rows[r, i] / norm
    return out
