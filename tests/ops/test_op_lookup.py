"""EMBEDDING_LOOKUP and HASHTABLE_LOOKUP on the CPU executor: hand-computed rows, the bsearch
semantics of AOSP's HashtableLookup (misses, unsorted/duplicate keys, int32 overflow in the
comparator), execution-time failures and feature levels."""
import numpy as np
import pytest

from nnsim.errors import OperationValidationError, OpFailedError
from nnsim.kernels.lookup import bsearch_rows
from nnsim.types import FL1, FL3, FL4, OperationCode as C

from .ophelp import build, f16, f32, feature_level, i32t, q8, run, run1, s8

E, H = C.EMBEDDING_LOOKUP, C.HASHTABLE_LOOKUP
TABLE = np.array([[0, 1], [10, 11], [20, 21]])


@pytest.mark.parametrize("make", [
    lambda d: f32(d), lambda d: f16(d), lambda d: i32t(d),
    lambda d: q8(d, 0.5, 3), lambda d: s8(d, 0.25, -7)])
def test_embedding_lookup_rows_all_types(make):
    out = run1(E, [i32t([4]), make([3, 2])], [make([4, 2])], [2, 0, 2, 1], TABLE)
    np.testing.assert_array_equal(out, [[20, 21], [0, 1], [20, 21], [10, 11]])


def test_embedding_lookup_rank3_and_dynamic_output_shape():
    x = np.arange(24, dtype=np.float32).reshape(3, 2, 4)
    out = run1(E, [i32t([2]), f32([3, 2, 4])], [f32([0, 0, 0])], [1, 1], x)
    assert out.shape == (2, 2, 4)
    np.testing.assert_array_equal(out, np.stack([x[1], x[1]]))


@pytest.mark.parametrize("index", [3, -1])
def test_embedding_lookup_out_of_range_fails(index):
    with pytest.raises(OpFailedError, match="out of range"):
        run1(E, [i32t([2]), f32([3, 2])], [f32([2, 2])], [0, index], TABLE)


def test_embedding_lookup_rank1_values_fails_at_execution():
    # embeddingLookupPrepare requires values of rank >= 2.
    with pytest.raises(OpFailedError):
        run1(E, [i32t([1]), f32([3])], [f32([1])], [0], [1, 2, 3])


def test_embedding_lookup_feature_levels_and_rejections():
    def level(make):
        return feature_level(E, [i32t([1]), make([2, 2])], [make([1, 2])])
    assert level(f32) == FL1
    assert level(i32t) == FL3
    assert level(lambda d: q8(d, 1, 0)) == FL3
    assert level(f16) == FL4
    assert level(lambda d: s8(d, 1, 0)) == FL4
    with pytest.raises(OperationValidationError):   # lookups must be TENSOR_INT32
        build(E, [f32([1]), f32([2, 2])], [f32([1, 2])])
    with pytest.raises(OperationValidationError):   # output type must match values
        build(E, [i32t([1]), f32([2, 2])], [f16([1, 2])])


def hashtable(lookups, keys, values, make=f32):
    n = len(lookups)
    vals = np.asarray(values)
    return run(H, [i32t([n]), i32t([len(keys)]), make(list(vals.shape))],
               [make([n] + list(vals.shape[1:])), q8([n], 1.0, 0)], [lookups, keys, vals])


def test_hashtable_lookup_hits_and_misses_float():
    out, hits = hashtable([1234, -292, -11, 0], [-11, 0, 1234], TABLE + 0.5)
    np.testing.assert_array_equal(out, [[20.5, 21.5], [0, 0], [0.5, 1.5], [10.5, 11.5]])
    np.testing.assert_array_equal(hits, [1, 0, 1, 1])
    assert hits.dtype == np.uint8


def test_hashtable_lookup_miss_is_raw_zero_not_zero_point():
    out, hits = hashtable([5, 7], [1, 5, 9], TABLE + 100, make=lambda d: q8(d, 0.5, 128))
    np.testing.assert_array_equal(out, [[110, 111], [0, 0]])
    np.testing.assert_array_equal(hits, [1, 0])


def test_hashtable_lookup_int32_rank1_values():
    out, hits = hashtable([3, 4, 1], [1, 2, 3], [7, 8, 9], make=i32t)
    np.testing.assert_array_equal(out, [9, 0, 7])
    np.testing.assert_array_equal(hits, [1, 0, 1])


def test_bsearch_probe_order_on_unsorted_and_duplicate_keys():
    # n=5: probe 2; key > keys[2] -> [3, 5) probe 4; key < keys[2] -> [0, 2) probe 1 then 0.
    keys = [50, 40, 30, 20, 10]   # descending: only the middle key can be found
    np.testing.assert_array_equal(bsearch_rows([30, 10, 50, 40], keys), [2, -1, -1, -1])
    # Duplicates: the first probe (the middle) wins, not the first occurrence.
    np.testing.assert_array_equal(bsearch_rows([7, 7], [7, 7, 7, 7]), [2, 2])
    np.testing.assert_array_equal(bsearch_rows([7], [1, 7, 7, 7, 7, 9]), [3])


def test_bsearch_comparator_wraps_like_int32_subtraction():
    # "*key - *elem" overflows: (2**31-1) - (-2) wraps negative, so the search goes left
    # past the key it would find with exact arithmetic; -2**31 - 1 wraps positive (right).
    big = 2**31 - 1
    np.testing.assert_array_equal(bsearch_rows([big, -2, -5], [-5, -2, big]), [-1, 1, 0])
    np.testing.assert_array_equal(bsearch_rows([-2**31, 2], [-2**31, 1, 2]), [-1, 2])


def test_hashtable_lookup_short_keys_fail_at_execution():
    with pytest.raises(OpFailedError):
        hashtable([1], [1, 2], TABLE)


def test_hashtable_lookup_feature_level_and_rejections():
    ins = [i32t([1]), i32t([2])]
    assert feature_level(H, ins + [f32([2, 2])], [f32([1, 2]), q8([1], 1, 0)]) == FL1
    assert feature_level(H, ins + [i32t([2])], [i32t([1]), q8([1], 1, 0)]) == FL1
    assert feature_level(H, ins + [q8([2], 1, 0)], [q8([1], 1, 0), q8([1], 1, 0)]) == FL1
    with pytest.raises(OperationValidationError):   # no float16 / signed quant8 values
        build(H, ins + [f16([2])], [f16([1]), q8([1], 1, 0)])
    with pytest.raises(OperationValidationError):
        build(H, ins + [s8([2], 1, 0)], [s8([1], 1, 0), q8([1], 1, 0)])
    with pytest.raises(OperationValidationError):   # hits must be TENSOR_QUANT8_ASYMM
        build(H, ins + [f32([2])], [f32([1]), i32t([1])])
