"""LOCAL_RESPONSE_NORMALIZATION, INSTANCE_NORMALIZATION and GROUPED_CONV_2D on nnapi-reference:
hand-computed values, AOSP's documented examples (runtime/test/specs), feature levels,
validation and run-time failures, and the kernels against their numpy references."""
import numpy as np
import pytest

from nnsim.errors import OperationValidationError, OpFailedError
from nnsim.kernels.grouped_conv import grouped_conv_2d
from nnsim.kernels.instance_norm import instance_normalization
from nnsim.kernels.local_response_norm import local_response_normalization
from nnsim.kernels.reference import grouped_conv as ref_grouped
from nnsim.kernels.reference import instance_norm as ref_instance
from nnsim.kernels.reference import local_response_norm as ref_lrn
from nnsim.types import FL1, FL3, FL4, OperandType as T, OperationCode as C

from .ophelp import (boolean, build, f16, f32, feature_level, fl16, fl32, i32, i32t, q8, run1,
                     s8, tensor)

LRN, INORM, GCONV = (C.LOCAL_RESPONSE_NORMALIZATION, C.INSTANCE_NORMALIZATION,
                     C.GROUPED_CONV_2D)


# -- LOCAL_RESPONSE_NORMALIZATION ---------------------------------------------------------------
def lrn(dims, radius, bias, alpha, beta, axis=None, half=False):
    t, s = (f16, fl16) if half else (f32, fl32)
    ins = [t(dims), i32(radius), s(bias), s(alpha), s(beta)]
    return ins + ([i32(axis)] if axis is not None else []), [t(dims)]


def test_lrn_spec_example():
    # V1_0/local_response_norm_float_1: sum of squares 4, sqrt(9 + 4 * 4) = 5
    x = [-1.1, .6, .7, 1.2, -.7, .1]
    out = run1(LRN, *lrn([1, 1, 1, 6], 20, 9.0, 4.0, 0.5), x)
    np.testing.assert_allclose(out.ravel(), np.float32(x) / 5, rtol=1e-6)


@pytest.mark.parametrize("dims,axis", [([4], None), ([4], 0), ([4, 1], 0), ([1, 4, 1], -2),
                                       ([1, 1, 1, 4], 3)])
@pytest.mark.parametrize("half", [False, True])
def test_lrn_window_is_radius_each_side(dims, axis, half):
    # radius 1, bias 0, alpha 1, beta 1: x[i] / (x[i-1]**2 + x[i]**2 + x[i+1]**2)
    out = run1(LRN, *lrn(dims, 1, 0.0, 1.0, 1.0, axis, half), [1, 2, 3, 4])
    want = [1 / 5, 2 / 14, 3 / 29, 4 / 25]
    assert out.dtype == (np.float16 if half else np.float32)
    np.testing.assert_allclose(out.ravel(), want, rtol=1e-3 if half else 1e-6)


@pytest.mark.parametrize("dims,axis", [([2], None), ([2, 1], 0), ([1, 2], -1)])
def test_lrn_general_beta(dims, axis):
    out = run1(LRN, *lrn(dims, 1, 1.0, 1.0, 0.75, axis), [3, 4])
    np.testing.assert_allclose(out.ravel(), np.array([3, 4]) * 26.0 ** -0.75, rtol=1e-6)


@pytest.mark.parametrize("dims", [[7], [3, 6], [2, 3, 5], [2, 3, 4, 5]])
@pytest.mark.parametrize("radius,beta", [(0, 0.75), (2, 0.5), (1, 1.0), (9, 0.6)])
def test_lrn_every_rank_and_axis(dims, radius, beta):
    x = np.random.default_rng(len(dims)).standard_normal(dims).astype(np.float32)
    for axis in range(-len(dims), len(dims)):
        out = run1(LRN, *lrn(dims, radius, 1.25, 0.5, beta, axis), x)
        v = np.moveaxis(x.astype(np.float64), axis, -1)
        want = np.empty_like(v)
        for i in range(v.shape[-1]):
            window = v[..., max(0, i - radius):i + radius + 1]
            want[..., i] = v[..., i] * (1.25 + 0.5 * (window ** 2).sum(-1)) ** -beta
        np.testing.assert_allclose(out, np.moveaxis(want, -1, axis), rtol=2e-6, atol=1e-7)


