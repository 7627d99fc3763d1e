"""AVERAGE_POOL_2D and MAX_POOL_2D: hand cases, numba == reference, LiteRT."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .kernel_litert import T, run_op
from .kernel_testutil import assert_same, random_q, requires_litert, tflite_padding
from nnsim.kernels import pooling
from nnsim.kernels.reference import pooling as ref_pooling

POOLS = [(pooling.average_pool_2d, ref_pooling.average_pool_2d, "AVERAGE_POOL_2D"),
         (pooling.max_pool_2d, ref_pooling.max_pool_2d, "MAX_POOL_2D")]


def _geometry(fh, fw, sh=1, sw=1, pads=(0, 0, 0, 0), fuse=0):
    return dict(filter_h=fh, filter_w=fw, stride_h=sh, stride_w=sw, pad_top=pads[0],
                pad_bottom=pads[1], pad_left=pads[2], pad_right=pads[3], fuse=fuse)


def test_average_counts_only_in_image_taps():
    x = np.array([[1, 2], [3, 4]], np.float32).reshape(1, 2, 2, 1)
    out = pooling.average_pool_2d(x, **_geometry(2, 2, pads=(1, 0, 1, 0)))
    # windows: {1}, {1,2}, {1,3}, {1,2,3,4}
    assert out.ravel().tolist() == [1.0, 1.5, 2.0, 2.5]


@pytest.mark.parametrize(
    "dtype, values, expected",
    [
        (np.uint8, [1, 2, 2, 2], 2),      # 7/4 = 1.75 -> 2
        (np.uint8, [1, 1, 2, 2], 2),      # 6/4 = 1.5 -> 2 (half up)
        (np.uint8, [1, 1, 1, 2], 1),      # 5/4 = 1.25 -> 1
        (np.int8, [-1, -1, -2, -2], -2),  # -1.5 -> -2 (half away from zero)
        (np.int8, [-1, -1, -1, -2], -1),  # -1.25 -> -1
        (np.int8, [-3, 1, 1, 0], 0),      # -0.25 -> 0
    ],
)
def test_quantized_average_rounding(dtype, values, expected):
    x = np.array(values, dtype).reshape(1, 2, 2, 1)
    for fn in (pooling.average_pool_2d, ref_pooling.average_pool_2d):
        assert fn(x, **_geometry(2, 2)).item() == expected


def test_max_pool_with_relu6_clamp():
    x = np.array([10, 200, 30, 40], np.uint8).reshape(1, 2, 2, 1)
    # relu6 with scale 0.05, zp 0: clamp to [0, 120]
    out = pooling.max_pool_2d(x, **_geometry(2, 2, fuse=3), out_scale=0.05, out_zp=0)
    assert out.item() == 120


@st.composite
def pool_cases(draw):
    dtype = draw(st.sampled_from([np.uint8, np.int8, np.float32]))
    fh, fw = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    pads = tuple(draw(st.integers(0, 2)) for _ in range(4))
    h = draw(st.integers(max(1, fh - pads[0] - pads[1]), 7))
    w = draw(st.integers(max(1, fw - pads[2] - pads[3]), 7))
    geometry = _geometry(fh, fw, draw(st.integers(1, 3)), draw(st.integers(1, 3)), pads,
                         draw(st.integers(0, 3)))
    return dtype, (draw(st.integers(1, 2)), h, w, draw(st.integers(1, 5))), geometry, \
        draw(st.integers(0, 2**32 - 1))


@settings(max_examples=60, deadline=None)
@given(pool_cases())
def test_pools_numba_match_reference(case):
    dtype, shape, geometry, seed = case
    rng = np.random.default_rng(seed)
    if dtype == np.float32:
        x, quant = rng.standard_normal(shape).astype(np.float32) * 4, {}
    else:
        x = random_q(rng, dtype, shape)
        quant = dict(out_scale=float(rng.uniform(0.01, 0.1)),
                     out_zp=int(rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max)))
    for fast, ref, _ in POOLS:
        assert_same(fast(x, **geometry, **quant), ref(x, **geometry, **quant))


@requires_litert
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.float32])
@pytest.mark.parametrize("fast, _, op", POOLS)
def test_pools_match_litert(rng, dtype, fast, _, op):
    for _ in range(20):
        h, w, c = (int(v) for v in rng.integers(2, 9, 3))
        fh, fw, sh, sw = (int(v) for v in rng.integers(1, 4, 4))
        same = bool(rng.random() < 0.5)
        pt, pb, oh = tflite_padding(h, fh, sh, 1, same)
        pl, pr, ow = tflite_padding(w, fw, sw, 1, same)
        if oh < 1 or ow < 1:
            continue
        fuse = int(rng.integers(0, 4))
        if dtype == np.float32:
            x = rng.standard_normal((1, h, w, c)).astype(np.float32) * 4
            scale, zp = None, 0
        else:
            x = random_q(rng, dtype, (1, h, w, c))
            scale = float(np.float32(rng.uniform(0.01, 0.2)))
            zp = int(rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max))
        ours = fast(x, **_geometry(fh, fw, sh, sw, (pt, pb, pl, pr), fuse), out_scale=scale,
                    out_zp=zp)
        (expected,) = run_op(op, [T(x.shape, dtype, scale, zp)], [T(ours.shape, dtype, scale, zp)],
                             [x], dict(Padding=0 if same else 1, StrideW=sw, StrideH=sh,
                                       FilterWidth=fw, FilterHeight=fh,
                                       FusedActivationFunction=fuse))
        assert_same(ours, expected, rtol=0, atol=0)
