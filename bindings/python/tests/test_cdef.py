"""The generated cffi declarations match the C header (and the generator's rules hold)."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

PYTHON_DIR = Path(__file__).resolve().parent.parent
HEADER = PYTHON_DIR.parent.parent / "include" / "cudnnfe" / "cudnnfe.h"
GENERATED = PYTHON_DIR / "cudnnfe" / "_cdef.py"
TOOL = PYTHON_DIR / "tools" / "gen_cdef.py"


def _load_tool():
    spec = importlib.util.spec_from_file_location("gen_cdef", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tool():
    if not HEADER.exists():
        pytest.skip(f"the C header is not at {HEADER} (not running from the repository)")
    return _load_tool()


def test_committed_cdef_is_up_to_date(tool):
    expected = tool.render(HEADER.read_text(encoding="utf-8"))
    actual = GENERATED.read_text(encoding="utf-8")
    assert actual == expected, (
        "bindings/python/cudnnfe/_cdef.py is stale: run "
        "`python3 bindings/python/tools/gen_cdef.py` and commit the result")


def test_committed_cffi_abi_module_is_up_to_date(tool):
    expected = tool.render_abi_module(HEADER.read_text(encoding="utf-8"))
    actual = (GENERATED.parent / "_cffi_abi.py").read_text(encoding="utf-8")
    assert actual == expected, (
        "bindings/python/cudnnfe/_cffi_abi.py is stale: run "
        "`python3 bindings/python/tools/gen_cdef.py` and commit the result")


def test_check_mode_passes_on_committed_file(tool):
    result = subprocess.run([sys.executable, str(TOOL), "--check"], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr


def test_check_mode_detects_staleness(tool, tmp_path):
    stale = tmp_path / "_cdef.py"
    stale.write_text(GENERATED.read_text(encoding="utf-8").replace("cudnnfe_graph_build",
                                                                   "cudnnfe_graph_bild"))
    result = subprocess.run([sys.executable, str(TOOL), "--check", "--output", str(stale)],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "stale" in result.stderr


def test_generator_keeps_integer_defines_and_drops_the_rest(tool):
    header = """
    /* comment */
    #ifndef GUARD_H
    #define GUARD_H
    #include <stdint.h>
    #ifdef __cplusplus
    extern "C" {
    #endif
    #define A_CONST 7 // trailing
    #define HEX 0x10
    typedef int32_t my_t; /* inline */
    int f(int x);
    #ifdef __cplusplus
    }
    #endif
    #endif
    """
    cdef, constants = tool.generate(header)
    assert constants == {"A_CONST": 7, "HEX": 16}
    assert "#define A_CONST 7" in cdef and "#define HEX 16" in cdef
    assert "extern" not in cdef and "include" not in cdef and "GUARD_H" not in cdef
    assert "comment" not in cdef and "inline" not in cdef
    assert "int f(int x);" in cdef


@pytest.mark.parametrize("bad", [
    "#define MAX(a, b) ((a) > (b) ? (a) : (b))\n",
    "#define NAME \"text\"\n",
    "#pragma once\n",
])
def test_generator_rejects_what_cffi_cannot_take(tool, bad):
    with pytest.raises(tool.HeaderError):
        tool.generate(bad)


def test_cdef_parses_and_matches_the_loaded_library():
    import cffi
    import cudnnfe
    from cudnnfe import _cdef

    ffi = cffi.FFI()
    ffi.cdef(_cdef.CDEF)
    assert _cdef.HEADER_VERSION == _cdef.CONSTANTS["CUDNNFE_VERSION"]
    assert cudnnfe.lib.cudnnfe_version() >= _cdef.HEADER_VERSION
    # every constant is reachable on the loaded library
    for name, value in _cdef.CONSTANTS.items():
        assert getattr(cudnnfe.lib, name) == value


def test_enums_cover_every_constant():
    from cudnnfe import _cdef, _enums

    for enum, prefix in _enums.PREFIXES.items():
        constants = {k[len(prefix):]: v for k, v in _cdef.CONSTANTS.items()
                     if k.startswith(prefix)}
        fe_only = _enums.FE_ONLY.get(enum, frozenset())
        members = {m.name: int(m) for m in enum if m.name not in fe_only}
        assert members == constants, f"{enum.__name__} differs from {prefix}* in the header"
        # Members kept for cudnn-frontend code only lie outside every C value.
        assert all(int(enum[n]) >= _enums.FE_ONLY_BASE for n in fe_only)
        assert not set(constants.values()) & {int(enum[n]) for n in fe_only}
