"""LiteRT's ``load_delegate`` (``nnsim.tflite.load_delegate``): a library name and its options
in, a delegate out.

``"nnapi"`` (and the NNAPI delegate's library names) gives an ``NnApiDelegate``;
``"libvx_delegate.so"`` under any directory gives the VX delegate (``nnsim.tflite.vx``). Other
libraries and unknown or malformed options raise ValueError, as LiteRT's loader does.
"""
from __future__ import annotations

from nnsim.tflite.delegate import NnApiDelegate, NnApiDelegateOptions
from nnsim.tflite.vx import is_vx_library, load_vx_delegate

__all__ = ["NNAPI_LIBRARY_NAMES", "load_delegate"]

#: Library names ``load_delegate`` accepts for the NNAPI delegate.
NNAPI_LIBRARY_NAMES = ("nnapi", "libnnapi_delegate.so", "libtensorflowlite_nnapi_delegate.so",
                       "tensorflowlite_nnapi_delegate")


def load_delegate(library, options=None):
    """LiteRT's ``load_delegate``: ``"nnapi"`` gives an ``NnApiDelegate`` with ``options``;
    ``"libvx_delegate.so"`` (any directory) gives the VX delegate (``nnsim.tflite.vx``), its
    options parsed as the library parses its string options.

    NNAPI option values may be strings, as LiteRT passes them to external delegates ("true",
    "0", ...); unknown libraries and options raise ValueError like LiteRT's loader does.
    """
    name = str(library)
    if is_vx_library(name):
        return load_vx_delegate(name, options)
    if name.lower() not in NNAPI_LIBRARY_NAMES:
        raise ValueError(f"Failed to load delegate from {library}\n"
                         f"nnsim provides the NNAPI delegate ({NNAPI_LIBRARY_NAMES[0]!r}) and "
                         f"the VX delegate ('libvx_delegate.so')")
    kwargs = {}
    defaults = NnApiDelegateOptions()
    for key, value in (options or {}).items():
        if not hasattr(defaults, key):
            raise ValueError(f"Failed to load delegate from {library}\n"
                             f"unknown NNAPI delegate option {key!r}")
        kwargs[key] = _coerce_option(library, key, value, getattr(defaults, key))
    return NnApiDelegate(**kwargs)


def _coerce_option(library, key, value, default):
    if not isinstance(value, str) or isinstance(default, str):
        return value
    text = value.strip()
    try:
        if isinstance(default, bool):
            if text.lower() in ("true", "1", "yes", "on"):
                return True
            if text.lower() in ("false", "0", "no", "off"):
                return False
            raise ValueError(text)
        if isinstance(default, int):
            return int(text)
        if default is None and key == "android_sdk_version":
            return int(text)
    except ValueError:
        raise ValueError(f"Failed to load delegate from {library}\n"
                         f"invalid value {value!r} for option {key!r}") from None
    return value
