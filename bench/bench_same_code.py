#!/usr/bin/env python3
"""Same-code benchmark: one cudnn-frontend-style program, two implementations.

The graphs below are written once against cudnn-frontend's Python API
(``cudnn.pygraph``, ``graph.sdpa``, ``graph.execute``, ...). Each measurement
runs in a fresh child process that imports either cudnnfe (as ``cudnn``) or
NVIDIA's cudnn-frontend (``import cudnn``, when its wheel is importable); the
two alternate, and the table prints each side and the ratio.

Rows:
  * GPU time: SDPA forward/backward (BF16, b=1, h_q=64, h_kv=8, d=128, causal,
    the LLM shapes of bench_attention.py), conv fprop, matmul, RMSNorm; median
    of CUDA-event-timed iterations after a warm-up.
  * execute host time per call (a 64x64 matmul, no synchronisation): a dict
    variant pack keyed by tensors, one keyed by UIDs, and the bound/preindexed
    path (cudnnfe ``graph.bind`` with its default, with ``cuda_graph=True`` (a replayed
    CUDA graph) and ``cuda_graph=False`` (cudnnBackendExecute per call); cudnn-frontend's
    preindexed ``execute(..., tensor_uids=)`` in all three rows).
  * cold build (CUDA_CACHE_DISABLE=1, fresh process whose CUDA context exists): the first
    graph, with handle creation (cuDNN's first use), and a second graph of the process;
    warm build (the same graph again in the process); plan load from
    serialized bytes; a persistent-cache hit in a new process (cudnnfe's
    CUDNNFE_PLAN_CACHE_DIR; cudnn-frontend: deserialize the bytes written by
    an earlier process).

  * first result from bytes (CUDA_CACHE_DISABLE=1, fresh process): what serialize()
    returned after a build in an earlier process, loaded with deserialize() and executed
    once, timed from importing the implementation until the GPU finished (SDPA forward and
    backward, conv, matmul), with its parts.
  * build_plans(ALL) after heuristics A (CUDA_CACHE_DISABLE=1, fresh process): time from
    creating the handle until every plan is built, and which plans each side built.

Usage: bench_same_code.py [--reps 3] [--only gpu,host,ttfr,all,build] [--impls cudnnfe,cudnn]
                          [--json results.json] [--cases sdpa_s2k,conv,matmul]
  (--only persist: the cold build and persistent-cache rows alone)
Needs torch and a GPU. cudnnfe is found as usual (CUDNNFE_LIBRARY or the
installed package); cudnn-frontend through PYTHONPATH / site-packages.
"""
import argparse
import functools
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------------------
# The graphs, in cudnn-frontend's API only.


def sdpa_graph(cudnn, torch, s, backward):
    b, hq, hkv, d = 1, 64, 8, 128
    bf16 = torch.bfloat16
    q = torch.randn(b, s, hq, d, device="cuda", dtype=bf16).transpose(1, 2)
    k = torch.randn(b, s, hkv, d, device="cuda", dtype=bf16).transpose(1, 2)
    v = torch.randn(b, s, hkv, d, device="cuda", dtype=bf16).transpose(1, 2)
    o = torch.empty_like(q)
    stats = torch.empty(b, hq, s, 1, device="cuda", dtype=torch.float32)
    g = cudnn.pygraph(io_data_type=cudnn.data_type.BFLOAT16,
                      intermediate_data_type=cudnn.data_type.FLOAT,
                      compute_data_type=cudnn.data_type.FLOAT)
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    scale = 1.0 / math.sqrt(d)
    if not backward:
        to, tstats = g.sdpa(name="sdpa", q=tq, k=tk, v=tv, generate_stats=False,
                            attn_scale=scale, use_causal_mask=True)
        to.set_output(True).set_dim(list(o.shape)).set_stride(list(o.stride()))
        pack = {tq: q, tk: k, tv: v, to: o}
        flops = 4 * b * hq * s * s * d / 2
        return g, pack, flops, "TFLOP/s"
    do = torch.randn_like(q)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    to, tdo, tst = g.tensor_like(o), g.tensor_like(do), g.tensor_like(stats)
    tdq, tdk, tdv = g.sdpa_backward(name="sdpa_backward", q=tq, k=tk, v=tv, o=to, dO=tdo,
                                    stats=tst, attn_scale=scale, use_causal_mask=True)
    for t, a in ((tdq, dq), (tdk, dk), (tdv, dv)):
        t.set_output(True).set_dim(list(a.shape)).set_stride(list(a.stride()))
    pack = {tq: q, tk: k, tv: v, to: o, tdo: do, tst: stats, tdq: dq, tdk: dk, tdv: dv}
    flops = 2.5 * 4 * b * hq * s * s * d / 2
    return g, pack, flops, "TFLOP/s"


