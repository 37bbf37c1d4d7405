"""Which cuDNN and CUDA runtime the C library loaded, and why; its log.

cuDNN and the CUDA runtime are looked for once, at first GPU use, in this
order (``include/cudnnfe/cudnnfe.h``, ``docs/loading.md``):

1. ``CUDNNFE_CUDNN_LIBRARY`` / ``CUDNNFE_CUDART_LIBRARY``: that file only;
2. the copy already loaded in the process (PyTorch's own cuDNN, for one), so
   that a process never holds two cuDNNs;
3. search directories: importing cudnnfe adds those of NVIDIA's pip wheels
   (``nvidia-cudnn-cu12``/``-cu13``, ``nvidia-cuda-runtime``) installed in this
   Python environment;
4. the system loader path.

:func:`library_info` reports the files and the rule that chose each.
:func:`set_log_callback` routes the library's diagnostics lines (also
enabled with ``CUDNNFE_LOG=info|debug``) to a Python function.
"""
from __future__ import annotations

import dataclasses
import threading
from typing import Any, Callable, Optional

from ._errors import raise_global_error
from . import _fe_log, _structs
from ._lib import ffi, lib

__all__ = ["LibraryInfo", "library_info", "add_library_search_dir", "set_log_callback"]

_ORIGINS = {
    lib.CUDNNFE_LIBRARY_ORIGIN_NOT_LOADED: "not loaded",
    lib.CUDNNFE_LIBRARY_ORIGIN_ENVIRONMENT: "environment",
    lib.CUDNNFE_LIBRARY_ORIGIN_ALREADY_LOADED: "already loaded",
    lib.CUDNNFE_LIBRARY_ORIGIN_SEARCH_DIR: "search directory",
    lib.CUDNNFE_LIBRARY_ORIGIN_SYSTEM: "system",
}
_LIBRARIES = {"cudnn": lib.CUDNNFE_LIBRARY_CUDNN, "cudart": lib.CUDNNFE_LIBRARY_CUDART}
_LEVELS = {"off": lib.CUDNNFE_LOG_LEVEL_OFF, "info": lib.CUDNNFE_LOG_LEVEL_INFO,
           "debug": lib.CUDNNFE_LOG_LEVEL_DEBUG}
_LEVEL_NAMES = {v: k for k, v in _LEVELS.items()}


@dataclasses.dataclass(frozen=True)
class LibraryInfo:
    """The files loaded. ``*_origin`` is one of "environment", "already loaded",
    "search directory", "system" or "not loaded"; ``*_reason`` says why (or,
    when not loaded, every path tried with the loader's error)."""

    cudnnfe_path: str
    cudnn_path: str
    cudnn_version: int
    cudnn_origin: str
    cudnn_reason: str
    cudart_path: str
    cudart_version: int
    cudart_origin: str
    cudart_reason: str


def _str(ptr: Any) -> str:
    return ffi.string(ptr).decode("utf-8", "replace") if ptr != ffi.NULL else ""


def library_info() -> LibraryInfo:
    """Loads cuDNN and the CUDA runtime if not yet tried (never raises for a
    missing library) and reports what was loaded and why."""
    info = _structs.new("cudnnfe_library_info_t")
    status = lib.cudnnfe_library_info(info)
    if status:
        raise_global_error(status)
    return LibraryInfo(
        cudnnfe_path=_str(info.cudnnfe_path),
        cudnn_path=_str(info.cudnn_path), cudnn_version=int(info.cudnn_version),
        cudnn_origin=_ORIGINS.get(info.cudnn_origin, str(info.cudnn_origin)),
        cudnn_reason=_str(info.cudnn_reason),
        cudart_path=_str(info.cudart_path), cudart_version=int(info.cudart_version),
        cudart_origin=_ORIGINS.get(info.cudart_origin, str(info.cudart_origin)),
        cudart_reason=_str(info.cudart_reason))


def add_library_search_dir(library: str, directory: str) -> None:
    """Adds a directory to search for ``library`` ("cudnn" or "cudart"), after
    the explicit variable and the copy already loaded. Raises
    :class:`WrongStateError` once that library has been looked for."""
    if library not in _LIBRARIES:
        raise ValueError(f"library must be 'cudnn' or 'cudart', not {library!r}")
    status = lib.cudnnfe_library_add_search_dir(_LIBRARIES[library], str(directory).encode())
    if status:
        raise_global_error(status)


_callback_lock = threading.Lock()
_callback_keepalive: Optional[Any] = None  # the cffi callback C holds


def set_log_callback(callback: Optional[Callable[[str, str], None]],
                     level: str = "info") -> None:
    """Sends the library's log lines at ``level`` ("off", "info" or "debug") and
    below to ``callback(level_name, message)``; ``None`` sends them to standard
    error. Overrides ``CUDNNFE_LOG``. Exceptions the callback raises are
    printed by cffi and otherwise ignored (the C library must not unwind)."""
    global _callback_keepalive
    if level not in _LEVELS:
        raise ValueError(f"level must be one of {sorted(_LEVELS)}, not {level!r}")
    c_callback = ffi.NULL
    if callback is not None:
        def trampoline(c_level: int, message: Any, user_data: Any) -> None:
            callback(_LEVEL_NAMES.get(c_level, str(c_level)), _str(message))
        c_callback = ffi.callback("cudnnfe_log_callback_t", trampoline)
    with _callback_lock:
        status = lib.cudnnfe_set_log_callback(c_callback, ffi.NULL, _LEVELS[level])
        if status:
            raise_global_error(status)
        # The previous callback is released only after C stops calling it.
        _callback_keepalive = c_callback if callback is not None else None
        # The graph lines of CUDNNFE_LOG (_fe_log.py) follow the same callback and level.
        _fe_log.python_log_callback = callback
        _fe_log.python_log_level = int(_LEVELS[level])
