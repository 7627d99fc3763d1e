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
    assert r.missing_ops(model(ops=("LSTM", "ADD"))) == ("LSTM",)
    assert r.run_model("x", model(ops=("LSTM",))).status == r.NOT_IMPLEMENTED
