"""PACK, BATCH_MATMUL (feature level 6), MIRROR_PAD, REVERSE (feature level 7).

This runtime claims feature level 5, so ModelBuilder.finish refuses a model using them (checked
below). Their values are checked by validating the operation at addOperation, then running the
op's prepare + execute on an ExecutionContext directly, as the CPU executor would.
"""
import numpy as np
import pytest

from nnsim.errors import NnapiError, OperationValidationError, OpFailedError
from nnsim.ops.base import ExecutionContext
from nnsim.ops.registry import lookup
from nnsim.runtime.model import ModelBuilder
from nnsim.types import FL6, FL7, OperandType as T, OperationCode as C

from .ophelp import (add_operation, boolean, build, f16, f32, feature_level, i32, i32t, q8, s8,
                     tensor)


def tensor_bool(dims):
    return tensor(T.TENSOR_BOOL8, dims)


def direct(code, inputs, outputs, *feeds) -> list:
    """Validate (addOperation) and run one operation; ``feeds`` fill the non-constant inputs."""
    mb = ModelBuilder()
    model_inputs, outs = add_operation(mb, code, inputs, outputs)
    mb.identify_inputs_and_outputs(model_inputs, outs)
    op, pending = mb.operations[0], iter(feeds)
    values = [mb.operands[i].array() if o.value is not None else o.array(next(pending))
              for i, o in zip(op.inputs, inputs)]
    ctx = ExecutionContext(code, [mb.operands[i] for i in op.inputs], values,
                           [mb.operands[o] for o in op.outputs])
    spec = lookup(code)
    spec.prepare(ctx)
    spec.execute(ctx)
    return ctx.outputs


def direct1(code, inputs, outputs, *feeds):
    return direct(code, inputs, outputs, *feeds)[0]


@pytest.mark.parametrize("code,ins,outs", [
    (C.PACK, [i32(0), f32([2]), f32([2])], [f32([2, 2])]),
    (C.BATCH_MATMUL, [f32([1, 1]), f32([1, 1]), boolean(False), boolean(False)], [f32([1, 1])]),
    (C.MIRROR_PAD, [f32([2]), i32t([1, 2], [1, 1]), i32(0)], [f32([4])]),
    (C.REVERSE, [f32([2]), i32t([1], [0])], [f32([2])]),
])
def test_refused_at_finish_on_this_fl5_runtime(code, ins, outs):
    with pytest.raises(NnapiError):
        build(code, ins, outs)


# -- PACK ---------------------------------------------------------------------------------------
def test_pack_values():
    a, b, c = [1, 2], [3, 4], [5, 6]
    out = direct1(C.PACK, [i32(0), f32([2]), f32([2]), f32([2])], [f32([3, 2])], a, b, c)
    assert out.tolist() == [[1, 2], [3, 4], [5, 6]]
    out = direct1(C.PACK, [i32(1), f32([2]), f32([2]), f32([2])], [f32([2, 3])], a, b, c)
    assert out.tolist() == [[1, 3, 5], [2, 4, 6]]
    out = direct1(C.PACK, [i32(2), s8([1, 2], 0.5, -4), s8([1, 2], 0.5, -4)],
                  [s8([1, 2, 2], 0.5, -4)], [[-128, 1]], [[2, 127]])
    assert out.dtype == np.int8 and out.tolist() == [[[-128, 2], [1, 127]]]
    out = direct1(C.PACK, [i32(0), q8([1], 0.1, 9), q8([1], 0.1, 9, value=[200])],
                  [q8([2, 1], 0.1, 9)], [0])
    assert out.tolist() == [[0], [200]]
    out = direct1(C.PACK, [i32(0), i32t([1])], [i32t([0, 0])], [-7])
    assert out.shape == (1, 1) and out.tolist() == [[-7]]
    out = direct1(C.PACK, [i32(1), f16([1]), f16([1])], [f16([1, 2])], [0.5], [1.5])
    assert out.dtype == np.float16 and out.tolist() == [[0.5, 1.5]]


