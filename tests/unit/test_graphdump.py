"""GraphDump golden tests; the expected text is written from nnapi-runtime.md section 4."""
from __future__ import annotations

import numpy as np

import nnsim
from nnsim import nnapi as nn
from nnsim.runtime.graphdump import graph_dump_lines
from nnsim.runtime.model import ModelBuilder
from nnsim.common.operand import OperandTypeSpec
from nnsim.types import OperandType, OperationCode

T = OperandType

CONV_QUANT8_DUMP = r"""// ModelBuilder::finish
digraph {
    d0 [style=filled fillcolor=black fontcolor=white label="0 = input[0]\nTQ8A(1x3x3x1)"]
    d1 [label="1: COPY\nTQ8A(1x2x2x1)"]
    d2 [label="2: COPY\nTI32(1)"]
    d3 [label="3: COPY\nI32 = 0"]
    d4 [label="4: COPY\nI32 = 1"]
    d5 [label="5: COPY\nI32 = 0"]
    d6 [style=filled fillcolor=black fontcolor=white label="6 = output[0]\nTQ8A(1x2x2x1)"]
    n0 [shape=box ordering=in label="0: CONV_2D"]
    d0 -> n0 [label=0]
    d1 -> n0 [label=1]
    d2 -> n0 [label=2]
    d3 -> n0 [label=3]
    d3 -> n0 [label=4]
    d3 -> n0 [label=5]
    d3 -> n0 [label=6]
    d4 -> n0 [label=7]
    d4 -> n0 [label=8]
    d5 -> n0 [label=9]
    n0 -> d6
}""".split("\n")


def build_conv_quant8():
    """V1_0/conv_quant8 as the CTS harness builds it (nnapi-runtime.md 7.4 a)."""
    code, m = nn.ANeuralNetworksModel_create()
    Q = nn.ANEURALNETWORKS_TENSOR_QUANT8_ASYMM
    specs = [nn.ANeuralNetworksOperandType(Q, (1, 3, 3, 1), 0.5, 0),
             nn.ANeuralNetworksOperandType(Q, (1, 2, 2, 1), 0.5, 0),
             nn.ANeuralNetworksOperandType(nn.ANEURALNETWORKS_TENSOR_INT32, (1,), 0.25, 0),
             nn.ANeuralNetworksOperandType(nn.ANEURALNETWORKS_INT32),
             nn.ANeuralNetworksOperandType(nn.ANEURALNETWORKS_INT32),
             nn.ANeuralNetworksOperandType(nn.ANEURALNETWORKS_INT32),
             nn.ANeuralNetworksOperandType(Q, (1, 2, 2, 1), 1.0, 0)]
    for s in specs:
        assert nn.ANeuralNetworksModel_addOperand(m, s) == nn.ANEURALNETWORKS_NO_ERROR
    values = {1: np.array([2, 2, 2, 2], np.uint8), 2: np.array([4], np.int32),
              3: np.array(0, np.int32), 4: np.array(1, np.int32), 5: np.array(0, np.int32)}
    for i, v in values.items():
        assert nn.ANeuralNetworksModel_setOperandValue(m, i, v) == nn.ANEURALNETWORKS_NO_ERROR
    assert nn.ANeuralNetworksModel_addOperation(
        m, nn.ANEURALNETWORKS_CONV_2D, [0, 1, 2, 3, 3, 3, 3, 4, 4, 5], [6]) == 0
    assert nn.ANeuralNetworksModel_identifyInputsAndOutputs(m, [0], [6]) == 0
    return m


def test_conv_quant8_dump_matches_reference(logcat):
    nnsim.setprop("debug.nn.vlog", "model")
    m = build_conv_quant8()
    assert nn.ANeuralNetworksModel_finish(m) == nn.ANEURALNETWORKS_NO_ERROR
    assert logcat.lines("GraphDump") == CONV_QUANT8_DUMP


def test_no_dump_without_vlog_model(logcat):
    nnsim.setprop("debug.nn.vlog", "compilation")
    m = build_conv_quant8()
    assert nn.ANeuralNetworksModel_finish(m) == 0
    assert logcat.lines("GraphDump") == []


def test_dump_rules_ref_float_multi_output_and_full_type_names():
    m = ModelBuilder()
    a = m.add_operand(OperandTypeSpec(T.TENSOR_FLOAT32, (2, 40)))       # 320 bytes -> REF
    m.set_operand_value(a, np.ones((2, 40), np.float32))
    b = m.add_operand(OperandTypeSpec(T.TENSOR_FLOAT32, (2, 40)))
    f = m.add_operand(OperandTypeSpec(T.FLOAT32))
    m.set_operand_value(f, np.array(1e-5, np.float32))
    s = m.add_operand(OperandTypeSpec(T.TENSOR_QUANT8_ASYMM_SIGNED, (2, 40), 0.5, -3))
    lines = graph_dump_lines("t", m)
    assert lines[2] == '    d0 [label="0: REF\\nTF32(2x40)"]'
    assert lines[3] == '    d1 [label="1\\nTF32(2x40)"]'
    assert lines[4] == '    d2 [label="2: COPY\\nF32 = 1e-05"]'
    assert lines[5] == '    d3 [label="3\\nTENSOR_QUANT8_ASYMM_SIGNED(2x40)"]'
    # an operation with 2 inputs and 1 output gets ordering=in and labelled input edges only
    fuse = m.add_operand(OperandTypeSpec(T.INT32))
    m.set_operand_value(fuse, np.array(0, np.int32))
    out = m.add_operand(OperandTypeSpec(T.TENSOR_FLOAT32, (2, 40)))
    m.add_operation(OperationCode.ADD, [a, b, fuse], [out])
    lines = graph_dump_lines("t", m)
    assert '    n0 [shape=box ordering=in label="0: ADD"]' in lines
    assert "    d1 -> n0 [label=1]" in lines
    assert "    n0 -> d5" in lines
