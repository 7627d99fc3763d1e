"""Reference PAD (numpy ``np.pad``): the oracle for :mod:`nnsim.kernels.pad`."""

from __future__ import annotations

import numpy as np


def pad(x, paddings, *, pad_value=0):
    """Reference pad; see :func:`nnsim.kernels.pad.pad`."""
    x = np.asarray(x)
    widths = [tuple(int(v) for v in row) for row in np.asarray(paddings).reshape(-1, 2)]
    return np.pad(x, widths, mode="constant", constant_values=np.array(pad_value, x.dtype))
