"""QUANTIZE and DEQUANTIZE: values and feature levels (T13 Quantize.cpp / Dequantize.cpp)."""
import numpy as np
import pytest

from nnsim.errors import OperationValidationError
from nnsim.types import FL1, FL3, FL4, OperandType as T, OperationCode as C

from .ophelp import build, f16, f32, feature_level, i32t, q8, run1, s8, tensor


def test_quantize_uint8():
    out = run1(C.QUANTIZE, [f32([5])], [q8([5], 0.5, 128)], [0, 1, -1, 2.5, 1000])
    np.testing.assert_array_equal(out, [128, 130, 126, 133, 255])


def test_quantize_int8_from_float16():
    out = run1(C.QUANTIZE, [f16([5])], [s8([5], 0.5, 0)], [0, 1, -1, 2.5, -1000])
    np.testing.assert_array_equal(out, [0, 2, -2, 5, -128])


def test_quantize_feature_levels_and_rejections():
    assert feature_level(C.QUANTIZE, [f32([2])], [q8([2], 0.5, 0)]) == FL3
    assert feature_level(C.QUANTIZE, [f16([2])], [q8([2], 0.5, 0)]) == FL3
    assert feature_level(C.QUANTIZE, [f32([2])], [s8([2], 0.5, 0)]) == FL4
    with pytest.raises(OperationValidationError):
        build(C.QUANTIZE, [q8([2], 0.5, 0)], [q8([2], 0.5, 0)])
    with pytest.raises(OperationValidationError):
        build(C.QUANTIZE, [f32([2])], [f32([2])])


def test_dequantize_uint8():
    out = run1(C.DEQUANTIZE, [q8([4], 0.5, 127)], [f32([4])], [0, 1, 2, 255])
    np.testing.assert_allclose(out, [-63.5, -63, -62.5, 64])


def test_dequantize_symm_to_float16():
    out = run1(C.DEQUANTIZE, [tensor(T.TENSOR_QUANT8_SYMM, [2], 0.5)], [f16([2])], [-2, 4])
    assert out.dtype == np.float16
    np.testing.assert_allclose(out, [-1, 2])


def test_dequantize_per_channel():
    x = tensor(T.TENSOR_QUANT8_SYMM_PER_CHANNEL, [2, 2], value=[2, 4, 1, -3],
               channel_quant=(0, [0.5, 2.0]))
    out = run1(C.DEQUANTIZE, [x], [f32([2, 2])])
    np.testing.assert_allclose(out, [[1, 2], [2, -6]])


def test_dequantize_feature_levels():
    assert feature_level(C.DEQUANTIZE, [q8([2], 0.5, 0)], [f32([2])]) == FL1
    assert feature_level(C.DEQUANTIZE, [q8([2], 0.5, 0)], [f16([2])]) == FL3
    # AOSP returns FL3 for a signed input (the operand type itself raises the model to FL4).
    assert feature_level(C.DEQUANTIZE, [s8([2], 0.5, 0)], [f32([2])]) == FL3
    assert feature_level(C.DEQUANTIZE, [tensor(T.TENSOR_QUANT8_SYMM, [2], 0.5)], [f32([2])]) == FL3


def test_dequantize_rejections():
    with pytest.raises(OperationValidationError):
        build(C.DEQUANTIZE, [f32([2])], [f32([2])])
    with pytest.raises(OperationValidationError):
        build(C.DEQUANTIZE, [q8([2], 0.5, 0)], [i32t([2])])
    with pytest.raises(OperationValidationError):
        build(C.DEQUANTIZE, [q8([1, 1, 1, 1, 2], 0.5, 0)], [f32([1, 1, 1, 1, 2])])
