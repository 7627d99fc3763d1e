"""Comparisons, LOGICAL_*, SELECT, POW, SIN and int32 ADD/SUB/MUL through the runtime:
hand-computed values (float, float16, int32, bool8, quant8 and signed quant8), feature levels,
rejections at validation and at execution."""
import math

import numpy as np
import pytest

from nnsim.errors import OperationValidationError, OpFailedError
from nnsim.types import FL3, FL4, OperandType, OperationCode as C

from .ophelp import build, f16, f32, feature_level, i32, i32t, q8, run1, s8, tensor

T = OperandType
COMPARISONS = (C.EQUAL, C.NOT_EQUAL, C.GREATER, C.GREATER_EQUAL, C.LESS, C.LESS_EQUAL)


def b8(dims, value=None):
    return tensor(T.TENSOR_BOOL8, dims, value=value)


def _expected(code, a, b):
    return {C.EQUAL: a == b, C.NOT_EQUAL: a != b, C.GREATER: a > b, C.GREATER_EQUAL: a >= b,
            C.LESS: a < b, C.LESS_EQUAL: a <= b}[code]


# -- comparisons -------------------------------------------------------------------------------
@pytest.mark.parametrize("code", COMPARISONS)
def test_float_comparison_broadcasts(code):
    # [2, 1] against [2]: rows 1 and 4 against columns 1 and 4
    out = run1(code, [f32([2, 1]), f32([2])], [b8([2, 2])], [1, 4], [1, 4])
    want = {C.EQUAL: [[1, 0], [0, 1]], C.NOT_EQUAL: [[0, 1], [1, 0]],
            C.GREATER: [[0, 0], [1, 0]], C.GREATER_EQUAL: [[1, 0], [1, 1]],
            C.LESS: [[0, 1], [0, 0]], C.LESS_EQUAL: [[1, 1], [0, 1]]}[code]
    assert out.dtype == np.bool_
    assert out.astype(int).tolist() == want


@pytest.mark.parametrize("code", COMPARISONS)
def test_int32_float16_and_bool8_comparisons(code):
    a, b = [-3, 7, 2**31 - 1], [7, 7, -2**31]
    want = _expected(code, np.array(a), np.array(b)).tolist()
    assert run1(code, [i32t([3]), i32t([3])], [b8([3])], a, b).tolist() == want
    # 0.1 and 0.1000061 are neighbouring float16 values: compared exactly
    a16, b16 = [0.1, 65504, -0.0], [np.float16(0.1) + np.float16(6.1e-5), 65504, 0.0]
    want16 = _expected(code, np.float16(a16), np.float16(b16)).tolist()
    assert run1(code, [f16([3]), f16([3])], [b8([3])], a16, b16).tolist() == want16
    ab, bb = [True, True, False, False], [True, False, True, False]
    wantb = _expected(code, np.array(ab, int), np.array(bb, int)).tolist()
    assert run1(code, [b8([4]), b8([4])], [b8([4])], ab, bb).tolist() == wantb


@pytest.mark.parametrize("code", COMPARISONS)
def test_quant8_compares_dequantized_values(code):
    # input1 scale 1 zp 128: 129, 130, 131 are 1, 2, 3; input2 scale 2 zp 128: 129 is 2
    out = run1(code, [q8([3], 1.0, 128), q8([1], 2.0, 128)], [b8([3])], [129, 130, 131], [129])
    assert out.tolist() == _expected(code, np.array([1, 2, 3]), 2).tolist()


@pytest.mark.parametrize("code", COMPARISONS)
def test_quant8_signed_compares_dequantized_values(code):
    # input1 scale 0.5 zp -1: -1, 1, 3 are 0, 1, 2; input2 scale 0.25 zp 0: 4 is 1
    out = run1(code, [s8([3], 0.5, -1), s8([1], 0.25, 0)], [b8([3])], [-1, 1, 3], [4])
    assert out.tolist() == _expected(code, np.array([0, 1, 2]), 1).tolist()


def test_small_scale_values_stay_distinct():
    # scale 1e-3: 0 and 1 are 0.0 and 0.001 (TFLite's integer rescaling would call them equal)
    out = run1(C.EQUAL, [q8([2], 1e-3, 0), q8([2], 1e-3, 0)], [b8([2])], [0, 1], [1, 1])
    assert out.tolist() == [False, True]
    out = run1(C.LESS, [s8([2], 1e-3, 0), s8([2], 1e-3, 0)], [b8([2])], [0, -1], [1, 0])
    assert out.tolist() == [True, True]


