"""ABS, EXP, FLOOR, LOG, NEG, RSQRT, SQRT, TANH, HARD_SWISH, ELU: values and feature levels."""
import math

import numpy as np
import pytest

from nnsim.errors import OperationValidationError, OpFailedError
from nnsim.types import FL1, FL3, FL4, FL7, OperationCode as C

from .ophelp import build, f16, f32, feature_level, fl16, fl32, i32t, q8, run1, s8

X = [0.25, 1.0, 4.0, 9.0]
FLOAT_CASES = {
    C.SQRT: [0.5, 1, 2, 3], C.RSQRT: [2, 1, 0.5, 1 / 3], C.EXP: list(np.exp(X)),
    C.LOG: list(np.log(X)), C.FLOOR: [0, 1, 4, 9], C.ABS: X, C.NEG: [-v for v in X],
}


@pytest.mark.parametrize("op", list(FLOAT_CASES))
def test_float32_and_float16(op):
    out = run1(op, [f32([4])], [f32([4])], X)
    np.testing.assert_allclose(out, FLOAT_CASES[op], rtol=1e-6)
    out = run1(op, [f16([2, 2])], [f16([2, 2])], X)
    assert out.dtype == np.float16
    np.testing.assert_allclose(out.ravel(), FLOAT_CASES[op], rtol=2e-3)


def test_int32_abs_neg():
    assert run1(C.ABS, [i32t([3])], [i32t([3])], [-3, 0, 4]).tolist() == [3, 0, 4]
    assert run1(C.NEG, [i32t([3])], [i32t([3])], [-3, 0, 4]).tolist() == [3, 0, -4]


def test_unary_feature_levels():
    assert feature_level(C.FLOOR, [f32([2])], [f32([2])]) == FL1
    assert feature_level(C.FLOOR, [f16([2])], [f16([2])]) == FL3
    for op in (C.EXP, C.LOG, C.SQRT, C.RSQRT, C.ABS, C.NEG):
        assert feature_level(op, [f32([2])], [f32([2])]) == FL3
    assert feature_level(C.ABS, [i32t([2])], [i32t([2])]) == FL4
    assert feature_level(C.NEG, [i32t([2])], [i32t([2])]) == FL3
    assert feature_level(C.RSQRT, [q8([2], 1, 0)], [q8([2], 1, 0)]) == FL7


@pytest.mark.parametrize("op,ins,outs", [
    (C.EXP, [i32t([2])], [i32t([2])]),
    (C.SQRT, [q8([2], 1, 0)], [q8([2], 1, 0)]),
    (C.FLOOR, [f32([1, 1, 1, 1, 2])], [f32([1, 1, 1, 1, 2])]),
    (C.NEG, [f32([2])], [f16([2])]),
])
def test_unary_rejections(op, ins, outs):
    with pytest.raises(OperationValidationError):
        build(op, ins, outs)


def test_rsqrt_quant8_is_refused_at_finish():
    from nnsim.errors import NnapiError
    with pytest.raises(NnapiError):
        build(C.RSQRT, [q8([2], 1, 0)], [q8([2], 1, 0)])


# -- TANH / HARD_SWISH / ELU ----------------------------------------------------------------
def test_tanh_float():
    out = run1(C.TANH, [f32([3])], [f32([3])], [-1, 0, 2])
    np.testing.assert_allclose(out, np.tanh([-1, 0, 2]), rtol=1e-6)


def test_tanh_quant8_and_signed():
    out = run1(C.TANH, [q8([3], 0.05, 128)], [q8([3], 1 / 128, 128)], [128, 148, 0])
    assert out.tolist() == [128, 128 + round(math.tanh(1.0) * 128), 0]
    out = run1(C.TANH, [s8([2], 0.05, 0)], [s8([2], 1 / 128, 0)], [20, -128])
    assert out.tolist() == [round(math.tanh(1.0) * 128), -128]


def test_tanh_quant8_output_scale_is_checked():
    with pytest.raises(OpFailedError):
        run1(C.TANH, [q8([1], 0.05, 128)], [q8([1], 1 / 256, 0)], [128])


def test_tanh_feature_levels():
    assert feature_level(C.TANH, [f32([2])], [f32([2])]) == FL1
    assert feature_level(C.TANH, [f16([2])], [f16([2])]) == FL3
    assert feature_level(C.TANH, [q8([2], 0.1, 0)], [q8([2], 1 / 128, 128)]) == FL3
    assert feature_level(C.TANH, [s8([2], 0.1, 0)], [s8([2], 1 / 128, 0)]) == FL4


def test_hard_swish():
    x = [-4.0, -1.0, 0.0, 1.0, 4.0]
    want = [v * min(6.0, max(0.0, v + 3)) / 6 for v in x]
    np.testing.assert_allclose(run1(C.HARD_SWISH, [f32([5])], [f32([5])], x), want, rtol=1e-6)
    q = run1(C.HARD_SWISH, [q8([5], 0.05, 128)], [q8([5], 0.05, 128)],
             [48, 108, 128, 148, 208])
    np.testing.assert_allclose((q.astype(int) - 128) * 0.05, want, atol=0.051)
    for t in (f32([2]), f16([2]), q8([2], 0.1, 3), s8([2], 0.1, 3)):
        assert feature_level(C.HARD_SWISH, [t], [t]) == FL4


def test_elu():
    out = run1(C.ELU, [f32([3]), fl32(2.0)], [f32([3])], [-1, 0, 3])
    np.testing.assert_allclose(out, [2 * math.expm1(-1), 0, 3], rtol=1e-6)
    out = run1(C.ELU, [f16([2]), fl16(1.0)], [f16([2])], [-1, 1])
    assert out.dtype == np.float16
    assert feature_level(C.ELU, [f32([2]), fl32(1.0)], [f32([2])]) == FL4
    with pytest.raises(OperationValidationError):
        build(C.ELU, [f16([2]), fl32(1.0)], [f16([2])])
