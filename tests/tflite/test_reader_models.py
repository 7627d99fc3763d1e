"""read_model on the shared real models, checked against the README and against LiteRT."""
from __future__ import annotations

import mmap
from collections import Counter

import numpy as np
import pytest

from nnsim.errors import ModelFileError
from nnsim.tflite.options import (
    ArgMaxOptions,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    Pool2DOptions,
    ReshapeOptions,
    SoftmaxOptions,
)
from nnsim.tflite.reader import check_static, read_model
from nnsim.tflite.schema import (
    NUMPY_DTYPES,
    ActivationFunctionType,
    BuiltinOperator,
    Padding,
    TensorType,
)

MOBILENET_V1 = {"CONV_2D": 15, "DEPTHWISE_CONV_2D": 13, "AVERAGE_POOL_2D": 1, "RESHAPE": 1,
                "SOFTMAX": 1}
MLPERF_TINY_HEAD = {"AVERAGE_POOL_2D": 1, "RESHAPE": 1, "FULLY_CONNECTED": 1, "SOFTMAX": 1}
DEEPLAB = {"CONV_2D": 38, "DEPTHWISE_CONV_2D": 17, "ADD": 10, "RESIZE_BILINEAR": 3,
           "AVERAGE_POOL_2D": 1, "CONCATENATION": 1}

# From ../shared/models/README.md: input shape and type, output shapes, operator counts.
EXPECTED = {
    "mobilenet_v1_1.0_224_quant_reconstructed": ((1, 224, 224, 3), "UINT8", [(1, 1001)],
                                                 MOBILENET_V1),
    "mobilenet_v1_0.25_224_quant": ((1, 224, 224, 3), "UINT8", [(1, 1001)], MOBILENET_V1),
    "mobilenet_v1_0.25_128_quant": ((1, 128, 128, 3), "UINT8", [(1, 1001)], MOBILENET_V1),
    "mobilenet_v2_1.0_224_quant": ((1, 224, 224, 3), "UINT8", [(1, 1001)], {
        "CONV_2D": 36, "DEPTHWISE_CONV_2D": 17, "ADD": 10, "AVERAGE_POOL_2D": 1,
        "RESHAPE": 1}),
    "tf2_mobilenet_v2_1.0_224_ptq": ((1, 224, 224, 3), "UINT8", [(1, 1001)], {
        "CONV_2D": 36, "DEPTHWISE_CONV_2D": 17, "ADD": 10, "QUANTIZE": 2, "MEAN": 1,
        "RESHAPE": 1, "SOFTMAX": 1}),
    "mobilenet_v2_quantized_1x3x224x224": ((1, 3, 224, 224), "INT8", [(1, 1000)], {
        "CONV_2D": 35, "PAD": 18, "DEPTHWISE_CONV_2D": 17, "ADD": 10, "TRANSPOSE": 1,
        "MEAN": 1, "RESHAPE": 1, "FULLY_CONNECTED": 1}),
    "vww_96_int8": ((1, 96, 96, 3), "INT8", [(1, 2)],
                    {"CONV_2D": 14, "DEPTHWISE_CONV_2D": 13, **MLPERF_TINY_HEAD}),
    "vww_96_float": ((1, 96, 96, 3), "FLOAT32", [(1, 2)],
                     {"CONV_2D": 14, "DEPTHWISE_CONV_2D": 13, **MLPERF_TINY_HEAD}),
    "kws_ref_model": ((1, 49, 10, 1), "INT8", [(1, 12)],
                      {"CONV_2D": 5, "DEPTHWISE_CONV_2D": 4, **MLPERF_TINY_HEAD}),
    "kws_ref_model_float32": ((1, 49, 10, 1), "FLOAT32", [(1, 12)],
                              {"CONV_2D": 5, "DEPTHWISE_CONV_2D": 4, **MLPERF_TINY_HEAD}),
    "pretrainedResnet_quant": ((1, 32, 32, 3), "INT8", [(1, 10)],
                               {"CONV_2D": 9, "ADD": 3, **MLPERF_TINY_HEAD}),
    "pretrainedResnet": ((1, 32, 32, 3), "FLOAT32", [(1, 10)],
                         {"CONV_2D": 9, "ADD": 3, **MLPERF_TINY_HEAD}),
    "ad01_int8": ((1, 640), "INT8", [(1, 640)], {"FULLY_CONNECTED": 10}),
    "micro_speech_quantized": ((1, 1960), "INT8", [(1, 4)], {
        "RESHAPE": 1, "DEPTHWISE_CONV_2D": 1, "FULLY_CONNECTED": 1, "SOFTMAX": 1}),
    "hello_world_int8": ((1, 1), "INT8", [(1, 1)], {"FULLY_CONNECTED": 3}),
    "hello_world_float": ((1, 1), "FLOAT32", [(1, 1)], {"FULLY_CONNECTED": 3}),
    "deeplabv3_mnv2_pascal_quant": ((1, 513, 513, 3), "UINT8", [(1, 513, 513)], {
        **DEEPLAB, "QUANTIZE": 1, "ARG_MAX": 1}),
    "deeplabv3": ((1, 257, 257, 3), "FLOAT32", [(1, 257, 257, 21)], DEEPLAB),
    "coco_ssd_mobilenet_v1_1.0_quant_2018_06_29_no_metadata": (
        (1, 300, 300, 3), "UINT8", [(), (), (), ()], {
            "CONV_2D": 34, "DEPTHWISE_CONV_2D": 13, "RESHAPE": 13, "CONCATENATION": 2,
            "LOGISTIC": 1, "TFLite_Detection_PostProcess": 1}),
    "mobilenet_v1_0.25_224_1_default_1": ((1, 224, 224, 3), "FLOAT32", [(1, 1001)], {
        "CONV_2D": 15, "DEPTHWISE_CONV_2D": 13, "AVERAGE_POOL_2D": 1, "SQUEEZE": 1,
        "SOFTMAX": 1}),
}


