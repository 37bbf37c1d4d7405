"""Plan control from Python: plan queries and selection, build policy and engine
filters, autotune, build information, fingerprints, plan blobs, the plan cache
and CUDA graph population (docs/plans.md).

Everything here runs on the CPU reference (one plan, ``cpu_reference``)
without a GPU; GPU-only calls are checked to raise the library's clear error.
The GPU behaviour (several plans, timings, cache hits) is tested at the end
when torch sees a CUDA device.
"""
import json

import numpy as np
import pytest

import cudnnfe as cudnn
from cudnnfe import (behavior_note, build_plan_policy, data_type, numerical_note, plan_source,
                     target)

CPU = target.CPU_REFERENCE


def _fnv1a64(data: bytes) -> int:
    h = 14695981039346656037
    for byte in data:
        h ^= byte
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def _split_blob(blob: bytes):
    header, payload = blob.split(b"\n", 1)
    return header.decode("ascii").split(" "), payload


def _wrap(payload: bytes) -> bytes:
    return b"CUDNNFE-PLAN 1 %d %016x\n" % (len(payload), _fnv1a64(payload)) + payload


def _matmul_graph(name="mm", m=2, k=3, n=4):
    """c = a @ b, FLOAT; returns (graph, a, b, c) tensors."""
    g = cudnn.pygraph(io_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT,
                      name=name)
    a = g.tensor(dim=[1, m, k], stride=[m * k, k, 1], name="a")
    b = g.tensor(dim=[1, k, n], stride=[k * n, n, 1], name="b")
    c = g.matmul(a, b, name="matmul").set_output(True)
    return g, a, b, c


@pytest.fixture
def arrays(rng):
    a = rng.standard_normal((1, 2, 3)).astype(np.float32)
    b = rng.standard_normal((1, 3, 4)).astype(np.float32)
    return a, b, a @ b


def _run(g, arrays, a="a", b="b", c="matmul::C"):
    x, y, _ = arrays
    out = np.full((1, 2, 4), np.nan, np.float32)
    g.execute({a: x, b: y, c: out})
    return out


# ---------------------------------------------------------------------------
# enumerations


def test_plan_enumerations_match_the_header():
    from cudnnfe import _cdef, _enums

    assert _enums.PREFIXES[build_plan_policy] == "CUDNNFE_BUILD_POLICY_"
    assert _enums.PREFIXES[plan_source] == "CUDNNFE_PLAN_SOURCE_"
    for enum, prefix in _enums.FLAG_PREFIXES.items():
        constants = {k[len(prefix):]: v for k, v in _cdef.CONSTANTS.items()
                     if k.startswith(prefix)}
        canonical = {name: int(m) for name, m in enum.__members__.items() if m.name == name}
        assert canonical == constants, enum.__name__
    # cudnn-frontend's spellings are aliases of the C names.
    assert numerical_note.WINOGRAD_TILE_4x4 is numerical_note.WINOGRAD
    assert behavior_note.REQUIRES_FILTER_INT8x32_REORDER is \
        behavior_note.REQUIRES_FILTER_INT8X32_REORDER
    assert int(numerical_note.ALL) == cudnn.lib.CUDNNFE_NUMERICAL_NOTE_ALL


# ---------------------------------------------------------------------------
# plans of a built graph


def test_cpu_reference_graph_has_one_plan(arrays):
    g, *_ = _matmul_graph()
    assert g.get_execution_plan_count() == 0
    g.build(target=CPU)
    assert g.get_execution_plan_count() == 1
    info = g.get_plan_info(0)
    assert info == cudnn.PlanInfo(index=0, name="cpu_reference", engine_id=-1, workspace_size=0,
                                  numerical_notes=numerical_note(0),
                                  behavior_notes=behavior_note(0), autotune_time_ms=None,
                                  selected=True, chosen_by_autotune=False)
    assert g.get_plan_infos() == [info]
    assert g.get_plan_name_at_index(0) == g.get_plan_name() == "cpu_reference"
    assert g.get_workspace_size_plan_at_index(0) == 0
    assert g.get_behavior_notes_for_plan_at_index(0) == []
    assert g.get_behavior_notes() == []
    assert g.get_selected_plan() == 0
    np.testing.assert_allclose(_run(g, arrays), arrays[2], rtol=1e-5, atol=1e-6)


