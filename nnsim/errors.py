"""NnapiError hierarchy: every error carries the NNAPI ResultCode that the C API returns for it.

The Pythonic classes raise these; ``nnsim.nnapi`` catches them and returns ``err.result_code``
as ``runtime/NeuralNetworks.cpp`` does.
"""
from __future__ import annotations

from nnsim.types import ResultCode


class NnapiError(Exception):
    """Base class. ``result_code`` is the ANEURALNETWORKS_* value for this failure."""
    result_code = ResultCode.OP_FAILED

    def __init__(self, message: str = "", result_code: ResultCode | None = None):
        super().__init__(message)
        if result_code is not None:
            self.result_code = ResultCode(result_code)


class UnexpectedNullError(NnapiError):
    result_code = ResultCode.UNEXPECTED_NULL


class BadDataError(NnapiError):
    result_code = ResultCode.BAD_DATA


class OperationValidationError(BadDataError):
    """An operation's operands do not match what the operation accepts."""


class UnsupportedOperationError(BadDataError):
    """No device in the compilation can run an operation ("No driver can do operation X")."""


class BadStateError(NnapiError):
    result_code = ResultCode.BAD_STATE


class OpFailedError(NnapiError):
    result_code = ResultCode.OP_FAILED


class UnmappableError(NnapiError):
    result_code = ResultCode.UNMAPPABLE


class OutputInsufficientSizeError(NnapiError):
    result_code = ResultCode.OUTPUT_INSUFFICIENT_SIZE


class UnavailableDeviceError(NnapiError):
    result_code = ResultCode.UNAVAILABLE_DEVICE


class MissedDeadlineError(NnapiError):
    result_code = ResultCode.MISSED_DEADLINE_TRANSIENT


class BuiltinError(RuntimeError):
    """A TFLite CPU builtin cannot prepare or run its node; the message names the node and the
    op. (Defined here, with the other errors a user sees, so the CLI can recognise it without
    loading the kernels; ``nnsim.tflite.builtins`` exports it.)"""


class UnsupportedOperatorError(BuiltinError):
    """No nnsim CPU builtin exists for this operator (or this variant of it)."""


class ModelFileError(Exception):
    """A .tflite file cannot be read: names the file, where and what is wrong."""

    def __init__(self, path: str, what: str, where: str | None = None):
        self.path, self.what, self.where = path, what, where
        loc = f" at {where}" if where else ""
        super().__init__(f"{path}: {what}{loc}")
