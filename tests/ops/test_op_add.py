"""ADD / SUB / MUL: spec examples (nnapi-runtime.md 7.4 c) and feature levels."""
import numpy as np
import pytest

from nnsim.errors import OperationValidationError, OpFailedError
from nnsim.types import FL1, FL2, FL3, FL4, OperationCode as C

from .ophelp import build, f16, f32, feature_level, i32, i32t, q8, run1, s8


def test_add_quant8_spec_example():
    out = run1(C.ADD, [q8([2], 2.0, 0), q8([2], 1.0, 0), i32(0)], [q8([2], 1.0, 0)],
               [1, 2], [3, 4])
    np.testing.assert_array_equal(out, [5, 8])


def test_add_signed_broadcast_spec_example():
    ins = [s8([1, 2], 2.0, 0), s8([2, 2], 1.0, 0), i32(0)]
    out = run1(C.ADD, ins, [s8([2, 2], 1.0, 0)], [1, 2], [1, 2, 3, 4])
    np.testing.assert_array_equal(out.ravel(), [3, 6, 5, 8])
    assert feature_level(C.ADD, ins, [s8([2, 2], 1.0, 0)]) == FL4


def test_sub_and_mul_float_with_relu():
    ins = [f32([3]), f32([3]), i32(1)]
    np.testing.assert_allclose(run1(C.SUB, ins, [f32([3])], [1, 5, 2], [2, 1, 2]), [0, 4, 0])
    np.testing.assert_allclose(run1(C.MUL, ins, [f32([3])], [1, -5, 2], [2, 1, 2]), [2, 0, 4])


def test_feature_levels():
    f = [f32([2]), f32([2]), i32(0)], [f32([2])]
    q = [q8([2], 1.0, 0), q8([2], 1.0, 0), i32(0)], [q8([2], 2.0, 0)]
    assert feature_level(C.ADD, *f) == FL1
    assert feature_level(C.MUL, *q) == FL1
    assert feature_level(C.SUB, *f) == FL2
    assert feature_level(C.SUB, *q) == FL3
    assert feature_level(C.ADD, [f16([2]), f16([2]), i32(0)], [f16([2])]) == FL3
    assert feature_level(C.ADD, [i32t([2]), i32t([2]), i32(0)], [i32t([2])]) == FL4
    assert feature_level(C.SUB, [s8([2], 1.0, 0), s8([2], 1.0, 0), i32(0)],
                         [s8([2], 1.0, 0)]) == FL4


def test_rejections():
    with pytest.raises(OperationValidationError):
        build(C.ADD, [f32([2]), f16([2]), i32(0)], [f32([2])])
    with pytest.raises(OperationValidationError):
        build(C.ADD, [f32([2]), f32([2])], [f32([2])])
    # quantized MUL needs output scale > in1 scale * in2 scale (Broadcast.cpp NN_RET_CHECK_GT)
    for q in (q8, s8):
        with pytest.raises(OperationValidationError):
            build(C.MUL, [q([2], 1.0, 0), q([2], 1.0, 0), i32(0)], [q([2], 1.0, 0)])


def test_int32_needs_fuse_none_at_execution():
    ins = [i32t([2]), i32t([2]), i32(1)]
    with pytest.raises(OpFailedError):
        run1(C.ADD, ins, [i32t([2])], [1, 2], [3, 4])
