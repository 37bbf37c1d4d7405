"""cudnn-frontend's log variables (CUDNN_FRONTEND_LOG_INFO, CUDNN_FRONTEND_LOG_FILE) and the graph
line of CUDNNFE_LOG (cudnnfe/_fe_log.py, _fe_json.py), on CPU reference graphs: one line of
cudnn-frontend's serialized-graph JSON per validation, with its node tags, where the variables
send it, and nothing when they are off."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cudnnfe
from cudnnfe import _fe_json, _fe_log, _op_list, data_type

CPU = cudnnfe.target.CPU_REFERENCE
F32 = dict(io_data_type=data_type.FLOAT, intermediate_data_type=data_type.FLOAT,
           compute_data_type=data_type.FLOAT)
HALF_IO = dict(F32, io_data_type=data_type.HALF)


@pytest.fixture
def fe_log(monkeypatch, tmp_path):
    """Turns cudnn-frontend's log on into a fresh file; returns its path."""
    path = tmp_path / "fe.log"
    monkeypatch.setenv("CUDNN_FRONTEND_LOG_INFO", "1")
    monkeypatch.setenv("CUDNN_FRONTEND_LOG_FILE", str(path))
    monkeypatch.delenv("CUDNNFE_LOG", raising=False)
    yield path
    _fe_log.close_files()


def graph_lines(text):
    """The JSON payloads, found as cudnn-frontend's test finds them."""
    return [json.loads(line.strip()) for line in text.splitlines() if '"context"' in line]


def matmul_relu(name="mm_relu"):
    g = cudnnfe.pygraph(name=name, target=CPU, **F32)
    a = g.tensor(name="a", dim=[1, 4, 8], stride=[32, 8, 1])
    b = g.tensor(name="b", dim=[1, 8, 2], stride=[16, 2, 1])
    c = g.matmul(A=a, B=b, name="mm")
    y = g.relu(input=c, name="relu")
    y.set_output(True)
    return g


def sdpa_graph():
    g = cudnnfe.pygraph(name="attn", target=CPU, **HALF_IO)
    q, k, v = (g.tensor(name=n, dim=[1, 2, 8, 16], stride=[256, 128, 16, 1]) for n in "qkv")
    o, stats = g.sdpa(q=q, k=k, v=v, attn_scale=0.25, generate_stats=True,
                      use_causal_mask=True, name="sdpa")
    o.set_output(True)
    stats.set_output(True).set_data_type(data_type.FLOAT)
    return g, (q, k, v, o, stats)


def test_one_json_line_per_build_with_tags_ports_and_tensors(fe_log):
    matmul_relu().build()
    sdpa_graph()[0].build()
    text = fe_log.read_text()
    first, second = graph_lines(text)
    assert [n["tag"] for n in first["nodes"]] == ["MATMUL", "POINTWISE"]
    assert first["context"]["name"] == "mm_relu"
    assert first["context"]["io_data_type"] == "FLOAT"
    mm = first["nodes"][0]
    assert mm["name"] == "mm" and set(mm["inputs"]) == {"A", "B"} and set(mm["outputs"]) == {"C"}
    # Logged before validation, as cudnn-frontend does: a type left to io_data_type is unset.
    assert first["tensors"][mm["inputs"]["A"]] == dict(
        name="a", data_type=None, dim=[1, 4, 8], stride=[32, 8, 1], is_virtual=False,
        pass_by_value=None, is_pass_by_value=False, reordering_type="NONE",
        uid=first["tensors"]["a"]["uid"], uid_assigned=False)
    assert first["tensors"][mm["outputs"]["C"]]["is_virtual"]  # matmul -> relu stays inside
    assert first["nodes"][1]["mode"] == "RELU_FWD"
    assert set(first["nodes"][1]["inputs"]) == {"IN_0"}
    node = second["nodes"][0]
    assert node["tag"] == "SDPA"
    assert set(node["inputs"]) == {"Q", "K", "V"} and set(node["outputs"]) == {"O", "Stats"}
    assert (node["right_bound"], node["left_bound"], node["attn_scale_value"]) == (0, None, 0.25)
    assert second["json_version"] == "1.0" and second["cudnn_frontend_version"] == 13200
    assert text.count("VALIDATING GRAPH") == 2 and text.count("VALIDATED ALL OK") == 2


