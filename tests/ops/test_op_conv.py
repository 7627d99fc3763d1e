"""CONV_2D and DEPTHWISE_CONV_2D: hand-computed values (nnapi-runtime.md 7.4) and feature levels."""
import numpy as np
import pytest

from nnsim.errors import OperationValidationError, OpFailedError
from nnsim.types import FL1, FL3, FL4, OperandType as T, OperationCode as C

from .ophelp import boolean, build, f16, f32, feature_level, i32, i32t, q8, run1, s8, tensor

PAD0 = [i32(0)] * 4


def conv_quant8(filter_scale=0.5, out_scale=1.0, extra=()):
    """V1_0/conv_quant8 (7.4 a)."""
    ins = [q8([1, 3, 3, 1], 0.5, 0), q8([1, 2, 2, 1], filter_scale, 0, [2, 2, 2, 2]),
           i32t([1], [4], scale=0.5 * filter_scale), *PAD0, i32(1), i32(1), i32(0), *extra]
    return ins, [q8([1, 2, 2, 1], out_scale, 0)]


def test_conv_quant8_spec_example():
    ins, outs = conv_quant8()
    out = run1(C.CONV_2D, ins, outs, [8, 8, 8, 8, 4, 8, 8, 8, 8])
    np.testing.assert_array_equal(out, np.full((1, 2, 2, 1), 15, np.uint8))


def test_conv_float_implicit_valid():
    ins = [f32([1, 3, 3, 1]), f32([1, 2, 2, 1], [0.25] * 4), f32([1], [0.0]),
           i32(2), i32(1), i32(1), i32(0)]
    out = run1(C.CONV_2D, ins, [f32([1, 2, 2, 1])], [1, 1, 1, 1, 0.5, 1, 1, 1, 1])
    np.testing.assert_allclose(out.ravel(), [0.875] * 4)


def per_channel_conv(channel_dim=0, input_type=T.TENSOR_QUANT8_ASYMM, zp=128):
    """V1_2/conv2d_per_channel (7.4 d)."""
    filt = tensor(T.TENSOR_QUANT8_SYMM_PER_CHANNEL, [3, 1, 1, 2], value=[1, 2, 1, 2, 1, 2],
                  channel_quant=(channel_dim, [0.5, 0.75, 1.0][:[3, 1, 1, 2][channel_dim]]))
    ins = [tensor(input_type, [1, 3, 1, 2], 0.5, zp), filt, i32t([3], [4, 4, 4]),
           *PAD0, i32(1), i32(1), i32(0)]
    return ins, [tensor(input_type, [1, 3, 1, 3], 1.0, zp)]


def test_conv_per_channel_spec_example():
    ins, outs = per_channel_conv()
    out = run1(C.CONV_2D, ins, outs, [138] * 6)
    np.testing.assert_array_equal(out.ravel(), [137, 141, 145] * 3)


def test_conv_per_channel_signed():
    ins, outs = per_channel_conv(input_type=T.TENSOR_QUANT8_ASYMM_SIGNED, zp=0)
    out = run1(C.CONV_2D, ins, outs, [10] * 6)
    np.testing.assert_array_equal(out.ravel(), [9, 13, 17] * 3)  # 8.5, 12.75, 17 rounded


def test_conv_feature_levels():
    assert feature_level(C.CONV_2D, *conv_quant8()) == FL1
    assert feature_level(C.CONV_2D, *per_channel_conv()) == FL3
    assert feature_level(C.CONV_2D, *per_channel_conv(input_type=T.TENSOR_QUANT8_ASYMM_SIGNED,
                                                       zp=0)) == FL4
    assert feature_level(C.CONV_2D, *conv_quant8(extra=[boolean(False)])) == FL3
    assert feature_level(C.CONV_2D, *conv_quant8(extra=[boolean(False), i32(2), i32(2)])) == FL3
    f16_ins = [f16([1, 3, 3, 1]), f16([1, 2, 2, 1], [1] * 4), f16([1], [0]), *PAD0,
               i32(1), i32(1), i32(0)]
    assert feature_level(C.CONV_2D, f16_ins, [f16([1, 2, 2, 1])]) == FL3


def test_conv_legacy_scale_check_reads_the_input_scale():
    # AOSP Conv2D.cpp compares input_scale > input_scale * filter_scale (it reads "output" scale
    # with getInputShape(kOutputTensor) == input 0): a filter scale >= 1 needs FL3 whatever the
    # real output scale is.
    assert feature_level(C.CONV_2D, *conv_quant8(filter_scale=2.0, out_scale=100.0)) == FL3
    assert feature_level(C.CONV_2D, *conv_quant8(filter_scale=0.5, out_scale=0.1)) == FL1


def test_conv_per_channel_needs_channel_dim_0():
    ins, outs = per_channel_conv(channel_dim=3)
    with pytest.raises(OperationValidationError):
        build(C.CONV_2D, ins, outs)


