"""CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED: hand cases, numba == reference, LiteRT."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .kernel_litert import T, run_op
from .kernel_testutil import (assert_float_sums_close, assert_same, random_q,
                              requires_litert, tflite_padding)
from nnsim.kernels import conv, depthwise, fully_connected
from nnsim.kernels.reference import conv as ref_conv
from nnsim.kernels.reference import depthwise as ref_depthwise
from nnsim.kernels.reference import fully_connected as ref_fc

NO_PAD = dict(pad_top=0, pad_bottom=0, pad_left=0, pad_right=0)


# --- hand-computed cases (NNAPI CTS examples, nnapi-runtime.md 7.4) ----------------------------

def test_conv_quant8_example():
    x = np.array([8, 8, 8, 8, 4, 8, 8, 8, 8], np.uint8).reshape(1, 3, 3, 1)
    w = np.full((1, 2, 2, 1), 2, np.uint8)
    args = dict(stride_h=1, stride_w=1, **NO_PAD, in_scale=0.5, in_zp=0, w_scales=[0.5],
                out_scale=1.0, out_zp=0)
    bias = np.array([4], np.int32)
    for fn in (conv.conv_2d, ref_conv.conv_2d):
        out = fn(x, w, bias, **args)
        assert out.dtype == np.uint8
        assert out.ravel().tolist() == [15, 15, 15, 15]


def test_conv_per_channel_with_uint8_input():
    x = np.full((1, 3, 1, 2), 138, np.uint8)
    w = np.array([1, 2, 1, 2, 1, 2], np.int8).reshape(3, 1, 1, 2)
    args = dict(stride_h=1, stride_w=1, **NO_PAD, in_scale=0.5, in_zp=128,
                w_scales=[0.5, 0.75, 1.0], out_scale=1.0, out_zp=128)
    bias = np.array([4, 4, 4], np.int32)
    for fn in (conv.conv_2d, ref_conv.conv_2d):
        out = fn(x, w, bias, **args)
        assert out.ravel().tolist() == [137, 141, 145] * 3


def test_conv_float_example():
    x = np.arange(1, 10, dtype=np.float32).reshape(1, 3, 3, 1)
    w = np.array([1, 0, 0, -1], np.float32).reshape(1, 2, 2, 1)
    out = conv.conv_2d(x, w, np.array([0.5], np.float32), stride_h=1, stride_w=1, **NO_PAD)
    assert out.ravel().tolist() == [-3.5] * 4
    relu = conv.conv_2d(x, w, np.array([0.5], np.float32), stride_h=1, stride_w=1, **NO_PAD,
                        fuse=1)
    assert relu.ravel().tolist() == [0.0] * 4


def test_conv_skips_padding_taps():
    # x = zero point everywhere: any output is bias-only, padding must not add -zp terms
    x = np.full((1, 2, 2, 1), 100, np.uint8)
    w = np.full((1, 3, 3, 1), 7, np.uint8)
    args = dict(stride_h=1, stride_w=1, pad_top=1, pad_bottom=1, pad_left=1, pad_right=1,
                in_scale=1.0, in_zp=100, w_scales=[1.0], w_zp=3, out_scale=1.0, out_zp=10)
    out = conv.conv_2d(x, w, np.array([5], np.int32), **args)
    assert out.ravel().tolist() == [15] * 4


def test_depthwise_quant8_example():
    x = np.array([4, 16, 4, 32, 4, 64, 4, 128], np.uint8).reshape(1, 2, 2, 2)
    w = np.array([2, 4, 2, 0, 2, 2, 2, 0], np.uint8).reshape(1, 2, 2, 2)
    args = dict(depth_multiplier=1, stride_h=1, stride_w=1, **NO_PAD, in_scale=0.5,
                w_scales=[0.5], out_scale=1.0)
    for fn in (depthwise.depthwise_conv_2d, ref_depthwise.depthwise_conv_2d):
        assert fn(x, w, np.zeros(2, np.int32), **args).ravel().tolist() == [8, 48]


def test_fully_connected_quant8_example():
    # in real 1..4, weights real [[1, 1, 1, 1], [1, -1, 1, -1]], bias real [0.5, 0]
    x = np.array([[2, 4, 6, 8]], np.uint8)            # scale 0.5
    w = np.array([[130, 130, 130, 130], [130, 126, 130, 126]], np.uint8)  # scale 0.5, zp 128
    bias = np.array([2, 0], np.int32)                  # scale 0.25
    args = dict(in_scale=0.5, in_zp=0, w_scales=[0.5], w_zp=128, out_scale=0.5, out_zp=10)
    for fn in (fully_connected.fully_connected, ref_fc.fully_connected):
        assert fn(x, w, bias, **args).ravel().tolist() == [10 + 21, 10 - 4]


def test_float16_is_computed_in_float32():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 4, 4, 3)).astype(np.float16)
    w = rng.standard_normal((2, 3, 3, 3)).astype(np.float16)
    b = rng.standard_normal(2).astype(np.float16)
    out = conv.conv_2d(x, w, b, stride_h=1, stride_w=1, **NO_PAD)
    assert out.dtype == np.float16
    expected = conv.conv_2d(x.astype(np.float32), w.astype(np.float32), b.astype(np.float32),
                            stride_h=1, stride_w=1, **NO_PAD).astype(np.float16)
    assert np.array_equal(out, expected)


def test_packed_filter_matches_unpacked():
    rng = np.random.default_rng(1)
    x, w = random_q(rng, np.uint8, (1, 5, 5, 3)), random_q(rng, np.uint8, (4, 3, 3, 3))
    args = dict(stride_h=1, stride_w=1, **NO_PAD, in_scale=0.1, in_zp=3, w_scales=[0.02],
                w_zp=120, out_scale=0.5, out_zp=7)
    packed = conv.pack_filter(w, 120)
    assert_same(conv.conv_2d(x, w, None, packed_filter=packed, **args),
                conv.conv_2d(x, w, None, **args))


@pytest.mark.parametrize(
    "call",
    [
        lambda: conv.conv_2d(np.zeros((1, 3, 3, 2), np.float32), np.zeros((1, 2, 2, 3), np.float32),
                             None, stride_h=1, stride_w=1, **NO_PAD),
        lambda: conv.conv_2d(np.zeros((1, 2, 2, 1), np.float32), np.zeros((1, 3, 3, 1), np.float32),
                             None, stride_h=1, stride_w=1, **NO_PAD),
        lambda: conv.conv_2d(np.zeros((1, 3, 3, 1), np.float32), np.zeros((1, 2, 2, 1), np.float32),
                             None, stride_h=0, stride_w=1, **NO_PAD),
        lambda: conv.conv_2d(np.zeros((1, 3, 3, 1), np.uint8), np.zeros((2, 2, 2, 1), np.uint8),
                             None, stride_h=1, stride_w=1, **NO_PAD, in_scale=1.0,
                             w_scales=[1.0, 1.0, 1.0], out_scale=1.0),
        lambda: depthwise.depthwise_conv_2d(np.zeros((1, 3, 3, 2), np.float32),
                                            np.zeros((1, 2, 2, 3), np.float32), None,
                                            depth_multiplier=1, stride_h=1, stride_w=1, **NO_PAD),
        lambda: fully_connected.fully_connected(np.zeros((2, 3), np.float32),
                                                np.zeros((4, 5), np.float32), None),
    ],
)
def test_bad_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


# --- numba core == numpy reference, hypothesis-chosen geometry and quantization ----------------

@st.composite
def conv_cases(draw, depthwise_case=False):
    dtype = draw(st.sampled_from([np.uint8, np.int8, np.float32]))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    pads = [draw(st.integers(0, 2)) for _ in range(4)]
    h = draw(st.integers(max(1, (kh - 1) * dh + 1 - pads[0] - pads[1]), 7))
    w = draw(st.integers(max(1, (kw - 1) * dw + 1 - pads[2] - pads[3]), 7))
    cin = draw(st.integers(1, 4))
    mult = draw(st.integers(1, 3)) if depthwise_case else 1
    cout = cin * mult if depthwise_case else draw(st.integers(1, 5))
    per_channel = dtype == np.int8 and draw(st.booleans())
    quant = dict(
        in_scale=draw(st.floats(0.001, 0.2)),
        w_scales=[draw(st.floats(0.001, 0.1)) for _ in range(cout if per_channel else 1)],
        out_scale=draw(st.floats(0.01, 2.0)),
    )
    if dtype != np.float32:
        info = np.iinfo(dtype)
        quant.update(in_zp=draw(st.integers(info.min, info.max)),
                     w_zp=draw(st.integers(0, 255)) if dtype == np.uint8 else 0,
                     out_zp=draw(st.integers(info.min, info.max)))
    geometry = dict(stride_h=sh, stride_w=sw, pad_top=pads[0], pad_bottom=pads[1],
                    pad_left=pads[2], pad_right=pads[3], dilation_h=dh, dilation_w=dw,
                    fuse=draw(st.integers(0, 3)))
    return dtype, (draw(st.integers(1, 2)), h, w, cin), (kh, kw), cout, mult, geometry, quant, \
        draw(st.integers(0, 2**32 - 1))


def _arrays(dtype, x_shape, w_shape, cout, seed):
    rng = np.random.default_rng(seed)
    if dtype == np.float32:
        return (rng.standard_normal(x_shape).astype(np.float32),
                rng.standard_normal(w_shape).astype(np.float32),
                rng.standard_normal(cout).astype(np.float32))
    w = random_q(rng, dtype, w_shape)
    if dtype == np.int8:
        w[w == -128] = -127  # symmetric int8 filters
    bias = rng.integers(-20000, 20000, cout).astype(np.int32)
    return random_q(rng, dtype, x_shape), w, bias


@settings(max_examples=40, deadline=None)
@given(conv_cases())
def test_conv_numba_matches_reference(case):
    dtype, x_shape, (kh, kw), cout, _, geometry, quant, seed = case
    x, w, bias = _arrays(dtype, x_shape, (cout, kh, kw, x_shape[3]), cout, seed)
    args = geometry if dtype == np.float32 else dict(geometry, **quant)
    assert_same(conv.conv_2d(x, w, bias, **args), ref_conv.conv_2d(x, w, bias, **args))


@settings(max_examples=40, deadline=None)
@given(conv_cases(depthwise_case=True))
def test_depthwise_numba_matches_reference(case):
    dtype, x_shape, (kh, kw), cout, mult, geometry, quant, seed = case
    x, w, bias = _arrays(dtype, x_shape, (1, kh, kw, cout), cout, seed)
    args = dict(geometry, depth_multiplier=mult)
    if dtype != np.float32:
        args.update(quant)
    assert_same(depthwise.depthwise_conv_2d(x, w, bias, **args),
                ref_depthwise.depthwise_conv_2d(x, w, bias, **args))


def _check_float_3x3(shape, pads, stride, monkeypatch, ring_rows):
    """A float 3x3 depthwise layer (every size split among 1-3 threads): its ring holds
    ``ring_rows`` rows, each output is within rounding of the reference's 9-term sum, and the
    bits are the same with 1-3 threads and when bound twice (the ring's rows not stale)."""
    from nnsim.kernels import threads
    monkeypatch.setattr(threads, "MIN_PARALLEL_WORK", 0)
    rng = np.random.default_rng(shape[1] * 100 + shape[3])
    c = shape[3]
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((1, 3, 3, c)).astype(np.float32)
    bias = rng.standard_normal(c).astype(np.float32)
    g = dict(depth_multiplier=1, stride_h=stride, stride_w=stride, pad_top=pads[0],
             pad_bottom=pads[1], pad_left=pads[2], pad_right=pads[3], fuse=1)
    plan, out_shape = depthwise.prepare_depthwise_conv_2d(x.shape, np.float32, w, bias, **g)
    assert plan.dims[6] == ring_rows
    want = ref_depthwise.depthwise_conv_2d(x, w, bias, **g)
    magnitude = ref_depthwise.depthwise_conv_2d(np.abs(x), np.abs(w), np.abs(bias),
                                                **dict(g, fuse=0))
    first = None
    for n in (1, 2, 3):
        out = np.full(out_shape, np.nan, np.float32)
        with threads.num_threads(n):
            plan.bind(x, out)()
            plan.bind(x, out)()
        assert_float_sums_close(out, want, magnitude, 10)
        if first is None:
            first = out
        assert np.array_equal(out, first), f"{n} threads"


@pytest.mark.parametrize("shape,pads", [
    ((1, 112, 112, 16), (0, 1, 0, 1)),   # MobileNet's stride-2 layers (TF SAME, even sizes)
    ((2, 9, 11, 40), (1, 1, 1, 1)),      # a batch, odd sizes, padding on every side
    ((1, 8, 9, 24), (0, 0, 0, 0)),       # VALID: every row and column read in place
    ((1, 4, 3, 32), (1, 1, 1, 1)),       # one column inside (the others are edges)
    ((1, 7, 9, 12), (1, 1, 1, 1)),       # 12 channels: through the ring, as before
])
def test_depthwise_float_stride2_in_place(shape, pads, monkeypatch):
    """Float 3x3 stride-2 depthwise rows whose three input rows lie inside the input read
    them in place, the edge windows' pixels from the ring (of 3 rows): as _check_float_3x3
    (parts of rows or channels)."""
    _check_float_3x3(shape, pads, 2, monkeypatch, ring_rows=3)


@pytest.mark.parametrize("shape,pads", [((1, 7, 7, 256), (1, 1, 1, 1)),
                                        ((2, 5, 6, 24), (1, 1, 1, 1)),
                                        ((1, 9, 4, 20), (0, 0, 0, 0)),
                                        ((1, 14, 14, 128), (1, 1, 1, 1)),
                                        ((1, 6, 11, 8), (1, 1, 1, 1))])
def test_depthwise_float_stride1_two_rows(shape, pads, monkeypatch):
    """Float 3x3 stride-1 depthwise rows computed two at a time from a ring of 4 input rows
    (an odd last row of an image or of a thread's part alone; with AVX-512 16 channels a
    vector, the last 8 of 24 or 4 of 20 masked): as _check_float_3x3 (parts pair different
    rows)."""
    _check_float_3x3(shape, pads, 1, monkeypatch, ring_rows=4)


@settings(max_examples=40, deadline=None)
@given(conv_cases())
def test_fully_connected_numba_matches_reference(case):
    dtype, x_shape, _, units, _, geometry, quant, seed = case
    size = x_shape[1] * x_shape[3]
    x, w, bias = _arrays(dtype, (x_shape[0] * x_shape[2], size), (units, size), units, seed)
    args = dict(fuse=geometry["fuse"])
    if dtype != np.float32:
        args.update(quant)
    assert_same(fully_connected.fully_connected(x, w, bias, **args),
                ref_fc.fully_connected(x, w, bias, **args))


@pytest.mark.filterwarnings("ignore:overflow encountered")  # plain-Python cores (JIT off)
def test_int32_accumulator_wraps_like_tflite():
    # 1x1 conv with 40000 taps of 255*255 overflows int32: both kernels wrap identically
    x = np.full((1, 1, 1, 40000), 255, np.uint8)
    w = np.full((1, 1, 1, 40000), 255, np.uint8)
    args = dict(stride_h=1, stride_w=1, **NO_PAD, in_scale=1.0, in_zp=0, w_scales=[1.0],
                w_zp=0, out_scale=2.0**20, out_zp=128)
    assert_same(conv.conv_2d(x, w, None, **args), ref_conv.conv_2d(x, w, None, **args))


# --- LiteRT reference kernels (BUILTIN_REF) ----------------------------------------------------

def _litert_case(rng, dtype, op):
    info = np.iinfo(dtype)
    while True:
        h, w, cin = (int(v) for v in rng.integers(3, 9, 3))
        kh, kw = (int(v) for v in rng.integers(1, 4, 2))
        sh, sw = (int(v) for v in rng.integers(1, 3, 2))
        dh, dw = (1, 1) if op == "fc" or rng.random() < 0.5 else rng.integers(1, 3, 2).tolist()
        same = bool(rng.random() < 0.5)
        pt, pb, oh = tflite_padding(h, kh, sh, dh, same)
        pl, pr, ow = tflite_padding(w, kw, sw, dw, same)
        if oh >= 1 and ow >= 1:
            break
    geometry = dict(stride_h=sh, stride_w=sw, pad_top=pt, pad_bottom=pb, pad_left=pl,
                    pad_right=pr, dilation_h=dh, dilation_w=dw, fuse=int(rng.integers(0, 4)))
    options = dict(Padding=0 if same else 1, StrideW=sw, StrideH=sh, DilationWFactor=dw,
                   DilationHFactor=dh, FusedActivationFunction=geometry["fuse"])
    quant = dict(in_scale=float(np.float32(rng.uniform(0.005, 0.1))),
                 in_zp=int(rng.integers(info.min, info.max)),
                 out_scale=float(np.float32(rng.uniform(0.02, 0.5))),
                 out_zp=int(rng.integers(info.min, info.max)))
    return random_q(rng, dtype, (1, h, w, cin)), (kh, kw), geometry, options, quant


def _filter(rng, dtype, shape, channels, per_channel):
    w = random_q(rng, dtype, shape)
    if dtype == np.uint8:
        return w, np.float32([rng.uniform(0.002, 0.05)]), int(rng.integers(0, 256))
    w[w == -128] = -127
    n = channels if per_channel else 1
    return w, rng.uniform(0.002, 0.05, n).astype(np.float32), 0


def _bias_tensor(bias, in_scale, w_scales):
    return T(bias.shape, np.int32, (np.float32(in_scale) * w_scales).astype(np.float32), 0,
             data=bias)


@requires_litert
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_conv_matches_litert(rng, dtype):
    for _ in range(25):
        x, (kh, kw), geometry, options, quant = _litert_case(rng, dtype, "conv")
        cout = int(rng.integers(1, 6))
        w, w_scales, w_zp = _filter(rng, dtype, (cout, kh, kw, x.shape[3]), cout,
                                    per_channel=True)
        bias = rng.integers(-3000, 3000, cout).astype(np.int32)
        ours = conv.conv_2d(x, w, bias, **geometry, **quant, w_scales=w_scales, w_zp=w_zp)
        (expected,) = run_op(
            "CONV_2D",
            [T(x.shape, dtype, quant["in_scale"], quant["in_zp"]),
             T(w.shape, dtype, w_scales, w_zp, data=w), _bias_tensor(bias, quant["in_scale"],
                                                                     w_scales)],
            [T(ours.shape, dtype, quant["out_scale"], quant["out_zp"])], [x], options)
        assert_same(ours, expected)


@requires_litert
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_depthwise_matches_litert(rng, dtype):
    for _ in range(25):
        x, (kh, kw), geometry, options, quant = _litert_case(rng, dtype, "dw")
        mult = int(rng.integers(1, 3))
        cout = x.shape[3] * mult
        w, w_scales, w_zp = _filter(rng, dtype, (1, kh, kw, cout), cout, per_channel=True)
        bias = rng.integers(-3000, 3000, cout).astype(np.int32)
        ours = depthwise.depthwise_conv_2d(x, w, bias, depth_multiplier=mult, **geometry,
                                           **quant, w_scales=w_scales, w_zp=w_zp)
        (expected,) = run_op(
            "DEPTHWISE_CONV_2D",
            [T(x.shape, dtype, quant["in_scale"], quant["in_zp"]),
             T(w.shape, dtype, w_scales, w_zp, data=w, quant_dim=3),
             _bias_tensor(bias, quant["in_scale"], w_scales)],
            [T(ours.shape, dtype, quant["out_scale"], quant["out_zp"])], [x],
            dict(options, DepthMultiplier=mult))
        assert_same(ours, expected)


@requires_litert
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("per_channel", [False, True])
def test_fully_connected_matches_litert(rng, dtype, per_channel):
    if per_channel and dtype == np.uint8:
        pytest.skip("TFLite has no per-channel uint8 fully connected")
    for _ in range(20):
        x, _, geometry, _, quant = _litert_case(rng, dtype, "fc")
        x = x.reshape(x.shape[1], -1)
        units = int(rng.integers(1, 7))
        w, w_scales, w_zp = _filter(rng, dtype, (units, x.shape[1]), units, per_channel)
        bias = rng.integers(-3000, 3000, units).astype(np.int32)
        fuse = geometry["fuse"]
        ours = fully_connected.fully_connected(x, w, bias, fuse=fuse, **quant, w_scales=w_scales,
                                               w_zp=w_zp)
        (expected,) = run_op(
            "FULLY_CONNECTED",
            [T(x.shape, dtype, quant["in_scale"], quant["in_zp"]),
             T(w.shape, dtype, w_scales, w_zp, data=w),
             _bias_tensor(bias, quant["in_scale"], w_scales)],
            [T(ours.shape, dtype, quant["out_scale"], quant["out_zp"])], [x],
            dict(FusedActivationFunction=fuse))
        assert_same(ours, expected)


@requires_litert
def test_float_kernels_match_litert(rng):
    f32 = np.float32
    for _ in range(10):
        x = rng.standard_normal((1, 6, 5, 3)).astype(f32)
        fuse = int(rng.integers(0, 4))
        w = rng.standard_normal((4, 3, 2, 3)).astype(f32)
        b = rng.standard_normal(4).astype(f32)
        pt, pb, _ = tflite_padding(6, 3, 2, 1, True)
        pl, pr, _ = tflite_padding(5, 2, 1, 1, True)
        geometry = dict(stride_h=2, stride_w=1, pad_top=pt, pad_bottom=pb, pad_left=pl,
                        pad_right=pr, fuse=fuse)
        options = dict(Padding=0, StrideW=1, StrideH=2, FusedActivationFunction=fuse)
        ours = conv.conv_2d(x, w, b, **geometry)
        (expected,) = run_op("CONV_2D", [T(x.shape, f32), T(w.shape, f32, data=w),
                                         T(b.shape, f32, data=b)], [T(ours.shape, f32)], [x],
                             options)
        assert_same(ours, expected)
        wd = rng.standard_normal((1, 3, 2, 6)).astype(f32)
        bd = rng.standard_normal(6).astype(f32)
        ours = depthwise.depthwise_conv_2d(x, wd, bd, depth_multiplier=2, **geometry)
        (expected,) = run_op("DEPTHWISE_CONV_2D", [T(x.shape, f32), T(wd.shape, f32, data=wd),
                                                   T(bd.shape, f32, data=bd)],
                             [T(ours.shape, f32)], [x], dict(options, DepthMultiplier=2))
        assert_same(ours, expected)
        x2 = x.reshape(6, 15)
        w2 = rng.standard_normal((4, 15)).astype(f32)
        ours = fully_connected.fully_connected(x2, w2, b, fuse=fuse)
        (expected,) = run_op("FULLY_CONNECTED", [T(x2.shape, f32), T(w2.shape, f32, data=w2),
                                                 T(b.shape, f32, data=b)], [T(ours.shape, f32)],
                             [x2], dict(FusedActivationFunction=fuse))
        assert_same(ours, expected)


# --- fast-path specifics: direct 1x1 rows, 3x3 depthwise interior, branch-free requantization ---

@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.float32])
@pytest.mark.parametrize("shape", [(2, 9, 11, 6), (2, 9, 11, 8), (1, 5, 10, 8)])
def test_pointwise_and_3x3_fast_paths_match_reference(dtype, shape):
    """8 float channels: two window positions per 16-lane vector, and an odd last one."""
    rng = np.random.default_rng(7)
    cin = shape[3]
    for stride, pads in ((1, (0, 0, 0, 0)), (1, (1, 1, 1, 1)), (2, (0, 1, 0, 1)), (2, (1, 1, 1, 1))):
        geometry = dict(stride_h=stride, stride_w=stride, pad_top=pads[0], pad_bottom=pads[1],
                        pad_left=pads[2], pad_right=pads[3], fuse=3)
        if dtype == np.float32:
            x = rng.standard_normal(shape).astype(dtype)
            quant = {}
        else:
            x = random_q(rng, dtype, shape)
            quant = dict(in_scale=0.05, in_zp=7, w_scales=[0.01], w_zp=0, out_scale=0.1, out_zp=-3)
        _, w_dw, bias_dw = _arrays(dtype, (1, 1, 1, 1), (1, 3, 3, cin), cin, 11)
        _, w_pw, bias_pw = _arrays(dtype, (1, 1, 1, 1), (5, 1, 1, cin), 5, 12)
        args = dict(geometry, **quant)
        assert_same(depthwise.depthwise_conv_2d(x, w_dw, bias_dw, depth_multiplier=1, **args),
                    ref_depthwise.depthwise_conv_2d(x, w_dw, bias_dw, depth_multiplier=1, **args))
        assert_same(conv.conv_2d(x, w_pw, bias_pw, **args),
                    ref_conv.conv_2d(x, w_pw, bias_pw, **args))


