"""The NNAPI model the delegate builds for a partition (tflite-nnapi-delegate.md 3 and 4).

Expected operand lists, types and orders are derived from the reference note (and, for the
GraphDump lines, from the board capture quoted in nnapi-runtime.md 4.3), not from nnsim runs.
"""
from __future__ import annotations

import numpy as np
import pytest

from nnsim.errors import BadDataError, OperationValidationError
from nnsim.runtime.graphdump import graph_dump_lines
from nnsim.tflite.convert import (ConvertError, ConvertOptions, apply_input_conversion,
                                  apply_output_conversion, build_nnapi_model)
from nnsim.tflite.options import (AddOptions, ArgMaxOptions, Conv2DOptions,
                                  DepthwiseConv2DOptions, FullyConnectedOptions, GatherOptions,
                                  LeakyReluOptions, MulOptions, PackOptions, Pool2DOptions,
                                  ReducerOptions, ResizeBilinearOptions,
                                  ResizeNearestNeighborOptions, SoftmaxOptions, SplitOptions,
                                  SplitVOptions, SqueezeOptions, StridedSliceOptions,
                                  TransposeConvOptions, UnpackOptions)
from nnsim.tflite.schema import ActivationFunctionType as Act
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import Padding
from nnsim.tflite.schema import TensorType as TT
from nnsim.types import OperandLifeTime as L

from .test_convert_support import (Graph, convert, operand_summary, ops_in_added_order,
                                   partition_io, shared_model)

TF32, TI32, Q8A, Q8S = ("TENSOR_FLOAT32", "TENSOR_INT32", "TENSOR_QUANT8_ASYMM",
                        "TENSOR_QUANT8_ASYMM_SIGNED")
COPY, REF, TMP, IN, OUT, NO = ("CONSTANT_COPY", "CONSTANT_REFERENCE", "TEMPORARY_VARIABLE",
                               "SUBGRAPH_INPUT", "SUBGRAPH_OUTPUT", "NO_VALUE")


def f32(x):
    """A float32 quantization scale as the operand holds it."""
    return float(np.float32(x))


def summary(c):
    return [operand_summary(c.nnapi_model, k) for k in range(len(c.nnapi_model.operands))]


def kinds(c):
    """(type, dims, lifetime) per operand."""
    return [(s[0], s[1], s[4]) for s in summary(c)]


def scalar(value, t="INT32"):
    return (t, (), 0.0, 0, COPY, value)


# -- the GraphDump acceptance (issue) -----------------------------------------------------------

def test_graphdump_mobilenet_v1_quant_fl31():
    m = shared_model("mobilenet_v1_1.0_224_quant_reconstructed")
    c = convert(m, fl=31)
    lines = graph_dump_lines("ModelBuilder::finish", c.nnapi_model)
    assert lines[2:10] == [
        '    d0 [style=filled fillcolor=black fontcolor=white label="0 = input[0]\\n'
        'TQ8A(1x224x224x3)"]',
        '    d1 [label="1: REF\\nTQ8A(32x3x3x3)"]',
        '    d2 [label="2: COPY\\nTI32(32)"]',
        '    d3 [label="3: COPY\\nI32 = 1"]',
        '    d4 [label="4: COPY\\nI32 = 2"]',
        '    d5 [label="5: COPY\\nI32 = 2"]',
        '    d6 [label="6: COPY\\nI32 = 3"]',
        '    d7 [label="7\\nTQ8A(1x112x112x32)"]',
    ]
    assert c.model_input_tensors == list(m.subgraphs[0].inputs)
    assert c.model_output_tensors == list(m.subgraphs[0].outputs)
    assert c.nnapi_to_tflite_node == list(range(31))
    assert (c.input_conversions, c.output_conversions) == ({}, {})


