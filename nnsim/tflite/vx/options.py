"""The VX delegate's options as its external-delegate entry point parses them.

``tflite_plugin_create_delegate`` (``vx_delegate_adaptor.cc``) turns the key/value strings into
``--key=value`` arguments for ``tflite::Flags::Parse`` with six flags; a value a flag cannot
parse logs ``Failed to parse flag '<key>' against argv '--<key>=<value>'`` and creation fails;
keys naming no flag are ignored. ``cache_file_path`` is not a flag: it is read from the raw
options (the first key that is exactly ``cache_file_path``) only when ``allowed_cache_mode``
is set. The delegate then echoes six options at creation (``Vx delegate: ... set to ...``).

Booleans parse as ``tflite::Flags`` does: exactly ``true``, ``false``, ``1`` or ``0`` (so
Python's ``str(True)``, "True", is refused, as with LiteRT's ``load_delegate``). Of the six
flags only ``allowed_cache_mode`` has an effect in the delegate's source (``device_id`` only in
multi-device builds; ``allowed_builtin_code`` and ``error_during_*`` are parsed and echoed,
and used nowhere).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, fields

INT32_MIN, INT32_MAX = -2 ** 31, 2 ** 31 - 1
CACHE_FILE_PATH = "cache_file_path"


class VxOptionError(ValueError):
    """An option value ``tflite::Flags::Parse`` refuses: the delegate is not created."""


@dataclass
class VxDelegateOptions:
    """``VxDelegateOptions`` with ``VxDelegateOptionsDefault()`` (all zero)."""
    allowed_cache_mode: bool = False
    device_id: int = 0
    allowed_builtin_code: int = 0
    error_during_init: bool = False
    error_during_prepare: bool = False
    error_during_invoke: bool = False
    cache_file_path: str = ""


# (flag, type, the name the echo line uses), in the adaptor's flag_list order
FLAGS = (("allowed_cache_mode", bool, "allowed_cache_mode"), ("device_id", int, "device num"),
         ("allowed_builtin_code", int, "allowed_builtin_code"),
         ("error_during_init", bool, "error_during_init"),
         ("error_during_prepare", bool, "error_during_prepare"),
         ("error_during_invoke", bool, "error_during_invoke"))


def _parse_bool(text: str):
    if text not in ("true", "false", "0", "1"):
        return None
    return text in ("true", "1")


def _parse_int32(text: str):
    """``std::istringstream >> int32_t`` as ``ParseFlag`` accepts it: leading blanks, a sign
    and digits (trailing characters ignored); an empty value reads as 0."""
    m = re.match(r"\s*([+-]?\d+)", text)
    if m is None:
        return 0 if not text.strip() else None
    return max(INT32_MIN, min(INT32_MAX, int(m.group(1))))


def parse_options(options) -> VxDelegateOptions:
    """``CreateVxDelegateFromOptions`` on string options (a dict, or (key, value) pairs in
    the order given). Raises VxOptionError with every "Failed to parse flag" line."""
    pairs = list(options.items() if hasattr(options, "items") else options or ())
    pairs = [(str(k), str(v)) for k, v in pairs]
    parsed = VxDelegateOptions()
    errors = []
    for name, kind, _ in FLAGS:
        for key, value in pairs:
            if key != name:
                continue
            # the first argument naming the flag is the one Flags::Parse reads
            value_of = _parse_bool(value) if kind is bool else _parse_int32(value)
            if value_of is None:
                errors.append(f"Failed to parse flag '{name}' against argv '--{key}={value}'")
            else:
                setattr(parsed, name, value_of)
            break
    if errors:
        raise VxOptionError("\n".join(errors))
    if parsed.allowed_cache_mode:
        for key, value in pairs:
            if key == CACHE_FILE_PATH:
                parsed.cache_file_path = value
                break
    return parsed


def echo_lines(options: VxDelegateOptions) -> list[str]:
    """The six ``Vx delegate: <name> set to <value>.`` lines (bools print as 0/1)."""
    return [f"Vx delegate: {label} set to {int(getattr(options, name))}."
            for name, _, label in FLAGS]


def split_cli_options(text: str) -> list[tuple[str, str]]:
    """``--external_delegate_options`` as the external delegate provider splits it: options
    separated by ``;``, each ``key:value``; an item with no ``:`` or more than one is dropped
    without a word (benchmark_model's ``SplitString`` rule)."""
    pairs = []
    for item in _getline_split(text or "", ";"):
        parts = _getline_split(item, ":")
        if len(parts) == 2:
            pairs.append((parts[0], parts[1]))
    return pairs


def _getline_split(text: str, sep: str) -> list[str]:
    """``std::getline`` tokens: like ``str.split``, without a final empty token."""
    parts = text.split(sep)
    if parts and parts[-1] == "":
        parts.pop()
    return parts


def option_names() -> list[str]:
    return [f.name for f in fields(VxDelegateOptions)]
