"""Helpers shared by the kernel tests (fast numba kernels vs numpy reference vs LiteRT)."""

from __future__ import annotations

import numpy as np
import pytest

from . import kernel_litert

requires_litert = pytest.mark.skipif(
    not kernel_litert.AVAILABLE, reason="ai-edge-litert is not installed (LiteRT oracle)"
)


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