def test_lrn_feature_levels():
    assert feature_level(LRN, *lrn([1, 1, 1, 6], 1, 1.0, 1.0, 0.5)) == FL1
    assert feature_level(LRN, *lrn([1, 1, 1, 6], 1, 1.0, 1.0, 0.5, axis=-1)) == FL3
    assert feature_level(LRN, *lrn([6], 1, 1.0, 1.0, 0.5)) == FL3
    assert feature_level(LRN, *lrn([1, 1, 1, 6], 1, 1.0, 1.0, 0.5, half=True)) == FL3


def test_lrn_validation_rejects():
    with pytest.raises(OperationValidationError):   # no quantized form
        build(LRN, [q8([1, 4], 0.5, 0), i32(1), fl32(1), fl32(1), fl32(1)], [q8([1, 4], 0.5, 0)])
    with pytest.raises(OperationValidationError):   # rank 5
        build(LRN, *lrn([1, 1, 1, 1, 4], 1, 1.0, 1.0, 0.5))
    with pytest.raises(OperationValidationError):   # float32 scalars for a float16 tensor
        build(LRN, [f16([4]), i32(1), fl32(1), fl32(1), fl32(1)], [f16([4])])


def test_lrn_run_time_checks():
    with pytest.raises(OpFailedError):
        run1(LRN, *lrn([4], -1, 1.0, 1.0, 0.5), [1, 2, 3, 4])
    with pytest.raises(OpFailedError):
        run1(LRN, *lrn([4], 1, 1.0, 1.0, 0.5, axis=1), [1, 2, 3, 4])


@pytest.mark.parametrize("variant,axis", [("nnapi", -1), ("nnapi", 1), ("tflite", -1)])
@pytest.mark.parametrize("radius,beta", [(0, 0.75), (1, 1.0), (3, 0.5), (40, 0.75)])
def test_lrn_kernel_against_reference(variant, axis, radius, beta):
    x = np.random.default_rng(radius).standard_normal((3, 4, 5, 11)).astype(np.float32) * 2
    got = local_response_normalization(x, radius, 1.5, 0.2, beta, axis, variant=variant)
    want = ref_lrn.local_response_normalization(x, radius, 1.5, 0.2, beta, axis,
                                                variant=variant)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


# -- INSTANCE_NORMALIZATION ---------------------------------------------------------------------
def inorm(dims, gamma, beta, epsilon, nchw=False, half=False):
    t, s = (f16, fl16) if half else (f32, fl32)
    return [t(dims), s(gamma), s(beta), s(epsilon), boolean(nchw)], [t(dims)]


@pytest.mark.parametrize("nchw", [False, True])
def test_instance_norm_hand_computed(nchw):
    # channel 0 = [1, 2, 3, 4]: mean 2.5, variance 1.25; channel 1 constant: (x - mean) = 0
    plane0, plane1 = np.array([1, 2, 3, 4.]), np.array([7, 7, 7, 7.])
    x = np.stack([plane0, plane1]).reshape(1, 2, 2, 2) if nchw else \
        np.stack([plane0, plane1], -1).reshape(1, 2, 2, 2)
    out = run1(INORM, *inorm([1, 2, 2, 2], 2.0, 0.5, 1e-4, nchw), x)
    want0 = (plane0 - 2.5) * 2 / np.sqrt(1.25 + 1e-4) + 0.5
    got0, got1 = (out[0, 0], out[0, 1]) if nchw else (out[0, ..., 0], out[0, ..., 1])
    np.testing.assert_allclose(got0.ravel(), want0, rtol=1e-6)
    np.testing.assert_allclose(got1.ravel(), [0.5] * 4)


