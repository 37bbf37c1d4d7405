"""Every function, constant and struct of the header is wrapped.

The header is read independently of the generator (the C preprocessor plus
regular expressions, see jlcheck.parse_header) and compared with the Julia
text of LibCuDNNFE.jl and with the manifest."""
import re
import shutil
import subprocess

import pytest

import jlcheck


def test_the_header_is_not_trivially_empty(header):
    # Guards the comparisons below against a reader that finds nothing.
    assert len(header.functions) >= 50
    assert len(header.structs) >= 7
    assert len(header.macros) >= 90
    assert {"cudnnfe_graph_t", "cudnnfe_handle_t"} <= set(header.opaque)


def test_every_function_is_wrapped(header, lib, manifest):
    c = set(header.functions)
    wrappers = {n for n, f in lib.functions.items() if f.get("symbol")}
    assert c == wrappers, "missing: %s; extra: %s" % (sorted(c - wrappers), sorted(wrappers - c))
    assert c == {f["name"] for f in manifest["functions"]}
    # Header order is kept (readability of the generated file).
    assert [f["name"] for f in manifest["functions"]] == header.function_order


@pytest.mark.parametrize("name", sorted(jlcheck.parse_lib_jl().functions))
def test_each_wrapper_is_one_ccall_to_its_own_symbol(lib, name):
    f = lib.functions[name]
    if name in ("find_libcudnnfe", "__init__"):
        assert "ccall" not in f["body"]
        return
    assert f["symbol"] == name
    assert f["library"] == "libcudnnfe"
    assert f["only_ccall"], "the wrapper must be exactly one ccall"
    # Arguments are passed through in order, unchanged.
    assert f["passed"] == f["args"]


def test_library_variable_is_a_global_set_in_init():
    text = open(jlcheck.LIB_JL, encoding="utf-8").read()
    assert re.search(r"^libcudnnfe = ", text, re.M), "libcudnnfe must be a (non-const) global"
    assert "global libcudnnfe = find_libcudnnfe()" in text
    assert 'get(ENV, "CUDNNFE_LIBRARY", "")' in text
    assert "Libdl.find_library" in text


def test_every_integer_macro_is_a_constant(header, lib, manifest):
    # `cc -dM -E` lists the macros the compiler sees; the include guard has no value.
    julia = {}
    for name, rhs in lib.consts.items():
        if not name.startswith("CUDNNFE_"):
            continue
        m = re.fullmatch(r"(?:(\w+)\()?(-?\d+)\)?", rhs)
        assert m, "constant %s = %s is not an integer literal" % (name, rhs)
        julia[name] = int(m.group(2))
    assert julia == header.macros
    assert {c["name"]: c["value"] for c in manifest["constants"]} == header.macros


def test_enumeration_constants_are_typed(header, lib, manifest):
    # CUDNNFE_DTYPE_FLOAT = cudnnfe_dtype_t(1): Int32, like the C typedef.
    groups = {c["name"]: c["group"] for c in manifest["constants"]}
    for prefix, typedef in [("CUDNNFE_STATUS_", "cudnnfe_status_t"), ("CUDNNFE_DTYPE_", "cudnnfe_dtype_t"),
                            ("CUDNNFE_TARGET_", "cudnnfe_target_t"),
                            ("CUDNNFE_HEUR_MODE_", "cudnnfe_heur_mode_t"),
                            ("CUDNNFE_CONV_MODE_", "cudnnfe_conv_mode_t"),
                            ("CUDNNFE_POINTWISE_", "cudnnfe_pointwise_mode_t"),
                            ("CUDNNFE_REDUCTION_", "cudnnfe_reduction_mode_t")]:
        names = [n for n in header.macros if n.startswith(prefix)]
        assert names, prefix
        for n in names:
            assert groups[n] == typedef, n
            assert lib.consts[n] == "%s(%d)" % (typedef, header.macros[n]), n
    for n in ("CUDNNFE_VERSION", "CUDNNFE_ABI_VERSION", "CUDNNFE_MAX_DIMS"):
        assert groups[n] is None
        assert lib.consts[n] == str(header.macros[n])


def test_every_scalar_typedef_is_an_alias(header, lib, manifest):
    for name, tokens in header.aliases.items():
        assert lib.consts.get(name) == jlcheck.C_TO_JULIA[" ".join(tokens)], name
    assert {t["name"] for t in manifest["typedefs"]} == set(header.aliases)


def test_every_opaque_type_is_an_opaque_julia_type(header, lib, manifest):
    for typedef, tag in header.opaque.items():
        assert lib.structs[tag] == {"mutable": True, "fields": []}, tag
        assert lib.consts[typedef] == tag
    assert {(o["name"], o["typedef"]) for o in manifest["opaque"]} == \
        {(tag, td) for td, tag in header.opaque.items()}


def test_every_struct_is_a_julia_struct_with_the_same_fields(header, lib, manifest):
    mstructs = {s["typedef"]: s for s in manifest["structs"]}
    assert set(mstructs) == set(header.structs)
    for typedef, s in header.structs.items():
        tag = s["tag"]
        assert lib.consts[typedef] == tag
        js = lib.structs[tag]
        assert not js["mutable"], "%s must be an immutable (isbits) struct" % tag
        assert [f for f, _ in js["fields"]] == [name for _, name, _ in s["fields"]]
        assert [f["name"] for f in mstructs[typedef]["fields"]] == [name for _, name, _ in s["fields"]]


def test_everything_is_exported(header, lib):
    exported = set(lib.exports)
    expected = set(header.functions) | set(header.macros) | set(header.aliases)
    expected |= set(header.opaque) | set(header.opaque.values())
    expected |= set(header.structs) | {s["tag"] for s in header.structs.values()}
    assert expected - exported == set()
    # And nothing that is not defined.
    defined = set(lib.functions) | set(lib.consts) | set(lib.structs)
    assert exported - defined == set()


def test_the_built_library_exports_exactly_the_wrapped_functions(header):
    path = jlcheck.find_library()
    if path is None:
        pytest.skip("no built libcudnnfe.so (build*/ or $CUDNNFE_LIBRARY)")
    if not shutil.which("nm"):
        pytest.skip("nm not found")
    out = subprocess.run(["nm", "-D", "--defined-only", path], check=True, capture_output=True,
                         text=True).stdout
    symbols = {line.split()[-1].split("@")[0] for line in out.splitlines()
               if line.split() and line.split()[-2] in ("T", "W")}
    exported = {s for s in symbols if s.startswith("cudnnfe_")}
    assert exported == set(header.functions), \
        "library %s: not in the header: %s; not in the library: %s" % (
            path, sorted(exported - set(header.functions)), sorted(set(header.functions) - exported))
