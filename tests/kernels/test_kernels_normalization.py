"""L2_NORMALIZATION: inverse square root multiplier, numba == reference, LiteRT (last axis)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from .kernel_testutil import assert_same, random_q, requires_litert
from .litert_extra import T, run_op
from nnsim.kernels import normalization
from nnsim.kernels.reference import normalization as ref


@pytest.mark.parametrize("value", [0, 1, 2, 3, 100, 12345, 65025 * 9, 2**28, 2**31 - 1])
def test_inv_sqrt_multiplier(value):
    got = normalization.inv_sqrt_multiplier(value)
    assert got == ref.inv_sqrt_multiplier(value)
    if value > 1:
        m, s = got
        assert math.isclose(m * 2.0 ** (s - 31), 1 / math.sqrt(value), rel_tol=2e-6)


def test_float_hand_case():
    x = np.array([[3.0, 4.0], [0.0, 0.0]], np.float32)
    np.testing.assert_array_equal(normalization.l2_normalization(x),
                                  np.float32([[3 / 5, 4 / 5], [0, 0]]))
    assert normalization.l2_normalization(x.astype(np.float16)).dtype == np.float16


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("shape,axis", [((3, 5), -1), ((2, 3, 4), 1), ((4, 2), 0),
                                        ((1, 2, 2, 6), 3)])
def test_numba_equals_reference(dtype, shape, axis, rng):
    x = random_q(rng, dtype, shape)
    zp = int(rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max + 1))
    assert_same(normalization.l2_normalization(x, axis, in_zp=zp),
                ref.l2_normalization(x, axis, in_zp=zp))
    f = rng.normal(size=shape).astype(np.float32)
    assert_same(normalization.l2_normalization(f, axis), ref.l2_normalization(f, axis),
                rtol=1e-6)


@pytest.mark.parametrize("dtype,out_zp", [(np.uint8, 128), (np.int8, 0)])
def test_quantized_values_close_to_float(dtype, out_zp, rng):
    x = random_q(rng, dtype, (6, 8))
    got = normalization.l2_normalization(x, in_zp=3).astype(np.int64) - out_zp
    d = x.astype(np.float64) - 3
    want = d / np.linalg.norm(d, axis=-1, keepdims=True) * 128
    assert np.abs(got - np.clip(want, -128, 127)).max() <= 1


@requires_litert
@pytest.mark.parametrize("dtype,out_zp", [(np.uint8, 128), (np.int8, 0)])
def test_last_axis_matches_litert(dtype, out_zp, rng):
    x = random_q(rng, dtype, (3, 2, 9))
    zp = 7 if dtype == np.uint8 else -5
    want = run_op("L2_NORMALIZATION", [T(x.shape, dtype, 0.1, zp)],
                  [T(x.shape, dtype, 1 / 128, out_zp)], [x])[0]
    assert_same(normalization.l2_normalization(x, -1, in_zp=zp), want)


@requires_litert
def test_float_matches_litert(rng):
    x = rng.normal(size=(4, 7)).astype(np.float32)
    want = run_op("L2_NORMALIZATION", [T(x.shape, np.float32)], [T(x.shape, np.float32)], [x])[0]
    assert_same(normalization.l2_normalization(x), want, rtol=1e-6)