def test_instance_norm_float16_computes_in_half():
    # V1_2/instance_normalization "large": sqrt(4 + 1e-4) is 2.000025 in float32 but 2.0 in
    # half, so float16 gives exactly +-1 where float32 gives +-0.9999875
    x = [198, 198, 202, 202]
    out = run1(INORM, *inorm([1, 2, 2, 1], 1.0, 0.0, 1e-4), x)
    np.testing.assert_allclose(out.ravel(), [-0.9999875, -0.9999875, 0.9999875, 0.9999875],
                               rtol=1e-6)
    out = run1(INORM, *inorm([1, 2, 2, 1], 1.0, 0.0, 1e-4, half=True), x)
    assert out.dtype == np.float16 and out.ravel().tolist() == [-1, -1, 1, 1]


def test_instance_norm_feature_level_and_checks():
    assert feature_level(INORM, *inorm([1, 2, 2, 1], 1.0, 0.0, 1e-4)) == FL3
    assert feature_level(INORM, *inorm([1, 2, 2, 1], 1.0, 0.0, 1e-4, half=True)) == FL3
    with pytest.raises(OperationValidationError):
        build(INORM, [q8([1, 2, 2, 1], 0.5, 0), fl32(1), fl32(0), fl32(1e-4), boolean(False)],
              [q8([1, 2, 2, 1], 0.5, 0)])
    with pytest.raises(OperationValidationError):   # layout must be BOOL
        build(INORM, [f32([1, 2, 2, 1]), fl32(1), fl32(0), fl32(1e-4), i32(0)],
              [f32([1, 2, 2, 1])])
    with pytest.raises(OpFailedError):
        run1(INORM, *inorm([2, 2, 1], 1.0, 0.0, 1e-4), [1, 2, 3, 4])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 9, 7, 3), (3, 1, 1, 2)])
def test_instance_norm_kernel_equals_reference(dtype, shape):
    x = (np.random.default_rng(sum(shape)).standard_normal(shape) * 3 + 1).astype(dtype)
    got = instance_normalization(x, 1.5, -0.25, 1e-3)
    want = ref_instance.instance_normalization(x, 1.5, -0.25, 1e-3)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


# -- GROUPED_CONV_2D ----------------------------------------------------------------------------
# V1_2/grouped_conv2d TEST 1 (input NHWC [1, 3, 3, 2], 2 groups of one channel, 2x2 filters)
X1 = [1, 2, 3, 4, 5, 6, 6, 5, 4, 3, 2, 1, 2, 3, 3, 3, 3, 3]
W1 = [1, 2, 2, 1, 4, 3, 2, 1]
B1 = [10, -33.5]
OUT1 = [33, -0.5, 33, 7.5, 31, 4.5, 27, -9.5]


def gconv(x, w, b, out, act=0, nchw=False, implicit=None, groups=2, stride=1):
    pads = [i32(implicit)] if implicit is not None else [i32(0)] * 4
    return [x, w, b, *pads, i32(stride), i32(stride), i32(groups), i32(act),
            boolean(nchw)], [out]


def _nchw(values, shape):
    return np.asarray(values).reshape(shape).transpose(0, 3, 1, 2).ravel()


@pytest.mark.parametrize("act,want", [(0, OUT1), (1, [33, 0, 33, 7.5, 31, 4.5, 27, 0]),
                                      (2, [1, -0.5, 1, 1, 1, 1, 1, -1]),
                                      (3, [6, 0, 6, 6, 6, 4.5, 6, 0])])
def test_grouped_conv_float_spec_example(act, want):
    ins, outs = gconv(f32([1, 3, 3, 2]), f32([2, 2, 2, 1], W1), f32([2], B1),
                      f32([1, 2, 2, 2]), act)
    np.testing.assert_allclose(run1(GCONV, ins, outs, X1).ravel(), want)


