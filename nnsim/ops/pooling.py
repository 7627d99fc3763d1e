"""AVERAGE_POOL_2D (1) and MAX_POOL_2D (17).

Inputs (explicit padding, 10 or 11): 0 input [N,H,W,C], 1-4 padding left/right/top/bottom,
5 stride_w, 6 stride_h, 7 filter_w, 8 filter_h, 9 fuse code, [10 layout (BOOL, FL3)].
Implicit padding (7 or 8): 1 padding scheme, 2 stride_w, 3 stride_h, 4 filter_w,
5 filter_h, 6 fuse code, [7 layout]. Output 0 [N,OH,OW,C] (same quantization as the input).

Types: float32 / quant8-asymm FL1; float16 or a layout argument FL3; quant8-signed FL4
(T13 common/types/operations/src/Pooling.cpp).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels import pooling
from nnsim.kernels._common import aligned_empty
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec, type_feature_level
from nnsim.types import FL3, OperandType, OperationCode

T = OperandType
C = OperationCode
_KERNELS = {C.AVERAGE_POOL_2D: pooling.average_pool_2d, C.MAX_POOL_2D: pooling.max_pool_2d}


def validate(ctx):
    ctx.check_counts((7, 8, 10, 11), 1)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM,
                                    T.TENSOR_QUANT8_ASYMM_SIGNED))
    n = ctx.num_inputs
    scalars = [T.INT32] * (9 if n >= 10 else 6)
    level = type_feature_level(t)
    if n in (8, 11):
        scalars.append(T.BOOL)
        level = max(level, FL3)
    ctx.check_input_types([t] + scalars)
    ctx.check_output_types((t,))
    return level


def _params(ctx):
    n = ctx.num_inputs
    explicit = n >= 10
    nchw = bool(ctx.scalar(n - 1)) if n in (8, 11) else False
    x = ctx.input(0)
    cm.check(ctx, x.ndim == 4, f"input has rank {x.ndim}, expected 4")
    batches, h, w, c = cm.nhwc_dims(x.shape, nchw)
    padding, sw, sh, nxt = cm.window_args(ctx, 1, explicit)
    fw, fh, fuse = (int(ctx.scalar(i)) for i in range(nxt, nxt + 3))
    cm.check(ctx, min(sw, sh, fw, fh) > 0 and fuse >= 0,
             "strides and filter sizes must be positive")
    pl, pr, pt, pb = cm.resolve_padding(padding, h, w, fh, fw, sh, sw)
    cm.check(ctx, min(pl, pr, pt, pb) >= 0, "padding must be non-negative")
    cm.check(ctx, fw > max(pl, pr) and fh > max(pt, pb), "padding exceeds the filter size")
    cm.check(ctx, h > 0 and w > 0 and c > 0, "only the batch dimension may be zero")
    return dict(nchw=nchw, n=batches, h=h, w=w, c=c, filter_w=fw, filter_h=fh, stride_w=sw,
                stride_h=sh, pad_left=pl, pad_right=pr, pad_top=pt, pad_bottom=pb, fuse=fuse)


def prepare(ctx):
    p = _params(ctx)
    oh = cm.output_size(p["h"], p["filter_h"], 1, p["stride_h"], p["pad_top"], p["pad_bottom"])
    ow = cm.output_size(p["w"], p["filter_w"], 1, p["stride_w"], p["pad_left"], p["pad_right"])
    ctx.set_output_shape(0, cm.layout_shape(p["n"], oh, ow, p["c"], p["nchw"]))


def _kernel_args(ctx):
    p = _params(ctx)
    nchw = p.pop("nchw")
    for k in ("n", "h", "w", "c"):
        del p[k]
    if cm.is_quant8(ctx.input_operand(0).type):
        out = ctx.output_operand(0)
        p.update(out_scale=out.scale, out_zp=out.zero_point)
    return nchw, p


def execute(ctx):
    nchw, p = _kernel_args(ctx)
    y = _KERNELS[ctx.code](cm.to_nhwc(ctx.input(0), nchw), **p)
    ctx.set_output(0, cm.from_nhwc(y, nchw))


def plan(ctx):
    """The window arguments resolved once per input shape; an NHWC float32 / 8-bit pool
    writes one output buffer kept across executions, with the kernel call bound to the
    input while the input is the same array (another plan's buffer)."""
    nchw, p = _kernel_args(ctx)
    kernel, dtype = _KERNELS[ctx.code], ctx.output_operand(0).dtype()
    kind = "avg" if ctx.code == C.AVERAGE_POOL_2D else "max"

    def general(values):
        return [cm.from_nhwc(kernel(cm.to_nhwc(values[0], nchw), **p), nchw)
                .astype(dtype, copy=False)]
    if nchw:
        return general
    buffer = aligned_empty(ctx.output_shapes[0], dtype)

    def bind(x):
        if np.shares_memory(x, buffer):
            return None
        return pooling.bind_pool_2d(kind, x, buffer, **p)
    return cm.bound_runner(bind, general, [buffer])


AVERAGE_POOL_2D = OperationSpec(C.AVERAGE_POOL_2D, validate, prepare, execute,
                                allow_zero_sized_input=True, plan=plan)
MAX_POOL_2D = OperationSpec(C.MAX_POOL_2D, validate, prepare, execute,
                            allow_zero_sized_input=True, plan=plan)
