"""Unary kernels (SQRT, RSQRT, EXP, LOG, FLOOR, ABS, NEG, ELU) and NNAPI's fixed-point
quantized TANH: hand cases, numba == reference."""

from __future__ import annotations

import math

import numpy as np
import pytest

from .kernel_testutil import assert_same
from nnsim.kernels import unary
from nnsim.kernels.reference import unary as ref_unary

FLOAT_OPS = ["sqrt", "rsqrt", "exp", "log", "floor", "absolute", "neg"]


@pytest.mark.parametrize("name", FLOAT_OPS)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_float_fast_equals_reference(name, dtype, rng):
    x = rng.uniform(0.01, 8.0, 64).astype(dtype)
    if name in ("floor", "absolute", "neg"):
        x = (x - 4).astype(dtype)
    got = getattr(unary, name)(x)
    assert got.dtype == dtype
    assert_same(got, getattr(ref_unary, name)(x), rtol=3e-7 if dtype == np.float32 else 1e-3)


def test_float_hand_cases():
    x = np.array([4.0, 0.25, 1.0], np.float32)
    assert unary.sqrt(x).tolist() == [2.0, 0.5, 1.0]
    assert unary.rsqrt(x).tolist() == [0.5, 2.0, 1.0]
    assert unary.floor(np.array([-1.5, 1.5], np.float32)).tolist() == [-2.0, 1.0]
    assert np.isnan(unary.log(np.array([-1.0], np.float32))[0])


def test_int32_abs_and_neg_wrap():
    x = np.array([-2**31, -5, 0, 7, 2**31 - 1], np.int32)
    assert unary.absolute(x).tolist() == [-2**31, 5, 0, 7, 2**31 - 1]
    assert unary.neg(x).tolist() == [-2**31, 5, 0, -7, -(2**31 - 1)]
    assert_same(unary.absolute(x), ref_unary.absolute(x))
    assert_same(unary.neg(x), ref_unary.neg(x))


def test_elu():
    x = np.array([-3.0, -1.0, 0.0, 2.0], np.float32)
    got = unary.elu(x, 0.5)
    np.testing.assert_allclose(got, [0.5 * math.expm1(-3), 0.5 * math.expm1(-1), 0, 2], rtol=1e-6)
    assert_same(got, ref_unary.elu(x, 0.5), rtol=1e-6)
    assert unary.elu(x.astype(np.float16), 1.0).dtype == np.float16


@pytest.mark.parametrize("dtype,zp,scale", [(np.uint8, 128, 0.05), (np.uint8, 17, 0.01),
                                            (np.int8, 0, 0.1), (np.int8, -40, 0.3),
                                            (np.uint8, 200, 1.0)])
def test_tanh_quantized_numba_equals_reference_on_every_value(dtype, zp, scale):
    info = np.iinfo(dtype)
    x = np.arange(info.min, info.max + 1).astype(dtype)
    got = unary.tanh_quantized(x, in_scale=scale, in_zp=zp)
    assert_same(got, ref_unary.tanh_quantized(x, in_scale=scale, in_zp=zp))
    real = np.tanh(scale * (x.astype(np.float64) - zp))
    want = np.clip(np.round(real * 128) + (128 if dtype == np.uint8 else 0), info.min, info.max)
    assert np.abs(got.astype(np.int64) - want).max() <= 1


def test_tanh_quantized_hand_values():
    x = np.array([128, 0, 255], np.uint8)
    assert unary.tanh_quantized(x, in_scale=0.1, in_zp=128).tolist() == [128, 0, 255]
    x = np.array([0, -128, 127], np.int8)
    assert unary.tanh_quantized(x, in_scale=0.1, in_zp=0).tolist() == [0, -128, 127]


def test_gemmlowp_tanh_precision():
    for v in np.linspace(-7.9, 7.9, 201):
        raw = ref_unary.gemmlowp_tanh_q4(np.array([int(v * 2**27)]))[0]
        assert abs(raw / 2**31 - math.tanh(v)) < 1e-6


def test_tanh_quantized_tiny_scale_is_an_error():
    with pytest.raises(ValueError):
        unary.tanh_quantized(np.zeros(2, np.uint8), in_scale=2.0**-28, in_zp=0)