def test_tf2_ptq_fl31_requantize_is_dequantize_then_quantize():
    m = shared_model("tf2_mobilenet_v2_1.0_224_ptq")
    c = convert(m, fl=31)
    nn = c.nnapi_model
    assert kinds(c)[:3] == [("TENSOR_QUANT8_ASYMM", (1, 224, 224, 3), IN),
                           ("TENSOR_FLOAT32", (1, 224, 224, 3), TMP),
                           ("TENSOR_QUANT8_ASYMM_SIGNED", (1, 224, 224, 3), TMP)]
    assert [nn.operation_name(0), nn.operation_name(1)] == ["DEQUANTIZE", "QUANTIZE"]
    assert nn.operations[0].inputs == (0,) and nn.operations[0].outputs == (1,)
    assert nn.operations[1].inputs == (1,) and nn.operations[1].outputs == (2,)
    lines = graph_dump_lines("ModelBuilder::finish", nn)
    assert lines[4] == '    d2 [label="2\\nTENSOR_QUANT8_ASYMM_SIGNED(1x224x224x3)"]'
    assert lines[5].startswith('    d3 [label="3: REF\\nTENSOR_QUANT8_SYMM_PER_CHANNEL(32x3x3x3)')
    ops = ops_in_added_order(nn)
    assert [o[0] for o in ops[:3]] == ["DEQUANTIZE", "QUANTIZE", "CONV_2D"]
    assert c.nnapi_to_tflite_node[:3] == [0, 0, 1]
    # the per-channel filter carries its scales; the bias has the legacy scale 0
    filt = nn.operands[3]
    assert filt.channel_quant.channelDim == 0
    assert len(filt.channel_quant.scales) == 32
    assert summary(c)[4][:4] == (TI32, (32,), 0.0, 0)


def test_tf2_ptq_fl29_int8_becomes_uint8_with_zero_point_plus_128():
    m = shared_model("tf2_mobilenet_v2_1.0_224_ptq")
    sg = m.subgraphs[0]
    nodes = list(range(1, len(sg.operators)))  # QUANTIZE 0 is refused at FL29
    c = convert(m, nodes, fl=29)
    nn = c.nnapi_model
    first_in = sg.operators[1].inputs[0]
    t = sg.tensors[first_in]
    assert t.type == TT.INT8
    x = nn.operands[c.tensor_to_operand[first_in]]
    assert (x.type, x.zero_point) == (5, int(t.quantization.zero_points[0]) + 128)
    assert c.model_input_tensors == [first_in]
    assert c.input_conversions == {first_in: "int8_to_uint8"}
    types = {nn.operands[a].type for tensor, a in c.tensor_to_operand.items()
             if sg.tensors[tensor].type == TT.INT8
             and (sg.tensors[tensor].quantization is None
                  or len(sg.tensors[tensor].quantization.scales) == 1)}
    assert types == {5}  # every per-tensor int8 tensor is TENSOR_QUANT8_ASYMM
    assert all(nn.operands[i].type != 14 for i in range(len(nn.operands)))


# -- operands: AddTensor, constants, scalars (3.2 - 3.6) ----------------------------------------

def test_constants_copy_up_to_128_bytes_reference_above():
    g = Graph()
    x = g.t((1, 32))
    w_small = g.t((1, 32), data=np.ones((1, 32)))      # 128 bytes
    w_big = g.t((1, 33), data=np.ones((1, 33)))        # 132 bytes
    y, z = g.t((1, 32)), g.t((1, 33))
    g.op(B.ADD, [x, w_small], [y], AddOptions())
    g.op(B.ADD, [x, w_big], [z], AddOptions())
    c = convert(g.model())
    nn = c.nnapi_model
    assert nn.operands[c.tensor_to_operand[w_small]].lifetime == L.CONSTANT_COPY
    assert nn.operands[c.tensor_to_operand[w_big]].lifetime == L.CONSTANT_REFERENCE


def test_tensor_registered_once_and_scalars_never_shared():
    g = Graph()
    x, c2 = g.t((1, 4)), g.t((), data=2.0)
    y, z = g.t((1, 4)), g.t((1, 4))
    g.op(B.ADD, [x, c2], [y], AddOptions())
    g.op(B.MUL, [y, c2], [z], MulOptions())
    c = convert(g.model())
    assert summary(c) == [
        (TF32, (1, 4), 0.0, 0, IN, None),
        (TF32, (1,), 0.0, 0, COPY, [2.0]),  # rank-0 -> [1] for scalar-capable ops
        scalar(0),
        (TF32, (1, 4), 0.0, 0, TMP, None),
        scalar(0),                          # a second, new activation scalar
        (TF32, (1, 4), 0.0, 0, OUT, None),
    ]
    assert ops_in_added_order(c.nnapi_model) == [("ADD", (0, 1, 2), (3,)),
                                                 ("MUL", (3, 1, 4), (5,))]
    assert c.nnapi_to_tflite_node == [0, 1]


def test_uint8_scale_zero_becomes_one():
    g = Graph()
    x, y = g.t((1, 4), TT.UINT8, q=(0.0, 3)), g.t((1, 4), TT.UINT8, q=(0.0, 3))
    g.op(B.RELU, [x], [y])
    c = convert(g.model())
    assert [s[2:4] for s in summary(c)] == [(1.0, 3), (1.0, 3)]


