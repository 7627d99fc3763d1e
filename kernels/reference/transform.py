"""Reference data-movement kernels (plain Python loops over output positions): the oracle for
:mod:`nnsim.kernels.transform`. Slow; for small shapes in tests only."""

from __future__ import annotations

import itertools

import numpy as np


def transpose(x, perm):
    x = np.asarray(x)
    perm = [int(p) % x.ndim for p in np.asarray(perm).reshape(-1)]
    out = np.empty(tuple(x.shape[p] for p in perm), x.dtype)
    for pos in itertools.product(*(range(d) for d in out.shape)):
        src = [0] * x.ndim
        for i, p in enumerate(perm):
            src[p] = pos[i]
        out[pos] = x[tuple(src)]
    return out


def slice_(x, begin, size):
    x = np.asarray(x)
    begin = [int(b) for b in np.asarray(begin).reshape(-1)]
    size = [x.shape[d] - b if int(s) == -1 else int(s)
            for d, (b, s) in enumerate(zip(begin, np.asarray(size).reshape(-1)))]
    out = np.empty(tuple(size), x.dtype)
    for pos in itertools.product(*(range(s) for s in size)):
        out[pos] = x[tuple(b + p for b, p in zip(begin, pos))]
    return out


def gather(params, indices, axis=0, batch_dims=0):
    params, indices = np.asarray(params), np.asarray(indices)
    axis %= params.ndim
    out_shape = params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:]
    out = np.empty(out_shape, params.dtype)
    nb = indices.ndim - batch_dims
    for pos in itertools.product(*(range(d) for d in out_shape)):
        outer = pos[:axis]
        ipos = pos[axis:axis + nb]
        inner = pos[axis + nb:]
        i = int(indices[tuple(outer[:batch_dims]) + tuple(ipos)])
        out[pos] = params[tuple(outer) + (i,) + tuple(inner)]
    return out


def gather_nd(params, indices):
    params, indices = np.asarray(params), np.asarray(indices)
    k = indices.shape[-1]
    out_shape = indices.shape[:-1] + params.shape[k:]
    out = np.empty(out_shape, params.dtype)
    lead = indices.ndim - 1
    for pos in itertools.product(*(range(d) for d in out_shape)):
        idx = tuple(int(v) for v in indices[pos[:lead]])
        out[pos] = params[idx + tuple(pos[lead:])]
    return out
