"""The plan-control layer of CuDNNFE.jl (src/plans.jl, build! options) and
the values its tests expect, checked without Julia.

The C calls src/plans.jl makes are made here through ctypes (struct layouts
from the manifest) on the CPU reference, and the results compared with what
test/runtests.jl's "plans" testset expects: 1-based plan indices mapped to
the C's 0-based ones, the Symbol tables (lower-case constant names), the
build options read back from the plan blob, the blob's header and checksum,
the foreign-GPU blob the test forges, and the messages it matches. A static
part checks that the testset exercises every exported plan function.
"""
import ctypes
import json
import os
import re

import pytest

import jlcheck

LIB_PATH = jlcheck.find_library()
if LIB_PATH is None and os.environ.get("CUDNNFE_LIBRARY"):
    pytest.fail("CUDNNFE_LIBRARY=%s is not a file" % os.environ["CUDNNFE_LIBRARY"], pytrace=False)

with open(jlcheck.MANIFEST, encoding="utf-8") as _f:
    MANIFEST = json.load(_f)
CONST = {c["name"]: c["value"] for c in MANIFEST["constants"]}
ALIASES = {t["name"]: t["julia_type"] for t in MANIFEST["typedefs"]}
_CTYPES = {"Csize_t": ctypes.c_size_t, "Int32": ctypes.c_int32, "UInt32": ctypes.c_uint32,
           "Int64": ctypes.c_int64, "Cdouble": ctypes.c_double}


def _ctype(julia_type):
    t = ALIASES.get(julia_type, julia_type)
    if t in _CTYPES:
        return _CTYPES[t]
    if t.startswith("Ptr{") or t == "Cstring":
        return ctypes.c_void_p
    if t.startswith("NTuple{"):
        n, inner = t[len("NTuple{"):-1].split(",", 1)
        return _ctype(inner.strip()) * int(n)
    raise AssertionError(t)


STRUCTS = {s["typedef"]: type(s["name"], (ctypes.Structure,),
                              {"_fields_": [(f["name"], _ctype(f["julia_type"])) for f in s["fields"]]})
           for s in MANIFEST["structs"]}

SRC = jlcheck.julia_sources(jlcheck.SRC_DIR)
RUNTESTS = jlcheck.julia_sources(jlcheck.TEST_DIR)["runtests.jl"]


def _symbols(prefix):
    """What _prefixed_constants(prefix) makes: lower-case name -> value."""
    return {n[len(prefix):].lower(): v for n, v in CONST.items() if n.startswith(prefix)}


def _plans_testset():
    m = re.search(r'@testset "plans: [^"]*" begin\n(.*?)\n@testset "', RUNTESTS, re.S)
    assert m, "test/runtests.jl has no plans testset"
    return m.group(1)


# ---- static checks ----------------------------------------------------------


def test_the_plans_testset_uses_every_exported_plan_function():
    exported = re.search(r"^export PlanInfo, (.*?)\n(?=\S)", SRC["CuDNNFE.jl"], re.M | re.S)
    assert exported, "CuDNNFE.jl does not export the plan functions"
    names = [n.strip() for n in exported.group(1).replace("\n", " ").split(",") if n.strip()]
    assert len(names) >= 15
    body = _plans_testset()
    unused = [n for n in names if n != "BuildInfo"
              and not re.search(r"(?<![\w.])%s(?![\w!])" % re.escape(n), body)]
    assert unused == [], "the plans testset never calls %s" % unused


def test_symbol_tables_exist_for_the_symbols_the_code_and_tests_use():
    plans = SRC["plans.jl"]
    for prefix in ("CUDNNFE_BUILD_POLICY_", "CUDNNFE_NUMERICAL_NOTE_", "CUDNNFE_BEHAVIOR_NOTE_",
                   "CUDNNFE_PLAN_SOURCE_"):
        assert '_prefixed_constants("%s")' % prefix in plans
    tables = {"policy": _symbols("CUDNNFE_BUILD_POLICY_"),
              "numerical": _symbols("CUDNNFE_NUMERICAL_NOTE_"),
              "behavior": _symbols("CUDNNFE_BEHAVIOR_NOTE_"),
              "source": _symbols("CUDNNFE_PLAN_SOURCE_")}
    assert set(tables["policy"]) == {"heuristics_choice", "all"}
    assert {"built", "memory_cache", "disk_cache", "serialized", "rebuilt"} == set(tables["source"])
    body = _plans_testset()
    for sym in ("tensor_core", "nondeterministic"):
        assert sym in tables["numerical"] and ":" + sym in body
    for sym in ("runtime_compilation", "supports_cuda_graph_native_api"):
        assert sym in tables["behavior"] and ":" + sym in body
    for sym in ("built", "serialized", "rebuilt"):
        assert ":" + sym in body
    # The default policy of build! is a Symbol of the table.
    m = re.search(r"policy = :(\w+), max_workspace_size = nothing", SRC["graph.jl"])
    assert m and m.group(1) in tables["policy"]
    # Every note table holds :all, which _note_bits uses to bound masks.
    assert "all" in tables["numerical"] and "all" in tables["behavior"]