def test_model_inputs_sorted_skip_constants_and_outputs_mapped():
    g = Graph()
    b_, a = g.t((1, 4), name="b"), g.t((1, 4), name="a")
    k = g.t((1, 4), data=np.ones((1, 4)))
    s, y = g.t((1, 4)), g.t((1, 4))
    g.op(B.ADD, [a, k], [s], AddOptions())
    g.op(B.ADD, [s, b_], [y], AddOptions())
    m = g.model()
    c = build_nnapi_model(m, 0, [0, 1], [a, k, b_], [y], ConvertOptions(31, 31))
    assert c.model_input_tensors == [b_, a]  # ascending tensor index, constant dropped
    assert c.nnapi_model.input_indexes == [c.tensor_to_operand[b_], c.tensor_to_operand[a]]
    assert c.model_output_tensors == [y]


def test_relax_fp16_only_from_sdk_28():
    g = Graph()
    x, y = g.t((1, 4)), g.t((1, 4))
    g.op(B.RELU, [x], [y])
    m = g.model()
    assert convert(m, fl=27, sdk=28, allow_fp16=True).nnapi_model.relax_float32_to_float16
    assert not convert(m, fl=27, sdk=27, allow_fp16=True).nnapi_model.relax_float32_to_float16
    assert not convert(m, fl=31, allow_fp16=False).nnapi_model.relax_float32_to_float16


def test_int8_conversion_below_fl30_and_signed_from_fl30():
    g = Graph()
    x = g.t((1, 4, 4, 2), TT.INT8, q=(0.5, -10))
    w = g.t((3, 1, 1, 2), TT.INT8, data=np.array([-128, 0, 5, 127, -1, 1]).reshape(3, 1, 1, 2),
            q=(0.25, 0))
    bias = g.t((3,), TT.INT32, data=[1, 2, 3], q=(0.125, 0))
    y = g.t((1, 4, 4, 3), TT.INT8, q=(1.0, 7))
    g.op(B.CONV_2D, [x, w, bias], [y], Conv2DOptions(stride_w=1, stride_h=1))
    m = g.model()
    c29 = convert(m, fl=29)
    assert summary(c29)[:3] == [
        (Q8A, (1, 4, 4, 2), 0.5, 118, IN, None),
        (Q8A, (3, 1, 1, 2), 0.25, 128, COPY, [[[[0, 128]]], [[[133, 255]]], [[[127, 129]]]]),
        (TI32, (3,), 0.125, 0, COPY, [1, 2, 3])]
    assert summary(c29)[-1][:4] == (Q8A, (1, 4, 4, 3), 1.0, 135)
    assert c29.input_conversions == {x: "int8_to_uint8"}
    assert c29.output_conversions == {y: "uint8_to_int8"}
    c30 = convert(m, fl=30)
    assert summary(c30)[:2] == [
        (Q8S, (1, 4, 4, 2), 0.5, -10, IN, None),
        (Q8S, (3, 1, 1, 2), 0.25, 0, COPY, [[[[-128, 0]]], [[[5, 127]]], [[[-1, 1]]]])]
    assert (c30.input_conversions, c30.output_conversions) == ({}, {})


def test_conversion_helpers():
    v = np.array([-128, 0, 127], np.int8)
    u = apply_input_conversion(v, "int8_to_uint8")
    assert u.dtype == np.uint8 and u.tolist() == [0, 128, 255]
    back = apply_output_conversion(u, "uint8_to_int8")
    assert back.dtype == np.int8 and back.tolist() == v.tolist()
    assert apply_input_conversion(v, "int8_to_int32_plus128").tolist() == [0, 128, 255]
    assert apply_input_conversion(v, None) is not None


# -- the op mapping (4) -------------------------------------------------------------------------

def test_pooling_operands():
    g = Graph()
    x, y = g.t((1, 8, 8, 2)), g.t((1, 4, 4, 2))
    g.op(B.MAX_POOL_2D, [x], [y], Pool2DOptions(Padding.VALID, 2, 2, 3, 3, Act.RELU))
    c = convert(g.model())
    assert [s[5] for s in summary(c)[1:7]] == [2, 2, 2, 3, 3, 1]  # VALID=2, sw, sh, fw, fh, act
    assert ops_in_added_order(c.nnapi_model) == [("MAX_POOL_2D", tuple(range(7)), (7,))]


def _conv_graph(in_c, w_c, dilation=1):
    g = Graph()
    x = g.t((1, 5, 5, in_c))
    w = g.t((4, 3, 3, w_c), data=np.ones((4, 3, 3, w_c)))
    bias = g.t((4,), data=np.zeros(4))
    y = g.t((1, 5, 5, 4))
    g.op(B.CONV_2D, [x, w, bias], [y],
         Conv2DOptions(stride_w=1, stride_h=1, fused_activation_function=Act.RELU6,
                       dilation_w_factor=dilation, dilation_h_factor=dilation))
    return g.model()


