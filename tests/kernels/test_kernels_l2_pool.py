"""L2_POOL_2D: hand case, numba == reference, LiteRT."""

from __future__ import annotations

import numpy as np
import pytest

from .kernel_testutil import assert_same, requires_litert, tflite_padding
from .litert_extra import T, run_op
from nnsim.kernels import l2_pool
from nnsim.kernels.reference import l2_pool as ref


def _geometry(fh, fw, sh=1, sw=1, pads=(0, 0, 0, 0), fuse=0):
    return dict(filter_h=fh, filter_w=fw, stride_h=sh, stride_w=sw, pad_top=pads[0],
                pad_bottom=pads[1], pad_left=pads[2], pad_right=pads[3], fuse=fuse)


def test_hand_case_counts_in_image_taps_only():
    x = np.array([3, 4, 0, 0], np.float32).reshape(1, 2, 2, 1)
    out = l2_pool.l2_pool_2d(x, **_geometry(2, 2, pads=(1, 0, 1, 0)))
    np.testing.assert_allclose(out.ravel(), [3, np.sqrt(12.5), np.sqrt(4.5), np.sqrt(6.25)])
    assert l2_pool.l2_pool_2d(x, **_geometry(2, 2, fuse=2)).item() == 1.0


@pytest.mark.parametrize("fh,fw,sh,sw,pads", [(2, 2, 2, 2, (0, 0, 0, 0)), (3, 2, 1, 2, (1, 1, 0, 1)),
                                               (1, 3, 1, 1, (0, 0, 1, 1))])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_numba_equals_reference(fh, fw, sh, sw, pads, dtype, rng):
    x = rng.normal(size=(2, 5, 6, 3)).astype(dtype)
    g = _geometry(fh, fw, sh, sw, pads)
    assert_same(l2_pool.l2_pool_2d(x, **g), ref.l2_pool_2d(x, **g),
                rtol=1e-6 if dtype == np.float32 else 1e-3)


@requires_litert
@pytest.mark.parametrize("same", [False, True])
def test_matches_litert(same, rng):
    x = rng.normal(size=(1, 7, 6, 2)).astype(np.float32)
    top, bottom, oh = tflite_padding(7, 3, 2, 1, same)
    left, right, ow = tflite_padding(6, 2, 2, 1, same)
    want = run_op("L2_POOL_2D", [T(x.shape, np.float32)], [T((1, oh, ow, 2), np.float32)], [x],
                  {"Padding": 0 if same else 1, "StrideW": 2, "StrideH": 2, "FilterWidth": 2,
                   "FilterHeight": 3})[0]
    got = l2_pool.l2_pool_2d(x, **_geometry(3, 2, 2, 2, (top, bottom, left, right)))
    assert_same(got, want, rtol=1e-6)
