"""SPACE_TO_BATCH_ND (33) and BATCH_TO_SPACE_ND (29).

SPACE_TO_BATCH_ND inputs: 0 input [N,H,W,C], 1 block_shape (TENSOR_INT32 [2], >= 1),
2 paddings (TENSOR_INT32 [2, 2], >= 0; padded H, W multiples of the block), [3 layout (BOOL)].
Output [N*bh*bw, (H+pads)/bh, (W+pads)/bw, C], padded with 0 or the zero point.
BATCH_TO_SPACE_ND inputs: 0 input, 1 block_shape, [2 layout]. Output [N/(bh*bw), H*bh, W*bw, C].
Same quantization as the input.

Types (T13 validateOperation): float32 FL2; quant8-asymm FL2 (SPACE_TO_BATCH_ND with a nonzero
zero point FL3); float16 or a layout argument FL3; quant8-signed FL4. Shapes from
spaceToBatchPrepare / batchToSpacePrepare.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels import space
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec, type_feature_level
from nnsim.types import FL2, FL3, OperandType, OperationCode

T = OperandType
C = OperationCode


def validate(ctx):
    s2b = ctx.code == C.SPACE_TO_BATCH_ND
    base = 3 if s2b else 2
    ctx.check_counts((base, base + 1), 1)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM,
                                    T.TENSOR_QUANT8_ASYMM_SIGNED))
    level = max(FL2, type_feature_level(t))
    if s2b and t == T.TENSOR_QUANT8_ASYMM and ctx.input(0).zero_point != 0:
        level = max(level, FL3)
    ctx.check_input_types([t] + [T.TENSOR_INT32] * (base - 1))
    if ctx.num_inputs == base + 1:
        ctx.check_input_types((T.BOOL,), start=base)
        level = max(level, FL3)
    ctx.check_output_types((t,))
    return level


def _params(ctx):
    s2b = ctx.code == C.SPACE_TO_BATCH_ND
    x, block = ctx.input(0), ctx.input(1)
    cm.check(ctx, x.ndim == 4, f"input has rank {x.ndim}, expected 4")
    cm.check(ctx, block.shape == (2,), "block_shape must be a 1-D tensor of 2 values")
    bh, bw = (int(v) for v in block)
    cm.check(ctx, bh > 0 and bw > 0, "block sizes must be positive")
    nchw = cm.optional_bool(ctx, 3 if s2b else 2)
    n, h, w, c = cm.nhwc_dims(x.shape, nchw)
    if not s2b:
        cm.check(ctx, n % (bh * bw) == 0, f"batch {n} is not a multiple of {bh}x{bw}")
        return (bh, bw), None, nchw, (n // (bh * bw), h * bh, w * bw, c)
    pads = ctx.input(2)
    cm.check(ctx, pads.shape == (2, 2), "paddings must be a [2, 2] tensor")
    cm.check(ctx, bool((pads >= 0).all()), "paddings must be non-negative")
    ph, pw = h + int(pads[0].sum()), w + int(pads[1].sum())
    cm.check(ctx, ph % bh == 0 and pw % bw == 0,
             f"padded size {ph}x{pw} is not a multiple of the block {bh}x{bw}")
    return (bh, bw), np.asarray(pads), nchw, (n * bh * bw, ph // bh, pw // bw, c)


def prepare(ctx):
    *_, nchw, out = _params(ctx)
    ctx.set_output_shape(0, cm.layout_shape(*out, nchw))


def execute(ctx):
    block, pads, nchw, _ = _params(ctx)
    x = cm.to_nhwc(ctx.input(0), nchw)
    if ctx.code == C.SPACE_TO_BATCH_ND:
        src = ctx.input_operand(0)
        value = src.zero_point if cm.is_quant8(src.type) else 0
        y = space.space_to_batch_nd(x, block, pads, pad_value=value)
    else:
        y = space.batch_to_space_nd(x, block)
    ctx.set_output(0, cm.from_nhwc(y, nchw))


SPACE_TO_BATCH_ND = OperationSpec(C.SPACE_TO_BATCH_ND, validate, prepare, execute)
BATCH_TO_SPACE_ND = OperationSpec(C.BATCH_TO_SPACE_ND, validate, prepare, execute)
