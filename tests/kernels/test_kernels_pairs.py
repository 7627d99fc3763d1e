"""The AVX2 pair-lane kernels (kernels/_gemm_avx2.py's convolution, kernels/_dw_pairs.py's 3x3
depthwise) against the reference kernels, bit for bit; the AVX2 float 1x1 tiles and classifier
within rounding of the reference's sums.

They only run where nnsim compiles for AVX2 (``SIMD_MODE == "avx2"``: an AVX2-only CPU,
``NUMBA_CPU_NAME=haswell``, ``python -m benchmarks.avx2_only``), except the float tiles and
the row copy, which check the AVX-512 code as well. On an AVX-512 host
:func:`test_pair_kernels_compiled_for_haswell` runs this file again in a child with
``NUMBA_CPU_NAME=haswell``, so that every machine checks both code paths.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from .kernel_testutil import assert_float_sums_close, random_q, tflite_padding
from nnsim.kernels import _jit, conv, depthwise, threads
from nnsim.kernels._gemm_avx2 import widen_pairs
from nnsim.kernels._gemm_common import _copy_run
from nnsim.kernels.gemm import pack_weights
from nnsim.kernels.reference import conv as ref_conv
from nnsim.kernels.reference import depthwise as ref_depthwise

AVX2 = _jit.SIMD_MODE == "avx2"
on_avx2 = pytest.mark.skipif(not AVX2, reason="compiled for AVX2 only (see the module doc)")


def test_widen_pairs_layout():
    """Per tile of up to 4 columns of 16 channels, each column's groups of 4 taps one after the
    other, a group as taps 0, 1 of the 16 channels as int16 pairs, then taps 2, 3: hand-indexed
    from the [Cout, K] matrix (6 columns: a tile of 4, then one of 2; K padded to 12)."""
    rng = np.random.default_rng(5)
    w2d = rng.integers(-128, 128, (90, 10)).astype(np.int8)
    wide = widen_pairs(pack_weights(w2d).data, 90)
    assert wide.dtype == np.int16 and wide.size == 6 * 3 * 64
    full = np.zeros((96, 12), np.int16)
    full[:90, :10] = w2d
    at = 0
    for col in range(6):
        for g in range(3):
            block = wide[at:at + 64].reshape(2, 16, 2)
            for pair in range(2):
                taps = slice(4 * g + 2 * pair, 4 * g + 2 * pair + 2)
                np.testing.assert_array_equal(block[pair], full[16 * col:16 * col + 16, taps])
            at += 64


def _check_threads(plan, x, out_shape, want):
    """The plan's output with 1, 2 and 3 threads equals ``want``."""
    for n in (1, 2, 3):
        out = np.zeros(out_shape, want.dtype)
        with threads.num_threads(n):
            plan.bind(x, out)()
        np.testing.assert_array_equal(out, want, err_msg=f"{n} threads")


_CONV_CASES = [
    # (x shape, cout, kernel, stride, dilation, padding)
    ((1, 7, 9, 16), 96, 1, 1, 1, "valid"),     # 1x1 on input rows (K = 16, 63 pixels)
    ((2, 5, 5, 24), 40, 1, 1, 1, "valid"),     # a batch; K and Cout not multiples of 16
    ((1, 3, 3, 320), 200, 1, 1, 1, "valid"),   # long K, 9 pixels (a partial pass of 6)
    ((1, 11, 13, 3), 32, 3, 2, 1, "same"),     # a first layer: padded rows, stride 2
    ((2, 6, 7, 8), 24, 3, 1, 1, "same"),       # overlapping patches share their runs
    ((1, 9, 9, 5), 17, 3, 1, 2, "same"),       # dilated: gathered patches
    ((1, 8, 10, 12), 16, 1, 2, 1, "valid"),    # 1x1 stride 2: runs with gaps between
]