def conv_graph(cudnn, torch, n=32, c=256, hw=56):
    x = torch.randn(n, c, hw, hw, device="cuda", dtype=torch.half).to(
        memory_format=torch.channels_last)
    w = torch.randn(c, c, 3, 3, device="cuda", dtype=torch.half).to(
        memory_format=torch.channels_last)
    y = torch.empty(n, c, hw, hw, device="cuda", dtype=torch.half).to(
        memory_format=torch.channels_last)
    g = cudnn.pygraph(io_data_type=cudnn.data_type.HALF,
                      intermediate_data_type=cudnn.data_type.FLOAT,
                      compute_data_type=cudnn.data_type.FLOAT)
    tx, tw = g.tensor_like(x), g.tensor_like(w)
    ty = g.conv_fprop(image=tx, weight=tw, padding=[1, 1], stride=[1, 1], dilation=[1, 1])
    ty.set_output(True).set_dim(list(y.shape)).set_stride(list(y.stride()))
    return g, {tx: x, tw: w, ty: y}, 2 * n * c * c * 9 * hw * hw, "TFLOP/s"


def matmul_graph(cudnn, torch, m=4096, n=4096, k=4096, dtype=None):
    dtype = dtype or torch.bfloat16
    a = torch.randn(1, m, k, device="cuda", dtype=dtype)
    b = torch.randn(1, k, n, device="cuda", dtype=dtype)
    c = torch.empty(1, m, n, device="cuda", dtype=dtype)
    io = cudnn.data_type.BFLOAT16 if dtype == torch.bfloat16 else cudnn.data_type.HALF
    g = cudnn.pygraph(io_data_type=io, intermediate_data_type=cudnn.data_type.FLOAT,
                      compute_data_type=cudnn.data_type.FLOAT)
    ta, tb = g.tensor_like(a), g.tensor_like(b)
    tc = g.matmul(name="matmul", A=ta, B=tb)
    tc.set_output(True).set_dim(list(c.shape)).set_stride(list(c.stride()))
    return g, {ta: a, tb: b, tc: c}, 2 * m * n * k, "TFLOP/s"


def rmsnorm_graph(cudnn, torch, tokens=16384, hidden=8192):
    x = torch.randn(tokens, hidden, 1, 1, device="cuda", dtype=torch.bfloat16)
    scale = torch.randn(1, hidden, 1, 1, device="cuda", dtype=torch.bfloat16)
    eps = torch.full((1, 1, 1, 1), 1e-5, dtype=torch.float32)  # host: pass by value
    y = torch.empty_like(x)
    g = cudnn.pygraph(io_data_type=cudnn.data_type.BFLOAT16,
                      intermediate_data_type=cudnn.data_type.FLOAT,
                      compute_data_type=cudnn.data_type.FLOAT)
    tx, ts = g.tensor_like(x), g.tensor_like(scale)
    te = g.tensor(name="epsilon", dim=[1, 1, 1, 1], stride=[1, 1, 1, 1],
                  data_type=cudnn.data_type.FLOAT, is_pass_by_value=True)
    ty, _ = g.rmsnorm(name="rmsnorm", norm_forward_phase=cudnn.norm_forward_phase.INFERENCE,
                      input=tx, scale=ts, epsilon=te)
    ty.set_output(True).set_dim(list(y.shape)).set_stride(list(y.stride()))
    return g, {tx: x, ts: scale, te: eps, ty: y}, 2 * x.numel() * 2, "GB/s"


GPU_CASES = {
    "sdpa_fwd_s8k": lambda c, t: sdpa_graph(c, t, 8192, False),
    "sdpa_bwd_s8k": lambda c, t: sdpa_graph(c, t, 8192, True),
    "sdpa_fwd_s16k": lambda c, t: sdpa_graph(c, t, 16384, False),
    "sdpa_bwd_s16k": lambda c, t: sdpa_graph(c, t, 16384, True),
    "conv_n32_c256_56": conv_graph,
    "matmul_4096": matmul_graph,
    "rmsnorm_16k_8192": rmsnorm_graph,
}
BUILD_CASES = {
    "sdpa_s2k": lambda c, t: sdpa_graph(c, t, 2048, False),
    "conv": lambda c, t: conv_graph(c, t, 8, 64, 56),
    "matmul": lambda c, t: matmul_graph(c, t, 1024, 1024, 1024),
}