def test_vector_requantization_matches_fixed_point():
    from nnsim.kernels.fixed_point import quantize_multiplier
    from nnsim.kernels.gemm import _requantize_core, requant_params
    from nnsim.kernels.reference import _fixed_point as fx

    rng = np.random.default_rng(5)
    acc = rng.integers(-(2**31), 2**31, (4, 40)).astype(np.int32)
    acc[0, :4] = [-(2**31), 2**31 - 1, 0, -1]
    reals = np.concatenate([rng.uniform(1e-7, 1.0, 30), [2.0**-31.4, 1.0, 1.5, 3.0, 100.0,
                                                         2.0**-40, 0.75, 2.0**20, 0.5, 1e-3]])
    pairs = [quantize_multiplier(r) for r in reals]
    mults = np.array([p[0] for p in pairs], np.int32)
    shifts = np.array([p[1] for p in pairs], np.int32)
    zero = np.zeros(40, np.int64)
    expected = fx.clamp_cast(fx.mbqm(acc, mults, shifts) + 5, -128, 127, np.int8)
    out = np.empty((4, 40), np.uint8)
    _requantize_core(acc, requant_params(zero, mults, shifts), 5, -128, 127, out)
    assert_same(out.view(np.int8), expected)
    for c in range(40):
        col = np.empty((4, 40), np.uint8)
        _requantize_core(acc, requant_params(zero, np.full(40, mults[c]), np.full(40, shifts[c])),
                         5, -128, 127, col)
        assert_same(col.view(np.int8), fx.clamp_cast(fx.mbqm(acc, mults[c], shifts[c]) + 5,
                                                     -128, 127, np.int8))