def test_plan_queries_before_build_raise_wrong_state():
    g, *_ = _matmul_graph()
    for call in (lambda: g.get_plan_info(0), g.get_plan_infos, g.get_selected_plan,
                 lambda: g.select_plan(0), g.get_build_info, g.serialize_plan,
                 lambda: g.get_workspace_size_plan_at_index(0)):
        with pytest.raises(cudnn.WrongStateError):
            call()


def test_plan_index_out_of_range_is_refused_with_the_count(arrays):
    g, *_ = _matmul_graph()
    g.build(target=CPU)
    for bad in (1, -1, 7):
        with pytest.raises(cudnn.InvalidArgumentError, match=r"plan index %d is out of range; "
                           r"it has 1 plan" % bad):
            g.select_plan(bad)
        with pytest.raises(cudnn.InvalidArgumentError, match="out of range"):
            g.get_plan_info(bad)
    with pytest.raises(TypeError):
        g.select_plan(True)
    with pytest.raises(TypeError):
        g.select_plan("0")
    g.select_plan(0)
    g.build_plan_at_index(0)
    assert g.get_selected_plan() == 0
    np.testing.assert_allclose(_run(g, arrays), arrays[2], rtol=1e-5, atol=1e-6)


def test_execute_plan_at_index(arrays):
    g, a, b, c = _matmul_graph()
    g.build(target=CPU)
    x, y, ref = arrays
    out = np.full((1, 2, 4), np.nan, np.float32)
    g.execute_plan_at_index({a: x, b: y, c: out}, None, 0)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(cudnn.InvalidArgumentError, match="out of range"):
        g.execute_plan_at_index({a: x, b: y, c: out}, None, 1)
    assert g.get_selected_plan() == 0


def test_build_info_of_a_cpu_build():
    g, *_ = _matmul_graph()
    g.build(target=CPU)
    info = g.get_build_info()
    assert isinstance(info, cudnn.BuildInfo)
    assert info.source is plan_source.BUILT
    assert info.total_ms >= info.validate_ms >= 0
    # The CPU reference has no cache, lowering, heuristics or plan build.
    assert info.cache_ms == info.lower_ms == info.heuristics_ms == info.plan_build_ms == 0


# ---------------------------------------------------------------------------
# fingerprints


def test_fingerprint_ignores_names_and_sees_structure():
    g1, *_ = _matmul_graph("one")
    g2, *_ = _matmul_graph("two")
    f1 = g1.get_fingerprint()
    assert len(f1) == 32 and all(ch in "0123456789abcdef" for ch in f1)
    assert g2.get_fingerprint() == f1
    g2.get_tensor("a").set_name("renamed")
    assert g2.get_fingerprint() == f1
    g3, *_ = _matmul_graph("three", n=5)
    assert g3.get_fingerprint() != f1
    g1.validate()  # types resolved: the key the plan cache uses
    validated = g1.get_fingerprint()
    g1.build(target=CPU)
    assert g1.get_fingerprint() == validated
    _, payload = _split_blob(g1.serialize_plan())
    assert json.loads(payload)["fingerprint"] == validated


# ---------------------------------------------------------------------------
# plan blobs


def test_plan_blob_format_and_round_trip(arrays):
    g, *_ = _matmul_graph()
    g.build(target=CPU)
    blob = g.serialize_plan()
    # A built graph's serialize() is its plan, as cudnn-frontend's is.
    assert g.serialize() == blob and not cudnn.is_plan_blob(g.serialize_description())
    (magic, version, size, checksum), payload = _split_blob(blob)
    assert (magic, version) == ("CUDNNFE-PLAN", "1")
    assert int(size) == len(payload)
    assert checksum == "%016x" % _fnv1a64(payload)
    doc = json.loads(payload)
    assert doc["format"] == "cudnnfe.plan" and doc["target"] == "CPU_REFERENCE"
    assert doc["graph"]["name"] == "mm"
    assert "plan" not in doc  # no engine configuration on the CPU
    # The graph description is something else: plain JSON, rebuilt by heuristics.
    assert json.loads(g.serialize_description())["format"] == "cudnnfe.graph"

    loaded = cudnn.pygraph.deserialize_plan(blob)
    assert loaded.is_built() and loaded.get_target() == CPU
    assert loaded.get_build_info().source is plan_source.SERIALIZED
    assert loaded.get_fingerprint() == g.get_fingerprint()
    assert loaded.serialize_plan() == blob
    np.testing.assert_allclose(_run(loaded, arrays), arrays[2], rtol=1e-5, atol=1e-6)


