"""In-tree PEP 517 backend: setuptools' build_meta plus build requirements that
are asked for only when this machine lacks them.

* ``cmake>=3.18`` when no cmake of that version is on PATH;
* ``ninja`` when no ninja is on PATH.

Nothing from NVIDIA: the library declares what it uses of cuDNN and the CUDA
runtime (src/backend/nvidia_api.h) and loads both at run time.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from typing import Any, Dict, List, Optional

from setuptools import build_meta as _orig
from setuptools.build_meta import *  # noqa: F401,F403  (build_wheel, build_sdist, ...)

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _cmake_ok() -> bool:
    exe = shutil.which("cmake")
    if not exe:
        return False
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    m = re.search(r"(\d+)\.(\d+)", out)
    return bool(m) and (int(m.group(1)), int(m.group(2))) >= (3, 18)


def _extra() -> List[str]:
    if os.environ.get("CUDNNFE_PREBUILT_LIBRARY"):
        return []
    reqs = []
    if not _cmake_ok():
        reqs.append("cmake>=3.18")
    if not shutil.which("ninja"):
        reqs.append("ninja")
    return reqs


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return _orig.get_requires_for_build_wheel(config_settings) + _extra()


def get_requires_for_build_editable(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return _orig.get_requires_for_build_editable(config_settings) + _extra()