# ---- the library, as src/plans.jl calls it ------------------------------------


@pytest.fixture(scope="module")
def clib():
    if LIB_PATH is None:
        pytest.skip("no built libcudnnfe.so (build*/ or $CUDNNFE_LIBRARY)")
    L = ctypes.CDLL(LIB_PATH)
    for f in ("cudnnfe_graph_last_error", "cudnnfe_handle_last_error", "cudnnfe_last_error"):
        getattr(L, f).restype = ctypes.c_char_p
    return L


class Graph:
    def __init__(self, L):
        self.L = L
        self.p = ctypes.c_void_p()
        assert L.cudnnfe_graph_create(ctypes.byref(self.p)) == 0

    def close(self):
        self.L.cudnnfe_graph_destroy(self.p)

    def call(self, fn, *args):
        return getattr(self.L, fn)(self.p, *args)

    def message(self):
        return self.L.cudnnfe_graph_last_error(self.p).decode()

    def ok(self, fn, *args):
        status = self.call(fn, *args)
        assert status == 0, self.message()


def _mm_graph(L, name=b"mm", cols=2):
    """mm_graph() of the testset: x (3, 4), w (4, cols) in Julia order, matmul!(g, x, w)."""
    g = Graph(L)
    g.ok("cudnnfe_graph_set_name", name)
    uids = []
    for tname, jsize in ((b"x", (3, 4)), (b"w", (4, cols))):
        dims = (ctypes.c_int64 * 2)(*reversed(jsize))
        u = ctypes.c_int64()
        g.ok("cudnnfe_graph_add_tensor", tname, CONST["CUDNNFE_DTYPE_FLOAT"], 2, dims, None,
             ctypes.byref(u))
        uids.append(u.value)
    o = STRUCTS["cudnnfe_matmul_options_t"]()
    L.cudnnfe_matmul_options_init_sized(ctypes.byref(o), ctypes.c_size_t(ctypes.sizeof(o)))
    mmname = ctypes.create_string_buffer(b"mm")
    o.name = ctypes.cast(mmname, ctypes.c_void_p)
    out = ctypes.c_int64()
    # a * b in Julia is the C matmul of (b, a).
    g.ok("cudnnfe_graph_add_matmul", ctypes.c_int64(uids[1]), ctypes.c_int64(uids[0]),
         ctypes.byref(o), ctypes.byref(out))
    g.ok("cudnnfe_tensor_set_output", ctypes.c_int64(out.value), 1)
    p = ctypes.c_char_p()
    g.ok("cudnnfe_tensor_get_name", ctypes.c_int64(out.value), ctypes.byref(p))
    assert p.value == b"mm::c"  # find_tensor(g, "mm::c") in the testset
    return g


def _build(g, **fields):
    """build!(g; target = :cpu_reference, fields...) with the C struct filled as build! does."""
    o = STRUCTS["cudnnfe_build_options_t"]()
    g.L.cudnnfe_build_options_init_sized(ctypes.byref(o), ctypes.c_size_t(ctypes.sizeof(o)))
    o.target = CONST["CUDNNFE_TARGET_CPU_REFERENCE"]
    keep = []
    for k, v in fields.items():
        if k == "exclude_engines":
            arr = (ctypes.c_int64 * len(v))(*v)
            keep.append(arr)
            o.num_exclude_engines = len(v)
            o.exclude_engines = ctypes.cast(arr, ctypes.c_void_p)
        elif k == "plan_cache_dir":
            buf = ctypes.create_string_buffer(v)
            keep.append(buf)
            o.plan_cache_dir = ctypes.cast(buf, ctypes.c_void_p)
        elif k == "heur_modes":
            o.num_heur_modes = len(v)
            for i, m in enumerate(v):
                o.heur_modes[i] = m
        else:
            setattr(o, k, v)
    return g.call("cudnnfe_graph_build", None, ctypes.byref(o))


def _blob(g):
    n = ctypes.c_size_t()
    g.ok("cudnnfe_graph_serialize_plan", None, 0, ctypes.byref(n))
    buf = ctypes.create_string_buffer(n.value)
    g.ok("cudnnfe_graph_serialize_plan", buf, n.value, ctypes.byref(n))
    return buf.raw[:n.value]


