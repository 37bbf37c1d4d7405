"""Execution contexts (``cudnnfe_handle_t``) and library-level queries."""
from __future__ import annotations

import threading
from typing import Any

from ._errors import raise_global_error
from ._lib import ffi, lib

__all__ = ["Handle", "create_handle", "destroy_handle", "set_stream", "get_stream",
           "backend_version", "backend_version_string", "version", "device_count", "default_handle", "stream_pointer"]


class Handle:
    """An execution context: one thread's cuDNN handle for one GPU, plus its last error.

    Cheap to create; cuDNN is loaded only when the handle first touches the GPU.
    A handle also serves (and is required for) CPU reference execution. Use one
    handle per thread that executes. The optional ``stream`` is the CUDA stream
    that :meth:`pygraph.execute` uses when it is given no ``stream=``.

    Handles are freed by :func:`destroy_handle`, by :meth:`close`, on leaving a
    ``with`` block, or when garbage-collected.
    """

    __slots__ = ("_ptr", "_raw", "device", "stream", "__weakref__")

    def __init__(self, device: int = -1) -> None:
        if not isinstance(device, int) or isinstance(device, bool):
            raise TypeError(f"device must be an int, not {type(device).__name__}")
        out = ffi.new("cudnnfe_handle_t **")
        status = lib.cudnnfe_handle_create(out, device)
        if status:
            raise_global_error(status)
        self._raw = out[0]
        self._ptr = ffi.gc(out[0], lib.cudnnfe_handle_destroy)
        self.device = device
        self.stream: Any = None

    @property
    def ptr(self) -> Any:
        """The ``cudnnfe_handle_t *`` (cffi cdata); raises ValueError once destroyed."""
        if self._ptr is None:
            raise ValueError("the handle was destroyed")
        return self._ptr

    def close(self) -> None:
        """Destroy the handle now (idempotent)."""
        ptr, self._ptr = self._ptr, None
        if ptr is not None:
            ffi.release(ptr)  # runs cudnnfe_handle_destroy once

    @property
    def closed(self) -> bool:
        return self._ptr is None

    def __enter__(self) -> "Handle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "destroyed" if self._ptr is None else f"device={self.device}"
        return f"<cudnnfe.Handle {state}>"


def create_handle(device: int = -1) -> Handle:
    """Create an execution context for CUDA device ``device`` (-1: current device)."""
    return Handle(device)


def destroy_handle(handle: Handle) -> None:
    """Destroy a handle made by :func:`create_handle` (a second call is a no-op)."""
    if not isinstance(handle, Handle):
        raise TypeError(f"expected a cudnnfe.Handle, not {type(handle).__name__}")
    handle.close()


def stream_pointer(stream: Any) -> Any:
    """A ``void *`` for a CUDA stream: None, an int, torch/CuPy stream objects."""
    if stream is None:
        return ffi.NULL
    if isinstance(stream, int) and not isinstance(stream, bool):
        return ffi.cast("void *", stream)
    for attr in ("cuda_stream", "ptr", "handle"):
        value = getattr(stream, attr, None)
        if isinstance(value, int):
            return ffi.cast("void *", value)
    if hasattr(stream, "__cuda_stream__"):
        _, value = stream.__cuda_stream__()
        return ffi.cast("void *", value)
    raise TypeError(f"cannot read a CUDA stream from {type(stream).__name__}: pass an int "
                    "(cudaStream_t), a torch.cuda.Stream or a cupy stream")


def set_stream(handle: Handle, stream: Any) -> None:
    """Make ``stream`` the default CUDA stream of executions that use ``handle``."""
    if not isinstance(handle, Handle):
        raise TypeError(f"expected a cudnnfe.Handle, not {type(handle).__name__}")
    stream_pointer(stream)  # validate
    handle.stream = stream


def get_stream(handle: Handle) -> Any:
    """The stream set with :func:`set_stream` (None: the default stream)."""
    if not isinstance(handle, Handle):
        raise TypeError(f"expected a cudnnfe.Handle, not {type(handle).__name__}")
    return handle.stream


_local = threading.local()


def default_handle() -> Handle:
    """This thread's handle, used when an execute call names none."""
    h = getattr(_local, "handle", None)
    if h is None or h.closed:
        h = _local.handle = Handle(-1)
    return h


def backend_version() -> int:
    """Version of the cuDNN library that cudnnfe loads (e.g. 91900 for 9.19.0).

    Raises :class:`CudnnUnavailableError` (a :class:`GraphNotSupportedError`)
    with the paths tried when cuDNN cannot be loaded.
    """
    out = ffi.new("int64_t *")
    status = lib.cudnnfe_cudnn_version(out)
    if status:
        raise_global_error(status)
    return int(out[0])


def backend_version_string() -> str:
    """The loaded cuDNN's version as text, e.g. ``"9.19.0"`` (cudnn-frontend's format)."""
    v = backend_version()
    if v >= 90000:  # cuDNN 9 numbers versions MAJOR * 10000 + MINOR * 100 + PATCH
        return f"{v // 10000}.{v // 100 % 100}.{v % 100}"
    return f"{v // 1000}.{v // 100 % 10}.{v % 100}"  # cuDNN 8: MAJOR * 1000 + MINOR * 100


def version() -> int:
    """Version of the loaded libcudnnfe: MAJOR * 10000 + MINOR * 100 + PATCH."""
    return int(lib.cudnnfe_version())


def device_count() -> int:
    """Number of usable CUDA devices (0 without a GPU, driver or CUDA runtime)."""
    out = ffi.new("int32_t *")
    status = lib.cudnnfe_device_count(out)
    if status:
        raise_global_error(status)
    return int(out[0])
