"""Build helpers shared by setup.py and the in-tree build backend.

``build_library`` runs CMake on the cudnnfe repository and returns the path of
the built ``libcudnnfe.so.<ABI>``. Environment variables:

* ``CUDNNFE_PREBUILT_LIBRARY``: bundle this library instead of building;
* ``CUDNNFE_SOURCE_DIR``: the repository (default: two levels above this file);
* ``CUDNNFE_CMAKE_ARGS``: extra arguments for the CMake configure step;
* ``CMAKE_BUILD_PARALLEL_LEVEL``: build jobs (default 2).

No cuDNN or CUDA headers are needed: the library declares what it uses of
both APIs (src/backend/nvidia_api.h) and loads them at run time.
"""
from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent

def source_dir() -> Path:
    return Path(os.environ.get("CUDNNFE_SOURCE_DIR") or HERE.parent.parent).resolve()


def abi_version(src: Path) -> str:
    header = (src / "include" / "cudnnfe" / "cudnnfe.h").read_text(encoding="utf-8")
    m = re.search(r"#define\s+CUDNNFE_ABI_VERSION\s+(\d+)", header)
    if not m:
        raise RuntimeError(f"CUDNNFE_ABI_VERSION not found in {src}/include/cudnnfe/cudnnfe.h")
    return m.group(1)


def package_version() -> str:
    """The package's version: the header's, as the generated cdef (cudnnfe/_cdef.py) holds it."""
    text = (HERE / "cudnnfe" / "_cdef.py").read_text(encoding="utf-8")
    m = re.search(r"^HEADER_VERSION = (\d+)$", text, re.M)
    if not m:
        raise RuntimeError("HEADER_VERSION not found in cudnnfe/_cdef.py")
    v = int(m.group(1))
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}"


def build_library(build_dir: Path, log=print) -> Path:
    """Build libcudnnfe.so with CMake (or take CUDNNFE_PREBUILT_LIBRARY); return its path."""
    prebuilt = os.environ.get("CUDNNFE_PREBUILT_LIBRARY")
    if prebuilt:
        path = Path(prebuilt).resolve()
        if not path.is_file():
            raise RuntimeError(f"CUDNNFE_PREBUILT_LIBRARY={prebuilt} is not a file")
        return path
    src = source_dir()
    if not (src / "CMakeLists.txt").is_file() or not (src / "include/cudnnfe/cudnnfe.h").is_file():
        raise RuntimeError(
            f"cudnnfe's C sources were not found at {src}. Install from the repository "
            "(pip install ./bindings/python), or set CUDNNFE_SOURCE_DIR to the repository, or "
            "CUDNNFE_PREBUILT_LIBRARY to a built libcudnnfe.so.")
    cmake = shutil.which("cmake")
    if not cmake:
        raise RuntimeError("cmake (>= 3.18) is needed to build libcudnnfe: pip install cmake")
    build_dir.mkdir(parents=True, exist_ok=True)
    args = [cmake, "-S", str(src), "-B", str(build_dir),
            "-DCMAKE_BUILD_TYPE=Release", "-DCUDNNFE_BUILD_TESTS=OFF",
            "-DCUDNNFE_BUILD_EXAMPLES=OFF"]
    cache = build_dir / "CMakeCache.txt"
    if shutil.which("ninja") and (not cache.exists() or "CMAKE_GENERATOR:INTERNAL=Ninja"
                                  in cache.read_text(errors="replace")):
        args += ["-G", "Ninja"]
    args += shlex.split(os.environ.get("CUDNNFE_CMAKE_ARGS", ""))
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")
    log("cudnnfe: " + " ".join(shlex.quote(a) for a in args))
    subprocess.run(args, check=True)
    build = [cmake, "--build", str(build_dir), "--target", "cudnnfe", "-j", jobs]
    log("cudnnfe: " + " ".join(build))
    subprocess.run(build, check=True)
    soname = f"libcudnnfe.so.{abi_version(src)}"
    found = sorted(glob.glob(str(build_dir / "**" / soname), recursive=True))
    if not found:
        raise RuntimeError(f"the CMake build produced no {soname} under {build_dir}")
    return Path(found[0]).resolve()
