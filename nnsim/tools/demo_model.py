"""The built-in demo of ``nnsim run`` with no model: a real model with real weights, a photo and
its labels, packaged with nnsim (``nnsim/data/demo``, provenance and licenses in its
PROVENANCE.md): the TF-hosted uint8 MobileNet v1 0.25 224, grace_hopper.bmp and the 1001
ImageNet labels.
"""
from __future__ import annotations

from pathlib import Path

__all__ = ["DEMO_DIR", "DEMO_MODEL_NAME", "demo_model_path", "demo_image_path",
           "demo_labels_path"]

DEMO_DIR = Path(__file__).resolve().parents[1] / "data" / "demo"
DEMO_MODEL_NAME = "mobilenet_v1_0.25_224_quant.tflite"


def demo_model_path() -> Path:
    return DEMO_DIR / DEMO_MODEL_NAME


def demo_image_path() -> Path:
    return DEMO_DIR / "grace_hopper.bmp"


def demo_labels_path() -> Path:
    return DEMO_DIR / "imagenet_labels.txt"
