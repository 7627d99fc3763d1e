"""DIV with numpy broadcasting: float32 / float16 with a fused activation, and int32; numba.

Float (NNAPI ``divFloat32``: TFLite ``optimized_ops::Div`` / ``BroadcastDiv4DSlow``): the float32
quotient, then the activation clamp; float16 computes in float32 and rounds back.
TENSOR_INT32 (``executeInt32`` in ``BroadcastExecution.cpp``): floor division, and 0 for a zero
divisor ("undefined, but should not crash"); INT32_MIN / -1 wraps.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import greater, lesser
from nnsim.kernels._jit import njit
from nnsim.kernels._common import broadcast_flat
from nnsim.kernels.fixed_point import wrap_int32

__all__ = ["div"]


def div(a, b, *, fuse=0):
    """Elementwise ``a / b``.

    Parameters
    ----------
    a, b : ndarray
        Both float32 / float16, or both int32 (``fuse`` must then be 0).
    fuse : int
        NNAPI fuse code (float only).

    Returns
    -------
    ndarray
        Broadcast shape, dtype of ``a``.
    """
    a, b = np.asarray(a), np.asarray(b)
    shape, fa, fb = broadcast_flat(a, b)
    if a.dtype == np.int32:
        cm.check_dtype("input2", b, (np.int32,))
        if int(fuse) != 0:
            raise ValueError("int32 DIV supports no fused activation")
        out = np.empty(fa.size, dtype=np.int32)
        _div_int_core(fa, fb, out)
        return out.reshape(shape)
    cm.check_dtype("input1", a, cm.FLOAT_DTYPES)
    cm.check_dtype("input2", b, cm.FLOAT_DTYPES)
    lo, hi = cm.float_clamp(fuse)
    out = np.empty(fa.size, dtype=np.float32)
    with np.errstate(all="ignore"):
        _div_float_core(fa.astype(np.float32), fb.astype(np.float32), lo, hi, out)
    return out.reshape(shape).astype(a.dtype, copy=False)


@njit(error_model="numpy")  # x / 0 gives inf / NaN as in C++, no exception
def _div_float_core(a, b, lo, hi, out):
    for i in range(out.size):
        out[i] = lesser(greater(a[i] / b[i], lo), hi)
    return out


@njit
def _div_int_core(a, b, out):
    for i in range(out.size):
        x = np.int64(a[i])
        y = np.int64(b[i])
        if y == 0:
            out[i] = 0
            continue
        q = abs(x) // abs(y)
        if (x < 0) != (y < 0):
            q = -q
            if q * y != x:
                q -= 1
        out[i] = wrap_int32(q)
    return out