# ---------------------------------------------------------------------------
# The child: one measurement in this process.


def build(cudnn, g, handle):
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    g.check_support()
    g.build_plans()


def workspace_for(torch, g):
    return torch.empty(max(g.get_workspace_size(), 1), device="cuda", dtype=torch.uint8)


def gpu_time_ms(torch, fn, iters):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def child_gpu(cudnn, torch, case, iters):
    handle = cudnn.create_handle()
    g, pack, work, unit = GPU_CASES[case](cudnn, torch)
    build(cudnn, g, handle)
    ws = workspace_for(torch, g)
    ms = gpu_time_ms(torch, lambda: g.execute(pack, ws, handle=handle), iters)
    return {"value": work / (ms * 1e-3) / 1e12 if unit == "TFLOP/s" else work / (ms * 1e-3) / 1e9,
            "unit": unit, "ms": ms}


def host_us(fn, calls):
    for _ in range(50):
        fn()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e6


def preindexed(cudnn, g, pack, ws, handle, cuda_graph=None):
    """The bound path each implementation offers for a fixed variant pack: cudnnfe's
    graph.bind() (cuda_graph: None its default, True a replayed CUDA graph, False plain
    cudnnBackendExecute); cudnn-frontend's execute(buffers, tensor_uids=...) (its
    preindexed form, the same for every cuda_graph)."""
    if hasattr(g, "bind"):
        return g.bind(pack, ws, handle=handle, cuda_graph=cuda_graph)
    uids = [t.get_uid() for t in pack]
    buffers = tuple(pack.values())
    return lambda: g.execute(buffers, ws, handle=handle, tensor_uids=uids)


def child_host(cudnn, torch, case, calls):
    handle = cudnn.create_handle()
    stream = torch.cuda.current_stream().cuda_stream
    cudnn.set_stream(handle=handle, stream=stream)
    g, pack, _, _ = matmul_graph(cudnn, torch, 64, 64, 64, torch.half)
    build(cudnn, g, handle)
    ws = workspace_for(torch, g)
    if case == "dict":
        fn = lambda: g.execute(pack, ws, handle=handle)
    elif case == "uid_dict":
        by_uid = {t.get_uid(): a for t, a in pack.items()}
        fn = lambda: g.execute(by_uid, ws, handle=handle)
    else:
        # "bound" (the default), "bound_graph" (CUDA graph on), "bound_plain" (off).
        cuda_graph = {"bound": None, "bound_graph": True, "bound_plain": False}[case]
        fn = preindexed(cudnn, g, pack, ws, handle, cuda_graph)
    us = host_us(fn, calls)
    torch.cuda.synchronize()
    return {"value": us, "unit": "us/call"}


def child_build(cudnn, torch, case, which, cache_file):
    # The CUDA context exists before the clock starts (the program's framework made it; it
    # costs about 200 ms on an H200 and is neither implementation's work).
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    handle = cudnn.create_handle()
    make = BUILD_CASES[case]
    if which == "cold":
        g, _, _, _ = make(cudnn, torch)
        build(cudnn, g, handle)
        first = time.perf_counter() - t0
        g2, _, _, _ = BUILD_CASES["matmul" if case != "matmul" else "conv"](cudnn, torch)
        t1 = time.perf_counter()
        build(cudnn, g2, handle)
        return {"value": first * 1e3, "second": (time.perf_counter() - t1) * 1e3, "unit": "ms"}
    g, _, _, _ = make(cudnn, torch)
    build(cudnn, g, handle)
    if which == "warm":
        g2, _, _, _ = make(cudnn, torch)
        t1 = time.perf_counter()
        build(cudnn, g2, handle)
        return {"value": (time.perf_counter() - t1) * 1e3, "unit": "ms"}
    if which == "load":
        # The built plan: serialize() after a build, on both.
        data = g.serialize()
        g2 = cudnn.pygraph()
        t1 = time.perf_counter()
        g2.deserialize(handle, data)
        return {"value": (time.perf_counter() - t1) * 1e3, "unit": "ms"}
    raise SystemExit(f"unknown build measure {which}")