def test_grouped_conv_nchw_implicit_and_float16():
    ins, outs = gconv(f32([1, 2, 3, 3]), f32([2, 2, 2, 1], W1), f32([2], B1),
                      f32([1, 2, 2, 2]), nchw=True)
    out = run1(GCONV, ins, outs, _nchw(X1, (1, 3, 3, 2)))
    np.testing.assert_allclose(out.ravel(), _nchw(OUT1, (1, 2, 2, 2)))
    ins, outs = gconv(f32([1, 3, 3, 2]), f32([2, 2, 2, 1], W1), f32([2], B1),
                      f32([1, 2, 2, 2]), implicit=2)           # PADDING_VALID
    np.testing.assert_allclose(run1(GCONV, ins, outs, X1).ravel(), OUT1)
    ins, outs = gconv(f16([1, 3, 3, 2]), f16([2, 2, 2, 1], W1), f16([2], B1),
                      f16([1, 2, 2, 2]))
    out = run1(GCONV, ins, outs, X1)
    assert out.dtype == np.float16 and out.ravel().tolist() == OUT1


def test_grouped_conv_three_groups_same_padding():
    # V1_2/grouped_conv2d TEST 3 (1x1 filters, 3 groups of 3 channels, PADDING_SAME)
    x = [1, 2, 3, 4, 55, 4, 3, 2, 1, 5, 4, 3, 2, 11, 2, 3, 4, 5,
         2, 3, 2, 3, 22, 3, 2, 3, 2, 1, 0, 2, 1, 33, 1, 2, 0, 1]
    w = [1, 2, 3, 2, 1, 0, 2, 3, 3, 6, 6, 6, 9, 8, 5, 2, 1, 1]
    ins, outs = gconv(f32([1, 2, 2, 9]), f32([6, 1, 1, 3], w),
                      f32([6], [10, -20, 30, -40, 50, -60]), f32([1, 2, 2, 6]), implicit=1,
                      groups=3)
    want = [24, -16, 215, 338, 98, -51, 32, -6, 73, 50, 134, -45,
            24, -13, 111, 128, 102, -51, 17, -18, 134, 170, 73, -55]
    np.testing.assert_allclose(run1(GCONV, ins, outs, x).ravel(), want)


def _quant_case(kind):
    """TEST 1 quantized (scales make every result exact: out = real / out_scale + zp)."""
    if kind == "quant8":
        x, out = q8([1, 3, 3, 2], 0.25, 100), q8([1, 2, 2, 2], 0.5, 80)
        w = q8([2, 2, 2, 1], 0.25, 128, [v * 4 + 128 for v in W1])
    elif kind == "signed":
        x, out = s8([1, 3, 3, 2], 0.25, -28), s8([1, 2, 2, 2], 0.5, -48)
        w = s8([2, 2, 2, 1], 0.25, 0, [v * 4 for v in W1])
    else:
        signed = kind == "signed_per_channel"
        x = (s8 if signed else q8)([1, 3, 3, 2], 0.25, -28 if signed else 100)
        out = (s8 if signed else q8)([1, 2, 2, 2], 0.5, -48 if signed else 80)
        w = tensor(T.TENSOR_QUANT8_SYMM_PER_CHANNEL, [2, 2, 2, 1], value=[4, 8, 8, 4, 8, 6, 4, 2],
                   channel_quant=(0, [0.25, 0.5]))
        return gconv(x, w, i32t([2], [160, -268]), out), x.zp
    return gconv(x, w, i32t([2], [160, -536], scale=0.0625), out), x.zp


@pytest.mark.parametrize("kind,want", [
    ("quant8", [146, 79, 146, 95, 142, 89, 134, 61]),
    ("per_channel", [146, 79, 146, 95, 142, 89, 134, 61]),
    ("signed", [18, -49, 18, -33, 14, -39, 6, -67]),
    ("signed_per_channel", [18, -49, 18, -33, 14, -39, 6, -67])])
def test_grouped_conv_quantized_spec_example(kind, want):
    (ins, outs), zp = _quant_case(kind)
    out = run1(GCONV, ins, outs, np.array(X1) * 4 + zp)
    assert out.ravel().tolist() == want


def test_grouped_conv_per_channel_multiplier_above_one():
    (ins, outs), zp = _quant_case("per_channel")
    outs = [q8([1, 2, 2, 2], 0.1, 80)]       # real / 0.1 + 80, clamped to [0, 255]
    out = run1(GCONV, ins, outs, np.array(X1) * 4 + zp)
    assert out.ravel().tolist() == [255, 75, 255, 155, 255, 125, 255, 0]


