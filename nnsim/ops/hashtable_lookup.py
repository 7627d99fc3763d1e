"""HASHTABLE_LOOKUP (OperationCode 10).

Inputs: 0 lookups (TENSOR_INT32, rank 1), 1 keys (TENSOR_INT32, rank 1, one per value row,
searched with bsearch so normally sorted ascending), 2 values (rank >= 1). Outputs:
0 values' type and quantization, shape ``[len(lookups)] + values.dims[1:]``; 1 hits
(TENSOR_QUANT8_ASYMM, ``[len(lookups)]``): 1 where the lookup's key was found, else 0 and
the output row is zero bytes (not the zero point). A missing key is not an error.

Types (T13 common/types/operations/src/HashtableLookup.cpp): values float32, int32 or
quant8-asymm, all FL1. Ranks are checked at execution (hashtableLookupPrepare).
"""
from __future__ import annotations

from nnsim.kernels.lookup import hashtable_lookup
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL1, OperandType, OperationCode

T = OperandType
TYPES = (T.TENSOR_FLOAT32, T.TENSOR_INT32, T.TENSOR_QUANT8_ASYMM)


def validate(ctx):
    ctx.check_counts(3, 2)
    t = ctx.check_input_type_in(2, TYPES)
    ctx.check_input_types((T.TENSOR_INT32, T.TENSOR_INT32, t))
    ctx.check_output_types((t, T.TENSOR_QUANT8_ASYMM))
    return FL1


def prepare(ctx):
    lookups, keys, values = ctx.input_shape(0), ctx.input_shape(1), ctx.input_shape(2)
    cm.check(ctx, len(lookups) == 1, f"lookups must have rank 1, got rank {len(lookups)}")
    cm.check(ctx, len(keys) == 1, f"keys must have rank 1, got rank {len(keys)}")
    cm.check(ctx, len(values) >= 1, "values must have rank >= 1")
    # AOSP does not compare the sizes and bsearch would read past a short key buffer
    # (undefined behaviour); nnsim refuses that case instead. Extra keys are never read.
    cm.check(ctx, keys[0] >= values[0],
             f"{keys[0]} keys for {values[0]} value rows")
    ctx.set_output_shape(0, (lookups[0],) + tuple(values[1:]))
    ctx.set_output_shape(1, (lookups[0],))


def execute(ctx):
    out, hits = hashtable_lookup(ctx.input(0), ctx.input(1), ctx.input(2))
    ctx.set_output(0, out)
    ctx.set_output(1, hits)


SPEC = OperationSpec(OperationCode.HASHTABLE_LOOKUP, validate, prepare, execute)
