"""RESIZE_NEAREST_NEIGHBOR and the bilinear float template (NNAPI's int8 path): numba ==
reference, LiteRT (reference kernels) for nearest neighbour, hand cases."""

from __future__ import annotations

import numpy as np
import pytest

from .kernel_testutil import assert_same, random_q, requires_litert
from .litert_extra import T, run_op
from nnsim.kernels import resize, resize_image
from nnsim.kernels.reference import resize_image as ref

FLAGS = [(False, False), (True, False), (False, True)]
SIZES = [(6, 7), (2, 3), (1, 1), (7, 11), (3, 5)]


@pytest.mark.parametrize("align,half", FLAGS)
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.float32])
def test_numba_equals_reference(align, half, size, dtype, rng):
    x = random_q(rng, dtype, (2, 3, 5, 2)) if dtype != np.float32 else \
        rng.normal(size=(2, 3, 5, 2)).astype(np.float32)
    kw = dict(align_corners=align, half_pixel_centers=half)
    got = resize_image.resize_bilinear_template(x, *size, **kw)
    assert_same(got, ref.resize_bilinear_template(x, *size, **kw), rtol=1e-6)
    assert_same(resize_image.resize_nearest_neighbor(x, *size, **kw),
                ref.resize_nearest_neighbor(x, *size, **kw))
    if dtype != np.int8:  # the same float template as nnsim.kernels.resize
        assert np.array_equal(got, resize.resize_bilinear(x, *size, **kw))


def test_int8_template_truncates_toward_zero():
    # 2 -> 3 columns, values -3 and 0: middle = -1.5 + 0.5 = -1.0 -> -1; [-3, 0] at 0.25 steps
    x = np.array([-3, 0], np.int8).reshape(1, 1, 2, 1)
    out = resize_image.resize_bilinear_template(x, 1, 4)
    # sources 0, 0.5, 1, 1.5 -> -3+.5, -1.5+.5, 0+.5, 0+.5 -> trunc: -2, -1, 0, 0
    assert out.ravel().tolist() == [-2, -1, 0, 0]


def test_nearest_hand_case():
    x = np.arange(4, dtype=np.uint8).reshape(1, 1, 4, 1)
    assert resize_image.resize_nearest_neighbor(x, 1, 2).ravel().tolist() == [0, 2]
    assert resize_image.resize_nearest_neighbor(x, 1, 3, align_corners=True).ravel().tolist() \
        == [0, 2, 3]
    assert resize_image.resize_nearest_neighbor(x, 1, 8, half_pixel_centers=True)\
        .ravel().tolist() == [0, 0, 1, 1, 2, 2, 3, 3]


def test_both_flags_rejected():
    with pytest.raises(ValueError):
        resize_image.resize_nearest_neighbor(np.zeros((1, 2, 2, 1)), 3, 3, align_corners=True,
                                             half_pixel_centers=True)


@requires_litert
@pytest.mark.parametrize("align,half", FLAGS)
@pytest.mark.parametrize("size", SIZES)
def test_nearest_matches_litert(align, half, size, rng):
    x = random_q(rng, np.uint8, (1, 3, 5, 2))
    want = run_op("RESIZE_NEAREST_NEIGHBOR",
                  [T(x.shape, np.uint8, 0.5, 0), T((2,), np.int32, data=np.int32(size))],
                  [T((1, *size, 2), np.uint8, 0.5, 0)], [x],
                  {"AlignCorners": align, "HalfPixelCenters": half})[0]
    assert_same(resize_image.resize_nearest_neighbor(x, *size, align_corners=align,
                                                     half_pixel_centers=half), want)