@pytest.mark.parametrize("per_channel", [False, True])
def test_grouped_conv_requantizes_with_the_float_product(per_channel):
    """AOSP computes every multiplier as double(float32(in_scale * w_scale)) / out_scale.
    With these scales the accumulator 286 gives SRDHM(286, M) = 174.4999990 with it (-> 174,
    halved -> 87) but 174.5000033 with CONV_2D's per-channel double product (-> 175 -> 88)."""
    a, b, o = np.float32(0.018656323), np.float32(0.043304123), np.float32(0.002648231)
    if per_channel:
        w = tensor(T.TENSOR_QUANT8_SYMM_PER_CHANNEL, [2, 1, 1, 1], value=[1, 1],
                   channel_quant=(0, [float(b), float(b)]))
        bias = i32t([2], [286, 286])
    else:
        w = s8([2, 1, 1, 1], float(b), 0, [1, 1])
        bias = i32t([2], [286, 286], scale=float(np.float32(a * b)))
    ins, outs = gconv(s8([1, 1, 1, 2], float(a), 5), w, bias, s8([1, 1, 1, 2], float(o), 0))
    assert run1(GCONV, ins, outs, [5, 5]).ravel().tolist() == [87, 87]
    conv_rule = grouped_conv_2d(np.full((1, 1, 1, 2), 5, np.int8), np.ones((2, 1, 1, 1), np.int8),
                                np.array([286, 286], np.int32), groups=2, stride_h=1,
                                stride_w=1, pad_top=0, pad_bottom=0, pad_left=0, pad_right=0,
                                in_scale=a, in_zp=5, w_scales=[b, b], out_scale=o, out_zp=0)
    assert conv_rule.ravel().tolist() == [88, 88]


def test_grouped_conv_bias_scale_is_checked_at_execution():
    (ins, outs), zp = _quant_case("quant8")
    ins[2] = i32t([2], [160, -536], scale=0.07)
    model = build(GCONV, ins, outs)      # valid model: the check is GroupedConv2D's execute
    assert model is not None
    with pytest.raises(OpFailedError, match="bias scale"):
        run1(GCONV, ins, outs, np.array(X1) * 4 + zp)


def test_grouped_conv_feature_levels():
    assert feature_level(GCONV, *gconv(f32([1, 3, 3, 2]), f32([2, 2, 2, 1], W1), f32([2], B1),
                                       f32([1, 2, 2, 2]))) == FL3
    assert feature_level(GCONV, *gconv(f16([1, 3, 3, 2]), f16([2, 2, 2, 1], W1), f16([2], B1),
                                       f16([1, 2, 2, 2]))) == FL3
    for kind, level in [("quant8", FL3), ("per_channel", FL3), ("signed", FL4),
                        ("signed_per_channel", FL4)]:
        assert feature_level(GCONV, *_quant_case(kind)[0]) == level


def test_grouped_conv_validation_rejects():
    float_args = (f32([1, 3, 3, 2]), f32([2, 2, 2, 1], W1), f32([2], B1), f32([1, 2, 2, 2]))
    ins, outs = gconv(*float_args)
    with pytest.raises(OperationValidationError):       # 11 inputs
        build(GCONV, ins[:-1], outs)
    with pytest.raises(OperationValidationError):       # layout must be BOOL
        build(GCONV, ins[:-1] + [i32(0)], outs)
    with pytest.raises(OperationValidationError):       # float bias for a float16 input
        build(GCONV, *gconv(f16([1, 3, 3, 2]), f16([2, 2, 2, 1], W1), f32([2], B1),
                            f16([1, 2, 2, 2])))
    with pytest.raises(OperationValidationError):       # signed filter for a uint8 input
        build(GCONV, *gconv(q8([1, 3, 3, 2], 0.25, 100), s8([2, 2, 2, 1], 0.25, 0, W1),
                            i32t([2], [0, 0], scale=0.0625), q8([1, 2, 2, 2], 0.5, 80)))
    w = tensor(T.TENSOR_QUANT8_SYMM_PER_CHANNEL, [2, 2, 2, 1], value=W1,
               channel_quant=(3, [0.25]))
    with pytest.raises(OperationValidationError):       # per-channel on a dimension other than 0
        build(GCONV, *gconv(q8([1, 3, 3, 2], 0.25, 100), w, i32t([2], [0, 0]),
                            q8([1, 2, 2, 2], 0.5, 80)))


