"""Comparison, logical, SELECT, POW / SIN and int32 kernels: numba == reference, hand cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .kernel_testutil import random_q
from nnsim.kernels import compare, float_math, int32_arith, logical
from nnsim.kernels.reference import compare as ref_compare

_SHAPES = [((3, 4), (4,)), ((2, 1, 3), (5, 1)), ((7,), (7,)), ((2, 3), ())]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(_SHAPES), st.integers(0, 5), st.sampled_from([np.uint8, np.int8]),
       st.integers(0, 2**31 - 1))
def test_quantized_comparisons_numba_equal_reference(shapes, op, dtype, seed):
    rng = np.random.default_rng(seed)
    a, b = random_q(rng, dtype, shapes[0]), random_q(rng, dtype, shapes[1])
    lo = -128 if dtype == np.int8 else 0
    q = dict(in1_scale=float(rng.uniform(1e-4, 0.99)), in1_zp=int(rng.integers(lo, lo + 256)),
             in2_scale=float(rng.uniform(1e-4, 0.99)), in2_zp=int(rng.integers(lo, lo + 256)))
    np.testing.assert_array_equal(compare.compare(op, a, b, **q),
                                  ref_compare.compare(op, a, b, **q))
    np.testing.assert_array_equal(compare.compare_tflite_quantized(op, a, b, **q),
                                  ref_compare.compare_tflite_quantized(op, a, b, **q))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.bool_])
@pytest.mark.parametrize("op", range(6))
def test_direct_comparisons_numba_equal_reference(dtype, op):
    rng = np.random.default_rng(op)
    a = rng.integers(-3, 4, (4, 5)).astype(dtype)
    b = rng.integers(-3, 4, (5,)).astype(dtype)
    got = compare.compare(op, a, b)
    assert got.dtype == np.bool_ and got.shape == (4, 5)
    np.testing.assert_array_equal(got, ref_compare.compare(op, a, b))


def test_tflite_rescaling_merges_values_nnapi_keeps_apart():
    # scale 1e-3: key(v) = round(v * 256 * 1e-3): 0 -> 0, 1 -> 0, 2 -> 1 (hand-computed)
    a, b = np.uint8([0, 1, 2]), np.uint8([1, 1, 1])
    assert compare.tflite_scale_table(np.uint8, 1e-3, 0)[:3].tolist() == [0, 0, 1]
    assert compare.compare_tflite_quantized(compare.EQUAL, a, b, in1_scale=1e-3,
                                            in2_scale=1e-3).tolist() == [True, True, False]
    assert compare.compare(compare.EQUAL, a, b, in1_scale=1e-3,
                           in2_scale=1e-3).tolist() == [False, True, False]
    with pytest.raises(ValueError):
        compare.compare_tflite_quantized(compare.LESS, a, b, in1_scale=1.0, in2_scale=0.5)


def test_bool_bytes_other_than_one_are_true_for_logical_ops_but_compare_raw():
    two = np.uint8([2, 0]).view(np.bool_)
    one = np.array([True, True])
    assert logical.logical_and(two, one).view(np.uint8).tolist() == [1, 0]
    assert logical.logical_or(two, ~one).view(np.uint8).tolist() == [1, 0]
    assert logical.logical_not(two).tolist() == [False, True]
    assert compare.compare(compare.EQUAL, two, one).tolist() == [False, False]


def test_select_broadcasts_and_copies_raw_or_requantizes():
    cond = np.array([[True], [False]])
    out = logical.select(cond, np.float16([1, 2, 3]), np.float16([[4, 5, 6], [7, 8, 9]]))
    assert out.dtype == np.float16 and out.tolist() == [[1, 2, 3], [7, 8, 9]]
    raw = logical.select(np.array([True, False]), np.int8([-2, 0]), np.int8([0, 2]))
    assert raw.tolist() == [-2, 2]
    req = logical.select(np.array([True, False]), np.int8([-2, 0]), np.int8([0, 2]),
                         in1_scale=1.5, in1_zp=1, in2_scale=0.5, in2_zp=-1, out_scale=1.0,
                         out_zp=0)
    assert req.tolist() == [-5, 2]  # -4.5 -> -5 and 1.5 -> 2: half away from zero


def test_power_and_sin_match_float32_libm():
    rng = np.random.default_rng(7)
    base = rng.uniform(0.1, 10, (3, 4)).astype(np.float32)
    exp = rng.uniform(-3, 3, (4,)).astype(np.float32)
    np.testing.assert_allclose(float_math.power(base, exp),
                               np.float64(base) ** np.float64(exp), rtol=2e-7)
    x = rng.uniform(-10, 10, 50).astype(np.float32)
    np.testing.assert_allclose(float_math.sin(x), np.sin(np.float64(x)), rtol=1e-6, atol=1e-7)
    with pytest.raises(TypeError):
        float_math.power(np.float32([1]), np.float16([1]))


def test_int32_binary_wraps():
    a, b = np.int32([2**31 - 1, -2**31, 65536]), np.int32([1, 1, 65536])
    assert int32_arith.int32_binary(int32_arith.ADD, a, b).tolist() == [-2**31, -2**31 + 1,
                                                                       131072]
    assert int32_arith.int32_binary(int32_arith.SUB, a, b).tolist() == [2**31 - 2, 2**31 - 1, 0]
    assert int32_arith.int32_binary(int32_arith.MUL, a, b).tolist() == [2**31 - 1, -2**31, 0]
