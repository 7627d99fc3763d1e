"""CONV_2D (OperationCode 3).

Inputs (explicit padding): 0 input [N,H,W,C], 1 filter [O,KH,KW,C], 2 bias [O], 3-6 padding
left/right/top/bottom, 7 stride_w, 8 stride_h, 9 fuse code, [10 layout (BOOL, FL3),
11 dilation_w, 12 dilation_h (FL3)]. Implicit padding: 3 padding scheme, 4 stride_w,
5 stride_h, 6 fuse code, [7 layout, 8 dilation_w, 9 dilation_h]. Output 0 [N,OH,OW,O].

Types: float32 / quant8-asymm FL1; float16, per-channel filter (channelDim 0), layout, dilation,
or quant8 failing the legacy scale check (as AOSP computes it: _common.legacy_quant_scale_ok)
FL3; quant8-signed FL4 (T13 common/types/operations/src/Conv2D.cpp).
"""
from __future__ import annotations

from nnsim.kernels.conv import conv_2d as conv_kernel
from nnsim.kernels.conv import prepare_conv_2d
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec, context_runner, type_feature_level
from nnsim.types import FL3, OperandType, OperationCode

T = OperandType


def parse_args(n_inputs: int, input_type) -> tuple[bool, bool, bool]:
    """(explicit padding, has layout, has dilation) from the argument count and types."""
    explicit = n_inputs >= 10 and input_type(7) == T.INT32
    offset = 3 if explicit else 0
    layout = n_inputs >= 8 + offset
    dilation = n_inputs == 10 + offset
    return explicit, layout, dilation


def validate(ctx):
    ctx.check_counts((7, 8, 10, 11, 13), 1)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM,
                                    T.TENSOR_QUANT8_ASYMM_SIGNED))
    explicit, layout, dilation = parse_args(ctx.num_inputs, ctx.input_type)
    offset = 3 if explicit else 0
    ctx.require(ctx.num_inputs != 9 + offset, f"{ctx.num_inputs} inputs is not a valid form")
    level = type_feature_level(t)
    ftype = ctx.input_type(1)
    if t in cm.FLOAT_TYPES:
        ctx.check_input_types((t, t))
        ctx.check_input_types((t,), start=2)
    else:
        ctx.require(ftype in (t, T.TENSOR_QUANT8_SYMM_PER_CHANNEL),
                    f"filter type {T(ftype).name} does not match input type {T(t).name}")
        ctx.check_input_types((T.TENSOR_INT32,), start=2)
        if ftype == T.TENSOR_QUANT8_SYMM_PER_CHANNEL:
            ctx.require(ctx.input(1).channel_quant is not None
                        and ctx.input(1).channel_quant.channelDim == 0,
                        "per-channel filter must have channelDim 0")
            level = max(level, FL3)
        elif not cm.legacy_quant_scale_ok(ctx):
            level = max(level, FL3)
    scalars = [T.INT32] * (7 if explicit else 4)
    ctx.check_input_types(scalars, start=3)
    if layout:
        ctx.check_input_types((T.BOOL,), start=7 + offset)
        level = max(level, FL3)
    if dilation:
        ctx.check_input_types((T.INT32, T.INT32), start=8 + offset)
        level = max(level, FL3)
    ctx.check_output_types((t,))
    for i in (0, 1):  # AOSP checks input and filter ranks here; the bias rank at prepare
        ctx.check_rank(i, 4)
    return level


def _params(ctx):
    explicit, layout, dilation = parse_args(ctx.num_inputs,
                                            lambda i: ctx.input_operand(i).type)
    o = 3 if explicit else 0
    nchw = bool(ctx.scalar(7 + o, False)) if layout else False
    x, f, b = ctx.input(0), ctx.input(1), ctx.input(2)
    cm.check(ctx, x.ndim == 4 and f.ndim == 4 and b.ndim == 1,
             "input and filter must be 4-D, bias 1-D")
    n, h, w, c = cm.nhwc_dims(x.shape, nchw)
    oc, kh, kw, fc = f.shape
    cm.check(ctx, fc == c and b.shape[0] == oc, "filter depth or bias size does not match")
    cm.check(ctx, h > 0 and w > 0 and c > 0 and oc > 0, "only the batch dimension may be zero")
    dw, dh = (ctx.scalar(8 + o), ctx.scalar(9 + o)) if dilation else (1, 1)
    if explicit:
        pl, pr, pt, pb, sw, sh, fuse = (ctx.scalar(i) for i in range(3, 10))
    else:
        scheme, sw, sh, fuse = (ctx.scalar(i) for i in range(3, 7))
        pl, pr = cm.implicit_padding(w, sw, kw, dw, scheme)
        pt, pb = cm.implicit_padding(h, sh, kh, dh, scheme)
    cm.check(ctx, min(sw, sh, dw, dh) > 0 and min(pl, pr, pt, pb) >= 0,
             "strides and dilations must be positive, padding non-negative")
    ekh, ekw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    cm.check(ctx, ekw > max(pl, pr) and ekh > max(pt, pb), "padding exceeds the filter size")
    return dict(nchw=nchw, n=n, h=h, w=w, kh=kh, kw=kw, stride_w=sw, stride_h=sh,
                dilation_w=dw, dilation_h=dh, pad_left=pl, pad_right=pr, pad_top=pt,
                pad_bottom=pb, fuse=fuse)


def prepare(ctx):
    p = _params(ctx)
    oh = cm.output_size(p["h"], p["kh"], p["dilation_h"], p["stride_h"], p["pad_top"],
                        p["pad_bottom"])
    ow = cm.output_size(p["w"], p["kw"], p["dilation_w"], p["stride_w"], p["pad_left"],
                        p["pad_right"])
    oc = ctx.input(1).shape[0]
    shape = (p["n"], oc, oh, ow) if p["nchw"] else (p["n"], oh, ow, oc)
    ctx.set_output_shape(0, shape)


def _kernel_args(ctx, p):
    kwargs = {k: p[k] for k in ("stride_w", "stride_h", "dilation_w", "dilation_h", "pad_left",
                                "pad_right", "pad_top", "pad_bottom", "fuse")}
    if cm.is_quant8(ctx.input_operand(0).type):
        kwargs.update(cm.conv_quant_kwargs(ctx))   # AOSP's float32 scale products
    return kwargs


def execute(ctx):
    p = _params(ctx)
    x = cm.to_nhwc(ctx.input(0), p["nchw"])
    out = conv_kernel(x, ctx.input(1), ctx.input(2), **_kernel_args(ctx, p))
    ctx.set_output(0, cm.from_nhwc(out, p["nchw"]))


def plan(ctx):
    """Filter packed and multipliers computed once per input shape (the prepared model's work)."""
    x = ctx.input(0)
    if x.size == 0 or not ctx.input_operand(1).is_constant or not ctx.input_operand(2).is_constant:
        return context_runner(SPEC, ctx)
    p = _params(ctx)
    n, h, w = p["n"], p["h"], p["w"]
    kplan, out_shape = prepare_conv_2d((n, h, w, ctx.input(1).shape[3]), x.dtype, ctx.input(1),
                                       ctx.input(2), **_kernel_args(ctx, p))
    return cm.kernel_plan_runner(kplan, out_shape, x.dtype, p["nchw"])


SPEC = OperationSpec(OperationCode.CONV_2D, validate, prepare, execute,
                     allow_zero_sized_input=True, plan=plan)