TTFR_CASES = {
    "sdpa_fwd_s2k": lambda c, t: sdpa_graph(c, t, 2048, False),
    "sdpa_bwd_s2k": lambda c, t: sdpa_graph(c, t, 2048, True),
    "conv": lambda c, t: conv_graph(c, t, 8, 64, 56),
    "matmul": lambda c, t: matmul_graph(c, t, 1024, 1024, 1024),
}


def child_ttfr(case, phase, cache_file):
    """Time to first result from serialized bytes in a fresh process. Phase 'write': build,
    execute, and keep what serialize() returns, with each bound array's UID, shape, stride and
    dtype. Phase 'load' (the measurement): torch and the arrays are ready (a program's own
    start-up); timed from importing the implementation through a handle, deserialize() and the
    first execute until the GPU finished it."""
    import torch
    cache_file = f"{cache_file}.{IMPL}"  # each implementation loads its own bytes
    meta_file = cache_file + ".json"
    if phase == "write":
        cudnn = _import_impl()
        handle = cudnn.create_handle()
        g, pack, _, _ = TTFR_CASES[case](cudnn, torch)
        build(cudnn, g, handle)
        g.execute(pack, workspace_for(torch, g), handle=handle)
        torch.cuda.synchronize()
        with open(cache_file, "wb") as f:
            f.write(bytes(g.serialize()))
        meta = [{"uid": t.get_uid(), "dim": list(a.shape), "stride": list(a.stride()),
                 "dtype": str(a.dtype).split(".")[-1]} for t, a in pack.items()]
        with open(meta_file, "w") as f:
            json.dump(meta, f)
        return {"value": os.path.getsize(cache_file), "unit": "bytes"}
    with open(meta_file) as f:
        meta = json.load(f)
    arrays = {}
    for m in meta:
        a = torch.empty_strided(m["dim"], m["stride"], dtype=getattr(torch, m["dtype"]),
                                device="cuda")
        arrays[m["uid"]] = a.normal_() if a.is_floating_point() else a.zero_()
    with open(cache_file, "rb") as f:
        data = f.read()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    cudnn = _import_impl()
    t_import = time.perf_counter()
    handle = cudnn.create_handle()
    t_handle = time.perf_counter()
    g = cudnn.pygraph()
    g.deserialize(handle, data)
    t_load = time.perf_counter()
    g.execute(arrays, workspace_for(torch, g), handle=handle)
    torch.cuda.synchronize()
    t_end = time.perf_counter()
    return {"value": (t_end - t0) * 1e3, "unit": "ms", "bytes": len(data),
            "import_ms": (t_import - t0) * 1e3, "handle_ms": (t_handle - t_import) * 1e3,
            "deserialize_ms": (t_load - t_handle) * 1e3, "execute_ms": (t_end - t_load) * 1e3}


def child_all(cudnn, torch, case):
    """check_support() then build_plans(ALL) after heuristics A: which plans each
    implementation builds and how long it takes from creating the handle (cuDNN's first use:
    cudnn-frontend makes its handles in create_handle() and pygraph(), cudnnfe at the first
    build) to the last plan built; the parts are printed beneath (cudnnfe's check_support builds
    the heuristics' choice, build_plans(ALL) restores it and builds the others)."""
    torch.cuda.synchronize()  # the CUDA context exists before the clock starts, for both
    t0 = time.perf_counter()
    handle = cudnn.create_handle()
    g, _, _, _ = BUILD_CASES[case](cudnn, torch)
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([cudnn.heur_mode.A])
    offered = [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())]
    t_check = time.perf_counter()
    g.check_support()
    t1 = time.perf_counter()
    g.build_plans(cudnn.build_plan_policy.ALL)
    ms = (time.perf_counter() - t0) * 1e3
    build_ms = (time.perf_counter() - t1) * 1e3
    setup_ms = (t_check - t0) * 1e3
    del handle
    built = []
    for i in range(g.get_execution_plan_count()):
        name = g.get_plan_name_at_index(i)
        try:
            g.get_workspace_size_plan_at_index(i)
            built.append(name)
        except Exception:  # noqa: BLE001 - a plan that did not build
            pass
    return {"value": ms, "unit": "ms", "setup_ms": setup_ms,
            "check_support_ms": ms - build_ms - setup_ms, "build_plans_ms": build_ms, "offered": offered, "built": built, "count": len(built)}


