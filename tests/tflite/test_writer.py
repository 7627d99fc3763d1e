"""ModelWriter / write_model: single-op models must load and run in LiteRT with the meaning
we wrote (options included), and read back identically."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from nnsim.tflite.options import (
    AddOptions,
    Conv2DOptions,
    FullyConnectedOptions,
    GeluOptions,
    Pool2DOptions,
    RawOptions,
    ReshapeOptions,
    SoftmaxOptions,
)
from nnsim.tflite.reader import Quantization, read_model
from nnsim.tflite.schema import ActivationFunctionType as Act
from nnsim.tflite.schema import BuiltinOperator as Op
from nnsim.tflite.schema import BuiltinOptions, Padding, TensorType
from nnsim.tflite.writer import BUFFER_ALIGNMENT, ModelWriter, write_model

RNG = np.random.default_rng(1234)


def run_litert(blob: bytes, *inputs: np.ndarray) -> np.ndarray:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interp = Interpreter(model_content=blob,
                         experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    interp.allocate_tensors()
    for detail, value in zip(interp.get_input_details(), inputs):
        interp.set_tensor(detail["index"], value)
    interp.invoke()
    return interp.get_tensor(interp.get_output_details()[0]["index"])


def single_op(builtin, inputs, output, options=None, **kw) -> bytes:
    """inputs: list of (name, shape, type, data|None, quant); output: (name, shape, type, q)."""
    w = ModelWriter()
    ids = [w.add_tensor(n, s, t, data=d, quantization=q) for n, s, t, d, q in inputs]
    out = w.add_tensor(*output[:3], quantization=output[3])
    w.add_operator(builtin, ids, [out], options, **kw)
    w.set_inputs([i for i, spec in zip(ids, inputs) if spec[3] is None])
    w.set_outputs([out])
    return w.finish()


def conv_reference(x, w, b, stride, clip=(-np.inf, np.inf)):
    """Float NHWC conv, OHWI filter, TF SAME padding, output clipped to ``clip``."""
    n, h, wd, _ = x.shape
    oc, kh, kw, _ = w.shape
    oh, ow = -(-h // stride), -(-wd // stride)
    ph = max((oh - 1) * stride + kh - h, 0) // 2
    pw = max((ow - 1) * stride + kw - wd, 0) // 2
    xp = np.zeros((n, h + kh + stride, wd + kw + stride, x.shape[3]), np.float64)
    xp[:, ph:ph + h, pw:pw + wd] = x
    out = np.zeros((n, oh, ow, oc))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3])) + b
    return np.clip(out, *clip)


def test_conv2d_float_options_reach_litert():
    x = RNG.standard_normal((1, 7, 7, 3)).astype(np.float32)
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    blob = single_op(Op.CONV_2D, [("x", x.shape, TensorType.FLOAT32, None, None),
                                  ("w", w.shape, TensorType.FLOAT32, w, None),
                                  ("b", (4,), TensorType.FLOAT32, b, None)],
                     ("y", (1, 4, 4, 4), TensorType.FLOAT32, None),
                     Conv2DOptions(padding=Padding.SAME, stride_w=2, stride_h=2,
                                   fused_activation_function=Act.RELU6))
    np.testing.assert_allclose(run_litert(blob, x), conv_reference(x, w, b, 2, (0.0, 6.0)),
                               rtol=1e-5, atol=1e-5)


def quantize(real, scale, zp, dtype):
    info = np.iinfo(dtype)
    return np.clip(np.round(real / scale) + zp, info.min, info.max).astype(dtype)


def test_conv2d_uint8():
    in_q, w_q, out_q = (0.05, 128), (0.02, 120), (0.1, 0)
    x = RNG.integers(0, 256, (1, 8, 8, 3), dtype=np.uint8)
    w = RNG.integers(0, 256, (4, 3, 3, 3), dtype=np.uint8)
    b = RNG.integers(-500, 500, 4).astype(np.int32)
    blob = single_op(Op.CONV_2D, [("x", x.shape, TensorType.UINT8, None, in_q),
                                  ("w", w.shape, TensorType.UINT8, w, w_q),
                                  ("b", (4,), TensorType.INT32, b, (in_q[0] * w_q[0], 0))],
                     ("y", (1, 4, 4, 4), TensorType.UINT8, out_q),
                     Conv2DOptions(stride_w=2, stride_h=2, fused_activation_function=Act.RELU))
    real = conv_reference((x - 128.0) * 0.05, (w - 120.0) * 0.02, b * 0.05 * 0.02, 2,
                          (0.0, np.inf))
    got = run_litert(blob, x)
    assert got.dtype == np.uint8 and got.shape == (1, 4, 4, 4)
    assert np.abs(got.astype(int) - quantize(real, *out_q, np.uint8)).max() <= 1


def test_conv2d_int8_per_channel():
    scales = np.array([0.01, 0.02, 0.03, 0.04], np.float32)
    x = RNG.integers(-128, 128, (1, 6, 6, 2), dtype=np.int8)
    w = RNG.integers(-127, 128, (4, 3, 3, 2), dtype=np.int8)
    b = RNG.integers(-300, 300, 4).astype(np.int32)
    w_quant = Quantization(scales, np.zeros(4), quantized_dimension=0)
    b_quant = Quantization(scales * 0.1, np.zeros(4), quantized_dimension=0)
    blob = single_op(Op.CONV_2D, [("x", x.shape, TensorType.INT8, None, (0.1, -3)),
                                  ("w", w.shape, TensorType.INT8, w, w_quant),
                                  ("b", (4,), TensorType.INT32, b, b_quant)],
                     ("y", (1, 6, 6, 4), TensorType.INT8, (0.2, 5)),
                     Conv2DOptions(padding=Padding.SAME, stride_w=1, stride_h=1))
    real = conv_reference((x + 3.0) * 0.1, w * scales[:, None, None, None].astype(np.float64),
                          b * scales * 0.1, 1)
    got = run_litert(blob, x).astype(int)
    assert np.abs(got - quantize(real, 0.2, 5, np.int8).astype(int)).max() <= 1
    assert read_model(blob).main.tensors[1].quantization.per_channel


def test_add_float_with_relu():
    a = RNG.standard_normal((1, 3, 4)).astype(np.float32)
    b = RNG.standard_normal((1, 3, 4)).astype(np.float32)
    blob = single_op(Op.ADD, [("a", a.shape, TensorType.FLOAT32, None, None),
                              ("b", b.shape, TensorType.FLOAT32, None, None)],
                     ("y", a.shape, TensorType.FLOAT32, None),
                     AddOptions(fused_activation_function=Act.RELU))
    np.testing.assert_array_equal(run_litert(blob, a, b), np.maximum(a + b, 0))


def test_softmax_beta():
    x = RNG.standard_normal((2, 5)).astype(np.float32)
    blob = single_op(Op.SOFTMAX, [("x", x.shape, TensorType.FLOAT32, None, None)],
                     ("y", x.shape, TensorType.FLOAT32, None), SoftmaxOptions(beta=0.5))
    e = np.exp(0.5 * (x - x.max(axis=1, keepdims=True)))
    np.testing.assert_allclose(run_litert(blob, x), e / e.sum(axis=1, keepdims=True), rtol=1e-5)


def test_reshape_with_new_shape():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    blob = single_op(Op.RESHAPE, [("x", x.shape, TensorType.FLOAT32, None, None),
                                  ("shape", (2,), TensorType.INT32, np.array([4, 6]), None)],
                     ("y", (4, 6), TensorType.FLOAT32, None), ReshapeOptions(new_shape=(4, 6)))
    np.testing.assert_array_equal(run_litert(blob, x), x.reshape(4, 6))
    assert read_model(blob).main.operators[0].options.new_shape == (4, 6)


def test_average_pool_valid():
    x = RNG.standard_normal((1, 4, 6, 2)).astype(np.float32)
    blob = single_op(Op.AVERAGE_POOL_2D, [("x", x.shape, TensorType.FLOAT32, None, None)],
                     ("y", (1, 2, 3, 2), TensorType.FLOAT32, None),
                     Pool2DOptions(padding=Padding.VALID, stride_w=2, stride_h=2,
                                   filter_width=2, filter_height=2))
    expected = x.reshape(1, 2, 2, 3, 2, 2).mean(axis=(2, 4))
    np.testing.assert_allclose(run_litert(blob, x), expected, rtol=1e-6)


def test_fully_connected_float():
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    w = RNG.standard_normal((4, 5)).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    blob = single_op(Op.FULLY_CONNECTED, [("x", x.shape, TensorType.FLOAT32, None, None),
                                          ("w", w.shape, TensorType.FLOAT32, w, None),
                                          ("b", (4,), TensorType.FLOAT32, b, None)],
                     ("y", (3, 4), TensorType.FLOAT32, None), FullyConnectedOptions())
    np.testing.assert_allclose(run_litert(blob, x), x @ w.T + b, rtol=1e-5, atol=1e-5)


def test_opcode_above_127_uses_placeholder():
    import tflite

    x = np.linspace(-3, 3, 8, dtype=np.float32).reshape(1, 8)
    blob = single_op(Op.GELU, [("x", x.shape, TensorType.FLOAT32, None, None)],
                     ("y", x.shape, TensorType.FLOAT32, None), GeluOptions(approximate=False))
    code = tflite.Model.GetRootAs(blob).OperatorCodes(0)
    assert (code.DeprecatedBuiltinCode(), code.BuiltinCode()) == (127, int(Op.GELU))
    assert read_model(blob).main.operators[0].builtin == Op.GELU
    assert run_litert(blob, x).shape == x.shape


def test_builder_round_trip_and_alignment(same_model):
    w = ModelWriter(description="alignment test")
    odd = [w.add_tensor(f"c{i}", (n,), TensorType.INT8, data=np.arange(n) % 100)
           for i, n in enumerate((1, 3, 17, 33, 1000))]
    x = w.add_tensor("x", (1, 4), TensorType.FLOAT32, shape_signature=(-1, 4))
    y = w.add_tensor("y", (1, 4), TensorType.FLOAT32)
    w.add_operator(Op.CUSTOM, [x, *odd], [y], custom_code="MyOp", custom_options=b"\x01\x02")
    w.set_inputs([x])
    w.set_outputs([y])
    w.add_signature("serving_default", {"x": x}, {"y": y})
    w.add_metadata("note", b"hello")
    blob = w.finish()
    model = read_model(blob)
    same_model(w.to_model(), model)
    base = np.frombuffer(blob, np.uint8).ctypes.data
    for t in model.main.tensors:
        if t.data is not None:
            assert (t.data.ctypes.data - base) % BUFFER_ALIGNMENT == 0
    assert model.metadata == {"note": b"hello"}
    assert model.main.operators[0].custom_options == b"\x01\x02"


def test_raw_options_round_trip():
    w = ModelWriter()
    x = w.add_tensor("x", (2,), TensorType.FLOAT32)
    w.add_operator(Op.ABS, [x], [x], RawOptions("AbsOptions", BuiltinOptions.AbsOptions))
    w.add_operator(Op.SKIP_GRAM, [x], [x],
                   RawOptions("SkipGramOptions", BuiltinOptions.SkipGramOptions))
    ops = read_model(w.finish()).main.operators
    assert type(ops[0].options).__name__ == "AbsOptions"  # described: a no-field class
    assert ops[1].options == RawOptions("SkipGramOptions", int(BuiltinOptions.SkipGramOptions),
                                        False)
    w.add_operator(Op.SKIP_GRAM, [x], [x],
                   RawOptions("SkipGramOptions", BuiltinOptions.SkipGramOptions, has_fields=True))
    with pytest.raises(ValueError, match="SkipGramOptions"):
        w.finish()


def test_writer_misuse_is_value_error():
    w = ModelWriter()
    with pytest.raises(ValueError, match="elements"):
        w.add_tensor("w", (2, 3), TensorType.FLOAT32, data=np.zeros(5))
    x = w.add_tensor("x", (2,), TensorType.FLOAT32)
    with pytest.raises(ValueError, match="custom_code"):
        w.add_operator(Op.CUSTOM, [x], [x])
    with pytest.raises(ValueError, match="out of range"):
        w.add_operator(Op.RELU, [x], [7])
    model = w.to_model()
    with pytest.raises(ValueError, match="buffer 0"):
        write_model(type(model)(**{**model.__dict__, "buffers": (np.ones(3, np.uint8),)}))


def test_buffers_are_written_as_bytes_not_cast():
    w = ModelWriter()
    w.add_tensor("c", (2,), TensorType.FLOAT32, data=[1.5, -2.0])
    model = w.to_model()
    typed = dataclasses.replace(model, buffers=(model.buffers[0],
                                                np.array([1.5, -2.0], np.float32)))
    np.testing.assert_array_equal(read_model(write_model(typed)).main.tensors[0].data,
                                  [1.5, -2.0])