def test_conv_grouped_and_dilated():
    # The delegate maps a grouped CONV_2D to GROUPED_CONV_2D with pad, sw, sh, groups, act
    # (reference 4): 8 inputs, which NNAPI's GROUPED_CONV_2D validation (9 or 12, the layout
    # is not optional) refuses at addOperation, so delegation of such a model fails as upstream.
    with pytest.raises(OperationValidationError, match="GROUPED_CONV_2D.*8, expected 12 or 9"):
        convert(_conv_graph(8, 4))
    c = convert(_conv_graph(4, 4, dilation=2))
    assert [s[5] for s in summary(c)[3:10]] == [1, 1, 1, 3, False, 2, 2]
    assert summary(c)[7][0] == "BOOL"
    assert ops_in_added_order(c.nnapi_model) == [("CONV_2D", tuple(range(10)), (10,))]


def test_depthwise_operands():
    g = Graph()
    x = g.t((1, 5, 5, 2))
    w = g.t((1, 3, 3, 4), data=np.ones((1, 3, 3, 4)))
    bias, y = g.t((4,), data=np.zeros(4)), g.t((1, 3, 3, 4))
    g.op(B.DEPTHWISE_CONV_2D, [x, w, bias], [y],
         DepthwiseConv2DOptions(Padding.VALID, 1, 1, 2, Act.RELU))
    c = convert(g.model())
    assert [s[5] for s in summary(c)[3:8]] == [2, 1, 1, 2, 1]


def test_fully_connected_zero_bias_and_keep_num_dims():
    g = Graph()
    x, w = g.t((2, 3, 4), TT.INT8, q=(0.5, 0)), g.t((5, 4), TT.INT8, data=np.ones((5, 4)),
                                                    q=(0.25, 0))
    y = g.t((2, 3, 5), TT.INT8, q=(1.0, 0))
    g.op(B.FULLY_CONNECTED, [x, w, -1], [y], FullyConnectedOptions(keep_num_dims=True))
    c = convert(g.model(), fl=30)
    assert summary(c) == [
        (Q8S, (2, 3, 4), 0.5, 0, IN, None),
        (Q8S, (5, 4), 0.25, 0, COPY, np.ones((5, 4)).tolist()),
        (TI32, (5,), 0.125, 0, COPY, [0] * 5),
        scalar(0),
        (Q8S, (6, 5), 1.0, 0, TMP, None),
        (TI32, (3,), 0.0, 0, COPY, [2, 3, 5]),
        (Q8S, (2, 3, 5), 1.0, 0, OUT, None),
    ]
    assert ops_in_added_order(c.nnapi_model) == [("FULLY_CONNECTED", (0, 1, 2, 3), (4,)),
                                                 ("RESHAPE", (4, 5), (6,))]
    assert c.nnapi_to_tflite_node == [0, 0]


def test_hybrid_fully_connected_dequantizes_weights():
    g = Graph()
    x = g.t((1, 4))
    w = g.t((3, 4), TT.INT8, data=np.ones((3, 4)), q=(0.1, 0))
    bias, y = g.t((3,), data=np.zeros(3)), g.t((1, 3))
    g.op(B.FULLY_CONNECTED, [x, w, bias], [y], FullyConnectedOptions())
    c = convert(g.model(), fl=31)
    assert summary(c)[1][:2] == ("TENSOR_QUANT8_SYMM", (3, 4))  # hybrid: no signed flag
    assert summary(c)[5][:2] == (TF32, (3, 4))
    assert ops_in_added_order(c.nnapi_model) == [("DEQUANTIZE", (1,), (5,)),
                                                 ("FULLY_CONNECTED", (0, 5, 2, 3), (4,))]


