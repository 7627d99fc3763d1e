"""The VX delegate's node rules (nnsim/tflite/vx/rules.py) against npu-drivers.md section 3.

Expectations are the reference note's: the supported-builtin list of 3.2, the global checks of
3.1 and the per-mapper conditions of 3.3, with the log lines as tflite-vx-delegate prints them
(the note quotes "Fallback unsupported op %d to TfLite"; symptom 9.7 is the SSD custom op,
9.3 DeepLab's int64 ARG_MAX).
"""
from __future__ import annotations

import logging

import numpy as np
import pytest

from nnsim.tflite.options import (AddOptions, BatchMatMulOptions, Conv2DOptions,
                                  Conv3DOptions, FullyConnectedOptions, StridedSliceOptions)
from nnsim.tflite.schema import ActivationFunctionType as Act
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import FullyConnectedOptionsWeightsFormat as WF
from nnsim.tflite.schema import TensorType as TT
from nnsim.tflite.vx.rules import (GLOBAL_CHECKS, SUPPORTED_BUILTINS, SUPPORTED_OP, check_node)

from .test_convert_support import Graph, shared_model

# npu-drivers.md 3.2 "Yes" (op_status.md plus the registration table), minus Cos ("no mapper in
# the current op_map.cc, so it falls back"), in TFLite schema names.
NOTE_YES = """ADD AVERAGE_POOL_2D CONCATENATION CONV_2D DEPTHWISE_CONV_2D DEPTH_TO_SPACE DEQUANTIZE
EMBEDDING_LOOKUP FLOOR FULLY_CONNECTED HASHTABLE_LOOKUP L2_NORMALIZATION
LOCAL_RESPONSE_NORMALIZATION LOGISTIC MAX_POOL_2D MUL RELU RELU_N1_TO_1 RELU6 RESHAPE
RESIZE_BILINEAR RESIZE_NEAREST_NEIGHBOR RNN SOFTMAX SPACE_TO_DEPTH TANH PAD GATHER GATHER_ND
BATCH_TO_SPACE_ND SPACE_TO_BATCH_ND TRANSPOSE MEAN SUB DIV SQUEEZE UNIDIRECTIONAL_SEQUENCE_RNN
BIDIRECTIONAL_SEQUENCE_RNN UNIDIRECTIONAL_SEQUENCE_LSTM BIDIRECTIONAL_SEQUENCE_LSTM STRIDED_SLICE
EXP SPLIT SPLIT_V PRELU MAXIMUM MINIMUM ARG_MAX ARG_MIN LESS LESS_EQUAL GREATER GREATER_EQUAL
EQUAL NOT_EQUAL NEG SELECT SELECT_V2 SLICE SIN TRANSPOSE_CONV EXPAND_DIMS LOG SUM SQRT RSQRT
SQUARE SHAPE POW REDUCE_PROD REDUCE_MAX REDUCE_MIN REDUCE_ANY PACK UNPACK LOGICAL_AND LOGICAL_OR
LOGICAL_NOT ONE_HOT FLOOR_DIV LEAKY_RELU ABS REVERSE_V2 ADD_N ELU GELU QUANTIZE HARD_SWISH
BATCH_MATMUL CONV_3D CAST BROADCAST_TO SQUARED_DIFFERENCE SCATTER_ND MIRROR_PAD""".split()
NOTE_NO = """L2_POOL_2D LSH_PROJECTION SVDF CONCAT_EMBEDDINGS SKIP_GRAM CALL CUSTOM
EMBEDDING_LOOKUP_SPARSE TOPK_V2 LOG_SOFTMAX PADV2 SPARSE_TO_DENSE TILE FAKE_QUANT ZEROS_LIKE FILL
FLOOR_MOD RANGE UNIQUE CEIL WHERE RANK REVERSE_SEQUENCE MATRIX_DIAG MATRIX_SET_DIAG ROUND IF WHILE
NON_MAX_SUPPRESSION_V4 NON_MAX_SUPPRESSION_V5 DENSIFY SEGMENT_SUM COS""".split()

F32, U8, I8 = TT.FLOAT32, TT.UINT8, TT.INT8
Q = (0.5, 0)


def verdict(g, node=0):
    m = g.model()
    return check_node(m.subgraphs[0], node)