def test_pack_levels_and_rejections():
    assert feature_level(C.PACK, [i32(0), f32([2]), f32([2])], [f32([2, 2])]) == FL6
    assert feature_level(C.PACK, [i32(0), s8([2], 1, 0)], [s8([1, 2], 1, 0)]) == FL6
    for ins, outs in (
            ([i32(0)], [f32([1])]),                                      # no tensor
            ([i32t([1], [0]), f32([2])], [f32([1, 2])]),                 # axis not a scalar
            ([i32(0), f32([2]), f16([2])], [f32([2, 2])]),               # type differs
            ([i32(0), q8([2], 0.5, 1), q8([2], 0.5, 2)], [q8([2, 2], 0.5, 1)]),   # zero point
            ([i32(0), s8([2], 0.5, 1)], [s8([1, 2], 0.25, 1)]),          # scale
            ([i32(0), f32([2]), f32([1, 2])], [f32([0])]),               # input ranks differ
            ([i32(0), f32([2])], [f32([1, 1, 2])]),                      # output rank
            ([i32(0), tensor_bool([2])], [tensor_bool([1, 2])])):        # unsupported type
        with pytest.raises(OperationValidationError):
            feature_level(C.PACK, ins, outs)
    for axis in (-1, 2):   # no negative axis; at most the input rank
        with pytest.raises(OpFailedError):
            direct(C.PACK, [i32(axis), f32([2])], [f32([0, 0])], [1, 2])
    with pytest.raises(OpFailedError):   # every tensor of one shape
        direct(C.PACK, [i32(0), f32([2]), f32([3])], [f32([0, 0])], [1, 2], [1, 2, 3])


# -- MIRROR_PAD ---------------------------------------------------------------------------------
def test_mirror_pad_reflect_and_symmetric():
    x = [1, 2, 3]
    out = direct1(C.MIRROR_PAD, [f32([3]), i32t([1, 2], [2, 2]), i32(0)], [f32([7])], x)
    assert out.tolist() == [3, 2, 1, 2, 3, 2, 1]
    out = direct1(C.MIRROR_PAD, [f32([3]), i32t([1, 2], [3, 1]), i32(1)], [f32([7])], x)
    assert out.tolist() == [3, 2, 1, 1, 2, 3, 3]
    grid = [[1, 2, 3], [4, 5, 6]]
    out = direct1(C.MIRROR_PAD, [s8([2, 3], 0.5, 1), i32t([2, 2], [1, 0, 0, 2]), i32(0)],
                  [s8([3, 5], 0.5, 1)], grid)
    assert out.dtype == np.int8 and out.tolist() == [[4, 5, 6, 5, 4], [1, 2, 3, 2, 1],
                                                     [4, 5, 6, 5, 4]]
    out = direct1(C.MIRROR_PAD, [q8([2, 3], 0.5, 1), i32t([2, 2], [2, 2, 1, 0]), i32(1)],
                  [q8([6, 4], 0.5, 1)], grid)
    assert out.tolist() == [[4, 4, 5, 6], [1, 1, 2, 3], [1, 1, 2, 3], [4, 4, 5, 6],
                            [4, 4, 5, 6], [1, 1, 2, 3]]
    out = direct1(C.MIRROR_PAD, [i32t([2]), i32t([1, 2], [0, 1]), i32(0)], [i32t([3])], [7, 8])
    assert out.tolist() == [7, 8, 7]
    out = direct1(C.MIRROR_PAD, [f16([1]), i32t([1, 2]), i32(1)], [f16([0])], [2.5], [[1, 1]])
    assert out.dtype == np.float16 and out.tolist() == [2.5, 2.5, 2.5]


