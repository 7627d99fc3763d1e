"""benchmarks/litert_avx2.py: LiteRT's XNNPACK held to AVX2 in-process, where CPUID faulting
is missing. The oracle for the flags is /proc/cpuinfo (the word found must match the host's
features bit for bit before it is cut down); the oracle for the kernels is LiteRT itself
unpinned (a quantized model's outputs do not depend on the ISA XNNPACK picks)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT.parent / "shared" / "models" / "mobilenet_v1_0.25_128_quant.tflite"

pytest.importorskip("ai_edge_litert")
pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or "avx2" not in Path("/proc/cpuinfo").read_text(),
    reason="needs Linux on an x86-64 CPU with AVX2")

PROBE = """
import json, sys, ctypes, numpy as np
sys.path.insert(0, {root!r})
pinned = sys.argv[1] == "1"
out = {{}}
if pinned:
    from benchmarks import litert_avx2
    out["before"], out["after"] = litert_avx2.pin()
from ai_edge_litert.interpreter import Interpreter
it = Interpreter(model_path={model!r}, num_threads=1)
it.allocate_tensors()
d = it.get_input_details()[0]
x = np.random.default_rng(0).integers(0, 256, d["shape"], dtype=np.uint8)
it.set_tensor(d["index"], x)
it.invoke()
out["y"] = it.get_tensor(it.get_output_details()[0]["index"]).tolist()
if pinned:   # XNNPACK configured its kernels since: the flags it read are still the pinned ones
    lib = litert_avx2._library()
    init = ctypes.CFUNCTYPE(ctypes.c_void_p)(litert_avx2._load_base(lib)
                                              + litert_avx2._symbol(lib, "xnn_init_hardware_config"))
    out["later"] = ctypes.c_uint64.from_address(init() + 8).value
print(json.dumps(out))
"""


def _probe(pinned: bool) -> dict:
    code = PROBE.format(root=str(ROOT), model=str(MODEL))
    done = subprocess.run([sys.executable, "-c", code, "1" if pinned else "0"],
                          capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0 and "PinError" in done.stderr:
        pytest.skip(f"this LiteRT build cannot be pinned: {done.stderr.strip().splitlines()[-1]}")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not MODEL.exists(), reason=f"no shared model {MODEL.name}")
def test_pinned_xnnpack_reports_avx2_only_and_computes_the_same():
    pinned, free = _probe(True), _probe(False)
    flags = set(Path("/proc/cpuinfo").read_text().split())
    assert bool(pinned["before"] >> 9 & 1) == ("avx512f" in flags)
    assert pinned["after"] == 0xFF == pinned["later"]   # SSSE3 .. AVX2, nothing above
    assert np.array_equal(np.array(pinned["y"]), np.array(free["y"]))