def _fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x00000100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def _load(L, blob, rebuild=0):
    g = Graph(L)
    o = STRUCTS["cudnnfe_plan_load_options_t"]()
    L.cudnnfe_plan_load_options_init_sized(ctypes.byref(o), ctypes.c_size_t(ctypes.sizeof(o)))
    o.rebuild_on_mismatch = rebuild
    status = g.call("cudnnfe_graph_deserialize_plan", None, blob, len(blob), ctypes.byref(o))
    return g, status


def _source(g):
    info = STRUCTS["cudnnfe_build_info_t"]()
    g.L.cudnnfe_build_info_init_sized(ctypes.byref(info), ctypes.c_size_t(ctypes.sizeof(info)))
    g.ok("cudnnfe_graph_get_build_info", ctypes.byref(info))
    return {v: k for k, v in _symbols("CUDNNFE_PLAN_SOURCE_").items()}[info.source]


def test_plan_queries_and_one_based_indices(clib):
    g = _mm_graph(clib)
    n = ctypes.c_int64()
    assert g.call("cudnnfe_graph_get_plan_count", ctypes.byref(n)) == CONST["CUDNNFE_STATUS_WRONG_STATE"]
    assert _build(g) == 0
    g.ok("cudnnfe_graph_get_plan_count", ctypes.byref(n))
    assert n.value == 1
    info = STRUCTS["cudnnfe_plan_info_t"]()
    clib.cudnnfe_plan_info_init_sized(ctypes.byref(info), ctypes.c_size_t(ctypes.sizeof(info)))
    g.ok("cudnnfe_graph_get_plan_info", ctypes.c_int64(1 - 1), ctypes.byref(info))  # Julia index 1
    assert ctypes.string_at(info.name) == b"cpu_reference"
    assert (info.engine_id, info.workspace_size, info.numerical_notes, info.behavior_notes) == (-1, 0, 0, 0)
    assert info.autotune_time_ms < 0  # plan_info gives `nothing`
    assert (info.selected, info.chosen_by_autotune) == (1, 0)
    sel = ctypes.c_int64()
    g.ok("cudnnfe_graph_get_selected_plan", ctypes.byref(sel))
    assert sel.value + 1 == 1
    # Julia's own range check comes first; the library's agrees on the C side.
    assert g.call("cudnnfe_graph_select_plan", ctypes.c_int64(1)) == CONST["CUDNNFE_STATUS_INVALID_ARGUMENT"]
    assert "it has 1 plan" in g.message()
    assert _source(g) == "built"
    g.close()


def test_fingerprints_the_testset_compares(clib):
    prints = []
    for name, cols in ((b"mm", 2), (b"other", 2), (b"mm", 5)):
        g = _mm_graph(clib, name, cols)
        buf = ctypes.create_string_buffer(CONST["CUDNNFE_FINGERPRINT_SIZE"])
        g.ok("cudnnfe_graph_get_fingerprint", buf, len(buf))
        prints.append(buf.value.decode())
        g.close()
    assert re.fullmatch(r"[0-9a-f]{32}", prints[0])
    assert prints[0] == prints[1] != prints[2]


