"""What :mod:`nnsim.tools.warmup`'s compiling child runs: one operation of each kind an
interpreter's plan holds, on zeros, so that the kernels its first invoke will need later are
compiled (and cached) while that invoke compiles what it needs now."""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import numpy as np

from nnsim.kernels.gemm import (compile_float_micro_kernels, compile_gemv_micro_kernels,
                                compile_micro_kernels, compile_padded_copy, float_window,
                                gemm_channels)
from nnsim.ops.executor import (conv_variant, float_conv_channels, is_quantized_conv,
                                is_windowed_conv, quant_conv_channels, quant_gemv_layers,
                                warm_up_steps, windowed_variant)
from nnsim.tflite.builtins._base import numpy_dtype
from nnsim.tflite.schema import TensorType
from nnsim.types import OperationCode

__all__ = ["spare_compiles", "warm_up"]

_QUANT8 = {TensorType.UINT8, TensorType.INT8}


def warm_up(interp) -> int:
    """Run one operation of each kind ``interp``'s plan holds (a delegate partition's NNAPI
    operations, ``executor.warm_up_steps``; a TFLite CPU node, by builtin, input types and,
    for a convolution, ``executor.conv_variant``) once on zero inputs, except the kind an
    invoke meets first, depthwise convolutions first (:func:`_is_depthwise`), then kinds an
    invoke meets last first: what the first invoke will need later gets compiled (and
    cached) while that invoke compiles what it needs now.

    Before them, when the plan has a convolution with a window, the padded copy of its input
    (``kernels.gemm.compile_padded_copy``), which the invoke's first layer needs right after
    its micro-kernel; then, when the plan has a quantized convolution, the integer GEMM core's
    micro-kernels (``kernels.gemm.compile_micro_kernels``): the whole-tile one, the longest
    compilation of all, then those the channel counts of the plan's quantized convolutions
    call besides, and when it has a quantized layer of one output pixel, the matrix-vector
    loops' (``kernels.gemm.compile_gemv_micro_kernels``). The invoke, binding its layers,
    loads them from the cache. After them, the float GEMM core's micro-kernels for the
    channel counts and windows of the plan's float convolutions
    (``kernels.gemm.compile_float_micro_kernels``), which a layer otherwise compiles when the
    invoke first binds it. Only for a throwaway process (:mod:`nnsim.tools.warmup`'s child):
    stateful nodes run on zeros, buffers are overwritten. Returns how many operations ran."""
    plan = _scan(interp)
    if plan.windowed_conv:
        compile_padded_copy()
    if plan.quant_couts is not None:
        compile_micro_kernels(plan.quant_couts)
    if plan.quant_gemv:
        compile_gemv_micro_kernels()
    later = list(plan.units.items())[1:][::-1]
    later.sort(key=lambda unit: not _is_depthwise(unit[0]))   # (stable: the rest as they are)
    ran = sum(bool(warm()) for _, warm in later)
    compile_float_micro_kernels(plan.float_convs)
    return ran


def _is_depthwise(kind) -> bool:
    """Whether a unit kind of :func:`_scan` is a depthwise convolution: the child takes these
    first (a CNN's invoke meets one right after its first layer, and their cores are the
    longest compilations after the GEMM core's, which the invoke compiles first)."""
    return kind[1] in (OperationCode.DEPTHWISE_CONV_2D, "DepthwiseConv2D")


def spare_compiles(interp):
    """The first invoke's spare work (``kernels._claims.spare_work``), found when first
    needed: what it compiles while the compiling child holds a kernel it waits for. The
    float GEMM micro-kernels of each channel count and window of the plan's float
    convolutions (the child's last work), then the integer ones, the matrix-vector loops' and
    the padded copy (its first): whatever the child has not done yet, the invoke needs later
    anyway."""
    plan = _scan(interp)
    for conv in sorted(plan.float_convs):
        yield partial(compile_float_micro_kernels, (conv,))
    if plan.quant_couts is not None:
        yield partial(compile_micro_kernels, plan.quant_couts)
    if plan.quant_gemv:
        yield compile_gemv_micro_kernels
    if plan.windowed_conv:
        yield compile_padded_copy


