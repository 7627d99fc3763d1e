"""Small NNAPI models built with ModelBuilder, and NNAPI models of .tflite files."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from nnsim.runtime.model import ModelBuilder
from nnsim.common.operand import OperandTypeSpec, SymmPerChannelQuantParams
from nnsim.types import OperandType as T

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
F32, F16, U8, I8 = T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM, \
    T.TENSOR_QUANT8_ASYMM_SIGNED
_NP = {T.INT32: np.int32, T.FLOAT32: np.float32, T.BOOL: np.bool_, T.FLOAT16: np.float16,
       T.TENSOR_INT32: np.int32, F32: np.float32, F16: np.float16, U8: np.uint8, I8: np.int8,
       T.TENSOR_QUANT8_SYMM_PER_CHANNEL: np.int8, T.TENSOR_BOOL8: np.bool_}
QUANT = {U8: (0.5, 128), I8: (0.5, 0), T.TENSOR_INT32: (0.0, 0)}


class Builder(ModelBuilder):
    """ModelBuilder with one-line operand helpers."""

    def tensor(self, t, dims, value=None, scale=None, zero_point=None, channel_quant=None):
        s, z = QUANT.get(t, (0.0, 0))
        idx = self.add_operand(OperandTypeSpec(t, tuple(dims), s if scale is None else scale,
                                               z if zero_point is None else zero_point))
        if channel_quant is not None:  # (channel dim, scales)
            self.set_operand_symm_per_channel_quant_params(
                idx, SymmPerChannelQuantParams(channel_quant[0], channel_quant[1]))
        if value is not None:
            self.set_operand_value(idx, np.asarray(value, dtype=_NP[t]).reshape(dims))
        return idx

    def scalar(self, t, value):
        idx = self.add_operand(OperandTypeSpec(t))
        self.set_operand_value(idx, np.asarray(value, dtype=_NP[t]))
        return idx

    def done(self, inputs, outputs):
        self.identify_inputs_and_outputs(inputs, outputs)
        self.finish()
        return self


def conv_model(t, depthwise=False, kernel=3):
    """[1,8,8,4] -> CONV_2D / DEPTHWISE_CONV_2D (implicit SAME padding) -> [1,8,8,4]."""
    b = Builder()
    x = b.tensor(t, (1, 8, 8, 4))
    wdims = (1, kernel, kernel, 4) if depthwise else (4, kernel, kernel, 4)
    wt = F16 if t == F16 else F32 if t == F32 else t
    w = b.tensor(wt, wdims, np.ones(wdims))
    bt = t if t in (F32, F16) else T.TENSOR_INT32
    bias = b.tensor(bt, (4,), np.zeros(4), scale=0.25 if bt == T.TENSOR_INT32 else None)
    args = [b.scalar(T.INT32, 1), b.scalar(T.INT32, 1), b.scalar(T.INT32, 1)]
    if depthwise:
        args.append(b.scalar(T.INT32, 1))
    args.append(b.scalar(T.INT32, 0))
    y = b.tensor(t, (1, 8, 8, 4), scale=8.0 if t in (U8, I8) else None)
    code = 4 if depthwise else 3
    b.add_operation(code, [x, w, bias] + args, [y])
    return b.done([x], [y])


def unary_model(code, t, dims=(1, 4, 4, 2)):
    b = Builder()
    x = b.tensor(t, dims)
    y = b.tensor(t, dims, scale=1.0 / 128 if t == U8 else None, zero_point=128 if t == U8 else None)
    b.add_operation(code, [x], [y])
    return b.done([x], [y])


def resize_model(code, t=U8, align_corners=None, half_pixel=None):
    """RESIZE_* [1,4,4,1] -> [1,8,8,1]; the flags are appended only when given (as the TFLite
    delegate appends them only when one is true, npu-drivers.md 6.4)."""
    b = Builder()
    x = b.tensor(t, (1, 4, 4, 1))
    ins = [x, b.scalar(T.INT32, 8), b.scalar(T.INT32, 8)]
    if code == 94 or align_corners is not None or half_pixel is not None:
        ins.append(b.scalar(T.BOOL, False))  # layout (mandatory for RESIZE_NEAREST_NEIGHBOR)
    if align_corners is not None or half_pixel is not None:
        ins += [b.scalar(T.BOOL, bool(align_corners)), b.scalar(T.BOOL, bool(half_pixel))]
    y = b.tensor(t, (1, 8, 8, 1))
    b.add_operation(code, ins, [y])
    return b.done([x], [y])


@lru_cache(maxsize=16)
def nnapi_model_of(path: str, feature_level: int = 30, sdk: int = 31):
    """The NNAPI model of a whole .tflite graph, as the TFLite NNAPI delegate builds it."""
    try:
        from nnsim.tflite.convert import ConvertOptions, build_nnapi_model
        from nnsim.tflite.reader import read_model
    except ImportError as e:  # the converter is another layer; skip cleanly without it
        pytest.skip(f"nnsim.tflite.convert is not available: {e}")
    model = read_model(path)
    sg = model.subgraphs[0]
    converted = build_nnapi_model(model, 0, list(range(len(sg.operators))), list(sg.inputs),
                                  list(sg.outputs), ConvertOptions(feature_level, sdk))
    return converted.nnapi_model
