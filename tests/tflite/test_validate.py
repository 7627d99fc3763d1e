"""NNAPIDelegateKernel::Validate (tflite-nnapi-delegate.md section 5).

Expectations come from the reference note and the upstream rules it quotes, not from nnsim
runs: the DeepLab / MobileNet / SSD outcomes are those users report from boards (5.2).
"""
from __future__ import annotations

import numpy as np
import pytest

from nnsim.tflite.options import (AddOptions, ArgMaxOptions, ConcatenationOptions,
                                  Conv2DOptions, FullyConnectedOptions, MulOptions, PackOptions,
                                  Pool2DOptions, ReshapeOptions, ResizeBilinearOptions,
                                  SoftmaxOptions, SqueezeOptions)
from nnsim.tflite.schema import ActivationFunctionType as Act
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import TensorType as TT
from nnsim.tflite.validate import (FL6, NNAPIValidationFailureType, ValidationFailure,
                                   is_node_supported, validate_node)

from .test_convert_support import Graph, shared_model

F = NNAPIValidationFailureType


def failures(model, node=0, fl=31, acc=False):
    return validate_node(model, 0, node, fl, acc)


def types(model, node=0, fl=31, acc=False):
    return [f.type for f in failures(model, node, fl, acc)]


def test_failure_type_enum_is_the_upstream_list():
    names = ["kUnsupportedOperator", "kUnsupportedAndroidVersion", "kUnsupportedOperatorVersion",
             "kUnsupportedInputType", "kNotRestrictedScaleCompliant", "kUnsupportedOutputType",
             "kUnsupportedOperandSize", "kUnsupportedOperandValue",
             "kUnsupportedHybridOperator", "kUnsupportedQuantizationType",
             "kMissingRequiredOperand", "kUnsupportedOperandRank",
             "kInputTensorShouldHaveConstantShape", "kUnsupportedOperatorVariant",
             "kNoActivationExpected", "kUnsupportedQuantizationParameters"]
    assert [(m.name, m.value) for m in F] == [(n, i) for i, n in enumerate(names)]


# -- shared models ------------------------------------------------------------------------------

def test_deeplab_fl29_refuses_pool_resize_and_int64_argmax():
    m = shared_model("deeplabv3_mnv2_pascal_quant")
    n = len(m.subgraphs[0].operators)
    refused = {i: failures(m, i, 29) for i in range(n) if failures(m, i, 29)}
    assert sorted(refused) == [61, 64, 69, 70, 71]
    assert m.subgraphs[0].operators[61].builtin == B.AVERAGE_POOL_2D
    assert refused[61] == [ValidationFailure(
        F.kUnsupportedOperandSize, "Large filter window would overflow on the reference CPU path")]
    for i in (64, 69, 70):
        assert m.subgraphs[0].operators[i].builtin == B.RESIZE_BILINEAR
        assert refused[i] == [ValidationFailure(
            F.kUnsupportedOperandValue, "NNAPI does not support align_corners == true.")]
    assert refused[71] == [ValidationFailure(F.kUnsupportedOutputType,
                                             "NNAPI only supports int32 output.")]


def test_deeplab_fl29_accelerator_specified_accepts_the_large_pool():
    m = shared_model("deeplabv3_mnv2_pascal_quant")
    n = len(m.subgraphs[0].operators)
    refused = [i for i in range(n) if failures(m, i, 29, acc=True)]
    assert refused == [64, 69, 70, 71]


def test_deeplab_fl30_accepts_align_corners():
    m = shared_model("deeplabv3_mnv2_pascal_quant")
    assert failures(m, 64, 30) == []
    assert types(m, 71, 30) == [F.kUnsupportedOutputType]


@pytest.mark.parametrize("fl", [27, 28, 29, 30, 31, FL6])
def test_mobilenet_v1_uint8_fully_supported(fl):
    m = shared_model("mobilenet_v1_1.0_224_quant_reconstructed")
    ops = m.subgraphs[0].operators
    assert len(ops) == 31
    assert all(is_node_supported(m, 0, i, fl, False) for i in range(31))


def test_ssd_custom_postprocess_is_unsupported_operator():
    m = shared_model("coco_ssd_mobilenet_v1_1.0_quant_2018_06_29_no_metadata")
    ops = m.subgraphs[0].operators
    custom = [i for i, op in enumerate(ops) if op.builtin == B.CUSTOM]
    assert custom == [len(ops) - 1]
    assert failures(m, custom[0], 31) == [
        ValidationFailure(F.kUnsupportedOperator, "Unsupported operation type.")]
    refused = [i for i in range(len(ops)) if failures(m, i, 31)]
    assert refused == custom


