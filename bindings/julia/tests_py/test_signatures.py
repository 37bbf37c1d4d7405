"""Each ccall's argument and return types are what the table of C -> Julia
type mappings (jlcheck.expected_julia_type) gives for the C declaration."""
import pytest

import jlcheck

HEADER = jlcheck.parse_header() if jlcheck.c_compiler() else None
# Julia's reserved words (the manual's list), which cannot name an argument.
JULIA_KEYWORDS = {"baremodule", "begin", "break", "catch", "const", "continue", "do", "else",
                  "elseif", "end", "export", "false", "finally", "for", "function", "global",
                  "if", "import", "let", "local", "macro", "module", "quote", "return",
                  "struct", "true", "try", "using", "while"}
FUNCTIONS = sorted(HEADER.functions) if HEADER else []


def test_the_mapping_table():
    # The table itself, on the types the header uses and the shapes the
    # rules distinguish.
    h = HEADER
    if h is None:
        pytest.skip("no C compiler")
    cases = [
        ("int32_t", "param", "Int32"),
        ("int64_t", "param", "Int64"),
        ("uint32_t", "param", "UInt32"),
        ("size_t", "param", "Csize_t"),
        ("double", "param", "Cdouble"),
        ("void", "return", "Cvoid"),
        ("const char *", "param", "Cstring"),
        ("const char *", "return", "Cstring"),
        ("const char *", "field", "Ptr{Cchar}"),
        ("char *", "param", "Ptr{Cchar}"),
        ("const char **", "param", "Ptr{Cstring}"),
        ("int64_t *", "param", "Ptr{Int64}"),
        ("const int64_t *", "param", "Ptr{Int64}"),
        ("size_t *", "param", "Ptr{Csize_t}"),
        ("void *", "param", "Ptr{Cvoid}"),
        ("void *const *", "param", "Ptr{Ptr{Cvoid}}"),
        ("cudnnfe_dtype_t", "param", "cudnnfe_dtype_t"),
        ("cudnnfe_dtype_t *", "param", "Ptr{cudnnfe_dtype_t}"),
        ("cudnnfe_graph_t *", "param", "Ptr{cudnnfe_graph_t}"),
        ("cudnnfe_graph_t **", "param", "Ptr{Ptr{cudnnfe_graph_t}}"),
        ("const cudnnfe_sdpa_options_t *", "param", "Ptr{cudnnfe_sdpa_options_t}"),
    ]
    for c, role, julia in cases:
        assert jlcheck.expected_julia_type(jlcheck._tokens(c), h, role) == julia, c
    # A const char * followed by its size is a byte buffer, not a C string.
    assert jlcheck.expected_julia_type(jlcheck._tokens("const char *"), h, "param",
                                       jlcheck._tokens("size_t")) == "Ptr{Cchar}"


@pytest.mark.parametrize("name", FUNCTIONS)
def test_ccall_signature(lib, name):
    cf = HEADER.functions[name]
    jf = lib.functions[name]
    params = cf["params"]
    expected = [jlcheck.expected_julia_type(t, HEADER, "param",
                                            params[i + 1][0] if i + 1 < len(params) else None)
                for i, (t, _) in enumerate(params)]
    assert jf["types"] == expected
    assert jf["ret"] == jlcheck.expected_julia_type(cf["ret"], HEADER, "return")
    # Julia argument names are the C parameter names; one that is a Julia
    # keyword (a slice's `end`) gets a trailing underscore.
    assert jf["args"] == [n + "_" if n in JULIA_KEYWORDS else n for _, n in params]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_manifest_signature(manifest, lib, name):
    mf = {f["name"]: f for f in manifest["functions"]}[name]
    jf = lib.functions[name]
    assert [p["julia_type"] for p in mf["params"]] == jf["types"]
    assert mf["julia_return"] == jf["ret"]
    assert [p["name"] for p in mf["params"]] == [n for _, n in HEADER.functions[name]["params"]]
    c_types = [" ".join(p["c_type"].replace("*", " * ").split()) for p in mf["params"]]
    assert c_types == [" ".join(t) for t, _ in HEADER.functions[name]["params"]]


def test_enumeration_aliases_resolve_to_int32(lib):
    for name, tokens in HEADER.aliases.items():
        assert jlcheck.resolve_alias(lib, name) == jlcheck.C_TO_JULIA[" ".join(tokens)]


def test_status_returning_functions(lib):
    # Every fallible function returns cudnnfe_status_t (= Int32) to Julia.
    statuses = [n for n, f in HEADER.functions.items() if f["ret"] == ["cudnnfe_status_t"]]
    assert len(statuses) >= 45
    for n in statuses:
        assert jlcheck.resolve_alias(lib, lib.functions[n]["ret"]) == "Int32"
