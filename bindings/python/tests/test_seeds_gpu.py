"""The seeds' Python examples (NVIDIA cudnn-frontend docs) run with only the import changed.

The seed texts are read at run time from ``shared/seeds`` (beside the
repository, or inside it, or ``CUDNNFE_SEEDS_DIR``); nothing of them is copied
here. Code cells are extracted from the text, ``import cudnn`` becomes
``import cudnnfe as cudnn``, and each example runs with its own assertions
(those of the seed, plus one added below where the seed has none).
"""
import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def _seed_dir():
    for d in (os.environ.get("CUDNNFE_SEEDS_DIR"), REPO.parent / "shared" / "seeds",
              REPO / "shared" / "seeds"):
        if d and Path(d).is_dir():
            return Path(d)
    return None


def _find(marker):
    d = _seed_dir()
    if d is None:
        return None
    for f in sorted(d.glob("*.txt")):
        text = f.read_text(encoding="utf-8", errors="replace")
        if marker in text:
            return text
    return None


def _import_changed(code):
    return re.sub(r"^import cudnn$", "import cudnnfe as cudnn", code, flags=re.M)


def _compilable_prefix(chunk):
    """The longest run of leading paragraphs that is valid Python (drops trailing prose)."""
    paragraphs = re.split(r"\n\s*\n", chunk.strip("\n"))
    best = ""
    for i in range(1, len(paragraphs) + 1):
        candidate = "\n\n".join(paragraphs[:i])
        try:
            compile(candidate, "<seed>", "exec")
        except SyntaxError:
            continue
        best = candidate
    return best


def notebook_cells():
    text = _find("Overview of the Lower Level Python Binding API")
    if text is None:
        return []
    chunks = re.split(r"^In \[[^\]]*\]:\s*$", text, flags=re.M)[1:]
    return [c for c in (_compilable_prefix(ch) for ch in chunks) if c.strip()]


def first_graph_code():
    text = _find("Your First cuDNN Graph")
    if text is None:
        return None
    m = re.search(r"## Complete Code.*?```python\n(.*?)```", text, flags=re.S)
    return m.group(1) if m else None


CELLS = notebook_cells()
EXAMPLES = [i for i, c in enumerate(CELLS)
            if "graph.execute(" in c or "g.execute(" in c or ".serialize()" in c]

torch = pytest.importorskip("torch", reason="the seed examples need torch")
if not torch.cuda.is_available():
    pytest.skip("the seed examples need a CUDA device; torch sees none", allow_module_level=True)


def _run_cells(upto):
    import cudnnfe

    ns = {"__name__": "seed_notebook"}
    for i in range(upto + 1):
        code = compile(_import_changed(CELLS[i]), f"<seed cell {i}>", "exec")
        try:
            exec(code, ns)
        except cudnnfe.InvalidGraphError as exc:
            # The SDPA seed stores stats as BFLOAT16; the C ABI keeps stats FLOAT
            # (sdpa's documented rule). Shown as an expected failure, not hidden.
            if "stats" in exc.message and "must be FLOAT" in exc.message:
                pytest.xfail("the seed sets the SDPA stats to BFLOAT16; the cudnnfe C ABI "
                             f"requires FLOAT stats ({exc.message})")
            raise
    return ns


def test_seed_first_graph_conv_fprop():
    code = first_graph_code()
    if code is None:
        pytest.skip(f"seed 'Your First cuDNN Graph' not found (looked in {_seed_dir()})")
    ns = {"__name__": "seed_first_graph"}
    exec(compile(_import_changed(code), "<seed first graph>", "exec"), ns)
    result, reference = ns["result"], ns["reference"]
    assert tuple(result.shape) == (8, 32, 56, 56)
    torch.testing.assert_close(result, reference, atol=5e-3, rtol=3e-3)


def test_seed_notebook_found():
    if not CELLS:
        pytest.skip(f"seed 'Lower Level Python Binding API' not found (looked in {_seed_dir()})")
    assert len(EXAMPLES) >= 5, EXAMPLES


@pytest.mark.parametrize("index", EXAMPLES or [None], ids=lambda i: f"cell{i}")
def test_seed_notebook_example(index):
    if index is None:
        pytest.skip("seed notebook not found")
    ns = _run_cells(index)
    cell = CELLS[index]
    torch.cuda.synchronize()
    # The seed's own assertions ran inside the cell; add one where it has none.
    if "deserialized_graph" in cell:
        ref = torch.nn.functional.scaled_dot_product_attention(
            ns["q_gpu"], ns["k_gpu"], ns["v_gpu"], is_causal=True, scale=ns["attn_scale"])
        torch.testing.assert_close(ns["o_gpu"], ref, atol=5e-3, rtol=3e-3)
    elif "c_gpu" in ns and "c_ref" in ns and "execute(" in cell:
        torch.testing.assert_close(ns["c_gpu"], torch.matmul(ns["a_gpu"], ns["b_gpu"]) +
                                   ns["d_gpu"], atol=5e-3, rtol=3e-3)
    else:
        assert ns.get("serialized_data"), "the serialization cell produced no data"