def test_hard_swish_native_from_sdk30_lowered_below():
    g = Graph()
    x, y = g.t((1, 4), TT.UINT8, q=(0.05, 100)), g.t((1, 4), TT.UINT8, q=(0.03, 10))
    g.op(B.HARD_SWISH, [x], [y])
    m = g.model()
    assert [o[0] for o in ops_in_added_order(convert(m, fl=29, sdk=30).nnapi_model)] == [
        "HARD_SWISH"]
    c = convert(m, fl=29, sdk=29)
    assert ops_in_added_order(c.nnapi_model) == [
        ("MUL", (0, 1, 2), (3,)), ("MUL", (0, 4, 5), (6,)), ("MUL", (3, 6, 7), (8,)),
        ("ADD", (6, 8, 9), (10,))]
    s = summary(c)
    in_min, in_max = -100 * np.float32(0.05), 155 * np.float32(0.05)
    assert s[1][:4] == (Q8A, (1,), float(np.float32(1 / 3) / np.float32(64)), 0)
    assert s[1][5] == [64]
    assert s[2][5] == 2  # FUSED_RELU1
    s1_scale = float(np.float32(2.0) / np.float32(255.0))
    assert s[3][:4] == (Q8A, (1, 4), s1_scale, 127)
    assert s[4][2] == float(np.float32(0.5) / np.float32(64))
    assert s[6][:4] == (Q8A, (1, 4), float(np.float32(0.05) / np.float32(2)), 100)
    hi = max(1.0 * in_max / 2, -1.0 * in_min / 2)
    assert s[8][:4] == (Q8A, (1, 4), float(np.float32(hi) / np.float32(255)), 0)
    assert c.nnapi_to_tflite_node == [0, 0, 0, 0]


def test_leaky_relu_is_prelu_with_alpha_constant():
    g = Graph()
    x, y = g.t((1, 4), TT.INT8, q=(0.1, 0)), g.t((1, 4), TT.INT8, q=(0.1, 0))
    g.op(B.LEAKY_RELU, [x], [y], LeakyReluOptions(0.25))
    m = g.model()
    assert summary(convert(m, fl=31))[1] == (Q8S, (1,), 0.25, 0, COPY, [1])
    assert summary(convert(m, fl=29))[1] == (Q8A, (1,), 0.25, 0, COPY, [1])
    g = Graph()
    x, y = g.t((1, 4)), g.t((1, 4))
    g.op(B.LEAKY_RELU, [x], [y], LeakyReluOptions(0.25))
    c = convert(g.model())
    assert summary(c)[1] == (TF32, (1,), 0.0, 0, COPY, [0.25])
    assert ops_in_added_order(c.nnapi_model) == [("PRELU", (0, 1), (2,))]


def _pack_graph():
    g = Graph()
    a, b = g.t((2, 3), TT.INT8, q=(0.1, 1)), g.t((2, 3), TT.INT8, q=(0.1, 1))
    y = g.t((2, 2, 3), TT.INT8, q=(0.1, 1))
    g.op(B.PACK, [a, b], [y], PackOptions(2, 1))
    return g.model()


def test_pack_below_fl6_is_concatenation_and_reshape():
    c = convert(_pack_graph(), fl=31)
    assert summary(c) == [
        (Q8S, (2, 3), f32(0.1), 1, IN, None), (Q8S, (2, 3), f32(0.1), 1, IN, None), scalar(1),
        (Q8S, (2, 6), f32(0.1), 1, TMP, None), (TI32, (3,), 0.0, 0, COPY, [2, 2, 3]),
        (Q8S, (2, 2, 3), f32(0.1), 1, OUT, None)]
    assert ops_in_added_order(c.nnapi_model) == [("CONCATENATION", (0, 1, 2), (3,)),
                                                 ("RESHAPE", (3, 4), (5,))]


def test_pack_fl6_axis_first():
    import nnsim
    with pytest.raises(BadDataError, match="newer"):  # the default runtime is FL5 (Android 12)
        convert(_pack_graph(), fl=1000006)
    nnsim.setprop("ro.build.version.sdk", "33")        # Android 13: FL6
    c = convert(_pack_graph(), fl=1000006)
    assert summary(c)[0] == scalar(1)
    assert ops_in_added_order(c.nnapi_model) == [("PACK", (0, 1, 2), (3,))]


def test_unpack_is_reshape_and_split():
    g = Graph()
    x = g.t((2, 3, 4))
    ys = [g.t((3, 4)), g.t((3, 4))]
    g.op(B.UNPACK, [x], ys, UnpackOptions(2, 0))
    c = convert(g.model())
    assert summary(c)[1] == (TI32, (2,), 0.0, 0, COPY, [6, 4])
    assert summary(c)[2][:2] == (TF32, (6, 4))
    assert [s[5] for s in summary(c)[3:5]] == [0, 2]
    assert ops_in_added_order(c.nnapi_model) == [("RESHAPE", (0, 1), (2,)),
                                                 ("SPLIT", (2, 3, 4), (5, 6))]


