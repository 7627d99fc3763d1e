"""TRANSPOSE_CONV_2D: explicit and implicit padding, layouts, quantized variants, feature
levels and rejections."""
import numpy as np
import pytest

from nnsim.errors import OperationValidationError, OpFailedError
from nnsim.types import FL3, FL4, OperationCode as C, OperandType as T

from .ophelp import boolean, build, f16, f32, feature_level, i32, i32t, q8, run1, s8, tensor

W = [1, 10, 100]


def _explicit(x, w, b, pads=(0, 0, 0, 0), strides=(2, 1), fuse=0, nchw=False):
    return [x, w, b] + [i32(p) for p in pads] + [i32(s) for s in strides] + [i32(fuse),
                                                                           boolean(nchw)]


def test_float_explicit_padding():
    ins = _explicit(f32([1, 1, 2, 1]), f32([1, 1, 3, 1], W), f32([1], [0.5]))
    out = run1(C.TRANSPOSE_CONV_2D, ins, [f32([1, 1, 5, 1])], [1, 2])
    assert out.ravel().tolist() == [1.5, 10.5, 102.5, 20.5, 200.5]
    ins = _explicit(f32([1, 1, 2, 1]), f32([1, 1, 3, 1], W), f32([1], [0.5]), pads=(1, 1, 0, 0))
    out = run1(C.TRANSPOSE_CONV_2D, ins, [f32([1, 1, 3, 1])], [1, 2])
    assert out.ravel().tolist() == [10.5, 102.5, 20.5]


def test_implicit_same_fits_the_output_shape_and_nchw():
    x = np.arange(4, dtype=np.float32).reshape(1, 2, 2, 1)
    w = np.ones((1, 3, 3, 1), np.float32)
    ins = [f32([1, 2, 2, 1]), f32([1, 3, 3, 1], w), f32([1], [0]), i32t([4], [1, 4, 4, 1]),
           i32(1), i32(2), i32(2), i32(0), boolean(False)]
    nhwc = run1(C.TRANSPOSE_CONV_2D, ins, [f32([1, 4, 4, 1])], x)
    assert nhwc.shape == (1, 4, 4, 1)
    ins_nchw = [f32([1, 1, 2, 2])] + ins[1:3] + [i32t([4], [1, 1, 4, 4])] + ins[4:8] + \
        [boolean(True)]
    nchw = run1(C.TRANSPOSE_CONV_2D, ins_nchw, [f32([1, 1, 4, 4])], x.transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(nchw, nhwc.transpose(0, 3, 1, 2))


def test_quant8_per_tensor_and_per_channel():
    ins = _explicit(q8([1, 1, 2, 1], 0.5, 0), q8([1, 1, 3, 1], 0.5, 0, [2, 4, 6]),
                    i32t([1], [4], scale=0.25))
    out = run1(C.TRANSPOSE_CONV_2D, ins, [q8([1, 1, 5, 1], 1.0, 0)], [2, 4])
    # real: x = 1, 2; w = 1, 2, 3; bias 1 -> [1+1, 2+1, 3+2+1, 4+1, 6+1]
    assert out.ravel().tolist() == [2, 3, 6, 5, 7]
    pc = tensor(T.TENSOR_QUANT8_SYMM_PER_CHANNEL, [2, 1, 1, 1], value=[2, 3],
                channel_quant=(0, [0.5, 1.0]))
    ins = _explicit(s8([1, 1, 1, 1], 0.5, 0), pc, i32t([2], [0, 0]), strides=(1, 1))
    out = run1(C.TRANSPOSE_CONV_2D, ins, [s8([1, 1, 1, 2], 0.25, 0)], [4])
    assert out.ravel().tolist() == [8, 24]           # 2 * 1 = 2, 2 * 3 = 6 at scale 0.25


def test_quant8_bias_scale_mismatch_fails():
    ins = _explicit(q8([1, 1, 1, 1], 0.5, 0), q8([1, 1, 1, 1], 0.5, 0, [2]),
                    i32t([1], [0], scale=0.3), strides=(1, 1))
    with pytest.raises(OpFailedError):
        run1(C.TRANSPOSE_CONV_2D, ins, [q8([1, 1, 1, 1], 1.0, 0)], [1])


def test_feature_levels_and_rejections():
    def fl(x, w, b, out):
        return feature_level(C.TRANSPOSE_CONV_2D, _explicit(x, w, b), [out])
    assert fl(f32([1, 1, 1, 1]), f32([1, 1, 1, 1]), f32([1]), f32([1, 1, 1, 1])) == FL3
    assert fl(f16([1, 1, 1, 1]), f16([1, 1, 1, 1]), f16([1]), f16([1, 1, 1, 1])) == FL3
    assert fl(q8([1, 1, 1, 1], 1, 0), q8([1, 1, 1, 1], 1, 0), i32t([1]),
              q8([1, 1, 1, 1], 1, 0)) == FL3
    assert fl(s8([1, 1, 1, 1], 1, 0), s8([1, 1, 1, 1], 1, 0), i32t([1]),
              s8([1, 1, 1, 1], 1, 0)) == FL4
    with pytest.raises(OperationValidationError):
        build(C.TRANSPOSE_CONV_2D, _explicit(f32([1, 1, 1, 1]), f32([1, 1, 1, 1]), i32t([1])),
              [f32([1, 1, 1, 1])])
    bad_pc = tensor(T.TENSOR_QUANT8_SYMM_PER_CHANNEL, [1, 1, 1, 2], value=[1, 1],
                    channel_quant=(3, [0.5, 1.0]))
    with pytest.raises(OperationValidationError):
        build(C.TRANSPOSE_CONV_2D, _explicit(q8([1, 1, 1, 2], 1, 0), bad_pc, i32t([1])),
              [q8([1, 1, 1, 1], 1, 0)])