def test_ssd_fl27_uint8_concatenation_needs_equal_quantization():
    m = shared_model("coco_ssd_mobilenet_v1_1.0_quant_2018_06_29_no_metadata")
    ops = m.subgraphs[0].operators
    concat = [i for i, op in enumerate(ops) if op.builtin == B.CONCATENATION]
    for i in concat:
        assert types(m, i, 27) == [F.kUnsupportedOperandValue]  # reported once (loop breaks)
        assert failures(m, i, 29) == []


def test_tf2_ptq_int8_per_channel():
    m = shared_model("tf2_mobilenet_v2_1.0_224_ptq")
    n = len(m.subgraphs[0].operators)
    assert [i for i in range(n) if failures(m, i, 31)] == []
    # FL29: the uint8 -> int8 QUANTIZE needs an int8 output (NNAPI 1.3)
    assert [i for i in range(n) if failures(m, i, 29)] == [0]
    assert types(m, 0, 29) == [F.kUnsupportedOutputType]
    # FL27: int8 and per-channel everywhere are refused; QUANTIZE reports both failures
    assert types(m, 0, 27) == [F.kUnsupportedAndroidVersion, F.kUnsupportedOutputType]
    conv = next(i for i, op in enumerate(m.subgraphs[0].operators) if op.builtin == B.CONV_2D)
    assert types(m, conv, 27) == [F.kUnsupportedInputType, F.kUnsupportedQuantizationType]


# -- synthetic single-op graphs ----------------------------------------------------------------

def _binary(builtin, ttype=TT.FLOAT32, rank=4, options=None, version=1, q=None):
    g = Graph()
    shape = (1,) * rank
    a, b, y = g.t(shape, ttype, q=q), g.t(shape, ttype, q=q), g.t(shape, ttype, q=q)
    g.op(builtin, [a, b], [y], options, version=version)
    return g.model()


def test_add_rank_and_int32_activation():
    assert types(_binary(B.ADD, rank=5, options=AddOptions())) == [F.kUnsupportedOperandRank]
    m = _binary(B.ADD, TT.INT32, options=AddOptions(Act.RELU))
    assert failures(m, fl=30) == [ValidationFailure(F.kNoActivationExpected,
                                                    "No activation function supported")]
    assert types(m, fl=29) == [F.kUnsupportedInputType]  # int32 ADD only from FL4


def test_version_helpers_both_test_less_or_equal():
    assert failures(_binary(B.ADD, version=2)) == []
    assert failures(_binary(B.ADD, version=3)) == [
        ValidationFailure(F.kUnsupportedOperatorVersion, "OP Version higher than 2")]
    g = Graph()
    x, y = g.t((1, 4)), g.t((1, 4))
    g.op(B.SOFTMAX, [x], [y], SoftmaxOptions(1.0), version=1)  # "different from 2" but passes
    assert failures(g.model()) == []
    g = Graph()
    x, y = g.t((1, 4)), g.t((1, 4))
    g.op(B.SOFTMAX, [x], [y], SoftmaxOptions(1.0), version=3)
    assert failures(g.model()) == [
        ValidationFailure(F.kUnsupportedOperatorVersion, "OP Version different from 2")]


def test_mul_max_version_depends_on_accelerator():
    m = _binary(B.MUL, options=MulOptions(), version=3)
    assert types(m, acc=False) == [F.kUnsupportedOperatorVersion]
    assert failures(m, acc=True) == []


def test_sub_types_by_feature_level():
    u8 = _binary(B.SUB, TT.UINT8, q=(0.5, 3))
    assert failures(u8, fl=28) == [ValidationFailure(F.kUnsupportedInputType,
                                                     "NNAPI only support float sub.")]
    assert failures(u8, fl=29) == []
    assert types(_binary(B.SUB), fl=27) == [F.kUnsupportedInputType]


def _conv(in_c=8, filt_c=8, bias=True, dilation=1, ttype=TT.FLOAT32, w_scales=None):
    g = Graph()
    q = (0.5, 128) if ttype == TT.UINT8 else None
    x = g.t((1, 8, 8, in_c), ttype, q=q)
    wq = q if w_scales is None else (w_scales, [0] * len(w_scales), 0)
    wtype = TT.INT8 if w_scales is not None else ttype
    w = g.t((4, 3, 3, filt_c), wtype, data=np.ones((4, 3, 3, filt_c)), q=wq)
    ins = [x, w]
    if bias:
        btype = TT.FLOAT32 if ttype == TT.FLOAT32 else TT.INT32
        ins.append(g.t((4,), btype, data=np.zeros(4)))
    y = g.t((1, 8, 8, 4), ttype, q=(1.0, 128) if q else None)
    g.op(B.CONV_2D, ins, [y], Conv2DOptions(stride_w=1, stride_h=1, dilation_w_factor=dilation,
                                            dilation_h_factor=dilation))
    return g.model()


