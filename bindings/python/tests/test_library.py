"""Which cuDNN the library loads and why (``cudnnfe.library_info``), the wheel
search directories, and the log callback. The fakes are compiled from
``tests/discovery/fake_cudnn.c`` (skipped where there is no C compiler or no
source tree); each discovery case runs in a fresh interpreter because the C
library looks for cuDNN once per process."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import cudnnfe
from conftest import REPO_ROOT

FAKE_SOURCE = REPO_ROOT / "tests" / "discovery" / "fake_cudnn.c"


def fake_cudnn(directory: Path, version: int) -> Path:
    """Compiles a stand-in libcudnn.so.9 reporting `version` into `directory`."""
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not compiler or not FAKE_SOURCE.exists():
        pytest.skip("needs a C compiler and tests/discovery/fake_cudnn.c")
    directory.mkdir(parents=True, exist_ok=True)
    out = directory / "libcudnn.so.9"
    subprocess.run([compiler, "-shared", "-fPIC", f"-DFAKE_CUDNN_VERSION={version}",
                    "-Wl,-soname,libcudnn.so.9", "-o", str(out), str(FAKE_SOURCE)], check=True)
    return out


PROBE = """
import ctypes, dataclasses, json, sys
for path in sys.argv[1:]:
    ctypes.CDLL(path)  # as PyTorch loads its own cuDNN before cudnnfe is used
import cudnnfe
print(json.dumps(dataclasses.asdict(cudnnfe.library_info())))
"""


def probe(preload=(), pythonpath=(), **env_overrides):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDNNFE_CUDNN")}
    env.update(env_overrides)
    paths = [str(p) for p in pythonpath] + [str(Path(cudnnfe.__file__).parent.parent)]
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", PROBE, *map(str, preload)], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_library_info_names_this_library():
    info = cudnnfe.library_info()
    assert Path(info.cudnnfe_path).name.startswith("libcudnnfe.so")
    assert info.cudnn_origin in ("environment", "already loaded", "search directory", "system",
                                 "not loaded")
    if info.cudnn_origin == "not loaded":
        assert info.cudnn_path == "" and info.cudnn_version == 0 and info.cudnn_reason
    else:
        assert info.cudnn_version >= 90000 and info.cudnn_reason


def test_wheel_directory_is_a_search_dir_not_an_override(tmp_path):
    wheel_lib = tmp_path / "site" / "nvidia" / "cudnn" / "lib"
    fake_cudnn(wheel_lib, 91234)
    info = probe(pythonpath=[tmp_path / "site"])
    assert info["cudnn_origin"] == "search directory", info
    assert info["cudnn_path"] == str(wheel_lib / "libcudnn.so.9")
    assert info["cudnn_version"] == 91234
    assert str(wheel_lib) in info["cudnn_reason"]


def test_cudnn_already_loaded_wins_over_the_wheel(tmp_path):
    wheel_lib = tmp_path / "site" / "nvidia" / "cudnn" / "lib"
    fake_cudnn(wheel_lib, 91234)
    framework = fake_cudnn(tmp_path / "framework", 91900)
    info = probe(preload=[framework], pythonpath=[tmp_path / "site"])
    assert info["cudnn_origin"] == "already loaded", info
    assert info["cudnn_path"] == str(framework)
    assert info["cudnn_version"] == 91900


def test_explicit_variable_wins_and_does_not_fall_back(tmp_path):
    wheel_lib = tmp_path / "site" / "nvidia" / "cudnn" / "lib"
    fake_cudnn(wheel_lib, 91234)
    explicit = fake_cudnn(tmp_path / "explicit", 91111)
    info = probe(pythonpath=[tmp_path / "site"], CUDNNFE_CUDNN_LIBRARY=str(explicit))
    assert (info["cudnn_origin"], info["cudnn_version"]) == ("environment", 91111), info
    missing = tmp_path / "missing" / "libcudnn.so.9"
    info = probe(pythonpath=[tmp_path / "site"], CUDNNFE_CUDNN_LIBRARY=str(missing))
    assert info["cudnn_origin"] == "not loaded", info
    assert "CUDNNFE_CUDNN_LIBRARY" in info["cudnn_reason"] and str(missing) in info["cudnn_reason"]


def test_search_dir_after_loading_is_refused():
    cudnnfe.library_info()
    with pytest.raises(cudnnfe.WrongStateError, match="already been looked for"):
        cudnnfe.add_library_search_dir("cudnn", "/late")
    with pytest.raises(ValueError, match="'cudnn' or 'cudart'"):
        cudnnfe.add_library_search_dir("cublas", "/x")


def _build_cpu_graph(name):
    g = cudnnfe.pygraph(io_data_type=cudnnfe.data_type.FLOAT,
                        compute_data_type=cudnnfe.data_type.FLOAT,
                        intermediate_data_type=cudnnfe.data_type.FLOAT,
                        target=cudnnfe.target.CPU_REFERENCE, name=name)
    x = g.tensor(dim=[2, 3], stride=[3, 1], data_type=cudnnfe.data_type.FLOAT)
    g.add(x, x).set_output(True)
    g.build()


def test_log_callback_receives_build_lines_and_can_be_removed():
    lines = []
    cudnnfe.set_log_callback(lambda level, message: lines.append((level, message)), "debug")
    try:
        _build_cpu_graph("logged_from_python")
    finally:
        cudnnfe.set_log_callback(None, "off")
    assert any(level == "info" and 'build "logged_from_python": CPU reference plan' in message
               for level, message in lines), lines
    count = len(lines)
    _build_cpu_graph("not_logged")
    assert len(lines) == count
    with pytest.raises(ValueError, match="level must be one of"):
        cudnnfe.set_log_callback(None, "verbose")


def test_cudnnfe_log_environment_variable_logs_to_stderr():
    # The package's directory first, keeping the rest (cffi may come from PYTHONPATH too).
    path = [str(Path(cudnnfe.__file__).parent.parent), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, CUDNNFE_LOG="info", PYTHONPATH=os.pathsep.join(p for p in path if p))
    code = ("import cudnnfe\n"
            "g = cudnnfe.pygraph(io_data_type=cudnnfe.data_type.FLOAT, "
            "compute_data_type=cudnnfe.data_type.FLOAT, target=cudnnfe.target.CPU_REFERENCE, "
            "name='env_logged')\n"
            "x = g.tensor(dim=[2], stride=[1], data_type=cudnnfe.data_type.FLOAT)\n"
            "g.add(x, x).set_output(True)\n"
            "g.build()\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    assert 'cudnnfe [info] build "env_logged": CPU reference plan' in out.stderr, out.stderr