def test_mirror_pad_levels_and_rejections():
    ok = [f32([3]), i32t([1, 2], [1, 1]), i32(0)]
    assert feature_level(C.MIRROR_PAD, ok, [f32([5])]) == FL7
    assert feature_level(C.MIRROR_PAD, [s8([3], 1, 0)] + ok[1:], [s8([5], 1, 0)]) == FL7
    for ins, outs in (
            ([f32([3]), i32t([2], [1, 1]), i32(0)], [f32([5])]),           # paddings rank
            ([f32([3]), i32t([1, 3], [1, 1, 1]), i32(0)], [f32([5])]),     # second dim 3
            ([f32([3, 1]), i32t([1, 2], [1, 1]), i32(0)], [f32([5, 1])]),  # first dim != rank
            ([f32([3]), f32([1, 2], [1, 1]), i32(0)], [f32([5])]),         # paddings type
            ([f32([3])] + ok[1:], [f32([5, 1])]),                          # output rank
            ([q8([3], 0.5, 0)] + ok[1:], [q8([5], 0.5, 1)]),               # quantization
            ([f32([3]), ok[1], boolean(False)], [f32([5])])):              # mode type
        with pytest.raises(OperationValidationError):
            feature_level(C.MIRROR_PAD, ins, outs)
    for pads, mode in (([3, 0], 0), ([0, 4], 1), ([-1, 0], 1), ([0, 0], 2)):
        with pytest.raises(OpFailedError):
            direct(C.MIRROR_PAD, [f32([3]), i32t([1, 2], pads), i32(mode)], [f32([0])],
                   [1, 2, 3])


# -- REVERSE ------------------------------------------------------------------------------------
def test_reverse_values():
    grid = [[1, 2, 3], [4, 5, 6]]
    out = direct1(C.REVERSE, [f32([2, 3]), i32t([1], [1])], [f32([2, 3])], grid)
    assert out.tolist() == [[3, 2, 1], [6, 5, 4]]
    out = direct1(C.REVERSE, [s8([2, 3], 0.5, 0), i32t([1], [0])], [s8([2, 3], 0.5, 0)], grid)
    assert out.dtype == np.int8 and out.tolist() == [[4, 5, 6], [1, 2, 3]]
    out = direct1(C.REVERSE, [q8([3], 1, 5), i32t([1])], [q8([3], 1, 5)], [0, 128, 255], [0])
    assert out.tolist() == [255, 128, 0]
    out = direct1(C.REVERSE, [i32t([2]), i32t([1], [0])], [i32t([2])], [-1, 2 ** 31 - 1])
    assert out.tolist() == [2 ** 31 - 1, -1]
    out = direct1(C.REVERSE, [f16([2]), i32t([1], [0])], [f16([2])], [0.5, 1.5])
    assert out.dtype == np.float16 and out.tolist() == [1.5, 0.5]


def test_reverse_levels_and_rejections():
    assert feature_level(C.REVERSE, [f32([2]), i32t([1], [0])], [f32([2])]) == FL7
    assert feature_level(C.REVERSE, [s8([2], 1, 0), i32t([1], [0])], [s8([2], 1, 0)]) == FL7
    for ins, outs in (
            ([f32([2]), i32t([2], [0, 0])], [f32([2])]),          # two axes
            ([f32([2]), i32t([1, 1], [0])], [f32([2])]),          # axis rank 2
            ([f32([2]), i32(0)], [f32([2])]),                     # axis scalar
            ([f32([2]), i32t([1], [0])], [f32([2, 1])]),          # output rank
            ([s8([2], 1, 0), i32t([1], [0])], [s8([2], 1, 1)]),   # quantization
            ([tensor_bool([2]), i32t([1], [0])], [tensor_bool([2])])):
        with pytest.raises(OperationValidationError):
            feature_level(C.REVERSE, ins, outs)
    for axis in (-1, 1):
        with pytest.raises(OpFailedError):
            direct(C.REVERSE, [f32([2]), i32t([1], [axis])], [f32([2])], [1, 2])


# -- BATCH_MATMUL -------------------------------------------------------------------------------
def _bmm(lhs, rhs, out, adj_x=False, adj_y=False, *feeds):
    return direct1(C.BATCH_MATMUL, [lhs, rhs, boolean(adj_x), boolean(adj_y)], [out], *feeds)


