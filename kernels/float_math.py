"""POW (with numpy broadcasting) and SIN, float32 / float16, and TFLite's int32 POW; numba.

NNAPI computes both in float32 and rounds a float16 result back (``Pow.cpp``:
``std::pow(float(base), float(exponent))``; ``Elementwise.cpp``: ``std::sin`` on float). The
float32 ``pow`` and ``sin`` here are the C library's ``powf`` / ``sinf`` (LLVM intrinsics under
numba, numpy's float32 loops without it): NaN for a negative base with a fractional exponent,
inf for 0 to a negative power, as in C++, and no exception.

TFLite's int32 POW (``pow.cc``, ``reference_ops::Pow``) is ``std::pow(int, int)``: the double
``pow``, converted back to int32 by truncation; a result outside the int32 range is undefined in
C++ and is INT32_MIN on x86 (``cvttsd2si``), which :func:`integer_power` reproduces.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._jit import njit
from nnsim.kernels._common import broadcast_flat

__all__ = ["power", "sin", "integer_power"]


def power(base, exponent):
    """``base ** exponent`` elementwise with broadcasting.

    Parameters
    ----------
    base, exponent : ndarray
        Same dtype, float32 or float16 (computed in float32).

    Returns
    -------
    ndarray
        The broadcast shape, dtype of ``base``.
    """
    base, exponent = np.asarray(base), np.asarray(exponent)
    cm.check_dtype("base", base, cm.FLOAT_DTYPES)
    if exponent.dtype != base.dtype:
        raise TypeError(f"base and exponent dtypes differ: {base.dtype.name} and "
                        f"{exponent.dtype.name}")
    shape, fb, fe = broadcast_flat(base, exponent)
    out = np.empty(fb.size, dtype=np.float32)
    with np.errstate(all="ignore"):  # NaN / inf as C++ gives them (matters without the JIT)
        _pow_core(fb.astype(np.float32, copy=False), fe.astype(np.float32, copy=False), out)
    return out.reshape(shape).astype(base.dtype, copy=False)


def integer_power(base, exponent):
    """TFLite int32 POW with broadcasting: ``int32(pow(double(base), double(exponent)))``.

    Negative exponents are the caller's to refuse (TFLite does); results outside the int32
    range give INT32_MIN.
    """
    base, exponent = np.asarray(base), np.asarray(exponent)
    cm.check_dtype("base", base, (np.int32,))
    cm.check_dtype("exponent", exponent, (np.int32,))
    shape, fb, fe = broadcast_flat(base, exponent)
    out = np.empty(fb.size, dtype=np.int32)
    with np.errstate(all="ignore"):
        _int_pow_core(fb, fe, out)
    return out.reshape(shape)


def sin(x):
    """``sin(x)`` elementwise; float32 / float16 (computed in float32)."""
    x = np.asarray(x)
    cm.check_dtype("input", x, cm.FLOAT_DTYPES)
    x32, dtype = cm.to_float32(x)
    out = np.empty(x32.size, dtype=np.float32)
    with np.errstate(all="ignore"):
        _sin_core(x32.reshape(-1), out)
    return out.reshape(x.shape).astype(dtype, copy=False)


@njit(error_model="numpy")  # 0 ** -1 gives inf as in C++, no ZeroDivisionError
def _pow_core(base, exponent, out):
    for i in range(out.size):
        out[i] = np.power(base[i], exponent[i])
    return out


@njit(error_model="numpy")
def _sin_core(x, out):
    for i in range(out.size):
        out[i] = np.sin(x[i])
    return out


@njit(error_model="numpy")
def _int_pow_core(base, exponent, out):
    for i in range(out.size):
        v = np.power(np.float64(base[i]), np.float64(exponent[i]))
        if -2147483649.0 < v < 2147483648.0:
            out[i] = np.int32(np.int64(v))  # truncation toward zero
        else:
            out[i] = np.int32(-2147483648)
    return out
