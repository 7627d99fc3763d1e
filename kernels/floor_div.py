"""FLOOR_DIV with numpy broadcasting; numba fast path.

TFLite ``reference_ops::FloorDiv<T>``: ``T(floor(double(a) / double(b)))`` for every type
(float32 too: the quotient is taken in double, then rounded to float32). A zero anywhere in
the divisor is an error before anything is computed ("Division by 0").
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._jit import njit

__all__ = ["floor_div"]

_TYPES = (np.float32, np.int32, np.int16, np.int8)


def floor_div(a, b):
    """Elementwise floor division.

    Parameters
    ----------
    a, b : ndarray
        Same dtype: float32, int32, int16 or int8 (raw values; quantization is ignored, as in
        TFLite).

    Returns
    -------
    ndarray
        Broadcast shape, the inputs' dtype.

    Raises
    ------
    ZeroDivisionError
        When ``b`` holds a zero.
    """
    a, b = np.asarray(a), np.asarray(b)
    cm.check_dtype("input1", a, _TYPES)
    if b.dtype != a.dtype:
        raise TypeError(f"input2: dtype {b.dtype.name} != {a.dtype.name}")
    if (b == 0).any():
        raise ZeroDivisionError("Division by 0")
    shape, fa, fb = cm.broadcast_flat(a, b)
    out = np.empty(fa.size, dtype=a.dtype)
    _floor_div_core(fa, fb, out)
    return out.reshape(shape)


@njit
def _floor_div_core(a, b, out):
    for i in range(out.size):
        out[i] = np.floor(np.float64(a[i]) / np.float64(b[i]))
    return out
