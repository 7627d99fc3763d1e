"""The built-in demo: a real model, photo and labels packaged with nnsim (nnsim/data/demo).

Oracles: the shared model folder's copies (same bytes), LiteRT BUILTIN_REF on the packaged photo
(same top-5 scores), and the class LiteRT assigns (835 "suit", then 653 "military uniform").
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from nnsim.images import load_input
from nnsim.tflite import Interpreter
from nnsim.tools import demo_model as dm

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "models"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_packaged_files_and_provenance():
    for path in (dm.demo_model_path(), dm.demo_image_path(), dm.demo_labels_path()):
        assert path.is_file(), path
        assert _sha(path) in (dm.DEMO_DIR / "PROVENANCE.md").read_text(), path.name
    assert len(dm.demo_labels_path().read_text().splitlines()) == 1001


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared models not found at {SHARED}")
def test_packaged_files_are_the_shared_ones():
    for path in (dm.demo_model_path(), dm.demo_image_path(), dm.demo_labels_path()):
        assert _sha(path) == _sha(SHARED / path.name)


def test_demo_classifies_the_photo_as_litert_does():
    litert = pytest.importorskip("ai_edge_litert.interpreter")
    ours = Interpreter(model_path=str(dm.demo_model_path()))
    ref = litert.Interpreter(model_path=str(dm.demo_model_path()), num_threads=1,
                             experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    outs = []
    for ip in (ours, ref):
        ip.allocate_tensors()
        detail = ip.get_input_details()[0]
        ip.set_tensor(detail["index"], load_input(str(dm.demo_image_path()), detail))
        ip.invoke()
        outs.append(ip.get_tensor(ip.get_output_details()[0]["index"]).reshape(-1))
    np.testing.assert_array_equal(outs[0], outs[1])
    top = np.argsort(-outs[0].astype(np.int64), kind="stable")[:2]
    labels = dm.demo_labels_path().read_text().splitlines()
    assert list(top) == [835, 653]
    assert labels[835].startswith("suit") and labels[653] == "military uniform"
