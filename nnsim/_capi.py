"""The checks and the result-code wrapper every ``nnsim.nnapi`` entry point shares.

``_code`` / ``_value`` turn the runtime's exceptions into result codes (as
``runtime/NeuralNetworks.cpp`` does); the other helpers check C-shaped arguments: pointers
(``None`` = NULL), use after free, integers, index lists and buffers. See :mod:`nnsim.nnapi`
for the rules they implement.
"""
from __future__ import annotations

import functools

import numpy as np

from nnsim.errors import BadDataError, BadStateError, NnapiError, UnexpectedNullError
from nnsim.platform import vlog
from nnsim.runtime.compilation import CompilationBuilder
from nnsim.runtime.devices import get_device_manager
from nnsim.runtime.execution import Burst, Event, Execution
from nnsim.runtime.memory import Memory
from nnsim.runtime.memory_desc import MemoryDesc
from nnsim.runtime.model import ModelBuilder
from nnsim.types import ResultCode

_NO_ERROR = int(ResultCode.NO_ERROR)


def _code(fn):
    """Return NO_ERROR / the error's result code (tuple-returning functions: (code, value))."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            result = fn(*args, **kwargs)
        except NnapiError as e:
            if str(e) and not getattr(e, "logged", False):  # (the runtime may log it itself)
                vlog.log_error("NeuralNetworks", str(e))
            code = int(e.result_code)
            return (code, None) if getattr(wrapper, "returns_value", False) else code
        except Exception as e:  # never let a Python error escape a C-shaped entry point
            vlog.log_error("NeuralNetworks", f"{fn.__name__}: {type(e).__name__}: {e}")
            code = int(ResultCode.OP_FAILED)
            return (code, None) if getattr(wrapper, "returns_value", False) else code
        if getattr(wrapper, "returns_value", False):
            return _NO_ERROR, result
        return _NO_ERROR
    return wrapper


def _value(fn):
    wrapped = _code(fn)
    wrapped.returns_value = True
    return wrapped


_C_NAMES = {ModelBuilder: "ANeuralNetworksModel", CompilationBuilder: "ANeuralNetworksCompilation",
            Execution: "ANeuralNetworksExecution", Event: "ANeuralNetworksEvent",
            Burst: "ANeuralNetworksBurst", Memory: "ANeuralNetworksMemory"}
_FREED = "_nnapi_freed"


def _c_name(obj) -> str:
    if isinstance(obj, MemoryDesc):
        return "ANeuralNetworksMemoryDesc"
    return next((n for c, n in _C_NAMES.items() if isinstance(obj, c)), type(obj).__name__)


def _freed_part(obj) -> str | None:
    """What makes ``obj`` unusable: "a freed X" if it was freed, "an X whose Y was freed" if
    an object it needs (C: "must outlive") was; None if it is alive."""
    root = _freed_root(obj, set())
    if root is None:
        return None
    if root is obj:
        return f"a freed {_c_name(obj)}"
    return f"an {_c_name(obj)} whose {_c_name(root)} was freed"


def _freed_root(obj, seen: set):
    """``obj`` if it was freed, else the first freed object it needs (transitively), or None."""
    if id(obj) in seen:
        return None
    seen.add(id(obj))
    if getattr(obj, _FREED, False):
        return obj
    needs: list = []
    if isinstance(obj, ModelBuilder):
        needs = obj.referenced_models() + list(getattr(obj, "_nnapi_memories", ()))
    elif isinstance(obj, CompilationBuilder):
        needs = [obj.model]
    elif isinstance(obj, Execution):
        needs = [obj.compilation] + [a.memory for a in obj.inputs + obj.outputs
                                     if a is not None and a.memory is not None]
    elif isinstance(obj, Burst):
        needs = [obj.compilation]
    elif type(obj).__name__ == "MemoryDesc":
        needs = [role[1] for role in obj.roles]
    for dep in needs:
        root = _freed_root(dep, seen)
        if root is not None:
            return root
    return None


def _need(obj, fn: str, cls=None):
    """``obj`` checked as upstream checks a pointer argument, then for use after free."""
    if obj is None:
        raise UnexpectedNullError(f"{fn} passed a nullptr")
    if cls is not None and not isinstance(obj, cls):
        raise BadDataError(f"{fn} passed an object of the wrong type")
    if cls is not None:
        problem = _freed_part(obj)
        if problem is not None:
            raise BadStateError(f"{fn} passed {problem}")
    return obj


def _free(obj, fn: str, cls) -> None:
    """``*_free``: None is valid (a no-op); a second free is BAD_STATE."""
    if obj is None:
        return
    if not isinstance(obj, cls):
        raise BadDataError(f"{fn} passed an object of the wrong type")
    if getattr(obj, _FREED, False):
        raise BadStateError(f"{fn} passed a freed {_c_name(obj)} (double free)")
    setattr(obj, _FREED, True)


def _device(obj, fn: str):
    """An ``ANeuralNetworksDevice`` from ``ANeuralNetworks_getDevice``."""
    if obj is None:
        raise UnexpectedNullError(f"{fn} passed a nullptr")
    if not any(obj is d for d in get_device_manager().get_devices()):
        raise BadDataError(f"{fn} passed an unknown device")
    return obj


def _index(value, fn: str, what: str = "index") -> int:
    """A C integer argument: anything that is not an integer is BAD_DATA."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise BadDataError(f"{fn} passed an invalid {what} {value!r}")
    return int(value)


def _size(value, fn: str, what: str) -> int:
    """A C ``size_t``/``uint32_t``/``uint64_t``: a non-negative integer."""
    value = _index(value, fn, what)
    if value < 0:
        raise BadDataError(f"{fn} passed a negative {what} {value}")
    return value


def _indexes(values, fn: str) -> list[int]:
    """A C (count, ``const uint32_t*``) pair; None is the null pointer."""
    if values is None:
        raise UnexpectedNullError(f"{fn} passed a nullptr")
    if not isinstance(values, (list, tuple, range, np.ndarray)):
        raise BadDataError(f"{fn} needs a sequence of operand indexes")
    return [_size(v, fn, "operand index") for v in values]


def _bytes_like(buffer, fn: str):
    """None (NULL), an ndarray or an object with the buffer protocol; else BAD_DATA."""
    if buffer is None or isinstance(buffer, np.ndarray):
        return buffer
    try:
        memoryview(buffer)
    except TypeError:
        raise BadDataError(f"{fn} needs a bytes-like object or an ndarray, not "
                           f"{type(buffer).__name__}") from None
    return buffer