def test_multiplier_of_two_to_the_31_is_rejected():
    with pytest.raises(ValueError):
        conv.conv_2d(np.zeros((1, 1, 1, 1), np.uint8), np.zeros((1, 1, 1, 1), np.uint8), None,
                     stride_h=1, stride_w=1, **NO_PAD, in_scale=2.0**20, w_scales=[2.0**20],
                     out_scale=1e-3)


# --- packed filter cache ------------------------------------------------------------------------

def test_filter_cache_reuses_and_invalidates():
    from nnsim.kernels import _filters

    w = np.arange(24, dtype=np.uint8).reshape(2, 2, 2, 3)
    first = _filters.cached_pack_filter(w)
    assert _filters.cached_pack_filter(w) is first             # same array, same contents
    assert np.array_equal(first.data, conv.pack_filter(w).data)
    assert np.array_equal(first.sums, conv.pack_filter(w).sums)
    w[0, 0, 0, 0] = 200                                         # in-place change is detected
    changed = _filters.cached_pack_filter(w)
    assert changed is not first
    assert changed.sums[0] == first.sums[0] + 200
    frozen = np.frombuffer(w.tobytes(), np.uint8).reshape(w.shape)
    assert not frozen.flags.writeable
    packed = _filters.cached_pack_filter(frozen)
    assert _filters.cached_pack_filter(frozen) is packed
    key = id(frozen)
    del frozen
    assert key not in _filters._CACHE                           # entries die with their array


