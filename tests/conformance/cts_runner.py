"""Run the NNAPI conformance vectors (../shared/cts, format in its README) through nnsim.nnapi.

Every model is built with the C-shaped API exactly as the CTS harness builds it, compiled for
the nnapi-reference device alone, executed once, and compared with the AOSP TestHarness
tolerances (nnapi-runtime.md 7.3). Used by test_conformance.py and by ``report.py``.
"""
from __future__ import annotations

import gzip
import json
import logging
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nnsim import nnapi as nn
from nnsim.ops.registry import is_registered
from nnsim.types import NUMPY_DTYPE, OperandType, OperationCode

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
CTS_DIR = SHARED / "cts"
DEVICE_NAME = "nnapi-reference"
PASS, FAIL, NOT_IMPLEMENTED = "pass", "fail", "not-implemented"
_CONSTANT = ("CONSTANT_COPY", "CONSTANT_REFERENCE")
_QUANT8 = {"TENSOR_QUANT8_ASYMM", "TENSOR_QUANT8_ASYMM_SIGNED", "TENSOR_QUANT8_SYMM",
           "TENSOR_QUANT8_SYMM_PER_CHANNEL"}


@dataclass
class ModelResult:
    spec: str            # "V1_0/conv_quant8"
    name: str            # model name, e.g. "conv_quant8_all_inputs_as_internal"
    ops: tuple           # operations under test (helper ADDs of *_as_internal variants dropped)
    status: str
    message: str = ""
    missing: tuple = field(default_factory=tuple)


def spec_files() -> list[Path]:
    return sorted(CTS_DIR.glob("**/*.json.gz")) if CTS_DIR.is_dir() else []


def spec_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name[:-len('.json.gz')]}"


def load(path: Path) -> dict:
    with gzip.open(path, "rt") as f:
        return json.load(f)


def _subgraphs(model: dict) -> list[dict]:
    return [model["main"], *model.get("referenced", [])]


def missing_ops(model: dict) -> tuple:
    names = {op["type"] for g in _subgraphs(model) for op in g["operations"]}
    return tuple(sorted(n for n in names if not (hasattr(OperationCode, n)
                                                 and is_registered(OperationCode[n]))))


def ops_under_test(model: dict) -> tuple:
    names = {op["type"] for g in _subgraphs(model) for op in g["operations"]}
    if "all_inputs_as_internal" in model["name"] and len(names) > 1:
        names.discard("ADD")  # the variant feeds every input through ADD(x, 0)
    return tuple(sorted(names))


class _Errors(logging.Handler):
    """Keeps the last error lines the runtime logged (the reason behind a result code)."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines = (self.lines + [record.getMessage()])[-3:]


_ERRORS = _Errors()
logging.getLogger("nnsim.logcat").addHandler(_ERRORS)
_DEVICE = []


# False: compile for nnapi-reference alone (the default); True: for every device the
# DeviceManager lists (a board's NPUs, nnapi-reference as fallback) -- report.py --board.
ALL_DEVICES = False


def reference_device():
    if not _DEVICE:
        code, n = nn.ANeuralNetworks_getDeviceCount()
        assert code == nn.ANEURALNETWORKS_NO_ERROR, code
        for i in range(n):
            _, dev = nn.ANeuralNetworks_getDevice(i)
            if nn.ANeuralNetworksDevice_getName(dev)[1] == DEVICE_NAME:
                _DEVICE.append(dev)
                break
        else:
            raise RuntimeError(f"no device named {DEVICE_NAME}")
    return _DEVICE[0]


class _CallFailed(Exception):
    pass


def _check(code, what: str):
    if code != nn.ANEURALNETWORKS_NO_ERROR:
        reason = "; ".join(_ERRORS.lines) or "no log line"
        raise _CallFailed(f"{what} returned {code} ({reason})")


def _dtype(type_name: str) -> np.dtype:
    return np.dtype(NUMPY_DTYPE[OperandType[type_name]])


def _array(operand: dict) -> np.ndarray:
    if operand["data"] is None:   # a zero-sized tensor's value: no elements
        return np.zeros(operand["dimensions"], _dtype(operand["type"]))
    data = np.asarray(operand["data"], dtype=_dtype(operand["type"]))
    dims = operand["dimensions"]
    return data.reshape(dims) if dims and int(np.prod(dims)) == data.size else data


def _build(model: dict, g: dict | None = None, built: dict | None = None):
    """Build subgraph ``g`` (the main one by default). A SUBGRAPH operand's ``data`` holds the
    index of a ``referenced`` subgraph, built (and finished) once on first use, as the AOSP
    harness's createModelFromSubgraph does."""
    g = model["main"] if g is None else g
    built = {} if built is None else built
    code, m = nn.ANeuralNetworksModel_create()
    _check(code, "ANeuralNetworksModel_create")
    for idx, o in enumerate(g["operands"]):
        otype = nn.ANeuralNetworksOperandType(getattr(nn, "ANEURALNETWORKS_" + o["type"]),
                                              o["dimensions"], o["scale"], o["zero_point"])
        _check(nn.ANeuralNetworksModel_addOperand(m, otype), f"addOperand {idx}")
        if o["channel_quant"]:
            cq = nn.ANeuralNetworksSymmPerChannelQuantParams(o["channel_quant"]["channel_dim"],
                                                             o["channel_quant"]["scales"])
            _check(nn.ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(m, idx, cq),
                   f"setOperandSymmPerChannelQuantParams {idx}")
        if o["lifetime"] in _CONSTANT:
            _check(nn.ANeuralNetworksModel_setOperandValue(m, idx, _array(o)),
                   f"setOperandValue {idx}")
        elif o["lifetime"] == "NO_VALUE":
            _check(nn.ANeuralNetworksModel_setOperandValue(m, idx, None), f"omit operand {idx}")
        elif o["lifetime"] == "SUBGRAPH":
            ref = int(np.asarray(o["data"]).reshape(-1)[0])
            if ref not in built:
                built[ref] = _build(model, model["referenced"][ref], built)
            _check(nn.ANeuralNetworksModel_setOperandValueFromModel(m, idx, built[ref]),
                   f"setOperandValueFromModel {idx}")
    for k, op in enumerate(g["operations"]):
        _check(nn.ANeuralNetworksModel_addOperation(m, getattr(nn, "ANEURALNETWORKS_" +
                                                               op["type"]),
                                                    op["inputs"], op["outputs"]),
               f"addOperation {k} ({op['type']})")
    _check(nn.ANeuralNetworksModel_identifyInputsAndOutputs(m, g["input_indexes"],
                                                            g["output_indexes"]),
           "identifyInputsAndOutputs")
    if model["is_relaxed"] and g is model["main"]:  # the harness relaxes the main model only
        _check(nn.ANeuralNetworksModel_relaxComputationFloat32toFloat16(m, True),
               "relaxComputationFloat32toFloat16")
    _check(nn.ANeuralNetworksModel_finish(m), "ANeuralNetworksModel_finish")
    return m


