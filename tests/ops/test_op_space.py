"""SPACE_TO_DEPTH, DEPTH_TO_SPACE, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, SQUEEZE, EXPAND_DIMS:
values, layouts, feature levels and rejections."""
import numpy as np
import pytest

from nnsim.errors import OperationValidationError, OpFailedError
from nnsim.types import FL1, FL2, FL3, FL4, OperationCode as C

from .ophelp import boolean, build, f16, f32, feature_level, i32, i32t, q8, run1, s8, tensor

X16 = np.arange(16, dtype=np.float32)


def test_space_to_depth_and_back():
    d = run1(C.SPACE_TO_DEPTH, [f32([1, 4, 4, 1]), i32(2)], [f32([1, 2, 2, 4])], X16)
    assert d[0, 0, 0].tolist() == [0, 1, 4, 5]
    back = run1(C.DEPTH_TO_SPACE, [f32([1, 2, 2, 4]), i32(2)], [f32([1, 4, 4, 1])], d)
    np.testing.assert_array_equal(back.ravel(), X16)


def test_space_to_depth_nchw_matches_nhwc():
    x = np.arange(32, dtype=np.float32).reshape(1, 4, 4, 2)
    nhwc = run1(C.SPACE_TO_DEPTH, [f32([1, 4, 4, 2]), i32(2)], [f32([1, 2, 2, 8])], x)
    nchw = run1(C.SPACE_TO_DEPTH, [f32([1, 2, 4, 4]), i32(2), boolean(True)],
                [f32([1, 8, 2, 2])], x.transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(nchw, nhwc.transpose(0, 3, 1, 2))


def test_space_to_batch_quant8_pads_with_zero_point():
    out = run1(C.SPACE_TO_BATCH_ND, [q8([1, 2, 2, 1], 0.5, 9), i32t([2], [2, 2]),
                                     i32t([2, 2], [1, 1, 0, 0])],
               [q8([4, 2, 1, 1], 0.5, 9)], [1, 2, 3, 4])
    assert out.ravel().tolist() == [9, 3, 9, 4, 1, 9, 2, 9]


def test_batch_to_space_float16():
    x = np.arange(8, dtype=np.float16)
    out = run1(C.BATCH_TO_SPACE_ND, [f16([4, 1, 2, 1]), i32t([2], [2, 2])],
               [f16([1, 2, 4, 1])], x)
    assert out.dtype == np.float16 and out.ravel().tolist() == [0, 2, 1, 3, 4, 6, 5, 7]


@pytest.mark.parametrize("code,ins,out", [
    (C.SPACE_TO_DEPTH, [f32([1, 3, 4, 1]), i32(2)], f32([1, 1, 2, 4])),
    (C.DEPTH_TO_SPACE, [f32([1, 1, 1, 3]), i32(2)], f32([1, 2, 2, 1])),
    (C.BATCH_TO_SPACE_ND, [f32([3, 1, 1, 1]), i32t([2], [2, 1])], f32([1, 2, 1, 1])),
    (C.SPACE_TO_BATCH_ND, [f32([1, 3, 3, 1]), i32t([2], [2, 2]), i32t([2, 2], [0] * 4)],
     f32([4, 1, 1, 1])),
    (C.SPACE_TO_DEPTH, [f32([1, 2, 2, 1]), i32(0)], f32([1, 2, 2, 1])),
])
def test_bad_geometry_fails_at_execution(code, ins, out):
    n = int(np.prod(ins[0].dims))
    with pytest.raises(OpFailedError):
        run1(code, ins, [out], np.zeros(n))


def test_depth_space_feature_levels():
    for code in (C.SPACE_TO_DEPTH, C.DEPTH_TO_SPACE):
        assert feature_level(code, [f32([1, 2, 2, 4]), i32(2)], [f32([1, 2, 2, 4])]) == FL1
        assert feature_level(code, [q8([1, 2, 2, 4], 1, 3), i32(2)], [q8([1, 2, 2, 4], 1, 3)]) == FL1
        assert feature_level(code, [f16([1, 2, 2, 4]), i32(2)], [f16([1, 2, 2, 4])]) == FL3
        assert feature_level(code, [f32([1, 2, 2, 4]), i32(2), boolean(False)],
                             [f32([1, 2, 2, 4])]) == FL3
        assert feature_level(code, [s8([1, 2, 2, 4], 1, 0), i32(2)], [s8([1, 2, 2, 4], 1, 0)]) == FL4


def test_batch_space_feature_levels():
    blk, pads = i32t([2], [1, 1]), i32t([2, 2], [0] * 4)
    assert feature_level(C.BATCH_TO_SPACE_ND, [f32([1, 1, 1, 1]), blk], [f32([1, 1, 1, 1])]) == FL2
    assert feature_level(C.BATCH_TO_SPACE_ND, [q8([1, 1, 1, 1], 1, 5), blk],
                         [q8([1, 1, 1, 1], 1, 5)]) == FL2
    assert feature_level(C.SPACE_TO_BATCH_ND, [q8([1, 1, 1, 1], 1, 0), blk, pads],
                         [q8([1, 1, 1, 1], 1, 0)]) == FL2
    assert feature_level(C.SPACE_TO_BATCH_ND, [q8([1, 1, 1, 1], 1, 5), blk, pads],
                         [q8([1, 1, 1, 1], 1, 5)]) == FL3
    assert feature_level(C.SPACE_TO_BATCH_ND, [f32([1, 1, 1, 1]), blk, pads, boolean(True)],
                         [f32([1, 1, 1, 1])]) == FL3
    assert feature_level(C.BATCH_TO_SPACE_ND, [s8([1, 1, 1, 1], 1, 0), blk],
                         [s8([1, 1, 1, 1], 1, 0)]) == FL4


def test_space_ops_reject_int32_and_wrong_scalar_types():
    with pytest.raises(OperationValidationError):
        build(C.SPACE_TO_DEPTH, [i32t([1, 2, 2, 1]), i32(2)], [i32t([1, 1, 1, 4])])
    with pytest.raises(OperationValidationError):
        build(C.BATCH_TO_SPACE_ND, [f32([4, 1, 1, 1]), i32(2)], [f32([1, 2, 2, 1])])


# -- SQUEEZE / EXPAND_DIMS --------------------------------------------------------------------
@pytest.mark.parametrize("dims,out", [([1], (2, 3, 1)), ([-1, 1], (2, 3)), ([3, 1, 3], (2, 3))])
def test_squeeze_dims(dims, out):
    got = run1(C.SQUEEZE, [f32([2, 1, 3, 1]), i32t([len(dims)], dims)], [f32(out)], np.arange(6))
    assert got.shape == out and got.ravel().tolist() == list(range(6))


def test_squeeze_values_and_omitted_dims():
    x = np.arange(6, dtype=np.float32)
    out = run1(C.SQUEEZE, [f32([1, 2, 1, 3]), i32t([1], [0])], [f32([2, 1, 3])], x)
    assert out.shape == (2, 1, 3)
    omitted = tensor(i32t([1]).type, [1])
    omitted.omitted = True
    out = run1(C.SQUEEZE, [f32([1, 2, 1, 3]), omitted], [f32([2, 3])], x)
    assert out.shape == (2, 3) and out.ravel().tolist() == list(range(6))
    out = run1(C.SQUEEZE, [q8([1, 1], 0.5, 3), i32t([2], [0, -1])], [q8([1], 0.5, 3)], [7])
    assert out.tolist() == [7]


def test_squeeze_of_a_non_unit_dimension_fails():
    with pytest.raises(OpFailedError):
        run1(C.SQUEEZE, [f32([2, 3]), i32t([1], [0])], [f32([3])], np.zeros(6))


def test_squeeze_feature_levels_and_rank_limit():
    d = i32t([1], [0])
    assert feature_level(C.SQUEEZE, [f32([1, 2]), d], [f32([2])]) == FL2
    assert feature_level(C.SQUEEZE, [q8([1, 2], 1, 0), d], [q8([2], 1, 0)]) == FL2
    assert feature_level(C.SQUEEZE, [f16([1, 2]), d], [f16([2])]) == FL3
    assert feature_level(C.SQUEEZE, [s8([1, 2], 1, 0), d], [s8([2], 1, 0)]) == FL4
    with pytest.raises(OperationValidationError):
        build(C.SQUEEZE, [f32([1, 1, 1, 1, 2]), d], [f32([1, 1, 1, 2])])


@pytest.mark.parametrize("axis,shape", [(0, (1, 2, 3)), (1, (2, 1, 3)), (-1, (2, 3, 1)),
                                        (2, (2, 3, 1)), (-3, (1, 2, 3))])
def test_expand_dims(axis, shape):
    out = run1(C.EXPAND_DIMS, [i32t([2, 3]), i32(axis)], [i32t(shape)], np.arange(6))
    assert out.shape == shape and out.ravel().tolist() == list(range(6))


def test_expand_dims_axis_out_of_range_and_levels():
    with pytest.raises(OpFailedError):
        run1(C.EXPAND_DIMS, [f32([2]), i32(2)], [f32([2, 1])], [1, 2])
    assert feature_level(C.EXPAND_DIMS, [f32([2]), i32(0)], [f32([1, 2])]) == FL3
    assert feature_level(C.EXPAND_DIMS, [q8([2], 1, 0), i32(0)], [q8([1, 2], 1, 0)]) == FL3
    assert feature_level(C.EXPAND_DIMS, [s8([2], 1, 0), i32(0)], [s8([1, 2], 1, 0)]) == FL4