@pytest.mark.parametrize("groups,filter_dims", [(3, [2, 2, 2, 1]), (2, [3, 2, 2, 1]),
                                                (0, [2, 2, 2, 1])])
def test_grouped_conv_groups_must_fit(groups, filter_dims):
    n = filter_dims[0]
    ins, outs = gconv(f32([1, 3, 3, 2]), f32(filter_dims, [1] * (4 * n)), f32([n], [0] * n),
                      f32([1, 2, 2, n]), groups=groups)
    with pytest.raises(OpFailedError):
        run1(GCONV, ins, outs, X1)


@pytest.mark.parametrize("dtype,per_channel", [(np.uint8, False), (np.int8, False),
                                               (np.int8, True), (np.float32, False)])
@pytest.mark.parametrize("nchw", [False, True])
def test_grouped_conv_random_against_reference(dtype, per_channel, nchw):
    rng = np.random.default_rng(11)
    groups, cg, og = 3, 2, 2
    cout = groups * og
    quant = dtype != np.float32
    if dtype == np.float32:
        xv = rng.standard_normal((2, 7, 6, groups * cg)).astype(np.float32)
        wv = rng.standard_normal((cout, 3, 2, cg)).astype(np.float32)
        bv = rng.standard_normal(cout).astype(np.float32)
        x, w, b, out = f32(xv.shape), f32(wv.shape, wv), f32([cout], bv), f32([2, 3, 6, cout])
        q = {}
    else:
        info = np.iinfo(dtype)
        xv = rng.integers(info.min, info.max + 1, (2, 7, 6, groups * cg)).astype(dtype)
        make = q8 if dtype == np.uint8 else s8
        in_zp, w_zp = (120, 131) if dtype == np.uint8 else (-7, 0 if per_channel else 3)
        scales = rng.uniform(0.005, 0.02, cout).astype(np.float32)
        if per_channel:
            wv = rng.integers(-127, 128, (cout, 3, 2, cg)).astype(np.int8)
            w = tensor(T.TENSOR_QUANT8_SYMM_PER_CHANNEL, wv.shape, value=wv,
                       channel_quant=(0, scales))
            w_scales, bias_scale = scales, 0.0
        else:
            wv = rng.integers(info.min, info.max + 1, (cout, 3, 2, cg)).astype(dtype)
            w = make(wv.shape, 0.013, w_zp, wv)
            w_scales, bias_scale = [0.013], float(np.float32(0.05) * np.float32(0.013))
        bv = rng.integers(-5000, 5000, cout).astype(np.int32)
        x, b = make(xv.shape, 0.05, in_zp), i32t([cout], bv, scale=bias_scale)
        out = make([2, 3, 6, cout], 0.17, 3)
        q = dict(in_scale=0.05, in_zp=in_zp, w_scales=w_scales, w_zp=w_zp, out_scale=0.17,
                 out_zp=3)
    if nchw:
        x = tensor(x.type, [2, groups * cg, 7, 6], x.scale, x.zp)
        out = tensor(out.type, [2, cout, 3, 6], out.scale, out.zp)
    # explicit padding left 1, right 0, top 0, bottom 1; strides 1 (w) and 2 (h); relu
    ins = [x, w, b, i32(1), i32(0), i32(0), i32(1), i32(1), i32(2), i32(groups), i32(1),
           boolean(nchw)]
    got = run1(GCONV, ins, [out], xv.transpose(0, 3, 1, 2) if nchw else xv)
    want = ref_grouped.grouped_conv_2d(xv, wv, bv, groups=groups, stride_h=2, stride_w=1,
                                       pad_top=0, pad_bottom=1, pad_left=1, pad_right=0, fuse=1,
                                       multipliers="aosp", **q)
    if nchw:
        want = want.transpose(0, 3, 1, 2)
    if quant:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
