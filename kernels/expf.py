"""``expf`` as the C library computes it, in a form a loop can run without calling it.

TFLite's float reference kernels call ``std::exp`` on a float: glibc's ``expf`` (since 2.28;
``sysdeps/ieee754/flt-32/e_expf.c`` and ``exp2f_data.c``, from ARM's optimized-routines). On
x86-64 with FMA, the build every AVX2 or AVX-512 machine runs, it computes for ``|x| < 88``::

    z = x * 32 / ln2                    (double; 32/ln2 rounded to a double, INV below)
    k = round(z)                        (adding and subtracting 1.5 * 2**52)
    r = x * INV - k                     (fused: one rounding)
    s = 2**(k / 32) = T[k mod 32] * 2**(k div 32)
    expf(x) = float(((C0 * r + C1) * r**2 + (C2 * r + 1)) * s)

with T[i] = 2**(i / 32) rounded to a double and C0-C2 its cubic's coefficients scaled by
32**-3, 32**-2, 32**-1. :func:`expf_main` does the same without a fused multiply-add: INV =
H + L with H of 26 significant bits, so ``x * H`` and ``x * L`` are exact for a float32 x,
``x * H - k`` is exact (the two are within a factor 2, or k = 0), and their sum rounds once,
as the fused operation does. Checked bit for bit against the C library's ``expf`` on every
float32 of (-88, 88) (2.24e9 values, glibc 2.36): no difference. For ``|x| >= 88`` and NaN
(glibc's special cases: overflow, underflow, the subnormal range) the caller asks the C library
itself (:func:`libm_expf`).

Why: a 1x1001 float SOFTMAX took 4.0 us, most of it in 1001 calls; 2.5 us without them
(Zen 5; tests/kernels/test_kernels_expf.py holds the comparisons).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
from decimal import Decimal, localcontext

import numpy as np

from nnsim.kernels._jit import JIT_ENABLED, njit

__all__ = ["expf", "libm_expf", "expf_main", "in_main_range", "EXPF_MAIN_LIMIT"]


def _libm_expf():
    """The C library's ``expf`` (what LiteRT's ``std::exp(float)`` calls), or None."""
    try:
        fn = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6").expf
    except (OSError, AttributeError):
        return None
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return fn


_EXPF = _libm_expf()


def expf(x):
    """float32 ``exp`` as C's ``expf`` rounds it. numpy's float32 exp is its own SIMD code
    and differs from glibc's in the last bit for about a third of inputs; numba's compiled
    ``np.exp`` calls libm's ``expf``. Without libm, the double exp rounded to float32 (off
    in ~1 in 2000 inputs)."""
    if _EXPF is not None:
        return np.float32(_EXPF(float(x)))
    return np.float32(math.exp(float(x)))


if JIT_ENABLED:
    @njit
    def libm_expf(x):
        """The C library's expf of a float32, callable from compiled cores."""
        return np.exp(x)        # compiled: a call to libm's expf
else:
    libm_expf = expf

#: expf_main serves |x| below this (glibc's own bound for its main path).
EXPF_MAIN_LIMIT = 88.0


def _fractions():
    """T[i] = 2**(i / 32) correctly rounded to a double (40 digits first: no double rounding
    can reach a double's half-way point)."""
    with localcontext() as ctx:
        ctx.prec = 40
        return np.array([float(Decimal(2) ** (Decimal(i) / 32)) for i in range(32)])


_T = _fractions()
#: 2**j for j = k div 32 over |x| < 88 (k in [-4063, 4063]): index j + 128.
_POW2 = np.ldexp(1.0, np.arange(-128, 129))
_INV = float.fromhex("0x1.71547652b82fep+0") * 32          # 32 / ln2
_INV_HI = float.fromhex("0x1.7154760000000p+5")             # its first 26 bits
_INV_LO = _INV - _INV_HI                                     # the rest, exactly
_SHIFT = float.fromhex("0x1.8p+52")
_C0 = float.fromhex("0x1.c6af84b912394p-5") / 32 ** 3
_C1 = float.fromhex("0x1.ebfce50fac4f3p-3") / 32 ** 2
_C2 = float.fromhex("0x1.62e42ff0c52d6p-1") / 32


@njit(inline="always")
def in_main_range(x):
    """Whether :func:`expf_main` gives ``expf(x)`` (False for NaN)."""
    return abs(x) < EXPF_MAIN_LIMIT


@njit(inline="always")
def expf_main(x):
    """``expf(x)`` (float32) for ``|x| < 88``; 0.0 for any other x (NaN included), which the
    caller replaces by the C library's value."""
    xd = np.float64(x) if abs(x) < EXPF_MAIN_LIMIT else 0.0
    kd = (xd * _INV + _SHIFT) - _SHIFT
    r = (xd * _INV_HI - kd) + xd * _INV_LO
    k = np.int32(kd)
    s = _T[k & 31] * _POW2[(k >> 5) + 128]
    y = (_C0 * r + _C1) * (r * r) + (_C2 * r + 1.0)
    return np.float32(y * s) if abs(x) < EXPF_MAIN_LIMIT else np.float32(0.0)