def test_conv_rejects_bad_types():
    ins, outs = conv_quant8()
    ins[2] = q8([1], 0.25, 0, [4])  # bias must be TENSOR_INT32
    with pytest.raises(OperationValidationError):
        build(C.CONV_2D, ins, outs)
    ins, _ = conv_quant8()
    with pytest.raises(OperationValidationError):  # output type differs from the input's
        build(C.CONV_2D, ins, [f32([1, 2, 2, 1])])


# -- DEPTHWISE_CONV_2D -------------------------------------------------------------------------
def dw_quant8(filter_type=T.TENSOR_QUANT8_ASYMM, channel_dim=3, extra=()):
    """V1_0/depthwise_conv2d_quant8 (7.4 b)."""
    cq = (channel_dim, [0.5, 0.5][:[1, 2, 2, 2][channel_dim]]) \
        if filter_type == T.TENSOR_QUANT8_SYMM_PER_CHANNEL else None
    filt = tensor(filter_type, [1, 2, 2, 2], 0.0 if cq else 0.5, 0,
                  [2, 4, 2, 0, 2, 2, 2, 0], channel_quant=cq)
    ins = [q8([1, 2, 2, 2], 0.5, 0), filt, i32t([2], [0, 0], scale=0.0 if cq else 0.25),
           *PAD0, i32(1), i32(1), i32(1), i32(0), *extra]
    return ins, [q8([1, 1, 1, 2], 1.0, 0)]


def test_depthwise_quant8_spec_example():
    out = run1(C.DEPTHWISE_CONV_2D, *dw_quant8(), [4, 16, 4, 32, 4, 64, 4, 128])
    np.testing.assert_array_equal(out.ravel(), [8, 48])


def test_depthwise_per_channel():
    out = run1(C.DEPTHWISE_CONV_2D, *dw_quant8(T.TENSOR_QUANT8_SYMM_PER_CHANNEL),
               [4, 16, 4, 32, 4, 64, 4, 128])
    np.testing.assert_array_equal(out.ravel(), [8, 48])


def dw_float(mult=2, fuse=0, extra=()):
    ins = [f32([1, 1, 1, 2]), f32([1, 1, 1, 4], [1, 2, 3, 4]), f32([4], [0, 0, 0, 0]),
           i32(2), i32(1), i32(1), i32(mult), i32(fuse), *extra]
    return ins, [f32([1, 1, 1, 4])]


def test_depthwise_multiplier_and_fuse():
    np.testing.assert_allclose(run1(C.DEPTHWISE_CONV_2D, *dw_float(), [1, 2]).ravel(),
                               [1, 2, 6, 8])
    np.testing.assert_allclose(run1(C.DEPTHWISE_CONV_2D, *dw_float(fuse=3), [1, 2]).ravel(),
                               [1, 2, 6, 6])


def test_depthwise_nchw():
    x = np.array([4, 16, 4, 32, 4, 64, 4, 128], np.uint8).reshape(1, 2, 2, 2)
    ins, _ = dw_quant8(extra=[boolean(True)])
    ins[0] = q8([1, 2, 2, 2], 0.5, 0)
    out = run1(C.DEPTHWISE_CONV_2D, ins, [q8([1, 2, 1, 1], 1.0, 0)], x.transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(out.ravel(), [8, 48])


def test_depthwise_wrong_multiplier_fails_at_execution():
    with pytest.raises(OpFailedError):
        run1(C.DEPTHWISE_CONV_2D, *dw_float(mult=1), [1, 2])


def test_depthwise_feature_levels():
    assert feature_level(C.DEPTHWISE_CONV_2D, *dw_quant8()) == FL1
    assert feature_level(C.DEPTHWISE_CONV_2D, *dw_float()) == FL1
    assert feature_level(C.DEPTHWISE_CONV_2D, *dw_float(extra=[boolean(False)])) == FL3
    assert feature_level(C.DEPTHWISE_CONV_2D,
                         *dw_float(extra=[boolean(False), i32(1), i32(1)])) == FL3
    assert feature_level(C.DEPTHWISE_CONV_2D, *dw_quant8(T.TENSOR_QUANT8_SYMM_PER_CHANNEL)) == FL3
    ins, _ = dw_quant8()
    ins[0], ins[1] = s8([1, 2, 2, 2], 0.5, 0), s8([1, 2, 2, 2], 0.5, 0, [2] * 8)
    assert feature_level(C.DEPTHWISE_CONV_2D, ins, [s8([1, 1, 1, 2], 1.0, 0)]) == FL4


def test_depthwise_per_channel_needs_channel_dim_3():
    with pytest.raises(OperationValidationError):
        build(C.DEPTHWISE_CONV_2D, *dw_quant8(T.TENSOR_QUANT8_SYMM_PER_CHANNEL, channel_dim=0))


def test_depthwise_rejects_bad_arity_and_types():
    ins, outs = dw_float()
    with pytest.raises(OperationValidationError):
        build(C.DEPTHWISE_CONV_2D, ins[:7], outs)
    ins[2] = i32t([4], [0, 0, 0, 0])  # float bias must be float
    with pytest.raises(OperationValidationError):
        build(C.DEPTHWISE_CONV_2D, ins, outs)
