"""Reference comparisons (numpy): the oracle for :mod:`nnsim.kernels.compare`.

Evaluated per element on the broadcast inputs, without lookup tables: NNAPI dequantizes in
float32, TFLite rescales with the vectorised fixed-point primitives of ``reference._fixed_point``.
"""

from __future__ import annotations

import math

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels.reference import _fixed_point as fx

_FNS = (np.equal, np.not_equal, np.greater, np.greater_equal, np.less, np.less_equal)


def compare(op, a, b, *, in1_scale=None, in1_zp=0, in2_scale=None, in2_zp=0):
    """Reference; see :func:`nnsim.kernels.compare.compare`."""
    a, b = np.asarray(a), np.asarray(b)
    if cm.is_quantized(a.dtype):
        a = (a.astype(np.int64) - int(in1_zp)).astype(np.float32) * np.float32(in1_scale)
        b = (b.astype(np.int64) - int(in2_zp)).astype(np.float32) * np.float32(in2_scale)
    elif a.dtype == np.bool_:
        a, b = a.view(np.uint8), b.view(np.uint8)
    return _FNS[int(op)](a, b)


def _tflite_key(x, scale, zp):
    # QuantizeMultiplier: frexp, the fraction rounded half away from zero to Q0.31
    frac, shift = math.frexp(float(scale))
    m = int(math.floor(frac * 2.0**31 + 0.5))
    if m == 2**31:
        m, shift = m // 2, shift + 1
    shifted = (x.astype(np.int64) - int(zp)) * 256
    return fx.rdbpot(fx.srdhm(shifted, m), -shift)


def compare_tflite_quantized(op, a, b, *, in1_scale, in1_zp=0, in2_scale, in2_zp=0):
    """Reference; see :func:`nnsim.kernels.compare.compare_tflite_quantized`."""
    for s in (in1_scale, in2_scale):
        if not 0.0 < float(s) < 1.0:
            raise ValueError(f"TFLite's quantized comparison needs a scale in (0, 1), got {s}")
    a, b = np.asarray(a), np.asarray(b)
    return _FNS[int(op)](_tflite_key(a, in1_scale, in1_zp), _tflite_key(b, in2_scale, in2_zp))
