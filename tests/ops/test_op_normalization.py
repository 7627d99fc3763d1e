"""L2_NORMALIZATION and L2_POOL_2D: values, output quantization, feature levels."""
import numpy as np
import pytest

from nnsim.errors import OperationValidationError, OpFailedError
from nnsim.types import FL1, FL3, FL4, OperationCode as C

from .ophelp import boolean, build, f16, f32, feature_level, i32, q8, run1, s8


def test_l2_normalization_float_last_and_other_axis():
    out = run1(C.L2_NORMALIZATION, [f32([1, 1, 1, 2])], [f32([1, 1, 1, 2])], [3, 4])
    np.testing.assert_allclose(out.ravel(), [0.6, 0.8], rtol=1e-6)
    out = run1(C.L2_NORMALIZATION, [f32([2, 2]), i32(0)], [f32([2, 2])], [3, 0, 4, 1])
    np.testing.assert_allclose(out.ravel(), [0.6, 0, 0.8, 1], rtol=1e-6)


def test_l2_normalization_quant():
    out = run1(C.L2_NORMALIZATION, [q8([2], 0.1, 100)], [q8([2], 1 / 128, 128)], [130, 140])
    assert out.tolist() == [128 + 77, 128 + 102]        # 0.6 * 128 = 76.8, 0.8 * 128 = 102.4
    out = run1(C.L2_NORMALIZATION, [s8([2], 0.1, 0)], [s8([2], 1 / 128, 0)], [-30, 40])
    assert out.tolist() == [-77, 102]


def test_l2_normalization_model_output_quant_is_checked():
    with pytest.raises(OpFailedError):
        run1(C.L2_NORMALIZATION, [q8([2], 0.1, 100)], [q8([2], 1 / 256, 0)], [130, 140])


def test_l2_normalization_feature_levels():
    assert feature_level(C.L2_NORMALIZATION, [f32([1, 1, 1, 2])], [f32([1, 1, 1, 2])]) == FL1
    assert feature_level(C.L2_NORMALIZATION, [f32([1, 2])], [f32([1, 2])]) == FL3
    assert feature_level(C.L2_NORMALIZATION, [f32([1, 1, 1, 2]), i32(-1)],
                         [f32([1, 1, 1, 2])]) == FL3
    assert feature_level(C.L2_NORMALIZATION, [f16([1, 1, 1, 2])], [f16([1, 1, 1, 2])]) == FL3
    assert feature_level(C.L2_NORMALIZATION, [q8([1, 1, 1, 2], 0.1, 0)],
                         [q8([1, 1, 1, 2], 1 / 128, 128)]) == FL3
    assert feature_level(C.L2_NORMALIZATION, [s8([2], 0.1, 0)], [s8([2], 1 / 128, 0)]) == FL4
    with pytest.raises(OperationValidationError):
        build(C.L2_NORMALIZATION, [f32([1, 1, 1, 1, 2])], [f32([1, 1, 1, 1, 2])])


def test_l2_normalization_axis_out_of_range():
    with pytest.raises(OpFailedError):
        run1(C.L2_NORMALIZATION, [f32([2]), i32(1)], [f32([2])], [1, 2])


def test_l2_pool_implicit_and_explicit_padding():
    x = [3, 4, 0, 0]
    out = run1(C.L2_POOL_2D, [f32([1, 2, 2, 1]), i32(2), i32(1), i32(1), i32(2), i32(2), i32(0)],
               [f32([1, 1, 1, 1])], x)
    np.testing.assert_allclose(out.ravel(), [np.sqrt(25 / 4)])
    out = run1(C.L2_POOL_2D, [f32([1, 2, 2, 1])] + [i32(v) for v in (1, 0, 1, 0, 1, 1, 2, 2, 0)],
               [f32([1, 2, 2, 1])], x)
    np.testing.assert_allclose(out.ravel(), [3, np.sqrt(12.5), np.sqrt(4.5), np.sqrt(6.25)],
                               rtol=1e-6)


def test_l2_pool_feature_levels_and_quant_rejection():
    args = [i32(1), i32(1), i32(1), i32(1), i32(1), i32(0)]
    assert feature_level(C.L2_POOL_2D, [f32([1, 2, 2, 1])] + args, [f32([1, 2, 2, 1])]) == FL1
    assert feature_level(C.L2_POOL_2D, [f16([1, 2, 2, 1])] + args, [f16([1, 2, 2, 1])]) == FL3
    assert feature_level(C.L2_POOL_2D, [f32([1, 2, 2, 1])] + args + [boolean(True)],
                         [f32([1, 2, 2, 1])]) == FL3
    with pytest.raises(OperationValidationError):
        build(C.L2_POOL_2D, [q8([1, 2, 2, 1], 1, 0)] + args, [q8([1, 2, 2, 1], 1, 0)])