def test_every_shared_model_is_described(shared_models):
    assert {p.stem for p in shared_models.glob("*.tflite")} == set(EXPECTED)


def test_model_matches_readme(model_path):
    in_shape, in_type, out_shapes, op_counts = EXPECTED[model_path.stem]
    model = read_model(model_path)
    sg = model.main
    assert model.version == 3 and model.path == str(model_path)
    assert [sg.tensors[i].shape for i in sg.inputs] == [in_shape]
    assert sg.tensors[sg.inputs[0]].type == TensorType[in_type]
    assert [sg.tensors[i].shape for i in sg.outputs] == out_shapes
    assert Counter(op.name for op in sg.operators) == Counter(op_counts)
    assert model.buffers[0].size == 0


def test_mobilenet_v1_details(shared_models):
    model = read_model(shared_models / "mobilenet_v1_1.0_224_quant_reconstructed.tflite")
    sg = model.main
    assert len(sg.operators) == 31
    conv = sg.operators[0]
    assert conv.builtin == BuiltinOperator.CONV_2D
    assert conv.options == Conv2DOptions(padding=Padding.SAME, stride_w=2, stride_h=2,
                                         fused_activation_function=ActivationFunctionType.RELU6)
    weights = sg.tensors[conv.inputs[1]]
    assert weights.data.shape == (32, 3, 3, 3) and weights.data.dtype == np.uint8
    assert not weights.quantization.per_channel and weights.quantization.zero_point == 151
    assert all(isinstance(op.options, DepthwiseConv2DOptions) for op in sg.operators
               if op.builtin == BuiltinOperator.DEPTHWISE_CONV_2D)
    kinds = {op.builtin: type(op.options) for op in sg.operators}
    assert kinds[BuiltinOperator.AVERAGE_POOL_2D] is Pool2DOptions
    assert kinds[BuiltinOperator.RESHAPE] is ReshapeOptions
    assert kinds[BuiltinOperator.SOFTMAX] is SoftmaxOptions
    assert sg.tensors[sg.inputs[0]].quantization.scale == pytest.approx(0.0078125)


def test_deeplab_argmax_outputs_int64(shared_models):
    sg = read_model(shared_models / "deeplabv3_mnv2_pascal_quant.tflite").main
    (argmax,) = [op for op in sg.operators if op.builtin == BuiltinOperator.ARG_MAX]
    assert argmax.options == ArgMaxOptions(output_type=TensorType.INT64)
    assert sg.tensors[argmax.outputs[0]].type == TensorType.INT64
    assert argmax.outputs[0] == sg.outputs[0]


def test_ssd_custom_op(shared_models):
    import tflite  # the generated schema package: an independent reading of the same bytes

    path = shared_models / "coco_ssd_mobilenet_v1_1.0_quant_2018_06_29_no_metadata.tflite"
    sg = read_model(path).main
    (op,) = [op for op in sg.operators if op.builtin == BuiltinOperator.CUSTOM]
    assert op.custom_code == "TFLite_Detection_PostProcess" and op.options is None
    assert b"max_detections" in op.custom_options and b"nms_iou_threshold" in op.custom_options
    fb_op = tflite.Model.GetRootAs(path.read_bytes()).Subgraphs(0).Operators(op.index)
    assert op.custom_options == fb_op.CustomOptionsAsNumpy().tobytes()
    assert len(op.outputs) == 4


