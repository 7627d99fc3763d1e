"""BATCH_MATMUL, REDUCE_PROD / ALL / ANY, TOPK_V2 and the data-movement kernels (TILE, FILL,
PACK, REVERSE, CHANNEL_SHUFFLE, MIRROR_PAD): numba == reference, and independent oracles."""

from __future__ import annotations

import numpy as np
import pytest

from .kernel_testutil import assert_same, random_q
from nnsim.kernels import batch_matmul as bmm
from nnsim.kernels import movement, reduce_ext
from nnsim.kernels.reference import batch_matmul as ref_bmm
from nnsim.kernels.reference import reduce_ext as ref_reduce
from nnsim.kernels.topk import topk

SHAPES = [((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 1)), ((2, 1, 3, 7), (1, 3, 7, 2)),
          ((1, 1), (1, 1)), ((2, 2, 5, 3), (2, 1, 3, 4))]


def _operands(rng, dtype, shapes, adj_x, adj_y):
    ls, rs = (list(s) for s in shapes)
    if adj_x:
        ls[-2:] = ls[-2:][::-1]
    if adj_y:
        rs[-2:] = rs[-2:][::-1]
    if dtype == np.int8:
        return random_q(rng, dtype, ls), random_q(rng, dtype, rs)
    if dtype == np.int32:
        return (rng.integers(-2 ** 31, 2 ** 31, ls).astype(np.int32),
                rng.integers(-2 ** 31, 2 ** 31, rs).astype(np.int32))
    return rng.normal(size=ls).astype(dtype), rng.normal(size=rs).astype(dtype)


@pytest.mark.parametrize("adj", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_batch_matmul_fast_equals_reference(dtype, shapes, adj, rng):
    lhs, rhs = _operands(rng, dtype, shapes, *adj)
    got = bmm.batch_matmul(lhs, rhs, *adj)
    want = ref_bmm.batch_matmul(lhs, rhs, *adj)
    assert got.dtype == want.dtype == dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)   # same float order: bit-exact


@pytest.mark.parametrize("rounding", ["double", "single"])
@pytest.mark.parametrize("adj", [(False, False), (True, True)])
@pytest.mark.parametrize("shapes", SHAPES)
def test_batch_matmul_int8_fast_equals_reference(shapes, adj, rounding, rng):
    lhs, rhs = _operands(rng, np.int8, shapes, *adj)
    q = dict(lhs_scale=0.02, lhs_zp=-3, rhs_scale=0.013, rhs_zp=5, out_scale=0.4, out_zp=-7,
             rounding=rounding)
    assert_same(bmm.batch_matmul(lhs, rhs, *adj, **q), ref_bmm.batch_matmul(lhs, rhs, *adj, **q))


def test_batch_matmul_float32_matches_matmul_and_shapes():
    rng = np.random.default_rng(1)
    lhs, rhs = rng.normal(size=(3, 2, 5)).astype(np.float32), rng.normal(size=(1, 5, 4))
    got = bmm.batch_matmul(lhs, rhs.astype(np.float32))
    np.testing.assert_allclose(got, np.matmul(lhs, rhs), rtol=1e-5, atol=1e-6)
    assert bmm.batch_matmul_shape((2, 1, 3, 4), (5, 4, 6)) == (2, 5, 3, 6)
    with pytest.raises(ValueError):
        bmm.batch_matmul_shape((3, 4), (3, 4))
    with pytest.raises(ValueError):
        bmm.batch_matmul_shape((2, 3, 4), (3, 4, 4))


def test_batch_matmul_int8_rounding_rules_differ_on_ties():
    # acc +-6 with multiplier 0.25 (M = 2**30, shift -1) is exactly +-1.5: the double rounding
    # divides by 2 rounding ties away from zero (2, -2), single rounding rounds half up (2, -1)
    lhs, rhs = np.array([[1], [-1]], np.int8), np.array([[6]], np.int8)
    q = dict(lhs_scale=0.25, rhs_scale=1.0, out_scale=1.0)
    assert bmm.batch_matmul(lhs, rhs, **q).ravel().tolist() == [2, -2]
    assert bmm.batch_matmul(lhs, rhs, rounding="single", **q).ravel().tolist() == [2, -1]


# -- REDUCE_PROD / ALL / ANY ---------------------------------------------------------------------
AXES = [([1], False), ([0, 2], True), ([-1, 0, 2, 1], False), ([], False), ([2, 2], True)]