class _Plan(NamedTuple):
    units: dict           # kind -> warm(), in run order
    windowed_conv: bool   # a convolution with a window or a stride (padded copy)
    quant_couts: set | None   # output channels of quantized GEMM convolutions (None: none)
    float_convs: set      # (output channels, window) of float ones (kernels.gemm.float_window)
    quant_gemv: bool      # a quantized layer of one output pixel (the matrix-vector loops)


def _scan(interp) -> _Plan:
    units: dict = {}
    quantized_conv = windowed_conv = False
    quant_couts: set = set()
    float_convs: set = set()
    quant_gemv = False
    # the plan's steps as the invoke has them (building them anew would replace the list
    # its bound layers are checked against)
    steps = interp._steps if interp._steps_plan is interp.execution_plan else \
        interp._build_steps()
    for item, builtin, inputs, outputs, _, _ in steps:
        if builtin is None:
            kernel = interp.delegation.kernels[item.index]
            for model in _nnapi_models(kernel):
                for kind, warm in warm_up_steps(model):
                    units.setdefault(("nnapi",) + kind, warm)
                    quantized_conv |= is_quantized_conv(kind)
                    windowed_conv |= is_windowed_conv(kind)
                quant_gemv |= quant_gemv_layers(model)
                couts = quant_conv_channels(model)   # (FULLY_CONNECTED's too)
                quant_couts |= couts
                quantized_conv |= bool(couts)
                float_convs |= float_conv_channels(model)
            continue
        types = tuple(interp._sg.tensors[i].type for i in inputs if i >= 0)
        name = type(builtin).__name__
        shapes = [interp._shape_or_file(i) for i in (*inputs[:2], outputs[0])] \
            if name in ("Conv2D", "DepthwiseConv2D") and len(inputs) >= 2 else None
        opts = getattr(builtin, "opts", None)
        dilated = max(getattr(opts, "dilation_w_factor", 1),
                      getattr(opts, "dilation_h_factor", 1)) > 1
        variant = None if shapes is None else conv_variant(*shapes, dilated)
        units.setdefault(("tflite", name, types, variant),
                         partial(_warm_node, interp, builtin, inputs))
        quantized = name == "Conv2D" and len(types) >= 2 and {types[0], types[1]} <= _QUANT8
        quantized_conv |= quantized
        windowed_conv |= name == "Conv2D" and windowed_variant(variant)
        if name == "Conv2D" and variant is not None:
            is_float = types[0] in (TensorType.FLOAT32, TensorType.FLOAT16)
            cout = gemm_channels(shapes[2], is_float) if quantized or is_float else None
            if cout is not None and is_float:
                float_convs.add((cout, float_window(shapes[1])))
            elif cout is not None:
                quant_couts.add(cout)
            quant_gemv |= quantized and cout is None
    return _Plan(units, windowed_conv, quant_couts if quantized_conv else None, float_convs,
                 quant_gemv)


def _warm_node(interp, builtin, inputs) -> bool:
    values = [None if i < 0 else interp._values.get(i) for i in inputs]
    values = [np.zeros(interp._shape_or_file(i), numpy_dtype(interp._sg.tensors[i].type))
              if v is None and i >= 0 else v for v, i in zip(values, inputs)]
    try:
        builtin.eval(values)
    except Exception:   # best effort: the real invoke reports any failure
        return False
    return True


def _nnapi_models(kernel) -> list:
    """The NNAPI models a delegate partition's compilation runs (its step models); none for
    a VX partition, which has no NNAPI compilation."""
    plan = getattr(getattr(kernel, "compilation", None), "plan", None)
    if plan is None:
        return []
    prepared = [plan.prepared] if plan.kind == plan.SIMPLE else \
        [step.prepared for step in plan.execution_steps()]
    return [p.model for p in prepared if p is not None]
