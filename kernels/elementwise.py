"""ADD, SUB, MUL with numpy broadcasting, float and 8-bit quantized; numba fast path.

Quantized ADD/SUB follow TFLite's ``left_shift = 20`` scheme (``kernels/add.cc``, ``sub.cc``,
``reference_ops::Add``)::

    twice_max = 2 * max(s1, s2)                       # float32 max, exact doubling
    M1, S1 = QuantizeMultiplier(s1 / twice_max)       # double
    M2, S2 = QuantizeMultiplier(s2 / twice_max)
    Mo, So = QuantizeMultiplier(twice_max / float32(2**20 * s_out))
    a = MBQM((x1 - zp1) << 20, M1, S1);  b = MBQM((x2 - zp2) << 20, M2, S2)
    out = clamp(MBQM(a +/- b, Mo, So) + zp_out)

Quantized MUL (``kernels/mul.cc``): ``real = float32(float32(s1 * s2) / s_out)``;
``out = clamp(MBQM((x1 - zp1) * (x2 - zp2), M, S) + zp_out)``.
Float: the float32 operation, then the fused activation clamp.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import multiply_by_quantized_multiplier, quantize_multiplier

__all__ = ["add", "sub", "mul", "add_sub_params", "mul_params"]

_ADD, _SUB, _MUL = 0, 1, 2


def add(a, b, *, fuse=0, in1_scale=None, in1_zp=0, in2_scale=None, in2_zp=0, out_scale=None,
        out_zp=0, out_dtype=None):
    """Elementwise ``a + b`` with broadcasting.

    Parameters
    ----------
    a, b : ndarray
        Both float32 / float16, or both uint8 / int8 (quantized with ``in1_*`` / ``in2_*``).
    fuse : int
        NNAPI fuse code, applied in the output domain.
    in1_scale, in1_zp, in2_scale, in2_zp, out_scale, out_zp
        Quantization of the inputs and the output.
    out_dtype : np.uint8 or np.int8, optional
        Quantized output type (default ``a.dtype``).

    Returns
    -------
    ndarray
        Broadcast shape of ``a`` and ``b``.
    """
    return _binary(_ADD, a, b, fuse, in1_scale, in1_zp, in2_scale, in2_zp, out_scale, out_zp,
                   out_dtype)


def sub(a, b, *, fuse=0, in1_scale=None, in1_zp=0, in2_scale=None, in2_zp=0, out_scale=None,
        out_zp=0, out_dtype=None):
    """Elementwise ``a - b`` with broadcasting; arguments as :func:`add`."""
    return _binary(_SUB, a, b, fuse, in1_scale, in1_zp, in2_scale, in2_zp, out_scale, out_zp,
                   out_dtype)


def mul(a, b, *, fuse=0, in1_scale=None, in1_zp=0, in2_scale=None, in2_zp=0, out_scale=None,
        out_zp=0, out_dtype=None):
    """Elementwise ``a * b`` with broadcasting; arguments as :func:`add`."""
    return _binary(_MUL, a, b, fuse, in1_scale, in1_zp, in2_scale, in2_zp, out_scale, out_zp,
                   out_dtype)


def add_sub_params(in1_scale, in2_scale, out_scale):
    """TFLite ADD/SUB multipliers ``((M1, S1), (M2, S2), (Mo, So))`` for left_shift 20."""
    s1, s2, so = (np.float32(cm.require(s, n)) for s, n in
                  ((in1_scale, "in1_scale"), (in2_scale, "in2_scale"), (out_scale, "out_scale")))
    twice_max = 2.0 * float(max(s1, s2))
    real_out = twice_max / float(np.float32(np.float32(1 << 20) * so))
    return (quantize_multiplier(float(s1) / twice_max),
            quantize_multiplier(float(s2) / twice_max),
            quantize_multiplier(real_out))


def mul_params(in1_scale, in2_scale, out_scale):
    """TFLite MUL multiplier ``(M, S)`` from the all-float32 ``s1 * s2 / s_out``."""
    s1, s2, so = (np.float32(cm.require(s, n)) for s, n in
                  ((in1_scale, "in1_scale"), (in2_scale, "in2_scale"), (out_scale, "out_scale")))
    return quantize_multiplier(float(np.float32(np.float32(s1 * s2) / so)))


def _broadcast(a, b):
    shape = np.broadcast_shapes(a.shape, b.shape)
    flat_a = np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1)
    flat_b = np.ascontiguousarray(np.broadcast_to(b, shape)).reshape(-1)
    return shape, flat_a, flat_b


def _binary(op, a, b, fuse, s1, zp1, s2, zp2, so, zpo, out_dtype):
    a, b = np.asarray(a), np.asarray(b)
    shape, fa, fb = _broadcast(a, b)
    if cm.is_quantized(a.dtype):
        cm.check_dtype("input2", b, (np.uint8, np.int8))
        odt = cm.output_dtype(out_dtype, a.dtype)
        lo, hi = cm.quant_clamp(fuse, so, zpo, odt)
        out = np.empty(fa.size, dtype=odt)
        if op == _MUL:
            m, s = mul_params(s1, s2, so)
            _mul_quant_core(fa, fb, int(zp1), int(zp2), m, s, int(zpo), int(lo), int(hi), out)
        else:
            (m1, sh1), (m2, sh2), (mo, sho) = add_sub_params(s1, s2, so)
            sign = 1 if op == _ADD else -1
            _add_quant_core(fa, fb, int(zp1), int(zp2), m1, sh1, m2, sh2, mo, sho, sign,
                            int(zpo), int(lo), int(hi), out)
        return out.reshape(shape)
    cm.check_dtype("input1", a, cm.FLOAT_DTYPES)
    cm.check_dtype("input2", b, cm.FLOAT_DTYPES)
    lo, hi = cm.float_clamp(fuse)
    out = np.empty(fa.size, dtype=np.float32)
    _float_core(op, fa.astype(np.float32, copy=False), fb.astype(np.float32, copy=False),
                lo, hi, out)
    return out.reshape(shape).astype(a.dtype, copy=False)


@njit
def _add_quant_core(a, b, zp1, zp2, m1, s1, m2, s2, mo, so, sign, out_zp, lo, hi, out):
    for i in range(out.size):
        va = multiply_by_quantized_multiplier((np.int64(a[i]) - zp1) << 20, m1, s1)
        vb = multiply_by_quantized_multiplier((np.int64(b[i]) - zp2) << 20, m2, s2)
        raw = multiply_by_quantized_multiplier(va + sign * vb, mo, so) + out_zp
        out[i] = min(max(raw, lo), hi)
    return out


@njit
def _mul_quant_core(a, b, zp1, zp2, m, s, out_zp, lo, hi, out):
    for i in range(out.size):
        prod = (np.int64(a[i]) - zp1) * (np.int64(b[i]) - zp2)
        raw = multiply_by_quantized_multiplier(prod, m, s) + out_zp
        out[i] = min(max(raw, lo), hi)
    return out


@njit
def _float_core(op, a, b, lo, hi, out):
    for i in range(out.size):
        if op == _ADD:
            v = a[i] + b[i]
        elif op == _SUB:
            v = a[i] - b[i]
        else:
            v = a[i] * b[i]
        out[i] = min(max(v, lo), hi)
    return out