# The "after start-up" row: time between making the handle and the first build.
STARTUP_GAP_S = 1.0


def child_persistent(cudnn, torch, case, phase, cache_file):
    """phase 'write': build and keep the plan; phase 'hit': a new process's build, timed from
    handle creation (cuDNN's first use included) to a ready plan; phase 'hit-startup': the
    same, but the program first spends STARTUP_GAP_S on other start-up work (reading
    weights, say) after making its handle, and only the build is timed."""
    is_cudnnfe = cudnn.__name__ == "cudnnfe"
    torch.zeros(1, device="cuda")  # the CUDA context first, as in child_build
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    handle = cudnn.create_handle()
    if phase == "hit-startup":
        time.sleep(STARTUP_GAP_S)
        t0 = time.perf_counter()
    t_handle = time.perf_counter()
    g, _, _, _ = BUILD_CASES[case](cudnn, torch)
    t_graph = time.perf_counter()
    parts = {"handle_ms": (t_handle - t0) * 1e3, "graph_ms": (t_graph - t_handle) * 1e3}
    if phase == "write" or is_cudnnfe:
        build(cudnn, g, handle)  # cudnnfe: the plan cache directory makes this a load
        if is_cudnnfe:
            info = g.get_build_info()
            for key in ("total_ms", "validate_ms", "cache_ms", "lower_ms", "heuristics_ms",
                        "plan_build_ms"):
                parts["build_" + key] = getattr(info, key)
            parts["source"] = str(info.source)
        if phase == "write" and not is_cudnnfe:
            with open(cache_file, "wb") as f:
                f.write(bytes(g.serialize()))
    else:
        with open(cache_file, "rb") as f:
            data = list(f.read())
        cudnn.pygraph().deserialize(handle, data)
    return dict(parts, value=(time.perf_counter() - t0) * 1e3, unit="ms")


IMPL = "cudnnfe"


def _import_impl():
    if IMPL == "cudnnfe":
        import cudnnfe as cudnn
    else:
        import cudnn
    return cudnn


def child_main(args):
    global IMPL
    IMPL = args.impl
    kind, case, extra = args.child.split(":")
    if kind == "ttfr":
        out = child_ttfr(case, extra, args.cache_file)
        out["backend"] = _import_impl().backend_version()
        print("RESULT " + json.dumps(out), flush=True)
        return
    import torch
    cudnn = _import_impl()
    if kind == "all":
        out = child_all(cudnn, torch, case)
    elif kind == "gpu":
        out = child_gpu(cudnn, torch, case, int(extra))
    elif kind == "host":
        out = child_host(cudnn, torch, case, int(extra))
    elif kind == "build":
        out = child_build(cudnn, torch, case, extra, args.cache_file)
    else:
        out = child_persistent(cudnn, torch, case, extra, args.cache_file)
    out["backend"] = cudnn.backend_version()
    print("RESULT " + json.dumps(out), flush=True)


# ---------------------------------------------------------------------------
# The parent: fresh processes, alternating implementations.


def run_child(impl, spec, env_extra=None, cache_file=""):
    env = dict(os.environ)
    env.update(env_extra or {})
    cmd = [sys.executable, os.path.abspath(__file__), "--impl", impl, "--child", spec,
           "--cache-file", cache_file]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["no output"]
    return {"error": tail[0][:120]}


def importable(impl):
    probe = "import cudnnfe" if impl == "cudnnfe" else "import cudnn; cudnn.pygraph"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def fmt(r, key="value"):
    if "error" in r:
        return "error"
    return f"{r[key]:.3g}" if r[key] < 100 else f"{r[key]:.0f}"


ERRORS = []
ROWS = []  # for --json (bench/plot_results.py's format)
JSON_OUT = ()  # (path, torch) when --json was given
JSON_NAMES = {"cudnnfe": "cudnnfe", "cudnn": "cudnn-frontend"}


