"""Tiny hand-built models for the compare/audit tests (each evaluates in well under a second)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from nnsim.tflite import options as O
from nnsim.tflite.schema import ActivationFunctionType as Act
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import Padding, TensorType
from nnsim.tflite.writer import ModelWriter
from nnsim.tflite.reader import Quantization

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT.parent / "shared" / "models"
SMALL = "mobilenet_v1_0.25_128_quant.tflite"


def int8_conv() -> bytes:
    """int8 CONV_2D (per-channel weights) -> int8 ADD with itself: on imx8mp at SDK 31 the
    NNAPI runtime puts both on nnapi-reference (vsi-npu reports int8 at FLT_MAX); the VX
    delegate takes both."""
    rng = np.random.default_rng(7)
    w = ModelWriter()
    x = w.add_tensor("x", (1, 8, 8, 4), TensorType.INT8, quantization=(0.05, -3))
    scales = np.array([0.01, 0.012, 0.014, 0.016], np.float32)
    wt = w.add_tensor("w", (4, 3, 3, 4), TensorType.INT8,
                      data=rng.integers(-127, 128, (4, 3, 3, 4)).astype(np.int8),
                      quantization=Quantization(scales, np.zeros(4, np.int64), 0))
    bt = w.add_tensor("b", (4,), TensorType.INT32,
                      data=rng.integers(-500, 500, 4).astype(np.int32),
                      quantization=Quantization(scales * 0.05, np.zeros(4, np.int64)))
    y = w.add_tensor("y", (1, 8, 8, 4), TensorType.INT8, quantization=(0.1, -10))
    w.add_operator(B.CONV_2D, [x, wt, bt], [y],
                   O.Conv2DOptions(padding=Padding.SAME, stride_w=1, stride_h=1,
                                   fused_activation_function=Act.NONE))
    z = w.add_tensor("z", (1, 8, 8, 4), TensorType.INT8, quantization=(0.2, -10))
    w.add_operator(B.ADD, [y, y], [z], O.AddOptions())
    w.set_inputs([x])
    w.set_outputs([z])
    return w.finish()


def float_add() -> bytes:
    """float32 ADD of two inputs."""
    w = ModelWriter()
    a = w.add_tensor("a", (1, 4, 4, 2), TensorType.FLOAT32)
    b = w.add_tensor("b", (1, 4, 4, 2), TensorType.FLOAT32)
    c = w.add_tensor("c", (1, 4, 4, 2), TensorType.FLOAT32)
    w.add_operator(B.ADD, [a, b], [c], O.AddOptions())
    w.set_inputs([a, b])
    w.set_outputs([c])
    return w.finish()


def unknown_custom_op() -> bytes:
    """A CUSTOM op no runtime knows: no delegate takes it and nnsim has no CPU kernel."""
    w = ModelWriter()
    a = w.add_tensor("a", (1, 4), TensorType.FLOAT32)
    b = w.add_tensor("b", (1, 4), TensorType.FLOAT32)
    w.add_operator(B.CUSTOM, [a], [b], custom_code="NnsimNoSuchOp")
    w.set_inputs([a])
    w.set_outputs([b])
    return w.finish()


def huge_input() -> bytes:
    """float32 [1, 4096, 4096, 16] (1 GiB) input: over any small memory cap."""
    w = ModelWriter()
    a = w.add_tensor("a", (1, 4096, 4096, 16), TensorType.FLOAT32)
    b = w.add_tensor("b", (1, 4096, 4096, 16), TensorType.FLOAT32)
    w.add_operator(B.ADD, [a, a], [b], O.AddOptions())
    w.set_inputs([a])
    w.set_outputs([b])
    return w.finish()


CORRUPT = b"TFL3" + b"\x00" * 12 + b"not a flatbuffer at all" * 4


def write_zoo(folder: Path) -> dict:
    """The error-row zoo: name -> path."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {"int8_conv.tflite": int8_conv(), "float_add.tflite": float_add(),
             "sub/unknown_op.tflite": unknown_custom_op(), "huge.tflite": huge_input(),
             "corrupt.tflite": CORRUPT}
    out = {}
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        out[name] = path
    return out
