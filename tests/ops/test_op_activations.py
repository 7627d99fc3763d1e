"""RELU, RELU1, RELU6 and LOGISTIC: float and quantized values, feature levels."""
import numpy as np
import pytest

from nnsim.errors import OperationValidationError, OpFailedError
from nnsim.types import FL1, FL3, FL4, OperationCode as C

from .ophelp import build, f16, f32, feature_level, i32t, q8, run1, s8

X = [-3, -1, -0.5, 0, 0.5, 1, 3, 7]
FLOAT_CASES = {
    C.RELU: [0, 0, 0, 0, 0.5, 1, 3, 7],
    C.RELU1: [-1, -1, -0.5, 0, 0.5, 1, 1, 1],
    C.RELU6: [0, 0, 0, 0, 0.5, 1, 3, 6],
    C.LOGISTIC: list(1 / (1 + np.exp(-np.asarray(X, np.float64)))),
}


@pytest.mark.parametrize("op", list(FLOAT_CASES))
def test_float32(op):
    out = run1(op, [f32([2, 4])], [f32([2, 4])], X)
    np.testing.assert_allclose(out.ravel(), FLOAT_CASES[op], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("op", list(FLOAT_CASES))
def test_float16(op):
    out = run1(op, [f16([8])], [f16([8])], X)
    assert out.dtype == np.float16
    np.testing.assert_allclose(out.astype(np.float32), FLOAT_CASES[op], rtol=2e-3, atol=1e-3)


@pytest.mark.parametrize("op,want", [
    (C.RELU, [128, 128, 128, 130, 138, 148]),
    (C.RELU1, [126, 126, 128, 130, 130, 130]),
    (C.RELU6, [128, 128, 128, 130, 138, 140]),
])
def test_quant8_relus(op, want):
    # real values -2, -1, 0, 1, 5, 10 at scale 0.5, zero point 128
    out = run1(op, [q8([6], 0.5, 128)], [q8([6], 0.5, 128)], [124, 126, 128, 130, 138, 148])
    np.testing.assert_array_equal(out, want)


def test_quant8_logistic():
    out = run1(C.LOGISTIC, [q8([3], 0.5, 128)], [q8([3], 1 / 256, 0)], [128, 0, 255])
    np.testing.assert_array_equal(out, [128, 0, 255])  # 0.5, ~0 (x=-64), ~1 saturated


def test_quant8_logistic_needs_output_scale_1_256():
    with pytest.raises(OpFailedError):
        run1(C.LOGISTIC, [q8([1], 0.5, 128)], [q8([1], 0.5, 128)], [128])


@pytest.mark.parametrize("op", list(FLOAT_CASES))
def test_feature_levels(op):
    qout = (1 / 256, 0) if op == C.LOGISTIC else (0.5, 0)
    assert feature_level(op, [f32([2])], [f32([2])]) == FL1
    assert feature_level(op, [q8([2], 0.5, 0)], [q8([2], *qout)]) == FL1
    assert feature_level(op, [f16([2])], [f16([2])]) == FL3
    assert feature_level(op, [s8([2], 0.5, 0)], [s8([2], 0.5, -128)]) == FL4


@pytest.mark.parametrize("op", list(FLOAT_CASES))
def test_rejections(op):
    with pytest.raises(OperationValidationError):
        build(op, [i32t([2])], [i32t([2])])
    with pytest.raises(OperationValidationError):
        build(op, [f32([2])], [f16([2])])
    with pytest.raises(OperationValidationError):
        build(op, [f32([1, 1, 1, 1, 2])], [f32([1, 1, 1, 1, 2])])
