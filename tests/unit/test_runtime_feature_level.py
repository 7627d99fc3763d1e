"""The runtime feature level follows the emulated Android version (ro.build.version.sdk), so an
operation above that level is refused at finish as on that Android (nnapi-runtime.md 1.3)."""
from __future__ import annotations

import numpy as np
import pytest

import nnsim
from nnsim import nnapi as nn
from nnsim.runtime.model import runtime_feature_level
from nnsim.types import FL1, FL2, FL3, FL4, FL5, FL6, FL7


@pytest.mark.parametrize("sdk,level", [(26, FL1), (27, FL1), (28, FL2), (29, FL3), (30, FL4),
                                       (31, FL5), (32, FL5), (33, FL6), (34, FL7), (35, FL7)])
def test_sdk_to_feature_level(sdk, level):
    assert runtime_feature_level(sdk) == int(level)


def test_unset_is_android_12_and_the_property_is_read():
    assert nn.ANeuralNetworks_getRuntimeFeatureLevel() == int(FL5)
    nnsim.setprop("ro.build.version.sdk", "34")
    assert nn.ANeuralNetworks_getRuntimeFeatureLevel() == int(FL7)


def _reverse_model():
    """REVERSE (feature level 7, Android 14) of a float32 vector along axis 0."""
    code, model = nn.ANeuralNetworksModel_create()
    t = nn.ANeuralNetworksOperandType(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (4,))
    axis = nn.ANeuralNetworksOperandType(nn.ANEURALNETWORKS_TENSOR_INT32, (1,))
    for operand in (t, axis, t):
        nn.ANeuralNetworksModel_addOperand(model, operand)
    nn.ANeuralNetworksModel_setOperandValue(model, 1, np.array([0], np.int32))
    nn.ANeuralNetworksModel_addOperation(model, nn.ANEURALNETWORKS_REVERSE, [0, 1], [2])
    nn.ANeuralNetworksModel_identifyInputsAndOutputs(model, [0], [2])
    return model


def test_fl7_operation_refused_on_android_12_and_runs_on_android_14():
    assert nn.ANeuralNetworksModel_finish(_reverse_model()) == nn.ANEURALNETWORKS_BAD_DATA
    nnsim.setprop("ro.build.version.sdk", "34")
    model = _reverse_model()
    assert nn.ANeuralNetworksModel_finish(model) == nn.ANEURALNETWORKS_NO_ERROR
    code, compilation = nn.ANeuralNetworksCompilation_create(model)
    assert nn.ANeuralNetworksCompilation_finish(compilation) == nn.ANEURALNETWORKS_NO_ERROR
    code, execution = nn.ANeuralNetworksExecution_create(compilation)
    out = np.zeros(4, np.float32)
    nn.ANeuralNetworksExecution_setInput(execution, 0, None, np.arange(4, dtype=np.float32))
    nn.ANeuralNetworksExecution_setOutput(execution, 0, None, out)
    assert nn.ANeuralNetworksExecution_compute(execution) == nn.ANEURALNETWORKS_NO_ERROR
    np.testing.assert_array_equal(out, [3, 2, 1, 0])