def test_batch_matmul_float():
    a, b = [[1, 2], [3, 4]], [[5, 6], [7, 8]]
    assert _bmm(f32([2, 2]), f32([2, 2]), f32([2, 2]), False, False, a, b).tolist() == \
        [[19, 22], [43, 50]]
    assert _bmm(f32([2, 2]), f32([2, 2]), f32([2, 2]), True, False, a, b).tolist() == \
        [[26, 30], [38, 44]]
    assert _bmm(f32([2, 2]), f32([2, 2]), f32([2, 2]), False, True, a, b).tolist() == \
        [[17, 23], [39, 53]]
    assert _bmm(f32([2, 2]), f32([2, 2]), f32([2, 2]), True, True, a, b).tolist() == \
        [[23, 31], [34, 46]]
    # batches, with rhs broadcast over lhs's first batch dimension; a 1x3 by 3x1 product
    lhs = np.arange(12, dtype=np.float32).reshape(2, 2, 1, 3)
    rhs = np.asarray([[[[1], [0], [-1]]], [[[2], [2], [2]]]], np.float32).reshape(1, 2, 3, 1)
    out = _bmm(f32([2, 2, 1, 3]), f32([1, 2, 3, 1]), f32([2, 2, 1, 1]), False, False, lhs, rhs)
    assert out.reshape(-1).tolist() == [-2, 24, -2, 60]


def test_batch_matmul_float_accumulates_in_float32_in_order():
    # 1e8 + 1 - 1e8: float32 loses the 1 when adding in k order
    out = _bmm(f32([1, 3]), f32([3, 1]), f32([1, 1]), False, False, [[1e8, 1, -1e8]],
               [[1], [1], [1]])
    assert out.tolist() == [[0.0]]


def test_batch_matmul_int32_and_half():
    out = _bmm(i32t([1, 2]), i32t([2, 1]), i32t([1, 1]), False, False, [[3, -4]], [[5], [6]])
    assert out.tolist() == [[-9]]
    out = _bmm(i32t([1, 2]), i32t([2, 1]), i32t([1, 1]), False, False, [[2 ** 30, 2 ** 30]],
               [[2], [0]])
    assert out.tolist() == [[-2 ** 31]]   # int32 wrap-around
    out = _bmm(f16([1, 2]), f16([2, 1]), f16([1, 1]), False, False, [[2048, 1]], [[1], [1]])
    assert out.dtype == np.float16 and out.tolist() == [[2048]]   # 2049 is not a half


def test_batch_matmul_quant8_signed():
    # real = (q - zp) * scale: lhs scale 0.5 zp -1, rhs scale 0.25 zp 2, output scale 1 zp 3;
    # acc = sum (lhs - zp)(rhs - zp), out = round(acc * 0.125) + 3 (ties away from zero)
    lhs, rhs, out = s8([3, 2], 0.5, -1), s8([2, 1], 0.25, 2), s8([3, 1], 1.0, 3)
    got = _bmm(lhs, rhs, out, False, False, [[1, 3], [10, 1], [-12, 1]], [[6], [10]])
    # acc: 2*4 + 4*8 = 40 -> 5; 11*4 + 2*8 = 60 -> 7.5 -> 8; -11*4 + 2*8 = -28 -> -3.5 -> -4
    assert got.dtype == np.int8 and got.reshape(-1).tolist() == [8, 11, -1]
    got = _bmm(lhs, rhs, out, False, False, [[127, 127], [-128, -128], [0, 0]], [[127], [127]])
    assert got.reshape(-1).tolist() == [127, -128, 3 + 31]   # clamped; 1*125*2*0.125 = 31.25


