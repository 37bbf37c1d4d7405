"""The examples of examples/python, kept from rotting: each compiles; first_graph.py (NumPy
only, the documentation site's Python getting-started code) runs everywhere; where torch is
installed, the PyTorch examples run on cudnnfe's CPU reference (``--device cpu``: the sdpa
operator on CPU tensors) and print PASS, and without a GPU their default (CUDA) run prints
SKIP and exits 0. Their GPU runs are the lead's (examples/python/README.md)."""
import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

import cudnnfe

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "python"
SCRIPTS = sorted(EXAMPLES.glob("*.py"))


def test_the_examples_are_there():
    assert {p.name for p in SCRIPTS} >= {"attention_block.py", "sdpa_training.py", "sdpa_ddp.py",
                                         "first_graph.py"}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_example_compiles(script, tmp_path):
    py_compile.compile(str(script), cfile=str(tmp_path / "out.pyc"), doraise=True)


def _run(args, timeout=600):
    env = dict(os.environ)
    package_parent = str(Path(cudnnfe.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_parent, env.get("PYTHONPATH")]))
    env.setdefault("OMP_NUM_THREADS", "1")
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=EXAMPLES)


def _last_line(proc):
    lines = proc.stdout.strip().splitlines()
    return lines[-1] if lines else ""


def test_first_graph_runs_on_the_cpu_reference():
    proc = _run(["first_graph.py"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _last_line(proc) == "OK", proc.stdout


@pytest.fixture
def torch():
    return pytest.importorskip("torch", reason="the examples need torch")


def test_training_example_passes_on_the_cpu_reference(torch):
    proc = _run(["sdpa_training.py", "--device", "cpu", "--steps", "2",
                 "--compile-backend", "aot_eager"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _last_line(proc).startswith("PASS: sdpa_training: 2 AdamW steps"), proc.stdout


def test_ddp_example_passes_with_two_gloo_processes(torch):
    proc = _run(["-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
                 "sdpa_ddp.py", "--device", "cpu", "--steps", "2"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    passes = [ln for ln in proc.stdout.splitlines() if ln.startswith("PASS: sdpa_ddp rank")]
    assert sorted(ln.split()[3] for ln in passes) == ["0/2", "1/2"], proc.stdout


def test_ddp_example_runs_as_a_world_of_one(torch):
    proc = _run(["sdpa_ddp.py", "--device", "cpu", "--steps", "1"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS: sdpa_ddp rank 0/1" in proc.stdout and "a world of 1 process" in proc.stdout


@pytest.mark.parametrize("script", ["sdpa_training.py", "sdpa_ddp.py"])
def test_without_a_gpu_the_examples_skip(torch, script):
    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is present: the examples run instead of skipping")
    proc = _run([script])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("SKIP: no CUDA GPU"), proc.stdout


def test_the_examples_pass_on_the_gpu(torch):
    """Where there is a GPU: the training example (without torch.compile, whose first compile
    takes a minute: its full run is the README's command) and DDP over up to two GPUs."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    proc = _run(["sdpa_training.py", "--no-compile", "--steps", "3"])
    assert proc.returncode == 0 and "PASS: sdpa_training" in proc.stdout, (
        proc.stdout + proc.stderr)
    ranks = min(2, torch.cuda.device_count())
    proc = _run(["-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={ranks}",
                 "sdpa_ddp.py", "--steps", "2"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("PASS: sdpa_ddp rank") == ranks, proc.stdout