def row(title, results, impls, key="value", higher_is_better=False, group=None, unit=None):
    for i in impls:
        if results.get(i) and "error" in results[i]:
            ERRORS.append(f"{title} [{i}]: {results[i]['error']}")
    cells = [fmt(results[i], key) if results.get(i) else "-" for i in impls]
    ratio = ""
    if len(impls) == 2 and all(results.get(i) and "error" not in results[i] for i in impls):
        a, b = results[impls[0]][key], results[impls[1]][key]
        ratio = f"{(a / b if higher_is_better else b / a):.2f}x"
    print(f"{title:<44}" + "".join(f"{c:>14}" for c in cells) + f"{ratio:>10}", flush=True)
    values = {JSON_NAMES.get(i, i): results[i][key] for i in impls
              if results.get(i) and "error" not in results[i]}
    if group and values:
        unit = unit or next((results[i].get("unit") for i in impls if results.get(i)), "")
        ROWS.append({"name": title, "group": group, "unit": unit,
                     "higher_is_better": higher_is_better, "values": values})
        if JSON_OUT:
            write_json(*JSON_OUT)  # after every row: a run cut short keeps what it measured


def median_results(rs):
    ok = [r for r in rs if "error" not in r]
    if not ok:
        return rs[0]
    out = dict(ok[0])
    for key, value in ok[0].items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = statistics.median(r[key] for r in ok if key in r)
    return out


BACKENDS = {}


def measure(impls, reps, spec, env=None, cache=""):
    results = {i: [] for i in impls}
    for rep in range(reps):
        order = impls if rep % 2 == 0 else list(reversed(impls))
        for impl in order:
            r = run_child(impl, spec, env, cache)
            if "backend" in r:
                BACKENDS[impl] = r["backend"]
            results[impl].append(r)
    return {i: median_results(rs) for i, rs in results.items()}


def parent_main(args):
    impls = [i for i in args.impls.split(",") if importable(i)]
    missing = set(args.impls.split(",")) - set(impls)
    if missing:
        print(f"not importable, left out: {', '.join(sorted(missing))}")
    import torch
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}; "
          f"median of {args.reps} fresh processes per cell, implementations alternating")
    header = f"{'measure':<44}" + "".join(f"{i:>14}" for i in impls) + f"{'ratio':>10}"
    print(header + "\n(ratio: how many times better cudnnfe is; >1 means cudnnfe wins)")
    only = set(args.only.split(","))
    cases = [c for c in args.cases.split(",") if c] if args.cases else list(BUILD_CASES)
    global JSON_OUT
    if args.json:
        JSON_OUT = (args.json, torch)
    cold_env = {"CUDA_CACHE_DISABLE": "1"}
    if "gpu" in only:
        for case in GPU_CASES:
            r = measure(impls, args.reps, f"gpu:{case}:{args.iters}")
            unit = next((x["unit"] for x in r.values() if "unit" in x), "")
            row(f"{case} ({unit})", r, impls, higher_is_better=True, group="gpu")
    if "host" in only:
        for case in ("dict", "uid_dict", "bound", "bound_graph", "bound_plain"):
            r = measure(impls, args.reps, f"host:{case}:{args.calls}")
            row(f"execute host us/call, 64x64 matmul, {case}", r, impls, group="host")
    if "ttfr" in only:
        with tempfile.TemporaryDirectory() as tmp:
            for case in TTFR_CASES:
                cache_file = os.path.join(tmp, case)
                sizes = {i: run_child(i, f"ttfr:{case}:write", cold_env, cache_file)
                         for i in impls}
                row(f"serialize() after build {case}, bytes", sizes, impls)
                r = measure(impls, args.reps, f"ttfr:{case}:load", cold_env, cache_file)
                row(f"first result from bytes, new process {case}, ms", r, impls,
                    group="first result")
                parts("  ", r, impls, ("import_ms", "handle_ms", "deserialize_ms", "execute_ms"))
    if "all" in only:
        for case in cases:
            r = measure(impls, args.reps, f"all:{case}:A", cold_env)
            row(f"handle to build_plans(ALL) {case}, ms", r, impls, group="build")
            parts("  ", r, impls, ("setup_ms", "check_support_ms", "build_plans_ms"))
            row(f"  plans built {case}", r, impls, key="count", higher_is_better=True)
            names = {i: r[i].get("built") for i in impls if "built" in r.get(i, {})}
            for i, n in names.items():
                print(f"    {i} built: {' '.join(n)}")
            if len(names) == 2:
                a, b = (set(n) for n in names.values())
                print(f"    only {impls[0]}: {sorted(a - b)}; only {impls[1]}: {sorted(b - a)}")
            for i in impls:
                if "offered" in r.get(i, {}):
                    print(f"    {i} offered by heuristics A: {' '.join(r[i]['offered'])}")
    if "persist" in only:  # the cold build and the persistent-cache hit only
        for case in cases:
            r = measure(impls, args.reps, f"build:{case}:cold", cold_env)
            row(f"cold build {case}: first graph + handle, ms", r, impls, group="build")
            with tempfile.TemporaryDirectory() as tmp:
                cache_env = dict(cold_env, CUDNNFE_PLAN_CACHE_DIR=tmp)
                cache_file = os.path.join(tmp, "fe_plan.bin")
                for impl in impls:
                    run_child(impl, f"persist:{case}:write", cache_env, cache_file)
                r = measure(impls, args.reps, f"persist:{case}:hit", cache_env, cache_file)
                row(f"persistent-cache hit, new process {case}, ms", r, impls, group="build")
                parts("  ", r, impls, ("handle_ms", "graph_ms", "build_total_ms"))
    if "build" in only:
        for case in cases:
            r = measure(impls, args.reps, f"build:{case}:cold", cold_env)
            row(f"cold build {case}: first graph + handle, ms", r, impls, group="build")
            row(f"cold build: second graph after {case}, ms", r, impls, key="second")
            r = measure(impls, args.reps, f"build:{case}:warm")
            row(f"warm build {case} (same graph again), ms", r, impls)
            r = measure(impls, args.reps, f"build:{case}:load")
            row(f"plan load from bytes {case}, ms", r, impls)
            with tempfile.TemporaryDirectory() as tmp:
                cache_env = dict(cold_env, CUDNNFE_PLAN_CACHE_DIR=tmp)
                cache_file = os.path.join(tmp, "fe_plan.bin")
                for impl in impls:
                    run_child(impl, f"persist:{case}:write", cache_env, cache_file)
                r = measure(impls, args.reps, f"persist:{case}:hit", cache_env, cache_file)
                row(f"persistent-cache hit, new process {case}, ms", r, impls, group="build")
                parts("  ", r, impls, ("handle_ms", "graph_ms", "build_total_ms",
                                       "build_validate_ms", "build_cache_ms", "build_lower_ms",
                                       "build_heuristics_ms", "build_plan_build_ms"))
                r = measure(impls, args.reps, f"persist:{case}:hit-startup", cache_env,
                            cache_file)
                row(f"  same, build {STARTUP_GAP_S:g} s after the handle, ms", r, impls)
    for e in dict.fromkeys(ERRORS):
        print("error: " + e)
    print("cuDNN loaded: " + ", ".join(f"{i} {v}" for i, v in BACKENDS.items()))
    if args.json:
        write_json(args.json, torch)
        print(f"wrote {args.json}")


