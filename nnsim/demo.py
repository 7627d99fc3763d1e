"""Built-in NNAPI demo: AOSP's V1_0 ``conv_quant8`` model built through ``nnsim.nnapi``.

Used by ``nnsim run --nnapi-demo``; the numbers are the conformance vector's
(nnapi-runtime.md 7.4 a): input 4 everywhere but 2 at the centre, filter 1, bias 1,
every 2x2 window sums to 15.
"""
from __future__ import annotations

import numpy as np

from nnsim import nnapi as nn


def build_conv_quant8():
    """Return a finished ``conv_quant8`` model (raises RuntimeError on a failed call)."""
    def ok(code, what):
        if code != nn.ANEURALNETWORKS_NO_ERROR:
            raise RuntimeError(f"{what} returned {code}")

    code, m = nn.ANeuralNetworksModel_create()
    ok(code, "ANeuralNetworksModel_create")
    Q, OT = nn.ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, nn.ANeuralNetworksOperandType
    for t in (OT(Q, (1, 3, 3, 1), 0.5, 0), OT(Q, (1, 2, 2, 1), 0.5, 0),
              OT(nn.ANEURALNETWORKS_TENSOR_INT32, (1,), 0.25, 0), OT(nn.ANEURALNETWORKS_INT32),
              OT(nn.ANEURALNETWORKS_INT32), OT(nn.ANEURALNETWORKS_INT32), OT(Q, (1, 2, 2, 1), 1.0, 0)):
        ok(nn.ANeuralNetworksModel_addOperand(m, t), "addOperand")
    for i, v in ((1, np.array([2, 2, 2, 2], np.uint8)), (2, np.array([4], np.int32)),
                 (3, np.array(0, np.int32)), (4, np.array(1, np.int32)), (5, np.array(0, np.int32))):
        ok(nn.ANeuralNetworksModel_setOperandValue(m, i, v), "setOperandValue")
    ok(nn.ANeuralNetworksModel_addOperation(m, nn.ANEURALNETWORKS_CONV_2D,
                                            [0, 1, 2, 3, 3, 3, 3, 4, 4, 5], [6]), "addOperation")
    ok(nn.ANeuralNetworksModel_identifyInputsAndOutputs(m, [0], [6]), "identifyInputsAndOutputs")
    ok(nn.ANeuralNetworksModel_finish(m), "ANeuralNetworksModel_finish")
    return m


def run_conv_quant8() -> np.ndarray:
    """Compile for every device, run once, return the [1,2,2,1] uint8 output."""
    m = build_conv_quant8()
    code, comp = nn.ANeuralNetworksCompilation_create(m)
    if code or nn.ANeuralNetworksCompilation_finish(comp):
        raise RuntimeError("compilation failed")
    _, ex = nn.ANeuralNetworksExecution_create(comp)
    out = np.zeros((1, 2, 2, 1), np.uint8)
    nn.ANeuralNetworksExecution_setInput(ex, 0, None,
                                         np.array([8, 8, 8, 8, 4, 8, 8, 8, 8], np.uint8))
    nn.ANeuralNetworksExecution_setOutput(ex, 0, None, out)
    code = nn.ANeuralNetworksExecution_compute(ex)
    if code:
        raise RuntimeError(f"ANeuralNetworksExecution_compute returned {code}")
    return out