def refused(g, node=0):
    v = verdict(g, node)
    assert not v.supported, "expected a refusal"
    return v.where, v.message


def test_supported_builtins_are_the_reference_list():
    assert sorted(b.name for b in SUPPORTED_BUILTINS) == sorted(NOTE_YES)
    assert not {B[n] for n in NOTE_NO} & SUPPORTED_BUILTINS


def test_an_unmapped_builtin_falls_back_with_its_code():
    g = Graph()
    x, m = g.t((1, 4), F32), g.t((2,), TT.INT32, data=[2, 1])
    g.op(B.TILE, [x, m], [g.t((2, 4), F32)])
    v = verdict(g)
    assert (v.supported, v.where, v.level) == (False, SUPPORTED_OP, logging.WARNING)
    assert v.message == "Fallback unsupported op 69 to TfLite"      # TILE = 69 in schema.fbs


def test_ssd_postprocess_custom_op_falls_back_as_op_32():
    m = shared_model("coco_ssd_mobilenet_v1_1.0_quant_2018_06_29_no_metadata")
    sg = m.subgraphs[0]
    verdicts = [check_node(sg, n) for n in range(len(sg.operators))]
    assert [n for n, v in enumerate(verdicts) if not v.supported] == [len(sg.operators) - 1]
    assert verdicts[-1].message == "Fallback unsupported op 32 to TfLite"   # symptom 9.7


def test_deeplab_int64_argmax_refused_by_the_global_output_check():
    m = shared_model("deeplabv3_mnv2_pascal_quant")
    sg = m.subgraphs[0]
    verdicts = [check_node(sg, n) for n in range(len(sg.operators))]
    assert [n for n, v in enumerate(verdicts) if not v.supported] == [71]
    v = verdicts[71]
    assert (v.where, v.message, v.level) == (GLOBAL_CHECKS, "Int64 output is not supported",
                                             logging.ERROR)


@pytest.mark.parametrize("name", ["mobilenet_v1_0.25_224_quant", "mobilenet_v2_1.0_224_quant",
                                  "tf2_mobilenet_v2_1.0_224_ptq",
                                  "mobilenet_v2_quantized_1x3x224x224"])
def test_int8_and_uint8_mobilenets_are_wholly_supported(name):
    # 3.3: int8 per-channel weights go to conv/depthwise/FC (3.4); PAD, TRANSPOSE and MEAN
    # with constant parameters pass their mappers
    sg = shared_model(name).subgraphs[0]
    assert all(check_node(sg, n).supported for n in range(len(sg.operators)))


# -- OpMapperBase::IsSupported (3.1) --------------------------------------------------------------
def _unary(builtin, in_shape, in_type=F32, out_shape=None, out_type=None):
    g = Graph()
    g.op(builtin, [g.t(in_shape, in_type)], [g.t(out_shape or in_shape, out_type or in_type)])
    return g


def test_int64_input_refused_except_broadcast_to():
    g = Graph()
    a, b = g.t((1, 4), TT.INT64), g.t((1, 4), TT.INT64)
    g.op(B.ADD, [a, b], [g.t((1, 4), TT.INT32)], AddOptions())
    assert refused(g) == (GLOBAL_CHECKS, "Int64 input is not supported")
    g = Graph()
    g.op(B.BROADCAST_TO, [g.t((1, 4), F32), g.t((2,), TT.INT64, data=[3, 4])],
         [g.t((3, 4), F32)])
    assert verdict(g).supported


def test_string_input_refused():
    g = Graph()
    g.op(B.GATHER, [g.t((3,), TT.STRING), g.t((1,), TT.INT32, data=[0])],
         [g.t((1,), TT.STRING)])
    assert refused(g) == (GLOBAL_CHECKS, "String input is not supported")


def test_rank_above_6_refused():
    assert refused(_unary(B.RELU, (1,) * 7)) == (
        GLOBAL_CHECKS, "vx-delegate doesn't support the tensor whose dimension is greater than 6.")
    assert verdict(_unary(B.RELU, (1,) * 6)).supported


def test_zero_dimension_refused_on_inputs_and_outputs():
    line = "vx-delegate doesn't support the tensor of which one of dims is 0"
    assert refused(_unary(B.RELU, (1, 0, 4))) == (GLOBAL_CHECKS, line)
    assert refused(_unary(B.RESHAPE, (1, 4), out_shape=(0, 4))) == (GLOBAL_CHECKS, line)


