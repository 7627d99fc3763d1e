"""Helpers shared by operation modules: padding, layout, quantization parameters."""
from __future__ import annotations

from functools import partial

import numpy as np

from nnsim.errors import OpFailedError
from nnsim.kernels._common import (aligned_empty, broadcast_shape, direct, explicit_out_size,
                                   same_padding)
from nnsim.kernels.threads import get_num_threads
from nnsim.types import OperandLifeTime, OperandType, PaddingCode

T = OperandType
FLOAT_TYPES = (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16)
QUANT8_TYPES = (T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED)


def implicit_padding(in_size: int, stride: int, kernel: int, dilation: int,
                     scheme: int) -> tuple[int, int]:
    """(begin, end) padding for PADDING_SAME / PADDING_VALID (nnapi-runtime.md 1.4)."""
    if scheme == PaddingCode.PADDING_SAME:
        _, before, after = same_padding(in_size, kernel, stride, dilation)
        return before, after
    return 0, 0


def output_size(in_size: int, kernel: int, dilation: int, stride: int, pad_begin: int,
                pad_end: int) -> int:
    return explicit_out_size(in_size, kernel, stride, dilation, pad_begin, pad_end)


def to_nhwc(x: np.ndarray, nchw: bool) -> np.ndarray:
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1)) if nchw else x


def from_nhwc(x: np.ndarray, nchw: bool) -> np.ndarray:
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2)) if nchw else x


def kernel_plan_runner(kernel_plan, out_shape, x_dtype, nchw: bool, *, x_shape=None,
                       result_shape=None):
    """``runner(values) -> [output]`` around a kernel plan (``nnsim.kernels.conv``'s
    ``prepare_*`` result): input 0 in the operation's layout, the result in one NHWC buffer
    kept across executions (float16 computed in float32 and rounded, as ``to_float32``).
    When input 0 is the same array as at the previous call (another plan's buffer) and the
    thread count (``nnsim.kernels.threads``) is unchanged, the kernel call bound to both
    buffers is reused. ``runner.adopt`` moves the buffer (:func:`adopt_buffer`) when the
    output handed out is the buffer itself. ``x_shape`` / ``result_shape``: input 0 seen as,
    and the output handed out as, these shapes (FULLY_CONNECTED as a 1x1 convolution:
    [batch, 1, 1, size] in, [batch, units] out)."""
    x_dtype = np.dtype(x_dtype)
    quantized = x_dtype.kind in "iu"
    buffer = [aligned_empty(out_shape, kernel_plan.out_dtype if quantized else np.float32)]

    def shaped(out):
        return from_nhwc(out, nchw) if result_shape is None else out.reshape(result_shape)
    result = [shaped(buffer[0])]
    # (input array, kernel call bound to it and the buffer, threads, the call as bound)
    bound = [None, None, 0, None]

    def run(values):
        x = values[0]
        threads = get_num_threads()
        if x is bound[0] and threads == bound[2]:
            bound[1]()
            return result
        x4 = x if x_shape is None else x.reshape(x_shape)
        xin = np.ascontiguousarray(to_nhwc(x4, nchw), dtype=x_dtype if quantized else np.float32)
        if xin is x4:
            call = kernel_plan.bind(x4, buffer[0])
            call()
            bound[:] = x, direct(call), threads, call   # compiled by the call
            return result
        out = kernel_plan.run(xin, buffer[0])
        if not quantized and x_dtype != np.float32:
            out = out.astype(x_dtype)
        return [shaped(out)]
    if result[0] is buffer[0]:   # a view handed out (NCHW, FULLY_CONNECTED) keeps the buffer
        run.adopt = partial(adopt_buffer, buffer, result, bound)
    run.bound_call = lambda values: (bound[3] if values[0] is bound[0]
                                     and get_num_threads() == bound[2] else None)
    return run