@pytest.mark.parametrize("out_scale, free", [(0.5, True), (0.0015, False)])
def test_tables_without_left_shifts_compute_the_same(out_scale, free):
    """A layer whose multipliers are all below 1 gets a uint32 requantization table
    (gemm.shift_free: its cores compile without the left shift), one with multipliers of 1 or
    more an int32 one (with it); either equals the reference kernels. CONV_2D (1x1 and 3x3),
    DEPTHWISE_CONV_2D (3x3 stride 1 and 2) and ADD, int8 per-channel."""
    from nnsim.kernels import elementwise
    from nnsim.kernels.reference import elementwise as ref_elementwise

    rng = np.random.default_rng(21)
    x = random_q(rng, np.int8, (1, 9, 11, 40))
    bias = rng.integers(-20000, 20000, 40).astype(np.int32)
    # 0.05 * [0.02, 0.06) / out_scale: below 0.006, or from 0.67 to 2 (left shifts 0 and 1)
    quant = dict(in_scale=0.05, in_zp=-3, w_scales=rng.uniform(0.02, 0.06, 40).tolist(),
                 out_scale=out_scale, out_zp=4, fuse=0)
    dtype = np.uint32 if free else np.int32
    for k in (1, 3):
        w = random_q(rng, np.int8, (40, k, k, 40))
        w[w == -128] = -127
        geo = dict(stride_h=1, stride_w=1, pad_top=k // 2, pad_bottom=k // 2,
                   pad_left=k // 2, pad_right=k // 2)
        plan, _ = conv.prepare_conv_2d(x.shape, np.int8, w, bias, **geo, **quant)
        assert plan.qp.dtype == dtype
        assert_same(conv.conv_2d(x, w, bias, **geo, **quant),
                    ref_conv.conv_2d(x, w, bias, **geo, **quant))
    w = random_q(rng, np.int8, (1, 3, 3, 40))
    w[w == -128] = -127
    for stride in (1, 2):
        geo = dict(depth_multiplier=1, stride_h=stride, stride_w=stride, pad_top=1,
                   pad_bottom=1, pad_left=1, pad_right=1)
        plan, _ = depthwise.prepare_depthwise_conv_2d(x.shape, np.int8, w, bias, **geo,
                                                      **quant)
        assert plan.qp.dtype == dtype
        assert_same(depthwise.depthwise_conv_2d(x, w, bias, **geo, **quant),
                    ref_depthwise.depthwise_conv_2d(x, w, bias, **geo, **quant))
    # ADD's output multiplier 2 * max(s1, s2) / (2**20 * out_scale): 0.019 or 6.4 (shift 3)
    y = random_q(rng, np.int8, x.shape)
    scales = dict(in1_scale=0.01, in1_zp=3, in2_scale=0.005, in2_zp=-9,
                  out_scale=1e-6 if free else 3e-9, out_zp=1)
    plan = elementwise.prepare_binary(0, x.shape, y.shape, np.int8, np.int8, **scales)
    assert plan.table.dtype == dtype
    assert_same(elementwise.add(x, y, **scales), ref_elementwise.add(x, y, **scales))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.float32])
