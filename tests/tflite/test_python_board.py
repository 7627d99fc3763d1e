"""The README's Python recipe reaches the NPU (review D1): a board is chosen by
``nnsim.set_board``, ``$NNSIM_BOARD`` or the default (imx8mp), delegate failures behave as
LiteRT's (ERROR lines on stderr, RuntimeError from the constructor), and ``node_placement``
names the devices. Each case runs in a fresh process, as a user's script does."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

MODEL = Path(__file__).resolve().parents[2].parent / "shared" / "models" / \
    "mobilenet_v1_0.25_224_quant.tflite"
needs_model = pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} not found")

SCRIPT = """
import sys
from nnsim.tflite import Interpreter, load_delegate
{prelude}
try:
    i = Interpreter(model_path=sys.argv[1], experimental_delegates=[
        load_delegate("nnapi", options={{"accelerator_name": "{accel}"}})])
    i.allocate_tensors()
    print("placement", sorted(set(i.node_placement().values())))
except RuntimeError as e:
    print("RuntimeError", str(e).splitlines()[0])
"""


def _script(accel="vsi-npu", prelude="", env=None):
    full_env = {k: v for k, v in os.environ.items() if k != "NNSIM_BOARD"}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-c", SCRIPT.format(prelude=prelude, accel=accel),
                           str(MODEL)], capture_output=True, text=True, env=full_env,
                          timeout=300)


@needs_model
def test_default_board_runs_the_readme_recipe_on_the_npu():
    r = _script()
    assert r.returncode == 0, r.stderr
    assert "placement ['vsi-npu']" in r.stdout
    assert "INFO: Created TensorFlow Lite delegate for NNAPI." in r.stderr


@needs_model
def test_nnsim_board_environment_and_set_board():
    r = _script(accel="synap-npu", env={"NNSIM_BOARD": "vs680"})
    assert "placement ['synap-npu']" in r.stdout, r.stderr
    r = _script(accel="synap-npu", prelude="import nnsim; nnsim.set_board('vs680')")
    assert "placement ['synap-npu']" in r.stdout, r.stderr


@needs_model
def test_a_wrong_accelerator_is_an_error_as_in_litert():
    r = _script(accel="gpu")
    assert "RuntimeError Could not find the specified NNAPI accelerator: gpu" in r.stdout
    assert "ERROR: Could not find the specified NNAPI accelerator: gpu. Must be one of: " \
           "{vsi-npu,nnapi-reference}." in r.stderr
