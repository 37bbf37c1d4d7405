"""abi/manifest.json is what scripts/gen_abi_manifest.py makes of the header
today, its layout is the C compiler's, and the parser refuses what no
binding could map.

Run: python3 -m pytest abi (needs pycparser; the layout check needs cc)."""
import json
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
GENERATOR = os.path.join(REPO, "scripts", "gen_abi_manifest.py")
MANIFEST = os.path.join(HERE, "manifest.json")
HEADER = os.path.join(REPO, "include", "cudnnfe", "cudnnfe.h")


def run(*args):
    return subprocess.run([sys.executable, GENERATOR, *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def manifest():
    with open(MANIFEST, encoding="utf-8") as f:
        return json.load(f)


def test_committed_manifest_is_not_stale(tmp_path):
    out = tmp_path / "manifest.json"
    r = run("--out", str(out))
    assert r.returncode == 0, r.stderr
    with open(MANIFEST, "rb") as f:
        assert out.read_bytes() == f.read(), \
            "abi/manifest.json is stale: run python3 scripts/gen_abi_manifest.py"
    assert run("--check").returncode == 0


def _header_copy(tmp_path, extra):
    h = tmp_path / "cudnnfe.h"
    text = open(HEADER, encoding="utf-8").read()
    marker = "#ifdef __cplusplus\n} /* extern \"C\" */"
    assert marker in text
    h.write_text(text.replace(marker, extra + "\n" + marker), encoding="utf-8")
    return h


def test_check_mode_detects_a_changed_header(tmp_path):
    h = _header_copy(tmp_path, "cudnnfe_status_t cudnnfe_graph_frobnicate(cudnnfe_graph_t *graph);")
    r = run("--check", "--header", str(h))
    assert r.returncode == 1 and "stale" in r.stderr


def test_a_new_options_struct_is_described(tmp_path):
    h = _header_copy(tmp_path, "\n".join([
        "typedef struct cudnnfe_frob_options {",
        "  size_t struct_size;",
        "  const char *name;",
        "  double x[2]; /* default 0.5 */",
        "} cudnnfe_frob_options_t;",
        "void cudnnfe_frob_options_init_sized(cudnnfe_frob_options_t *o, size_t struct_size);",
        "cudnnfe_status_t cudnnfe_graph_frobnicate(cudnnfe_graph_t *graph,"
        " const cudnnfe_frob_options_t *o);",
    ]))
    out = tmp_path / "m.json"
    assert run("--header", str(h), "--out", str(out)).returncode == 0
    s = {s["typedef"]: s for s in json.loads(out.read_text())["structs"]}["cudnnfe_frob_options_t"]
    assert s["init"] == "cudnnfe_frob_options_init_sized" and s["options"]
    assert s["used_by"] == ["cudnnfe_graph_frobnicate"]
    x = s["fields"][2]
    assert (x["name"], x["c_type"], x["offset"], x["size"], x["default"]) == \
        ("x", "double[2]", 16, 16, "0.5")
    assert s["size"] == 32


@pytest.mark.parametrize("extra", [
    "#define CUDNNFE_SQUARE(x) ((x) * (x))",
    "#define CUDNNFE_NAME \"cudnnfe\"",
    "int cudnnfe_printf(const char *fmt, ...);",
    "typedef struct cudnnfe_bits { unsigned a : 3; } cudnnfe_bits_t;",
    "cudnnfe_status_t cudnnfe_takes_long(long double x);",
    "#pragma once",
])
def test_parser_refuses_what_no_binding_can_map(tmp_path, extra):
    out = tmp_path / "x.json"
    r = run("--header", str(_header_copy(tmp_path, extra)), "--out", str(out))
    assert r.returncode == 2, r.stderr
    assert not out.exists()


def test_enumerations_and_options_are_indexed(manifest):
    assert "CUDNNFE_DTYPE_FLOAT" in manifest["enums"]["cudnnfe_dtype_t"]
    options = [s["typedef"] for s in manifest["structs"] if s["options"]]
    assert "cudnnfe_sdpa_options_t" in options and "cudnnfe_build_options_t" in options
    for s in manifest["structs"]:
        if s["options"]:
            assert s["init"], "%s has no cudnnfe_*_init_sized function" % s["typedef"]


def test_layout_is_the_c_compilers(manifest, tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler")
    # Every struct, those of the experimental part included.
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#define CUDNNFE_EXPERIMENTAL',
             '#include "cudnnfe/cudnnfe.h"',
             "int main(void) {"]
    for s in manifest["structs"]:
        t = s["typedef"]
        lines.append('  printf("%s %%zu\\n", sizeof(%s));' % (t, t))
        for f in s["fields"]:
            lines.append('  printf("%s.%s %%zu\\n", offsetof(%s, %s));' % (t, f["name"], t,
                                                                             f["name"]))
    lines += ["  return 0;", "}"]
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines) + "\n")
    exe = tmp_path / "layout"
    subprocess.run([cc, "-I", os.path.join(REPO, "include"), str(src), "-o", str(exe)],
                   check=True)
    got = dict(line.split() for line in subprocess.run(
        [str(exe)], capture_output=True, text=True, check=True).stdout.splitlines())
    for s in manifest["structs"]:
        assert int(got[s["typedef"]]) == s["size"], s["typedef"]
        for f in s["fields"]:
            assert int(got[s["typedef"] + "." + f["name"]]) == f["offset"], \
                (s["typedef"], f["name"])
