"""TRANSPOSE_CONV_2D (OperationCode 91).

Inputs (explicit padding, 11): 0 input [N,H,W,C], 1 filter [O,KH,KW,C], 2 bias [O], 3-6 padding
left/right/top/bottom, 7 stride_w, 8 stride_h, 9 fuse code, 10 layout (BOOL). Implicit (9):
3 output shape (TENSOR_INT32 [4], used for the padding only), 4 padding scheme, 5 stride_w,
6 stride_h, 7 fuse code, 8 layout. Output 0 [N, (H-1)*sh + KH - top - bottom, ..., O]; the
right / bottom padding may be negative (implicit SAME fits the output shape exactly).

Types (T13 TransposeConv2D.cpp): float32, float16, quant8-asymm FL3 (filter of the input type
or quant8-symm-per-channel with channelDim 0; int32 bias); quant8-signed FL4. Quantized
per-tensor use checks bias scale == input scale * filter scale (GetQuantizedConvolutionMultipler).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.transpose_conv import transpose_conv_2d
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, FL4, OperandType, OperationCode, PaddingCode

T = OperandType


def validate(ctx):
    ctx.check_counts((9, 11), 1)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM,
                                    T.TENSOR_QUANT8_ASYMM_SIGNED))
    if t in cm.FLOAT_TYPES:
        head = (t, t, t)
    else:
        ftype = ctx.check_input_type_in(1, (t, T.TENSOR_QUANT8_SYMM_PER_CHANNEL))
        if ftype == T.TENSOR_QUANT8_SYMM_PER_CHANNEL:
            cq = ctx.input(1).channel_quant
            ctx.require(cq is not None and cq.channelDim == 0,
                        "per-channel filter must have channelDim 0")
        head = (t, ftype, T.TENSOR_INT32)
    args = (T.INT32,) * 7 if ctx.num_inputs == 11 else (T.TENSOR_INT32,) + (T.INT32,) * 4
    ctx.check_input_types(head + args + (T.BOOL,))
    ctx.check_output_types((t,))
    return FL4 if t == T.TENSOR_QUANT8_ASYMM_SIGNED else FL3


def _implicit_padding(out_size: int, stride: int, kernel: int, scheme: int):
    """calculateExplicitPaddingTransposeConv: the tail may be negative."""
    if scheme != PaddingCode.PADDING_SAME:
        return 0, 0
    total = ((out_size + stride - 1) // stride - 1) * stride + kernel - out_size
    head = total // 2 if total > 0 else 0
    return head, total - head


def _params(ctx):
    x, f, b = ctx.input(0), ctx.input(1), ctx.input(2)
    cm.check(ctx, x.ndim == 4 and f.ndim == 4 and b.ndim == 1,
             "input and filter must be 4-D, bias 1-D")
    nchw = bool(ctx.scalar(ctx.num_inputs - 1))
    n, h, w, c = cm.nhwc_dims(x.shape, nchw)
    o, kh, kw, fc = f.shape
    cm.check(ctx, fc == c and b.shape[0] == o, "filter depth or bias size does not match")
    cm.check(ctx, min(h, w, c, o, kh, kw) > 0, "only the batch dimension may be zero")
    if ctx.num_inputs == 11:
        pl, pr, pt, pb, sw, sh, fuse = (int(ctx.scalar(i)) for i in range(3, 10))
    else:
        shape = ctx.input(3)
        cm.check(ctx, shape.shape == (4,), "output shape must be a 1-D tensor of 4 values")
        out_h, out_w = (int(shape[2]), int(shape[3])) if nchw else (int(shape[1]), int(shape[2]))
        scheme, sw, sh, fuse = (int(ctx.scalar(i)) for i in range(4, 8))
        cm.check(ctx, sw > 0 and sh > 0, "strides must be positive")
        pl, pr = _implicit_padding(out_w, sw, kw, scheme)
        pt, pb = _implicit_padding(out_h, sh, kh, scheme)
    cm.check(ctx, pl >= 0 and pt >= 0 and sw > 0 and sh > 0 and fuse >= 0,
             "left/top padding must be >= 0 and strides positive")
    oh, ow = (h - 1) * sh + kh - pt - pb, (w - 1) * sw + kw - pl - pr
    cm.check(ctx, oh > 0 and ow > 0, f"output size {oh}x{ow} must be positive")
    return dict(nchw=nchw, shape=(n, oh, ow, o), stride_h=sh, stride_w=sw, pad_top=pt,
                pad_left=pl, fuse=fuse)


def prepare(ctx):
    p = _params(ctx)
    ctx.set_output_shape(0, cm.layout_shape(*p["shape"], p["nchw"]))


def execute(ctx):
    p = _params(ctx)
    _, oh, ow, _ = p["shape"]
    kwargs = dict(out_h=oh, out_w=ow, stride_h=p["stride_h"], stride_w=p["stride_w"],
                  pad_top=p["pad_top"], pad_left=p["pad_left"], fuse=p["fuse"])
    src, filt = ctx.input_operand(0), ctx.input_operand(1)
    if cm.is_quant8(src.type):
        scales, w_zp = cm.filter_quant(filt)
        if filt.type != T.TENSOR_QUANT8_SYMM_PER_CHANNEL:
            product = float(np.float32(np.float32(src.scale) * np.float32(filt.scale)))
            bias_scale = float(np.float32(ctx.input_operand(2).scale))
            cm.check(ctx, abs(product - bias_scale) <= 1e-6 * min(product, bias_scale),
                     "bias scale must equal input scale * filter scale")
        kwargs.update(cm.quant_kwargs(ctx), w_scales=scales, w_zp=w_zp)
    y = transpose_conv_2d(cm.to_nhwc(ctx.input(0), p["nchw"]), ctx.input(1), ctx.input(2),
                          **kwargs)
    ctx.set_output(0, cm.from_nhwc(y, p["nchw"]))


SPEC = OperationSpec(OperationCode.TRANSPOSE_CONV_2D, validate, prepare, execute,
                     allow_zero_sized_input=True)
