"""The committed generator outputs are up to date, and the generator fails
loudly on what it cannot wrap."""
import hashlib
import os
import shutil
import subprocess
import sys

import pytest

import jlcheck

pycparser = jlcheck.require("pycparser", "pip install pycparser: the generator needs it")


def run_generator(*args):
    return subprocess.run([sys.executable, jlcheck.GENERATOR, *args], capture_output=True, text=True)


def test_regenerating_is_byte_identical(tmp_path):
    jl = tmp_path / "LibCuDNNFE.jl"
    mf = tmp_path / "manifest.json"
    r = run_generator("--julia-out", str(jl), "--manifest-out", str(mf))
    assert r.returncode == 0, r.stderr
    with open(jlcheck.LIB_JL, "rb") as f:
        committed_jl = f.read()
    with open(jlcheck.MANIFEST, "rb") as f:
        committed_mf = f.read()
    assert jl.read_bytes() == committed_jl, \
        "bindings/julia/src/LibCuDNNFE.jl is stale: run python3 bindings/julia/gen/generate.py"
    assert mf.read_bytes() == committed_mf, \
        "bindings/julia/gen/manifest.json is stale: run python3 bindings/julia/gen/generate.py"


def test_check_mode_passes_on_committed_outputs():
    r = run_generator("--check")
    assert r.returncode == 0, r.stderr


def test_generation_is_deterministic(tmp_path):
    outs = []
    for i in range(2):
        jl, mf = tmp_path / ("a%d.jl" % i), tmp_path / ("m%d.json" % i)
        assert run_generator("--julia-out", str(jl), "--manifest-out", str(mf)).returncode == 0
        outs.append((jl.read_bytes(), mf.read_bytes()))
    assert outs[0] == outs[1]


def test_manifest_records_the_header_hash(manifest):
    with open(jlcheck.HEADER, "rb") as f:
        assert manifest["header_sha256"] == hashlib.sha256(f.read()).hexdigest()
    assert manifest["header"] == "include/cudnnfe/cudnnfe.h"


def _header_copy(tmp_path, extra):
    h = tmp_path / "cudnnfe.h"
    text = open(jlcheck.HEADER, encoding="utf-8").read()
    marker = "#ifdef __cplusplus\n} /* extern \"C\" */"
    assert marker in text
    h.write_text(text.replace(marker, extra + "\n" + marker), encoding="utf-8")
    return h


def test_check_mode_detects_a_changed_header(tmp_path):
    h = _header_copy(tmp_path, "cudnnfe_status_t cudnnfe_graph_frobnicate(cudnnfe_graph_t *graph);")
    r = run_generator("--check", "--header", str(h))
    assert r.returncode == 1
    assert "stale" in r.stderr


def test_new_function_constant_and_struct_are_generated(tmp_path):
    h = _header_copy(tmp_path, "\n".join([
        "#define CUDNNFE_FROB_LIMIT 42",
        "typedef struct cudnnfe_frob_options { size_t struct_size; double x[2]; } cudnnfe_frob_options_t;",
        "cudnnfe_status_t cudnnfe_graph_frobnicate(cudnnfe_graph_t *graph, const cudnnfe_frob_options_t *o);",
    ]))
    jl, mf = tmp_path / "Lib.jl", tmp_path / "m.json"
    r = run_generator("--header", str(h), "--julia-out", str(jl), "--manifest-out", str(mf))
    assert r.returncode == 0, r.stderr
    lib = jlcheck.parse_lib_jl(str(jl))
    assert lib.consts["CUDNNFE_FROB_LIMIT"] == "42"
    assert lib.structs["cudnnfe_frob_options"]["fields"] == [("struct_size", "Csize_t"),
                                                             ("x", "NTuple{2, Cdouble}")]
    f = lib.functions["cudnnfe_graph_frobnicate"]
    assert f["types"] == ["Ptr{cudnnfe_graph_t}", "Ptr{cudnnfe_frob_options_t}"]
    assert "cudnnfe_graph_frobnicate" in lib.exports


@pytest.mark.parametrize("extra", [
    "#define CUDNNFE_SQUARE(x) ((x) * (x))",
    "#define CUDNNFE_NAME \"cudnnfe\"",
    "int cudnnfe_printf(const char *fmt, ...);",
    "typedef struct cudnnfe_bits { unsigned a : 3; } cudnnfe_bits_t;",
    "cudnnfe_status_t cudnnfe_takes_long(long double x);",
    "#pragma once",
])
def test_generator_refuses_what_it_cannot_wrap(tmp_path, extra):
    h = _header_copy(tmp_path, extra)
    r = run_generator("--header", str(h), "--julia-out", str(tmp_path / "x.jl"),
                      "--manifest-out", str(tmp_path / "x.json"))
    assert r.returncode != 0
    assert not (tmp_path / "x.jl").exists()