def test_batch_matmul_levels_and_rejections():
    flags = [boolean(False), boolean(False)]
    for t in (f32, f16, i32t):
        assert feature_level(C.BATCH_MATMUL, [t([1, 1]), t([1, 1])] + flags, [t([1, 1])]) == FL6
    s = s8([1, 1], 1, 0)
    assert feature_level(C.BATCH_MATMUL, [s, s] + flags, [s]) == FL6
    q = q8([1, 1], 1, 0)
    for ins, outs in (([q, q] + flags, [q]),                            # no quant8-asymm
                      ([f32([1, 1]), f16([1, 1])] + flags, [f32([1, 1])]),
                      ([f32([1, 1]), f32([1, 1])] + flags, [f16([1, 1])]),
                      ([f32([1, 1]), f32([1, 1]), i32(0), boolean(False)], [f32([1, 1])]),
                      ([f32([1, 1]), f32([1, 1]), boolean(False)], [f32([1, 1])])):
        with pytest.raises(OperationValidationError):
            feature_level(C.BATCH_MATMUL, ins, outs)
    x2, x3 = np.ones((2, 2)), np.ones((1, 2, 2))
    for lhs, rhs, a, b in ((x2, x3, np.ones((2, 2)), x3),              # ranks differ
                           (x2, x2[:1], x2, np.ones((1, 2))),          # 2 by 2, then 1 by 2
                           (np.ones((2,) * 5), np.ones((2,) * 5), None, None),   # rank 5
                           (x3, np.ones((2, 2, 2)), x3, np.ones((2, 2, 2)))):   # lhs batch 1
        with pytest.raises(OpFailedError):
            _bmm(f32(lhs.shape), f32(rhs.shape), f32([0] * lhs.ndim), False, False, lhs, rhs)


# -- AOSP spec examples (runtime/test/specs/AIDL_V2, AIDL_V3), quant8-signed variations ----------
def test_aosp_batch_matmul_simple_quant8_signed():
    # batch_matmul.mod.py "Simple": op1 (0.25, 0), op2 (0.5, -64), op3 (1.0, -128)
    lhs = np.arange(1, 7).reshape(1, 2, 3) * 4
    rhs = np.arange(7, 19).reshape(1, 3, 4) * 2 - 64
    out = _bmm(s8([1, 2, 3], 0.25, 0), s8([1, 3, 4], 0.5, -64), s8([1, 2, 4], 1.0, -128),
               False, False, lhs, rhs)
    assert (out.astype(int) + 128).ravel().tolist() == [74, 80, 86, 92, 173, 188, 203, 218]


def test_aosp_mirror_pad_tensorflow_summary_quant8_signed():
    # mirror_pad_tensorflow.mod.py "summary", quantized with (0.25, -9)
    x = np.asarray([[1, 2, 3], [4, 5, 6]]) * 4 - 9
    out = direct1(C.MIRROR_PAD, [s8([2, 3], 0.25, -9), i32t([2, 2], [1, 1, 2, 2]), i32(1)],
                  [s8([4, 7], 0.25, -9)], x)
    want = [[2, 1, 1, 2, 3, 3, 2]] * 2 + [[5, 4, 4, 5, 6, 6, 5]] * 2
    assert ((out.astype(int) + 9) // 4).tolist() == want


def test_aosp_pack_and_reverse_quant8_signed():
    # pack.mod.py "FLOAT32_binary_axis1" and reverse.mod.py "dim3_axis1", with (0.25, -9)
    a, b = np.arange(12).reshape(3, 4) - 9, np.arange(12, 24).reshape(3, 4) - 9
    out = direct1(C.PACK, [i32(1), s8([3, 4], 0.25, -9), s8([3, 4], 0.25, -9)],
                  [s8([3, 2, 4], 0.25, -9)], a, b)
    assert (out.astype(int) + 9).ravel().tolist() == [0, 1, 2, 3, 12, 13, 14, 15, 4, 5, 6, 7,
                                                      16, 17, 18, 19, 8, 9, 10, 11, 20, 21, 22, 23]
    out = direct1(C.REVERSE, [s8([2, 3, 4], 0.25, -9), i32t([1], [1])],
                  [s8([2, 3, 4], 0.25, -9)], np.arange(24).reshape(2, 3, 4) - 9)
    assert (out.astype(int) + 9).ravel().tolist() == [*range(8, 12), *range(4, 8), *range(0, 4),
                                                      *range(20, 24), *range(16, 20),
                                                      *range(12, 16)]
