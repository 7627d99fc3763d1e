"""RANDOM_MULTINOMIAL: draw class indices from softmax(logits), one row of logits per batch.

Follows AOSP ``Multinomial::EvalFloat32`` except for the generator: per batch row the logits
that are finite (NaN and +/-inf are left out, as AOSP does) give the unnormalised cumulative
distribution ``cdf[j] = sum_{k <= j, finite} exp(x[k] - max)`` in double; each sample is the
first class whose ``cdf`` exceeds ``u * cdf[-1]`` (``std::upper_bound``), ``u`` uniform in
[0, 1). A row without any finite logit therefore yields ``num_classes``, as in AOSP.

AOSP draws ``u`` with TensorFlow's Philox 4x32-10 generator keyed by the two seeds; nnsim uses
numpy's Philox bit generator keyed by the same two seeds, so outputs are deterministic for given
seeds but not bit-identical with AOSP (NNAPI only promises the distribution). Seeds (0, 0)
mean "seed from the system", as TensorFlow's ``GuardedPhiloxRandom::Init`` does.
"""
from __future__ import annotations

import numpy as np

__all__ = ["random_multinomial"]


def random_multinomial(logits, sample_count: int, seed0: int, seed1: int) -> np.ndarray:
    """int32 ``(batch, sample_count)`` class indices; ``logits`` float ``(batch, classes)``.

    float16 logits are widened to float32 first (AOSP ``convertFloat16ToFloat32``).
    """
    x = np.asarray(logits).astype(np.float32)
    if x.ndim != 2:
        raise ValueError(f"logits must be 2-D, got shape {x.shape}")
    if sample_count < 0:
        raise ValueError(f"sample count must be >= 0, got {sample_count}")
    batch, classes = x.shape
    finite = np.isfinite(x)
    lowest = np.finfo(np.float32).min  # std::numeric_limits<float>::lowest()
    row_max = np.where(finite, x, lowest).max(axis=1, initial=lowest).astype(np.float64)
    shifted = np.where(finite, x.astype(np.float64) - row_max[:, None], -np.inf)
    weights = np.exp(shifted)  # exp(x - max) in double; 0 for the left-out logits
    cdf = np.cumsum(weights, axis=1)  # sequential double sums, as the C loop
    total = cdf[:, -1] if classes else np.zeros(batch)
    u = _generator(seed0, seed1).random((batch, sample_count))  # row-major: batch by batch
    out = np.empty((batch, sample_count), dtype=np.int32)
    for b in range(batch):  # one vectorised search per row
        out[b] = np.searchsorted(cdf[b], u[b] * total[b], side="right")
    return out


def _generator(seed0: int, seed1: int) -> np.random.Generator:
    if seed0 == 0 and seed1 == 0:
        return np.random.default_rng()
    key = [int(seed0) & 0xFFFFFFFFFFFFFFFF, int(seed1) & 0xFFFFFFFFFFFFFFFF]
    return np.random.Generator(np.random.Philox(key=key))
