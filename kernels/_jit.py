"""The one place where nnsim touches numba.

Every fast kernel core is decorated with :func:`njit` from this module, never with
``numba.njit`` directly, so that the JIT flags are set once:

* ``fastmath=False`` always: reassociating float sums would break agreement with the TFLite
  reference kernels, and integer paths do not need it to vectorise.
* ``cache=True``: compiled cores are stored next to the module (``__pycache__``) and reused by
  later processes. numba only checks the timestamp of the file that defines a core, but a core
  also contains the helpers it calls from other modules (``fixed_point``, ``conv``...), so this
  module drops the package's cache files whenever any kernel source changes (a hash of the
  sources is kept in ``__pycache__/nnsim-jit-sources.sha1``).
* ``NNSIM_DISABLE_JIT=1`` in the environment (read at import time), or numba not being
  installed, turns :func:`njit` into a no-op so the cores run as plain Python (coverage,
  debugging, platforms without numba).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

try:  # numba is a hard dependency, but a missing install must not break imports.
    import numba as _numba
except ImportError:  # pragma: no cover - exercised only on installs without numba
    _numba = None

__all__ = ["JIT_ENABLED", "njit", "prange"]

#: True when cores are compiled by numba; False when they run as plain Python.
JIT_ENABLED: bool = _numba is not None and os.environ.get("NNSIM_DISABLE_JIT", "") != "1"

_FLAGS = {"fastmath": False, "cache": True, "nogil": True}


def _drop_stale_caches() -> None:
    """Delete this package's numba cache files if any kernel source changed since they were made."""
    root = Path(__file__).resolve().parent
    cache_dir = root / "__pycache__"
    digest = hashlib.sha1()
    for path in sorted(root.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    stamp = cache_dir / "nnsim-jit-sources.sha1"
    try:
        if stamp.read_text() == digest.hexdigest():
            return
    except OSError:
        pass  # no stamp yet: treat the caches as stale
    try:
        cache_dir.mkdir(exist_ok=True)
        for cached in list(cache_dir.glob("*.nbi")) + list(cache_dir.glob("*.nbc")):
            cached.unlink(missing_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:  # read-only install: numba falls back to its own cache directory
        pass


if JIT_ENABLED:
    _drop_stale_caches()


def njit(*args, **kwargs):
    """Decorate a kernel core; usable as ``@njit`` and ``@njit(...)``.

    Keyword arguments other than ``fastmath`` are passed to ``numba.njit`` (e.g. an explicit
    signature is not needed and should be avoided); ``fastmath`` cannot be turned on.
    """
    if kwargs.get("fastmath"):
        raise ValueError("nnsim kernels never use fastmath (see nnsim.kernels._jit)")
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return _decorate(args[0], {})
    if args:
        raise TypeError("njit takes the function or keyword arguments only")

    def decorator(func):
        return _decorate(func, kwargs)

    return decorator


def _decorate(func, kwargs):
    if not JIT_ENABLED:
        return func
    flags = dict(_FLAGS)
    flags.update(kwargs)
    flags["fastmath"] = False
    return _numba.njit(**flags)(func)


#: ``numba.prange`` when compiling, the builtin ``range`` otherwise. Kernels are
#: single-threaded by design (benchmarks compare against single-thread LiteRT).
prange = _numba.prange if JIT_ENABLED else range
