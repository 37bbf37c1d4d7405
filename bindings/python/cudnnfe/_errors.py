"""Exceptions raised by cudnnfe, one per C status code.

Every exception raised for a failed C call derives from :class:`Error` and from
the Python built-in that says what kind of problem it is:

============================  ===============================  ==================
C status                      exception                        also a
============================  ===============================  ==================
INVALID_ARGUMENT              :class:`InvalidArgumentError`    ``ValueError``
INVALID_GRAPH                 :class:`InvalidGraphError`       ``ValueError``
BAD_SERIALIZED_DATA           :class:`BadSerializedDataError`  ``ValueError``
WRONG_STATE                   :class:`WrongStateError`         ``ValueError``
NOT_SUPPORTED                 :class:`GraphNotSupportedError`  (``Error`` only)
(raised in Python)            :class:`NotOfferedError`         ``GraphNotSupportedError``,
                                                               ``NotImplementedError``
CUDNN_UNAVAILABLE             :class:`CudnnUnavailableError`   ``GraphNotSupportedError``
CUDA_ERROR                    :class:`CudaError`               ``RuntimeError``
CUDNN_ERROR                   :class:`CudnnError`              ``RuntimeError``
INTERNAL                      :class:`InternalError`           ``RuntimeError``
VERIFY_FAILED                 :class:`VerifyFailedError`       ``RuntimeError``
OUT_OF_MEMORY                 :class:`OutOfMemoryError`        ``MemoryError``
============================  ===============================  ==================

The message is the C library's full message, read from the object the call
acted on (``cudnnfe_graph_last_error`` for graph calls,
``cudnnfe_handle_last_error`` for execution), followed by the status name.
"""
from __future__ import annotations

import threading
from typing import Dict, Optional, Type

from ._lib import ffi, lib

__all__ = [
    "Error", "InvalidArgumentError", "InvalidGraphError", "GraphNotSupportedError",
    "CudnnUnavailableError", "CudaError", "CudnnError", "OutOfMemoryError",
    "BadSerializedDataError", "WrongStateError", "InternalError", "NotOfferedError",
    "VerifyFailedError", "get_last_error_string", "LargerBufferWarning",
]

# The message of the last cudnnfe exception made on this thread (get_last_error_string).
_last = threading.local()


def get_last_error_string() -> str:
    """The message of the last cudnnfe error on this thread ("" if none), as cudnn-frontend's
    ``cudnn.get_last_error_string()``; the exception itself carries the same message."""
    return getattr(_last, "message", "")


class Error(Exception):
    """Base of every exception for a failed cudnnfe C call.

    Attributes:
        status: the C status code (``CUDNNFE_STATUS_*``).
        status_name: its name, e.g. ``"CUDNNFE_STATUS_INVALID_GRAPH"``.
        message: the C library's message (names the node, tensor and rule).
    """

    def __init__(self, message: str, status: int = 0, status_name: str = "") -> None:
        self.status = status
        self.status_name = status_name
        self.message = message
        super().__init__(f"{message} [{status_name}]" if status_name else message)
        _last.message = message


class InvalidArgumentError(Error, ValueError):
    """A NULL pointer, bad value or unknown UID was passed (INVALID_ARGUMENT)."""


class InvalidGraphError(Error, ValueError):
    """Validation or shape inference failed (INVALID_GRAPH)."""


class BadSerializedDataError(Error, ValueError):
    """Serialized bytes are corrupt or incompatible (BAD_SERIALIZED_DATA)."""


class WrongStateError(Error, ValueError):
    """The call does not fit the graph's state, e.g. execute before build (WRONG_STATE)."""


class GraphNotSupportedError(Error):
    """No engine supports the graph, or it needs a newer cuDNN or GPU (NOT_SUPPORTED)."""


class NotOfferedError(GraphNotSupportedError, NotImplementedError):
    """A feature of cudnn-frontend's API that the cudnnfe C ABI does not offer.

    Raised in Python, before any C call, naming the feature (e.g. paged
    attention, ``score_max``). Also a ``NotImplementedError``, and a
    :class:`GraphNotSupportedError`, so that code written for cudnn-frontend,
    which catches ``cudnnGraphNotSupportedError`` to skip an unsupported
    graph, skips these too.
    """


class LargerBufferWarning(UserWarning):
    """An array bound at execute (input or output) has another shape or layout than its
    tensor, holds other elements than the tensor's, and spans enough memory: as in
    cudnn-frontend, which binds only the array's pointer, the tensor is read or written from
    the array's start by its own dims and strides. An array that spans too little memory,
    has another element size, or is on the wrong device is refused."""