def test_split_and_split_v():
    g = Graph()
    axis, x = g.t((), TT.INT32, data=1), g.t((2, 4))
    ys = [g.t((2, 2)), g.t((2, 2))]
    g.op(B.SPLIT, [axis, x], ys, SplitOptions(2))
    c = convert(g.model())
    assert ops_in_added_order(c.nnapi_model) == [("SPLIT", (0, 1, 2), (3, 4))]
    assert [s[5] for s in summary(c)[1:3]] == [1, 2]
    g = Graph()
    x = g.t((2, 6))
    sizes, axis = g.t((2,), TT.INT32, data=[-1, 2]), g.t((), TT.INT32, data=-1)
    ys = [g.t((2, 4)), g.t((2, 2))]
    g.op(B.SPLIT_V, [x, sizes, axis], ys, SplitVOptions(2))
    c = convert(g.model())
    assert ops_in_added_order(c.nnapi_model) == [("SLICE", (0, 1, 2), (3,)),
                                                 ("SLICE", (0, 4, 5), (6,))]
    assert [s[5] for s in summary(c)] == [None, [0, 0], [2, 4], None, [0, 4], [2, 2], None]


def test_pad_and_padv2_value():
    g = Graph()
    x = g.t((1, 2, 2, 1), TT.INT8, q=(0.1, -2))
    pads = g.t((4, 2), TT.INT32, data=np.ones((4, 2)))
    v = g.t((), TT.INT8, data=-2, q=(0.1, -2))
    y = g.t((1, 4, 4, 1), TT.INT8, q=(0.1, -2))
    g.op(B.PADV2, [x, pads, v], [y])
    m = g.model()
    assert summary(convert(m, fl=29))[2] == scalar(126)  # +128 with the int8 conversion
    c = convert(m, fl=30)
    assert summary(c)[2] == scalar(-2)
    assert ops_in_added_order(c.nnapi_model) == [("PAD_V2", (0, 1, 2), (3,))]
    g = Graph()
    x, pads, y = g.t((1, 2)), g.t((2, 2), TT.INT32, data=np.ones((2, 2))), g.t((3, 4))
    g.op(B.PAD, [x, pads], [y])
    assert ops_in_added_order(convert(g.model()).nnapi_model) == [("PAD", (0, 1), (2,))]


def test_mean_requantizes_when_quantization_differs():
    g = Graph()
    x = g.t((1, 4, 4, 8), TT.INT8, q=(0.1, -3))
    axes = g.t((2,), TT.INT32, data=[1, 2])
    y = g.t((1, 1, 1, 8), TT.INT8, q=(0.05, 5))
    g.op(B.MEAN, [x, axes], [y], ReducerOptions(keep_dims=True))
    m = g.model()
    c = convert(m, fl=31)
    assert summary(c) == [
        (Q8S, (1, 4, 4, 8), f32(0.1), -3, IN, None), (TI32, (2,), 0.0, 0, COPY, [1, 2]), scalar(1),
        (Q8S, (1, 1, 1, 8), f32(0.1), -3, TMP, None), (Q8S, (1,), 1.0, 0, COPY, [0]), scalar(0),
        (Q8S, (1, 1, 1, 8), f32(0.05), 5, OUT, None)]
    assert ops_in_added_order(c.nnapi_model) == [("MEAN", (0, 1, 2), (3,)),
                                                 ("ADD", (3, 4, 5), (6,))]
    c = convert(m, fl=29)
    assert [s[:4] for s in summary(c)][3:7] == [
        (Q8A, (1, 1, 1, 8), f32(0.1), 125), (Q8A, (1,), 1.0, 0), ("INT32", (), 0.0, 0),
        (Q8A, (1, 1, 1, 8), f32(0.05), 133)]
    assert c.output_conversions == {y: "uint8_to_int8"}


def test_reduce_ops_keep_dims_bool_and_scalar_axis():
    g = Graph()
    x, axis, y = g.t((2, 3)), g.t((), TT.INT32, data=1), g.t((2,))
    g.op(B.REDUCE_MAX, [x, axis], [y], ReducerOptions(keep_dims=False))
    c = convert(g.model())
    assert summary(c)[1:3] == [(TI32, (1,), 0.0, 0, COPY, [1]), scalar(False, "BOOL")]
    assert ops_in_added_order(c.nnapi_model) == [("REDUCE_MAX", (0, 1, 2), (3,))]


