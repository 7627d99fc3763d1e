"""Per-kernel benchmarks on shapes taken from MobileNet v1 1.0 224 layers (uint8 and float)."""
from __future__ import annotations

import numpy as np
import pytest

from nnsim.kernels.conv import conv_2d
from nnsim.kernels.depthwise import depthwise_conv_2d
from nnsim.kernels.elementwise import add
from nnsim.kernels.fully_connected import fully_connected
from nnsim.kernels.pooling import average_pool_2d
from nnsim.kernels.softmax import softmax

RNG = np.random.default_rng(0)
Q = dict(in_scale=0.0235, in_zp=0, out_scale=0.0235, out_zp=0, out_dtype=np.uint8)

# (name, input NHWC, filter OHWI, stride): MobileNet v1 layers
CONV_LAYERS = [("conv0_3x3_s2", (1, 224, 224, 3), (32, 3, 3, 3), 2),
               ("pw1_1x1", (1, 112, 112, 32), (64, 1, 1, 32), 1),
               ("pw13_1x1", (1, 7, 7, 1024), (1024, 1, 1, 1024), 1)]
DW_LAYERS = [("dw1_3x3", (1, 112, 112, 32), 1), ("dw2_3x3_s2", (1, 112, 112, 64), 2),
             ("dw12_3x3", (1, 14, 14, 512), 1)]


def _u8(shape):
    return RNG.integers(0, 256, shape, dtype=np.uint8)


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
@pytest.mark.parametrize("name,xs,ws,stride", CONV_LAYERS, ids=[c[0] for c in CONV_LAYERS])
def test_conv_2d(benchmark, name, xs, ws, stride, dtype):
    pad = (ws[1] - 1) // 2
    kw = dict(stride_h=stride, stride_w=stride, pad_top=pad, pad_bottom=pad, pad_left=pad,
              pad_right=pad, fuse=3)
    if dtype == "uint8":
        x, w, b = _u8(xs), _u8(ws), RNG.integers(-1000, 1000, ws[0]).astype(np.int32)
        kw.update(Q, w_scales=np.array([0.02], np.float32), w_zp=128)
    else:
        x = RNG.standard_normal(xs).astype(np.float32)
        w = RNG.standard_normal(ws).astype(np.float32)
        b = RNG.standard_normal(ws[0]).astype(np.float32)
    benchmark.group = f"conv_2d {name}"
    benchmark(conv_2d, x, w, b, **kw)


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
@pytest.mark.parametrize("name,xs,stride", DW_LAYERS, ids=[d[0] for d in DW_LAYERS])
def test_depthwise_conv_2d(benchmark, name, xs, stride, dtype):
    c = xs[3]
    kw = dict(depth_multiplier=1, stride_h=stride, stride_w=stride, pad_top=1, pad_bottom=1,
              pad_left=1, pad_right=1, fuse=3)
    if dtype == "uint8":
        x, w, b = _u8(xs), _u8((1, 3, 3, c)), RNG.integers(-1000, 1000, c).astype(np.int32)
        kw.update(Q, w_scales=np.array([0.02], np.float32), w_zp=128)
    else:
        x = RNG.standard_normal(xs).astype(np.float32)
        w = RNG.standard_normal((1, 3, 3, c)).astype(np.float32)
        b = RNG.standard_normal(c).astype(np.float32)
    benchmark.group = f"depthwise {name}"
    benchmark(depthwise_conv_2d, x, w, b, **kw)


def test_fully_connected_uint8(benchmark):
    x, w = _u8((1, 1024)), _u8((1001, 1024))
    b = RNG.integers(-1000, 1000, 1001).astype(np.int32)
    benchmark(fully_connected, x, w, b, **Q, w_scales=np.array([0.02], np.float32), w_zp=128)


def test_average_pool_uint8(benchmark):
    x = _u8((1, 7, 7, 1024))
    benchmark(average_pool_2d, x, filter_h=7, filter_w=7, stride_h=1, stride_w=1, pad_top=0,
              pad_bottom=0, pad_left=0, pad_right=0, out_scale=0.0235, out_zp=0)


def test_add_uint8(benchmark):
    a, b = _u8((1, 56, 56, 24)), _u8((1, 56, 56, 24))
    benchmark(add, a, b, in1_scale=0.03, in1_zp=128, in2_scale=0.02, in2_zp=120,
              out_scale=0.04, out_zp=125, out_dtype=np.uint8)


def test_softmax_uint8(benchmark):
    x = _u8((1, 1001))
    benchmark(softmax, x, 1.0, in_scale=0.1, in_zp=128, out_scale=1 / 256, out_zp=0)
