"""REDUCE_SUM / MAX / MIN, SPLIT and LOG_SOFTMAX: hand cases, numba == reference, LiteRT."""

from __future__ import annotations

import numpy as np
import pytest

from .kernel_testutil import assert_same, random_q, requires_litert
from .litert_extra import T, run_op
from nnsim.kernels import log_softmax, reduce_ext, split
from nnsim.kernels.reference import log_softmax as ref_log_softmax
from nnsim.kernels.reference import reduce_ext as ref_reduce
from nnsim.kernels.reference import split as ref_split

AXES = [([1], False), ([0, 2], True), ([-1, 0, 2, 1], False), ([], False), ([2, 2], True)]


@pytest.mark.parametrize("axes,keep", AXES)
@pytest.mark.parametrize("name", ["reduce_sum", "reduce_max", "reduce_min"])
def test_float_fast_equals_reference(axes, keep, name, rng):
    x = rng.normal(size=(2, 3, 4)).astype(np.float32)
    assert_same(getattr(reduce_ext, name)(x, axes, keep), getattr(ref_reduce, name)(x, axes, keep),
                rtol=1e-5)


@pytest.mark.parametrize("axes,keep", AXES)
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_quantized_max_min_exact(axes, keep, dtype, rng):
    x = random_q(rng, dtype, (3, 2, 5))
    assert_same(reduce_ext.reduce_max(x, axes, keep), ref_reduce.reduce_max(x, axes, keep))
    assert_same(reduce_ext.reduce_min(x, axes, keep), ref_reduce.reduce_min(x, axes, keep))


def test_full_reduction_gives_shape_1_and_float16_sums_in_half():
    x = np.ones((2, 2), np.float32)
    assert reduce_ext.reduce_sum(x, [0, 1]).shape == (1,)
    h = np.array([2048, 1, 1, 1, 1], np.float16)       # 2048 + 1 rounds back to 2048 in half
    assert reduce_ext.reduce_sum(h, [0]).tolist() == [2048.0]
    assert reduce_ext.reduce_max(np.array([np.nan, 1.0], np.float32), [0]).tolist() == [1.0]


@requires_litert
@pytest.mark.parametrize("op,fn", [("SUM", reduce_ext.reduce_sum),
                                   ("REDUCE_MAX", reduce_ext.reduce_max),
                                   ("REDUCE_MIN", reduce_ext.reduce_min)])
def test_float_matches_litert(op, fn, rng):
    x = rng.normal(size=(2, 5, 3)).astype(np.float32)
    axes = np.int32([0, 2])
    want = run_op(op, [T(x.shape, np.float32), T((2,), np.int32, data=axes)],
                  [T((5,), np.float32)], [x], {"KeepDims": False})[0]
    assert_same(fn(x, axes, False), want, rtol=0, atol=0)


@pytest.mark.parametrize("axis,n", [(0, 2), (1, 3), (-1, 1), (2, 4)])
def test_split_equals_reference(axis, n, rng):
    x = random_q(rng, np.int8, (4, 3, 4))
    got, want = split.split(x, axis, n), ref_split.split(x, axis, n)
    assert len(got) == n
    for g, w in zip(got, want):
        assert_same(g, w)
    with pytest.raises(ValueError):
        split.split(x, 1, 2)


@pytest.mark.parametrize("beta,axis", [(1.0, -1), (0.5, 0), (2.0, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_log_softmax_equals_reference(beta, axis, dtype, rng):
    x = rng.normal(size=(3, 4, 5)).astype(dtype)
    got = log_softmax.log_softmax(x, beta, axis)
    assert got.dtype == dtype
    assert_same(got, ref_log_softmax.log_softmax(x, beta, axis),
                rtol=1e-5 if dtype == np.float32 else 5e-3, atol=1e-6 if dtype == np.float32
                else 5e-3)


@requires_litert
def test_log_softmax_matches_litert(rng):
    x = rng.normal(size=(3, 6)).astype(np.float32)
    want = run_op("LOG_SOFTMAX", [T(x.shape, np.float32)], [T(x.shape, np.float32)], [x])[0]
    assert_same(log_softmax.log_softmax(x), want, rtol=1e-5, atol=1e-6)
