"""TRANSPOSE, SLICE, STRIDED_SLICE, GATHER, ARGMAX, ARGMIN, CAST: values, shapes, feature
levels and rejections."""
import numpy as np
import pytest

from nnsim.errors import OperationValidationError, OpFailedError
from nnsim.types import FL2, FL3, FL4, OperationCode as C, OperandType as T

from .ophelp import build, f16, f32, feature_level, i32, i32t, q8, run1, s8, tensor

X6 = np.arange(6, dtype=np.float32)


def test_transpose_with_perm_and_omitted_perm():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = run1(C.TRANSPOSE, [f32([2, 3, 4]), i32t([3], [2, 0, 1])], [f32([4, 2, 3])], x)
    np.testing.assert_array_equal(out, x.transpose(2, 0, 1))
    omitted = tensor(T.TENSOR_INT32, [2])
    omitted.omitted = True
    out = run1(C.TRANSPOSE, [q8([2, 3], 0.5, 1), omitted], [q8([3, 2], 0.5, 1)], X6)
    np.testing.assert_array_equal(out, X6.reshape(2, 3).T)


def test_transpose_bad_perm_fails():
    with pytest.raises(OpFailedError):
        run1(C.TRANSPOSE, [f32([2, 3]), i32t([2], [0, 0])], [f32([2, 2])], X6)


def test_transpose_feature_levels():
    p = i32t([1], [0])
    assert feature_level(C.TRANSPOSE, [f32([2]), p], [f32([2])]) == FL2
    assert feature_level(C.TRANSPOSE, [q8([2], 1, 0), p], [q8([2], 1, 0)]) == FL2
    assert feature_level(C.TRANSPOSE, [f16([2]), p], [f16([2])]) == FL3
    assert feature_level(C.TRANSPOSE, [s8([2], 1, 0), p], [s8([2], 1, 0)]) == FL4
    with pytest.raises(OperationValidationError):
        build(C.TRANSPOSE, [i32t([2]), p], [i32t([2])])


def test_slice():
    x = np.arange(24).reshape(2, 3, 4)
    out = run1(C.SLICE, [i32t([2, 3, 4]), i32t([3], [1, 0, 1]), i32t([3], [1, -1, 2])],
               [i32t([1, 3, 2])], x)
    np.testing.assert_array_equal(out, x[1:2, :, 1:3])
    with pytest.raises(OpFailedError):
        run1(C.SLICE, [f32([6]), i32t([1], [4]), i32t([1], [3])], [f32([3])], X6)
    assert feature_level(C.SLICE, [f32([2]), i32t([1]), i32t([1])], [f32([2])]) == FL3
    assert feature_level(C.SLICE, [s8([2], 1, 0), i32t([1]), i32t([1])], [s8([2], 1, 0)]) == FL4


@pytest.mark.parametrize("begin,end,strides,masks,want", [
    ([0, 1], [2, 3], [1, 1], (0, 0, 0), np.s_[0:2, 1:3]),
    ([1, -1], [3, 0], [1, -1], (0, 0, 0), np.s_[1:3, 3:0:-1]),
    ([1, 0], [0, 3], [1, 1], (0, 0, 0), np.s_[1:0, 0:3]),
    ([5, 0], [0, 3], [1, 2], (1, 1, 0), np.s_[:, 0:3:2]),
    ([1, 0], [2, 9], [1, 1], (0, 2, 1), np.s_[1, :]),
])
def test_strided_slice(begin, end, strides, masks, want):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    expect = x[want]
    ins = [f32([3, 4]), i32t([2], begin), i32t([2], end), i32t([2], strides)]
    out = run1(C.STRIDED_SLICE, ins + [i32(m) for m in masks], [f32(list(expect.shape))], x)
    np.testing.assert_array_equal(out, expect)


def test_strided_slice_shrink_needs_one_element():
    ins = [f32([6]), i32t([1], [0]), i32t([1], [3]), i32t([1], [1]), i32(0), i32(0), i32(1)]
    with pytest.raises(OpFailedError):
        run1(C.STRIDED_SLICE, ins, [f32([1])], X6)