def _execute(model: dict, m) -> list[np.ndarray]:
    """Compile ``m`` and execute it twice: the second execution runs the plans the prepared
    model kept from the first (packed filters, multipliers, buffers), and must give exactly
    the same outputs (except for RANDOM_MULTINOMIAL, which draws new samples)."""
    if ALL_DEVICES:   # every device of the board: the runtime partitions the model
        code, comp = nn.ANeuralNetworksCompilation_create(m)
    else:
        code, comp = nn.ANeuralNetworksCompilation_createForDevices(m, [reference_device()])
    _check(code, "ANeuralNetworksCompilation_create")
    _check(nn.ANeuralNetworksCompilation_finish(comp), "ANeuralNetworksCompilation_finish")
    first = _execute_once(model, comp)
    if model.get("expected_multinomial_distribution_tolerance"):
        return first
    second = _execute_once(model, comp)
    for i, (a, b) in enumerate(zip(first, second)):
        if not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
            raise _CallFailed(f"output {i} of the second execution differs from the first")
    return second


def _execute_once(model: dict, comp) -> list[np.ndarray]:
    g = model["main"]
    code, ex = nn.ANeuralNetworksExecution_create(comp)
    _check(code, "ANeuralNetworksExecution_create")
    for i, idx in enumerate(g["input_indexes"]):
        o = g["operands"][idx]
        buf = None if o["data"] is None else _array(o)
        _check(nn.ANeuralNetworksExecution_setInput(ex, i, None, buf), f"setInput {i}")
    outputs = []
    for i, idx in enumerate(g["output_indexes"]):
        o = g["operands"][idx]
        want = _array(o)
        outputs.append(np.zeros(want.shape, dtype=want.dtype))
        _check(nn.ANeuralNetworksExecution_setOutput(ex, i, None, outputs[-1]), f"setOutput {i}")
    _check(nn.ANeuralNetworksExecution_compute(ex), "ANeuralNetworksExecution_compute")
    return outputs


def _tolerance(model: dict, type_name: str) -> tuple[float, float]:
    """(atol, rtol) of AOSP TestHarness for one output operand type."""
    if type_name in ("TENSOR_FLOAT32", "TENSOR_FLOAT16"):
        has_f16 = any(o["type"] in ("TENSOR_FLOAT16", "FLOAT16")
                      for g in _subgraphs(model) for o in g["operands"])
        if model["is_relaxed"] or has_f16:
            return 5 * 2.0 ** -10, 5 * 2.0 ** -10
        return 1e-5, 5 * 2.0 ** -23
    if type_name in _QUANT8:
        return (3.0 if "mobilenet" in model["name"] else 1.0), 0.0
    if type_name == "TENSOR_BOOL8":
        return 0.0, 0.0
    return 1.0, 0.0  # TENSOR_INT32, TENSOR_QUANT16_*


