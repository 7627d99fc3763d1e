"""SPACE_TO_DEPTH, DEPTH_TO_SPACE, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND: hand cases,
fast == reference (exact), round trips."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .kernel_testutil import assert_same
from nnsim.kernels import space
from nnsim.kernels.reference import space as ref_space


def test_space_to_depth_hand_case():
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    out = space.space_to_depth(x, 2)
    assert out.shape == (1, 2, 2, 4)
    assert out[0, 0, 0].tolist() == [0, 1, 4, 5]
    assert out[0, 1, 1].tolist() == [10, 11, 14, 15]


def test_space_to_batch_pads_with_the_given_value():
    x = np.array([1, 2, 3, 4], np.uint8).reshape(1, 2, 2, 1)
    out = space.space_to_batch_nd(x, [2, 2], [[1, 1], [0, 0]], pad_value=9)
    assert out.shape == (4, 2, 1, 1)
    assert out.ravel().tolist() == [9, 3, 9, 4, 1, 9, 2, 9]


@pytest.mark.parametrize("call", [
    lambda: space.space_to_depth(np.zeros((1, 3, 4, 1)), 2),
    lambda: space.depth_to_space(np.zeros((1, 2, 2, 3)), 2),
    lambda: space.batch_to_space_nd(np.zeros((3, 1, 1, 1)), [2, 1]),
    lambda: space.space_to_batch_nd(np.zeros((1, 3, 3, 1)), [2, 2], [[0, 0], [0, 0]]),
    lambda: space.space_to_depth(np.zeros((1, 2, 2, 1)), 0),
])
def test_bad_geometry_raises(call):
    with pytest.raises(ValueError):
        call()


@st.composite
def cases(draw):
    dtype = draw(st.sampled_from([np.uint8, np.int8, np.float32, np.float16]))
    bh, bw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    h, w = bh * draw(st.integers(1, 3)), bw * draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**31 - 1))
    x = np.random.default_rng(seed).integers(-100, 100, (n, h, w, c)).astype(dtype)
    return x, bh, bw


@settings(max_examples=40, deadline=None)
@given(cases())
def test_fast_equals_reference(case):
    x, bh, bw = case
    if bh == bw and x.shape[1] % bh == 0:
        d = space.space_to_depth(x, bh)
        assert_same(d, ref_space.space_to_depth(x, bh))
        assert_same(space.depth_to_space(d, bh), ref_space.depth_to_space(d, bh))
        assert_same(space.depth_to_space(d, bh), x)
    pads = [[0, 0], [0, 0]]
    b = space.space_to_batch_nd(x, [bh, bw], pads, pad_value=7)
    assert_same(b, ref_space.space_to_batch_nd(x, [bh, bw], pads, pad_value=7))
    assert_same(space.batch_to_space_nd(b, [bh, bw]), ref_space.batch_to_space_nd(b, [bh, bw]))
    assert_same(space.batch_to_space_nd(b, [bh, bw]), x)


@settings(max_examples=20, deadline=None)
@given(cases(), st.integers(0, 2), st.integers(0, 2))
def test_space_to_batch_with_padding(case, top, left):
    x, bh, bw = case
    pads = [[top, (-(x.shape[1] + top)) % bh], [left, (-(x.shape[2] + left)) % bw]]
    assert_same(space.space_to_batch_nd(x, [bh, bw], pads, pad_value=3),
                ref_space.space_to_batch_nd(x, [bh, bw], pads, pad_value=3))