def test_strided_slice_feature_levels():
    ins = [i32t([1]), i32t([1]), i32t([1]), i32(0), i32(0), i32(0)]
    assert feature_level(C.STRIDED_SLICE, [f32([2])] + ins, [f32([2])]) == FL2
    assert feature_level(C.STRIDED_SLICE, [f16([2])] + ins, [f16([2])]) == FL3
    assert feature_level(C.STRIDED_SLICE, [s8([2], 1, 0)] + ins, [s8([2], 1, 0)]) == FL4


def test_gather():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = run1(C.GATHER, [f32([3, 4]), i32(1), i32t([2, 2], [3, 0, 1, 1])], [f32([3, 2, 2])], x)
    np.testing.assert_array_equal(out, np.take(x, [[3, 0], [1, 1]], axis=1))
    out = run1(C.GATHER, [q8([3, 4], 0.5, 3), i32(-2), i32t([1], [2])], [q8([1, 4], 0.5, 3)], x)
    np.testing.assert_array_equal(out, x[2:3])
    with pytest.raises(OpFailedError):
        run1(C.GATHER, [f32([3, 4]), i32(0), i32t([1], [3])], [f32([1, 4])], x)
    assert feature_level(C.GATHER, [i32t([2]), i32(0), i32t([1])], [i32t([1])]) == FL3
    assert feature_level(C.GATHER, [s8([2], 1, 0), i32(0), i32t([1])], [s8([1], 1, 0)]) == FL4


@pytest.mark.parametrize("code,axis,want", [(C.ARGMAX, 1, [2, 0]), (C.ARGMIN, 1, [0, 1]),
                                            (C.ARGMAX, -2, [1, 0, 0])])
def test_argmax_argmin(code, axis, want):
    x = [1, 5, 7, 9, 2, 2]
    out = run1(code, [f32([2, 3]), i32(axis)], [i32t([len(want)])], x)
    assert out.tolist() == want
    out = run1(code, [q8([2, 3], 0.5, 3), i32(axis)], [i32t([len(want)])], x)
    assert out.tolist() == want


def test_argmax_rank1_output_and_levels():
    assert run1(C.ARGMAX, [f16([3]), i32(0)], [i32t([1])], [1, 3, 2]).tolist() == [1]
    for t in (f32([2]), f16([2]), i32t([2]), q8([2], 1, 0), s8([2], 1, 0)):
        assert feature_level(C.ARGMIN, [t, i32(0)], [i32t([1])]) == FL3
    with pytest.raises(OperationValidationError):
        build(C.ARGMAX, [f32([2]), i32(0)], [f32([1])])


@pytest.mark.parametrize("src,dst,values,want", [
    (f32([4]), i32t([4]), [-1.7, 0.5, 2.9, 3.0], [-1, 0, 2, 3]),
    (f32([4]), q8([4], 0.5, 7), [-1.7, 0.5, 300.0, 3.9], [0, 0, 255, 3]),
    (i32t([3]), q8([3], 1.0, 0), [-5, 100, 999], [0, 100, 255]),
    (q8([2], 0.5, 100), f16([2]), [3, 200], [3, 200]),
    (i32t([2]), f32([2]), [7, -8], [7, -8]),
])
def test_cast(src, dst, values, want):
    out = run1(C.CAST, [src], [dst], values)
    assert out.dtype == np.dtype(dst.array([0] * int(np.prod(dst.dims))).dtype)
    np.testing.assert_array_equal(out, want)


def test_cast_feature_levels_and_identity_only_types():
    assert feature_level(C.CAST, [f32([2])], [i32t([2])]) == FL3
    assert feature_level(C.CAST, [s8([2], 1, 0)], [s8([2], 1, 0)]) == FL4
    assert run1(C.CAST, [s8([2], 1, 0)], [s8([2], 1, 0)], [-3, 4]).tolist() == [-3, 4]
    with pytest.raises(OperationValidationError):
        build(C.CAST, [s8([2], 1, 0)], [f32([2])])
    with pytest.raises(OperationValidationError):
        build(C.CAST, [f32([2])], [f32([3])])
