"""MIRROR_PAD (OperationCode 104).

Inputs: 0 input (rank >= 1), 1 paddings (TENSOR_INT32 [rank, 2]: before and after each
dimension), 2 mode (INT32: 0 REFLECT, the edge not repeated, each side at most dim - 1;
1 SYMMETRIC, the edge repeated, each side at most dim). Output 0: ``dims[i] + before[i] +
after[i]``, same type and quantization as the input.

Types (T13 common/types/operations/src/MirrorPad.cpp): float16, float32, quant8-asymm,
quant8-signed, int32; the output of the input's type, scale and zero point; paddings of rank 2
with a second dimension of 2 and a first dimension equal to the input's rank (when known);
input and output of one rank. FL7 for every type, which this runtime (FL5) refuses at finish.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels import movement
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL7, OperandType, OperationCode

T = OperandType
_TYPES = (T.TENSOR_FLOAT16, T.TENSOR_FLOAT32, T.TENSOR_QUANT8_ASYMM,
          T.TENSOR_QUANT8_ASYMM_SIGNED, T.TENSOR_INT32)


def validate(ctx):
    ctx.check_counts(3, 1)
    t = ctx.check_input_type_in(0, _TYPES)
    ctx.check_input_types((T.TENSOR_INT32,), start=1)
    pad_dims = ctx.input_shape(1)
    if pad_dims:
        ctx.require(len(pad_dims) == 2, f"paddings must have rank 2, got {len(pad_dims)}")
        ctx.require(pad_dims[1] in (0, 2), f"paddings second dimension must be 2, got "
                    f"{pad_dims[1]}")
    ctx.check_input_types((T.INT32,), start=2)
    ctx.check_output_types((t,))
    src, dst = ctx.input(0), ctx.output(0)
    if cm.is_quant8(t):
        ctx.require(ctx.same_quant(src, dst), "output quantization differs from the input's")
    rank = len(src.dimensions)
    if rank and pad_dims and pad_dims[0]:
        ctx.require(pad_dims[0] == rank, f"paddings first dimension {pad_dims[0]} does not "
                    f"match the input rank {rank}")
    if rank and dst.dimensions:
        ctx.require(len(dst.dimensions) == rank, f"output rank {len(dst.dimensions)} does not "
                    f"match the input rank {rank}")
    return FL7


def _args(ctx) -> tuple[np.ndarray, int]:
    x, p, mode = ctx.input(0), ctx.input(1), int(ctx.scalar(2))
    cm.check(ctx, x.ndim > 0, "input must have rank >= 1")
    cm.check(ctx, mode in (movement.MIRROR_PAD_REFLECT, movement.MIRROR_PAD_SYMMETRIC),
             f"mode {mode} is neither 0 (REFLECT) nor 1 (SYMMETRIC)")
    cm.check(ctx, p.shape == (x.ndim, 2), f"paddings must have shape [{x.ndim}, 2]")
    limit = np.asarray(x.shape) - (mode == movement.MIRROR_PAD_REFLECT)
    ok = (p >= 0).all() and (p <= limit[:, None]).all()
    cm.check(ctx, bool(ok), f"paddings {p.tolist()} must be in [0, {limit.tolist()}] per "
             f"dimension for mode {mode}")
    return np.asarray(p, dtype=np.int64), mode


def prepare(ctx):
    p, _ = _args(ctx)
    ctx.set_output_shape(0, np.asarray(ctx.input(0).shape) + p.sum(1))


def execute(ctx):
    p, mode = _args(ctx)
    ctx.set_output(0, movement.mirror_pad(ctx.input(0), p, mode))


SPEC = OperationSpec(OperationCode.MIRROR_PAD, validate, prepare, execute)