def test_deserialize_takes_plan_blobs_too(arrays):
    g, *_ = _matmul_graph()
    g.build(target=CPU)
    blob = g.serialize_plan()
    for loaded in (cudnn.pygraph.deserialize(blob), cudnn.Graph.deserialize(blob)):
        assert loaded.get_build_info().source is plan_source.SERIALIZED
        np.testing.assert_allclose(_run(loaded, arrays), arrays[2], rtol=1e-5, atol=1e-6)
    into = cudnn.pygraph()
    with cudnn.create_handle() as h:
        into.deserialize(h, blob)  # cudnn-frontend's (handle, data) form
    assert into.get_build_info().source is plan_source.SERIALIZED
    assert into.get_tensor("b").get_dim() == [1, 3, 4]
    as_list = cudnn.pygraph.deserialize(list(blob))
    assert as_list.serialize_plan() == blob
    # Build options given: the blob's graph description is loaded and built
    # (or not) as asked, with the heuristics.
    unbuilt = cudnn.pygraph.deserialize(blob, build=False)
    assert not unbuilt.is_built() and unbuilt.get_tensor("b").get_dim() == [1, 3, 4]
    rebuilt = cudnn.pygraph.deserialize(blob, target=CPU)
    assert rebuilt.get_build_info().source is plan_source.BUILT
    with pytest.raises(ValueError, match="rebuild_on_mismatch"):
        cudnn.pygraph.deserialize(g.serialize_description(), rebuild_on_mismatch=True)
    # A graph description still loads and builds with the heuristics.
    rebuilt = cudnn.pygraph.deserialize(g.serialize_description(), target=CPU)
    assert rebuilt.get_build_info().source is plan_source.BUILT