def compare_multinomial(model: dict, outputs: list[np.ndarray], tolerance: float) -> str | None:
    """AOSP TestHarness ``expectMultinomialDistributionWithinTolerance`` for the single
    RANDOM_MULTINOMIAL models: every class index is in range and, per batch, the fraction of
    the samples that drew each class is within ``tolerance`` of its softmax probability.

    AOSP pools the counts of all batches and reads the logits of batch ``b`` at
    ``batch_size * b``; for the conformance models (one batch) that is this per-batch check.
    """
    g = model["main"]
    logits = _array(g["operands"][g["input_indexes"][0]]).astype(np.float64)
    batch, classes = logits.shape
    samples = np.asarray(outputs[0]).reshape(batch, -1).astype(np.int64)
    if samples.size and (samples.min() < 0 or samples.max() >= classes):
        return f"output 0: class index out of [0, {classes}): {samples.min()}..{samples.max()}"
    for b in range(batch):
        want = np.exp(logits[b]) / np.exp(logits[b]).sum()
        freq = np.bincount(samples[b], minlength=classes) / max(samples.shape[1], 1)
        bad = np.abs(freq - want) > tolerance
        if bad.any():
            k = int(np.argmax(bad))
            return (f"output 0, batch {b}: {int(bad.sum())} classes drawn off their probability "
                    f"by more than {tolerance:g}; first class {k}: drawn {freq[k]:g}, "
                    f"probability {want[k]:g}")
    return None


def compare(model: dict, outputs: list[np.ndarray]) -> str | None:
    """None when every non-ignored output is within tolerance, else a description. A model
    with a multinomial distribution tolerance is judged by :func:`compare_multinomial` only
    (its output is marked ignored), as AOSP's TestHarness does."""
    tolerance = model.get("expected_multinomial_distribution_tolerance") or 0.0
    if tolerance > 0:
        return compare_multinomial(model, outputs, tolerance)
    g = model["main"]
    for i, (idx, got) in enumerate(zip(g["output_indexes"], outputs)):
        o = g["operands"][idx]
        if o["is_ignored"]:
            continue
        want = _array(o).astype(np.float64).ravel()
        got64 = got.astype(np.float64).ravel()
        if not np.all(np.isfinite(got64)):
            return f"output {i} has NaN or Inf"
        if got64.shape != want.shape:
            return f"output {i} has {got64.size} values, expected {want.size}"
        atol, rtol = _tolerance(model, o["type"])
        bad = np.abs(got64 - want) > atol + rtol * np.abs(want)
        if bad.any():
            k = int(np.argmax(bad))
            return (f"output {i}: {int(bad.sum())}/{bad.size} values out of tolerance "
                    f"(atol {atol:g}, rtol {rtol:g}); first at {k}: got {got64[k]:g}, "
                    f"want {want[k]:g}")
    return None


def run_model(spec: str, model: dict) -> ModelResult:
    result = ModelResult(spec, model["name"], ops_under_test(model), PASS)
    missing = missing_ops(model)
    if missing:
        result.status, result.missing = NOT_IMPLEMENTED, missing
        result.message = "not implemented: " + ", ".join(missing)
        return result
    _ERRORS.lines = []
    try:
        outputs = _execute(model, _build(model))
    except _CallFailed as e:
        if not model["expect_failure"]:
            result.status, result.message = FAIL, str(e)
        return result
    if model["expect_failure"]:
        result.status, result.message = FAIL, "expected a failure, but the model ran"
        return result
    problem = compare(model, outputs)
    if problem:
        result.status, result.message = FAIL, problem
    return result


def run_spec(path: Path) -> list[ModelResult]:
    return [run_model(spec_id(path), model) for model in load(path)["models"]]


def summary_table(results: list[ModelResult]) -> str:
    """Per operation: models passing, failing, and not implemented (each model counts once
    under every operation it tests)."""
    per_op: dict[str, Counter] = defaultdict(Counter)
    for r in results:
        for op in r.ops:
            per_op[op][r.status] += 1
    lines = [f"{'operation':<30} {'pass':>6} {'fail':>6} {'not-impl':>9}"]
    for op in sorted(per_op):
        c = per_op[op]
        lines.append(f"{op:<30} {c[PASS]:>6} {c[FAIL]:>6} {c[NOT_IMPLEMENTED]:>9}")
    total = Counter(r.status for r in results)
    lines.append(f"{'models':<30} {total[PASS]:>6} {total[FAIL]:>6} {total[NOT_IMPLEMENTED]:>9}")
    return "\n".join(lines)
