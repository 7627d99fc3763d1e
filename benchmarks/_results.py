"""Medians recorded by the model benchmarks, read by the session summary in conftest.py."""
from __future__ import annotations

from pathlib import Path

MODELS = Path(__file__).resolve().parents[1].parent / "shared" / "models"
RESULTS: dict = {}   # (model, engine) -> median seconds
PATHS: dict = {}     # model -> {"litert" | "cpu" | "nnapi": median seconds} (test_paths.py)


def record(model: str, engine: str, benchmark) -> None:
    stats = benchmark.stats.stats if hasattr(benchmark.stats, "stats") else benchmark.stats
    RESULTS[(model, engine)] = stats.median
