"""Reference HARD_SWISH (numpy, vectorised): the oracle for :mod:`nnsim.kernels.hard_swish`."""

from __future__ import annotations

import numpy as np

from nnsim.kernels.hard_swish import hard_swish_params
from nnsim.kernels.reference import _fixed_point as fx


def _wrap16(v):
    return (np.asarray(v, np.int64) + 32768) % 65536 - 32768


def _high_mul16(a, b, rounding):
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    ab = a * b
    if rounding:
        ab = ab + np.where(ab >= 0, 1 << 14, 1 - (1 << 14))
    q = np.where(ab >= 0, ab // 32768, -((-ab) // 32768))
    return np.where((a == b) & (a == -32768), 32767, _wrap16(q))


def hard_swish(x, *, in_scale=None, in_zp=0, out_scale=None, out_zp=0):
    """See :func:`nnsim.kernels.hard_swish.hard_swish`."""
    x = np.asarray(x)
    if x.dtype.kind == "f":
        v = x.astype(np.float32)
        return (v * np.clip(v + np.float32(3), 0, 6).astype(np.float32) / np.float32(6)
                ).astype(x.dtype)
    m_out, e_out, m_rel, e_rel = hard_swish_params(in_scale, out_scale)
    info = np.iinfo(x.dtype)
    hires = _wrap16(_wrap16(x.astype(np.int64) - int(in_zp)) * 128)
    pre = _high_mul16(hires, m_out, True)
    r = hires
    if e_rel > 0:
        r = np.clip(r * (1 << (e_rel - 1)), -32768, 32767)
    r = _high_mul16(r, m_rel, True)
    if e_rel > 0:
        r = np.clip(r * 2, -32768, 32767)
    if e_rel < 0:
        r = fx.rdbpot(r, -e_rel)
    r = (r + 32768) >> 1
    o = _wrap16(fx.rdbpot(_high_mul16(r, pre, False), -e_out) + int(out_zp))
    return np.clip(o, info.min, info.max).astype(x.dtype)
