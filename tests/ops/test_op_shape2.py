"""TILE, FILL, RANK, REDUCE_PROD / ALL / ANY, TOPK_V2, CHANNEL_SHUFFLE on nnapi-reference:
hand-computed values, feature levels, validation and runtime rejections."""
import numpy as np
import pytest

from nnsim.errors import NnapiError, OperationValidationError, OpFailedError
from nnsim.types import FL3, FL4, OperandType as T, OperationCode as C

from .ophelp import (Opnd, boolean, build, f16, f32, feature_level, fl16, fl32, i32, i32t, q8,
                     run, run1, s8, tensor)


def b8(dims, value=None):
    return tensor(T.TENSOR_BOOL8, dims, value=value)


def scalar_i32():
    return Opnd(T.INT32, ())


# -- TILE ---------------------------------------------------------------------------------------
def test_tile_values_every_type():
    out = run1(C.TILE, [f32([2, 2]), i32t([2], [2, 3])], [f32([4, 6])], [[1, 2], [3, 4]])
    assert out.tolist() == [[1, 2, 1, 2, 1, 2], [3, 4, 3, 4, 3, 4]] * 2
    out = run1(C.TILE, [q8([3], 0.5, 7), i32t([1], [2])], [q8([6], 0.5, 7)], [0, 128, 255])
    assert out.tolist() == [0, 128, 255, 0, 128, 255]
    out = run1(C.TILE, [s8([2, 1], 0.25, -3), i32t([2], [1, 3])], [s8([2, 3], 0.25, -3)],
               [-128, 127])
    assert out.dtype == np.int8 and out.tolist() == [[-128] * 3, [127] * 3]
    out = run1(C.TILE, [i32t([1, 2]), i32t([2], [2, 1])], [i32t([2, 2])], [[-5, 2 ** 31 - 1]])
    assert out.tolist() == [[-5, 2 ** 31 - 1]] * 2
    out = run1(C.TILE, [f16([2]), i32t([1], [2])], [f16([4])], [0.5, -1.25])
    assert out.dtype == np.float16 and out.tolist() == [0.5, -1.25, 0.5, -1.25]


def test_tile_multiples_as_model_input_and_unknown_output_dims():
    out = run(C.TILE, [f32([1, 2]), i32t([2])], [f32([0, 0])], [[[7, 8]], [3, 2]])[0]
    assert out.shape == (3, 4) and out.tolist() == [[7, 8, 7, 8]] * 3


def test_tile_levels_and_rejections():
    args = [i32t([1], [2])]
    assert feature_level(C.TILE, [f32([2])] + args, [f32([4])]) == FL3
    assert feature_level(C.TILE, [q8([2], 1, 0)] + args, [q8([4], 1, 0)]) == FL3
    assert feature_level(C.TILE, [i32t([2])] + args, [i32t([4])]) == FL3
    assert feature_level(C.TILE, [s8([2], 1, 0)] + args, [s8([4], 1, 0)]) == FL4
    with pytest.raises(OperationValidationError):
        build(C.TILE, [b8([2])] + args, [b8([4])])
    with pytest.raises(OperationValidationError):
        build(C.TILE, [f32([2]), i32t([1], [2])], [f16([4])])
    with pytest.raises(OpFailedError):   # one multiple per input dimension
        run1(C.TILE, [f32([2]), i32t([2], [2, 2])], [f32([0])], [1, 2])
    with pytest.raises(OpFailedError):   # the output takes the input's quantization
        run1(C.TILE, [q8([2], 0.5, 0)] + args, [q8([4], 0.25, 0)], [1, 2])


# -- FILL ---------------------------------------------------------------------------------------
def test_fill_values():
    out = run1(C.FILL, [i32t([2], [2, 3]), fl32(1.5)], [f32([2, 3])])
    assert out.shape == (2, 3) and (out == np.float32(1.5)).all()
    out = run1(C.FILL, [i32t([1], [3]), i32(-7)], [i32t([3])])
    assert out.dtype == np.int32 and out.tolist() == [-7, -7, -7]
    out = run1(C.FILL, [i32t([3], [1, 1, 2]), fl16(0.1)], [f16([1, 1, 2])])
    assert out.dtype == np.float16 and (out == np.float16(0.1)).all()
    out = run(C.FILL, [i32t([2]), fl32(-2.0)], [f32([0, 0])], [[1, 2]])[0]
    assert out.tolist() == [[-2.0, -2.0]]


