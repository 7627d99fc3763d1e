"""Single-op differential tests: hypothesis-chosen shapes, strides, paddings, dilations, scales
and zero points; one-node .tflite files written by nnsim's own writer; nnsim's Interpreter vs
LiteRT with the reference op resolver (BUILTIN_REF). Quantized outputs must be identical."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nnsim.tflite import options as O
from nnsim.tflite.reader import Quantization
from nnsim.tflite.schema import ActivationFunctionType as Act
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import Padding

from .test_builtins import T, assert_same, build, run_both

pytest.importorskip("ai_edge_litert.interpreter")
SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
scales = st.floats(0.005, 0.5, allow_nan=False, allow_infinity=False)


def _out_size(n, k, stride, dilation, padding):
    eff = (k - 1) * dilation + 1
    return (n + stride - 1) // stride if padding == Padding.SAME else (n - eff) // stride + 1


@st.composite
def conv_cases(draw, depthwise=False):
    h, w = draw(st.integers(3, 10)), draw(st.integers(3, 10))
    cin = draw(st.integers(1, 6))
    mult = draw(st.integers(1, 2)) if depthwise else 1
    cout = cin * mult if depthwise else draw(st.integers(1, 6))
    k = draw(st.integers(1, 3))
    stride, dilation = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    padding = draw(st.sampled_from([Padding.SAME, Padding.VALID]))
    if _out_size(h, k, stride, dilation, padding) < 1 or \
            _out_size(w, k, stride, dilation, padding) < 1:
        padding = Padding.SAME
    signed = draw(st.booleans())
    act = draw(st.sampled_from([Act.NONE, Act.RELU, Act.RELU6]))
    return dict(h=h, w=w, cin=cin, cout=cout, mult=mult, k=k, stride=stride, dilation=dilation,
                padding=padding, signed=signed, act=act, s_in=draw(scales), s_out=draw(scales),
                zp_in=draw(st.integers(-20, 20)), zp_out=draw(st.integers(-20, 20)),
                seed=draw(st.integers(0, 2**31)))


def _conv_model(c, depthwise):
    rng = np.random.default_rng(c["seed"])
    oh = _out_size(c["h"], c["k"], c["stride"], c["dilation"], c["padding"])
    ow = _out_size(c["w"], c["k"], c["stride"], c["dilation"], c["padding"])
    fshape = (1, c["k"], c["k"], c["cout"]) if depthwise else (c["cout"], c["k"], c["k"], c["cin"])
    if c["signed"]:   # int8 with per-channel symmetric filters (TFLite's integer_ops path)
        dt, base = np.int8, 0
        wq = rng.integers(-127, 128, fshape).astype(np.int8)
        w_scales = rng.uniform(0.002, 0.05, c["cout"]).astype(np.float32)
        wquant = Quantization(w_scales, np.zeros(c["cout"], np.int64), 3 if depthwise else 0)
        bscale = w_scales * np.float32(c["s_in"])
        bquant = Quantization(bscale.astype(np.float32), np.zeros(c["cout"], np.int64), 0)
    else:             # uint8 per-tensor
        dt, base = np.uint8, 128
        wq = rng.integers(0, 256, fshape).astype(np.uint8)
        ws = float(rng.uniform(0.002, 0.05))
        wquant = (ws, int(rng.integers(100, 156)))
        bquant = (ws * c["s_in"], 0)
    bias = rng.integers(-3000, 3000, c["cout"]).astype(np.int32)
    inp = T((1, c["h"], c["w"], c["cin"]), dt, (c["s_in"], base + c["zp_in"]))
    out = T((1, oh, ow, c["cout"]), dt, (c["s_out"], base + c["zp_out"]))
    filt = T(fshape, dt, wquant, wq)
    b = T((c["cout"],), np.int32, bquant, bias)
    if depthwise:
        opts = O.DepthwiseConv2DOptions(padding=c["padding"], stride_w=c["stride"],
                                        stride_h=c["stride"], depth_multiplier=c["mult"],
                                        fused_activation_function=c["act"],
                                        dilation_w_factor=c["dilation"],
                                        dilation_h_factor=c["dilation"])
        return build(B.DEPTHWISE_CONV_2D, [inp, filt, b], [out], opts), inp, rng
    opts = O.Conv2DOptions(padding=c["padding"], stride_w=c["stride"], stride_h=c["stride"],
                           fused_activation_function=c["act"], dilation_w_factor=c["dilation"],
                           dilation_h_factor=c["dilation"])
    return build(B.CONV_2D, [inp, filt, b], [out], opts), inp, rng


def _feed(rng, spec):
    info = np.iinfo(spec.dtype)
    return rng.integers(info.min, int(info.max) + 1, spec.shape).astype(spec.dtype)


@SETTINGS
@given(conv_cases())
def test_conv_2d_matches_litert(case):
    blob, inp, rng = _conv_model(case, depthwise=False)
    ours, ref = run_both(blob, [_feed(rng, inp)])
    assert_same(ours, ref)


@SETTINGS
@given(conv_cases(depthwise=True))
def test_depthwise_conv_2d_matches_litert(case):
    blob, inp, rng = _conv_model(case, depthwise=True)
    ours, ref = run_both(blob, [_feed(rng, inp)])
    assert_same(ours, ref)


@SETTINGS
@given(st.integers(2, 9), st.integers(2, 9), st.integers(1, 5), st.integers(1, 3),
       st.integers(1, 3), st.sampled_from([Padding.SAME, Padding.VALID]), st.booleans(),
       st.sampled_from([B.AVERAGE_POOL_2D, B.MAX_POOL_2D]), scales, st.integers(0, 2**31))
def test_pool_matches_litert(h, w, c, k, stride, padding, signed, op, s, seed):
    rng = np.random.default_rng(seed)
    k = min(k, h, w)
    dt, zp = (np.int8, -3) if signed else (np.uint8, 125)
    oh = _out_size(h, k, stride, 1, padding)
    ow = _out_size(w, k, stride, 1, padding)
    inp = T((1, h, w, c), dt, (s, zp))
    out = T((1, oh, ow, c), dt, (s, zp))
    opts = O.Pool2DOptions(padding=padding, stride_w=stride, stride_h=stride, filter_width=k,
                           filter_height=k)
    ours, ref = run_both(build(op, [inp], [out], opts), [_feed(rng, inp)])
    assert_same(ours, ref)


@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.booleans(), scales, scales, scales,
       st.integers(-30, 30), st.integers(-30, 30), st.integers(-30, 30),
       st.sampled_from([B.ADD, B.SUB, B.MUL]), st.integers(0, 2**31))
def test_binary_matches_litert(shape, signed, s1, s2, s3, z1, z2, z3, op, seed):
    rng = np.random.default_rng(seed)
    dt, base = (np.int8, 0) if signed else (np.uint8, 128)
    shape = tuple(shape)
    a, b = T(shape, dt, (s1, base + z1)), T(shape, dt, (s2, base + z2))
    out = T(shape, dt, (s3, base + z3))
    opts = {B.ADD: O.AddOptions(), B.SUB: O.SubOptions(), B.MUL: O.MulOptions()}[op]
    ours, ref = run_both(build(op, [a, b], [out], opts), [_feed(rng, a), _feed(rng, b)])
    assert_same(ours, ref)