def test_non_batch_dimension_above_65535_refused_batch_is_not():
    line = "vx-delegate doesn't support tensor height/width > 65535"
    assert refused(_unary(B.RELU, (1, 65536))) == (GLOBAL_CHECKS, line)
    assert verdict(_unary(B.RELU, (65536, 2))).supported       # dimension 0 is exempt
    assert verdict(_unary(B.RELU, (1, 65535))).supported


def test_int16_and_int64_outputs_refused():
    assert refused(_unary(B.CAST, (4,), F32, out_type=TT.INT16)) == (
        GLOBAL_CHECKS, "Int16 output is not supported")
    g = Graph()
    g.op(B.ARG_MAX, [g.t((1, 8), F32), g.t((1,), TT.INT32, data=[1])], [g.t((1,), TT.INT64)])
    assert refused(g) == (GLOBAL_CHECKS, "Int64 output is not supported")
    g = Graph()
    g.op(B.ARG_MAX, [g.t((1, 8), F32), g.t((1,), TT.INT32, data=[1])], [g.t((1,), TT.INT32)])
    assert verdict(g).supported                                 # the int32 export (fix 9.3)


# -- IsOpSupported per mapper (3.3) ---------------------------------------------------------------
def _conv(x_type, w_type, x_shape=(1, 8, 8, 4), w_shape=(4, 3, 3, 4)):
    g = Graph()
    x = g.t(x_shape, x_type, q=Q if x_type != F32 else None)
    w = g.t(w_shape, w_type, data=np.ones(w_shape), q=Q if w_type != F32 else None)
    bias = g.t((w_shape[0],), F32 if x_type == F32 else TT.INT32, data=np.zeros(w_shape[0]))
    out = (x_shape[0], 8, 8, w_shape[0])
    g.op(B.CONV_2D, [x, w, bias], [g.t(out, x_type, q=Q if x_type != F32 else None)],
         Conv2DOptions(stride_w=1, stride_h=1))
    return g


def test_conv2d_hybrid_and_batched_grouped_refused():
    assert verdict(_conv(U8, U8)).supported
    assert refused(_conv(F32, I8)) == ("Conv2dMapper::IsOpSupported",
                                       "hybrid data type is not supported in conv2d.")
    # grouped (input channels 4, filter channels 2): batch 1 passes, batch 2 does not
    assert verdict(_conv(F32, F32, w_shape=(4, 3, 3, 2))).supported
    assert refused(_conv(F32, F32, (2, 8, 8, 4), (4, 3, 3, 2)))[1] == \
        "batch is not supported in grouped conv2d."


def test_depthwise_hybrid_refused():
    g = Graph()
    g.op(B.DEPTHWISE_CONV_2D, [g.t((1, 4, 4, 2), F32), g.t((1, 3, 3, 2), I8, np.ones(18), Q),
                               g.t((2,), F32, np.zeros(2))], [g.t((1, 4, 4, 2), F32)])
    assert refused(g) == ("DepthwiseConv2dMapper::IsOpSupported",
                          "hybrid data type is not supported in DepthwiseConv2d.")


def _fc(x_type, w_type, options=None, out_type=None):
    g = Graph()
    q = lambda t: Q if t not in (F32,) else None  # noqa: E731
    out_type = out_type or x_type
    g.op(B.FULLY_CONNECTED, [g.t((1, 4), x_type, q=q(x_type)),
                             g.t((2, 4), w_type, np.ones(8), q(w_type)), -1],
         [g.t((1, 2), out_type, q=q(out_type))], options or FullyConnectedOptions())
    return g


def test_fully_connected_hybrid_shuffled_and_int16_refused():
    where = "FullyConnectedMapper::IsOpSupported"
    assert verdict(_fc(I8, I8)).supported
    assert refused(_fc(F32, I8)) == (where, "hybrid data type is not supported in "
                                            "fullyconnected.")
    assert refused(_fc(I8, I8, FullyConnectedOptions(weights_format=WF.SHUFFLED4x16INT8))) \
        == (where, "Shuffled weight is not supported")
    # an int16 output is the global check's; an int16 input with an 8-bit output is the mapper's
    assert refused(_fc(TT.INT16, TT.INT16))[0] == GLOBAL_CHECKS
    assert refused(_fc(TT.INT16, TT.INT16, out_type=I8)) == (where,
                                                             "Int16 input is not supported")


