"""Test setup: import the installed package, or the source tree when it is not installed.

Run as ``python3 -m pytest bindings/python/tests`` after
``pip install ./bindings/python``, or without installing with
``CUDNNFE_LIBRARY=/path/to/libcudnnfe.so``.
"""
import importlib.util
import sys
from pathlib import Path

import pytest

PYTHON_DIR = Path(__file__).resolve().parent.parent
REPO_ROOT = PYTHON_DIR.parent.parent

if importlib.util.find_spec("cudnnfe") is None:
    sys.path.insert(0, str(PYTHON_DIR))

import cudnnfe  # noqa: E402  (fails with the library search path if libcudnnfe is missing)


def pytest_report_header(config):
    lines = [f"cudnnfe: package {Path(cudnnfe.__file__).parent}, library {cudnnfe.library_path()}"]
    try:
        lines.append(f"cudnnfe: cuDNN {cudnnfe.backend_version()}, "
                     f"{cudnnfe.device_count()} CUDA device(s)")
    except cudnnfe.Error as exc:
        lines.append(f"cudnnfe: no GPU backend ({exc.message.splitlines()[0][:120]})")
    return lines


@pytest.fixture
def cpu():
    """The CPU reference target."""
    return cudnnfe.target.CPU_REFERENCE


@pytest.fixture
def rng():
    import numpy as np

    return np.random.default_rng(1234)