def test_the_line_is_compact_sorted_json(fe_log):
    matmul_relu().build()
    line = next(ln for ln in fe_log.read_text().splitlines() if '"context"' in ln)
    assert line == json.dumps(json.loads(line), sort_keys=True, separators=(",", ":"))


def test_validate_then_build_logs_once(fe_log):
    g = matmul_relu()
    g.validate()
    g.build()
    assert len(graph_lines(fe_log.read_text())) == 1


def test_backward_and_fp8_attention_tags(fe_log):
    g, (q, k, v, o, stats) = sdpa_graph()
    g.build()
    gb = cudnnfe.pygraph(name="bwd", target=CPU, **HALF_IO)
    shape = dict(dim=[1, 2, 8, 16], stride=[256, 128, 16, 1])
    ins = [gb.tensor(name=n, **shape) for n in ("q", "k", "v", "o", "dO")]
    st = gb.tensor(name="stats", dim=[1, 2, 8, 1], stride=[16, 8, 1, 1],
                   data_type=data_type.FLOAT)
    for grad in gb.sdpa_backward(*ins, st, attn_scale=0.25, name="bwd")[:3]:
        grad.set_output(True)
    gb.build()
    assert [p["nodes"][0]["tag"] for p in graph_lines(fe_log.read_text())] == ["SDPA", "SDPA_BWD"]


def test_conv_and_norm_tags_and_ports(fe_log):
    g = cudnnfe.pygraph(name="conv_norms", target=CPU, **F32)
    x = g.tensor(name="x", dim=[1, 2, 6, 6], stride=[72, 36, 6, 1])
    w = g.tensor(name="w", dim=[3, 2, 3, 3], stride=[18, 9, 3, 1])
    y = g.conv_fprop(image=x, weight=w, padding=[1, 1], stride=[1, 1], dilation=[1, 1],
                     name="conv")
    one = dict(dim=[1, 3, 6, 6], stride=[108, 36, 6, 1])
    z, _, _ = g.layernorm(y, g.tensor(name="gamma", **one), g.tensor(name="beta", **one),
                          epsilon=1e-5, name="ln")
    r, _ = g.rmsnorm(z, g.tensor(name="gamma2", **one), epsilon=1e-5, name="rms")
    r.set_output(True)
    g.validate()
    (payload,) = graph_lines(fe_log.read_text())
    conv, ln, rms = payload["nodes"]
    assert (conv["tag"], ln["tag"], rms["tag"]) == ("CONV_FPROP", "LAYER_NORM", "RMS_NORM")
    assert conv["inputs"] == {"X": "x", "W": "w"} and set(conv["outputs"]) == {"Y"}
    assert ln["inputs"]["SCALE"] == "gamma" and ln["inputs"]["BIAS"] == "beta"
    assert set(ln["outputs"]) == {"Y", "MEAN", "INV_VARIANCE"}
    assert set(rms["outputs"]) == {"Y", "INV_VARIANCE"}
    assert all(set(n["inputs"].values()) <= set(payload["tensors"]) for n in payload["nodes"])


def fp8_graph(**options):
    g = cudnnfe.pygraph(name="fp8", target=CPU, **dict(F32, io_data_type=data_type.FP8_E4M3))
    q, k, v = (g.tensor(name=n, dim=[1, 2, 16, 16], stride=[512, 256, 16, 1]) for n in "qkv")
    scales = [g.tensor(name=n, dim=[1, 1, 1, 1], data_type=data_type.FLOAT) for n in (
        "descale_q", "descale_k", "descale_v", "descale_s", "scale_s", "scale_o")]
    outs = g.sdpa_fp8(q, k, v, *scales, generate_stats=True, attn_scale=0.25, name="fp8",
                      **options)
    for t in outs:
        t.set_output(True)
    return g


def test_fp8_attention_is_sdpa_fp8_fwd_with_descale_ports(fe_log):
    fp8_graph().validate()
    (payload,) = graph_lines(fe_log.read_text())
    node = payload["nodes"][0]
    assert node["tag"] == "SDPA_FP8_FWD" and node["mma_core_mode"] == "FP8_E4M3"
    assert {"Q", "K", "V", "Descale_Q", "Descale_S", "Scale_S", "Scale_O"} <= set(node["inputs"])
    assert {"O", "Stats", "Amax_S", "Amax_O"} == set(node["outputs"])