def test_dequantize_per_channel_to_float_refused():
    g = Graph()
    g.op(B.DEQUANTIZE, [g.t((2, 2), I8, q=([0.5, 0.25], [0, 0], 0))], [g.t((2, 2), F32)])
    assert refused(g)[1] == "SYMM PerChannel I8/U8 input / F32 output is not supported"
    g = Graph()
    g.op(B.DEQUANTIZE, [g.t((2, 2), I8, q=Q)], [g.t((2, 2), F32)])
    assert verdict(g).supported


def test_quantize_float_to_per_channel_refused():
    g = Graph()
    g.op(B.QUANTIZE, [g.t((2, 2), F32)], [g.t((2, 2), I8, q=([0.5, 0.25], [0, 0], 0))])
    assert refused(g)[1] == "F32 input / SYMM PerChannel I8/U8 output is not supported"
    g = Graph()
    g.op(B.QUANTIZE, [g.t((2, 2), U8, q=(0.5, 128))], [g.t((2, 2), I8, q=Q)])
    assert verdict(g).supported                                 # the tf2 PTQ requantize


def test_add_int16_to_int8_and_relu1_on_int32_refused():
    g = Graph()
    g.op(B.ADD, [g.t((4,), TT.INT16, q=Q), g.t((4,), TT.INT16, q=Q)], [g.t((4,), I8, q=Q)],
         AddOptions())
    assert refused(g) == ("AddMapper::IsOpSupported",
                          "ASYM I16 input0 / ASYM U8/I8 output is not supported")
    g = Graph()
    g.op(B.MUL, [g.t((4,), TT.INT32), g.t((4,), TT.INT32)], [g.t((4,), TT.INT32)],
         _mul_options(Act.RELU_N1_TO_1))
    assert refused(g)[1] == "I32 input/I32 output is not supported in Relu1."


def _mul_options(act):
    from nnsim.tflite.options import MulOptions
    return MulOptions(fused_activation_function=act)


def test_pow_int32_refused():
    g = Graph()
    g.op(B.POW, [g.t((4,), TT.INT32), g.t((4,), TT.INT32)], [g.t((4,), TT.INT32)])
    assert refused(g) == ("PowMapper::IsOpSupported",
                          "I32 input/I32 output is not supported in pow.")


def test_reshape_dynamic_shape_refused():
    g = Graph()
    g.op(B.RESHAPE, [g.t((1, 4), F32), g.t((1,), TT.INT32)], [g.t((4,), F32)])
    assert refused(g) == ("ReshapeMapper::IsOpSupported",
                          "Dynamic input shape is not supported in reshape.")
    g = Graph()
    g.op(B.RESHAPE, [g.t((1, 4), F32), g.t((1,), TT.INT32, data=[4])], [g.t((4,), F32)])
    assert verdict(g).supported


def _strided(const=True, **options):
    g = Graph()
    ins = [g.t((4, 4), F32)] + [g.t((2,), TT.INT32, data=v if const else None)
                                for v in ([0, 0], [2, 2], [1, 1])]
    g.op(B.STRIDED_SLICE, ins, [g.t((2, 2), F32)], StridedSliceOptions(**options))
    return g


def test_strided_slice_rules():
    assert verdict(_strided()).supported
    assert refused(_strided(const=False))[1] == \
        "begin_tensor, end_tensor and strides_tensor must be constant."
    assert refused(_strided(new_axis_mask=1))[1] == "new_axis_mask > 0 is not supported"
    assert refused(_strided(ellipsis_mask=1))[1] == "ellipsis_mask > 0 is not supported"


def test_resize_size_must_be_constant_and_8bit_input_quantized():
    g = Graph()
    g.op(B.RESIZE_BILINEAR, [g.t((1, 2, 2, 1), F32), g.t((2,), TT.INT32)],
         [g.t((1, 4, 4, 1), F32)])
    assert refused(g) == ("ResizeMapper::IsOpSupported", "shape tensor must be constant.")
    g = Graph()
    g.op(B.RESIZE_NEAREST_NEIGHBOR, [g.t((1, 2, 2, 1), U8), g.t((2,), TT.INT32, data=[4, 4])],
         [g.t((1, 4, 4, 1), U8)])
    assert refused(g)[1] == ("Int8 or uint8 input without quantization is not supported in "
                             "Resize")


