"""SQUARED_DIFFERENCE ``(a - b)**2`` with numpy broadcasting: float32, int32, quantized int8.

float32 and int32 (``squared_difference.cc`` SquaredDifference<T>): ``d = a - b; d * d`` in
the type (int32 wraps). These are exact elementwise numpy operations, so there is no core.

int8 (TFLite's own arithmetic, not NNAPI's SUB + MUL; ``squared_difference.cc`` Prepare and
``SquaredDifference(int8_t, int8_t, params)``)::

    twice_max = double(2 * max(s1, s2))                      # float32 product, exact
    M1, E1 = QuantizeMultiplierSmallerThanOneExp(s1 / twice_max)
    M2, E2 = QuantizeMultiplierSmallerThanOneExp(s2 / twice_max)
    Mo, Eo = QuantizeMultiplierSmallerThanOneExp(twice_max**2 / double(2**14 * s_out))
    v1 = MBQMSmallerThanOneExp((a - zp1) * 2**7, M1, E1)    # likewise v2
    out = clamp(MBQMSmallerThanOneExp((v1 - v2)**2, Mo, Eo) + zp_out, -128, 127)

where ``MBQMSmallerThanOneExp(x, M, E) = RDBPOT(SRDHM(x, M), -E)``.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels._builtins import greater, lesser

from nnsim.kernels._jit import njit
from nnsim.kernels._common import broadcast_flat
from nnsim.kernels.fixed_point import (
    multiply_by_quantized_multiplier_smaller_than_one_exp as mbqm_exp,
)
from nnsim.kernels.fixed_point import quantize_multiplier

__all__ = ["squared_difference", "squared_difference_params"]

_LEFT_SHIFT = 7


def _smaller_than_one(multiplier: float):
    """TFLite ``QuantizeMultiplierSmallerThanOneExp``: needs 0 < multiplier < 1."""
    if not 0.0 < multiplier < 1.0:
        raise ValueError(f"squared_difference: multiplier {multiplier!r} is not in (0, 1) "
                         f"(output scale too small for the input scales)")
    return quantize_multiplier(multiplier)


def squared_difference_params(in1_scale, in2_scale, out_scale):
    """``(M1, E1, M2, E2, Mo, Eo)`` of the int8 kernel."""
    s1, s2, so = np.float32(in1_scale), np.float32(in2_scale), np.float32(out_scale)
    twice_max = float(np.float32(2) * max(s1, s2))
    m1 = _smaller_than_one(float(s1) / twice_max)
    m2 = _smaller_than_one(float(s2) / twice_max)
    mo = _smaller_than_one(twice_max * twice_max
                           / float(np.float32(1 << (2 * _LEFT_SHIFT)) * so))
    return (*m1, *m2, *mo)


def squared_difference(a, b, *, in1_scale=None, in1_zp=0, in2_scale=None, in2_zp=0,
                       out_scale=None, out_zp=0):
    """Elementwise ``(a - b)**2`` with broadcasting.

    Parameters
    ----------
    a, b : ndarray
        Same dtype: float32, int32, or int8 (quantized, with the scale / zero point arguments).

    Returns
    -------
    ndarray
        The broadcast shape, dtype of ``a``.
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype:
        raise TypeError(f"input dtypes differ: {a.dtype.name} and {b.dtype.name}")
    if a.dtype in (np.float32, np.int32):
        d = np.subtract(a, b, dtype=a.dtype)
        return np.multiply(d, d, dtype=a.dtype)
    if a.dtype != np.int8:
        raise TypeError(f"squared_difference: dtype {a.dtype.name} not supported")
    if in1_scale is None or in2_scale is None or out_scale is None:
        raise ValueError("scales are required for quantized tensors")
    params = squared_difference_params(in1_scale, in2_scale, out_scale)
    shape, fa, fb = broadcast_flat(a, b)
    out = np.empty(fa.size, np.int8)
    _sqdiff_int8_core(fa, fb, int(in1_zp), int(in2_zp), int(out_zp), *params, out)
    return out.reshape(shape)


@njit
def _sqdiff_int8_core(a, b, zp1, zp2, zpo, m1, e1, m2, e2, mo, eo, out):
    for i in range(out.size):
        v1 = mbqm_exp((np.int64(a[i]) - zp1) << 7, m1, e1)
        v2 = mbqm_exp((np.int64(b[i]) - zp2) << 7, m2, e2)
        d = v1 - v2
        v = mbqm_exp(d * d, mo, eo) + zpo
        out[i] = lesser(greater(v, -128), 127)
    return out
