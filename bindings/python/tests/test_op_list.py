"""The generated op list (cudnnfe/_op_list.py and docs/graph-json.md's port table) matches
src/graph/op_list.def, and the generator's naming rules hold."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from cudnnfe import _op_list

REPO = Path(__file__).resolve().parents[3]
TOOL = REPO / "scripts" / "gen_op_list.py"
OP_LIST = REPO / "src" / "graph" / "op_list.def"


def _load_tool():
    spec = importlib.util.spec_from_file_location("gen_op_list", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tool():
    if not OP_LIST.exists():
        pytest.skip(f"the op list is not at {OP_LIST} (not running from the repository)")
    return _load_tool()


def test_committed_op_list_module_and_doc_table_are_up_to_date(tool):
    for path, expected in tool.outputs().items():
        assert path.read_text(encoding="utf-8") == expected, (
            f"{path.relative_to(REPO)} is stale: run `python3 scripts/gen_op_list.py` and "
            "commit the result")


def test_check_mode_passes_on_committed_files(tool):
    result = subprocess.run([sys.executable, str(TOOL), "--check"], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr


def test_a_port_enumerator_must_spell_its_name(tool):
    text = 'CUDNNFE_OP(Foo, "foo", FooAttrs, no_fields, foo, IN(kX, "x"), OUT(kWhy, "y"))'
    with pytest.raises(ValueError, match='"y" must be kY'):
        tool.parse(text)
    ops = tool.parse(text.replace("kWhy", "kY").replace('IN(kX', 'OPT_IN(kX'))
    assert ops[0].inputs == ("x",) and ops[0].optional_inputs == ("x",)


def test_module_lists_every_op_once_with_ports():
    assert len(_op_list.OPS) >= 35
    for name, op in _op_list.OPS.items():
        assert op.name == name and op.outputs, name
        assert set(op.optional_inputs) <= set(op.inputs), name
        assert set(op.optional_outputs) <= set(op.outputs), name
    assert _op_list.OPS["sdpa"].inputs[:3] == ("q", "k", "v")
