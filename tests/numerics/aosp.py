"""AOSP CpuExecutor's integer arithmetic, written from the upstream source as plain Python: the
independent oracle of tests/numerics (nothing here calls nnsim).

Upstream: pixeldust-project-caf/android_packages_modules_NeuralNetworks @ 690f68c
(common/OperationsExecutionUtils.cpp, common/cpu_operations/*.cpp) and the TFLite helpers it
includes from external/tensorflow (tensorflow/lite/kernels/internal/common.h), built without
TFLITE_SINGLE_ROUNDING: /work/shared/docs/reference/tflite-nnapi-delegate.md section 9.2.
"""
from __future__ import annotations

import math

import numpy as np


def quantize_multiplier(real: float) -> tuple[int, int]:
    """QuantizeMultiplier (OperationsExecutionUtils.cpp:73-103): real ~ q * 2**(shift - 31)."""
    if real == 0.0:
        return 0, 0
    frac, shift = math.frexp(real)
    q = math.floor(frac * 2**31 + 0.5)     # std::round of a positive double
    if q == 2**31:
        q, shift = q // 2, shift + 1
    return (0, 0) if shift < -31 else (q, shift)


def conv_multiplier(in_scale, w_scale, out_scale) -> tuple[int, int]:
    """GetQuantizedConvolutionMultiplier (OperationsExecutionUtils.cpp:154-167): Shape::scale
    is a float, so ``inputShape.scale * filterShape.scale`` is a float32 product."""
    product = np.float32(in_scale) * np.float32(w_scale)
    return quantize_multiplier(float(product) / float(np.float32(out_scale)))


def _c_div(a: int, b: int) -> int:
    """C++ integer division (toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def mbqm(x: int, q: int, shift: int) -> int:
    """MultiplyByQuantizedMultiplier, double rounding: gemmlowp's
    SaturatingRoundingDoublingHighMul, then RoundingDivideByPOT."""
    x = ((x << max(shift, 0)) + 2**31) % 2**32 - 2**31
    if x == q == -2**31:
        high = 2**31 - 1
    else:
        ab = x * q
        high = _c_div(ab + (2**30 if ab >= 0 else 1 - 2**30), 2**31)
    exponent = max(-shift, 0)
    mask = (1 << exponent) - 1
    threshold = (mask >> 1) + (1 if high < 0 else 0)
    return (high >> exponent) + (1 if (high & mask) > threshold else 0)


def mean(values: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """meanGeneric<T, int32_t> (SimpleMath.cpp:53-82) -> reference_ops::Mean<T, U>: the int32
    sum of the raw quantized values, C++ ``/`` by the count, cast to T."""
    total = values.astype(np.int64).sum(axis=axes, keepdims=True)
    count = int(np.prod([values.shape[a] for a in axes]))
    return np.vectorize(lambda s: _c_div(int(s), count))(total).astype(values.dtype)


def add_quant8(a: int, a_scale, a_zp, b: int, b_scale, b_zp, out_scale, out_zp, lo, hi) -> int:
    """addQuant8 (Broadcast.cpp:128-179): inputs shifted left by 20, each scaled by
    s_i / (2 * max(s_a, s_b)), the sum by 2 * max / (2**20 * s_out); no fused activation."""
    twice_max = float(np.float32(2) * max(np.float32(a_scale), np.float32(b_scale)))
    qa, sa = quantize_multiplier(float(np.float32(a_scale)) / twice_max)
    qb, sb = quantize_multiplier(float(np.float32(b_scale)) / twice_max)
    qo, so = quantize_multiplier(twice_max / float(np.float32(2**20) * np.float32(out_scale)))
    scaled = mbqm((a - a_zp) << 20, qa, sa) + mbqm((b - b_zp) << 20, qb, sb)
    return min(max(mbqm(scaled, qo, so) + out_zp, lo), hi)


def fully_connected(x, w, bias, in_q, w_q, out_q, relu: bool, dtype) -> np.ndarray:
    """fullyConnectedQuant8 (FullyConnected.cpp:103-178) for a per-tensor int8 / uint8 layer:
    exact int32 accumulators, the float32-product multiplier, double-rounding MBQM, clamp to
    the type (and to the zero point under RELU: CalculateActivationRangeImpl)."""
    (si, zi), (sw, zw), (so, zo) = in_q, w_q, out_q
    q, shift = conv_multiplier(si, sw, so)
    acc = (x.astype(np.int64) - zi) @ (w.astype(np.int64) - zw).T + bias.astype(np.int64)
    info = np.iinfo(dtype)
    lo = max(info.min, zo) if relu else info.min
    out = np.vectorize(lambda a: mbqm(int(a), q, shift) + zo)(acc)
    return np.clip(out, lo, info.max).astype(dtype)
