"""One version for the C library, its header and every binding: the header's
CUDNNFE_VERSION_MAJOR / MINOR / PATCH. CMake and the Python package read it from there;
the crates and the Julia package must state it; Go's constants are generated from it."""
import re
from pathlib import Path

import cudnnfe

ROOT = Path(__file__).resolve().parents[3]


def header_version():
    text = (ROOT / "include" / "cudnnfe" / "cudnnfe.h").read_text()
    part = {k: int(re.search(rf"#define CUDNNFE_VERSION_{k} (\d+)", text).group(1))
            for k in ("MAJOR", "MINOR", "PATCH")}
    combined = int(re.search(r"#define CUDNNFE_VERSION (\d+)", text).group(1))
    assert combined == part["MAJOR"] * 10000 + part["MINOR"] * 100 + part["PATCH"]
    return f"{part['MAJOR']}.{part['MINOR']}.{part['PATCH']}"


def toml_version(path, key="version"):
    m = re.search(rf'(?m)^{key} = "([^"]+)"', (ROOT / path).read_text())
    assert m, f"no {key} in {path}"
    return m.group(1)


def test_every_binding_states_the_header_version():
    v = header_version()
    assert cudnnfe.__version__ == v
    assert toml_version("bindings/rust/Cargo.toml") == v  # the workspace's, both crates'
    dep = re.search(r'cudnnfe-sys = \{[^}]*version = "([^"]+)"',
                    (ROOT / "bindings/rust/cudnnfe/Cargo.toml").read_text())
    assert dep and dep.group(1) == v
    assert toml_version("bindings/julia/Project.toml") == v
    go = (ROOT / "bindings/go/internal/capi/capi.go").read_text()
    minor = re.search(r"const CUDNNFE_VERSION_MINOR int = (\d+)", go).group(1)
    assert minor == v.split(".")[1]


def test_cmake_and_the_python_package_read_it_from_the_header():
    cmake = (ROOT / "CMakeLists.txt").read_text()
    assert "CUDNNFE_VERSION_${part}" in cmake and "project(cudnnfe\n  VERSION ${CUDNNFE" in cmake
    pyproject = (ROOT / "bindings/python/pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and not re.search(r'(?m)^version =', pyproject)
    import sys
    sys.path.insert(0, str(ROOT / "bindings" / "python"))
    from _cudnnfe_build import package_version
    assert package_version() == header_version()
