"""SOFTMAX along any axis, float and 8-bit quantized; numba fast path.

Quantized: TFLite's fixed-point reference kernel (``reference_ops::Softmax``, used by
``BUILTIN_REF`` and by NNAPI's CPU path), bit-exact::

    M, L = QuantizeMultiplierGreaterThanOne(min(beta * in_scale * 2**26, 2**31 - 1))
    diff_min = -floor(31 * 2**26 / 2**L)                  # CalculateInputRadius(5, L)
    per row: d = x - max(row); for d >= diff_min:
        e = exp_on_negative_values(SRDHM(d << L, M))      # Q5.26 in, Q0.31 out
        sum += RDBPOT(e, 12)                               # Q12.19
    recip, bits = GetReciprocal(sum, 12)
    out = RDBPOT(SRDHM(recip, e), bits + 23) + type_min    # d < diff_min -> type_min

The output is on the fixed scale 1/256 with zero point 0 (uint8) / -128 (int8); ``out_scale`` /
``out_zp`` are only checked. Float: TFLite's float reference (``exp((x - max) * beta)`` in
float32 as the C library's ``expf`` computes it, sequential float32 sum, divide).

Where TFLite stops with a ``TFLITE_CHECK`` this kernel differs: ``beta * in_scale * 2**26 <= 1``
raises ``ValueError`` (NNAPI's CPU path fails the operation too); a row whose exponentials sum
to 512 or more (long, nearly flat rows: the final shift exceeds 31) is computed with the exact
rounding shift, so its entries round to the type minimum as the real values do.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import greater, lesser
from nnsim.kernels._jit import njit
from nnsim.kernels.expf import expf_main, in_main_range, libm_expf
from nnsim.kernels.fixed_point import (
    exp_on_negative_values_np,
    get_reciprocal,
    multiply_by_quantized_multiplier_greater_than_one_np,
    qrange,
    quantize_multiplier_greater_than_one,
    rounding_divide_by_pot,
    rounding_divide_by_pot_np,
    saturating_rounding_doubling_high_mul,
    wrap_int32,
)

__all__ = ["softmax", "softmax_params", "prepare_softmax"]

_SCALED_DIFF_INTEGER_BITS = 5
_ACCUMULATION_INTEGER_BITS = 12


def softmax(x, beta, *, axis=-1, in_scale=None, in_zp=0, out_scale=None, out_zp=0):
    """Softmax ``exp(beta * x) / sum(exp(beta * x))`` along ``axis``.

    Parameters
    ----------
    x : ndarray
        float32 / float16 / uint8 / int8, any rank >= 1.
    beta : float
        Positive scaling of the logits.
    axis : int
        Reduction axis (negative counts from the end).
    in_scale, in_zp
        Input quantization (the zero point cancels out in ``x - max``).
    out_scale, out_zp
        Output quantization; must be 1/256 and the type minimum's complement (0 for uint8,
        -128 for int8) when given.

    Returns
    -------
    ndarray
        Same shape and dtype as ``x``.
    """
    x = np.asarray(x)
    if x.ndim < 1:
        raise ValueError("softmax needs rank >= 1")
    axis = cm.normalize_axis(axis, x.ndim)
    moved = np.ascontiguousarray(np.moveaxis(x, axis, -1))
    rows = moved.reshape(-1, moved.shape[-1]) if moved.size else moved.reshape(0, 1)
    if cm.is_quantized(x.dtype):
        qmin, qmax = qrange(x.dtype)
        if out_scale is not None and (abs(float(out_scale) - 1.0 / 256) > 1e-3 / 256
                                      or int(out_zp) != (0 if qmin == 0 else -128)):
            raise ValueError("quantized softmax output must have scale 1/256 and zero point "
                             f"{0 if qmin == 0 else -128}")
        m, left_shift, diff_min = softmax_params(beta, cm.require(in_scale, "in_scale"))
        out = np.empty(rows.shape, dtype=x.dtype)
        _softmax_quant_core(rows.view(np.uint8), _flip(x.dtype),
                            exp_table(m, left_shift, diff_min), qmin, qmax, out.view(np.uint8))
    else:
        cm.check_dtype("input", x, cm.FLOAT_DTYPES)
        out = np.empty(rows.shape, dtype=np.float32)
        _softmax_float_core(rows.astype(np.float32, copy=False), np.float32(beta), out)
        out = out.astype(x.dtype, copy=False)
    return np.moveaxis(out.reshape(moved.shape), -1, axis)


def prepare_softmax(x_shape, x_dtype, beta, *, in_scale=None, in_zp=0, out_scale=None,
                    out_zp=0):
    """Constants of :func:`softmax` along the last axis for one input shape (TFLite's
    Prepare). The plan's ``bind(x)`` returns a function of no arguments that writes the
    softmax of the current contents of ``x`` (fixed, C-contiguous) into ``plan.out``."""
    return _SoftmaxPlan(tuple(int(d) for d in x_shape), np.dtype(x_dtype), beta, in_scale,
                        out_scale, out_zp)


class _SoftmaxPlan:
    def __init__(self, shape, dtype, beta, in_scale, out_scale, out_zp):
        if len(shape) < 1:
            raise ValueError("softmax needs rank >= 1")
        self.depth = shape[-1]
        self.quantized = cm.is_quantized(dtype)
        if self.quantized:
            self.qmin, self.qmax = qrange(dtype)
            if out_scale is not None and (abs(float(out_scale) - 1.0 / 256) > 1e-3 / 256
                                          or int(out_zp) != (0 if self.qmin == 0 else -128)):
                raise ValueError("quantized softmax output must have scale 1/256 and zero "
                                 f"point {0 if self.qmin == 0 else -128}")
            self.table = exp_table(*softmax_params(beta, cm.require(in_scale, "in_scale")))
            self.out = np.empty(shape, dtype)
        else:
            if dtype != np.float32:
                raise TypeError(f"input: dtype {dtype.name} not supported (expected float32)")
            self.beta = np.float32(beta)
            self.out = np.empty(shape, np.float32)

    def bind(self, x):
        if x.size == 0 or self.depth == 0 or not x.flags.c_contiguous:
            return None
        rows, out = x.reshape(-1, self.depth), self.out.reshape(-1, self.depth)
        if self.quantized:
            return partial(_softmax_quant_core, rows.view(np.uint8), _flip(x.dtype), self.table,
                           self.qmin, self.qmax, out.view(np.uint8))
        return partial(_softmax_float_core, rows, self.beta, out)


def softmax_params(beta, in_scale):
    """``(M, left_shift, diff_min)`` of TFLite ``PreprocessSoftmaxScaling`` +
    ``CalculateInputRadius`` (5 integer bits, double-rounding build)."""
    bits = _SCALED_DIFF_INTEGER_BITS
    real = min(float(np.float32(beta)) * float(np.float32(in_scale)) * float(1 << (31 - bits)),
               float((1 << 31) - 1))
    m, left_shift = quantize_multiplier_greater_than_one(real)
    radius = math.floor(((1 << bits) - 1) * float(1 << (31 - bits)) / float(1 << left_shift))
    return m, left_shift, -int(radius)


def _flip(dtype):
    """The byte XOR that maps int8 to uint8 keeping the order (x + 128); 0 for uint8. The core
    reads both types as bytes: one compiled variant (differences x - max are unchanged)."""
    return np.uint8(128 if np.dtype(dtype) == np.int8 else 0)


def exp_table(m, left_shift, diff_min):
    """The lookup table of :func:`_softmax_quant_core` for the parameters of
    :func:`softmax_params` (2 x 256 int64), computed here with NumPy by the same fixed-point
    arithmetic (``kernels.fixed_point``'s array twins): the core then compiles without
    ``exp_on_negative_values`` and its callees (0.6 s of a cold start, issue 13)."""
    diff = -np.arange(_DIFFS, dtype=np.int64)
    e = exp_on_negative_values_np(
        multiply_by_quantized_multiplier_greater_than_one_np(diff, m, left_shift),
        _SCALED_DIFF_INTEGER_BITS)
    inside = diff >= diff_min
    # Rescale Q0.31 -> Q12.19 (the sum accumulates these with int32 wrap-around)
    term = rounding_divide_by_pot_np(e, _ACCUMULATION_INTEGER_BITS)
    return np.concatenate([np.where(inside, e, -1), np.where(inside, term, 0)])


#: An 8-bit row's differences x - max(row) take the 256 values 0, -1, ..., -255.
_DIFFS = 256


@njit
def _softmax_quant_core(x, flip, table, qmin, qmax, out):
    """``x``, ``out``: the bytes of the uint8 or int8 rows (``flip``: :func:`_flip`; each
    output byte is the two's complement of an int8 value). ``table`` (:func:`exp_table`):
    entry ``k`` the exponential of the difference ``-k`` (-1 below ``diff_min``), entry
    256 + k its Q12.19 term of the sum: each entry of a row is looked up instead of computed
    (MobileNet's 1001 classes: 9.7 -> 2.7 us, Zen 5)."""
    rows, depth = x.shape
    for r in range(rows):
        max_in_row = np.int64(x[r, 0] ^ flip)
        for c in range(1, depth):
            max_in_row = greater(max_in_row, np.int64(x[r, c] ^ flip))
        sum_of_exps = np.int64(0)
        for c in range(depth):
            k = max_in_row - np.int64(x[r, c] ^ flip)
            if table[k] >= 0:
                sum_of_exps = wrap_int32(sum_of_exps + table[_DIFFS + k])
        recip, bits_over_unit = get_reciprocal(sum_of_exps, _ACCUMULATION_INTEGER_BITS)
        exponent = bits_over_unit + 31 - 8
        for c in range(depth):
            e = table[max_in_row - np.int64(x[r, c] ^ flip)]
            value = qmin
            if e >= 0:
                unsat = rounding_divide_by_pot(saturating_rounding_doubling_high_mul(recip, e),
                                               exponent)
                value = lesser(greater(unsat + qmin, qmin), qmax)
            out[r, c] = value & 0xFF
    return out


@njit
def _softmax_float_core(x, beta, out):
    """TFLite's float reference per row: ``expf((x - max) * beta)`` (:mod:`nnsim.kernels.expf`,
    the C library's own value where its main path does not serve), the float32 sum in order,
    the divisions."""
    rows, depth = x.shape
    for r in range(rows):
        max_in_row = x[r, 0]
        for c in range(1, depth):
            max_in_row = greater(max_in_row, x[r, c])
        outside = 0
        for c in range(depth):
            d = (x[r, c] - max_in_row) * beta
            out[r, c] = expf_main(d)
            outside += not in_main_range(d)
        if outside:   # the C library's own values
            for c in range(depth):
                d = (x[r, c] - max_in_row) * beta
                if not in_main_range(d):
                    out[r, c] = libm_expf(d)
        total = np.float32(0.0)
        for c in range(depth):
            total += out[r, c]
        for c in range(depth):
            out[r, c] = out[r, c] / total
    return out