def test_damaged_blobs_are_refused_and_leave_the_graph_empty():
    g, *_ = _matmul_graph()
    g.build(target=CPU)
    blob = g.serialize_plan()
    _, payload = _split_blob(blob)
    at = len(blob) - len(payload) + payload.index(b'"format"') + 2
    flipped = blob[:at] + bytes([blob[at] ^ 0x20]) + blob[at + 1:]
    cases = {"checksum": flipped, "truncat": blob[:len(blob) // 2], "header": b"CUDNNFE-PLAN x"}
    for needle, bad in cases.items():
        target_graph = cudnn.pygraph()
        with pytest.raises(cudnn.BadSerializedDataError, match="plan blob") as err:
            target_graph.deserialize_plan(bad)
        assert needle in str(err.value).lower(), (needle, str(err.value))
        assert target_graph.get_tensor_count() == 0 and not target_graph.is_built()
        target_graph.deserialize_plan(blob)  # still usable
        assert target_graph.is_built()
    with pytest.raises(cudnn.InvalidArgumentError, match="not empty"):
        g2, *_ = _matmul_graph()
        g2.deserialize_plan(blob)
    with pytest.raises(TypeError):
        cudnn.pygraph.deserialize_plan(3.5)


def _gpu_blob_of(g):
    """The plan blob of CPU graph `g` rewritten to claim it was built for a GPU
    (sm_75, cuDNN 9.1.0) that this machine is not: docs/plans.md's fields."""
    _, payload = _split_blob(g.serialize_plan())
    doc = json.loads(payload)
    doc["target"] = "GPU"
    doc["cudnn_version"] = 90100
    doc["device"] = {"name": "Faked GPU", "sm": 75}
    doc["plan"] = {"name": "eng0", "engine_id": 0, "knobs": [], "workspace_size": 0,
                   "numerical_notes": [], "behavior_notes": []}
    return _wrap(json.dumps(doc).encode("utf-8"))


def test_plan_for_another_gpu_is_refused_unless_rebuild_on_mismatch(arrays):
    g, *_ = _matmul_graph()
    g.build(target=CPU)
    blob = _gpu_blob_of(g)
    with pytest.raises(cudnn.BadSerializedDataError) as err:
        cudnn.pygraph.deserialize_plan(blob)
    for part in ("Faked GPU (sm_75)", "cuDNN 9.1.0", "rebuild_on_mismatch"):
        assert part in str(err.value)
    # Rebuilt from the description with the stored build options (target CPU_REFERENCE).
    loaded = cudnn.pygraph.deserialize_plan(blob, rebuild_on_mismatch=True)
    assert loaded.get_build_info().source is plan_source.REBUILT
    assert loaded.get_target() == CPU
    np.testing.assert_allclose(_run(loaded, arrays), arrays[2], rtol=1e-5, atol=1e-6)
    via_deserialize = cudnn.pygraph.deserialize(blob, rebuild_on_mismatch=True)
    assert via_deserialize.get_build_info().source is plan_source.REBUILT


# ---------------------------------------------------------------------------
# build policy and engine filters


def _stored_options(g):
    _, payload = _split_blob(g.serialize_plan())
    return json.loads(payload)["build_options"]


def test_build_keywords_reach_the_c_build_options():
    g, *_ = _matmul_graph()
    g.build(target=CPU, policy=build_plan_policy.ALL, max_workspace_size=1 << 20,
            exclude_numerical_notes=numerical_note.TENSOR_CORE | numerical_note.FFT,
            exclude_behavior_notes=["RUNTIME_COMPILATION"],
            require_behavior_notes=behavior_note.SUPPORTS_CUDA_GRAPH_NATIVE_API,
            exclude_engines=[3, "eng7"], max_plans=4, disable_plan_cache=True,
            plan_cache_dir="")
    o = _stored_options(g)
    assert o["policy"] == "ALL"
    assert o["max_workspace_size"] == 1 << 20
    assert o["exclude_numerical_notes"] == ["TENSOR_CORE", "FFT"]
    assert o["exclude_behavior_notes"] == ["RUNTIME_COMPILATION"]
    assert o["require_behavior_notes"] == ["SUPPORTS_CUDA_GRAPH_NATIVE_API"]
    assert o["exclude_engines"] == [3, 7]
    assert o["max_plans"] == 4
    assert o["target"] == "CPU_REFERENCE"


def test_defaults_and_recorded_filters():
    g, *_ = _matmul_graph()
    g.build(target=CPU)
    o = _stored_options(g)
    assert (o["policy"], o["max_workspace_size"], o["exclude_engines"], o["max_plans"]) == \
        ("HEURISTICS_CHOICE", -1, [], 0)
    # cudnn-frontend's deselect_* record filters for later builds; build keywords win.
    g, *_ = _matmul_graph()
    (g.deselect_numeric_notes([numerical_note.NONDETERMINISTIC])
      .deselect_behavior_notes(behavior_note.RUNTIME_COMPILATION)
      .deselect_workspace_greater_than(4096)
      .deselect_engines(["eng1", 2]))
    g.select_behavior_notes([behavior_note.SUPPORTS_CUDA_GRAPH_NATIVE_API])
    g.build(target=CPU, exclude_engines=[9])
    o = _stored_options(g)
    assert o["exclude_numerical_notes"] == ["NONDETERMINISTIC"]
    assert o["exclude_behavior_notes"] == ["RUNTIME_COMPILATION"]
    assert o["require_behavior_notes"] == ["SUPPORTS_CUDA_GRAPH_NATIVE_API"]
    assert o["max_workspace_size"] == 4096
    assert o["exclude_engines"] == [9]


def test_bad_build_options_are_refused_before_or_by_the_library():
    python_side = [
        (dict(policy="SOME"), ValueError, "build plan policy"),
        (dict(exclude_numerical_notes=["FAST"]), ValueError, "unknown numerical_note"),
        (dict(exclude_numerical_notes=1 << 20), ValueError, "no numerical_note"),
        (dict(exclude_behavior_notes=True), TypeError, "bool"),
        (dict(exclude_engines=["eng9_k2=3"]), ValueError, "whole engines"),
        (dict(exclude_engines=[-2]), ValueError, "negative"),
        (dict(max_plans=2.5), TypeError, "max_plans"),
        (dict(plan_cache_dir=3), TypeError, "plan_cache_dir"),
    ]
    library_side = [
        (dict(max_plans=-1), "max_plans is -1"),
        (dict(max_workspace_size=-5), "max_workspace_size is -5"),
        (dict(exclude_behavior_notes=behavior_note.RUNTIME_COMPILATION,
              require_behavior_notes=behavior_note.RUNTIME_COMPILATION),
         "both excluded and required"),
    ]
    for kwargs, exc, needle in python_side:
        g, *_ = _matmul_graph()
        with pytest.raises(exc, match=needle):
            g.build(target=CPU, **kwargs)
        assert not g.is_built()
    for kwargs, needle in library_side:
        g, *_ = _matmul_graph()
        with pytest.raises(cudnn.InvalidArgumentError, match=needle):
            g.build(target=CPU, **kwargs)
        assert not g.is_built()
    with pytest.raises(ValueError, match="whole engines"):
        _matmul_graph()[0].deselect_engines("eng4_k3=1")


def test_five_steps_then_build_plans_all_rebuilds_with_the_policy(arrays):
    g, a, b, c = _matmul_graph()
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    g.deselect_engines(["eng5"])
    g.check_support(target=CPU)  # builds nothing, as cudnn-frontend's
    assert not g.is_built() and g.get_execution_plan_count() == 1
    g.build_plans()  # the target check_support was given
    assert _stored_options(g)["policy"] == "HEURISTICS_CHOICE"
    g.build_plans()  # same policy: nothing to do
    assert _stored_options(g)["policy"] == "HEURISTICS_CHOICE"
    g.build_plans(build_plan_policy.ALL)  # built again, filters kept
    o = _stored_options(g)
    assert (o["policy"], o["exclude_engines"]) == ("ALL", [5])
    assert g.get_execution_plan_count() == 1
    # The Tensor objects of the graph still address it.
    x, y, ref = arrays
    out = np.zeros((1, 2, 4), np.float32)
    g.execute({a: x, b: y, c: out})
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


def test_build_plans_cannot_change_a_graph_built_by_build():
    g, *_ = _matmul_graph()
    g.build(target=CPU)
    g.build_plans()  # HEURISTICS_CHOICE: a no-op, as before
    with pytest.raises(cudnn.WrongStateError, match="build_plans"):
        g.build_plans(build_plan_policy.ALL)
    g2, *_ = _matmul_graph()
    g2.build(target=CPU, policy="all")
    g2.build_plans(build_plan_policy.ALL)
    # Before any build, build_plans builds with its policy.
    g3, *_ = _matmul_graph()
    g3.create_execution_plans([cudnn.heur_mode.A])
    g3._target = CPU
    g3.build_plans(build_plan_policy.ALL)
    assert _stored_options(g3)["policy"] == "ALL"
    assert _stored_options(g3)["heur_modes"] == ["A"]


def test_high_level_jit_passes_plan_keywords():
    @cudnn.jit(heur_modes=cudnn.heur_mode.A, target=CPU, policy=build_plan_policy.ALL,
               exclude_engines=[1])
    def make():
        g, a, b, c = _matmul_graph()
        return g, [a, b, c]

    g, uids = make()
    o = _stored_options(g)
    assert (o["policy"], o["exclude_engines"], o["heur_modes"]) == ("ALL", [1], ["A"])


# ---------------------------------------------------------------------------
# GPU-only calls on the CPU reference


def test_autotune_needs_a_gpu_plan(arrays):
    g, a, b, c = _matmul_graph()
    with pytest.raises(cudnn.WrongStateError):
        g.autotune()
    g.build(target=CPU)
    with pytest.raises(cudnn.GraphNotSupportedError,
                       match='graph "mm" was built for the CPU reference; autotune needs a GPU'):
        g.autotune()
    x, y, _ = arrays
    out = np.zeros((1, 2, 4), np.float32)
    with pytest.raises(cudnn.GraphNotSupportedError, match="CPU reference"):
        g.autotune({a: x, b: y, c: out}, warmup_iterations=0, max_ms_per_plan=5)
    # The options reach the library, which checks them first.
    with pytest.raises(cudnn.InvalidArgumentError, match="min_iterations 0"):
        g.autotune(min_iterations=0)
    with pytest.raises(cudnn.InvalidArgumentError, match="tolerance"):
        g.autotune(tolerance=1.5)
    with pytest.raises(TypeError):
        g.autotune(tolerance="small")
    # Arrays are checked as for execute.
    with pytest.raises(ValueError, match="shape"):
        g.autotune({a: x, b: y, c: np.zeros((2, 2), np.float32)})
    assert g.get_selected_plan() == 0


def test_cuda_graph_population_needs_a_gpu_plan(arrays):
    g, a, b, c = _matmul_graph()
    g.build(target=CPU)
    x, y, _ = arrays
    out = np.zeros((1, 2, 4), np.float32)
    for method in (g.populate_cuda_graph, g.update_cuda_graph):
        with cudnn.create_handle() as h:
            with pytest.raises(cudnn.GraphNotSupportedError,
                               match="built for the CPU reference; a CUDA graph needs a GPU plan"):
                method(h, {a: x, b: y, c: out}, None, 0x1000)
        with pytest.raises(cudnn.GraphNotSupportedError, match="CUDA graph"):
            method(None, {a: x, b: y, c: out}, None, None)
        with pytest.raises(TypeError, match="cudaGraph_t"):
            method(None, {a: x, b: y, c: out}, None, "graph")
        with pytest.raises(TypeError, match="variant_pack"):
            method(None, [x, y, out], None, 0x1000)


# ---------------------------------------------------------------------------
# the plan cache


def test_plan_cache_stats_and_clear():
    cudnn.plan_cache_clear()
    stats = cudnn.plan_cache_stats()
    assert isinstance(stats, cudnn.PlanCacheStats)
    assert stats == cudnn.PlanCacheStats(0, 0, 0, 0, 0, 0)
    g, *_ = _matmul_graph()
    g.build(target=CPU)  # the CPU reference does not use the cache
    assert cudnn.plan_cache_stats() == stats


def test_selection_refreshes_the_high_level_workspace(arrays):
    # Graph.__call__ keeps one workspace; it must follow the selected plan.
    with cudnn.Graph(io_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT,
                     target=CPU) as graph:
        x, y, ref = arrays
        graph.matmul(x, y).set_output(True)
    graph.select_plan(0)
    np.testing.assert_allclose(graph(x, y), ref, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------
# on the GPU (skipped without torch and a CUDA device)


def _torch_cuda():
    torch = pytest.importorskip("torch", reason="GPU plan tests need torch")
    if not torch.cuda.is_available():
        pytest.skip("GPU plan tests need a CUDA device; torch sees none")
    return torch


def _half_matmul(torch, handle, **build):
    a = torch.randn(8, 128, 64, device="cuda", dtype=torch.half)
    b = torch.randn(8, 64, 96, device="cuda", dtype=torch.half)
    g = cudnn.pygraph(io_data_type=data_type.HALF, intermediate_data_type=data_type.FLOAT,
                      compute_data_type=data_type.FLOAT, handle=handle, name="gpu_mm")
    ta, tb = g.tensor_like(a), g.tensor_like(b)
    tc = g.matmul(ta, tb).set_output(True)
    g.build(target=target.GPU, **build)
    c = torch.full((8, 128, 96), float("nan"), device="cuda", dtype=torch.half)
    return g, {ta: a, tb: b, tc: c}, c, (a.float() @ b.float())


def test_gpu_policy_all_autotune_and_plan_blob():
    torch = _torch_cuda()
    with cudnn.create_handle() as h:
        g, pack, c, ref = _half_matmul(torch, h, policy=build_plan_policy.ALL,
                                       disable_plan_cache=True)
        infos = g.get_plan_infos()
        assert len(infos) == g.get_execution_plan_count() >= 1
        assert all(i.engine_id >= 0 and i.name.startswith("eng%d" % i.engine_id) for i in infos)
        for i in range(len(infos)):
            ws = torch.empty(max(g.get_workspace_size_plan_at_index(i), 1), device="cuda",
                             dtype=torch.uint8)
            c.fill_(float("nan"))
            g.execute_plan_at_index(pack, ws, i, handle=h)
            torch.cuda.synchronize()
            torch.testing.assert_close(c.float(), ref, atol=5e-2, rtol=2e-2)
        chosen = g.autotune(pack, handle=h, max_ms_per_plan=20)
        assert chosen == g.get_selected_plan()
        timed = g.get_plan_infos()
        assert timed[chosen].chosen_by_autotune and timed[chosen].autotune_time_ms > 0
        blob = g.serialize_plan()
        loaded = cudnn.pygraph.deserialize_plan(blob, handle=h)
        assert loaded.get_build_info().source is plan_source.SERIALIZED
        assert loaded.get_plan_name() == g.get_plan_name()
        assert loaded.get_plan_info(0).chosen_by_autotune


def test_gpu_same_graph_twice_hits_the_plan_cache():
    torch = _torch_cuda()
    cudnn.plan_cache_clear()
    with cudnn.create_handle() as h:
        g1, *_ = _half_matmul(torch, h)
        g2, *_ = _half_matmul(torch, h)
    assert g1.get_build_info().source is plan_source.BUILT
    assert g2.get_build_info().source is plan_source.MEMORY_CACHE
    stats = cudnn.plan_cache_stats()
    assert stats.hits >= 1 and stats.misses >= 1 and stats.entries >= 1
