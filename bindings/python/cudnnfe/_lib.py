"""Loading ``libcudnnfe`` with cffi in ABI mode (``dlopen``; no compiler needed).

Search order:

1. ``CUDNNFE_LIBRARY``: the path of a ``libcudnnfe.so`` to load. When it is set,
   nothing else is tried, so that a wrong path is an error rather than a
   silent fallback.
2. The library bundled in the package (``cudnnfe/lib/libcudnnfe.so.0``), which
   ``pip install ./bindings/python`` builds with CMake.
3. The system: ``libcudnnfe.so.0`` through the dynamic loader's search path
   (``LD_LIBRARY_PATH``, ``ldconfig``), then ``ctypes.util.find_library``.

After loading, ``cudnnfe_check_version(CUDNNFE_VERSION, CUDNNFE_ABI_VERSION)``
(the values of the header the declarations were generated from) must succeed:
the library must be at least that version, with the same ABI major.

cuDNN and the CUDA runtime are loaded by the C library at first GPU use, in
the order of :mod:`cudnnfe._library` (explicit variable, the copy already
loaded in the process, search directories, system). Importing cudnnfe adds the
library directories of NVIDIA's wheels (``nvidia-cudnn-cu12``/``-cu13``,
``nvidia-cuda-runtime``) installed in this environment as search directories
(rule 3): they do not override a cuDNN that PyTorch, say, already loaded, and
``cudnnfe.library_info()`` names the rule that chose each file.

cffi releases the GIL around every call into the library, so long calls
(``cudnnfe_graph_build``, execution on the CPU reference) let other Python
threads run.
"""
from __future__ import annotations

import ctypes.util
import importlib.util
import os
from pathlib import Path
from typing import Any, Iterator, List, Tuple

# The declarations, compiled ahead by cffi (generated from the header with _cdef.py): no C
# is parsed at import.
from ._cdef import HEADER_ABI_VERSION, HEADER_VERSION
from ._cffi_abi import ffi

__all__ = ["ffi", "lib", "library_path"]

_PACKAGE_LIB_DIR = Path(__file__).resolve().parent / "lib"
_SONAME = f"libcudnnfe.so.{HEADER_ABI_VERSION}"


def _candidates() -> Iterator[Tuple[str, str]]:
    env = os.environ.get("CUDNNFE_LIBRARY")
    if env:
        yield "CUDNNFE_LIBRARY", env
        return
    for name in (_SONAME, "libcudnnfe.so"):
        path = _PACKAGE_LIB_DIR / name
        if path.exists():
            yield "bundled", str(path)
    yield "system", _SONAME
    found = ctypes.util.find_library("cudnnfe")
    if found:
        yield "system", found


def _load() -> Tuple[Any, str]:
    errors: List[str] = []
    for origin, path in _candidates():
        try:
            library = ffi.dlopen(path)
        except OSError as exc:
            errors.append(f"  {origin}: {path}: {exc}")
            if origin == "CUDNNFE_LIBRARY":
                break
            continue
        status = library.cudnnfe_check_version(HEADER_VERSION, HEADER_ABI_VERSION)
        if status != library.CUDNNFE_STATUS_OK:
            found = library.cudnnfe_version()
            raise ImportError(
                f"cudnnfe: {path} ({origin}) is version {found // 10000}.{found // 100 % 100}."
                f"{found % 100} ({found}); these bindings were generated from header version "
                f"{HEADER_VERSION} with ABI {HEADER_ABI_VERSION} and need a library at least "
                f"that new with the same ABI major. "
                + ffi.string(library.cudnnfe_last_error()).decode("utf-8", "replace"))
        return library, path
    raise ImportError(
        "cudnnfe: could not load libcudnnfe. Tried:\n" + "\n".join(errors) +
        "\nInstall the package with `pip install ./bindings/python` (which builds and bundles "
        "the library), or set CUDNNFE_LIBRARY to the path of libcudnnfe.so.")


lib, _path = _load()


def _wheel_lib_dirs(module: str, patterns: Tuple[str, ...]) -> List[str]:
    """The ``lib`` directories of an installed NVIDIA wheel that hold a file
    matching one of ``patterns``."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    dirs = []
    for location in spec.submodule_search_locations:
        lib_dir = Path(location, "lib")
        if any(any(lib_dir.glob(p)) for p in patterns):
            dirs.append(str(lib_dir))
    return dirs


def _add_wheel_search_dirs() -> None:
    """Hands the wheels' directories to the C library as search directories.
    A library already looked for (another binding used it first) keeps what
    it found: that refusal is not an error here."""
    wanted = (
        (lib.CUDNNFE_LIBRARY_CUDNN, _wheel_lib_dirs("nvidia.cudnn", ("libcudnn.so.9",))),
        (lib.CUDNNFE_LIBRARY_CUDART,
         _wheel_lib_dirs("nvidia.cu13", ("libcudart.so.13",)) +
         _wheel_lib_dirs("nvidia.cuda_runtime", ("libcudart.so.13", "libcudart.so.12"))),
    )
    for library, dirs in wanted:
        for directory in dirs:
            lib.cudnnfe_library_add_search_dir(library, directory.encode())


_add_wheel_search_dirs()


def library_path() -> str:
    """Path (or soname) of the loaded ``libcudnnfe`` shared library."""
    return _path