def test_per_channel_quantization(shared_models):
    sg = read_model(shared_models / "tf2_mobilenet_v2_1.0_224_ptq.tflite").main
    conv = sg.operators[[op.builtin for op in sg.operators].index(BuiltinOperator.CONV_2D)]
    q = sg.tensors[conv.inputs[1]].quantization
    assert q.per_channel and q.quantized_dimension == 0 and q.scales.dtype == np.float32
    assert len(q.scales) == sg.tensors[conv.inputs[1]].shape[0]
    with pytest.raises(ValueError):
        q.scale


def test_metadata_and_signatures(shared_models):
    model = read_model(shared_models / "hello_world_int8.tflite")
    assert model.metadata["min_runtime_version"].rstrip(b"\0") == b"1.14.0"
    (sig,) = model.signatures
    assert (sig.key, sig.inputs, sig.outputs) == ("serving_default", {"dense_input": 0},
                                                  {"dense_2": 9})


def test_data_is_zero_copy_and_read_only(shared_models):
    model = read_model(shared_models / "mobilenet_v1_0.25_224_quant.tflite")
    constants = [t for t in model.main.tensors if t.data is not None]
    assert constants and isinstance(model.source, mmap.mmap)
    whole_file = np.frombuffer(model.source, np.uint8)
    for t in constants:
        assert not t.data.flags.writeable
        assert np.shares_memory(t.data, whole_file)
        with pytest.raises(ValueError):
            t.data[...] = 0


def test_bytes_input_reads_the_same(model_path, same_model):
    from_bytes = read_model(model_path.read_bytes())
    assert from_bytes.path == "<memory>"
    same_model(read_model(model_path), from_bytes)


def test_dynamic_batch_is_marked_but_static_enough(shared_models):
    model = read_model(shared_models / "vww_96_int8.tflite")
    inp = model.main.tensors[model.main.inputs[0]]
    assert inp.shape_signature == (-1, 96, 96, 3) and inp.is_dynamic and inp.dynamic_dims == (0,)
    assert model.has_dynamic_shapes
    check_static(model)  # batch -1 only: LiteRT runs it at the stored shape
    with pytest.raises(ModelFileError) as err:
        check_static(model, allow_dynamic_batch=False)
    assert "tensor" in err.value.where and "dynamic" in err.value.what


def _litert(path, allocate=True):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interp = Interpreter(model_path=str(path), experimental_op_resolver_type=(
        OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES))
    if allocate:
        interp.allocate_tensors()
    return interp


def test_tensors_match_litert(model_path):
    """LiteRT's own reading of the file is the oracle for names, shapes, types, quantization
    and constant data."""
    sg = read_model(model_path).main
    # Shapes as stored: before allocation, which lets kernels resize outputs (the SSD
    # post-process op does, and adds temporaries after the file's tensors).
    details = _litert(model_path, allocate=False).get_tensor_details()[:len(sg.tensors)]
    interp = _litert(model_path)
    assert [d["index"] for d in details] == list(range(len(sg.tensors)))
    for d in details:
        t = sg.tensors[d["index"]]
        assert t.name == d["name"]
        assert t.shape == tuple(d["shape"])
        assert (t.shape_signature or t.shape) == tuple(d["shape_signature"])
        assert NUMPY_DTYPES[t.type] == np.dtype(d["dtype"])
        q = d["quantization_parameters"]
        if t.quantization is None:
            assert q["scales"].size == 0
        else:
            np.testing.assert_array_equal(t.quantization.scales, q["scales"])
            np.testing.assert_array_equal(t.quantization.zero_points, q["zero_points"])
            assert t.quantization.quantized_dimension == q["quantized_dimension"]
        if t.data is not None:
            expected = interp.get_tensor(d["index"])
            assert t.data.dtype == expected.dtype and t.data.shape == expected.shape
            np.testing.assert_array_equal(t.data, expected)


def test_operators_match_litert(model_path):
    sg = read_model(model_path).main
    interp = _litert(model_path)
    ops = interp._get_ops_details()  # private, but the only view of LiteRT's node list
    assert len(ops) == len(sg.operators)
    for op, d in zip(sg.operators, ops):
        assert op.name == d["op_name"]
        assert op.inputs == tuple(d["inputs"]) and op.outputs == tuple(d["outputs"])
