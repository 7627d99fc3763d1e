"""What every ``NNAPIDelegateKernel::Validate`` rule module shares: the SDK and feature-level
constants, the failure types and the legacy quantization parameters.

Reference: docs/reference/tflite-nnapi-delegate.md sections 2.1, 3.2 and 5.1. ``validate`` (the
per-node check and most rules) and ``validate_recurrent`` (LSTM, RNN, SVDF, the sequence ops)
both build on this module; ``validate`` re-exports its names.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

__all__ = ["NNAPIValidationFailureType", "ValidationFailure", "legacy_quant_params",
           "SDK_NNAPI10", "SDK_NNAPI11", "SDK_NNAPI12", "SDK_NNAPI13", "FL5", "FL6", "FL7", "FL8"]

# 2.1: kMinSdkVersionForNNAPI{,11,12,13}, kNNAPIRuntimeFeatureLevel{5..8}.
SDK_NNAPI10, SDK_NNAPI11, SDK_NNAPI12, SDK_NNAPI13 = 27, 28, 29, 30
FL5, FL6, FL7, FL8 = 31, 1000006, 1000007, 1000008


class NNAPIValidationFailureType(IntEnum):
    """5.1, exact names and values (``nnapi_delegate_kernel.h``)."""

    kUnsupportedOperator = 0
    kUnsupportedAndroidVersion = 1
    kUnsupportedOperatorVersion = 2
    kUnsupportedInputType = 3
    kNotRestrictedScaleCompliant = 4
    kUnsupportedOutputType = 5
    kUnsupportedOperandSize = 6
    kUnsupportedOperandValue = 7
    kUnsupportedHybridOperator = 8
    kUnsupportedQuantizationType = 9
    kMissingRequiredOperand = 10
    kUnsupportedOperandRank = 11
    kInputTensorShouldHaveConstantShape = 12
    kUnsupportedOperatorVariant = 13
    kNoActivationExpected = 14
    kUnsupportedQuantizationParameters = 15


@dataclass(frozen=True)
class ValidationFailure:
    type: NNAPIValidationFailureType
    message: str


def legacy_quant_params(tensor) -> tuple[float, int]:
    """TfLiteTensor.params: (scale, zero point) of single-scale affine quantization, else 0/0
    (3.2 notes: per-channel tensors have the legacy scale 0)."""
    q = tensor.quantization
    if q is None or len(q.scales) != 1:
        return 0.0, 0
    return float(q.scales[0]), int(q.zero_points[0])
