"""The kernels written for the CPU builtins: fast path (numba / vectorised numpy) against the
numpy reference of the same name in ``nnsim.kernels.reference`` (exact for integers)."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from nnsim.kernels import argminmax, cast, detection, fc_quant, floor_div, hard_swish
from nnsim.kernels import hybrid_conv, resize, tanh, transform
from nnsim.kernels.reference import argminmax as ref_argminmax
from nnsim.kernels.reference import cast as ref_cast
from nnsim.kernels.reference import detection as ref_detection
from nnsim.kernels.reference import fc_quant as ref_fc_quant
from nnsim.kernels.reference import floor_div as ref_floor_div
from nnsim.kernels.reference import hard_swish as ref_hard_swish
from nnsim.kernels.reference import hybrid_conv as ref_hybrid_conv
from nnsim.kernels.reference import resize as ref_resize
from nnsim.kernels.reference import tanh as ref_tanh
from nnsim.kernels.reference import transform as ref_transform


@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


def q(rng, dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.int8, np.int16])
@pytest.mark.parametrize("align,half", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("out", [(9, 4), (2, 11), (1, 1)])
def test_resize_bilinear(rng, dtype, align, half, out):
    x = rng.standard_normal((2, 5, 6, 3)).astype(dtype) if dtype == np.float32 \
        else q(rng, dtype, (2, 5, 6, 3))
    a = resize.resize_bilinear(x, *out, align_corners=align, half_pixel_centers=half)
    b = ref_resize.resize_bilinear(x, *out, align_corners=align, half_pixel_centers=half)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.int8, np.int32])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("out_dtype", [np.int32, np.int64])
def test_arg_max_min(rng, dtype, axis, out_dtype):
    x = rng.integers(-3, 4, (4, 5, 6)).astype(dtype)  # many ties: the first index wins
    for fast, ref in ((argminmax.arg_max, ref_argminmax.arg_max),
                      (argminmax.arg_min, ref_argminmax.arg_min)):
        a, b = fast(x, axis, out_dtype=out_dtype), ref(x, axis, out_dtype=out_dtype)
        assert a.dtype == np.dtype(out_dtype)
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_arg_max_min_8bit_keys(rng, dtype):
    """8-bit inputs take the packed-key path (value << 24 | (2**24 - 1 - index)): the extreme
    values, ties everywhere, an axis longer than 256 (indices past one byte), the last axis
    (a reduction per position) and the others; oracle: NumPy's argmax / argmin (the first
    index among equals, as TFLite)."""
    info = np.iinfo(dtype)
    for shape in ((2, 3, 300), (300, 4), (5, 21), (2, 5, 3, 4)):
        x = rng.choice(np.array([info.min, info.min + 1, 0, info.max - 1, info.max], dtype),
                       shape)
        for axis in range(len(shape)):
            np.testing.assert_array_equal(argminmax.arg_max(x, axis), np.argmax(x, axis=axis))
            np.testing.assert_array_equal(argminmax.arg_min(x, axis), np.argmin(x, axis=axis))


def test_arg_max_skips_nan_after_the_first():
    x = np.array([[1.0, np.nan, 3.0], [np.nan, 5.0, 1.0]], np.float32)
    np.testing.assert_array_equal(argminmax.arg_max(x, 1), [2, 0])


@pytest.mark.parametrize("perm", [(1, 0, 2), (2, 0, 1), (0, 1, 2)])
def test_transpose(rng, perm):
    x = rng.integers(0, 100, (2, 3, 4))
    np.testing.assert_array_equal(transform.transpose(x, perm), ref_transform.transpose(x, perm))


def test_slice_gather(rng):
    x = rng.integers(0, 100, (4, 5, 6))
    np.testing.assert_array_equal(transform.slice_(x, [1, 0, 2], [2, -1, 3]),
                                  ref_transform.slice_(x, [1, 0, 2], [2, -1, 3]))
    idx = rng.integers(0, 5, (3, 2))
    np.testing.assert_array_equal(transform.gather(x, idx, axis=1),
                                  ref_transform.gather(x, idx, axis=1))
    idx_b = rng.integers(0, 5, (4, 3))
    np.testing.assert_array_equal(transform.gather(x, idx_b, axis=1, batch_dims=1),
                                  ref_transform.gather(x, idx_b, axis=1, batch_dims=1))
    nd = np.stack([rng.integers(0, 4, 7), rng.integers(0, 5, 7)], axis=1).reshape(7, 2)
    np.testing.assert_array_equal(transform.gather_nd(x, nd), ref_transform.gather_nd(x, nd))
    with pytest.raises(IndexError):
        transform.gather(x, np.array([5]), axis=1)
    with pytest.raises(IndexError):
        transform.gather_nd(x, np.array([[4, 0]]))


def test_strided_slice_matches_python_slicing():
    x = np.arange(4 * 5 * 6).reshape(4, 5, 6)
    cases = [(((1, 0, 0), (3, 5, 6), (1, 2, 3)), {}, x[1:3, 0:5:2, 0:6:3]),
             (((0, -1, 0), (0, 0, 0), (1, -1, 1)), dict(begin_mask=1, end_mask=7), x[:, ::-1, :]),
             (((2, 1, 0), (3, 4, 6), (1, 1, 2)), dict(shrink_axis_mask=1), x[2, 1:4, 0:6:2]),
             (((0, 1), (0, 3), (1, 1)), dict(ellipsis_mask=1), x[..., 1:3]),
             (((0, 1), (0, 3), (1, 1)), dict(new_axis_mask=1), x[None, 1:3])]
    for args, masks, want in cases:
        np.testing.assert_array_equal(transform.strided_slice(x, *args, **masks), want)


@pytest.mark.parametrize("src,dst", [(np.float32, np.int32), (np.float32, np.uint8),
                                     (np.int32, np.int8), (np.int64, np.int32),
                                     (np.float32, np.bool_), (np.bool_, np.float32),
                                     (np.uint8, np.int8)])
def test_cast(rng, src, dst):
    if np.dtype(src).kind == "f":
        x = (rng.standard_normal((3, 5)) * 50).astype(src)
        if dst == np.uint8:
            x = np.abs(x)
    elif src == np.bool_:
        x = rng.integers(0, 2, (3, 5)).astype(bool)
    else:
        x = q(rng, src, (3, 5))
    np.testing.assert_array_equal(cast.cast(x, dst), ref_cast.cast(x, dst))


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.float32])
def test_floor_div(rng, dtype):
    a = (rng.integers(-50, 50, (4, 6))).astype(dtype)
    b = rng.choice([-7, -3, -1, 1, 2, 5], (1, 6)).astype(dtype)
    np.testing.assert_array_equal(floor_div.floor_div(a, b), ref_floor_div.floor_div(a, b))
    with pytest.raises(ZeroDivisionError):
        floor_div.floor_div(a, np.zeros_like(b))


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_tanh_table(dtype):
    x = np.arange(np.iinfo(dtype).min, np.iinfo(dtype).max + 1).astype(dtype)
    for in_scale, in_zp in ((0.05, 7), (0.01, -3), (0.2, 0)):
        np.testing.assert_array_equal(tanh.tanh(x, in_scale=in_scale, in_zp=in_zp),
                                      ref_tanh.tanh(x, in_scale=in_scale, in_zp=in_zp))


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.float32])
@pytest.mark.parametrize("scales", [(0.05, 0.03), (0.1, 0.4), (0.02, 0.005)])
def test_hard_swish(dtype, scales):
    if dtype == np.float32:
        x = np.linspace(-8, 8, 257, dtype=np.float32)
        np.testing.assert_array_equal(hard_swish.hard_swish(x), ref_hard_swish.hard_swish(x))
        return
    x = np.arange(np.iinfo(dtype).min, np.iinfo(dtype).max + 1).astype(dtype)
    kw = dict(in_scale=scales[0], in_zp=3, out_scale=scales[1], out_zp=-5 if dtype == np.int8
              else 20)
    np.testing.assert_array_equal(hard_swish.hard_swish(x, **kw),
                                  ref_hard_swish.hard_swish(x, **kw))


@pytest.mark.parametrize("dtype,per_channel", [(np.uint8, False), (np.int8, False),
                                               (np.int8, True)])
def test_fc_quant(rng, dtype, per_channel):
    x, w = q(rng, dtype, (5, 33)), q(rng, dtype, (9, 33))
    scales = rng.uniform(0.001, 0.01, 9) if per_channel else [0.004]
    kw = dict(fuse=1, in_scale=0.05, in_zp=3, w_scales=scales,
              w_zp=0 if dtype == np.int8 else 128, out_scale=0.7, out_zp=-2 if dtype == np.int8
              else 100)
    bias = rng.integers(-5000, 5000, 9).astype(np.int32)
    np.testing.assert_array_equal(fc_quant.fully_connected_quant(x, w, bias, **kw),
                                  ref_fc_quant.fully_connected_quant(x, w, bias, **kw))


def test_hybrid_conv(rng):
    x = rng.standard_normal((2, 7, 6, 3)).astype(np.float32)
    w = q(rng, np.int8, (4, 3, 3, 3))
    bias = rng.standard_normal(4).astype(np.float32)
    geo = dict(w_scale=0.01, stride_h=2, stride_w=1, pad_top=1, pad_bottom=1, pad_left=1,
               pad_right=1, fuse=3)
    np.testing.assert_array_equal(hybrid_conv.hybrid_conv_2d(x, w, bias, **geo),
                                  ref_hybrid_conv.hybrid_conv_2d(x, w, bias, **geo))
    zeros = np.zeros((1, 4, 4, 3), np.float32)  # range 0: scaling factor 1, output = bias
    out = hybrid_conv.hybrid_conv_2d(zeros, w, bias, **dict(geo, fuse=0))
    np.testing.assert_array_equal(out, np.broadcast_to(bias, out.shape))


def test_single_class_nms(rng):
    n = 60
    centers, sizes = rng.uniform(0.2, 0.8, (n, 2)), rng.uniform(0.05, 0.4, (n, 2))
    boxes = np.concatenate([centers - sizes / 2, centers + sizes / 2], 1).astype(np.float32)
    scores = rng.uniform(0, 1, n).astype(np.float32)
    scores[5] = scores[9]  # a tie: the lower index comes first
    for threshold, iou, limit in ((0.2, 0.5, 10), (0.0, 0.3, 100), (0.9, 0.5, 3)):
        np.testing.assert_array_equal(
            detection.single_class_nms(boxes, scores, threshold, iou, limit),
            ref_detection.single_class_nms(boxes, scores, threshold, iou, limit))
