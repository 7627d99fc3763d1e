"""Helpers shared by the kernel tests (fast numba kernels vs numpy reference vs LiteRT)."""

from __future__ import annotations

import numpy as np
import pytest

from . import kernel_litert

requires_litert = pytest.mark.skipif(
    not kernel_litert.AVAILABLE, reason="ai-edge-litert is not installed (LiteRT oracle)"
)


def assert_float_sums_close(actual, expected, magnitude, terms):
    """Float sums of ``terms`` products (and a bias) computed in another order or with fused
    multiply-adds: each within Higham's bound ``terms * 2**-24 * magnitude`` of the exact sum
    (``magnitude``: the same sum of absolute values), so within twice that of each other, on
    top of assert_same's tolerance (a difference beyond it is a wrong term, not rounding)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    diff = np.abs(actual.astype(np.float64) - expected)
    allowed = 1e-6 + 1e-5 * np.abs(expected) + 2 * terms * 2.0**-24 * np.abs(magnitude)
    assert (diff <= allowed).all(), (float(diff.max()), int((diff > allowed).sum()))


def assert_same(actual, expected, *, rtol=1e-5, atol=1e-6):
    """Integers: identical dtype, shape and values. Floats: within rtol/atol."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    if actual.dtype.kind == "f":
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)
    else:
        if not np.array_equal(actual, expected):
            diff = np.abs(actual.astype(np.int64) - expected.astype(np.int64))
            raise AssertionError(
                f"{int((diff > 0).sum())} of {diff.size} values differ (max {diff.max()})\n"
                f"actual={actual.ravel()[:32]}\nexpected={expected.ravel()[:32]}"
            )


def random_q(rng, dtype, shape):
    """Uniform random values over the full range of an 8-bit type."""
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)


def tflite_padding(size, kernel, stride, dilation, same):
    """TFLite SAME/VALID -> explicit ``(before, after)`` and the output size."""
    effective = (kernel - 1) * dilation + 1
    out = -(-size // stride) if same else (size + stride - effective) // stride
    total = max(0, (out - 1) * stride + effective - size)
    return total // 2, total - total // 2, out
