"""IF/WHILE model validation through nnsim.nnapi: result codes as upstream (ModelBuilder.cpp
setOperandValueFromModel, common/types/src/Validation.cpp validateIfOperation /
validateWhileOperation, nnapi-runtime.md 1.5), feature level 4, GraphDump of a model with
referenced subgraphs (4.2)."""
from __future__ import annotations

from nnsim import nnapi as nn
from nnsim.runtime.graphdump import graph_dump_lines
from tests.partition import control_flow_models as cf

BAD_DATA, BAD_STATE = nn.ANEURALNETWORKS_BAD_DATA, nn.ANEURALNETWORKS_BAD_STATE
IF, WHILE = nn.ANEURALNETWORKS_IF, nn.ANEURALNETWORKS_WHILE


def if_outer(cond_type=cf.BOOL1, then_model=None, out_type=cf.F2):
    """(builder, inputs of an IF over x, y) with the given condition type and then model."""
    b = cf.Builder()
    c, x, y = b.operand(cond_type), b.operand(cf.F2), b.operand(cf.F2)
    then_ref = b.ref(then_model or cf.branch_model(nn.ANEURALNETWORKS_ADD))
    else_ref = b.ref(cf.branch_model(nn.ANEURALNETWORKS_MUL))
    z = b.operand(out_type)
    return b, [c, then_ref, else_ref, x, y], [z]


def add_if(b, ins, outs):
    return nn.ANeuralNetworksModel_addOperation(b.m, IF, ins, outs)


def test_valid_if_is_feature_level_4():
    model = cf.if_model()
    assert model.feature_level == 30 and model.operations[0].min_feature_level == 30


def test_if_condition_must_be_bool8_singleton():
    for t in (cf.OT(nn.ANEURALNETWORKS_TENSOR_BOOL8, (2,)), cf.I1,
              cf.OT(nn.ANEURALNETWORKS_BOOL)):
        assert add_if(*if_outer(cond_type=t)) == BAD_DATA


def test_if_branch_must_match_outer_operands():
    one_input = cf.Builder()
    x = one_input.operand(cf.F2)
    single = one_input.finish([x], [one_input.binary(nn.ANEURALNETWORKS_ADD, x, x, cf.F2)])
    assert add_if(*if_outer(then_model=single)) == BAD_DATA             # input count
    assert add_if(*if_outer(out_type=cf.OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (3,)))) == BAD_DATA
    assert add_if(*if_outer(then_model=cf.branch_model(nn.ANEURALNETWORKS_ADD, cf.I1))) == \
        BAD_DATA                                                        # type
    # unknown dimensions are compatible with known ones
    b, ins, outs = if_outer(out_type=cf.OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (0,)))
    assert add_if(b, ins, outs) == cf.OK


def test_if_needs_a_model_reference():
    b = cf.Builder()
    c, x, y = b.operand(cf.BOOL1), b.operand(cf.F2), b.operand(cf.F2)
    unset = b.operand(cf.MODEL)                    # a MODEL operand without a value
    else_ref = b.ref(cf.branch_model(nn.ANEURALNETWORKS_MUL))
    z = b.operand(cf.F2)
    assert add_if(b, [c, unset, else_ref, x, y], [z]) == BAD_DATA
    assert add_if(b, [c, x, else_ref, x, y], [z]) == BAD_DATA   # a tensor in the model slot


def while_ops(cond_model, body_model, n_outputs=1):
    b = cf.Builder()
    acc, i, n = b.operand(cf.I1), b.operand(cf.I1), b.operand(cf.I1)
    outs = [b.operand(cf.I1) for _ in range(n_outputs)]
    return nn.ANeuralNetworksModel_addOperation(
        b.m, WHILE, [b.ref(cond_model), b.ref(body_model), acc, i, n], outs)


def test_while_validation():
    assert while_ops(cf.factorial_cond(), cf.factorial_body()) == cf.OK
    assert while_ops(cf.factorial_cond(), cf.factorial_body(), n_outputs=2) == cf.OK
    # body has 2 outputs: a WHILE with 3 outputs has more than the body writes
    assert while_ops(cf.factorial_cond(), cf.factorial_body(), n_outputs=3) == BAD_DATA
    # condition model output must be TENSOR_BOOL8 [1]: use the body (2 int32 outputs)
    assert while_ops(cf.factorial_body(), cf.factorial_body()) == BAD_DATA
    c = cf.Builder()
    acc, i, n = c.operand(cf.I1), c.operand(cf.I1), c.operand(cf.I1)
    not_bool = c.finish([acc, i, n], [c.binary(nn.ANEURALNETWORKS_ADD, i, n, cf.I1)])
    assert while_ops(not_bool, cf.factorial_body()) == BAD_DATA


def test_set_operand_value_from_model_codes():
    outer = cf.Builder()
    slot = outer.operand(cf.MODEL)
    unfinished = cf.Builder()
    x = unfinished.operand(cf.F2)
    set_ = nn.ANeuralNetworksModel_setOperandValueFromModel
    assert set_(outer.m, slot, unfinished.m) == BAD_STATE
    # a model whose finish failed (operand 1 is never written) is invalid: BAD_STATE
    y = unfinished.operand(cf.F2)
    nn.ANeuralNetworksModel_identifyInputsAndOutputs(unfinished.m, [x], [y])
    assert nn.ANeuralNetworksModel_finish(unfinished.m) == BAD_DATA
    assert set_(outer.m, slot, unfinished.m) == BAD_STATE
    good = cf.branch_model(nn.ANEURALNETWORKS_ADD)
    assert set_(outer.m, 7, good) == BAD_DATA
    assert set_(outer.m, slot, good) == cf.OK
    # modifying a finished model
    model = cf.if_model()
    assert set_(model, 3, good) == BAD_STATE


def test_finish_rejects_model_type_lifetime_mismatch():
    b = cf.Builder()
    x = b.operand(cf.F2)
    tensor_with_model = b.operand(cf.F2)
    assert nn.ANeuralNetworksModel_setOperandValueFromModel(
        b.m, tensor_with_model, cf.branch_model(nn.ANEURALNETWORKS_ADD)) == cf.OK
    z = b.binary(nn.ANEURALNETWORKS_ADD, x, x, cf.F2)
    nn.ANeuralNetworksModel_identifyInputsAndOutputs(b.m, [x], [z])
    assert nn.ANeuralNetworksModel_finish(b.m) == BAD_DATA


def test_graph_dump_notes_every_referenced_subgraph():
    lines = graph_dump_lines("ModelBuilder::finish", cf.if_model())
    assert lines[:4] == ["// ModelBuilder::finish", "digraph {",
                         "// NOTE: 2 subgraphs omitted",
                         "// TODO(b/147661714): Add subgraph support to GraphDump"]
    assert '    d3 [label="3: SUBGRAPH\\nSUBGRAPH"]' in lines
    # WHILE(cond, body) whose body holds IF(then, else): four subgraphs, depth first
    nested = cf.nested_model()
    assert "// NOTE: 4 subgraphs omitted" in graph_dump_lines("x", nested)
    cond, body = nested.referenced_models()
    assert nested.referenced_subgraphs() == [cond, body, *body.referenced_models()]