def test_space_to_depth_int32_refused():
    g = Graph()
    g.op(B.SPACE_TO_DEPTH, [g.t((1, 2, 2, 1), TT.INT32)], [g.t((1, 1, 1, 4), TT.INT32)])
    assert refused(g) == ("Space2DepthMapper::IsOpSupported",
                          "Int32 input is not supported in Space2Depth")


def test_batch_matmul_rules():
    def bmm(a, b, out, **options):
        g = Graph()
        g.op(B.BATCH_MATMUL, [g.t((1, 2, 2), a), g.t((1, 2, 2), b)], [g.t((1, 2, 2), out)],
             BatchMatMulOptions(**options))
        return g
    assert verdict(bmm(F32, F32, F32)).supported
    assert refused(bmm(TT.INT32, TT.INT32, TT.INT32))[1] == \
        "I32 outputs type is not supported in BatchMatmul"
    assert refused(bmm(F32, I8, F32))[1].startswith("Input with one being float32")
    assert refused(bmm(F32, F32, F32, adj_x=True, adj_y=True))[1] == \
        "Does not support adj_x and adj_y being true at the same time"


def test_select_refuses_8bit_and_bool_data():
    g = Graph()
    g.op(B.SELECT_V2, [g.t((4,), TT.BOOL), g.t((4,), I8, q=Q), g.t((4,), I8, q=Q)],
         [g.t((4,), I8, q=Q)])
    assert refused(g) == ("Select::IsOpSupported", "Bool type input is not supported")


def test_slice_on_batch_of_a_4d_tensor_refused():
    g = Graph()
    g.op(B.SLICE, [g.t((2, 2, 2, 2), F32), g.t((4,), TT.INT32, data=[1, 0, 0, 0]),
                   g.t((4,), TT.INT32, data=[1, 2, 2, 2])], [g.t((1, 2, 2, 2), F32)])
    assert refused(g) == ("Slice::IsOpSupported", "vx-delegate doesn't support slice in batch.")


def test_reduce_needs_a_constant_axis():
    g = Graph()
    g.op(B.MEAN, [g.t((1, 4, 4, 2), F32), g.t((2,), TT.INT32)], [g.t((1, 2), F32)])
    assert refused(g) == ("ReduceOpMapper::IsOpSupported",
                          "const axis_tensor is only supported in reduce.")


def test_conv3d_dilation_refused():
    g = Graph()
    g.op(B.CONV_3D, [g.t((1, 4, 4, 4, 1), F32), g.t((1, 1, 1, 1, 1), F32, data=[1.0])],
         [g.t((1, 4, 4, 4, 1), F32)], Conv3DOptions(dilation_w_factor=2))
    assert refused(g) == ("Conv3dMapper::IsOpSupported", "conv3d could not support dilation > 1.")


def test_cast_uint16_refused():
    assert refused(_unary(B.CAST, (4,), F32, out_type=TT.UINT16)) == (
        "CastMapper::IsOpSupported", "Cast could not support UInt16 input/output.")


def test_batch_to_space_needs_4d_input():
    g = Graph()
    g.op(B.BATCH_TO_SPACE_ND, [g.t((4, 2, 2), F32), g.t((2,), TT.INT32, data=[2, 2]),
                               g.t((2, 2), TT.INT32, data=[0, 0, 0, 0])], [g.t((1, 4, 4), F32)])
    assert refused(g)[1] == "batch2space in vx-delagate only support 4D input"


def test_float_unidirectional_lstm_refused():
    g = Graph()
    ins = [g.t((1, 2, 4), F32)] + [-1] * 23
    g.op(B.UNIDIRECTIONAL_SEQUENCE_LSTM, ins, [g.t((1, 2, 4), F32)])
    assert refused(g)[1] == "UnidirectionalLstm input is only support UInt8 || Int8"


def test_squared_difference_mixed_types_refused_without_a_log_line():
    g = Graph()
    g.op(B.SQUARED_DIFFERENCE, [g.t((4,), F32), g.t((4,), TT.INT32)], [g.t((4,), F32)])
    v = verdict(g)
    assert not v.supported and v.level == 0
