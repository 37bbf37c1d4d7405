"""Struct layouts: the C compiler's sizeof/offsetof for every field of every
struct of the header (a C program generated from the header) equal what the
Julia declarations imply under the C layout rules Julia uses for isbits
structs, and what the manifest records."""
import os
import subprocess

import pytest

import jlcheck


@pytest.fixture(scope="session")
def c_layout(header, tmp_path_factory):
    """{typedef: {"size", "align", "fields": {name: (offset, size)}}} and the
    pointer size, from a compiled C program."""
    lines = [
        "#include <stddef.h>",
        "#include <stdio.h>",
        '#include "cudnnfe/cudnnfe.h"',
        "#define ALIGNOF(T) offsetof(struct { char c; T t; }, t)",
        "int main(void) {",
        '  printf("pointer %zu\\n", sizeof(void *));',
    ]
    for typedef, s in header.structs.items():
        lines.append('  printf("struct %s %%zu %%zu\\n", sizeof(%s), ALIGNOF(%s));'
                     % (typedef, typedef, typedef))
        for _, name, _ in s["fields"]:
            lines.append('  printf("field %s %s %%zu %%zu\\n", offsetof(%s, %s), sizeof(((%s *)0)->%s));'
                         % (typedef, name, typedef, name, typedef, name))
    lines += ["  return 0;", "}"]
    d = tmp_path_factory.mktemp("layout")
    src, exe = d / "layout.c", d / "layout"
    src.write_text("\n".join(lines) + "\n")
    subprocess.run([jlcheck.c_compiler(), "-std=c99", "-Wall", "-Werror", jlcheck.EXPERIMENTAL,
                    "-I", jlcheck.INCLUDE_DIR,
                    str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    result, pointer = {}, None
    for line in out.splitlines():
        parts = line.split()
        if parts[0] == "pointer":
            pointer = int(parts[1])
        elif parts[0] == "struct":
            result[parts[1]] = {"size": int(parts[2]), "align": int(parts[3]), "fields": {}}
        else:
            result[parts[1]]["fields"][parts[2]] = (int(parts[3]), int(parts[4]))
    return result, pointer


STRUCTS = sorted(jlcheck.parse_header().structs) if jlcheck.c_compiler() else []


def test_every_struct_was_measured(header, c_layout):
    layout, pointer = c_layout
    assert set(layout) == set(header.structs)
    assert pointer in (4, 8)


@pytest.mark.parametrize("typedef", STRUCTS)
def test_julia_layout_matches_c(header, lib, c_layout, typedef):
    layout, pointer = c_layout
    c = layout[typedef]
    tag = jlcheck.resolve_alias(lib, typedef)
    fields, size, align = jlcheck.julia_struct_layout(lib, tag, pointer)
    assert [f for f, _, _ in fields] == list(c["fields"])
    for name, offset, fsize in fields:
        assert (offset, fsize) == c["fields"][name], "%s.%s" % (typedef, name)
    assert size == c["size"]
    assert align == c["align"]


@pytest.mark.parametrize("typedef", STRUCTS)
def test_manifest_layout_matches_c(manifest, c_layout, typedef):
    layout, pointer = c_layout
    if pointer != manifest["abi"]["pointer_size"]:
        pytest.skip("the manifest describes %d-byte pointers" % manifest["abi"]["pointer_size"])
    c = layout[typedef]
    m = {s["typedef"]: s for s in manifest["structs"]}[typedef]
    assert m["size"] == c["size"]
    assert m["align"] == c["align"]
    assert {f["name"]: (f["offset"], f["size"]) for f in m["fields"]} == c["fields"]


@pytest.mark.parametrize("typedef", STRUCTS)
def test_manifest_julia_types_are_the_declared_ones(manifest, lib, typedef):
    m = {s["typedef"]: s for s in manifest["structs"]}[typedef]
    declared = lib.structs[m["name"]]["fields"]
    assert [(f["julia_name"], f["julia_type"]) for f in m["fields"]] == declared


def test_options_structs_start_with_struct_size(header, lib):
    # ABI.md section 5: options structs start with their size, a size_t.
    for typedef, s in header.structs.items():
        if typedef.endswith("_options_t"):
            assert s["fields"][0][:2] == (["size_t"], "struct_size"), typedef
            assert lib.structs[s["tag"]]["fields"][0] == ("struct_size", "Csize_t")


def test_layout_rules_catch_a_wrong_declaration(lib):
    # The Julia-side computation is not vacuous: a field declared Int32
    # instead of Int64 moves every later offset.
    bad = jlcheck.JuliaLib()
    bad.consts = dict(lib.consts)
    bad.structs = dict(lib.structs)
    fields = list(lib.structs["cudnnfe_sdpa_options"]["fields"])
    fields[[f for f, _ in fields].index("bias")] = ("bias", "Int32")
    bad.structs["cudnnfe_sdpa_options"] = {"mutable": False, "fields": fields}
    good = jlcheck.julia_struct_layout(lib, "cudnnfe_sdpa_options", 8)
    wrong = jlcheck.julia_struct_layout(bad, "cudnnfe_sdpa_options", 8)
    assert good != wrong