@pytest.mark.parametrize("axes,keep", AXES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_reduce_prod_fast_equals_reference(axes, keep, dtype, rng):
    x = rng.uniform(0.5, 1.5, size=(2, 3, 4)).astype(dtype)
    x[0, 1, 2], x[1, 0, 0], x[1, 2, 3] = 0.0, np.inf, -0.0
    got, want = reduce_ext.reduce_prod(x, axes, keep), ref_reduce.reduce_prod(x, axes, keep)
    assert got.dtype == want.dtype == dtype
    np.testing.assert_array_equal(got, want)
    assert not np.isnan(got).any()


@pytest.mark.parametrize("axes,keep", AXES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
def test_reduce_prod_without_guard_fast_equals_reference(axes, keep, dtype, rng):
    if dtype == np.float32:
        x = rng.uniform(0.5, 1.5, size=(2, 3, 4)).astype(dtype)
        x[0, 1, 2], x[1, 0, 0] = 0.0, np.inf
    else:   # large factors: int32 products wrap around
        x = rng.integers(-70000, 70000, size=(2, 3, 4)).astype(dtype)
    got = reduce_ext.reduce_prod(x, axes, keep, zero_guard=False)
    want = ref_reduce.reduce_prod(x, axes, keep, zero_guard=False)
    assert got.dtype == want.dtype == dtype
    np.testing.assert_array_equal(got, want)


def test_reduce_prod_guard_differs_from_tflite_on_zero_times_inf():
    x = np.array([0.0, np.inf], np.float32)
    assert reduce_ext.reduce_prod(x, [0]).tolist() == [0.0]
    assert np.isnan(reduce_ext.reduce_prod(x, [0], zero_guard=False)).all()
    x = np.array([2 ** 16, 2 ** 16, 3], np.int32)   # 2**32 wraps to 0 in int32
    assert reduce_ext.reduce_prod(x, [0], zero_guard=False).tolist() == [0]


@pytest.mark.parametrize("axes,keep", AXES)
def test_reduce_all_any_fast_equals_numpy(axes, keep, rng):
    x = rng.random(size=(3, 2, 4)) < 0.7
    assert_same(reduce_ext.reduce_all(x, axes, keep), ref_reduce.reduce_all(x, axes, keep))
    assert_same(reduce_ext.reduce_any(x, axes, keep), ref_reduce.reduce_any(x, axes, keep))
    assert reduce_ext.reduce_all(np.ones((2, 0), bool), [1]).tolist() == [True, True]
    assert reduce_ext.reduce_any(np.ones((2, 0), bool), [1]).tolist() == [False, False]


# -- TOPK_V2 ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8, np.int8])
def test_topk_against_sorted_pairs(dtype, rng):
    x = rng.integers(0, 6, size=(3, 2, 9)).astype(dtype)   # many ties
    for k in (1, 4, 9):
        values, indices = topk(x, k)
        tf_values, tf_indices = topk(x, k, ties="tflite")
        for row in np.ndindex(x.shape[:-1]):
            pairs = sorted(((x[row][i], i) for i in range(9)), reverse=True)[:k]
            assert indices[row].tolist() == [i for _, i in pairs]
            tf_pairs = sorted(range(9), key=lambda i: (-float(x[row][i]), i))[:k]
            assert tf_indices[row].tolist() == tf_pairs
        assert_same(values, np.take_along_axis(x, indices.astype(np.int64), -1))
        assert_same(tf_values, values)


# -- data movement ------------------------------------------------------------------------------
@pytest.mark.parametrize("mode,np_mode", [(movement.MIRROR_PAD_REFLECT, "reflect"),
                                          (movement.MIRROR_PAD_SYMMETRIC, "symmetric")])
def test_mirror_pad_equals_numpy_pad(mode, np_mode, rng):
    x = rng.integers(-100, 100, size=(3, 4, 2)).astype(np.int32)
    limit = np.asarray(x.shape) - (mode == movement.MIRROR_PAD_REFLECT)
    for _ in range(10):
        pads = rng.integers(0, limit[:, None] + 1, size=(3, 2))
        assert_same(movement.mirror_pad(x, pads, mode), np.pad(x, pads, mode=np_mode))
    with pytest.raises(ValueError):
        movement.mirror_pad(x, [[0, 0], [0, 0], [0, int(limit[2]) + 1]], mode)


def test_channel_shuffle_against_formula(rng):
    x = rng.normal(size=(2, 12, 3)).astype(np.float32)
    for groups in (1, 2, 3, 4, 6, 12):
        n = 12 // groups
        out = movement.channel_shuffle(x, groups, -2)
        for i in range(n):
            for j in range(groups):
                np.testing.assert_array_equal(out[:, i * groups + j], x[:, j * n + i])


def test_tile_pack_reverse_fill():
    x = np.arange(6, dtype=np.int8).reshape(2, 3)
    assert_same(movement.tile(x, [2, 0]), np.zeros((4, 0), np.int8))
    assert_same(movement.tile(x, [1, 2]), np.concatenate([x, x], axis=1))
    assert_same(movement.pack([x, x + 1], 2), np.stack([x, x + 1], axis=-1))
    assert_same(movement.reverse(x, 1), x[:, ::-1])
    assert_same(movement.fill((2, 1), 3.7, np.float16), np.full((2, 1), 3.7, np.float16))
    with pytest.raises(ValueError):
        movement.pack([x, x.astype(np.int32)], 0)
    with pytest.raises(ValueError):
        movement.reverse(x, -1)
