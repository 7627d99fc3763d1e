"""Shared CLI plumbing: errors, log handlers, boards, model loading."""
from __future__ import annotations

import logging
import re
import sys
from pathlib import Path

import nnsim
from nnsim.commands.errors import RunError, UsageError, error_line  # noqa: F401 (re-exported)
from nnsim.drivers.boards import BOARDS, is_board_file
from nnsim.runtime.board import apply_board as _apply
from nnsim.platform.vlog import LOGGER_PREFIX, LogcatFormatter
from nnsim.runtime.devices import get_device_manager
from nnsim.tflite.tflog import LIBRARY_HANDLER, TfliteFormatter, VERBOSE
from nnsim.tflite.tflog import LOGGER as TFLITE
from nnsim.tools.demo_model import DEMO_MODEL_NAME, demo_model_path


def install_log_handlers(logcat_stream=None, logcat: bool | None = None) -> None:
    """TFLite runtime lines (``INFO: ...``) to stderr; logcat lines (threadtime) to stdout
    when ``logcat`` is true (default: when ``debug.nn.vlog`` is set, as `setprop` + `logcat`
    on a board; a board's tool output never contains logcat lines otherwise)."""
    if logcat is None:
        logcat = bool(nnsim.getprop("debug.nn.vlog").strip())
    root = logging.getLogger(LOGGER_PREFIX.rstrip("."))
    root.handlers = [h for h in root.handlers if not getattr(h, "_nnsim_cli", False)]
    if logcat:
        handler = logging.StreamHandler(logcat_stream or sys.stdout)
        handler.setFormatter(LogcatFormatter())
        handler._nnsim_cli = True
        root.addHandler(handler)
        root.setLevel(logging.INFO)
    th = logging.StreamHandler(sys.stderr)
    th.setFormatter(TfliteFormatter())
    th._nnsim_cli = True
    TFLITE.handlers = [h for h in TFLITE.handlers
                       if not getattr(h, "_nnsim_cli", False) and h is not LIBRARY_HANDLER]
    TFLITE.addHandler(th)
    TFLITE.setLevel(VERBOSE)
    TFLITE.propagate = False


def apply_setprops(pairs) -> None:
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key.strip() or any(c.isspace() for c in key):
            raise UsageError(f"--setprop expects KEY=VALUE, got {pair!r}")
        nnsim.setprop(key, value)
        problem = _property_problem(key, value)
        if problem:   # the runtime reads it as Android does (the default); say so
            print(f"nnsim: warning: --setprop {key}={value}: {problem}", file=sys.stderr)


# Values the runtime would silently replace by its default, as Android's property readers do.
_INT_CHOICES = {"debug.nn.partition": (0, 1, 2), "debug.nn.cpuonly": (0, 1),
                "debug.nn.syncexec-runtime": (0, 1)}


def _property_problem(key: str, value: str) -> str | None:
    if key in _INT_CHOICES:
        choices = _INT_CHOICES[key]
        try:
            ok = int(value.strip(), 0) in choices
        except ValueError:
            ok = False
        if not ok:
            return (f"not one of {', '.join(map(str, choices))}; the runtime uses its default "
                    f"instead")
    if key == "debug.nn.enabled-devices":
        try:
            re.compile(value)
        except re.error as e:
            return f"not a regular expression ({e}); the runtime enables every device instead"
    return None


def apply_board(name: str, devices=None) -> object:
    """Install the board's drivers and properties; ``devices`` keeps only those driver names."""
    if name not in BOARDS and not is_board_file(name):   # a name, or a profile's path
        raise UsageError(f"unknown board {name!r}; choose from {', '.join(sorted(BOARDS))}")
    try:
        board = _apply(name)
    except ValueError as e:   # a profile file that does not load, or names unknown devices
        raise UsageError(str(e)) from None
    if devices:
        known = [d.name for d in get_device_manager().drivers()] + ["nnapi-reference"]
        for d in devices:
            if d not in known:
                raise UsageError(f"board {name} has no device {d!r}; it has "
                                 f"{', '.join(known)}")
        wanted = [d for d in devices if d != "nnapi-reference"]
        nnsim.setprop("debug.nn.enabled-devices",
                      "|".join(re.escape(d) for d in wanted) if wanted else "(?!)")
    return board


def board_text(board) -> str:
    desc = getattr(board, "description", None) or getattr(board, "title", "")
    return f"{board.name} ({desc})" if desc and desc != board.name else board.name


def load_model_bytes(path: str | None) -> tuple[str, bytes]:
    """(display name, bytes); the built-in demo model when ``path`` is None."""
    if path is None:
        return DEMO_MODEL_NAME, demo_model_path().read_bytes()
    p = Path(path)
    if not p.exists():
        raise RunError(f"{path}: no such file")
    if p.is_dir():
        raise RunError(f"{path}: is a directory, not a .tflite model")
    try:
        data = p.read_bytes()
    except OSError as e:
        raise RunError(f"{path}: {e.strerror}") from None
    if not data:
        raise RunError(f"{path}: the file is empty (0 bytes), not a .tflite model")
    return p.name, data


def read_labels(path: Path | None, count: int) -> list[str] | None:
    if path is None or not path.exists():
        return None
    labels = path.read_text(errors="replace").splitlines()
    return labels if len(labels) >= count else None


def default_labels(model_path: str | None, count: int) -> list[str] | None:
    """imagenet_labels.txt beside the model for 1001-class outputs (the shared models' layout)."""
    if model_path is None or count not in (1000, 1001):
        return None
    labels = read_labels(Path(model_path).parent / "imagenet_labels.txt", 1001)
    if labels and count == 1000:
        labels = labels[1:]
    return labels


def fmt_ms(ns) -> str:
    return "n/a" if ns is None else f"{ns / 1e6:.3f} ms"