def test_fp8_attention_logs_its_sliding_window(fe_log):
    """cudnn-frontend's FP8 sliding-window case as its serialization test reads it: a causal
    mask with a left bound is left_bound / right_bound 0 / TOP_LEFT."""
    fp8_graph(left_bound=5, right_bound=0,
              diagonal_alignment=cudnnfe.diagonal_alignment.TOP_LEFT).validate()
    (payload,) = graph_lines(fe_log.read_text())
    node = payload["nodes"][0]
    assert (node["left_bound"], node["right_bound"], node["diagonal_alignment"]) == (
        5, 0, "TOP_LEFT")


@pytest.mark.parametrize("info,file_set", [(None, True), ("0", True), ("yes", True),
                                           ("-1", True), ("1", False)])
def test_off_writes_nothing(monkeypatch, tmp_path, capsys, info, file_set):
    path = tmp_path / "fe.log"
    if info is None:
        monkeypatch.delenv("CUDNN_FRONTEND_LOG_INFO", raising=False)
    else:
        monkeypatch.setenv("CUDNN_FRONTEND_LOG_INFO", info)
    if file_set:
        monkeypatch.setenv("CUDNN_FRONTEND_LOG_FILE", str(path))
    else:  # cudnn-frontend: no destination turns the log off
        monkeypatch.delenv("CUDNN_FRONTEND_LOG_FILE", raising=False)
    monkeypatch.delenv("CUDNNFE_LOG", raising=False)
    matmul_relu().build()
    assert not path.exists()
    out, err = capsys.readouterr()
    assert '"context"' not in out and '"context"' not in err


def test_a_log_file_that_cannot_be_opened_is_said_once_and_the_build_goes_on(
        monkeypatch, tmp_path, capsys):
    path = tmp_path / "missing_dir" / "fe.log"
    monkeypatch.setenv("CUDNN_FRONTEND_LOG_INFO", "1")
    monkeypatch.setenv("CUDNN_FRONTEND_LOG_FILE", str(path))
    monkeypatch.delenv("CUDNNFE_LOG", raising=False)
    try:
        matmul_relu().build()
        matmul_relu().build()
    finally:
        _fe_log.close_files()
    err = capsys.readouterr().err
    assert err.count("cannot be opened") == 1 and not path.exists()


@pytest.mark.parametrize("dest", ["stdout", "stderr"])
def test_stream_destinations(monkeypatch, capsys, dest):
    monkeypatch.setenv("CUDNN_FRONTEND_LOG_INFO", " 2x")  # C atoi: 2
    monkeypatch.setenv("CUDNN_FRONTEND_LOG_FILE", dest)
    monkeypatch.delenv("CUDNNFE_LOG", raising=False)
    matmul_relu().build()
    out, err = capsys.readouterr()
    written, other = (out, err) if dest == "stdout" else (err, out)
    assert [p["nodes"][0]["tag"] for p in graph_lines(written)] == ["MATMUL"]
    assert '"context"' not in other


def test_set_log_callback_receives_the_graph_line(monkeypatch):
    for var in ("CUDNN_FRONTEND_LOG_INFO", "CUDNN_FRONTEND_LOG_FILE", "CUDNNFE_LOG"):
        monkeypatch.delenv(var, raising=False)
    lines = []
    cudnnfe.set_log_callback(lambda level, message: lines.append((level, message)), "info")
    try:
        matmul_relu("via_callback").build()
    finally:
        cudnnfe.set_log_callback(None, "off")
    graph = [m for level, m in lines if m.startswith("graph (cudnn-frontend JSON): ")]
    assert len(graph) == 1
    payload = json.loads(graph[0].partition(": ")[2])
    assert payload["context"]["name"] == "via_callback"