def _conv_case(rng, dtype, wdtype, shape, cout, k, stride, dil, padding):
    x = random_q(rng, dtype, shape)
    w = random_q(rng, wdtype, (cout, k, k, shape[3]))
    bias = rng.integers(-30000, 30000, cout).astype(np.int32)
    pad = (k - 1) * dil if padding == "same" else 0
    g = dict(stride_h=stride, stride_w=stride, dilation_h=dil, dilation_w=dil,
             pad_top=pad // 2, pad_bottom=pad - pad // 2, pad_left=pad // 2,
             pad_right=pad - pad // 2, fuse=int(rng.integers(0, 4)))
    q = dict(in_scale=0.03, in_zp=int(rng.integers(-20, 20)) + (128 if dtype == np.uint8 else 0),
             out_scale=0.9, out_zp=5,
             w_scales=rng.uniform(0.002, 0.02, cout) if wdtype == np.int8 else [0.01],
             w_zp=0 if wdtype == np.int8 else 131)
    return x, w, bias, g, q


@on_avx2
@pytest.mark.parametrize("dtype,wdtype", [(np.uint8, np.uint8), (np.int8, np.int8),
                                          (np.uint8, np.int8)])
@pytest.mark.parametrize("case", _CONV_CASES)
def test_conv_pairs_equal_reference(case, dtype, wdtype, monkeypatch):
    """CONV_2D through the pair-lane kernel (int16 filter) equals the reference kernel, with
    1-3 threads (parts of pixels or channels): 1x1 and windowed, int8 input widened signed,
    uint8 weights with a zero point (the input-sum term)."""
    monkeypatch.setattr(threads, "MIN_PARALLEL_WORK", 0)
    rng = np.random.default_rng(zlib.crc32(repr((case, dtype, wdtype)).encode()))
    x, w, bias, g, q = _conv_case(rng, dtype, wdtype, *case)
    plan, out_shape = conv.prepare_conv_2d(x.shape, dtype, w, bias, **g, **q)
    assert plan.wpk.dtype == np.int16
    want = ref_conv.conv_2d(x, w, bias, **g, **q)
    _check_threads(plan, x, out_shape, want)


_DW_SHAPES = [((1, 9, 11, 16), "same"), ((2, 5, 4, 40), "same"), ((1, 6, 7, 24), "valid"),
              ((1, 1, 1, 8), "same"), ((1, 3, 20, 96), "same"), ((1, 8, 9, 16), "valid")]


@on_avx2
@pytest.mark.parametrize("dtype,wdtype", [(np.uint8, np.uint8), (np.int8, np.int8)])
@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("shape,padding", _DW_SHAPES)
def test_depthwise_pairs_equal_reference(shape, padding, stride, dtype, wdtype, monkeypatch):
    """3x3 DEPTHWISE_CONV_2D of stride 1 and 2 through kernels/_dw_pairs.py equals the
    reference kernel with 1-3 threads: TFLite's SAME padding (at stride 2 more after than
    before, none before for even sizes) and VALID, odd and even sizes, a one-pixel image,
    channels not a multiple of 16, uint8 weights with a zero point (9-bit products), int8
    input read as uint8 + 128."""
    monkeypatch.setattr(threads, "MIN_PARALLEL_WORK", 0)
    rng = np.random.default_rng(zlib.crc32(repr((shape, padding, stride, dtype)).encode()))
    c = shape[3]
    x = random_q(rng, dtype, shape)
    w = random_q(rng, wdtype, (1, 3, 3, c))
    bias = rng.integers(-5000, 5000, c).astype(np.int32)
    pt, pb, _ = tflite_padding(shape[1], 3, stride, 1, padding == "same")
    pl, pr, _ = tflite_padding(shape[2], 3, stride, 1, padding == "same")
    g = dict(depth_multiplier=1, stride_h=stride, stride_w=stride, pad_top=pt, pad_bottom=pb,
             pad_left=pl, pad_right=pr, fuse=int(rng.integers(0, 4)))
    q = dict(in_scale=0.05, in_zp=int(rng.integers(-10, 10)) + (128 if dtype == np.uint8 else 0),
             out_scale=0.4, out_zp=-3 if dtype == np.int8 else 120,
             w_scales=rng.uniform(0.005, 0.02, c) if wdtype == np.int8 else [0.01],
             w_zp=0 if wdtype == np.int8 else 140)
    plan, out_shape = depthwise.prepare_depthwise_conv_2d(x.shape, dtype, w, bias, **g, **q)
    assert plan.pairs
    want = ref_depthwise.depthwise_conv_2d(x, w, bias, **g, **q)
    _check_threads(plan, x, out_shape, want)


_DW_FLOAT_SHAPES = _DW_SHAPES + [((1, 7, 9, 12), "same"), ((1, 14, 14, 128), "same")]


@on_avx2
@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("shape,padding", _DW_FLOAT_SHAPES)
def test_depthwise_float_rows_of_8_lanes(shape, padding, stride, monkeypatch):
    """Float 3x3 DEPTHWISE_CONV_2D on AVX2 runs its rows 8 channels at a time (the last 4 of 12
    channels masked), stride 1 two rows at a time (a ring of 4 input rows; an odd last row,
    of an image or of a thread's part, alone), with 1-3 threads (parts of rows or channels):
    each output within rounding of the reference's 9-term sum (fused multiply-adds), and the
    same bits whatever rows were paired."""
    monkeypatch.setattr(threads, "MIN_PARALLEL_WORK", 0)
    rng = np.random.default_rng(zlib.crc32(repr((shape, padding, stride)).encode()))
    c = shape[3]
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((1, 3, 3, c)).astype(np.float32)
    bias = rng.standard_normal(c).astype(np.float32)
    pt, pb, _ = tflite_padding(shape[1], 3, stride, 1, padding == "same")
    pl, pr, _ = tflite_padding(shape[2], 3, stride, 1, padding == "same")
    g = dict(depth_multiplier=1, stride_h=stride, stride_w=stride, pad_top=pt, pad_bottom=pb,
             pad_left=pl, pad_right=pr)
    plan, out_shape = depthwise.prepare_depthwise_conv_2d(x.shape, np.float32, w, bias, **g)
    assert plan.dims[6] == (4 if stride == 1 else 3)   # the ring's rows
    want = ref_depthwise.depthwise_conv_2d(x, w, bias, **g)
    magnitude = ref_depthwise.depthwise_conv_2d(np.abs(x), np.abs(w), np.abs(bias), **g)
    first = None
    for n in (1, 2, 3):
        out = np.full(out_shape, np.nan, np.float32)
        with threads.num_threads(n):
            plan.bind(x, out)()
        assert_float_sums_close(out, want, magnitude, 10)
        first = out if first is None else first
        np.testing.assert_array_equal(out, first, err_msg=f"{n} threads")


@pytest.mark.parametrize("cout", [8, 16, 40, 1001])
@pytest.mark.parametrize("pixels", [1, 7, 20, 49, 196])
def test_float_tiles_and_classifier(cout, pixels, monkeypatch):
    """Float 1x1 convolutions: one pixel (a classifier: the GEMV loops) or more. AVX2: passes
    of 6 and 5 pixels x 16 channels, pixels looped inside: 7 = a partial pass of 6, 20 = 4
    of 5, 49 = 5 of 5 + 4 of 6, 196 = 2 of 5 + 31 of 6; the last <= 8 channels (cout 8, 40)
    in passes of 12 pixels, then of 8: 20 = 12 + 8, 49 = 4 * 12 + 1, 196 = 16 * 12 + 4.
    AVX-512 (this test runs on both): passes of 8 pixels x 16 or 32 channels (whole ones
    stored without tests), 4 x 64 for wider tiles. Each sum within rounding of the
    reference's (fused multiply-adds, see assert_float_sums_close), and the same bits with
    1-3 threads (parts of pixels or channels)."""
    monkeypatch.setattr(threads, "MIN_PARALLEL_WORK", 0)
    rng = np.random.default_rng(cout + pixels)
    x = rng.standard_normal((1, 1, pixels, 96)).astype(np.float32)
    w = rng.standard_normal((cout, 1, 1, 96)).astype(np.float32)
    bias = rng.standard_normal(cout).astype(np.float32)
    g = dict(stride_h=1, stride_w=1, pad_top=0, pad_bottom=0, pad_left=0, pad_right=0)
    plan, out_shape = conv.prepare_conv_2d(x.shape, x.dtype, w, bias, **g)
    # (the matrix-vector loops need a SIMD mode: not with the JIT off)
    assert plan.gemv == (pixels == 1 and _jit.SIMD_MODE in ("avx2", "avx512vnni"))
    got = plan.run(x, np.empty(out_shape, np.float32))
    magnitude = ref_conv.conv_2d(np.abs(x), np.abs(w), np.abs(bias), **g)
    assert_float_sums_close(got, ref_conv.conv_2d(x, w, bias, **g), magnitude, 97)
    _check_threads(plan, x, out_shape, got)


@on_avx2
@pytest.mark.parametrize("shape", [(1, 23, 29, 3), (2, 10, 11, 3)])
def test_float_first_layer_of_8_channels(shape, monkeypatch):
    """A float first layer on AVX2 (3x3, stride 2, SAME, 3 -> 8 channels: MobileNet v1 0.25's)
    read in place (InPlaceFloatPlan), its 8 channels in passes of 12 (``_fh12x8_3x9``, its
    loop counts constant) and 8 pixels: each sum within rounding of the reference's 27
    terms, the same bits with 1-3 threads and as the general ``_fh12x8``."""
    from nnsim.kernels import _gemm_float
    monkeypatch.setattr(threads, "MIN_PARALLEL_WORK", 0)
    rng = np.random.default_rng(shape[1])
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(8).astype(np.float32)
    pt, pb, _ = tflite_padding(shape[1], 3, 2, 1, True)
    pl, pr, _ = tflite_padding(shape[2], 3, 2, 1, True)
    g = dict(stride_h=2, stride_w=2, pad_top=pt, pad_bottom=pb, pad_left=pl, pad_right=pr)
    plan, out_shape = conv.prepare_conv_2d(x.shape, x.dtype, w, bias, **g)
    got = plan.run(x, np.empty(out_shape, np.float32))
    magnitude = ref_conv.conv_2d(np.abs(x), np.abs(w), np.abs(bias), **g)
    assert_float_sums_close(got, ref_conv.conv_2d(x, w, bias, **g), magnitude, 28)
    _check_threads(plan, x, out_shape, got)
    monkeypatch.setattr(_gemm_float, "_fh12x8_3x9", _gemm_float._fh12x8)
    general, _ = conv.prepare_conv_2d(x.shape, x.dtype, w, bias, **g)
    np.testing.assert_array_equal(general.run(x, np.empty(out_shape, np.float32)), got)


def test_copy_run_copies_each_length_exactly():
    """_copy_run (the padded copies' and rings' row copy: 64-byte vectors, then on AVX2 16-byte
    ones, the last of them overlapping, then bytes) writes ``src ^ flip`` to exactly the bytes
    asked for, for every length 0-200 and unaligned offsets; here and in the Haswell child."""
    rng = np.random.default_rng(11)
    src = rng.integers(0, 256, 512).astype(np.uint8)
    for flip in (0, 128):
        for size in range(201):
            s, d = int(rng.integers(0, 64)), int(rng.integers(0, 64))
            dst = np.full(512, 7, np.uint8)
            _copy_run(src, s, dst, d, size, np.uint8(flip))
            want = np.full(512, 7, np.uint8)
            want[d:d + size] = src[s:s + size] ^ np.uint8(flip)
            np.testing.assert_array_equal(dst, want, err_msg=f"size {size} flip {flip}")


@pytest.mark.skipif(AVX2 or not _jit.JIT_ENABLED, reason="runs the tests above directly")
def test_pair_kernels_compiled_for_haswell():
    """The tests above in a child compiling for Haswell (AVX2 + FMA, no AVX-512)."""
    env = dict(os.environ, NUMBA_CPU_NAME="haswell")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(Path(__file__).relative_to(root))], cwd=root, env=env,
                          capture_output=True, text=True, timeout=1500, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    want = (1 + 3 * len(_CONV_CASES) + 2 * 2 * len(_DW_SHAPES) + 2 * len(_DW_FLOAT_SHAPES)
            + 4 * 5 + 3)   # all the others
    assert re.match(rf"{want} passed, 1 skipped\b", summary), summary
