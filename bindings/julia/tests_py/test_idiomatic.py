"""The idiomatic layer (src/CuDNNFE.jl and the files it includes) and the
Julia tests only use what exists: every `Lib.<name>` / `LibCuDNNFE.<name>`
is defined in the generated layer and every call passes as many arguments as
the wrapper takes; the idiomatic layer wraps every C function; exported and
imported names are defined."""
import pathlib
import os
import re

import pytest

import jlcheck

SRC = jlcheck.julia_sources(jlcheck.SRC_DIR)
TESTS = jlcheck.julia_sources(jlcheck.TEST_DIR)
IDIOMATIC = {k: v for k, v in SRC.items() if k != "LibCuDNNFE.jl"}


def _lib_names(lib):
    return set(lib.functions) | set(lib.consts) | set(lib.structs) | {"libcudnnfe", "Libdl"}


def _definitions(sources):
    """Names defined at any level of the given Julia sources."""
    names = set()
    for text in sources.values():
        code = jlcheck.strip_docstrings(jlcheck.strip_julia_comments(text))
        names |= set(re.findall(r"^\s*function ([A-Za-z_][\w!]*)\s*[({]", code, re.M))
        names |= set(re.findall(r"^([A-Za-z_][\w!]*)(?:\{[^}]*\})?\(.*?\)\s*(?:where .*?)?=[^=]", code, re.M))
        names |= set(re.findall(r"^\s*(?:mutable )?struct ([A-Za-z_]\w*)", code, re.M))
        names |= set(re.findall(r"^\s*const ([A-Za-z_]\w*)", code, re.M))
        names |= set(re.findall(r"^\s*module ([A-Za-z_]\w*)", code, re.M))
    return names


def test_the_idiomatic_layer_aliases_the_generated_module():
    main = SRC["CuDNNFE.jl"]
    assert 'include("LibCuDNNFE.jl")' in main
    assert re.search(r"^const Lib = LibCuDNNFE$", main, re.M)


@pytest.mark.parametrize("filename", sorted(IDIOMATIC))
def test_only_existing_generated_names_are_used(lib, filename):
    uses = jlcheck.qualified_uses(IDIOMATIC[filename], "Lib")
    missing = sorted({n for n, _ in uses} - _lib_names(lib))
    assert not missing, "%s uses Lib.%s, which LibCuDNNFE.jl does not define" % (filename, missing)


@pytest.mark.parametrize("filename", sorted(IDIOMATIC))
def test_calls_pass_as_many_arguments_as_the_wrapper_takes(lib, filename):
    for name, args in jlcheck.qualified_uses(IDIOMATIC[filename], "Lib"):
        if args is None or name not in lib.functions:
            continue
        assert len(args) == len(lib.functions[name]["args"]), \
            "%s: Lib.%s(%s) passes %d arguments; the C function takes %d (%s)" % (
                filename, name, ", ".join(args), len(args), len(lib.functions[name]["args"]),
                ", ".join(lib.functions[name]["args"]))


def test_every_c_function_is_used_by_the_idiomatic_layer(header):
    used = set()
    for text in IDIOMATIC.values():
        used |= {n for n, _ in jlcheck.qualified_uses(text, "Lib")}
    pending_file = pathlib.Path(__file__).resolve().parents[2] / "PENDING_IDIOMATIC.txt"
    functions_part = pending_file.read_text().split("\n[fields]\n")[0]  # then pending fields
    pending = {line.strip() for line in functions_part.splitlines()
               if line.strip() and not line.startswith("#")}
    unused = sorted(set(header.functions) - used)
    assert sorted(set(unused) - pending) == [], (
        "C functions with no idiomatic wrapper: %s" % sorted(set(unused) - pending))
    stale = sorted(pending - set(unused))
    assert not stale, "bindings/PENDING_IDIOMATIC.txt lists wrapped or removed functions: %s" % stale


def test_constant_groups_exist(header):
    # _prefixed_constants("CUDNNFE_X_") builds the Symbol tables from the
    # generated constants; each prefix must select some.
    prefixes = set()
    for text in IDIOMATIC.values():
        prefixes |= set(re.findall(r'_prefixed_constants\("(CUDNNFE_\w+_)"\)', text))
    assert prefixes >= {"CUDNNFE_STATUS_", "CUDNNFE_DTYPE_", "CUDNNFE_TARGET_", "CUDNNFE_HEUR_MODE_",
                        "CUDNNFE_CONV_MODE_", "CUDNNFE_POINTWISE_", "CUDNNFE_REDUCTION_"}
    for p in prefixes:
        assert any(n.startswith(p) for n in header.macros), p
    # No two groups overlap (one prefix must not swallow another's constants).
    for p in prefixes:
        for q in prefixes - {p}:
            assert not q.startswith(p), (p, q)


def test_every_source_file_is_included_once():
    main = SRC["CuDNNFE.jl"]
    included = re.findall(r'^include\("([^"]+)"\)', main, re.M)
    assert sorted(included) == sorted(set(included))
    assert set(included) == set(SRC) - {"CuDNNFE.jl"}


def test_exported_names_are_defined():
    main = jlcheck.strip_julia_comments(SRC["CuDNNFE.jl"])
    exported = set()
    for m in re.finditer(r"^export (.*?)(?=\n\S|\Z)", main, re.M | re.S):
        exported |= {n.strip() for n in m.group(1).replace("\n", " ").split(",") if n.strip()}
    assert len(exported) > 40
    undefined = sorted(exported - _definitions(IDIOMATIC))
    assert not undefined, "exported but not defined: %s" % undefined


def test_names_the_tests_import_are_defined(lib):
    defined = _definitions(IDIOMATIC) | {"LibCuDNNFE", "Lib", "Libdl"}
    code = jlcheck.strip_julia_comments(TESTS["runtests.jl"])
    m = re.search(r"^using CuDNNFE: (.*?)\n(?=\S)", code, re.M | re.S)
    imported = {n.strip() for n in m.group(1).replace("\n", " ").split(",")}
    assert sorted(imported - defined) == []
    for filename, text in TESTS.items():
        qualified = {n for n, _ in jlcheck.qualified_uses(text, "CuDNNFE")}
        assert sorted(qualified - defined) == [], filename
        for name, args in jlcheck.qualified_uses(text, "LibCuDNNFE"):
            assert name in _lib_names(lib), "%s uses LibCuDNNFE.%s" % (filename, name)
            if args is not None and name in lib.functions:
                assert len(args) == len(lib.functions[name]["args"]), (filename, name, args)


def test_test_includes_exist():
    for filename, text in TESTS.items():
        for inc in re.findall(r'include\("([^"]+)"\)', jlcheck.strip_julia_comments(text)):
            assert os.path.isfile(os.path.join(jlcheck.TEST_DIR, inc)), (filename, inc)
