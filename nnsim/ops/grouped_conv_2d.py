"""GROUPED_CONV_2D (OperationCode 55).

Inputs (explicit padding, 12): 0 input [N,H,W,G*Cg], 1 filter [O,KH,KW,Cg], 2 bias [O],
3-6 padding left/right/top/bottom, 7 stride_w, 8 stride_h, 9 groups, 10 fuse code, 11 layout
(BOOL). Implicit padding (9): 3 padding scheme, 4 stride_w, 5 stride_h, 6 groups, 7 fuse code,
8 layout. Output 0 [N,OH,OW,O]; output channel c convolves input channels of group
``c // (O / G)`` only.

Types (T13 GroupedConv2D.cpp): float32 / float16 / quant8-asymm FL3, quant8-signed FL4; a
quantized filter is of the input's type or per-channel (channelDim 0). Quantized arithmetic is
AOSP's (GroupedConv2D.cpp): every form requantizes with ``GetQuantizedConvolutionMultiplier``
(the float32 product ``in_scale * w_scale`` over the output scale), whose bias-scale check
fails the execution when the bias scale differs from that product by more than 1e-6.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.grouped_conv import grouped_conv_2d
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType


def validate(ctx):
    ctx.require(ctx.num_inputs in (9, 12) and ctx.num_outputs == 1,
                f"Invalid number of input operands ({ctx.num_inputs}, expected 12 or 9) or "
                f"output operands ({ctx.num_outputs}, expected 1)")
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM,
                                    T.TENSOR_QUANT8_ASYMM_SIGNED))
    ftype = ctx.input_type(1)
    if t in cm.FLOAT_TYPES:
        tensors = (t, t, t)
    else:
        ctx.require(ftype in (t, T.TENSOR_QUANT8_SYMM_PER_CHANNEL),
                    f"Unsupported filter tensor type {T(ftype).name}")
        if ftype == T.TENSOR_QUANT8_SYMM_PER_CHANNEL:
            quant = ctx.input(1).channel_quant
            ctx.require(quant is not None and quant.channelDim == 0,
                        "Unsupported filter tensor channel dimension")
        tensors = (t, ftype, T.TENSOR_INT32)
    ctx.check_input_types(tensors)
    ctx.check_input_types([T.INT32] * (ctx.num_inputs - 4), start=3)
    ctx.check_input_types((T.BOOL,), start=ctx.num_inputs - 1)
    ctx.check_output_types((t,))
    return FL4 if t == T.TENSOR_QUANT8_ASYMM_SIGNED else FL3


def _params(ctx):
    explicit = ctx.num_inputs == 12
    nchw = bool(ctx.scalar(ctx.num_inputs - 1))
    x, f, b = ctx.input(0), ctx.input(1), ctx.input(2)
    cm.check(ctx, x.ndim == 4 and f.ndim == 4 and b.ndim == 1,
             "input and filter must be 4-D, bias 1-D")
    n, h, w, c = cm.nhwc_dims(x.shape, nchw)
    oc, kh, kw, fc = f.shape
    if explicit:
        pl, pr, pt, pb, sw, sh, groups, fuse = (int(ctx.scalar(i)) for i in range(3, 11))
    else:
        scheme, sw, sh, groups, fuse = (int(ctx.scalar(i)) for i in range(3, 8))
        cm.check(ctx, sw > 0 and sh > 0, "strides must be positive")
        pl, pr = cm.implicit_padding(w, sw, kw, 1, scheme)
        pt, pb = cm.implicit_padding(h, sh, kh, 1, scheme)
    cm.check(ctx, b.shape[0] == oc, f"bias size {b.shape[0]} != {oc} output channels")
    cm.check(ctx, groups > 0 and fc * groups == c and oc % groups == 0,
             f"{groups} groups do not fit input depth {c}, filter depth {fc} and {oc} "
             f"output channels")
    cm.check(ctx, kw > max(pl, pr) and kh > max(pt, pb), "padding exceeds the filter size")
    cm.check(ctx, sw > 0 and sh > 0 and min(pl, pr, pt, pb) >= 0,
             "strides must be positive, padding non-negative")
    oh = cm.output_size(h, kh, 1, sh, pt, pb)
    ow = cm.output_size(w, kw, 1, sw, pl, pr)
    cm.check(ctx, n > 0 and oh > 0 and ow > 0, f"empty output {n}x{oh}x{ow}")
    return dict(nchw=nchw, shape=(n, oh, ow, oc), groups=groups, stride_w=sw, stride_h=sh,
                pad_left=pl, pad_right=pr, pad_top=pt, pad_bottom=pb, fuse=fuse)


def _check_bias_scale(ctx):
    """GetQuantizedConvolutionMultiplier's NN_OPS_CHECK (per-tensor filters only: the
    per-channel path derives each channel's bias scale from the filter scale)."""
    src, filt, bias = (ctx.input_operand(i) for i in range(3))
    if not cm.is_quant8(src.type) or filt.type == T.TENSOR_QUANT8_SYMM_PER_CHANNEL:
        return
    product = float(np.float32(np.float32(src.scale) * np.float32(filt.scale)))
    bias_scale = float(np.float32(bias.scale))
    cm.check(ctx, abs(product - bias_scale) <= 1e-6 * min(product, bias_scale),
             f"bias scale {bias_scale} != input scale * filter scale {product}")


def prepare(ctx):
    p = _params(ctx)
    _check_bias_scale(ctx)
    n, oh, ow, oc = p["shape"]
    ctx.set_output_shape(0, cm.layout_shape(n, oh, ow, oc, p["nchw"]))


def execute(ctx):
    p = _params(ctx)
    kwargs = {k: p[k] for k in ("groups", "stride_w", "stride_h", "pad_left", "pad_right",
                                "pad_top", "pad_bottom", "fuse")}
    if cm.is_quant8(ctx.input_operand(0).type):
        w_scales, w_zp = cm.filter_quant(ctx.input_operand(1))
        kwargs.update(cm.quant_kwargs(ctx), w_scales=w_scales, w_zp=w_zp, multipliers="aosp")
    out = grouped_conv_2d(cm.to_nhwc(ctx.input(0), p["nchw"]), ctx.input(1), ctx.input(2),
                          **kwargs)
    ctx.set_output(0, cm.from_nhwc(out, p["nchw"]))


SPEC = OperationSpec(OperationCode.GROUPED_CONV_2D, validate, prepare, execute)
