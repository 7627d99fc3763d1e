"""EMBEDDING_LOOKUP (OperationCode 7).

Inputs: 0 lookups (TENSOR_INT32, rank 1), 1 values (rank >= 2). Output 0: values' type and
quantization, shape ``[len(lookups)] + values.dims[1:]``; ``out[i] = values[lookups[i]]``.

Types (T13 common/types/operations/src/EmbeddingLookup.cpp): values float32 FL1; int32 and
quant8-asymm FL3; float16 and quant8-signed FL4. Ranks are checked at execution
(embeddingLookupPrepare, OperationsExecutionUtils.cpp); an index outside
``[0, values.dims[0])`` fails the execution (EmbeddingLookup::Eval returns false): OP_FAILED.
"""
from __future__ import annotations

from nnsim.kernels.lookup import embedding_lookup
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL1, FL3, FL4, OperandType, OperationCode

T = OperandType
_LEVEL = {T.TENSOR_FLOAT32: FL1, T.TENSOR_INT32: FL3, T.TENSOR_QUANT8_ASYMM: FL3,
          T.TENSOR_FLOAT16: FL4, T.TENSOR_QUANT8_ASYMM_SIGNED: FL4}


def validate(ctx):
    ctx.check_counts(2, 1)
    t = ctx.check_input_type_in(1, tuple(_LEVEL))
    ctx.check_input_types((T.TENSOR_INT32, t))
    ctx.check_output_types((t,))
    return _LEVEL[t]


def prepare(ctx):
    values, lookups = ctx.input_shape(1), ctx.input_shape(0)
    cm.check(ctx, len(values) >= 2, f"values must have rank >= 2, got rank {len(values)}")
    cm.check(ctx, len(lookups) == 1, f"lookups must have rank 1, got rank {len(lookups)}")
    ctx.set_output_shape(0, (lookups[0],) + tuple(values[1:]))


def execute(ctx):
    values, lookups = ctx.input(1), ctx.input(0)
    rows = values.shape[0]
    bad = lookups[(lookups < 0) | (lookups >= rows)]
    if bad.size:
        cm.check(ctx, False, f"lookup index {int(bad[0])} out of range [0, {rows})")
    ctx.set_output(0, embedding_lookup(values, lookups))


SPEC = OperationSpec(OperationCode.EMBEDDING_LOOKUP, validate, prepare, execute)