def test_blob_header_round_trip_and_forged_gpu_blob(clib):
    g = _mm_graph(clib)
    assert _build(g) == 0
    blob = _blob(g)
    header, payload = blob.split(b"\n", 1)
    fields = header.decode().split(" ")
    assert fields[:2] == ["CUDNNFE-PLAN", "1"] and int(fields[2]) == len(payload)
    assert fields[3] == "%016x" % _fnv1a64(payload)
    text = payload.decode()
    assert '"target": "CPU_REFERENCE"' in text
    top = '\n  "target": "CPU_REFERENCE",'
    assert text.count(top) == 1
    loaded, status = _load(clib, blob)
    assert status == 0 and _source(loaded) == "serialized"
    assert _blob(loaded) == blob
    loaded.close()
    # Damaged blobs, as the testset makes them.
    flipped = bytearray(blob)
    flipped[len(flipped) - 21] ^= 1  # Julia's flipped[end - 20]
    for bad, needle in ((bytes(flipped), "checksum"), (blob[:len(blob) // 2], "plan blob"),
                        (b"", "plan blob")):
        g2, status = _load(clib, bad)
        assert status == CONST["CUDNNFE_STATUS_BAD_SERIALIZED_DATA"]
        assert needle in g2.message()
        g2.close()
    # The forged GPU blob: refused naming both, rebuilt on request.
    faked = text.replace(top, '\n  "target": "GPU", "cudnn_version": 90100, '
                         '"device": {"name": "Faked GPU", "sm": 75}, "plan": {"name": "eng0", '
                         '"engine_id": 0, "knobs": [], "workspace_size": 0, "numerical_notes": [], '
                         '"behavior_notes": []},').encode()
    forged = b"CUDNNFE-PLAN 1 %d %016x\n" % (len(faked), _fnv1a64(faked)) + faked
    g3, status = _load(clib, forged)
    assert status == CONST["CUDNNFE_STATUS_BAD_SERIALIZED_DATA"]
    assert "Faked GPU (sm_75)" in g3.message() and "rebuild_on_mismatch" in g3.message()
    g3.close()
    g4, status = _load(clib, forged, rebuild=1)
    assert status == 0 and _source(g4) == "rebuilt"
    g4.close()
    g.close()


def test_build_options_as_build_fills_them(clib):
    num, beh = _symbols("CUDNNFE_NUMERICAL_NOTE_"), _symbols("CUDNNFE_BEHAVIOR_NOTE_")
    g = _mm_graph(clib)
    assert _build(g, heur_modes=[CONST["CUDNNFE_HEUR_MODE_B"]], policy=_symbols("CUDNNFE_BUILD_POLICY_")["all"],
                  max_workspace_size=1 << 20,
                  exclude_numerical_notes=num["tensor_core"] | num["nondeterministic"],
                  exclude_behavior_notes=beh["runtime_compilation"],
                  require_behavior_notes=beh["supports_cuda_graph_native_api"],
                  exclude_engines=[3, 7], max_plans=4, disable_plan_cache=1,
                  plan_cache_dir=b"") == 0
    text = _blob(g).decode()
    # The fragments the testset looks for, verbatim.
    body = _plans_testset()
    for part in ('"policy": "ALL"', '"heur_modes": ["B"]', '"max_workspace_size": 1048576',
                 '"exclude_numerical_notes": ["TENSOR_CORE", "NONDETERMINISTIC"]',
                 '"exclude_behavior_notes": ["RUNTIME_COMPILATION"]',
                 '"require_behavior_notes": ["SUPPORTS_CUDA_GRAPH_NATIVE_API"]',
                 '"exclude_engines": [3, 7]', '"max_plans": 4'):
        assert part in text
        assert part.replace('"', '\\"') in body, part
    g.close()
    # The options the testset expects the library (not Julia) to refuse.
    for fields in (dict(exclude_engines=[-3]), dict(max_plans=-1),
                   dict(exclude_behavior_notes=beh["runtime_compilation"],
                        require_behavior_notes=beh["runtime_compilation"])):
        g = _mm_graph(clib)
        assert _build(g, **fields) == CONST["CUDNNFE_STATUS_INVALID_ARGUMENT"], fields
        built = ctypes.c_int32()
        g.ok("cudnnfe_graph_is_built", ctypes.byref(built))
        assert built.value == 0
        g.close()


def test_gpu_only_calls_give_the_messages_the_testset_matches(clib):
    g = _mm_graph(clib)
    assert _build(g) == 0
    h = ctypes.c_void_p()
    assert clib.cudnnfe_handle_create(ctypes.byref(h), -1) == 0
    o = STRUCTS["cudnnfe_autotune_options_t"]()
    clib.cudnnfe_autotune_options_init_sized(ctypes.byref(o), ctypes.c_size_t(ctypes.sizeof(o)))
    body = _plans_testset()
    status = g.call("cudnnfe_graph_autotune", h, None, 0, None, 0, None, ctypes.byref(o))
    assert status == CONST["CUDNNFE_STATUS_NOT_SUPPORTED"]
    assert "built for the CPU reference; autotune needs a GPU plan" in g.message()
    assert "built for the CPU reference; autotune needs a GPU plan" in body
    o.min_iterations, o.max_iterations = 10, 5
    status = g.call("cudnnfe_graph_autotune", h, None, 0, None, 0, None, ctypes.byref(o))
    assert status == CONST["CUDNNFE_STATUS_INVALID_ARGUMENT"]
    assert "min_iterations 10 and max_iterations 5" in g.message()
    for fn in ("cudnnfe_graph_populate_cuda_graph", "cudnnfe_graph_update_cuda_graph"):
        status = g.call(fn, h, None, 0, None, 0, ctypes.c_void_p(0x1000))
        assert status == CONST["CUDNNFE_STATUS_NOT_SUPPORTED"]
        # Reported on the handle, which check(handle, ...) reads.
        assert "a CUDA graph needs a GPU plan" in clib.cudnnfe_handle_last_error(h).decode()
    clib.cudnnfe_handle_destroy(h)
    g.close()


def test_plan_cache_counters_after_clear(clib):
    assert clib.cudnnfe_plan_cache_clear() == 0
    s = STRUCTS["cudnnfe_plan_cache_stats_t"]()
    clib.cudnnfe_plan_cache_stats_init_sized(ctypes.byref(s), ctypes.c_size_t(ctypes.sizeof(s)))
    assert clib.cudnnfe_plan_cache_get_stats(ctypes.byref(s)) == 0
    assert (s.entries, s.hits, s.misses, s.disk_hits, s.disk_writes, s.disk_errors) == (0,) * 6