def test_conv_rules():
    assert failures(_conv()) == []
    assert failures(_conv(bias=False)) == [
        ValidationFailure(F.kMissingRequiredOperand, "Conv2D with omitted bias not supported")]
    assert types(_conv(dilation=2), fl=28) == [F.kUnsupportedOperandValue]
    assert failures(_conv(dilation=2), fl=29) == []
    assert types(_conv(in_c=8, filt_c=4), fl=28) == [F.kUnsupportedOperandValue]  # grouped
    assert failures(_conv(in_c=8, filt_c=4), fl=29) == []
    # restricted scale: 0.5 * 0.5 < 1.0 holds
    assert failures(_conv(ttype=TT.UINT8), fl=27) == []
    hybrid = _conv(w_scales=[0.1, 0.2, 0.3, 0.4])
    assert types(hybrid, fl=28) == [F.kUnsupportedHybridOperator,
                                     F.kUnsupportedQuantizationType]
    assert failures(hybrid, fl=29) == []


def test_average_pool_large_window():
    def pool(ttype, q):
        g = Graph()
        x, y = g.t((1, 17, 17, 2), ttype, q=q), g.t((1, 1, 1, 2), ttype, q=q)
        g.op(B.AVERAGE_POOL_2D, [x], [y], Pool2DOptions(filter_width=17, filter_height=17,
                                                        stride_w=1, stride_h=1))
        return g.model()
    assert types(pool(TT.UINT8, (1.0, 0))) == [F.kUnsupportedOperandSize]
    assert types(pool(TT.INT8, (1.0, 0))) == [F.kUnsupportedOperandSize]
    assert failures(pool(TT.UINT8, (1.0, 0)), acc=True) == []
    assert failures(pool(TT.FLOAT32, None)) == []


def test_fully_connected_keep_num_dims_and_int16():
    g = Graph()
    x, w = g.t((2, 3, 4)), g.t((5, 4), data=np.ones((5, 4)))
    y = g.t((2, 3, 5))
    g.op(B.FULLY_CONNECTED, [x, w, -1], [y], FullyConnectedOptions(keep_num_dims=True))
    m = g.model()
    assert failures(m, fl=29) == [ValidationFailure(F.kUnsupportedAndroidVersion,
                                                    "Android sdk version less than 30")]
    assert failures(m, fl=30) == []


def test_reshape_shape_rules():
    g = Graph()
    x, s, y = g.t((1, 6)), g.t((2,), TT.INT32), g.t((2, 3))
    g.op(B.RESHAPE, [x, s], [y], ReshapeOptions())
    assert types(g.model()) == [F.kInputTensorShouldHaveConstantShape]
    g = Graph()
    x, y = g.t((1,)), g.t(())
    g.op(B.RESHAPE, [x], [y], ReshapeOptions(new_shape=(0,)))  # legacy scalar shape
    assert failures(g.model()) == [ValidationFailure(F.kUnsupportedOperandRank,
                                                     "New shape rank should be > 0")]
    g = Graph()
    x, s, y = g.t((6,), TT.INT32), g.t((2,), TT.INT32, data=[2, 3]), g.t((2, 3), TT.INT32)
    g.op(B.RESHAPE, [x, s], [y], ReshapeOptions())
    m = g.model()
    assert types(m, fl=31) == [F.kUnsupportedInputType]
    assert failures(m, fl=FL6) == []  # int32 from FL6 (compared as a plain int)


def test_resize_bilinear_flags_refused_up_to_fl29():
    g = Graph()
    x, size, y = g.t((1, 4, 4, 1)), g.t((2,), TT.INT32, data=[8, 8]), g.t((1, 8, 8, 1))
    g.op(B.RESIZE_BILINEAR, [x, size], [y], ResizeBilinearOptions(half_pixel_centers=True))
    m = g.model()
    assert failures(m, fl=29) == [ValidationFailure(
        F.kUnsupportedOperandValue, "NNAPI does not support half_pixel_centers == true.")]
    assert failures(m, fl=30) == []


def test_squeeze_fl28_needs_dims():
    g = Graph()
    x, y = g.t((1, 4, 1)), g.t((4,))
    g.op(B.SQUEEZE, [x], [y], SqueezeOptions())
    m = g.model()
    assert types(m, fl=27) == [F.kUnsupportedAndroidVersion]
    assert types(m, fl=28) == [F.kUnsupportedOperandValue]
    assert failures(m, fl=29) == []


