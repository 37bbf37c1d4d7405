"""Fixtures for the checks of CuDNNFE.jl that need no Julia.

Run with `python3 -m pytest bindings/julia/tests_py` from the repository root.
Needs pycparser (the generator), a C compiler; tree-sitter-julia and fatou
(PyPI) for the syntax and lint checks, which are skipped with a reason when
they are missing.
"""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jlcheck  # noqa: E402


@pytest.fixture(scope="session")
def header():
    if jlcheck.c_compiler() is None:
        if jlcheck.in_ci():
            pytest.fail("no C compiler (cc, gcc or clang) on PATH", pytrace=False)
        pytest.skip("no C compiler (cc, gcc or clang) on PATH")
    return jlcheck.parse_header()


@pytest.fixture(scope="session")
def lib():
    return jlcheck.parse_lib_jl()


@pytest.fixture(scope="session")
def manifest():
    with open(jlcheck.MANIFEST, encoding="utf-8") as f:
        return json.load(f)
