"""RESHAPE, CONCATENATION, PAD and MEAN: hand-computed values and feature levels."""
import numpy as np
import pytest

from nnsim.errors import OperationValidationError, OpFailedError
from nnsim.types import FL1, FL2, FL3, FL4, FL6, OperationCode as C

from .ophelp import build, f16, f32, feature_level, fl32, i32, i32t, q8, run1, s8, tensor


# -- RESHAPE -----------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,dims", [([-1], [4]), ([2, -1], [2, 2]), ([1, 4, 1], [1, 4, 1])])
def test_reshape(shape, dims):
    out = run1(C.RESHAPE, [f32([1, 2, 2, 1]), i32t([len(shape)], shape)], [f32(dims)],
               [1, 2, 3, 4])
    assert out.shape == tuple(dims)
    np.testing.assert_allclose(out.ravel(), [1, 2, 3, 4])


def test_reshape_shape_as_model_input():
    out = run1(C.RESHAPE, [q8([2, 3], 0.5, 1), i32t([2])], [q8([3, 2], 0.5, 1)],
               np.arange(6), [3, -1])
    np.testing.assert_array_equal(out, np.arange(6).reshape(3, 2))


@pytest.mark.parametrize("shape", [[-1, -1], [3, 2], [5]])
def test_reshape_bad_target_fails_at_execution(shape):
    with pytest.raises(OpFailedError):
        run1(C.RESHAPE, [f32([2, 2]), i32t([len(shape)], shape)], [f32([0] * len(shape))],
             [1, 2, 3, 4])


def test_reshape_feature_levels():
    def fl(x, out):
        return feature_level(C.RESHAPE, [x, i32t([1], [-1])], [out])
    assert fl(f32([2, 2]), f32([4])) == FL1
    assert fl(q8([2, 2], 0.5, 0), q8([4], 0.5, 0)) == FL1
    assert fl(f16([2, 2]), f16([4])) == FL3
    assert fl(s8([2, 2], 0.5, 0), s8([4], 0.5, 0)) == FL4
    assert fl(i32t([2, 2]), i32t([4])) == FL6


def test_reshape_rejects_rank_5_and_float_shape():
    with pytest.raises(OperationValidationError):
        build(C.RESHAPE, [f32([1, 1, 1, 1, 4]), i32t([1], [-1])], [f32([4])])
    with pytest.raises(OperationValidationError):
        build(C.RESHAPE, [f32([2, 2]), f32([1], [4])], [f32([4])])


