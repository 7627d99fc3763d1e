"""The widened depthwise cores (nnsim/kernels/_dw_widened.py: 3x3 layers with int8 weights,
one vpdpbusd per window row, AVX-512 VNNI only; stride 1, and stride 2 with VBMI's vpermb)
against the reference depthwise kernel (nnsim/kernels/reference, plain numpy integer
arithmetic), with 1, 2 and 3 threads, and against LiteRT's reference kernels for int8
models.

Cases: both paddings of a 3x3 window (SAME, VALID) and lopsided ones, batches, channel counts
that are not multiples of 16, images narrower than the window's reach, int8 and uint8 inputs
(TFLite pairs int8 weights with int8 inputs; NNAPI also allows them with uint8 ones),
activations that clamp, extreme zero points."""
from __future__ import annotations

import numpy as np
import pytest

from .kernel_litert import T, run_op
from .kernel_testutil import assert_same, requires_litert, tflite_padding
from nnsim.kernels import depthwise, threads
from nnsim.kernels.reference import depthwise as ref_depthwise

pytestmark = pytest.mark.skipif(depthwise.SIMD_MODE != "avx512vnni",
                                reason="the widened core runs on AVX-512 VNNI only")

CASES = [
    # x shape, (pad_top, pad_bottom, pad_left, pad_right), fuse
    ((1, 12, 11, 16), (1, 1, 1, 1), 0),
    ((2, 9, 13, 21), (1, 1, 1, 1), 1),
    ((1, 7, 7, 37), (0, 0, 0, 0), 3),
    ((1, 6, 10, 64), (1, 0, 0, 1), 0),
    ((1, 5, 3, 200), (0, 1, 1, 0), 1),
    ((3, 3, 2, 40), (1, 1, 1, 1), 0),   # narrower than the window's reach
    ((1, 1, 1, 8), (1, 1, 1, 1), 0),
]


def _case(rng, x_dtype, x_shape, pads, fuse, stride=1):
    info = np.iinfo(x_dtype)
    cout = x_shape[3]
    x = rng.integers(info.min, info.max + 1, x_shape).astype(x_dtype)
    w = rng.integers(-127, 128, (1, 3, 3, cout)).astype(np.int8)   # symmetric, as TFLite
    bias = rng.integers(-20000, 20000, cout).astype(np.int32)
    zp = int(rng.choice([info.min, info.max, info.min + 3]))
    args = dict(depth_multiplier=1, stride_h=stride, stride_w=stride, pad_top=pads[0],
                pad_bottom=pads[1], pad_left=pads[2], pad_right=pads[3], fuse=fuse,
                in_scale=0.05, in_zp=zp, w_scales=rng.uniform(0.002, 0.02, cout), w_zp=0,
                out_scale=0.11, out_zp=int(rng.integers(info.min, info.max + 1)))
    return x, w, bias, args


#: Stride-2 cases: SAME and VALID paddings of even and odd sizes, MobileNet v2's shapes
#: scaled down (channel groups split across threads), lopsided pads, tiny images.
CASES_S2 = [
    ((1, 12, 11, 16), (0, 1, 0, 1), 0),
    ((2, 9, 13, 21), (1, 1, 1, 1), 1),
    ((1, 7, 7, 37), (0, 0, 0, 0), 3),
    ((1, 14, 14, 96), (0, 1, 0, 1), 3),
    ((1, 5, 3, 200), (2, 0, 1, 2), 1),
    ((3, 3, 2, 40), (1, 1, 1, 1), 0),
    ((1, 1, 1, 8), (1, 1, 1, 1), 0),
]
requires_vbmi = pytest.mark.skipif(not depthwise.VBMI, reason="stride 2 needs AVX-512 VBMI")


@pytest.mark.parametrize("x_dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("stride, case", [(1, k) for k in range(len(CASES))] + [
    pytest.param(2, k, marks=requires_vbmi) for k in range(len(CASES_S2))])
def test_widened_depthwise_matches_reference_with_any_thread_count(x_dtype, stride, case,
                                                                   monkeypatch):
    monkeypatch.setattr(threads, "MIN_PARALLEL_WORK", 0)   # split even these small layers
    rng = np.random.default_rng(case)
    x_shape, pads, fuse = (CASES if stride == 1 else CASES_S2)[case]
    x, w, bias, args = _case(rng, x_dtype, x_shape, pads, fuse, stride)
    expected = ref_depthwise.depthwise_conv_2d(x, w, bias, **args)
    plan, out_shape = depthwise.prepare_depthwise_conv_2d(x.shape, x.dtype, w, bias, **args)
    assert plan.widened is not None and plan.stride2 == (stride == 2)
    for n in (1, 2, 3):
        out = np.full(out_shape, 0x55, plan.out_dtype)
        with threads.num_threads(n):
            plan.bind(x, out)()
        assert_same(out, expected)


def test_other_layers_keep_the_ring_core():
    rng = np.random.default_rng(0)
    x, w, bias, args = _case(rng, np.int8, (1, 8, 8, 16), (1, 1, 1, 1), 0)
    for change in (dict(stride_h=2, stride_w=1), dict(dilation_h=2, dilation_w=2),
                   dict(w_zp=3)):
        plan, _ = depthwise.prepare_depthwise_conv_2d(x.shape, x.dtype, w, bias,
                                                      **dict(args, **change))
        assert plan.widened is None, change
    plan, _ = depthwise.prepare_depthwise_conv_2d(x.shape, x.dtype, w, bias,
                                                  **dict(args, stride_h=2, stride_w=2))
    assert (plan.widened is not None) == depthwise.VBMI   # stride 2: with vpermb only
    w5 = rng.integers(-127, 128, (1, 5, 5, 16)).astype(np.int8)
    plan, _ = depthwise.prepare_depthwise_conv_2d(x.shape, x.dtype, w5, bias, **args)
    assert plan.widened is None


@requires_litert
@pytest.mark.parametrize("stride, case", [(1, 0), (1, 1), (1, 2), (1, 5)] + [
    pytest.param(2, k, marks=requires_vbmi) for k in (0, 1, 2, 3)])   # SAME and VALID ones
def test_widened_depthwise_matches_litert(stride, case):
    rng = np.random.default_rng(100 + case)
    x_shape, pads, fuse = (CASES if stride == 1 else CASES_S2)[case]
    same = pads != (0, 0, 0, 0)
    if stride == 2:   # TFLite's own SAME padding
        pads = tflite_padding(x_shape[1], 3, 2, 1, same)[:2] + \
            tflite_padding(x_shape[2], 3, 2, 1, same)[:2]
    x, w, bias, args = _case(rng, np.int8, x_shape, pads, fuse, stride)
    scales = args["w_scales"].astype(np.float32)
    args["w_scales"] = scales
    ours = depthwise.depthwise_conv_2d(x, w, bias, **args)
    (expected,) = run_op(
        "DEPTHWISE_CONV_2D",
        [T(x.shape, np.int8, args["in_scale"], args["in_zp"]),
         T(w.shape, np.int8, scales, 0, data=w, quant_dim=3),
         T(bias.shape, np.int32, (np.float32(args["in_scale"]) * scales).astype(np.float32), 0,
           data=bias)],
        [T(ours.shape, np.int8, args["out_scale"], args["out_zp"])], [x],
        dict(Padding=0 if same else 1, StrideW=stride, StrideH=stride,
             DilationWFactor=1, DilationHFactor=1, FusedActivationFunction=fuse,
             DepthMultiplier=1))
    assert_same(ours, expected)