class CudnnUnavailableError(GraphNotSupportedError):
    """cuDNN, the CUDA runtime or a GPU could not be found (CUDNN_UNAVAILABLE)."""


class CudaError(Error, RuntimeError):
    """A CUDA runtime call failed (CUDA_ERROR)."""


class CudnnError(Error, RuntimeError):
    """A cuDNN call failed unexpectedly (CUDNN_ERROR)."""


class InternalError(Error, RuntimeError):
    """A bug in cudnnfe (INTERNAL): please report it with the message."""


class VerifyFailedError(Error, RuntimeError):
    """Verify mode found a result off the CPU reference (VERIFY_FAILED; ``docs/verify.md``).

    The message names the graph, the node, the plan and engine, the cuDNN version, the GPU,
    the worst sampled element (index, got, expected) and the tolerance. Verify mode is on
    for graphs built with ``verify=True`` (:class:`pygraph`, :meth:`pygraph.build`) or, by
    default, when the environment variable ``CUDNNFE_VERIFY`` is ``1``."""


class OutOfMemoryError(Error, MemoryError):
    """A host allocation failed (OUT_OF_MEMORY)."""


_BY_STATUS: Dict[int, Type[Error]] = {
    lib.CUDNNFE_STATUS_INVALID_ARGUMENT: InvalidArgumentError,
    lib.CUDNNFE_STATUS_INVALID_GRAPH: InvalidGraphError,
    lib.CUDNNFE_STATUS_NOT_SUPPORTED: GraphNotSupportedError,
    lib.CUDNNFE_STATUS_CUDNN_UNAVAILABLE: CudnnUnavailableError,
    lib.CUDNNFE_STATUS_CUDA_ERROR: CudaError,
    lib.CUDNNFE_STATUS_CUDNN_ERROR: CudnnError,
    lib.CUDNNFE_STATUS_OUT_OF_MEMORY: OutOfMemoryError,
    lib.CUDNNFE_STATUS_BAD_SERIALIZED_DATA: BadSerializedDataError,
    lib.CUDNNFE_STATUS_WRONG_STATE: WrongStateError,
    lib.CUDNNFE_STATUS_INTERNAL: InternalError,
    lib.CUDNNFE_STATUS_VERIFY_FAILED: VerifyFailedError,
}


class _UnknownStatusError(Error, RuntimeError):
    pass


def _string(ptr: object) -> str:
    if ptr == ffi.NULL:
        return ""
    return str(ffi.string(ptr).decode("utf-8", "replace"))


def make_error(status: int, message: str) -> Error:
    """Build the exception for a C status code and message."""
    cls = _BY_STATUS.get(status, _UnknownStatusError)
    name = _string(lib.cudnnfe_status_name(status))
    return cls(message or "(the library gave no message)", status, name)


def graph_message(graph_ptr: object) -> str:
    """The graph's last error message, copied (safe while other threads fail calls on it)."""
    try:
        copy = lib.cudnnfe_graph_copy_last_error
    except AttributeError:  # a library older than the header
        return _string(lib.cudnnfe_graph_last_error(graph_ptr))
    size = ffi.new("size_t *")
    for _ in range(4):  # the message may change between the two calls
        if copy(graph_ptr, ffi.NULL, 0, size):
            break
        buf = ffi.new("char[]", size[0] + 1)
        if copy(graph_ptr, buf, size[0] + 1, size) == 0:
            return str(ffi.string(buf).decode("utf-8", "replace"))
    return _string(lib.cudnnfe_graph_last_error(graph_ptr))


def raise_graph_error(status: int, graph_ptr: object, context: Optional[str] = None) -> None:
    """Raise the exception for a failed call on a graph (message from the graph)."""
    message = graph_message(graph_ptr) or _string(lib.cudnnfe_last_error())
    if context:
        message = f"{context}: {message}"
    raise make_error(status, message)


def raise_handle_error(status: int, handle_ptr: object, graph_ptr: object = None) -> None:
    """Raise the exception for a failed execute (message from the handle)."""
    message = _string(lib.cudnnfe_handle_last_error(handle_ptr))
    if not message and graph_ptr is not None:
        message = graph_message(graph_ptr)
    if not message:
        message = _string(lib.cudnnfe_last_error())
    raise make_error(status, message)


def raise_global_error(status: int) -> None:
    """Raise the exception for a failed call that had no object (thread-local message)."""
    raise make_error(status, _string(lib.cudnnfe_last_error()))
