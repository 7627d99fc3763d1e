"""TRANSPOSE (OperationCode 37).

Inputs: 0 input (rank <= 4), 1 perm (TENSOR_INT32 1-D of length rank, a permutation; may be
omitted for a 2-D input: plain matrix transpose). Output 0: ``dims[perm[i]]``, same
quantization as the input.

Types: float32 / quant8-asymm FL2; float16 FL3; quant8-signed FL4
(T13 common/types/operations/src/Transpose.cpp).
"""
from __future__ import annotations

from nnsim.kernels.transform import transpose as transpose_kernel
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec, type_feature_level
from nnsim.types import FL2, OperandType, OperationCode

T = OperandType


def validate(ctx):
    ctx.check_counts(2, 1)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM,
                                    T.TENSOR_QUANT8_ASYMM_SIGNED))
    ctx.check_rank(0, range(0, 5))
    ctx.check_input_types((t, T.TENSOR_INT32))
    ctx.check_output_types((t,))
    return max(FL2, type_feature_level(t))


def _perm(ctx) -> tuple:
    x, perm = ctx.input(0), ctx.input(1)
    if perm is None:
        cm.check(ctx, x.ndim == 2, "an omitted perm needs a 2-D input")
        return (1, 0)
    cm.check(ctx, x.ndim <= 4, f"input has rank {x.ndim}, expected <= 4")
    cm.check(ctx, perm.shape == (x.ndim,), f"perm must be a 1-D tensor of {x.ndim} values")
    values = tuple(int(p) for p in perm)
    cm.check(ctx, sorted(values) == list(range(x.ndim)), f"perm {values} is not a permutation")
    return values


def prepare(ctx):
    shape = ctx.input(0).shape
    ctx.set_output_shape(0, tuple(shape[p] for p in _perm(ctx)))


def execute(ctx):
    ctx.set_output(0, transpose_kernel(ctx.input(0), _perm(ctx)))


SPEC = OperationSpec(OperationCode.TRANSPOSE, validate, prepare, execute,
                     allow_omitted_operand=True, allow_zero_sized_input=True)
