"""LSH_PROJECTION (OperationCode 15).

Inputs: 0 hash (seeds, rank 2 ``[num_hash, num_bits]``, ``num_bits <= 32``), 1 input (rank
>= 1; each of its ``dims[0]`` rows is hashed as raw bytes), 2 weight (optional, rank 1,
``[input.dims[0]]``, the hash's type), 3 type (INT32: 1 SPARSE_DEPRECATED, 2 DENSE,
3 SPARSE). Output 0: TENSOR_INT32, ``[num_hash]`` for the sparse types (one signature per
hash row; SPARSE adds ``i << num_bits``), ``[num_hash * num_bits]`` bits for DENSE.
Semantics and the Fingerprint64 hash: :mod:`nnsim.kernels.lsh`.

Types (T13 common/types/operations/src/LSHProjection.cpp): hash and weight float32 (FL1) or
float16 (FL3); input float16, float32, int32 or quant8-asymm (the input's type does not change
the level). Execution (common/cpu_operations/LSHProjection.cpp, Prepare): hash, input and type
must have values; the sparse types need the weight omitted, DENSE needs it present with
``dims == [input.dims[0]]``; any other type value fails (OP_FAILED). An input without rows
(AOSP divides by ``dims[0]``) is refused too.
"""
from __future__ import annotations

from nnsim.kernels.lsh import DENSE, SPARSE, SPARSE_DEPRECATED, lsh_projection
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL1, FL3, OperandType, OperationCode

T = OperandType
INPUT_TYPES = (T.TENSOR_FLOAT16, T.TENSOR_FLOAT32, T.TENSOR_INT32, T.TENSOR_QUANT8_ASYMM)
HASH_LEVEL = {T.TENSOR_FLOAT32: FL1, T.TENSOR_FLOAT16: FL3}
HASH, INPUT, WEIGHT, TYPE = 0, 1, 2, 3


def validate(ctx):
    ctx.check_counts(4, 1)
    t_in = ctx.check_input_type_in(INPUT, INPUT_TYPES)
    t_hash = ctx.check_input_type_in(HASH, tuple(HASH_LEVEL))
    ctx.check_input_types((t_hash, t_in, t_hash, T.INT32))
    ctx.check_output_types((T.TENSOR_INT32,))
    return HASH_LEVEL[t_hash]


def prepare(ctx):
    for i, name in ((HASH, "hash"), (INPUT, "input"), (TYPE, "type")):
        cm.check(ctx, ctx.has_input(i), f"required input {i} ({name}) is omitted")
    hash_shape, in_shape = ctx.input_shape(HASH), ctx.input_shape(INPUT)
    cm.check(ctx, len(hash_shape) == 2, f"hash must have rank 2, got rank {len(hash_shape)}")
    cm.check(ctx, hash_shape[1] <= 32, f"hash has {hash_shape[1]} columns, at most 32 allowed")
    cm.check(ctx, len(in_shape) >= 1 and in_shape[0] > 0,
             f"input must have rank >= 1 and at least one row, got shape {in_shape}")
    kind = int(ctx.scalar(TYPE))
    with_values = sum(ctx.has_input(i) for i in range(ctx.num_inputs))
    if kind in (SPARSE, SPARSE_DEPRECATED):
        cm.check(ctx, with_values == 3, "a sparse projection takes no weight (omit input 2)")
        ctx.set_output_shape(0, (hash_shape[0],))
    elif kind == DENSE:
        cm.check(ctx, with_values == 4, "a dense projection needs the weight input")
        weight = ctx.input_shape(WEIGHT)
        cm.check(ctx, weight == (in_shape[0],),
                 f"weight must have shape ({in_shape[0]},), got {weight}")
        ctx.set_output_shape(0, (hash_shape[0] * hash_shape[1],))
    else:
        cm.check(ctx, False, f"unknown projection type {kind} (1, 2 or 3 expected)")


def execute(ctx):
    ctx.set_output(0, lsh_projection(ctx.input(HASH), ctx.input(INPUT), ctx.input(WEIGHT),
                                     int(ctx.scalar(TYPE))))


SPEC = OperationSpec(OperationCode.LSH_PROJECTION, validate, prepare, execute,
                     allow_omitted_operand=True)
