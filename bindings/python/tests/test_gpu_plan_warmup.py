"""The engine preload's plan-cache warm-up (docs/plans.md) in new processes on the GPU.

A first process builds a matmul with CUDNNFE_PLAN_CACHE_DIR set (the plan goes to the
directory). A second one makes its handle, lets the preload thread run, and builds the
same graph: the plan must come from the in-process cache the warm-up filled, and compute
what torch computes. A third, with CUDNNFE_PRELOAD=0, reads the directory itself.

Skipped, with the reason shown, without torch or a CUDA device.
"""
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch", reason="GPU tests need torch, which is not installed")
if not torch.cuda.is_available():
    pytest.skip("GPU tests need a CUDA device; torch sees none", allow_module_level=True)

# Builds a 64x128x32 FP16 matmul, runs it, and prints the plan's source and the largest
# error against torch.matmul. With "wait", first polls the process's plan cache until the
# warm-up has put a plan there (at most 20 s).
CHILD = textwrap.dedent("""
    import sys, time
    import torch, cudnnfe
    handle = cudnnfe.create_handle()
    if sys.argv[1] == "wait":
        deadline = time.time() + 20
        while cudnnfe.plan_cache_stats().entries == 0 and time.time() < deadline:
            time.sleep(0.05)
    a = torch.randn(1, 64, 32, device="cuda", dtype=torch.half)
    b = torch.randn(1, 32, 128, device="cuda", dtype=torch.half)
    g = cudnnfe.pygraph(io_data_type=cudnnfe.data_type.HALF,
                        compute_data_type=cudnnfe.data_type.FLOAT)
    ta, tb = g.tensor_like(a), g.tensor_like(b)
    tc = g.matmul(ta, tb)
    tc.set_output(True)
    g.build([cudnnfe.heur_mode.A, cudnnfe.heur_mode.FALLBACK])
    c = torch.empty(1, 64, 128, device="cuda", dtype=torch.half)
    ws = torch.empty(g.get_workspace_size(), device="cuda", dtype=torch.uint8)
    g.execute({ta: a, tb: b, tc: c}, ws, handle=handle)
    torch.cuda.synchronize()
    err = (c.float() - torch.matmul(a.float(), b.float())).abs().max().item()
    print("RESULT", g.get_build_info().source.name, err)
""")


def _child(tmp_path, mode, **env_extra):
    import cudnnfe

    # The child imports the same cudnnfe as this process (which may not be installed).
    package_root = os.path.dirname(os.path.dirname(cudnnfe.__file__))
    path = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, CUDNNFE_PLAN_CACHE_DIR=str(tmp_path / "plans"), PYTHONPATH=path,
               **env_extra)
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    r = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    line = [x for x in r.stdout.splitlines() if x.startswith("RESULT ")][-1]
    _, source, err = line.split()
    return source, float(err)


def test_warmup_fills_the_memory_cache_of_a_new_process(tmp_path):
    source, err = _child(tmp_path, "first")
    assert source == "BUILT" and err < 0.05
    source, err = _child(tmp_path, "wait")
    assert source == "MEMORY_CACHE", "the warm-up did not load the directory's plan"
    assert err < 0.05
    source, err = _child(tmp_path, "at-once", CUDNNFE_PRELOAD="0")
    assert source == "DISK_CACHE" and err < 0.05
