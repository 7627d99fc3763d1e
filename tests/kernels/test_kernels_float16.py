"""float16 tensors are computed in float32 and rounded back (NNAPI CPU executor behaviour)."""

from __future__ import annotations

import numpy as np
import pytest

from nnsim.kernels import (
    activations,
    conv,
    depthwise,
    elementwise,
    fully_connected,
    pad,
    pooling,
    quantize,
    reduce,
    reshape,
    softmax,
)

RNG = np.random.default_rng(16)
X = RNG.standard_normal((1, 5, 6, 4)).astype(np.float16)
W = RNG.standard_normal((3, 3, 3, 4)).astype(np.float16)
B = RNG.standard_normal(3).astype(np.float16)
WD = RNG.standard_normal((1, 3, 3, 8)).astype(np.float16)
BD = RNG.standard_normal(8).astype(np.float16)
GEO = dict(stride_h=1, stride_w=2, pad_top=1, pad_bottom=1, pad_left=0, pad_right=1, fuse=1)
POOL = dict(filter_h=2, filter_w=3, stride_h=1, stride_w=1, pad_top=0, pad_bottom=1, pad_left=1,
            pad_right=1, fuse=0)

CASES = {
    "conv": lambda a: conv.conv_2d(a[0], a[1], a[2], **GEO),
    "depthwise": lambda a: depthwise.depthwise_conv_2d(a[0], a[3], a[4], depth_multiplier=2, **GEO),
    "fully_connected": lambda a: fully_connected.fully_connected(
        a[0].reshape(5, 24), a[1].reshape(3, 36)[:, :24], a[2], fuse=2),
    "average_pool": lambda a: pooling.average_pool_2d(a[0], **POOL),
    "max_pool": lambda a: pooling.max_pool_2d(a[0], **POOL),
    "add": lambda a: elementwise.add(a[0], a[0][:, :1], fuse=3),
    "mul": lambda a: elementwise.mul(a[0], a[0][..., :1]),
    "relu6": lambda a: activations.relu6(a[0] * 4),
    "logistic": lambda a: activations.logistic(a[0]),
    "softmax": lambda a: softmax.softmax(a[0], 0.7, axis=2),
    "mean": lambda a: reduce.mean(a[0], [1, 2], True),
    "concatenation": lambda a: reshape.concatenation([a[0], a[0]], 3),
    "pad": lambda a: pad.pad(a[0], [[0, 0], [1, 0], [0, 2], [0, 0]]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_float16_matches_float32_rounded(name):
    fn = CASES[name]
    arrays16 = (X, W, B, WD, BD)
    out16 = fn(arrays16)
    out32 = fn(tuple(a.astype(np.float32) for a in arrays16))
    assert out16.dtype == np.float16
    assert np.array_equal(out16, out32.astype(np.float16), equal_nan=True)


def test_quantize_float16_input():
    x = np.array([0.5, -1.25, 3.0], np.float16)
    out = quantize.quantize(x, out_scale=0.25, out_zp=10, out_dtype=np.uint8)
    assert out.tolist() == [12, 5, 22]