def test_fill_levels_and_rejections():
    assert feature_level(C.FILL, [i32t([1], [2]), fl32(0)], [f32([2])]) == FL4
    assert feature_level(C.FILL, [i32t([1], [2]), i32(0)], [i32t([2])]) == FL4
    with pytest.raises(OperationValidationError):   # value type follows the output type
        build(C.FILL, [i32t([1], [2]), fl32(0)], [i32t([2])])
    with pytest.raises(OperationValidationError):
        build(C.FILL, [i32t([1], [2]), i32(0)], [q8([2], 1, 0)])
    with pytest.raises(OperationValidationError):
        build(C.FILL, [f32([1], [2]), fl32(0)], [f32([2])])
    with pytest.raises(OpFailedError):
        run(C.FILL, [i32t([1, 2]), fl32(0)], [f32([0, 0])], [[[1, 2]]])


# -- RANK ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("operand,rank", [
    (f32([2, 3, 4]), 3), (s8([5], 0.5, -1), 1), (b8([1, 1, 1, 1, 2]), 5),
    (tensor(T.TENSOR_QUANT16_SYMM, [2, 2], 0.5), 2), (i32t([1, 2, 3, 4, 5, 6]), 6),
])
def test_rank_values(operand, rank):
    out = run1(C.RANK, [operand], [scalar_i32()], np.zeros(operand.dims))
    assert out.dtype == np.int32 and int(out) == rank


def test_rank_scalar_feeds_fill_as_a_temporary():
    """AOSP V1_3 rank.mod.py "internal_output" (b/150728111): RANK's INT32 scalar output is a
    temporary that FILL reads as its value."""
    from nnsim.ops.executor import run_model
    from nnsim.runtime.model import ModelBuilder
    from nnsim.common.operand import OperandTypeSpec as S
    mb = ModelBuilder()
    x, dims = mb.add_operand(S(T.TENSOR_FLOAT32, (2, 3))), mb.add_operand(S(T.TENSOR_INT32, (3,)))
    rank, out = mb.add_operand(S(T.INT32)), mb.add_operand(S(T.TENSOR_INT32, (2, 3, 4)))
    mb.add_operation(C.RANK, [x], [rank])
    mb.add_operation(C.FILL, [dims, rank], [out])
    mb.identify_inputs_and_outputs([x, dims], [out])
    mb.finish()
    got = run_model(mb, [np.arange(6, dtype=np.float32).reshape(2, 3),
                         np.asarray([2, 3, 4], np.int32)])[0]
    assert got.dtype == np.int32 and got.shape == (2, 3, 4) and (got == 2).all()


def test_rank_levels_and_rejections():
    assert feature_level(C.RANK, [f32([2])], [scalar_i32()]) == FL4
    assert feature_level(C.RANK, [s8([2], 1, 0)], [scalar_i32()]) == FL4
    with pytest.raises(OperationValidationError):   # the output is a scalar, not a tensor
        build(C.RANK, [f32([2])], [i32t([1])])
    with pytest.raises(OperationValidationError):
        build(C.RANK, [Opnd(T.FLOAT32, ())], [scalar_i32()])


# -- REDUCE_PROD / ALL / ANY ---------------------------------------------------------------------
def test_reduce_prod_float32():
    x = [[1, 2, 3], [4, 5, 6]]
    out = run1(C.REDUCE_PROD, [f32([2, 3]), i32t([1], [1]), boolean(False)], [f32([2])], x)
    assert out.tolist() == [6, 120]
    out = run1(C.REDUCE_PROD, [f32([2, 3]), i32t([2], [0, -1]), boolean(True)], [f32([1, 1])], x)
    assert out.tolist() == [[720]]
    out = run1(C.REDUCE_PROD, [f32([2, 3]), i32t([2], [0, 0]), boolean(False)], [f32([3])], x)
    assert out.tolist() == [4, 10, 18]


def test_reduce_prod_zero_guard():
    # AOSP returns 0 as soon as either factor is 0: no 0 * inf = NaN, and the zero is +0
    x = [[np.inf, 0.0, 2.0], [-0.0, 3.0, -1.0], [-1e-30, 1e-30, 5.0]]
    out = run1(C.REDUCE_PROD, [f32([3, 3]), i32t([1], [1]), boolean(False)], [f32([3])], x)
    assert out.tolist() == [0.0, 0.0, 0.0]
    assert not np.signbit(out).any()