def test_comparison_feature_levels_and_rejections():
    for code in COMPARISONS:
        assert feature_level(code, [f32([2]), f32([2])], [b8([2])]) == FL3
        assert feature_level(code, [f16([2]), f16([2])], [b8([2])]) == FL3
        assert feature_level(code, [i32t([2]), i32t([2])], [b8([2])]) == FL3
        assert feature_level(code, [b8([2]), b8([2])], [b8([2])]) == FL3
        assert feature_level(code, [q8([2], 1, 0), q8([2], 2, 3)], [b8([2])]) == FL3
        assert feature_level(code, [s8([2], 1, 0), s8([2], 2, 3)], [b8([2])]) == FL4
    with pytest.raises(OperationValidationError):
        build(C.LESS, [f32([2]), f32([2])], [f32([2])])          # output must be bool8
    with pytest.raises(OperationValidationError):
        build(C.EQUAL, [f32([2]), f16([2])], [b8([2])])          # input types differ
    with pytest.raises(OperationValidationError):
        build(C.GREATER, [tensor(T.TENSOR_QUANT16_SYMM, [2], 1.0), tensor(
            T.TENSOR_QUANT16_SYMM, [2], 1.0)], [b8([2])])
    with pytest.raises(OpFailedError):
        run1(C.EQUAL, [f32([3]), f32([2])], [b8([3])], [1, 2, 3], [1, 2])


# -- logical -------------------------------------------------------------------------------------
def test_logical_and_or_broadcast_and_not():
    a = [True, False, True, False]
    out = run1(C.LOGICAL_AND, [b8([1, 1, 1, 4]), b8([1, 1], [True])], [b8([1, 1, 1, 4])], a)
    assert out.ravel().tolist() == a
    out = run1(C.LOGICAL_AND, [b8([4]), b8([4])], [b8([4])], a, [True, True, False, False])
    assert out.tolist() == [True, False, False, False]
    out = run1(C.LOGICAL_OR, [b8([2, 1]), b8([2])], [b8([2, 2])], [True, False], [False, True])
    assert out.tolist() == [[True, True], [False, True]]
    assert run1(C.LOGICAL_NOT, [b8([3])], [b8([3])], [True, False, True]).tolist() == \
        [False, True, False]


def test_logical_feature_levels_and_rejections():
    assert feature_level(C.LOGICAL_AND, [b8([2]), b8([2])], [b8([2])]) == FL3
    assert feature_level(C.LOGICAL_OR, [b8([2]), b8([2])], [b8([2])]) == FL3
    assert feature_level(C.LOGICAL_NOT, [b8([2])], [b8([2])]) == FL3
    with pytest.raises(OperationValidationError):
        build(C.LOGICAL_OR, [i32t([2]), i32t([2])], [b8([2])])
    with pytest.raises(OperationValidationError):
        build(C.LOGICAL_NOT, [b8([2]), b8([2])], [b8([2])])
    with pytest.raises(OpFailedError):
        run1(C.LOGICAL_AND, [b8([3]), b8([2])], [b8([3])], [True] * 3, [True] * 2)


# -- SELECT --------------------------------------------------------------------------------------
def test_select_float_and_int32():
    cond = [True, False, False, True]
    out = run1(C.SELECT, [b8([2, 2]), f32([2, 2]), f32([2, 2])], [f32([2, 2])], cond,
               [1, 2, 3, 4], [5, 6, 7, 8])
    assert out.ravel().tolist() == [1, 6, 7, 4]
    out = run1(C.SELECT, [b8([3]), i32t([3]), i32t([3])], [i32t([3])], cond[:3],
               [1, 2, 3], [-1, -2, -3])
    assert out.tolist() == [1, -2, -3]


def test_select_quant8_requantizes_to_the_output():
    # x scale 1.5 zp 129: 131 is 3 -> 131 at scale 1 zp 128; y scale 0.5 zp 127: 131 is 2 -> 130
    out = run1(C.SELECT, [b8([2]), q8([2], 1.5, 129), q8([2], 0.5, 127)], [q8([2], 1.0, 128)],
               [True, False], [131, 131], [131, 131])
    assert out.tolist() == [131, 130]


def test_select_quant8_signed_rounds_half_away_from_zero():
    # x scale 1.5 zp 1: -2 is -4.5 -> -5 (not -4); y scale 0.5 zp -1: 2 is 1.5 -> 2;
    # 127 at scale 1.5 zp 1 is 189 -> saturates to 127
    out = run1(C.SELECT, [b8([3]), s8([3], 1.5, 1), s8([3], 0.5, -1)], [s8([3], 1.0, 0)],
               [True, False, True], [-2, 0, 127], [0, 2, 0])
    assert out.tolist() == [-5, 2, 127]


