"""SOFTMAX: spec examples (V1_0/softmax_*), axis, output quantization, feature levels."""
import numpy as np
import pytest

from nnsim.errors import OperationValidationError, OpFailedError
from nnsim.types import FL1, FL3, FL4, OperationCode as C

from .ophelp import build, f16, f32, feature_level, fl16, fl32, i32, q8, run1, s8

ONE_256 = 1.0 / 256


def reference(x, beta, axis=-1):
    x = np.asarray(x, np.float64) * beta
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_softmax_float_small_beta():
    out = run1(C.SOFTMAX, [f32([1, 4]), fl32(1e-6)], [f32([1, 4])], [1, 2, 10, 20])
    np.testing.assert_allclose(out.ravel(), [0.25] * 4, atol=1e-5)


def test_softmax_float_two_batches():
    x = np.array([[1, 2, 3, 4, 5], [-1, -2, -3, -4, -5]], np.float32)
    out = run1(C.SOFTMAX, [f32([2, 5]), fl32(1.0)], [f32([2, 5])], x)
    np.testing.assert_allclose(out, reference(x, 1.0), rtol=1e-5)
    np.testing.assert_allclose(out[0], [0.011656231, 0.031684921, 0.086128544, 0.234121657,
                                        0.636408647], rtol=1e-5)


def test_softmax_explicit_axis():
    x = np.array([[1, 2, 3], [3, 2, 1]], np.float32)
    out = run1(C.SOFTMAX, [f32([2, 3]), fl32(0.5), i32(0)], [f32([2, 3])], x)
    np.testing.assert_allclose(out, reference(x, 0.5, axis=0), rtol=1e-5)


def test_softmax_quant8_spec_example():
    out = run1(C.SOFTMAX, [q8([1, 4], 0.5, 0), fl32(1e-5)], [q8([1, 4], ONE_256, 0)],
               [1, 2, 10, 20])
    np.testing.assert_array_equal(out.ravel(), [64, 64, 64, 64])


def test_softmax_quant8_needs_output_scale_1_256():
    with pytest.raises(OpFailedError):
        run1(C.SOFTMAX, [q8([1, 4], 0.5, 0), fl32(1.0)], [q8([1, 4], 0.5, 0)], [1, 2, 3, 4])


def test_softmax_beta_must_be_positive():
    with pytest.raises(OpFailedError):
        run1(C.SOFTMAX, [f32([1, 2]), fl32(0.0)], [f32([1, 2])], [1, 2])


@pytest.mark.parametrize("dims,extra,level", [
    ([2, 3], [], FL1), ([1, 1, 2, 3], [], FL1), ([3], [], FL3), ([1, 2, 3], [], FL3),
    ([2, 3], [i32(-1)], FL3), ([2, 3], [i32(0)], FL3),
])
def test_softmax_feature_levels_float32(dims, extra, level):
    assert feature_level(C.SOFTMAX, [f32(dims), fl32(1.0), *extra], [f32(dims)]) == level


def test_softmax_feature_levels_by_type():
    assert feature_level(C.SOFTMAX, [q8([1, 4], 0.5, 0), fl32(1.0)],
                         [q8([1, 4], ONE_256, 0)]) == FL1
    assert feature_level(C.SOFTMAX, [f16([1, 4]), fl16(1.0)], [f16([1, 4])]) == FL3
    assert feature_level(C.SOFTMAX, [s8([1, 4], 0.5, 0), fl32(1.0)],
                         [s8([1, 4], ONE_256, -128)]) == FL4


def test_softmax_rejections():
    with pytest.raises(OperationValidationError):  # float16 input needs a FLOAT16 beta
        build(C.SOFTMAX, [f16([1, 4]), fl32(1.0)], [f16([1, 4])])
    with pytest.raises(OperationValidationError):  # axis must be INT32
        build(C.SOFTMAX, [f32([1, 4]), fl32(1.0), fl32(0.0)], [f32([1, 4])])
    with pytest.raises(OperationValidationError):  # rank 5
        build(C.SOFTMAX, [f32([1, 1, 1, 1, 4]), fl32(1.0)], [f32([1, 1, 1, 1, 4])])
