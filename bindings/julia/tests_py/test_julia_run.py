"""Runs the Julia test suite itself where a `julia` executable is found:
`julia --project=bindings/julia -e 'using Pkg; Pkg.test()'`, with
CUDNNFE_LIBRARY pointing at the built library when there is one. Skipped,
with the reason printed, where there is no Julia (as on the machines this
project is built on: Julia is in neither Debian 12 nor PyPI)."""
import os
import shutil
import subprocess

import pytest

import jlcheck


def test_pkg_test():
    julia = os.environ.get("JULIA") or shutil.which("julia")
    if not julia:
        reason = "no `julia` executable on PATH (set JULIA=/path/to/julia): Pkg.test() not run"
        print("SKIP:", reason)
        pytest.skip(reason)
    env = dict(os.environ)
    lib = jlcheck.find_library()
    if lib and "CUDNNFE_LIBRARY" not in env:
        env["CUDNNFE_LIBRARY"] = lib
    r = subprocess.run([julia, "--project=" + jlcheck.PKG, "-e", "using Pkg; Pkg.test()"],
                       cwd=jlcheck.REPO, env=env, capture_output=True, text=True, timeout=3600)
    print(r.stdout[-20000:])
    print(r.stderr[-20000:])
    assert r.returncode == 0, "Pkg.test() failed (exit %d)" % r.returncode