def test_single_pixel_1x1_matches_micro_kernels_and_reference(dtype, monkeypatch):
    """A 1x1 CONV_2D of one pixel (a classifier: the matrix-vector loops of kernels/_gemv.py,
    float on AVX-512 and AVX2, integer on AVX2; an integer one on AVX-512 VNNI the
    micro-kernel's one-pixel pass): quantized results equal the reference kernel, float ones
    the micro-kernels of several pixels bit for bit (the same order of sums), with 1-3
    threads; channel counts around the 64- and 128-channel tiles, K not a multiple of 64,
    uint8 weights with a zero point (the sum of the inputs term)."""
    from nnsim.kernels import threads
    from nnsim.kernels._jit import SIMD_MODE

    monkeypatch.setattr(threads, "MIN_PARALLEL_WORK", 0)
    rng = np.random.default_rng(33)
    for k, n in ((4, 15), (68, 129), (256, 250), (1280, 1001)):
        g = dict(stride_h=1, stride_w=1, pad_top=0, pad_bottom=0, pad_left=0, pad_right=0,
                 fuse=int(rng.integers(0, 4)))
        if dtype == np.float32:
            x = rng.standard_normal((1, 1, 1, k)).astype(np.float32)
            w = rng.standard_normal((n, 1, 1, k)).astype(np.float32)
            bias, q = rng.standard_normal(n).astype(np.float32), {}
        else:
            x = random_q(rng, dtype, (1, 1, 1, k))
            w = random_q(rng, dtype, (n, 1, 1, k))
            if dtype == np.int8:
                w[w == -128] = -127
            bias = rng.integers(-20000, 20000, n).astype(np.int32)
            q = dict(in_scale=0.02, in_zp=int(x.min()) + 3, out_scale=0.7, out_zp=7,
                     w_scales=rng.uniform(0.001, 0.01, n) if dtype == np.int8 else [0.004],
                     w_zp=0 if dtype == np.int8 else 131)
        plan, out_shape = conv.prepare_conv_2d(x.shape, dtype, w, bias, **g, **q)
        gemv = SIMD_MODE == "avx2" or (SIMD_MODE == "avx512vnni" and dtype == np.float32)
        assert plan.gemv == gemv
        if dtype == np.float32:
            plan.gemv = False
            want = np.zeros(out_shape, np.float32)
            plan.bind(x, want)()
            plan.gemv = gemv
        else:
            want = ref_conv.conv_2d(x, w, bias, **g, **q)
        for threads_ in (1, 2, 3):
            out = np.zeros(out_shape, want.dtype)
            with threads.num_threads(threads_):
                plan.bind(x, out)()
            np.testing.assert_array_equal(out, want)


