"""The three execution paths on the same model, interleaved in one process, single thread.

Per model: LiteRT (``ai_edge_litert`` default resolver, ``num_threads=1``), nnsim's TFLite CPU
path (``nnsim.tflite.Interpreter``, no delegate) and nnsim's NNAPI path (the emulated NNAPI
delegate on ``nnapi-reference``: the NNAPI runtime and ``nnsim/ops`` on the host). One
benchmark round invokes each engine once, in turn, so that machine noise hits all three alike;
the medians per engine and the ratios (CPU path / LiteRT, NNAPI path / CPU path) are printed at
the end and kept in each benchmark's ``extra_info``. Run:
``python -m pytest benchmarks/test_paths.py --benchmark-columns=median,rounds``
(``NUMBA_CPU_NAME=haswell`` measures nnsim's AVX2 code path on an AVX-512 machine, against
LiteRT's AVX-512 code; ``python -m benchmarks.avx2_only python -m pytest -p no:faulthandler
...`` hides AVX-512 from both, as on an AVX2-only machine).
"""
from __future__ import annotations

import pytest

from benchmarks._interleave import interleaved_medians, ready
from benchmarks._results import MODELS, PATHS

PATH_MODELS = ["mobilenet_v1_1.0_224_quant_reconstructed", "tf2_mobilenet_v2_1.0_224_ptq",
               "mobilenet_v1_0.25_224_1_default_1", "deeplabv3_mnv2_pascal_quant"]
ROUNDS, WARMUP = 40, 3   # 15 rounds moved the ratios by up to 10% between runs (Zen 5 VM)

pytestmark = pytest.mark.skipif(not MODELS.is_dir(), reason=f"no shared models at {MODELS}")


def engines(path: str) -> dict:
    from ai_edge_litert.interpreter import Interpreter as LiteRT

    from nnsim.tflite import Interpreter, load_delegate
    nnapi = load_delegate("nnapi", {"accelerator_name": "nnapi-reference"})
    return {"litert": ready(LiteRT(model_path=path, num_threads=1)),
            "cpu": ready(Interpreter(model_path=path, num_threads=1)),
            "nnapi": ready(Interpreter(model_path=path, num_threads=1,
                                       experimental_delegates=[nnapi]))}


@pytest.mark.parametrize("model", PATH_MODELS)
def test_paths_interleaved(model, benchmark):
    runs = engines(str(MODELS / f"{model}.tflite"))
    medians = interleaved_medians(benchmark, runs, "paths", ROUNDS, WARMUP)
    PATHS[model] = medians
    benchmark.extra_info.update({f"{k}_ms": v * 1e3 for k, v in medians.items()})
    benchmark.extra_info["cpu_over_litert"] = medians["cpu"] / medians["litert"]
    benchmark.extra_info["nnapi_over_cpu"] = medians["nnapi"] / medians["cpu"]
