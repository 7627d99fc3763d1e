"""DIV, MAXIMUM, MINIMUM, PRELU: values through the runtime, feature levels, rejections."""
import pytest

from nnsim.errors import OperationValidationError, OpFailedError
from nnsim.types import FL2, FL3, FL4, OperationCode as C

from .ophelp import build, f16, f32, feature_level, i32, i32t, q8, run1, s8


def test_div_float_broadcast_and_relu():
    out = run1(C.DIV, [f32([2, 2]), f32([2], [2, -1]), i32(1)], [f32([2, 2])], [4, 3, -4, -3])
    assert out.tolist() == [[2, 0], [0, 3]]


def test_div_int32_floor_and_fuse_check():
    out = run1(C.DIV, [i32t([3]), i32t([1], [-2]), i32(0)], [i32t([3])], [7, -7, 0])
    assert out.tolist() == [-4, 3, 0]
    with pytest.raises(OpFailedError):
        run1(C.DIV, [i32t([1]), i32t([1], [2]), i32(1)], [i32t([1])], [1])


def test_div_feature_levels_and_rejections():
    assert feature_level(C.DIV, [f32([2]), f32([2]), i32(0)], [f32([2])]) == FL2
    assert feature_level(C.DIV, [f16([2]), f16([2]), i32(0)], [f16([2])]) == FL3
    assert feature_level(C.DIV, [i32t([2]), i32t([2]), i32(0)], [i32t([2])]) == FL4
    with pytest.raises(OperationValidationError):
        build(C.DIV, [q8([2], 1, 0), q8([2], 1, 0), i32(0)], [q8([2], 1, 0)])


@pytest.mark.parametrize("code,want,bcast", [(C.MAXIMUM, [3, 2, 5], [3, 2, 5]),
                                            (C.MINIMUM, [1, -2, 2], [2, -2, 2])])
def test_maximum_minimum_float(code, want, bcast):
    assert run1(code, [f32([3]), f32([3])], [f32([3])], [3, -2, 5], [1, 2, 2]).tolist() == want
    assert run1(code, [f32([3]), f32([1], [2])], [f32([3])], [3, -2, 5]).tolist() == bcast


def test_maximum_quant8_requantizes_to_the_output():
    # input1 scale 1 zp 0: 10, 20; input2 scale 2 zp 0: 6 (12), 8 (16); output scale 2 zp 0
    out = run1(C.MAXIMUM, [q8([2], 1.0, 0), q8([2], 2.0, 0)], [q8([2], 2.0, 0)], [10, 20], [6, 8])
    assert out.tolist() == [6, 10]
    out = run1(C.MINIMUM, [s8([2], 1.0, 0), s8([2], 2.0, 0)], [s8([2], 2.0, 0)], [10, 20], [6, 8])
    assert out.tolist() == [5, 8]


def test_maximum_incompatible_shapes_fail():
    with pytest.raises(OpFailedError):
        run1(C.MAXIMUM, [f32([3]), f32([2])], [f32([3])], [1, 2, 3], [1, 2])


def test_prelu_float_and_quant():
    out = run1(C.PRELU, [f32([1, 2, 2]), f32([2], [0.5, 0.25])], [f32([1, 2, 2])],
               [-2, -2, 1, 1])
    assert out.ravel().tolist() == [-1, -0.5, 1, 1]
    out = run1(C.PRELU, [q8([2], 0.5, 128), q8([1], 1 / 64, 0, [16])], [q8([2], 0.25, 100)],
               [124, 134])
    assert out.tolist() == [98, 112]


def test_minmax_prelu_feature_levels():
    for code in (C.MAXIMUM, C.MINIMUM, C.PRELU):
        assert feature_level(code, [f32([2]), f32([2])], [f32([2])]) == FL3
        assert feature_level(code, [f16([2]), f16([2])], [f16([2])]) == FL3
        assert feature_level(code, [q8([2], 1, 0), q8([2], 2, 3)], [q8([2], 1, 0)]) == FL3
        assert feature_level(code, [s8([2], 1, 0), s8([2], 1, 0)], [s8([2], 1, 0)]) == FL4
    assert feature_level(C.MAXIMUM, [i32t([2]), i32t([2])], [i32t([2])]) == FL3
    with pytest.raises(OperationValidationError):
        build(C.PRELU, [i32t([2]), i32t([2])], [i32t([2])])
    with pytest.raises(OperationValidationError):
        build(C.MINIMUM, [f32([2]), f16([2])], [f32([2])])