def test_quantized_plan_compiles_its_core_before_its_micro_kernels(monkeypatch):
    """A quantized GEMM plan's first bind compiles (or loads) the core's variant for its
    arrays first, then its micro-kernels (a compiling child forked at the first compilation
    takes those meanwhile), and fills their addresses in before the bound call can run: the
    results equal the reference kernel's, for a windowed layer (padded copy first) and a
    1x1 one; a second bind compiles nothing more."""
    from nnsim.kernels import _gemm_int, gemm

    order = []
    ahead, micro = gemm.compile_ahead, _gemm_int.micro_kernels
    monkeypatch.setattr(gemm, "compile_ahead", lambda call: (order.append("core"), ahead(call)))
    monkeypatch.setattr(_gemm_int, "micro_kernels",
                        lambda *a: (order.append("micro"), micro(*a))[1])
    rng = np.random.default_rng(5)
    for kh, stride, pad in ((3, 2, 1), (1, 1, 0)):
        x = random_q(rng, np.uint8, (1, 9, 11, 24))
        w = random_q(rng, np.uint8, (40, kh, kh, 24))
        bias = rng.integers(-500, 500, 40).astype(np.int32)
        g = dict(stride_h=stride, stride_w=stride, pad_top=pad, pad_bottom=pad, pad_left=pad,
                 pad_right=pad, in_scale=0.02, in_zp=3, w_scales=[0.004], w_zp=120,
                 out_scale=0.5, out_zp=9)
        plan, out_shape = conv.prepare_conv_2d(x.shape, np.uint8, w, bias, **g)
        order.clear()
        out = np.zeros(out_shape, np.uint8)
        call = plan.bind(x, out)
        assert order == ["core", "micro"]
        assert list(plan.mks) == list(micro(plan.cout, plan.qp.dtype))   # (JIT off: numbers)
        call()
        np.testing.assert_array_equal(out, ref_conv.conv_2d(x, w, bias, **g))
        order.clear()
        plan.bind(x, np.zeros(out_shape, np.uint8))
        assert order == []


