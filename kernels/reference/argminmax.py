"""Reference ARG_MAX / ARG_MIN (numpy): the oracle for :mod:`nnsim.kernels.argminmax`.

``np.argmax`` returns the first maximal index, as TFLite; NaN inputs are outside its scope.
"""

from __future__ import annotations

import numpy as np


def arg_max(x, axis, *, out_dtype=np.int64):
    return np.argmax(np.asarray(x), axis=int(axis)).astype(out_dtype)


def arg_min(x, axis, *, out_dtype=np.int64):
    return np.argmin(np.asarray(x), axis=int(axis)).astype(out_dtype)