def test_quantize_of_quantized_input_inserts_dequantize():
    g = Graph()
    x, y = g.t((1, 4), TT.UINT8, q=(0.1, 128)), g.t((1, 4), TT.INT8, q=(0.1, 0))
    g.op(B.QUANTIZE, [x], [y])
    c = convert(g.model())
    assert kinds(c) == [(Q8A, (1, 4), IN), (TF32, (1, 4), TMP), (Q8S, (1, 4), OUT)]
    assert ops_in_added_order(c.nnapi_model) == [("DEQUANTIZE", (0,), (1,)),
                                                 ("QUANTIZE", (1,), (2,))]
    g = Graph()
    x, y = g.t((1, 4)), g.t((1, 4), TT.UINT8, q=(0.1, 128))
    g.op(B.QUANTIZE, [x], [y])
    assert ops_in_added_order(convert(g.model()).nnapi_model) == [("QUANTIZE", (0,), (1,))]


def test_squared_difference_is_sub_then_mul():
    g = Graph()
    a, b = g.t((1, 4), TT.UINT8, q=(0.1, 128)), g.t((1, 4), TT.UINT8, q=(0.1, 128))
    y = g.t((1, 4), TT.UINT8, q=(0.2, 0))
    g.op(B.SQUARED_DIFFERENCE, [a, b], [y])
    c = convert(g.model(), fl=29)
    scale = np.float32(2.0) * np.sqrt(np.float32(255) * np.float32(0.2)) / np.float32(254.0)
    assert summary(c)[3][:4] == (Q8A, (1, 4), float(scale), 128)
    assert ops_in_added_order(c.nnapi_model) == [("SUB", (0, 1, 2), (3,)),
                                                 ("MUL", (3, 3, 4), (5,))]


def test_resize_operands():
    g = Graph()
    x, size, y = g.t((1, 2, 2, 1)), g.t((2,), TT.INT32, data=[4, 6]), g.t((1, 4, 6, 1))
    g.op(B.RESIZE_BILINEAR, [x, size], [y], ResizeBilinearOptions())
    c = convert(g.model())
    assert summary(c)[1:3] == [scalar(6), scalar(4)]  # width, height from the output dims
    assert ops_in_added_order(c.nnapi_model) == [("RESIZE_BILINEAR", (0, 1, 2), (3,))]
    g = Graph()
    x, size, y = g.t((1, 2, 2, 1)), g.t((2,), TT.INT32, data=[4, 6]), g.t((1, 4, 6, 1))
    g.op(B.RESIZE_BILINEAR, [x, size], [y], ResizeBilinearOptions(align_corners=True))
    c = convert(g.model())
    assert [s[5] for s in summary(c)[1:6]] == [6, 4, False, True, False]
    g = Graph()
    x, size, y = g.t((1, 2, 2, 1)), g.t((2,), TT.INT32, data=[4, 6]), g.t((1, 4, 6, 1))
    g.op(B.RESIZE_NEAREST_NEIGHBOR, [x, size], [y], ResizeNearestNeighborOptions())
    c = convert(g.model())
    assert [s[5] for s in summary(c)[1:4]] == [6, 4, False]  # layout always passed
    assert ops_in_added_order(c.nnapi_model) == [("RESIZE_NEAREST_NEIGHBOR", (0, 1, 2, 3),
                                                  (4,))]


def test_squeeze_without_dims_passes_an_omitted_vector():
    g = Graph()
    x, y = g.t((1, 4, 1)), g.t((4,))
    g.op(B.SQUEEZE, [x], [y], SqueezeOptions())
    assert summary(convert(g.model()))[1] == (TI32, (0,), 0.0, 0, NO, None)
    g = Graph()
    x, y = g.t((1, 4, 1)), g.t((4, 1))
    g.op(B.SQUEEZE, [x], [y], SqueezeOptions(squeeze_dims=(0,)))
    assert summary(convert(g.model()))[1] == (TI32, (1,), 0.0, 0, COPY, [0])


def test_softmax_strided_slice_gather_arg_max():
    g = Graph()
    x, y = g.t((1, 4)), g.t((1, 4))
    g.op(B.SOFTMAX, [x], [y], SoftmaxOptions(0.5))
    assert summary(convert(g.model()))[1] == scalar(0.5, "FLOAT32")
    g = Graph()
    x = g.t((4, 4))
    b0, e, s = (g.t((2,), TT.INT32, data=v) for v in ([0, 1], [2, 3], [1, 1]))
    y = g.t((2, 2))
    g.op(B.STRIDED_SLICE, [x, b0, e, s], [y], StridedSliceOptions(1, 2, 4, 8, 0))
    assert [s[5] for s in summary(convert(g.model()))[4:7]] == [1, 2, 0]  # no ellipsis/new
    g = Graph()
    x, idx, y = g.t((3, 4)), g.t((2,), TT.INT32), g.t((2, 4))
    g.op(B.GATHER, [x, idx], [y], GatherOptions(axis=0))
    c = convert(g.model())
    assert kinds(c) == [(TF32, (3, 4), IN), ("INT32", (), COPY), (TI32, (2,), IN),
                        (TF32, (2, 4), OUT)]
    g = Graph()
    x, axis, y = g.t((1, 4)), g.t((1,), TT.INT32), g.t((1,), TT.INT32)
    g.op(B.ARG_MAX, [x, axis], [y], ArgMaxOptions(TT.INT32))
    c = convert(g.model())
    assert kinds(c)[1] == ("INT32", (), IN)  # a non-constant axis becomes a scalar input
    assert c.model_input_tensors == [x, axis]


