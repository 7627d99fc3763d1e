"""TRANSPOSE_CONV_2D: hand case, numba == reference (exact on integers), LiteRT (float)."""

from __future__ import annotations

import numpy as np
import pytest

from .kernel_testutil import assert_same, random_q, requires_litert, tflite_padding
from .litert_extra import T, run_op
from nnsim.kernels import transpose_conv
from nnsim.kernels.reference import transpose_conv as ref


def test_hand_case_stride_2():
    x = np.array([1, 2], np.float32).reshape(1, 1, 2, 1)
    w = np.array([1, 10, 100], np.float32).reshape(1, 1, 3, 1)
    out = transpose_conv.transpose_conv_2d(x, w, np.float32([0.5]), out_h=1, out_w=5,
                                           stride_h=1, stride_w=2, pad_top=0, pad_left=0)
    assert out.ravel().tolist() == [1.5, 10.5, 102.5, 20.5, 200.5]


GEOMETRIES = [(2, 2, 0, 0, 7, 8), (2, 1, 1, 1, 4, 5), (1, 3, 0, 2, 3, 6)]


@pytest.mark.parametrize("sh,sw,pt,pl,oh,ow", GEOMETRIES)
@pytest.mark.parametrize("kind", ["uint8", "int8_per_channel", "uint8_per_channel", "float"])
def test_numba_equals_reference(sh, sw, pt, pl, oh, ow, kind, rng):
    g = dict(out_h=oh, out_w=ow, stride_h=sh, stride_w=sw, pad_top=pt, pad_left=pl, fuse=1)
    if kind == "float":
        x = rng.normal(size=(2, 3, 4, 3)).astype(np.float32)
        w = rng.normal(size=(5, 3, 2, 3)).astype(np.float32)
        b = rng.normal(size=5).astype(np.float32)
        assert_same(transpose_conv.transpose_conv_2d(x, w, b, **g),
                    ref.transpose_conv_2d(x, w, b, **g), rtol=1e-5, atol=1e-5)
        return
    dtype = np.int8 if kind.startswith("int8") else np.uint8
    x = random_q(rng, dtype, (2, 3, 4, 3))
    per_channel = kind.endswith("per_channel")
    w = random_q(rng, np.int8 if per_channel else dtype, (5, 3, 2, 3))
    scales = rng.uniform(0.005, 0.02, 5) if per_channel else [0.013]
    q = dict(in_scale=0.05, in_zp=int(x.mean()), w_scales=scales,
             w_zp=0 if per_channel else int(w.mean()), out_scale=0.4, out_zp=3)
    b = rng.integers(-3000, 3000, 5).astype(np.int32)
    assert_same(transpose_conv.transpose_conv_2d(x, w, b, **g, **q),
                ref.transpose_conv_2d(x, w, b, **g, **q))


@requires_litert
@pytest.mark.parametrize("same", [False, True])
def test_float_matches_litert(same, rng):
    x = rng.normal(size=(1, 3, 4, 2)).astype(np.float32)
    w = rng.normal(size=(3, 3, 2, 2)).astype(np.float32)
    out_h, out_w = (6, 8) if same else (7, 8)
    pt, _, _ = tflite_padding(out_h, 3, 2, 1, same)
    pl, _, _ = tflite_padding(out_w, 2, 2, 1, same)
    want = run_op("TRANSPOSE_CONV", [T((4,), np.int32, data=np.int32([1, out_h, out_w, 3])),
                                     T(w.shape, np.float32, data=w), T(x.shape, np.float32)],
                  [T((1, out_h, out_w, 3), np.float32)], [x],
                  {"Padding": 0 if same else 1, "StrideW": 2, "StrideH": 2})[0]
    got = transpose_conv.transpose_conv_2d(x, w, None, out_h=out_h, out_w=out_w, stride_h=2,
                                           stride_w=2, pad_top=pt, pad_left=pl)
    assert_same(got, want, rtol=1e-5, atol=1e-6)