# --- float convolutions that read their input in place ------------------------------------------

IN_PLACE_CASES = {
    # x shape, (cout, kh, kw), (stride_h, stride_w, dilation_h), pads (bottom, right)
    "first_layer_s2": ((1, 150, 150, 3), (8, 3, 3), (2, 2, 1), (1, 1)),
    "odd_sizes_s2": ((1, 140, 166, 3), (5, 3, 3), (2, 2, 1), (1, 1)),
    "last_input_row_read": ((1, 100, 230, 3), (6, 3, 3), (1, 1, 1), (2, 2)),
    "dilated_5x3_s1x2": ((1, 90, 96, 8), (12, 5, 3), (1, 2, 2), (3, 1)),
    "no_padding_read": ((1, 40, 37, 3), (7, 3, 3), (1, 1, 1), (0, 0)),
}


@pytest.mark.parametrize("case", list(IN_PLACE_CASES))
def test_float_conv_read_in_place_equals_the_padded_copy(case):
    """A float convolution padded only at the bottom and right reads its input in place
    (``gemm.InPlaceFloatPlan``: inside rows from ``x``, right and bottom edges by plans of
    their own): bit-identical to the plan over a padded copy of the input (the same sums), on
    1 and 2 threads, and within rounding of the reference kernel."""
    from nnsim.kernels import threads
    from nnsim.kernels.gemm import FloatGemmPlan, InPlaceFloatPlan

    x_shape, (cout, kh, kw), (sh, sw, dh), (pb, pr) = IN_PLACE_CASES[case]
    rng = np.random.default_rng(3)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal((cout, kh, kw, x_shape[3])).astype(np.float32)
    bias = rng.standard_normal(cout).astype(np.float32)
    geometry = dict(stride_h=sh, stride_w=sw, pad_top=0, pad_bottom=pb, pad_left=0,
                    pad_right=pr, dilation_h=dh, fuse=1)
    plan, out_shape = conv.prepare_conv_2d(x.shape, x.dtype, w, bias, **geometry)
    assert isinstance(plan, InPlaceFloatPlan) or (pb, pr) == (0, 0) and plan.in_place
    copy = FloatGemmPlan(x.shape, out_shape, w, bias, 0.0, np.inf, (sh, sw, 0, 0, dh, 1))
    assert not copy.in_place and copy.padded.size > x.size
    want = copy.run(x, np.empty(out_shape, np.float32))
    for count in (1, 2):
        out = np.full(out_shape, np.nan, np.float32)
        with threads.num_threads(count):
            plan.bind(x, out)()
        np.testing.assert_array_equal(out, want)
    magnitude = ref_conv.conv_2d(np.abs(x), np.abs(w), np.abs(bias), **dict(geometry, fuse=0))
    assert_float_sums_close(want, ref_conv.conv_2d(x, w, bias, **geometry), magnitude,
                            kh * kw * x_shape[3] + 1)