def test_transpose_conv_operand_order():
    g = Graph()
    shape = g.t((4,), TT.INT32, data=[1, 4, 4, 2])
    w = g.t((2, 3, 3, 1), TT.INT8, data=np.ones((2, 3, 3, 1)), q=([0.1, 0.2], [0, 0], 0))
    x = g.t((1, 2, 2, 1), TT.INT8, q=(0.5, 1))
    y = g.t((1, 4, 4, 2), TT.INT8, q=(0.5, 2))
    g.op(B.TRANSPOSE_CONV, [shape, w, x], [y], TransposeConvOptions(Padding.SAME, 2, 2))
    c = convert(g.model())
    assert [s[:2] for s in summary(c)[:4]] == [(Q8S, (1, 2, 2, 1)),
                                               ("TENSOR_QUANT8_SYMM_PER_CHANNEL", (2, 3, 3, 1)),
                                               (TI32, (2,)), (TI32, (4,))]
    assert [s[5] for s in summary(c)[4:9]] == [1, 2, 2, 0, False]
    assert ops_in_added_order(c.nnapi_model) == [("TRANSPOSE_CONV_2D", tuple(range(9)), (9,))]


def test_fp16_constant_dequantize_is_folded():
    g = Graph()
    h = g.t((3,), TT.FLOAT16, data=np.array([1, 2, 3], np.float16))
    d, x, y = g.t((3,)), g.t((1, 3)), g.t((1, 3))
    g.op(B.DEQUANTIZE, [h], [d])
    g.op(B.ADD, [x, d], [y], AddOptions())
    c = convert(g.model())
    assert summary(c)[0] == (TF32, (3,), 0.0, 0, COPY, [1.0, 2.0, 3.0])
    assert ops_in_added_order(c.nnapi_model) == [("ADD", (1, 0, 2), (3,))]
    assert c.nnapi_to_tflite_node == [1]


def test_custom_op_cannot_convert():
    g = Graph()
    x, y = g.t((1, 4)), g.t((1, 4))
    g.op(B.CUSTOM, [x], [y], custom_code="MyOp")
    with pytest.raises(ConvertError, match="MyOp"):
        convert(g.model())


def test_partition_of_shared_model_keeps_node_map():
    m = shared_model("mobilenet_v1_1.0_224_quant_reconstructed")
    nodes = list(range(5, 12))
    inputs, outputs = partition_io(m, nodes)
    c = build_nnapi_model(m, 0, nodes, inputs, outputs, ConvertOptions(29, 29))
    assert c.nnapi_to_tflite_node == nodes
    assert c.model_input_tensors == [t for t in inputs if m.subgraphs[0].tensors[t].data is None]
    assert c.model_output_tensors == outputs


def test_nnapi_inputs_and_tflite_outputs_apply_the_invoke_conversions():
    g = Graph()
    x = g.t((1, 4), TT.INT8, q=(0.1, 0))
    axis, y = g.t((1,), TT.INT32), g.t((1,), TT.INT32)
    g.op(B.ARG_MAX, [x, axis], [y], ArgMaxOptions(TT.INT32))
    g2 = Graph()
    a, b = g2.t((1, 4), TT.INT8, q=(0.1, 0)), g2.t((1, 4), TT.INT8, q=(0.1, 0))
    g2.op(B.RELU, [a], [b])
    c = convert(g.model(), fl=29)
    feeds = c.nnapi_inputs({x: np.array([[-128, -1, 0, 127]], np.int8),
                            axis: np.array([1], np.int32)})
    assert feeds[0].dtype == np.uint8 and feeds[0].tolist() == [[0, 127, 128, 255]]
    assert feeds[1].shape == () and int(feeds[1]) == 1
    c2 = convert(g2.model(), fl=29)
    out = c2.tflite_outputs([np.array([[0, 128, 255, 200]], np.uint8)])
    assert out[b].dtype == np.int8 and out[b].tolist() == [[-128, 0, 127, 72]]
