"""The built-in demo model: the hosted MobileNet v1 0.25 224 quant graph shape, generated
deterministically, identical results in nnsim and LiteRT, cached in the user cache dir."""
from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from nnsim.tflite import Interpreter
from nnsim.tflite import demo_model as dm
from nnsim.tflite.reader import read_model

HOSTED = (Path(__file__).resolve().parents[2].parent / "shared" / "models"
          / "mobilenet_v1_0.25_224_quant.tflite")

# Top-1 class of ``demo_input(0)``; changes only with the generator (``_VERSION``).
EXPECTED_TOP1 = 194


@pytest.fixture(scope="module")
def blob():
    return dm.build_demo_model()


def test_generation_is_deterministic_and_fast(blob):
    start = time.perf_counter()
    again = dm.build_demo_model()
    assert time.perf_counter() - start < 5.0
    assert again == blob
    assert 400_000 < len(blob) < 700_000


def test_op_sequence_and_io_match_the_hosted_model(blob):
    m = read_model(blob)
    names = [op.name for op in m.main.operators]
    assert names == dm.DEMO_OP_SEQUENCE
    assert Counter(names) == {"CONV_2D": 15, "DEPTHWISE_CONV_2D": 13, "AVERAGE_POOL_2D": 1,
                              "RESHAPE": 1, "SOFTMAX": 1}
    (i,), (o,) = m.main.inputs, m.main.outputs
    x, y = m.main.tensors[i], m.main.tensors[o]
    assert (x.shape, x.type.name, x.quantization.scale, x.quantization.zero_point) == \
        ((1, 224, 224, 3), "UINT8", 1 / 128, 128)
    assert (y.shape, y.type.name, y.quantization.scale, y.quantization.zero_point) == \
        ((1, 1001), "UINT8", 1 / 256, 0)
    for t in m.main.tensors:  # per-tensor uint8 everywhere, as the TOCO model
        if t.type.name == "UINT8":
            assert not t.quantization.per_channel
    if HOSTED.is_file():
        hosted = read_model(str(HOSTED))
        assert names == [op.name for op in hosted.main.operators]
        for a, b in zip(m.main.operators, hosted.main.operators):
            shapes = [[m.main.tensors[k].shape for k in a.outputs],
                      [hosted.main.tensors[k].shape for k in b.outputs]]
            assert shapes[0] == shapes[1]


def test_same_outputs_in_nnsim_and_litert(blob):
    litert = pytest.importorskip("ai_edge_litert.interpreter")
    ours = Interpreter(model_content=blob)
    theirs = litert.Interpreter(model_content=blob,
                                experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    tops = set()
    for ip in (ours, theirs):
        ip.allocate_tensors()
    for seed in range(4):
        x = dm.demo_input(seed)
        outs = []
        for ip in (ours, theirs):
            ip.set_tensor(ip.get_input_details()[0]["index"], x)
            ip.invoke()
            outs.append(ip.get_tensor(ip.get_output_details()[0]["index"]))
        np.testing.assert_array_equal(outs[0], outs[1])
        tops.add(int(np.argmax(outs[0])))
    assert len(tops) > 1, "the demo answers the same class for every input"


def test_top1_is_stable_for_a_seeded_input(blob):
    ip = Interpreter(model_content=blob)
    ip.allocate_tensors()
    results = []
    for _ in range(2):
        ip.set_tensor(0, dm.demo_input(0))
        ip.invoke()
        probs = ip.get_tensor(ip.get_output_details()[0]["index"])[0]
        top = np.sort(probs)[::-1]
        assert top[0] > top[1], "top-1 must be unique"
        results.append(int(np.argmax(probs)))
    assert results == [EXPECTED_TOP1, EXPECTED_TOP1]


def test_cache(tmp_path, monkeypatch, blob):
    monkeypatch.setenv("NNSIM_CACHE_DIR", str(tmp_path))
    assert dm.demo_model_bytes() == blob
    path = dm.demo_model_path()
    assert path.parent == tmp_path and path.read_bytes() == blob
    assert dm.DEMO_MODEL_NAME.endswith(".tflite")
    path.write_bytes(b"corrupt")  # a damaged cache entry is rebuilt, never returned
    assert dm.demo_model_bytes() == blob
    assert path.read_bytes() == blob


def test_read_only_cache_still_returns_the_model(tmp_path, monkeypatch, blob):
    target = tmp_path / "file-not-dir"
    target.write_text("x")
    monkeypatch.setenv("NNSIM_CACHE_DIR", str(target / "nnsim"))
    assert dm.demo_model_bytes() == blob