# -- CONCATENATION -----------------------------------------------------------------------------
@pytest.mark.parametrize("axis,dims,want", [
    (0, [4, 3], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
    (1, [2, 6], [1, 2, 3, 7, 8, 9, 4, 5, 6, 10, 11, 12]),
])
def test_concatenation_float(axis, dims, want):
    out = run1(C.CONCATENATION, [f32([2, 3]), f32([2, 3], [7, 8, 9, 10, 11, 12]), i32(axis)],
               [f32(dims)], [1, 2, 3, 4, 5, 6])
    np.testing.assert_allclose(out.ravel(), want)


def test_concatenation_three_inputs():
    out = run1(C.CONCATENATION, [f32([1, 1]), f32([1, 2]), f32([1, 1], [9]), i32(1)],
               [f32([1, 4])], [1], [2, 3])
    np.testing.assert_allclose(out.ravel(), [1, 2, 3, 9])


def test_concatenation_quant8_requantizes_to_the_output_scale():
    ins = [q8([2], 0.5, 0), q8([2], 1.0, 0), i32(0)]
    out = run1(C.CONCATENATION, ins, [q8([4], 1.0, 0)], [2, 4], [3, 5])
    np.testing.assert_array_equal(out, [1, 2, 3, 5])
    assert feature_level(C.CONCATENATION, ins, [q8([4], 1.0, 0)]) == FL3
    same = [q8([2], 1.0, 0), q8([2], 1.0, 0), i32(0)]
    assert feature_level(C.CONCATENATION, same, [q8([4], 1.0, 0)]) == FL1


def test_concatenation_feature_levels_and_rejections():
    assert feature_level(C.CONCATENATION, [f32([2]), f32([2]), i32(0)], [f32([4])]) == FL1
    assert feature_level(C.CONCATENATION, [f16([2]), f16([2]), i32(0)], [f16([4])]) == FL3
    assert feature_level(C.CONCATENATION, [s8([2], 1, 0), s8([2], 1, 0), i32(0)],
                         [s8([4], 1, 0)]) == FL4
    with pytest.raises(OperationValidationError):  # mixed input types
        build(C.CONCATENATION, [f32([2]), f16([2]), i32(0)], [f32([4])])
    with pytest.raises(OperationValidationError):  # axis must be INT32
        build(C.CONCATENATION, [f32([2]), f32([2]), fl32(0.0)], [f32([4])])
    with pytest.raises(OperationValidationError):  # only one input
        build(C.CONCATENATION, [i32(0)], [f32([4])])


@pytest.mark.parametrize("axis", [-1, 2])
def test_concatenation_bad_axis_fails_at_execution(axis):
    with pytest.raises(OpFailedError):
        run1(C.CONCATENATION, [f32([1, 2]), f32([1, 2], [3, 4]), i32(axis)], [f32([1, 4])],
             [1, 2])


# -- PAD ---------------------------------------------------------------------------------------
def test_pad_float():
    ins = [f32([1, 2, 2, 1]), i32t([4, 2], [0, 0, 1, 1, 0, 1, 0, 0])]
    out = run1(C.PAD, ins, [f32([1, 4, 3, 1])], [1, 2, 3, 4])
    np.testing.assert_allclose(out.ravel(), [0, 0, 0, 1, 2, 0, 3, 4, 0, 0, 0, 0])


def test_pad_quant8_pads_with_the_zero_point():
    ins = [q8([2], 0.5, 3), i32t([1, 2], [1, 2])]
    out = run1(C.PAD, ins, [q8([5], 0.5, 3)], [7, 9])
    np.testing.assert_array_equal(out, [3, 7, 9, 3, 3])


def test_pad_negative_fails_at_execution():
    with pytest.raises(OpFailedError):
        run1(C.PAD, [f32([2]), i32t([1, 2], [-1, 0])], [f32([1])], [1, 2])


def test_pad_feature_levels():
    def fl(x):
        return feature_level(C.PAD, [x, i32t([1, 2], [1, 1])], [tensor(x.type, [4], x.scale,
                                                                         x.zp)])
    assert fl(f32([2])) == FL2
    assert fl(q8([2], 0.5, 0)) == FL2
    assert fl(q8([2], 0.5, 3)) == FL3
    assert fl(f16([2])) == FL3
    assert fl(s8([2], 0.5, 3)) == FL4
    with pytest.raises(OperationValidationError):
        build(C.PAD, [f32([2]), f32([1, 2], [1, 1])], [f32([4])])


# -- MEAN --------------------------------------------------------------------------------------
def test_mean_spec_example_duplicate_and_negative_axes():
    ins = [f32([4, 3, 2]), i32t([4], [1, 0, -3, -3]), i32(0)]
    out = run1(C.MEAN, ins, [f32([2])], np.arange(1, 25))
    np.testing.assert_allclose(out, [12, 13])


def test_mean_keep_dims():
    ins = [f32([4, 3, 2]), i32t([2], [0, 2]), i32(1)]
    out = run1(C.MEAN, ins, [f32([1, 3, 1])], np.arange(1, 25))
    np.testing.assert_allclose(out.ravel(), [10.5, 12.5, 14.5])


def test_mean_all_axes_gives_shape_1():
    out = run1(C.MEAN, [f32([2, 2]), i32t([2], [0, 1]), i32(0)], [f32([1])], [1, 2, 3, 6])
    assert out.shape == (1,)
    np.testing.assert_allclose(out, [3])


def test_mean_quant8():
    ins = [q8([1, 2, 2, 1], 0.5, 0), i32t([2], [1, 2]), i32(1)]
    out = run1(C.MEAN, ins, [q8([1, 1, 1, 1], 0.5, 0)], [2, 4, 6, 8])
    np.testing.assert_array_equal(out.ravel(), [5])


def test_mean_feature_levels_and_rejections():
    def fl(x, out):
        return feature_level(C.MEAN, [x, i32t([1], [0]), i32(0)], [out])
    assert fl(f32([2, 2]), f32([2])) == FL2
    assert fl(q8([2, 2], 0.5, 0), q8([2], 0.5, 0)) == FL2
    assert fl(f16([2, 2]), f16([2])) == FL3
    assert fl(s8([2, 2], 0.5, 0), s8([2], 0.5, 0)) == FL4
    with pytest.raises(OperationValidationError):  # axes must be TENSOR_INT32
        build(C.MEAN, [f32([2, 2]), f32([1], [0]), i32(0)], [f32([2])])
    with pytest.raises(OperationValidationError):  # rank 5
        build(C.MEAN, [f32([1, 1, 1, 1, 2]), i32t([1], [0]), i32(0)], [f32([1, 1, 1, 2])])