def test_concatenation_activation():
    g = Graph()
    a, b, y = g.t((1, 2)), g.t((1, 2)), g.t((1, 4))
    g.op(B.CONCATENATION, [a, b], [y], ConcatenationOptions(axis=1,
                                                            fused_activation_function=Act.RELU))
    assert types(g.model()) == [F.kNoActivationExpected]


def test_arg_max_axis_and_output():
    g = Graph()
    x, axis, y = g.t((1, 4)), g.t((), TT.INT64, data=3), g.t((1,), TT.INT32)
    g.op(B.ARG_MAX, [x, axis], [y], ArgMaxOptions(output_type=TT.INT32))
    m = g.model()
    assert types(m, fl=28) == [F.kUnsupportedAndroidVersion]
    assert failures(m, fl=29) == []
    g = Graph()
    x, axis, y = g.t((1, 4)), g.t((), TT.INT64), g.t((1,), TT.INT64)
    g.op(B.ARG_MAX, [x, axis], [y], ArgMaxOptions(output_type=TT.INT64))
    assert types(g.model(), fl=29) == [F.kUnsupportedInputType, F.kUnsupportedOutputType]


def test_pack_feature_levels():
    g = Graph()
    a, b, y = g.t((2, 3)), g.t((2, 3)), g.t((2, 3, 2))
    g.op(B.PACK, [a, b], [y], PackOptions(values_count=2, axis=-1))
    m = g.model()
    assert types(m, fl=29) == [F.kUnsupportedAndroidVersion, F.kUnsupportedOperandValue]
    assert types(m, fl=31) == [F.kUnsupportedOperandValue]
    assert failures(m, fl=FL6) == []


def test_tanh_and_hard_swish():
    g = Graph()
    x, y = g.t((1, 4), TT.UINT8, q=(0.1, 128)), g.t((1, 4), TT.UINT8, q=(1 / 128, 128))
    g.op(B.TANH, [x], [y])
    m = g.model()
    assert failures(m, fl=28) == [ValidationFailure(F.kUnsupportedInputType,
                                                    " NNAPI only support float tanh.")]
    assert failures(m, fl=29) == []
    g = Graph()
    x, y = g.t((1, 4)), g.t((1, 4))
    g.op(B.HARD_SWISH, [x], [y], version=7)  # no version check at all
    assert failures(g.model(), fl=27) == []


@pytest.mark.parametrize("builtin", [B.SQUARE, B.GELU, B.BROADCAST_TO,
                                     B.BIDIRECTIONAL_SEQUENCE_RNN])
def test_ops_without_mapping_are_unsupported_operators(builtin):
    g = Graph()
    x, y = g.t((1, 4)), g.t((1, 4))
    g.op(builtin, [x], [y])
    assert failures(g.model()) == [ValidationFailure(F.kUnsupportedOperator,
                                                     "Unsupported operation type.")]


def test_custom_op_is_unsupported_operator():
    g = Graph()
    x, y = g.t((1, 4)), g.t((1, 4))
    g.op(B.CUSTOM, [x], [y], custom_code="MyOp")
    assert types(g.model()) == [F.kUnsupportedOperator]


def test_subgraph_object_or_index():
    m = _binary(B.ADD, rank=5, options=AddOptions())
    assert validate_node(m, m.subgraphs[0], 0, 31, False) == validate_node(m, 0, 0, 31, False)


def test_restricted_scale_before_fl29():
    g = Graph()
    x = g.t((1, 4), TT.UINT8, q=(0.5, 128))
    w = g.t((3, 4), TT.UINT8, data=np.ones((3, 4)), q=(0.5, 128))
    b = g.t((3,), TT.INT32, data=np.zeros(3), q=(0.25, 0))
    y = g.t((1, 3), TT.UINT8, q=(0.25, 128))  # 0.5 * 0.5 is not < 0.25
    g.op(B.FULLY_CONNECTED, [x, w, b], [y], FullyConnectedOptions())
    m = g.model()
    assert failures(m, fl=28) == [ValidationFailure(
        F.kNotRestrictedScaleCompliant,
        "When using NN API version 1.0 or 1.1, input_scale * filter_scale < output_scale.")]
    assert failures(m, fl=29) == []


def test_cast_types_by_feature_level():
    g = Graph()
    x, y = g.t((1, 4), TT.INT8, q=(1.0, 0)), g.t((1, 4))
    g.op(B.CAST, [x], [y])
    m = g.model()
    assert failures(m, fl=29) == [ValidationFailure(
        F.kUnsupportedInputType,
        "Input type not in expected list kTfLiteFloat32, kTfLiteInt32, kTfLiteUInt8")]
    assert failures(m, fl=30) == []
