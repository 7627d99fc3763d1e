"""Run the kernels directly on NNAPI conformance vectors (../shared/cts, V1_0 and V1_1).

A small evaluator maps each NNAPI operation of a model onto the kernel library (no runtime, no
validation) and checks the outputs with the AOSP TestHarness tolerances. Models that use an
operation outside this kernel set, or that are expected to fail, are skipped.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from nnsim.kernels import (
    activations,
    conv,
    depthwise,
    elementwise,
    fully_connected,
    pad,
    pooling,
    quantize,
    reduce,
    reshape,
    softmax,
)
from nnsim.kernels._jit import JIT_ENABLED

CTS_DIR = Path(__file__).parents[2].parent / "shared" / "cts"

DTYPES = {
    "TENSOR_FLOAT32": np.float32, "TENSOR_FLOAT16": np.float16, "TENSOR_INT32": np.int32,
    "TENSOR_QUANT8_ASYMM": np.uint8, "TENSOR_QUANT8_ASYMM_SIGNED": np.int8,
    "TENSOR_QUANT8_SYMM_PER_CHANNEL": np.int8, "TENSOR_QUANT8_SYMM": np.int8,
    "INT32": np.int32, "FLOAT32": np.float32, "FLOAT16": np.float16, "BOOL": np.bool_,
}
SPEC_PREFIXES = ("add", "avg_pool", "concat", "conv", "depthwise", "dequantize", "fully_connected",
                 "logistic", "max_pool", "mean", "mobilenet", "mul", "pad", "relu", "reshape",
                 "softmax", "sub")


class Unsupported(Exception):
    """The model uses something outside this kernel set."""


def _padding(in_size, stride, kernel, code):
    """NNAPI implicit padding (1 = SAME, 2 = VALID) -> (head, tail)."""
    if code != 1:
        return 0, 0
    out = (in_size + stride - 1) // stride
    needed = (out - 1) * stride + kernel
    total = max(0, needed - in_size)
    return total // 2, total - total // 2


def _window_args(x, args, explicit, kh, kw):
    """Explicit (l, r, t, b, sw, sh, ...) or implicit (code, sw, sh, ...) window arguments;
    returns the geometry keywords and the remaining arguments."""
    if explicit:
        pl, pr, pt, pb, sw, sh = args[:6]
        rest = args[6:]
    else:
        code, sw, sh = args[:3]
        pt, pb = _padding(x.shape[1], sh, kh, code)
        pl, pr = _padding(x.shape[2], sw, kw, code)
        rest = args[3:]
    return dict(pad_left=pl, pad_right=pr, pad_top=pt, pad_bottom=pb, stride_w=sw,
                stride_h=sh), rest


def _run_op(op, ins, specs, out_spec):
    """Evaluate one NNAPI operation with the kernels."""
    kind = op["type"]
    x, xs = ins[0], specs[0]
    q_in = dict(in_scale=xs["scale"], in_zp=xs["zero_point"])
    q_out = dict(out_scale=out_spec["scale"], out_zp=out_spec["zero_point"])
    quantized = x.dtype in (np.uint8, np.int8)
    scalars = [int(v) if np.ndim(v) == 0 and np.asarray(v).dtype.kind == "i" else v
               for v in ins]
    if kind in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        w, ws = ins[1], specs[1]
        counts = (10, 7) if kind == "CONV_2D" else (11, 8)
        if len(ins) not in counts:  # NCHW / dilation forms arrived in V1_2
            raise Unsupported(f"{kind} with {len(ins)} inputs")
        geometry, rest = _window_args(x, scalars[3:], len(ins) == counts[0], w.shape[1],
                                      w.shape[2])
        extra = {}
        if quantized:
            scales = ws["channel_quant"]["scales"] if ws["channel_quant"] else [ws["scale"]]
            extra = dict(q_in, **q_out, w_scales=scales, w_zp=ws["zero_point"])
        if kind == "CONV_2D":
            (fuse,) = rest
            return conv.conv_2d(x, w, ins[2], **geometry, fuse=fuse, **extra)
        mult, fuse = rest
        return depthwise.depthwise_conv_2d(x, w, ins[2], depth_multiplier=mult, **geometry,
                                           fuse=fuse, **extra)
    if kind in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        args = scalars[1:]
        explicit = len(ins) == 10
        kw, kh = (args[6], args[7]) if explicit else (args[3], args[4])
        geometry, rest = _window_args(x, args, explicit, kh, kw)
        fn = pooling.average_pool_2d if kind == "AVERAGE_POOL_2D" else pooling.max_pool_2d
        return fn(x, filter_w=rest[0], filter_h=rest[1], fuse=rest[2], **geometry,
                  **(q_out if quantized else {}))
    if kind == "FULLY_CONNECTED":
        w, ws = ins[1], specs[1]
        extra = dict(q_in, **q_out, w_scales=[ws["scale"]], w_zp=ws["zero_point"]) \
            if quantized else {}
        return fully_connected.fully_connected(x.reshape(-1, w.shape[1]), w, ins[2],
                                               fuse=scalars[3], **extra)
    if kind in ("ADD", "SUB", "MUL"):
        fn = {"ADD": elementwise.add, "SUB": elementwise.sub, "MUL": elementwise.mul}[kind]
        extra = dict(in1_scale=xs["scale"], in1_zp=xs["zero_point"], in2_scale=specs[1]["scale"],
                     in2_zp=specs[1]["zero_point"], **q_out) if quantized else {}
        return fn(x, ins[1], fuse=scalars[2], **extra)
    if kind in ("RELU", "RELU1", "RELU6", "LOGISTIC"):
        fn = {"RELU": activations.relu, "RELU1": activations.relu1, "RELU6": activations.relu6,
              "LOGISTIC": activations.logistic}[kind]
        return fn(x, **(dict(q_in, **q_out) if quantized else {}))
    if kind == "SOFTMAX":
        return softmax.softmax(x, float(ins[1]), **(dict(q_in, **q_out) if quantized else {}))
    if kind == "CONCATENATION":
        arrays, axis = ins[:-1], scalars[-1]
        extra = dict(in_scales=[s["scale"] for s in specs[:-1]],
                     in_zps=[s["zero_point"] for s in specs[:-1]], **q_out) if quantized else {}
        return reshape.concatenation(arrays, axis, **extra)
    if kind == "PAD":
        return pad.pad(x, ins[1], pad_value=xs["zero_point"] if quantized else 0)
    if kind == "MEAN":
        return reduce.mean(x, ins[1], bool(scalars[2]),
                           **(dict(q_in, **q_out) if quantized else {}))
    if kind == "DEQUANTIZE":
        return quantize.dequantize(x, in_scale=xs["scale"], in_zp=xs["zero_point"],
                                   out_dtype=DTYPES[out_spec["type"]])
    if kind == "RESHAPE":
        return x.reshape(out_spec["dimensions"])
    raise Unsupported(kind)


def _value(spec):
    data = np.array(spec["data"], dtype=DTYPES[spec["type"]])
    return data.reshape(spec["dimensions"]) if spec["dimensions"] else data.reshape(())


def evaluate(graph):
    """Run a CTS main graph on the kernels; returns {output operand index: array}."""
    operands = graph["operands"]
    values = {i: _value(o) for i, o in enumerate(operands)
              if o["data"] is not None and o["lifetime"] != "SUBGRAPH_OUTPUT"}
    pending = list(graph["operations"])
    while pending:
        ready = [op for op in pending if all(i in values for i in op["inputs"])]
        if not ready:
            raise Unsupported("graph has operands without values")
        for op in ready:
            if len(op["outputs"]) != 1:
                raise Unsupported(op["type"])
            out_spec = operands[op["outputs"][0]]
            result = _run_op(op, [values[i] for i in op["inputs"]],
                             [operands[i] for i in op["inputs"]], out_spec)
            values[op["outputs"][0]] = np.asarray(result).reshape(out_spec["dimensions"])
            pending.remove(op)
    return {i: values[i] for i in graph["output_indexes"]}


def check_output(name, relaxed, spec, got):
    """AOSP TestHarness tolerances (see ../shared/cts/README.md)."""
    want = _value(spec)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind == "f":
        assert np.all(np.isfinite(got))
        atol, rtol = (5 * 2.0**-10, 5 * 2.0**-10) if relaxed else (1e-5, 5 * 2.0**-23)
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        bad = diff > atol + rtol * np.abs(want.astype(np.float64))
        assert not bad.any(), f"{bad.sum()} values out of tolerance, max diff {diff.max()}"
    else:
        limit = 3 if "mobilenet" in name else 1
        diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
        assert diff.max(initial=0) <= limit, f"max diff {diff.max()} > {limit}"


def _spec_files():
    if not CTS_DIR.is_dir():
        return []
    return sorted(p for version in ("V1_0", "V1_1") for p in (CTS_DIR / version).glob("*.json.gz")
                  if p.name.startswith(SPEC_PREFIXES))


@pytest.mark.skipif(not CTS_DIR.is_dir(), reason=f"conformance vectors not found at {CTS_DIR}")
@pytest.mark.parametrize("path", _spec_files(), ids=lambda p: f"{p.parent.name}/{p.name[:-8]}")
def test_cts_vectors(path):
    if "mobilenet" in path.name and not JIT_ENABLED:
        pytest.skip("224x224 MobileNet is too slow with NNSIM_DISABLE_JIT=1")
    spec = json.loads(gzip.open(path).read())
    ran = 0
    for model in spec["models"]:
        if model["expect_failure"] or model["referenced"]:
            continue
        graph = model["main"]
        relaxed = model["is_relaxed"] or any(o["type"] in ("TENSOR_FLOAT16", "FLOAT16")
                                             for o in graph["operands"])
        try:
            outputs = evaluate(graph)
        except Unsupported:
            continue
        for index, got in outputs.items():
            spec_out = graph["operands"][index]
            if spec_out["is_ignored"]:
                continue
            try:
                check_output(model["name"], relaxed, spec_out, got)
            except AssertionError as exc:
                raise AssertionError(f"{model['name']} output {index}: {exc}") from exc
        ran += 1
    if ran == 0:
        pytest.skip("no model of this spec uses only kernels from this library")