def test_select_needs_equal_shapes_and_types():
    assert feature_level(C.SELECT, [b8([2]), f32([2]), f32([2])], [f32([2])]) == FL3
    assert feature_level(C.SELECT, [b8([2]), f16([2]), f16([2])], [f16([2])]) == FL3
    assert feature_level(C.SELECT, [b8([2]), i32t([2]), i32t([2])], [i32t([2])]) == FL3
    assert feature_level(C.SELECT, [b8([2]), q8([2], 1, 0), q8([2], 1, 0)],
                         [q8([2], 1, 0)]) == FL3
    assert feature_level(C.SELECT, [b8([2]), s8([2], 1, 0), s8([2], 1, 0)],
                         [s8([2], 1, 0)]) == FL4
    with pytest.raises(OperationValidationError):
        build(C.SELECT, [f32([2]), f32([2]), f32([2])], [f32([2])])   # condition not bool8
    with pytest.raises(OperationValidationError):
        build(C.SELECT, [b8([2]), b8([2]), b8([2])], [b8([2])])       # bool8 data
    with pytest.raises(OpFailedError):  # no broadcasting of the condition
        run1(C.SELECT, [b8([2]), f32([2, 2]), f32([2, 2])], [f32([2, 2])], [True, False],
             [1, 2, 3, 4], [5, 6, 7, 8])
    with pytest.raises(OpFailedError):  # nor of the inputs
        run1(C.SELECT, [b8([2]), f32([2]), f32([1])], [f32([2])], [True, False], [1, 2], [5])


# -- POW and SIN ---------------------------------------------------------------------------------
def test_pow_broadcasts_and_follows_cpp_special_values():
    out = run1(C.POW, [f32([2, 1]), f32([1, 3])], [f32([2, 3])], [2, 3], [0, 2, -1])
    np.testing.assert_allclose(out, [[1, 4, 0.5], [1, 9, 1 / 3]], rtol=1e-7)
    out = run1(C.POW, [f32([3]), f32([3])], [f32([3])], [0, -8, -2], [-1, 1 / 3, 3])
    assert math.isinf(out[0]) and math.isnan(out[1]) and out[2] == -8
    out = run1(C.POW, [f16([2]), f16([1])], [f16([2])], [3, 10], [3])
    assert out.dtype == np.float16 and out.tolist() == [27, 1000]


def test_pow_feature_levels_and_rejections():
    assert feature_level(C.POW, [f32([2]), f32([2])], [f32([2])]) == FL3
    assert feature_level(C.POW, [f16([2]), f16([2])], [f16([2])]) == FL3
    with pytest.raises(OperationValidationError):
        build(C.POW, [i32t([2]), i32t([2])], [i32t([2])])
    with pytest.raises(OperationValidationError):
        build(C.POW, [s8([2], 1, 0), s8([2], 1, 0)], [s8([2], 1, 0)])
    with pytest.raises(OpFailedError):
        run1(C.POW, [f32([3]), f32([2])], [f32([3])], [1, 2, 3], [1, 2])


def test_sin_float32_and_float16():
    x = [0.0, math.pi / 6, math.pi / 2, -math.pi / 2, 3.0]
    out = run1(C.SIN, [f32([5])], [f32([5])], x)
    np.testing.assert_allclose(out, np.sin(np.float64(np.float32(x))), rtol=1e-6, atol=1e-7)
    out16 = run1(C.SIN, [f16([2])], [f16([2])], [math.pi / 6, 100.0])
    want16 = np.float16(np.sin(np.float64(np.float16([math.pi / 6, 100.0]))))
    assert out16.dtype == np.float16 and out16.tolist() == want16.tolist()
    assert feature_level(C.SIN, [f32([2])], [f32([2])]) == FL3
    assert feature_level(C.SIN, [f16([2])], [f16([2])]) == FL3
    with pytest.raises(OperationValidationError):
        build(C.SIN, [q8([2], 1, 0)], [q8([2], 1, 0)])


# -- int32 ADD / SUB / MUL (executeInt32) -------------------------------------------------------
@pytest.mark.parametrize("code,want", [(C.ADD, [[3, -9], [-2**31 + 1, -9]]),
                                       (C.SUB, [[-1, 5], [2**31 - 3, 5]]),
                                       (C.MUL, [[2, 14], [-2, 14]])])
def test_int32_add_sub_mul_broadcast_and_wrap(code, want):
    # [[1, -2], [2**31 - 1, -2]] with [2, -7]; 2**31 + 1 and 2**32 - 2 wrap around
    out = run1(code, [i32t([2, 2]), i32t([2]), i32(0)], [i32t([2, 2])],
               [1, -2, 2**31 - 1, -2], [2, -7])
    assert out.dtype == np.int32 and out.tolist() == want
    assert feature_level(code, [i32t([2]), i32t([2]), i32(0)], [i32t([2])]) == FL4


def test_int32_add_needs_fuse_none():
    with pytest.raises(OpFailedError):
        run1(C.ADD, [i32t([1]), i32t([1], [2]), i32(1)], [i32t([1])], [1])
