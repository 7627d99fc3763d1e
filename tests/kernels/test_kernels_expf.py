"""kernels/expf.py against the C library's ``expf`` (glibc, the value TFLite's float reference
kernels get from ``std::exp``), and the float SOFTMAX built on it against LiteRT's reference
kernel, bit for bit."""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np
import pytest

from .kernel_litert import T, run_op
from .kernel_testutil import requires_litert
from nnsim.kernels import _jit, softmax
from nnsim.kernels._jit import njit
from nnsim.kernels.expf import EXPF_MAIN_LIMIT, expf_main, in_main_range

_LIBM = ctypes.util.find_library("m")
requires_glibc = pytest.mark.skipif(
    _LIBM is None or "libm.so.6" not in _LIBM, reason="needs glibc's libm (expf since 2.28)")


def _libm_expf(values):
    """expf of each value through ctypes: the C library itself."""
    f = ctypes.CDLL(_LIBM).expf
    f.restype, f.argtypes = ctypes.c_float, [ctypes.c_float]
    return np.array([f(float(v)) for v in values], np.float32)


@njit(cache=False)
def _both(xs, ours, libm):
    """expf_main and the compiled call to the C library's expf of each float32."""
    for j in range(xs.size):
        ours[j] = expf_main(xs[j])
        libm[j] = np.exp(xs[j])


def _main_range_sample(stride):
    """Every ``stride``-th float32 bit pattern of [0, 88) and of (-88, -0], plus the ends."""
    top = int(np.float32(EXPF_MAIN_LIMIT).view(np.uint32))
    bits = np.arange(0, top, stride, dtype=np.int64)
    bits = np.concatenate([bits, [top - 1, 1, 2]])
    pos = bits.astype(np.uint32).view(np.float32)
    return np.concatenate([pos, -pos])


@requires_glibc
@pytest.mark.skipif(not _jit.JIT_ENABLED, reason="compiled comparison (the JIT-off one below)")
def test_expf_main_equals_libm_on_float32_samples():
    """Every 97th float32 of (-88, 88) (23 million values; the whole range, 2.24e9 values,
    was checked once when the module was written: no difference) and the range's ends."""
    xs = _main_range_sample(97)
    ours, libm = np.empty_like(xs), np.empty_like(xs)
    _both(xs, ours, libm)
    differ = ours.view(np.uint32) != libm.view(np.uint32)
    assert not differ.any(), (xs[differ][:5], ours[differ][:5], libm[differ][:5])


@requires_glibc
def test_expf_main_equals_libm_through_ctypes():
    """A sample checked against the C library through ctypes (not through numba's lowering of
    ``np.exp``), compiled or as plain Python: values near multiples of ln2 / 32 (where k
    changes), tiny ones, the range's ends and random ones."""
    rng = np.random.default_rng(7)
    near_k = (np.arange(-4000, 4000, 7) * (np.log(2) / 32)).astype(np.float32)
    xs = np.concatenate([near_k, np.nextafter(near_k, np.float32(np.inf)),
                         rng.uniform(-88, 88, 3000).astype(np.float32),
                         np.float32([0.0, -0.0, 1e-30, -1e-30, 87.99999, -87.99999])])
    xs = xs[np.abs(xs) < EXPF_MAIN_LIMIT]
    ours = np.array([expf_main(x) for x in xs], np.float32)
    want = _libm_expf(xs)
    differ = ours.view(np.uint32) != want.view(np.uint32)
    assert not differ.any(), (xs[differ][:5], ours[differ][:5], want[differ][:5])


def test_expf_main_leaves_the_rest_to_the_caller():
    """Outside the main range (and for NaN) expf_main gives 0.0 and in_main_range says so."""
    for x in np.float32([88.0, -88.0, 100.0, -104.0, -1e30, np.inf, -np.inf, np.nan]):
        assert not in_main_range(x)
        assert expf_main(x) == 0.0
    assert in_main_range(np.float32(87.99999)) and in_main_range(np.float32(-87.99999))


@requires_litert
@pytest.mark.parametrize("beta", [1.0, 0.7, 30.0])
def test_float_softmax_equals_litert_bit_for_bit(rng, beta):
    """Float SOFTMAX rows of 1001 (a classifier), with differences beyond the main range
    (beta 30: most of them below -88, the C library's path) and rows holding -inf, against
    LiteRT's reference kernel: the same bits."""
    x = (rng.standard_normal((4, 1001)) * 6).astype(np.float32)
    x[1, ::17] = -1e4
    x[2, 5] = -np.inf
    x[3, 3] = 80.0
    plan = softmax.prepare_softmax(x.shape, np.float32, beta)
    plan.bind(x)()
    (expected,) = run_op("SOFTMAX", [T(x.shape, np.float32)], [T(x.shape, np.float32)], [x],
                         dict(Beta=beta))
    assert plan.out.dtype == expected.dtype == np.float32
    differ = plan.out.view(np.uint32) != expected.view(np.uint32)
    assert not differ.any(), (np.argwhere(differ)[:5], plan.out[differ][:5], expected[differ][:5])