def test_reduce_prod_float16_rounds_every_step():
    x = np.asarray([1.794921875, 1.3125, 0.94970703125, 1.1337890625], dtype=np.float16)
    want = np.float16(1)
    for v in x:   # one half-precision rounding per product, in order
        want = np.float16(np.float32(want) * np.float32(v))
    out = run1(C.REDUCE_PROD, [f16([4]), i32t([1], [0]), boolean(False)], [f16([1])], x)
    assert out.dtype == np.float16 and out.tolist() == [float(want)] == [2.53515625]
    assert float(want) != float(np.float16(np.prod(x.astype(np.float64))))  # rounding matters


@pytest.mark.parametrize("code,axes,keep,want", [
    (C.REDUCE_ALL, [1], False, [False, True, False]),
    (C.REDUCE_ANY, [1], False, [True, True, False]),
    (C.REDUCE_ALL, [0], True, [[False, False]]),
    (C.REDUCE_ANY, [-2, 0], False, [True, True]),
    (C.REDUCE_ANY, [0, 1], False, [True]),
])
def test_reduce_all_any(code, axes, keep, want):
    x = [[True, False], [True, True], [False, False]]
    want = np.asarray(want)
    out = run1(code, [b8([3, 2]), i32t([len(axes)], axes), boolean(keep)], [b8(want.shape)], x)
    assert out.dtype == np.bool_ and out.tolist() == want.tolist()


def test_reduce_levels_and_rejections():
    args = [i32t([1], [0]), boolean(False)]
    for code in (C.REDUCE_ALL, C.REDUCE_ANY):
        assert feature_level(code, [b8([2])] + args, [b8([1])]) == FL3
        with pytest.raises(OperationValidationError):
            build(code, [f32([2])] + args, [f32([1])])
    assert feature_level(C.REDUCE_PROD, [f32([2])] + args, [f32([1])]) == FL3
    assert feature_level(C.REDUCE_PROD, [f16([2])] + args, [f16([1])]) == FL3
    with pytest.raises(OperationValidationError):
        build(C.REDUCE_PROD, [s8([2], 1, 0)] + args, [s8([1], 1, 0)])
    with pytest.raises(OperationValidationError):
        build(C.REDUCE_PROD, [f32([1, 1, 1, 1, 2])] + args, [f32([1, 1, 1, 2])])
    with pytest.raises(OpFailedError):   # REDUCE_MAX output takes the input's quantization
        run1(C.REDUCE_MAX, [s8([2], 0.5, 1)] + args, [s8([1], 0.5, 2)], [1, 2])


# -- TOPK_V2 ------------------------------------------------------------------------------------
def test_topk_float_ties_highest_index_first():
    x = [[1, 5, 3, 5], [2, 2, 2, 2]]
    values, indices = run(C.TOPK_V2, [f32([2, 4]), i32(2)], [f32([2, 2]), i32t([2, 2])], [x])
    assert values.tolist() == [[5, 5], [2, 2]]
    assert indices.tolist() == [[3, 1], [3, 2]]


def test_topk_quant_int_and_half():
    values, indices = run(C.TOPK_V2, [s8([4], 0.5, -2), i32(3)], [s8([3], 0.5, -2), i32t([3])],
                          [[-3, 7, -128, 7]])
    assert values.dtype == np.int8 and values.tolist() == [7, 7, -3]
    assert indices.tolist() == [3, 1, 0]
    values, indices = run(C.TOPK_V2, [q8([1, 3], 0.1, 128), i32(1)],
                          [q8([1, 1], 0.1, 128), i32t([1, 1])], [[[200, 255, 0]]])
    assert values.tolist() == [[255]] and indices.tolist() == [[1]]
    values, indices = run(C.TOPK_V2, [i32t([3]), i32(3)], [i32t([3]), i32t([3])],
                          [[-2 ** 31, 0, 2 ** 31 - 1]])
    assert values.tolist() == [2 ** 31 - 1, 0, -2 ** 31] and indices.tolist() == [2, 1, 0]
    values, indices = run(C.TOPK_V2, [f16([3]), i32(2)], [f16([2]), i32t([2])],
                          [[0.1, -0.5, 0.2]])
    assert values.dtype == np.float16 and values.tolist() == [float(np.float16(0.2)),
                                                              float(np.float16(0.1))]
    assert indices.tolist() == [2, 0]