def adopt_buffer(buffers, result, bound, k, old, new) -> bool:
    """A runner's ``adopt(k, old, new)`` (:mod:`nnsim.ops.arena`): output ``k`` from now on
    into ``new`` when ``old`` is the runner's own buffer ``buffers[k]`` (not a view of it),
    the call bound to the old buffers dropped. True when it moved."""
    if result[k] is not old or buffers[k] is not old:
        return False
    buffers[k] = result[k] = new
    bound[0] = None
    return True


def bound_runner(bind, fallback, result: list):
    """``runner(values) -> outputs`` for a plan with fixed output buffers (``result``):
    ``bind(x)`` gives a function of no arguments computing them from the current contents
    of input 0, or None when that input does not allow it (then ``fallback(values)`` runs
    instead); the bound call is reused while input 0 is the same array (another plan's
    buffer)."""
    bound = [None, None, None]   # (input array, the call bound to it, the call as bound)

    def run(values):
        x = values[0]
        if x is not bound[0]:
            call = bind(x)
            if call is None:
                return fallback(values)
            call()
            bound[:] = x, direct(call), call   # compiled by the call
            return result
        bound[1]()
        return result
    run.bound_call = lambda values: bound[2] if values[0] is bound[0] else None
    return run


def is_quant8(t: int) -> bool:
    return t in QUANT8_TYPES


def out_dtype(t: int):
    return np.uint8 if t == T.TENSOR_QUANT8_ASYMM else np.int8


def filter_quant(operand) -> tuple[np.ndarray, int]:
    """(scales array, zero point) of a filter: per-channel params or the per-tensor scale."""
    if operand.type == T.TENSOR_QUANT8_SYMM_PER_CHANNEL:
        return np.asarray(operand.channel_quant.scales, dtype=np.float32), 0
    return np.asarray([operand.scale], dtype=np.float32), int(operand.zero_point)


def conv_quant_kwargs(ctx) -> dict:
    """Quantization kwargs of a quantized CONV_2D / DEPTHWISE_CONV_2D kernel call, giving
    AOSP's requantization multipliers ``double(float32(in_scale * w_scale[c])) / out_scale``.

    AOSP derives every one of them (uint8 or int8, per-tensor or per-channel) through
    GetQuantizedConvolutionMultiplier, whose ``inputShape.scale * filterShape.scale`` is a
    float32 product (common/OperationsExecutionUtils.cpp:154-167; Conv2D.cpp:240-243, 377-386,
    470-477; DepthwiseConv2D.cpp:206-209, 303-312). nnsim.kernels follow TFLite, whose int8
    kernels multiply in double (docs/numerics.md). Handing the kernel the float32 products
    as filter scales and 1.0 as input scale makes either of its rules compute AOSP's value;
    the kernels use ``in_scale`` for nothing else."""
    kwargs = quant_kwargs(ctx)
    w_scales, w_zp = filter_quant(ctx.input_operand(1))
    kwargs.update(w_scales=np.float32(kwargs["in_scale"]) * w_scales, w_zp=w_zp, in_scale=1.0)
    return kwargs


def quant_kwargs(ctx, in_index: int = 0, out_index: int = 0) -> dict:
    """``in_scale/in_zp/out_scale/out_zp/out_dtype`` for a quantized op, {} for float."""
    src, dst = ctx.input_operand(in_index), ctx.output_operand(out_index)
    if not is_quant8(src.type):
        return {}
    return dict(in_scale=src.scale, in_zp=src.zero_point, out_scale=dst.scale,
                out_zp=dst.zero_point, out_dtype=out_dtype(dst.type))


def io_quant(ctx, in_index: int = 0, out_index: int = 0) -> dict:
    """``in_scale/in_zp/out_scale/out_zp`` (no dtype) for kernels that keep the input dtype."""
    kw = quant_kwargs(ctx, in_index, out_index)
    kw.pop("out_dtype", None)
    return kw


