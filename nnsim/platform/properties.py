"""Emulated Android system properties (``setprop`` / ``getprop``).

One process-wide store holds the ``debug.nn.*`` knobs the NNAPI runtime reads
(nnapi-runtime.md section 2, "Debug properties") and the ``vendor.*`` knobs of the simulated
drivers. Values are strings, as on Android. Sources, later ones winning: the defaults below,
``NNSIM_PROP_<KEY>`` environment variables (key upper-cased, ``.`` and ``-`` written as ``_``),
then ``setprop`` calls (CLI ``--setprop KEY=VALUE``, Python ``nnsim.setprop``).
"""
from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass

from nnsim.types import FL1, FL2, FL3, FL4, FL5, FL6, FL7


@dataclass(frozen=True)
class PropertyInfo:
    default: str
    meaning: str


# Known properties: default value and meaning (printed by `nnsim props`).
KNOWN_PROPERTIES: dict[str, PropertyInfo] = {
    "debug.nn.vlog": PropertyInfo(
        "", "Verbose NNAPI logging: '1'/'all' or tags model, compilation, execution, cpuexe, "
            "manager, driver, memory (split on space, comma or colon); re-read at Model_create"),
    "debug.nn.partition": PropertyInfo(
        "1", "0 = no partitioning (whole model on nnapi-reference), 1 = partition with CPU "
             "fallback, 2 = partition without any fallback"),
    "debug.nn.cpuonly": PropertyInfo("0", "1 = the device list is only nnapi-reference"),
    "debug.nn.enabled-devices": PropertyInfo(
        ".*", "Regular expression; driver devices whose name does not match are ignored"),
    "debug.nn.strict-slicing": PropertyInfo("0", "1 = a failed model slice is a hard error"),
    "debug.nn.syncexec-runtime": PropertyInfo(
        "0", "1 = startCompute runs synchronously in the calling thread"),
    "debug.nn.syncexec-cpu": PropertyInfo("1", "1 = CPU executions run synchronously"),
}

_lock = threading.RLock()
_values: dict[str, str] = {}


def _env_key(key: str) -> str:
    return "NNSIM_PROP_" + key.upper().replace(".", "_").replace("-", "_")


def getprop(key: str, default: str | None = None) -> str:
    """Value of ``key``: setprop value, else NNSIM_PROP_* env, else the known default."""
    with _lock:
        if key in _values:
            return _values[key]
    env = os.environ.get(_env_key(key))
    if env is not None:
        return env
    if default is not None:
        return default
    info = KNOWN_PROPERTIES.get(key)
    return info.default if info else ""


def getprop_int(key: str, default: int) -> int:
    """Integer value of ``key``; an unparsable value gives ``default`` (as base::GetIntProperty)."""
    raw = getprop(key, str(default)).strip()
    try:
        return int(raw, 0)
    except ValueError:
        return default


def setprop(key: str, value) -> None:
    """Set ``key``; ``None`` removes the override."""
    if not key or any(c.isspace() for c in key):
        raise ValueError(f"invalid property name {key!r}")
    with _lock:
        if value is None:
            _values.pop(key, None)
        else:
            _values[key] = str(value)


def reset_props() -> None:
    """Drop every setprop override (tests, CLI start)."""
    with _lock:
        _values.clear()


def all_props() -> dict[str, str]:
    """Every known or set property with its current value."""
    # env-only keys are reported when known: an unknown NNSIM_PROP_ name cannot be un-mangled
    keys = set(KNOWN_PROPERTIES) | set(_values)
    return {k: getprop(k) for k in sorted(keys)}


def register_property(key: str, default: str, meaning: str) -> None:
    """Drivers declare their vendor.* knobs so `nnsim props` can list them."""
    KNOWN_PROPERTIES.setdefault(key, PropertyInfo(default, meaning))


@contextlib.contextmanager
def override_props(**kwargs):
    """Temporarily set properties: ``override_props(**{"debug.nn.partition": "2"})``."""
    with _lock:
        saved = {k: _values.get(k) for k in kwargs}
        for k, v in kwargs.items():
            setprop(k, v)
    try:
        yield
    finally:
        with _lock:
            for k, v in saved.items():
                setprop(k, v)


# The runtime feature level (ANeuralNetworks_getRuntimeFeatureLevel) when no Android version is
# emulated: Android 12 = FL5 (31), the boards' default; models needing a newer level fail finish
# as on such a phone.
RUNTIME_FEATURE_LEVEL = FL5
SDK_PROPERTY = "ro.build.version.sdk"
# Android SDK -> the NNAPI runtime of that release (nnapi-runtime.md 1.3: FL1 Android 8.1 ...
# FL5 Android 12/12L, FL6 Android 13, FL7 Android 14 and later).
_SDK_FEATURE_LEVEL = {27: FL1, 28: FL2, 29: FL3, 30: FL4, 31: FL5, 32: FL5, 33: FL6}


def runtime_feature_level(sdk: int | None = None) -> int:
    """The runtime feature level of Android ``sdk`` (default: the emulated
    ``ro.build.version.sdk``; unset = ``RUNTIME_FEATURE_LEVEL``). SDK 34 and later are FL7;
    below 27 there is no NNAPI, and a hand-built model gets FL1."""
    if sdk is None:
        sdk = getprop_int(SDK_PROPERTY, 0)
        if sdk <= 0:
            return int(RUNTIME_FEATURE_LEVEL)
    if sdk >= 34:
        return int(FL7)
    return int(_SDK_FEATURE_LEVEL.get(sdk, FL1))
