"""SPACE_TO_DEPTH (26) and DEPTH_TO_SPACE (5).

Inputs: 0 input [N,H,W,C] (4-D), 1 block_size (INT32, >= 1), [2 layout (BOOL, FL3), NCHW when
true]. Output 0: SPACE_TO_DEPTH [N, H/bs, W/bs, C*bs*bs] (H and W multiples of bs);
DEPTH_TO_SPACE [N, H*bs, W*bs, C/(bs*bs)] (C a multiple of bs*bs); same quantization as the
input.

Types: float32 / quant8-asymm FL1; float16 or a layout argument FL3; quant8-signed FL4
(T13 validateOperation DEPTH_TO_SPACE / SPACE_TO_DEPTH; shapes from depthToSpacePrepare /
spaceToDepthPrepare).
"""
from __future__ import annotations

from nnsim.kernels import space
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec, type_feature_level
from nnsim.types import FL3, OperandType, OperationCode

T = OperandType
C = OperationCode


def validate(ctx):
    ctx.check_counts((2, 3), 1)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM,
                                    T.TENSOR_QUANT8_ASYMM_SIGNED))
    level = type_feature_level(t)
    ctx.check_input_types((t, T.INT32))
    if ctx.num_inputs == 3:
        ctx.check_input_types((T.BOOL,), start=2)
        level = max(level, FL3)
    ctx.check_output_types((t,))
    return level


def _params(ctx):
    x = ctx.input(0)
    cm.check(ctx, x.ndim == 4, f"input has rank {x.ndim}, expected 4")
    bs = int(ctx.scalar(1))
    cm.check(ctx, bs > 0, f"block size {bs} must be positive")
    nchw = cm.optional_bool(ctx, 2)
    n, h, w, c = cm.nhwc_dims(x.shape, nchw)
    if ctx.code == C.SPACE_TO_DEPTH:
        cm.check(ctx, h % bs == 0 and w % bs == 0,
                 f"height {h} and width {w} must be multiples of the block size {bs}")
        out = (n, h // bs, w // bs, c * bs * bs)
    else:
        cm.check(ctx, c % (bs * bs) == 0, f"depth {c} must be a multiple of {bs * bs}")
        out = (n, h * bs, w * bs, c // (bs * bs))
    return bs, nchw, out


def prepare(ctx):
    _, nchw, out = _params(ctx)
    ctx.set_output_shape(0, cm.layout_shape(*out, nchw))


def execute(ctx):
    bs, nchw, _ = _params(ctx)
    kernel = space.space_to_depth if ctx.code == C.SPACE_TO_DEPTH else space.depth_to_space
    y = kernel(cm.to_nhwc(ctx.input(0), nchw), bs)
    ctx.set_output(0, cm.from_nhwc(y, nchw))


SPACE_TO_DEPTH = OperationSpec(C.SPACE_TO_DEPTH, validate, prepare, execute)
DEPTH_TO_SPACE = OperationSpec(C.DEPTH_TO_SPACE, validate, prepare, execute)
