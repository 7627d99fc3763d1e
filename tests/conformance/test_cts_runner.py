"""The conformance runner's own rules: tolerances, op attribution, failure detection."""
import numpy as np

from . import cts_runner as r


def model(out_type="TENSOR_FLOAT32", want=(1.0,), relaxed=False, name="m", ignored=False,
          ops=("CONV_2D",)):
    out = {"type": out_type, "dimensions": [len(want)], "scale": 0.0, "zero_point": 0,
           "data": list(want), "is_ignored": ignored, "lifetime": "SUBGRAPH_OUTPUT",
           "channel_quant": None}
    return {"name": name, "is_relaxed": relaxed, "expect_failure": False, "referenced": [],
            "main": {"operands": [out], "output_indexes": [0], "input_indexes": [],
                     "operations": [{"type": t, "inputs": [], "outputs": [0]} for t in ops]}}


def test_float32_tolerance_is_1e5_plus_5_ulp():
    m = model(want=(1.0,))
    assert r.compare(m, [np.array([1.0 + 1e-5], np.float32)]) is None
    assert r.compare(m, [np.array([1.0 + 2e-5], np.float32)]) is not None


def test_relaxed_tolerance():
    m = model(want=(1.0,), relaxed=True)
    assert r.compare(m, [np.array([1.009], np.float32)]) is None
    assert r.compare(m, [np.array([1.011], np.float32)]) is not None


def test_quant8_tolerance_and_mobilenet():
    assert r.compare(model("TENSOR_QUANT8_ASYMM", (10,)), [np.array([11], np.uint8)]) is None
    assert r.compare(model("TENSOR_QUANT8_ASYMM", (10,)), [np.array([12], np.uint8)]) is not None
    assert r.compare(model("TENSOR_QUANT8_ASYMM", (10,), name="mobilenet_x"),
                     [np.array([13], np.uint8)]) is None


def test_nan_never_passes_and_ignored_outputs_are_skipped():
    assert "NaN" in r.compare(model(), [np.array([np.nan], np.float32)])
    assert r.compare(model(ignored=True), [np.array([np.nan], np.float32)]) is None


def test_op_attribution_and_missing_ops():
    m = model(ops=("ADD", "CONV_2D"), name="conv_all_inputs_as_internal")
    assert r.ops_under_test(m) == ("CONV_2D",)
    assert r.missing_ops(m) == ()
    assert r.missing_ops(model(ops=("OEM_OPERATION", "ADD"))) == ("OEM_OPERATION",)
    assert r.run_model("x", model(ops=("OEM_OPERATION",))).status == r.NOT_IMPLEMENTED


def multinomial_model(probabilities, samples, tolerance=0.025):
    logits = {"type": "TENSOR_FLOAT32", "dimensions": [1, len(probabilities)], "scale": 0.0,
              "zero_point": 0, "data": list(np.log(probabilities)), "is_ignored": False,
              "lifetime": "SUBGRAPH_INPUT", "channel_quant": None}
    m = model("TENSOR_INT32", (0,) * samples, ignored=True, ops=("RANDOM_MULTINOMIAL",))
    m["main"]["operands"][0]["dimensions"] = [1, samples]
    m["main"]["operands"].append(logits)
    m["main"]["input_indexes"] = [1]
    m["expected_multinomial_distribution_tolerance"] = tolerance
    return m


def test_multinomial_is_judged_by_distribution_although_its_output_is_ignored():
    m = multinomial_model([0.1, 0.2, 0.3, 0.4], 100)
    draws = np.repeat(np.arange(4, dtype=np.int32), [10, 20, 30, 40]).reshape(1, 100)
    assert r.compare(m, [draws]) is None
    near = np.repeat(np.arange(4, dtype=np.int32), [12, 18, 32, 38]).reshape(1, 100)
    assert r.compare(m, [near]) is None                      # every class within 0.025
    off = np.repeat(np.arange(4, dtype=np.int32), [10, 20, 27, 43]).reshape(1, 100)
    assert "2 classes drawn off" in r.compare(m, [off])      # 0.03 off on two classes
    assert "out of [0, 4)" in r.compare(m, [np.full((1, 100), 4, np.int32)])
    assert r.compare(multinomial_model([0.5, 0.5], 10, tolerance=0.0),
                     [np.zeros((1, 10), np.int32)]) is None   # no tolerance: ignored output


def _operand(type_, dims, lifetime, data=None):
    return {"type": type_, "dimensions": list(dims), "scale": 0.0, "zero_point": 0,
            "data": data, "is_ignored": False, "lifetime": lifetime, "channel_quant": None}


def _branch(op):
    return {"operands": [_operand("TENSOR_FLOAT32", [2], "SUBGRAPH_INPUT"),
                         _operand("TENSOR_FLOAT32", [2], "SUBGRAPH_INPUT"),
                         _operand("INT32", [], "CONSTANT_COPY", [0]),
                         _operand("TENSOR_FLOAT32", [2], "SUBGRAPH_OUTPUT")],
            "operations": [{"type": op, "inputs": [0, 1, 2], "outputs": [3]}],
            "input_indexes": [0, 1], "output_indexes": [3]}


def test_referenced_subgraphs_are_built():
    """An IF over two referenced subgraphs (SUBGRAPH operand data = referenced index), the
    expected output computed by hand: cond false -> else (MUL): [2*4, 3*5]."""
    main = {"operands": [_operand("TENSOR_BOOL8", [1], "SUBGRAPH_INPUT", [False]),
                         _operand("MODEL", [], "SUBGRAPH", [0]),
                         _operand("MODEL", [], "SUBGRAPH", [1]),
                         _operand("TENSOR_FLOAT32", [2], "SUBGRAPH_INPUT", [2.0, 3.0]),
                         _operand("TENSOR_FLOAT32", [2], "SUBGRAPH_INPUT", [4.0, 5.0]),
                         _operand("TENSOR_FLOAT32", [2], "SUBGRAPH_OUTPUT", [8.0, 15.0])],
            "operations": [{"type": "IF", "inputs": [0, 1, 2, 3, 4], "outputs": [5]}],
            "input_indexes": [0, 3, 4], "output_indexes": [5]}
    m = {"name": "if_hand", "is_relaxed": False, "expect_failure": False, "main": main,
         "referenced": [_branch("ADD"), _branch("MUL")]}
    assert r.ops_under_test(m) == ("ADD", "IF", "MUL")
    result = r.run_model("hand/if", m)
    assert result.status == r.PASS, result.message
    main["operands"][5]["data"] = [6.0, 8.0]   # the then branch's values: must now fail
    assert r.run_model("hand/if", m).status == r.FAIL
