"""TFLite runtime log lines (``TFLITE_LOG_PROD``): ``<SEVERITY>: <message>`` on stderr.

They go to the logger ``nnsim.tflite``. In library use they reach stderr at INFO and above, as
LiteRT's Python package prints them ("INFO: Created TensorFlow Lite delegate for NNAPI.",
"ERROR: Could not find the specified NNAPI accelerator: ..."); the CLI replaces that handler
with its own. VERBOSE is below INFO, as on Android where the minimum severity is VERBOSE
(tflite-nnapi-delegate.md 6.6).
"""
from __future__ import annotations

import logging
import sys

VERBOSE = 5
logging.addLevelName(VERBOSE, "VERBOSE")
# Debug-build-only lines (e.g. the delegate's feature-level change): below what the CLI shows.
DEBUG_BUILD = 3
logging.addLevelName(DEBUG_BUILD, "DEBUG")
LOGGER = logging.getLogger("nnsim.tflite")
_once: set = set()


def log(level: int, message: str, once: bool = False) -> None:
    if once:
        if message in _once:
            return
        _once.add(message)
    LOGGER.log(level, message)


class TfliteFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        name = {logging.WARNING: "WARNING"}.get(record.levelno, record.levelname)
        return f"{name}: {record.getMessage()}"


class _LibraryStderr(logging.Handler):
    """The library-mode handler: the *current* ``sys.stderr`` (resolved at each line, so
    redirections and test capture see it), INFO and above."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
        except Exception:  # noqa: BLE001 - logging must never raise
            self.handleError(record)


LIBRARY_HANDLER = _LibraryStderr(logging.INFO)
LIBRARY_HANDLER.setFormatter(TfliteFormatter())
LOGGER.addHandler(LIBRARY_HANDLER)
LOGGER.setLevel(VERBOSE)
LOGGER.propagate = False