def check(ctx, cond: bool, message: str) -> None:
    """A failed runtime check of ``prepare`` (NN_RET_CHECK in a CPU op): OP_FAILED."""
    if not cond:
        raise OpFailedError(f"{ctx.code.name}: {message}")


def set_broadcast_output_shape(ctx, output: int = 0) -> None:
    """calculateBroadcastedShape of inputs 0 and 1 as the shape of ``output``: trailing
    dimensions equal or 1; OP_FAILED when they do not broadcast."""
    try:
        shape = broadcast_shape(ctx.input_shape(0), ctx.input_shape(1))
    except ValueError as e:
        check(ctx, False, str(e))
    ctx.set_output_shape(output, shape)


def legacy_quant_scale_ok(ctx, filter_index: int = 1) -> bool:
    """AOSP's "outputScale > inputScale * filterScale" check for quant8 before FL3.

    Conv2D.cpp / DepthwiseConv2D.cpp (T13) read the "output" scale with
    ``context->getInputShape(kOutputTensor)`` and kOutputTensor == 0, so the scale compared is
    really the *input* scale: the check is ``in_scale > in_scale * filter_scale``. Reproduced
    as is, because the feature level decides which devices may run the operation.
    FULLY_CONNECTED reads the real output scale and does not use this helper.
    """
    if ctx.input_type(0) != T.TENSOR_QUANT8_ASYMM:
        return True
    in_scale = ctx.input(0).scale
    return in_scale > in_scale * ctx.input(filter_index).scale


def window_args(ctx, start: int, explicit: bool):
    """Padding and strides of a conv/pool operation, read from input ``start`` on.

    Explicit: pad left, right, top, bottom, stride w, stride h; implicit: padding scheme,
    stride w, stride h. Returns (padding, stride_w, stride_h, next input index) where
    padding is the (left, right, top, bottom) tuple or the implicit scheme code.
    """
    if explicit:
        l, r, t, b, sw, sh = (int(ctx.scalar(i)) for i in range(start, start + 6))
        return (l, r, t, b), sw, sh, start + 6
    scheme, sw, sh = (int(ctx.scalar(i)) for i in range(start, start + 3))
    return scheme, sw, sh, start + 3


def resolve_padding(padding, h: int, w: int, kh: int, kw: int, sh: int, sw: int,
                    dh: int = 1, dw: int = 1) -> tuple[int, int, int, int]:
    """(left, right, top, bottom): explicit values as given, implicit ones computed."""
    if isinstance(padding, tuple):
        return padding
    left, right = implicit_padding(w, sw, kw, dw, padding)
    top, bottom = implicit_padding(h, sh, kh, dh, padding)
    return left, right, top, bottom


def nhwc_dims(shape, nchw: bool) -> tuple[int, int, int, int]:
    """(N, H, W, C) of a 4-D shape in either layout."""
    n, a, b, c = shape
    return (n, b, c, a) if nchw else (n, a, b, c)


def layout_shape(n: int, h: int, w: int, c: int, nchw: bool) -> tuple:
    return (n, c, h, w) if nchw else (n, h, w, c)



def optional_bool(ctx, index: int) -> bool:
    """An optional trailing BOOL argument (layout, align_corners, ...): False when absent."""
    return bool(ctx.scalar(index, False)) if ctx.num_inputs > index else False


def check_model_output_quant(ctx, index: int, scale: float, zero_point: int) -> None:
    """CpuExecutor's setInfoAndAllocateIfNeeded: the scale and zero point prepare computed must
    equal those of a *model output* operand (temporaries take prepare's values silently)."""
    out = ctx.output_operand(index)
    if out.lifetime == OperandLifeTime.SUBGRAPH_OUTPUT and is_quant8(out.type):
        check(ctx, np.float32(out.scale) == np.float32(scale) and int(out.zero_point) == zero_point,
              f"output {index} must have scale {scale} and zero point {zero_point}, got "
              f"{out.scale} and {out.zero_point}")
