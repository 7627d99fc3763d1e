"""Helpers shared by the detection and ROI operations (AOSP ``CpuOperationUtils.h`` and
``CpuExecutor.cpp`` behaviour they rely on)."""
from __future__ import annotations

import numpy as np

from nnsim.ops import _common as cm
from nnsim.types import OperandLifeTime, OperandType

T = OperandType
F32 = np.float32
QUANT_TYPES = (T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED, T.TENSOR_QUANT16_ASYMM,
               T.TENSOR_QUANT16_SYMM)


def to_float32(ctx, i: int) -> np.ndarray:
    """Input ``i`` as float32: float16 widened; quantized values converted as
    ``convertQuantToFloat32``: ``(float(q) - zero_point) * scale`` in float32."""
    value, operand = ctx.input(i), ctx.input_operand(i)
    if operand.type in QUANT_TYPES:
        return (value.astype(F32) - F32(operand.zero_point)) * F32(operand.scale)
    return value.astype(F32)


def quantize(values, dtype, scale: float, zero_point: int) -> np.ndarray:
    """``convertFloat32ToQuant`` / ``saturateCast(std::round(v / scale + zp))``: float32
    arithmetic, rounding half away from zero, saturated to ``dtype``."""
    v = (np.asarray(values, F32) / F32(scale) + F32(zero_point)).astype(np.float64)
    rounded = np.sign(v) * np.floor(np.abs(v) + 0.5)
    info = np.iinfo(dtype)
    return np.clip(rounded, info.min, info.max).astype(dtype)


def from_float32(ctx, index: int, values, scale: float | None = None,
                 zero_point: int | None = None) -> np.ndarray:
    """float32 results in the type of output ``index`` (quantized with the output's own
    parameters unless given)."""
    operand = ctx.output_operand(index)
    dtype = operand.dtype()
    if operand.type in QUANT_TYPES:
        return quantize(values, dtype, operand.scale if scale is None else scale,
                        operand.zero_point if zero_point is None else zero_point)
    return np.asarray(values).astype(dtype)


def check_output_params(ctx, index: int, scale: float, zero_point: int) -> None:
    """CpuExecutor's ``setInfoAndAllocateIfNeeded``: the scale and zero point prepare computes
    must equal those of a *model output* operand (any type, quant16 included)."""
    out = ctx.output_operand(index)
    if out.lifetime == OperandLifeTime.SUBGRAPH_OUTPUT:
        cm.check(ctx, F32(out.scale) == F32(scale) and int(out.zero_point) == zero_point,
                 f"output {index} must have scale {scale} and zero point {zero_point}, got "
                 f"{out.scale} and {out.zero_point}")


def set_dynamic_shape(ctx, index: int, shape) -> None:
    """Prepare's shape of a data-dependent output (0 = not known before execution),
    combined with the declared dimensions as AOSP's ``combineDimensions`` does."""
    declared = tuple(ctx.output_operand(index).dimensions)
    if len(declared) == len(shape):
        shape = tuple(d or s for d, s in zip(declared, shape))
    ctx.set_output_shape(index, shape)


def check_no_zero_sized_input(ctx) -> None:
    """CpuExecutor's ``checkNoZeroSizedInput`` for operations that do not allow them."""
    for i in range(ctx.num_inputs):
        v = ctx.input(i)
        if isinstance(v, np.ndarray) and v.ndim and 0 in v.shape:
            cm.check(ctx, False, f"does not support zero-sized tensor, but input {i} has "
                                 f"shape {v.shape}")
