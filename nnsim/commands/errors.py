"""How a command's failure reaches the user: one ``nnsim: error:`` line and an exit code.

``UsageError`` (bad flags or values, exit 2) and ``RunError`` (a missing/corrupt model or a
failed run, exit 1) are what commands raise on purpose; ``Parser`` turns argparse's errors into
``UsageError``; ``error_line`` words any other exception in one line. The CLI imports this
module before it knows which command runs, so it imports nothing heavy (no drivers, no kernels).
"""
from __future__ import annotations

import argparse

from nnsim.errors import BuiltinError, ModelFileError, NnapiError
from nnsim.limits import TensorTooLargeError

__all__ = ["UsageError", "RunError", "Parser", "error_line"]


class UsageError(Exception):
    """Bad flags or values: one line on stderr, exit code 2."""


class RunError(Exception):
    """A missing/corrupt model or a failed run: one line on stderr, exit code 1."""


class Parser(argparse.ArgumentParser):
    """One-line errors with exit code 2."""

    def error(self, message):
        raise UsageError(message)


def error_line(exc: BaseException) -> str:
    """One line for an exception that reached the CLI (no traceback is ever shown): the
    message of the errors nnsim raises on purpose, a short diagnosis for the rest."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, (ModelFileError, NnapiError, BuiltinError, TensorTooLargeError)):
        return text
    if isinstance(exc, MemoryError):
        return (f"out of memory ({text}); NNSIM_MAX_TENSOR_BYTES lowers the size nnsim "
                f"accepts before allocating")
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or text}"
    return (f"internal error: {type(exc).__name__}: {text} (set NNSIM_TRACEBACK=1 to see the "
            f"traceback, and please report it)")