def test_an_undescribable_graph_logs_why_and_still_builds(fe_log, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("no description")

    monkeypatch.setattr(cudnnfe._fe_json, "frontend_graph_json", broken)
    matmul_relu().build()
    assert "graph description unavailable: no description" in fe_log.read_text()


def _python(code, env_update, tmp_path):
    """Runs ``code`` in a fresh interpreter that imports the cudnnfe package this test does."""
    env = dict(os.environ, **env_update)
    package_parent = str(Path(cudnnfe.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_parent, env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)


FP8_SCRIPT = """
    import sys
    sys.path.insert(0, {tests!r})
    from test_fe_log import fp8_graph
    fp8_graph().validate()
    fp8_graph().validate()
"""


def test_cudnn_frontends_fp8_serialization_check_in_a_fresh_process(tmp_path):
    """What cudnn-frontend's test_sdpa_fp8_serialization.py reads, in a process started with
    the variables set: a truncated file whose first graph line's first node is SDPA_FP8_FWD."""
    log = tmp_path / "sdpa_fp8_fwd.log"
    log.write_text("stale line from an earlier run {\"context\": 1}\n")
    proc = _python(FP8_SCRIPT.format(tests=str(Path(__file__).parent)),
                   {"CUDNN_FRONTEND_LOG_INFO": "1", "CUDNN_FRONTEND_LOG_FILE": str(log)},
                   tmp_path)
    assert proc.returncode == 0, proc.stderr
    payloads = graph_lines(log.read_text())
    assert len(payloads) == 2  # one per validation; the stale line was truncated away
    assert payloads[0]["nodes"][0]["tag"] == "SDPA_FP8_FWD"


def test_cudnnfe_log_env_sends_the_line_to_stderr(tmp_path):
    proc = _python(FP8_SCRIPT.format(tests=str(Path(__file__).parent)),
                   {"CUDNNFE_LOG": "info", "CUDNN_FRONTEND_LOG_INFO": "0"}, tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines()
             if ln.startswith("cudnnfe [info] graph (cudnn-frontend JSON): ")]
    assert len(lines) == 2
    assert json.loads(lines[0].partition("JSON): ")[2])["nodes"][0]["tag"] == "SDPA_FP8_FWD"
    assert '"context"' not in proc.stdout


def test_every_cudnnfe_op_has_a_cudnn_frontend_tag():
    """The ops of the op list (src/graph/op_list.def, exported as cudnnfe._op_list; its
    staleness is test_op_list.py's) all map to a tag."""
    ops = set(_op_list.OPS)
    assert len(ops) >= 35 and ops <= set(_fe_json.TAGS), sorted(ops - set(_fe_json.TAGS))


def test_port_names_ragged_offsets_and_concatenation_inputs():
    """cudnn-frontend's port spellings for FP8 backward attention, a ragged offset held on the
    tensor it describes, and a concatenation's numbered inputs (a hand-made description)."""
    t = [dict(uid=i, name=n, kind="input", data_type="FP8_E4M3", dims=[1], strides=[1])
         for i, n in enumerate(["q", "descale_dO", "scale_dQ", "amax_dP", "off", "x0", "x1",
                                "y", "dQ"], start=1)]
    desc = dict(format="cudnnfe.graph", version=1, name="g", io_data_type="NOT_SET",
                tensors=t, nodes=[
                    dict(op="sdpa_fp8_backward", name="b", compute_data_type="FLOAT",
                         inputs={"q": 1, "descale_dO": 2, "scale_dQ": 3},
                         outputs={"dQ": 9, "amax_dP": 4}, attributes={"attn_scale": 0.5}),
                    dict(op="sdpa", name="f", inputs={"q": 1, "ragged_offset_q": 5},
                         outputs={}, attributes={}),
                    dict(op="concatenate", name="c", inputs={"x0": 6, "x1": 7},
                         outputs={"y": 8}, attributes={"axis": 1})])
    out = _fe_json.frontend_graph_json(json.dumps(desc).encode(), "9.19.0")
    bwd, fwd, cat = out["nodes"]
    assert bwd["tag"] == "SDPA_FP8_BWD" and bwd["is_deterministic_algorithm"] is False
    assert bwd["inputs"] == {"Q": "q", "Descale_dO": "descale_dO", "Scale_dQ": "scale_dQ"}
    assert bwd["outputs"] == {"dQ": "dQ", "Amax_dP": "amax_dP"}
    assert bwd["attn_scale_value"] == 0.5 and out["context"]["io_data_type"] is None
    assert fwd["inputs"] == {"Q": "q"}  # the offset is not a port in cudnn-frontend
    assert out["tensors"]["q"]["ragged_offset_name"] == "off"
    assert out["tensors"]["q"]["ragged_offset_uid"] == 5
    assert cat["inputs"] == {"0": "x0", "1": "x1"} and cat["axis"] == 1
    assert out["cudnn_backend_version"] == "9.19.0"
