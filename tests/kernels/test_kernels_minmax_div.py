"""DIV, MAXIMUM, MINIMUM, PRELU: hand cases, numba == reference (exact on integers)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .kernel_testutil import assert_same, random_q
from nnsim.kernels import div, minmax
from nnsim.kernels.reference import div as ref_div
from nnsim.kernels.reference import minmax as ref_minmax


def test_int32_div_floors_and_zero_divisor_gives_zero():
    a = np.array([7, -7, 7, -7, 5, -2**31, 6], np.int32)
    b = np.array([2, 2, -2, -2, 0, -1, 3], np.int32)
    want = [3, -4, -4, 3, 0, -2**31, 2]
    assert div.div(a, b).tolist() == want
    assert ref_div.div(a, b).tolist() == want


def test_float_div_with_relu6_and_division_by_zero():
    a = np.array([[1.0], [-8.0], [60.0]], np.float32)
    b = np.array([0.5, 0.0], np.float32)
    out = div.div(a, b, fuse=3)
    assert out.tolist() == [[2.0, 6.0], [0.0, 0.0], [6.0, 6.0]]
    assert np.isinf(div.div(np.float32([1.0]), np.float32([0.0])))[0]
    with pytest.raises(ValueError):
        div.div(np.int32([1]), np.int32([1]), fuse=1)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([((3, 4), (4,)), ((2, 1, 3), (5, 1)), ((4,), (4,))]),
       st.integers(0, 2**31 - 1))
def test_int32_div_numba_equals_reference(shapes, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-1000, 1000, shapes[0]).astype(np.int32)
    b = rng.integers(-9, 10, shapes[1]).astype(np.int32)
    assert_same(div.div(a, b), ref_div.div(a, b))


def test_maximum_minimum_float_and_int32():
    a = np.array([[1, 5], [3, -2]], np.int32)
    b = np.array([2, 2], np.int32)
    assert minmax.maximum(a, b).tolist() == [[2, 5], [3, 2]]
    assert minmax.minimum(a, b).tolist() == [[1, 2], [2, -2]]
    h = minmax.maximum(np.float16([1.5, -1]), np.float16([0.5, 2]))
    assert h.dtype == np.float16 and h.tolist() == [1.5, 2.0]


def test_requantize_rounds_half_away_and_saturates():
    table = minmax.requantize_table(np.uint8, 0.5, 0, 1.0, 0)
    assert table[:6].tolist() == [0, 1, 1, 2, 2, 3]   # 0, .5->1, 1, 1.5->2, 2, 2.5->3
    assert minmax.requantize_table(np.uint8, 1.0, 0, 0.5, 0)[200] == 255
    assert minmax.requantize_table(np.int8, 1.0, 0, 1.0, -100)[0] == -128


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([np.uint8, np.int8]), st.integers(0, 2**31 - 1),
       st.floats(0.01, 2.0), st.floats(0.01, 2.0), st.floats(0.01, 2.0))
def test_quantized_numba_equals_reference(dtype, seed, s1, s2, so):
    rng = np.random.default_rng(seed)
    a, b = random_q(rng, dtype, (2, 3, 4)), random_q(rng, dtype, (3, 1))
    zps = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max + 1, 3)
    q = dict(in1_scale=s1, in1_zp=zps[0], in2_scale=s2, in2_zp=zps[1], out_scale=so,
             out_zp=zps[2])
    assert_same(minmax.maximum(a, b, **q), ref_minmax.maximum(a, b, **q))
    assert_same(minmax.minimum(a, b, **q), ref_minmax.minimum(a, b, **q))
    p = dict(in_scale=s1, in_zp=zps[0], alpha_scale=s2 / 8, alpha_zp=zps[1], out_scale=so,
             out_zp=zps[2])
    assert_same(minmax.prelu(a, b, **p), ref_minmax.prelu(a, b, **p))


def test_prelu_float_and_quant_hand_cases():
    x = np.array([-2.0, -0.5, 0.0, 3.0], np.float32)
    alpha = np.array([0.25], np.float32)
    assert minmax.prelu(x, alpha).tolist() == [-0.5, -0.125, 0.0, 3.0]
    # x scale 0.5 zp 128; alpha 0.25 at scale 1/64 zp 0 (raw 16); out scale 0.25 zp 100
    xq = np.array([124, 127, 128, 134], np.uint8)     # -2, -0.5, 0, 3
    aq = np.array([16], np.uint8)
    out = minmax.prelu(xq, aq, in_scale=0.5, in_zp=128, alpha_scale=1 / 64, alpha_zp=0,
                       out_scale=0.25, out_zp=100)
    assert out.tolist() == [98, 99, 100, 112]    # -0.5, -0.125 (-0.5 steps: away from 0), 0, 3
