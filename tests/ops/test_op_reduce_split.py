"""REDUCE_SUM / MAX / MIN, SPLIT, PAD_V2, LOG_SOFTMAX: values, feature levels, rejections."""
import numpy as np
import pytest

from nnsim.errors import OperationValidationError, OpFailedError
from nnsim.types import FL3, FL4, OperationCode as C

from .ophelp import (boolean, build, f16, f32, feature_level, fl16, fl32, i32, i32t, q8, run,
                     run1, s8)

X = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.mark.parametrize("code,axes,keep,want", [
    (C.REDUCE_SUM, [1], False, [3, 12]),
    (C.REDUCE_SUM, [0, -1], True, [[15]]),
    (C.REDUCE_MAX, [0], False, [3, 4, 5]),
    (C.REDUCE_MIN, [1, 1], True, [[0], [3]]),
    (C.REDUCE_MAX, [0, 1], False, [5]),
])
def test_reduce_float(code, axes, keep, want):
    want = np.asarray(want, np.float32)
    out = run1(code, [f32([2, 3]), i32t([len(axes)], axes), boolean(keep)], [f32(want.shape)], X)
    np.testing.assert_array_equal(out, want)


def test_reduce_quant_and_float16():
    out = run1(C.REDUCE_MAX, [q8([2, 2], 0.5, 3), i32t([1], [1]), boolean(False)],
               [q8([2], 0.5, 3)], [1, 9, 7, 2])
    assert out.tolist() == [9, 7]
    out = run1(C.REDUCE_SUM, [f16([3]), i32t([1], [0]), boolean(False)], [f16([1])], [1, 2, 3])
    assert out.dtype == np.float16 and out.tolist() == [6]


def test_reduce_rejections_and_levels():
    args = [i32t([1], [0]), boolean(False)]
    with pytest.raises(OperationValidationError):
        build(C.REDUCE_SUM, [q8([2], 1, 0)] + args, [q8([1], 1, 0)])
    with pytest.raises(OperationValidationError):
        build(C.REDUCE_MAX, [f32([2]), i32t([1], [0]), i32(0)], [f32([1])])
    with pytest.raises(OpFailedError):
        run1(C.REDUCE_MIN, [f32([2]), i32t([1], [1]), boolean(False)], [f32([1])], [1, 2])
    assert feature_level(C.REDUCE_SUM, [f32([2])] + args, [f32([1])]) == FL3
    assert feature_level(C.REDUCE_MIN, [q8([2], 1, 0)] + args, [q8([1], 1, 0)]) == FL3
    assert feature_level(C.REDUCE_MAX, [s8([2], 1, 0)] + args, [s8([1], 1, 0)]) == FL4


def test_split():
    outs = run(C.SPLIT, [i32t([2, 4]), i32(1), i32(2)], [i32t([2, 2]), i32t([2, 2])],
               [np.arange(8)])
    assert [o.tolist() for o in outs] == [[[0, 1], [4, 5]], [[2, 3], [6, 7]]]
    outs = run(C.SPLIT, [q8([3], 0.5, 1), i32(-1), i32(3)], [q8([1], 0.5, 1)] * 3, [[4, 5, 6]])
    assert [o.tolist() for o in outs] == [[4], [5], [6]]


def test_split_runtime_checks_and_levels():
    with pytest.raises(OpFailedError):
        run(C.SPLIT, [f32([3]), i32(0), i32(2)], [f32([1]), f32([1])], [[1, 2, 3]])
    with pytest.raises(OpFailedError):
        run(C.SPLIT, [f32([4]), i32(0), i32(4)], [f32([2]), f32([2])], [[1, 2, 3, 4]])
    assert feature_level(C.SPLIT, [f32([2]), i32(0), i32(2)], [f32([1]), f32([1])]) == FL3
    assert feature_level(C.SPLIT, [s8([2], 1, 0), i32(0), i32(1)], [s8([2], 1, 0)]) == FL4
    with pytest.raises(OperationValidationError):
        build(C.SPLIT, [f32([2]), i32(0), i32(2)], [f32([1]), f16([1])])


def test_pad_v2():
    out = run1(C.PAD_V2, [f32([2]), i32t([1, 2], [1, 2]), fl32(-1.5)], [f32([5])], [3, 4])
    assert out.tolist() == [-1.5, 3, 4, -1.5, -1.5]
    out = run1(C.PAD_V2, [q8([1, 1], 0.5, 3), i32t([2, 2], [0, 1, 1, 0]), i32(200)],
               [q8([2, 2], 0.5, 3)], [7])
    assert out.tolist() == [[200, 7], [200, 200]]
    out = run1(C.PAD_V2, [s8([1], 0.5, 3), i32t([1, 2], [1, 0]), i32(-5)], [s8([2], 0.5, 3)], [7])
    assert out.tolist() == [-5, 7]
    out = run1(C.PAD_V2, [f16([1]), i32t([1, 2], [0, 1]), fl16(2.5)], [f16([2])], [1])
    assert out.dtype == np.float16 and out.tolist() == [1, 2.5]


def test_pad_v2_levels_and_rejections():
    assert feature_level(C.PAD_V2, [f32([2]), i32t([1, 2]), fl32(0)], [f32([2])]) == FL3
    assert feature_level(C.PAD_V2, [s8([2], 1, 0), i32t([1, 2]), i32(0)], [s8([2], 1, 0)]) == FL4
    with pytest.raises(OperationValidationError):
        build(C.PAD_V2, [f16([2]), i32t([1, 2]), fl32(0)], [f16([2])])
    with pytest.raises(OpFailedError):
        run1(C.PAD_V2, [f32([2]), i32t([1, 2], [-1, 0]), fl32(0)], [f32([1])], [1, 2])


def test_log_softmax():
    out = run1(C.LOG_SOFTMAX, [f32([2, 2]), fl32(1.0), i32(-1)], [f32([2, 2])], [0, 0, 1, 3])
    np.testing.assert_allclose(out.ravel(), [np.log(0.5)] * 2 + list(
        np.array([1, 3]) - 3 - np.log(np.exp(-2) + 1)), rtol=1e-6)
    out = run1(C.LOG_SOFTMAX, [f16([2]), fl16(1.0), i32(0)], [f16([2])], [0, 0])
    assert out.dtype == np.float16
    assert feature_level(C.LOG_SOFTMAX, [f32([2]), fl32(1), i32(0)], [f32([2])]) == FL3
    with pytest.raises(OperationValidationError):
        build(C.LOG_SOFTMAX, [f16([2]), fl32(1), i32(0)], [f16([2])])
    with pytest.raises(OpFailedError):
        run1(C.LOG_SOFTMAX, [f32([2]), fl32(1), i32(1)], [f32([2])], [0, 0])
