"""RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR: values, size scalars, layouts, feature
levels and rejections."""
import numpy as np
import pytest

from nnsim.errors import OperationValidationError, OpFailedError
from nnsim.types import FL1, FL3, FL4, OperationCode as C

from .ophelp import boolean, build, f16, f32, feature_level, fl16, fl32, i32, q8, run1, s8

X = [1, 2, 3, 4]


def test_bilinear_float32_upscale():
    out = run1(C.RESIZE_BILINEAR, [f32([1, 2, 2, 1]), i32(3), i32(3)], [f32([1, 3, 3, 1])], X)
    np.testing.assert_allclose(out.ravel(), [1, 5 / 3, 2, 7 / 3, 3, 10 / 3, 3, 11 / 3, 4],
                               rtol=1e-6)


def test_bilinear_scale_scalars_and_float16():
    out = run1(C.RESIZE_BILINEAR, [f16([1, 2, 2, 1]), fl16(1.5), fl16(1.5)],
               [f16([1, 3, 3, 1])], X)
    assert out.dtype == np.float16 and out.shape == (1, 3, 3, 1)
    out = run1(C.RESIZE_BILINEAR, [f32([1, 2, 2, 1]), fl32(2.0), fl32(1.0)], [f32([1, 2, 4, 1])],
               X)
    assert out.shape == (1, 2, 4, 1)


def test_bilinear_quant_and_align_corners():
    out = run1(C.RESIZE_BILINEAR, [q8([1, 1, 2, 1], 0.5, 0), i32(3), i32(1), boolean(False),
                                   boolean(True), boolean(False)],
               [q8([1, 1, 3, 1], 0.5, 0)], [10, 21])
    assert out.ravel().tolist() == [10, 16, 21]      # 15.5 + 0.5 truncates to 16
    out = run1(C.RESIZE_BILINEAR, [s8([1, 1, 2, 1], 0.5, 0), i32(4), i32(1)],
               [s8([1, 1, 4, 1], 0.5, 0)], [-3, 0])
    assert out.ravel().tolist() == [-2, -1, 0, 0]    # NNAPI's float template, not TFLite's


def test_nearest_neighbor_nchw():
    x = np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2)        # NCHW, C=2
    out = run1(C.RESIZE_NEAREST_NEIGHBOR, [f32([1, 2, 2, 2]), i32(4), i32(4), boolean(True)],
               [f32([1, 2, 4, 4])], x)
    np.testing.assert_array_equal(out, x.repeat(2, axis=2).repeat(2, axis=3))


def test_resize_runtime_rejections():
    with pytest.raises(OpFailedError):
        run1(C.RESIZE_BILINEAR, [f32([1, 2, 2, 1]), i32(2), i32(2), boolean(False),
                                 boolean(True), boolean(True)], [f32([1, 2, 2, 1])], X)
    with pytest.raises(OpFailedError):
        run1(C.RESIZE_BILINEAR, [f32([1, 2, 2, 1]), i32(0), i32(2)], [f32([1, 2, 0, 1])], X)


def test_resize_feature_levels():
    def fl(code, x, *args):
        return feature_level(code, [x, *args], [x])
    assert fl(C.RESIZE_BILINEAR, f32([1, 2, 2, 1]), i32(2), i32(2)) == FL1
    assert fl(C.RESIZE_BILINEAR, q8([1, 2, 2, 1], 1, 0), i32(2), i32(2)) == FL3
    assert fl(C.RESIZE_BILINEAR, f16([1, 2, 2, 1]), i32(2), i32(2)) == FL3
    assert fl(C.RESIZE_BILINEAR, f32([1, 2, 2, 1]), fl32(1.0), fl32(1.0)) == FL3
    assert fl(C.RESIZE_BILINEAR, f32([1, 2, 2, 1]), i32(2), i32(2), boolean(False)) == FL3
    assert fl(C.RESIZE_BILINEAR, f32([1, 2, 2, 1]), i32(2), i32(2), boolean(False),
              boolean(True)) == FL4
    assert fl(C.RESIZE_BILINEAR, s8([1, 2, 2, 1], 1, 0), i32(2), i32(2)) == FL4
    assert fl(C.RESIZE_NEAREST_NEIGHBOR, f32([1, 2, 2, 1]), i32(2), i32(2), boolean(False)) == FL3


@pytest.mark.parametrize("code,ins", [
    (C.RESIZE_NEAREST_NEIGHBOR, [f32([1, 2, 2, 1]), i32(2), i32(2)]),
    (C.RESIZE_BILINEAR, [f32([1, 2, 2, 1]), i32(2), fl32(2.0)]),
    (C.RESIZE_BILINEAR, [f16([1, 2, 2, 1]), fl32(1.0), fl32(1.0)]),
    (C.RESIZE_BILINEAR, [f32([1, 2, 2, 1]), i32(2), i32(2), i32(0)]),
])
def test_resize_validation_rejections(code, ins):
    with pytest.raises(OperationValidationError):
        build(code, ins, [ins[0]])
