"""RANDOM_MULTINOMIAL (OperationCode 74).

Inputs: 0 logits (``[batch, num_classes]``, unnormalised log-probabilities), 1 sample count
(INT32), 2 seeds (TENSOR_INT32, the first two values are used). Output 0: TENSOR_INT32
``[batch, sample_count]``, class indices drawn independently from ``softmax(logits[b])``.
Sampling and the generator: :mod:`nnsim.kernels.multinomial` (deterministic for given seeds,
the same distribution as AOSP, not its exact Philox stream).

Types (T13 common/types/operations/src/Multinomial.cpp): logits float32 or float16, FL3.
Execution (common/cpu_operations/Multinomial.cpp): every input must have a value (BAD_DATA in
CpuExecutor). AOSP reads ``dims[1]``, two seeds and a non-negative count without checking;
nnsim refuses a logits rank other than 2, fewer than two seeds and a negative count with
OP_FAILED instead of reading out of bounds.
"""
from __future__ import annotations

from nnsim.errors import BadDataError
from nnsim.kernels.multinomial import random_multinomial
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, OperandType, OperationCode

T = OperandType
LOGITS, SAMPLE_COUNT, SEEDS = 0, 1, 2


def validate(ctx):
    ctx.check_counts(3, 1)
    t = ctx.check_input_type_in(LOGITS, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16))
    ctx.check_input_types((t, T.INT32, T.TENSOR_INT32))
    ctx.check_output_types((T.TENSOR_INT32,))
    return FL3


def prepare(ctx):
    if not all(ctx.has_input(i) for i in range(3)):
        raise BadDataError("RANDOM_MULTINOMIAL: every input must have a value")
    logits, count = ctx.input_shape(LOGITS), int(ctx.scalar(SAMPLE_COUNT))
    cm.check(ctx, len(logits) == 2, f"logits must have rank 2, got rank {len(logits)}")
    cm.check(ctx, count >= 0, f"sample count must be >= 0, got {count}")
    cm.check(ctx, ctx.input(SEEDS).size >= 2,
             f"seeds must hold 2 values, got {ctx.input(SEEDS).size}")
    ctx.set_output_shape(0, (logits[0], count))


def execute(ctx):
    seeds = ctx.input(SEEDS).reshape(-1)
    ctx.set_output(0, random_multinomial(ctx.input(LOGITS), int(ctx.scalar(SAMPLE_COUNT)),
                                         int(seeds[0]), int(seeds[1])))


SPEC = OperationSpec(OperationCode.RANDOM_MULTINOMIAL, validate, prepare, execute)
