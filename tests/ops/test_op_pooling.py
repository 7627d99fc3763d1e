"""AVERAGE_POOL_2D and MAX_POOL_2D: implicit/explicit padding, layouts, fuse, feature levels."""
import numpy as np
import pytest

from nnsim.errors import OperationValidationError, OpFailedError
from nnsim.types import FL1, FL3, FL4, OperationCode as C

from .ophelp import boolean, build, f16, f32, feature_level, i32, i32t, q8, run1, s8

AVG, MAX = C.AVERAGE_POOL_2D, C.MAX_POOL_2D


def implicit(x, scheme, stride, filt, fuse=0, extra=()):
    return [x, i32(scheme), i32(stride), i32(stride), i32(filt), i32(filt), i32(fuse), *extra]


def test_avg_pool_valid():
    out = run1(AVG, implicit(f32([1, 2, 2, 1]), 2, 1, 2), [f32([1, 1, 1, 1])], [1, 2, 3, 4])
    np.testing.assert_allclose(out.ravel(), [2.5])


def test_avg_pool_explicit_padding_excludes_padding_from_the_count():
    ins = [f32([1, 3, 3, 1]), *[i32(1)] * 4, i32(1), i32(1), i32(3), i32(3), i32(0)]
    out = run1(AVG, ins, [f32([1, 3, 3, 1])], np.arange(1, 10))
    np.testing.assert_allclose(out.ravel(), [3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7])


def test_max_pool_same_padding():
    out = run1(MAX, implicit(f32([1, 3, 3, 1]), 1, 2, 2), [f32([1, 2, 2, 1])], np.arange(1, 10))
    np.testing.assert_allclose(out.ravel(), [5, 6, 8, 9])


def test_max_pool_quant8_relu6():
    out = run1(MAX, implicit(q8([1, 2, 2, 1], 0.5, 0), 2, 1, 2, fuse=3),
               [q8([1, 1, 1, 1], 0.5, 0)], [2, 20, 10, 4])
    np.testing.assert_array_equal(out.ravel(), [12])  # max 10.0 clamped to 6.0


def test_avg_pool_quant8_rounds():
    out = run1(AVG, implicit(q8([1, 2, 2, 1], 0.5, 0), 2, 1, 2), [q8([1, 1, 1, 1], 0.5, 0)],
               [1, 2, 3, 4])
    np.testing.assert_array_equal(out.ravel(), [3])  # (10 + 2) // 4


def test_avg_pool_nchw():
    x = np.array([1, 2, 3, 4, 10, 20, 30, 40], np.float32).reshape(1, 2, 2, 2)  # N C H W
    ins = implicit(f32([1, 2, 2, 2]), 2, 1, 2, extra=[boolean(True)])
    out = run1(AVG, ins, [f32([1, 2, 1, 1])], x)
    np.testing.assert_allclose(out.ravel(), [2.5, 25])


def test_padding_larger_than_filter_fails_at_execution():
    ins = [f32([1, 3, 3, 1]), i32(2), i32(0), i32(0), i32(0), i32(1), i32(1), i32(2), i32(2),
           i32(0)]
    with pytest.raises(OpFailedError):
        run1(MAX, ins, [f32([1, 4, 2, 1])], np.arange(9))


@pytest.mark.parametrize("op", [AVG, MAX])
def test_feature_levels(op):
    out = [f32([1, 1, 1, 1])]
    assert feature_level(op, implicit(f32([1, 2, 2, 1]), 2, 1, 2), out) == FL1
    assert feature_level(op, implicit(f32([1, 2, 2, 1]), 2, 1, 2, extra=[boolean(False)]),
                         out) == FL3
    assert feature_level(op, implicit(f16([1, 2, 2, 1]), 2, 1, 2), [f16([1, 1, 1, 1])]) == FL3
    assert feature_level(op, implicit(q8([1, 2, 2, 1], 0.5, 0), 2, 1, 2),
                         [q8([1, 1, 1, 1], 0.5, 0)]) == FL1
    assert feature_level(op, implicit(s8([1, 2, 2, 1], 0.5, 0), 2, 1, 2),
                         [s8([1, 1, 1, 1], 0.5, 0)]) == FL4


@pytest.mark.parametrize("op", [AVG, MAX])
def test_rejected_at_add_operation(op):
    out = [f32([1, 1, 1, 1])]
    with pytest.raises(OperationValidationError):  # 9 inputs is no valid form
        build(op, implicit(f32([1, 2, 2, 1]), 2, 1, 2, extra=[i32(0), i32(0)]), out)
    with pytest.raises(OperationValidationError):
        build(op, implicit(i32t([1, 2, 2, 1]), 2, 1, 2), [i32t([1, 1, 1, 1])])
    with pytest.raises(OperationValidationError):  # layout must be BOOL
        build(op, implicit(f32([1, 2, 2, 1]), 2, 1, 2, extra=[i32(0)]), out)
