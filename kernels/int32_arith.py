"""ADD, SUB, MUL on TENSOR_INT32 with numpy broadcasting; numba.

NNAPI's ``executeInt32`` (``Broadcast.cpp``) applies ``a + b``, ``a - b`` or ``a * b`` on int32
values and allows no fused activation. C++ leaves signed overflow undefined; what devices
compute (and what this kernel computes) is the two's-complement wrap.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._jit import njit
from nnsim.kernels._common import broadcast_flat
from nnsim.kernels.fixed_point import wrap_int32

__all__ = ["ADD", "SUB", "MUL", "int32_binary"]

ADD, SUB, MUL = 0, 1, 2


def int32_binary(op, a, b):
    """``a + b`` (``op`` ADD), ``a - b`` (SUB) or ``a * b`` (MUL) on int32 arrays, wrapping.

    Returns an int32 array of the broadcast shape.
    """
    a, b = np.asarray(a), np.asarray(b)
    cm.check_dtype("input1", a, (np.int32,))
    cm.check_dtype("input2", b, (np.int32,))
    if int(op) not in (ADD, SUB, MUL):
        raise ValueError(f"unknown int32 operation {op}")
    shape, fa, fb = broadcast_flat(a, b)
    out = np.empty(fa.size, dtype=np.int32)
    _int32_core(int(op), fa, fb, out)
    return out.reshape(shape)


@njit
def _int32_core(op, a, b, out):
    for i in range(out.size):
        x, y = np.int64(a[i]), np.int64(b[i])
        if op == ADD:
            v = x + y
        elif op == SUB:
            v = x - y
        else:
            v = x * y  # |x * y| <= 2**62: exact in int64 before the wrap
        out[i] = wrap_int32(v)
    return out
