"""DEPTHWISE_CONV_2D (OperationCode 4).

Inputs (explicit padding): 0 input [N,H,W,C], 1 filter [1,KH,KW,O] (O = C * multiplier),
2 bias [O], 3-6 padding left/right/top/bottom, 7 stride_w, 8 stride_h, 9 depth multiplier,
10 fuse code, [11 layout (BOOL, FL3), 12 dilation_w, 13 dilation_h (FL3)].
Implicit padding: 3 padding scheme, 4 stride_w, 5 stride_h, 6 depth multiplier, 7 fuse code,
[8 layout, 9 dilation_w, 10 dilation_h]. Output 0 [N,OH,OW,O].

Types: float32 / quant8-asymm FL1; float16, per-channel filter (TENSOR_QUANT8_SYMM_PER_CHANNEL,
channelDim 3), layout, dilation, or quant8 failing the legacy scale constraint FL3;
quant8-signed FL4 (T13 common/types/operations/src/DepthwiseConv2D.cpp).
"""
from __future__ import annotations

from nnsim.kernels.depthwise import depthwise_conv_2d as dw_kernel
from nnsim.kernels.depthwise import prepare_depthwise_conv_2d
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec, context_runner, type_feature_level
from nnsim.types import FL3, OperandType, OperationCode

T = OperandType


def parse_args(n_inputs: int, input_type) -> tuple[bool, bool, bool]:
    """(explicit padding, has layout, has dilation) from the argument count and types."""
    explicit = n_inputs >= 11 and input_type(8) == T.INT32
    offset = 3 if explicit else 0
    return explicit, n_inputs >= 9 + offset, n_inputs == 11 + offset


def validate(ctx):
    ctx.check_counts((8, 9, 11, 12, 14), 1)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM,
                                    T.TENSOR_QUANT8_ASYMM_SIGNED))
    explicit, layout, dilation = parse_args(ctx.num_inputs, ctx.input_type)
    offset = 3 if explicit else 0
    ctx.require(ctx.num_inputs != 10 + offset, "only one dilation factor was provided")
    level = type_feature_level(t)
    ftype = ctx.input_type(1)
    if t in cm.FLOAT_TYPES:
        ctx.check_input_types((t, t, t))
    else:
        ctx.require(ftype in (t, T.TENSOR_QUANT8_SYMM_PER_CHANNEL),
                    f"filter type {T(ftype).name} does not match input type {T(t).name}")
        if ftype == T.TENSOR_QUANT8_SYMM_PER_CHANNEL:
            cq = ctx.input(1).channel_quant
            ctx.require(cq is not None and cq.channelDim == 3,
                        "per-channel filter must have channelDim 3")
            level = max(level, FL3)
        ctx.check_input_types((T.TENSOR_INT32,), start=2)
    ctx.check_input_types([T.INT32] * (8 if explicit else 5), start=3)
    if layout:
        ctx.check_input_types((T.BOOL,), start=8 + offset)
    if dilation:
        ctx.check_input_types((T.INT32, T.INT32), start=9 + offset)
    if layout or dilation or not cm.legacy_quant_scale_ok(ctx):
        level = max(level, FL3)
    ctx.check_output_types((t,))
    return level


def _params(ctx):
    explicit, layout, dilation = parse_args(ctx.num_inputs, lambda i: ctx.input_operand(i).type)
    o = 3 if explicit else 0
    nchw = bool(ctx.scalar(8 + o)) if layout else False
    x, w = ctx.input(0), ctx.input(1)
    cm.check(ctx, x.ndim == 4 and w.ndim == 4 and ctx.input(2).ndim == 1,
             "input and filter must be 4-D, bias 1-D")
    n, h, wd, c = cm.nhwc_dims(x.shape, nchw)
    _, kh, kw, oc = w.shape
    padding, sw, sh, nxt = cm.window_args(ctx, 3, explicit)
    mult, fuse = int(ctx.scalar(nxt)), int(ctx.scalar(nxt + 1))
    dw, dh = (int(ctx.scalar(9 + o)), int(ctx.scalar(10 + o))) if dilation else (1, 1)
    pl, pr, pt, pb = cm.resolve_padding(padding, h, wd, kh, kw, sh, sw, dh, dw)
    cm.check(ctx, min(sw, sh, dw, dh, mult) > 0 and min(pl, pr, pt, pb) >= 0,
             "strides, dilations and depth multiplier must be positive, padding non-negative")
    cm.check(ctx, w.shape[0] == 1 and ctx.input(2).shape[0] == oc,
             "filter must be [1, KH, KW, O] and bias [O]")
    cm.check(ctx, c * mult == oc, f"depth multiplier {mult} x {c} channels != filter depth {oc}")
    ekh, ekw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    cm.check(ctx, ekw > max(pl, pr) and ekh > max(pt, pb), "padding exceeds the filter size")
    return dict(nchw=nchw, n=n, h=h, w=wd, kh=kh, kw=kw, oc=oc, depth_multiplier=mult,
                stride_w=sw, stride_h=sh, dilation_w=dw, dilation_h=dh, pad_left=pl,
                pad_right=pr, pad_top=pt, pad_bottom=pb, fuse=fuse)


def prepare(ctx):
    p = _params(ctx)
    oh = cm.output_size(p["h"], p["kh"], p["dilation_h"], p["stride_h"], p["pad_top"],
                        p["pad_bottom"])
    ow = cm.output_size(p["w"], p["kw"], p["dilation_w"], p["stride_w"], p["pad_left"],
                        p["pad_right"])
    ctx.set_output_shape(0, cm.layout_shape(p["n"], oh, ow, p["oc"], p["nchw"]))


def _kernel_args(ctx, p):
    kwargs = {k: p[k] for k in ("depth_multiplier", "stride_w", "stride_h", "dilation_w",
                                "dilation_h", "pad_left", "pad_right", "pad_top", "pad_bottom",
                                "fuse")}
    if cm.is_quant8(ctx.input_operand(0).type):
        kwargs.update(cm.conv_quant_kwargs(ctx))   # AOSP's float32 scale products
    return kwargs


def execute(ctx):
    p = _params(ctx)
    x = cm.to_nhwc(ctx.input(0), p["nchw"])
    out = dw_kernel(x, ctx.input(1), ctx.input(2), **_kernel_args(ctx, p))
    ctx.set_output(0, cm.from_nhwc(out, p["nchw"]))


def plan(ctx):
    """Multipliers and padded-row buffers computed once per input shape."""
    x = ctx.input(0)
    if x.size == 0 or not ctx.input_operand(1).is_constant or not ctx.input_operand(2).is_constant:
        return context_runner(SPEC, ctx)
    p = _params(ctx)
    c = p["oc"] // p["depth_multiplier"]
    kplan, out_shape = prepare_depthwise_conv_2d((p["n"], p["h"], p["w"], c), x.dtype,
                                                 ctx.input(1), ctx.input(2), **_kernel_args(ctx, p))
    return cm.kernel_plan_runner(kplan, out_shape, x.dtype, p["nchw"])


SPEC = OperationSpec(OperationCode.DEPTHWISE_CONV_2D, validate, prepare, execute,
                     allow_zero_sized_input=True, plan=plan)
