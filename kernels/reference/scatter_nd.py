"""Reference SCATTER_ND (numpy): the oracle for :mod:`nnsim.kernels.scatter_nd`.

``np.add.at`` adds unbuffered, in index order, so repeated indices accumulate as TFLite's loop
does; integers wrap in their own type, bool ORs.
"""

from __future__ import annotations

import numpy as np


def scatter_nd(indices, updates, shape):
    """See :func:`nnsim.kernels.scatter_nd.scatter_nd` (bounds are not checked here)."""
    indices, updates = np.asarray(indices), np.asarray(updates)
    shape = tuple(int(d) for d in shape)
    ix = indices.shape[-1]
    out = np.zeros(shape, updates.dtype)
    where = tuple(np.moveaxis(indices.reshape(-1, ix), 1, 0))
    slices = updates.reshape((-1,) + shape[ix:])
    if updates.dtype == np.bool_:
        np.logical_or.at(out, where, slices)
    else:
        with np.errstate(over="ignore"):
            np.add.at(out, where, slices)
    return out