def parts(indent, results, impls, keys):
    """Prints the named parts of a measurement (medians), one line per part present."""
    for key in keys:
        if any(key in results.get(i, {}) for i in impls):
            cells = [fmt(results[i], key) if key in results.get(i, {}) else "-" for i in impls]
            print(f"{indent + key:<44}" + "".join(f"{c:>14}" for c in cells), flush=True)


def write_json(path, torch):
    """The rows in bench/plot_results.py's format."""
    import datetime
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, cwd=HERE).stdout.strip()
    except OSError:
        commit = ""
    fe = BACKENDS.get("cudnn")
    doc = {"benchmark": "bench_same_code", "gpu": torch.cuda.get_device_name(),
           "cudnn_version": _version_text(BACKENDS.get("cudnnfe") or fe),
           "cudnn_frontend_version": _fe_version(), "torch_version": torch.__version__,
           "date": datetime.date.today().isoformat(), "commit": commit or "unknown",
           "rows": ROWS}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


def _version_text(v):
    """cuDNN's integer version (91900) as 9.19.0."""
    if not isinstance(v, int):
        return str(v)
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}"


@functools.lru_cache(maxsize=None)
def _fe_version():
    r = subprocess.run([sys.executable, "-c", "import cudnn; print(cudnn.__version__)"],
                       capture_output=True, text=True)
    return r.stdout.strip() or "not installed"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--impls", default="cudnnfe,cudnn")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--only", default="gpu,host,ttfr,all,build")
    p.add_argument("--json", default="", help="also write the rows to this file")
    p.add_argument("--cases", default="", help="build cases for all/build/persist "
                   "(default: " + ",".join(BUILD_CASES) + ")")
    p.add_argument("--impl")
    p.add_argument("--child")
    p.add_argument("--cache-file", default="")
    args = p.parse_args()
    if args.child:
        child_main(args)
    else:
        parent_main(args)


if __name__ == "__main__":
    main()
