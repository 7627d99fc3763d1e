"""EMBEDDING_LOOKUP and HASHTABLE_LOOKUP on nnsim's TFLite CPU path (NNAPI-backed: the NNAPI
operations of the same names) against LiteRT's reference kernels (BUILTIN_REF). Both are row
copies, so every output must be identical.
"""
from __future__ import annotations

import numpy as np
import pytest

from nnsim.tflite import Interpreter
from nnsim.tflite.builtins import BuiltinError
from nnsim.tflite.schema import BuiltinOperator as B

from .test_builtins import I8, F32, U8, T, build, check, litert

I32 = np.int32
LOOKUP_BUILTINS = frozenset({B.EMBEDDING_LOOKUP, B.HASHTABLE_LOOKUP})


def _q(dtype):
    return {U8: (0.25, 131), I8: (0.125, -9)}.get(dtype)


# LiteRT's EMBEDDING_LOOKUP copies rows for float32 and for (u)int8 values with a same-typed
# output (the (u)int8 -> float32 "hybrid" form dequantizes and has no NNAPI equivalent).
@pytest.mark.parametrize("dtype", [F32, U8, I8])
@pytest.mark.parametrize("vshape", [(5, 3), (4, 2, 3)])
def test_embedding_lookup(request, dtype, vshape):
    rng = np.random.default_rng(3)
    lookups = rng.integers(0, vshape[0], 7).astype(I32)
    check(request, B.EMBEDDING_LOOKUP, [T((7,), I32, data=lookups), T(vshape, dtype, _q(dtype))],
          [T((7,) + vshape[1:], dtype, _q(dtype))])


def test_embedding_lookup_variable_lookups(request):
    values = np.arange(12, dtype=F32).reshape(4, 3)
    ours = check(request, B.EMBEDDING_LOOKUP, [T((3,), I32), T((4, 3), F32, data=values)],
                 [T((3, 3), F32)], feeds=[np.array([3, 0, 3], I32)])
    np.testing.assert_array_equal(ours[0], values[[3, 0, 3]])


@pytest.mark.parametrize("dtype", [F32, I32, U8])
def test_hashtable_lookup(request, dtype):
    keys = np.array([-40, -3, 0, 7, 1000, 2**31 - 1], I32)
    lookups = np.array([7, 8, -40, 2**31 - 1, -2**31, 0, 7, -3, 999], I32)
    values = T((6, 2, 2), dtype, _q(dtype))
    ours = check(request, B.HASHTABLE_LOOKUP,
                 [T((9,), I32), T((6,), I32, data=keys), values],
                 [T((9, 2, 2), dtype, _q(dtype)), T((9,), U8)],
                 feeds=[lookups, np.arange(24).reshape(6, 2, 2).astype(dtype) + 1])
    np.testing.assert_array_equal(ours[1], [1, 0, 1, 1, 0, 1, 1, 1, 0])


def test_hashtable_lookup_unsorted_and_duplicate_keys(request):
    """bsearch on keys that break its precondition: both sides must probe identically."""
    keys = np.array([9, 4, 4, 4, 1, 30, 2], I32)
    values = np.arange(7, dtype=F32)[:, None] * np.ones((1, 3), F32)
    lookups = np.array([9, 4, 1, 30, 2, 5], I32)
    check(request, B.HASHTABLE_LOOKUP, [T((6,), I32, data=lookups), T((7,), I32, data=keys),
                                        T((7, 3), F32, data=values)],
          [T((6, 3), F32), T((6,), U8)], feeds=[])


def _invoke(ip, feeds):
    ip.allocate_tensors()
    for d, v in zip(ip.get_input_details(), feeds):
        ip.set_tensor(d["index"], v)
    ip.invoke()


def test_embedding_lookup_out_of_range_fails_on_both():
    blob = build(B.EMBEDDING_LOOKUP, [T((2,), I32), T((3, 2), F32)], [T((2, 2), F32)])
    feeds = [np.array([0, 3], I32), np.zeros((3, 2), F32)]
    with pytest.raises(BuiltinError, match="out of range"):
        _invoke(Interpreter(model_content=blob), feeds)
    with pytest.raises(RuntimeError, match="out of bounds"):
        _invoke(litert.Interpreter(model_content=blob, num_threads=1,
                                   experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF),
                feeds)