@pytest.mark.parametrize("cout", [8, 16, 24, 32, 40, 48, 100])
@pytest.mark.parametrize("kernel", [1, 3])
def test_float_conv_tiles_of_every_width(cout, kernel):
    """Float tiles of 1-4 columns of 16 channels (8 pixels x 32 / 16 channels, 8 lanes for at
    most 8, 4 pixels x 64) and partial last columns, 1x1 (patches read in place) and 3x3
    (padded), each output within rounding of the reference kernel's sum."""
    rng = np.random.default_rng(cout + kernel)
    x = rng.standard_normal((1, 7, 9, 13)).astype(np.float32)
    w = rng.standard_normal((cout, kernel, kernel, 13)).astype(np.float32)
    bias = rng.standard_normal(cout).astype(np.float32)
    pad = kernel // 2
    geometry = dict(stride_h=1, stride_w=1, pad_top=pad, pad_bottom=pad, pad_left=pad,
                    pad_right=pad)
    magnitude = ref_conv.conv_2d(np.abs(x), np.abs(w), np.abs(bias), **geometry)
    assert_float_sums_close(conv.conv_2d(x, w, bias, **geometry),
                            ref_conv.conv_2d(x, w, bias, **geometry), magnitude,
                            kernel * kernel * 13 + 1)


@requires_litert
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("cout", [16, 24, 64, 80, 88, 96, 144])
def test_conv_wide_tiles_every_pixel_remainder_match_litert(rng, dtype, cout):
    """1x1 layers of 64-channel tiles (4 columns), 2-column tiles (whole, or of 24 channels:
    masked 24-byte pieces) and 1-column tiles (8 pixels at a time, then 4), with 64-pixel
    blocks ending in groups of 1, 2, 3 and 4 pixels (7 after the 8-pixel groups; a lone
    last pixel of a 64-channel tile has its own loop): whole groups take the packed stores,
    partial ones the per-vector ones; against TFLite's reference kernels."""
    for h, w in ((5, 13), (3, 22), (7, 9), (4, 16), (7, 7)):   # 65, 66, 63, 64, 49 pixels
        x = random_q(rng, dtype, (1, h, w, 24))
        quant = dict(in_scale=0.02, in_zp=int(rng.integers(-20, 20)) + (128 if dtype == np.uint8
                                                                         else 0),
                     out_scale=0.05, out_zp=int(rng.integers(-10, 10)))
        wt, w_scales, w_zp = _filter(rng, dtype, (cout, 1, 1, 24), cout, per_channel=True)
        bias = rng.integers(-3000, 3000, cout).astype(np.int32)
        geometry = dict(stride_h=1, stride_w=1, pad_top=0, pad_bottom=0, pad_left=0,
                        pad_right=0, fuse=1)
        ours = conv.conv_2d(x, wt, bias, **geometry, **quant, w_scales=w_scales, w_zp=w_zp)
        (expected,) = run_op(
            "CONV_2D",
            [T(x.shape, dtype, quant["in_scale"], quant["in_zp"]),
             T(wt.shape, dtype, w_scales, w_zp, data=wt),
             _bias_tensor(bias, quant["in_scale"], w_scales)],
            [T(ours.shape, dtype, quant["out_scale"], quant["out_zp"])], [x],
            dict(Padding=1, StrideW=1, StrideH=1, FusedActivationFunction=1))
        assert_same(ours, expected)


@pytest.mark.parametrize("case", [
    # x shape, (cout, kh, kw), strides, dilations, pads (top, bottom, left, right)
    ((2, 9, 11, 6), (4, 3, 3), (2, 1), (1, 1), (1, 1, 0, 2)),   # padded copy, a batch
    ((1, 7, 9, 13), (4, 1, 1), (1, 1), (1, 1), (0, 0, 0, 0)),   # 1x1: the input itself
    ((1, 12, 12, 5), (4, 3, 3), (1, 1), (1, 2), (2, 2, 2, 2)),  # dilated in width: im2col
])
def test_row_bases_point_at_each_pixels_window(case):
    """A GEMM plan's ``row_bases`` (``_gemm_common.row_bases``): entry p is where output
    pixel p's window (its top-left tap, channel 0) starts in the source the core reads,
    located independently by unravelling the index into the padded copy's [N, H, W, C] (the
    input's for a 1x1 filter); for im2col, entry j is row j of the block's patch matrix; then
    16 copies of the last."""
    from nnsim.kernels.gemm import FloatGemmPlan

    x_shape, (cout, kh, kw), (sh, sw), (dh, dw), pads = case
    w = np.ones((cout, kh, kw, x_shape[3]), np.float32)
    plan = FloatGemmPlan(x_shape, _out_shape(x_shape, cout, kh, kw, sh, sw, dh, dw, pads), w,
                         None, 0.0, np.inf, (sh, sw, pads[0], pads[2], dh, dw))
    table = plan.row_bases
    assert list(table[-16:]) == [table[-17]] * 16
    if dw > 1:
        assert list(table[:-16]) == [j * plan.kp for j in range(64)]
        return
    n, oh, ow = plan.out_shape[:3]
    hp, wp = (int(plan.geo[6]), int(plan.geo[7])) if plan.geo[6] else x_shape[1:3]
    starts = [np.unravel_index(v, (n, hp, wp, x_shape[3])) for v in table[:-16]]
    assert starts == [(b, oy * sh, ox * sw, 0) for b in range(n) for oy in range(oh)
                      for ox in range(ow)]


def _out_shape(x_shape, cout, kh, kw, sh, sw, dh, dw, pads):
    n, h, w, _ = x_shape
    oh = (h + pads[0] + pads[1] - (kh - 1) * dh - 1) // sh + 1
    ow = (w + pads[2] + pads[3] - (kw - 1) * dw - 1) // sw + 1
    return (n, oh, ow, cout)
