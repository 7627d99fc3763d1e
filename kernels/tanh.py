"""TANH, float and 8-bit quantized.

Float: ``std::tanh`` per element in float32 (TFLite ``reference_ops::Tanh``). Quantized
uint8 / int8: TFLite's 256-entry table (``LUTPopulate`` with ``std::tanh``, used by both the
reference and the generic kernel)::

    lut[v] = clamp(int(round(tanh(float32(in_scale * (v - in_zp))) * (1 / out_scale)) + out_zp))

all in float32; ``tanh`` is evaluated in double and rounded to float32. The lookup itself is
one numpy take (no per-element Python), so there is no numba core here.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels.fixed_point import qrange

__all__ = ["tanh", "tanh_table", "lut_populate"]


def tanh(x, *, in_scale=None, in_zp=0, out_scale=None, out_zp=None):
    """Hyperbolic tangent.

    Parameters
    ----------
    x : ndarray
        float32 / float16 / uint8 / int8.
    in_scale, in_zp
        Input quantization.
    out_scale, out_zp : optional
        Output quantization; default 1/128 and 128 (uint8) or 0 (int8), as NNAPI requires.

    Returns
    -------
    ndarray
        Same shape and dtype as ``x``.
    """
    x = np.asarray(x)
    if not cm.is_quantized(x.dtype):
        cm.check_dtype("input", x, cm.FLOAT_DTYPES)
        x32, dtype = cm.to_float32(x)
        return np.tanh(x32).astype(dtype, copy=False)
    qmin, _ = qrange(x.dtype)
    out_scale = 1.0 / 128 if out_scale is None else out_scale
    out_zp = (128 if qmin == 0 else 0) if out_zp is None else out_zp
    table = tanh_table(x.dtype, cm.require(in_scale, "in_scale"), in_zp, out_scale, out_zp)
    return table[x.astype(np.int64) - qmin]


def tanh_table(dtype, in_scale, in_zp, out_scale, out_zp):
    """The TFLite tanh lookup table: entry ``v - qmin`` for every value ``v`` of ``dtype``."""
    return lut_populate(dtype, in_scale, in_zp, out_scale, out_zp,
                        lambda v: np.tanh(v.astype(np.float64)).astype(np.float32))


def lut_populate(dtype, in_scale, in_zp, out_scale, out_zp, transform):
    """TFLite ``LUTPopulateInt8``: ``transform`` maps a float32 array to float32 values."""
    qmin, qmax = qrange(dtype)
    values = np.arange(qmin, qmax + 1, dtype=np.int64)
    dequantized = np.float32(in_scale) * (values - int(in_zp)).astype(np.float32)
    transformed = np.asarray(transform(dequantized), dtype=np.float32)
    inverse_scale = np.float32(1.0) / np.float32(out_scale)
    scaled = (transformed * inverse_scale).astype(np.float64)
    rounded = (np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)).astype(np.float32)
    quantized = (rounded + np.float32(out_zp)).astype(np.int64)  # float add, then truncate
    return np.clip(quantized, qmin, qmax).astype(dtype)