def test_topk_levels_and_rejections():
    outs = [f32([1]), i32t([1])]
    assert feature_level(C.TOPK_V2, [f32([2]), i32(1)], outs) == FL3
    assert feature_level(C.TOPK_V2, [i32t([2]), i32(1)], [i32t([1]), i32t([1])]) == FL3
    assert feature_level(C.TOPK_V2, [s8([2], 1, 0), i32(1)], [s8([1], 1, 0), i32t([1])]) == FL4
    with pytest.raises(OperationValidationError):
        build(C.TOPK_V2, [f32([2]), i32(1)], [f32([1]), f32([1])])
    with pytest.raises(OperationValidationError):
        build(C.TOPK_V2, [b8([2]), i32(1)], [b8([1]), i32t([1])])
    for k in (0, 3):
        with pytest.raises(OpFailedError):
            run(C.TOPK_V2, [f32([2]), i32(k)], [f32([0]), i32t([0])], [[1, 2]])
    with pytest.raises(OpFailedError):   # the values output takes the input's quantization
        run(C.TOPK_V2, [q8([2], 0.5, 0), i32(1)], [q8([1], 0.5, 1), i32t([1])], [[1, 2]])


# -- CHANNEL_SHUFFLE ----------------------------------------------------------------------------
def test_channel_shuffle_values():
    x = np.arange(12).reshape(2, 6)
    out = run1(C.CHANNEL_SHUFFLE, [f32([2, 6]), i32(2), i32(1)], [f32([2, 6])], x)
    assert out.tolist() == [[0, 3, 1, 4, 2, 5], [6, 9, 7, 10, 8, 11]]
    out = run1(C.CHANNEL_SHUFFLE, [s8([2, 6], 0.5, 3), i32(3), i32(-1)], [s8([2, 6], 0.5, 3)],
               x - 6)
    assert out.dtype == np.int8 and out.tolist() == [[-6, -4, -2, -5, -3, -1],
                                                     [0, 2, 4, 1, 3, 5]]
    out = run1(C.CHANNEL_SHUFFLE, [q8([4, 1], 1, 0), i32(2), i32(0)], [q8([4, 1], 1, 0)],
               [[10], [20], [30], [40]])
    assert out.tolist() == [[10], [30], [20], [40]]
    out = run1(C.CHANNEL_SHUFFLE, [f16([3]), i32(1), i32(0)], [f16([3])], [1, 2, 3])
    assert out.dtype == np.float16 and out.tolist() == [1, 2, 3]


def test_channel_shuffle_levels_and_rejections():
    args = [i32(2), i32(0)]
    assert feature_level(C.CHANNEL_SHUFFLE, [f32([4])] + args, [f32([4])]) == FL3
    assert feature_level(C.CHANNEL_SHUFFLE, [q8([4], 1, 0)] + args, [q8([4], 1, 0)]) == FL3
    assert feature_level(C.CHANNEL_SHUFFLE, [s8([4], 1, 0)] + args, [s8([4], 1, 0)]) == FL4
    with pytest.raises(OperationValidationError):
        build(C.CHANNEL_SHUFFLE, [i32t([4])] + args, [i32t([4])])
    with pytest.raises(OperationValidationError):
        build(C.CHANNEL_SHUFFLE, [f32([1, 1, 1, 1, 4])] + args, [f32([1, 1, 1, 1, 4])])
    for groups, axis in ((3, 0), (0, 0), (2, 1), (2, -2)):
        with pytest.raises(OpFailedError):
            run1(C.CHANNEL_SHUFFLE, [f32([4]), i32(groups), i32(axis)], [f32([4])], [1, 2, 3, 4])


def test_finish_accepts_these_feature_levels():
    # FL3 / FL4 operations build and finish on this FL5 runtime (unlike the FL6 / FL7 ones)
    model = build(C.TOPK_V2, [s8([2], 1, 0), i32(1)], [s8([1], 1, 0), i32t([1])])
    assert model.finished
    with pytest.raises(NnapiError):
        build(C.REVERSE, [f32([2]), i32t([1], [0])], [f32([2])])
