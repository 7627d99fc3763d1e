"""FULLY_CONNECTED: spec examples (V1_0/fully_connected_*), input reshaping, feature levels."""
import numpy as np
import pytest

from nnsim.errors import OperationValidationError
from nnsim.types import FL1, FL3, FL4, OperationCode as C

from .ophelp import build, f16, f32, feature_level, i32, i32t, q8, run1, s8


def test_float_spec_example():
    ins = [f32([3, 1]), f32([1, 1], [2]), f32([1], [4]), i32(0)]
    out = run1(C.FULLY_CONNECTED, ins, [f32([3, 1])], [2, 32, 16])
    np.testing.assert_allclose(out.ravel(), [8, 68, 36])


def quant8(out_scale=1.0):
    ins = [q8([3, 1], 0.5, 0), q8([1, 1], 0.5, 0, [2]), i32t([1], [4], scale=0.25), i32(0)]
    return ins, [q8([3, 1], out_scale, 0)]


def test_quant8_example():
    out = run1(C.FULLY_CONNECTED, *quant8(), [2, 32, 16])
    np.testing.assert_array_equal(out.ravel(), [2, 17, 9])  # 1*1+1, 16*1+1, 8*1+1


def test_4d_input_is_flattened_to_batches_and_relu_applied():
    ins = [f32([1, 2, 1, 3]), f32([2, 3], [1, 1, 1, -1, 0, 0]), f32([2], [0, 0.5]), i32(1)]
    out = run1(C.FULLY_CONNECTED, ins, [f32([2, 2])], [1, 2, 3, -4, 5, -6])
    np.testing.assert_allclose(out, [[6, 0], [0, 4.5]])


def test_feature_levels():
    assert feature_level(C.FULLY_CONNECTED, *quant8()) == FL1
    assert feature_level(C.FULLY_CONNECTED, *quant8(out_scale=0.25)) == FL3  # 0.25 <= 0.5*0.5
    ins = [f16([3, 1]), f16([1, 1], [2]), f16([1], [4]), i32(0)]
    assert feature_level(C.FULLY_CONNECTED, ins, [f16([3, 1])]) == FL3
    ins = [s8([3, 1], 0.5, 0), s8([1, 1], 0.5, 0, [2]), i32t([1], [4], scale=0.25), i32(0)]
    assert feature_level(C.FULLY_CONNECTED, ins, [s8([3, 1], 1.0, 0)]) == FL4


@pytest.mark.parametrize("weights,bias", [
    (f32([2], [1, 1]), f32([1], [0])),          # weights must be 2-D
    (f32([1, 1], [1]), f32([2], [0, 0])),       # bias size != num_units
    (f32([1, 2], [1, 1]), f32([1], [0])),       # 3 elements not a multiple of input_size 2
    (q8([1, 1], 0.5, 0, [1]), f32([1], [0])),   # weights type != input type
])
def test_bad_shapes_and_types_rejected_at_add_operation(weights, bias):
    with pytest.raises(OperationValidationError):
        build(C.FULLY_CONNECTED, [f32([3, 1]), weights, bias, i32(0)], [f32([3, 1])])
