#!/usr/bin/env python3
"""Host overhead of one execute call for an SDPA graph, through cudnnfe and cudnn-frontend.

Graph: scaled dot-product attention, b=2, h=8, s_q=s_kv=1024, d=128, bf16 I/O,
float intermediates and compute, causal mask, stats generated.

Measured paths (host microseconds per call, median and p99 over --iters calls):

* ``cudnnfe dict execute``: ``graph.execute({tensor: array, ...}, workspace)``,
  which reads and checks every array (dtype, shape, strides, device) and calls
  ``cudnnfe_graph_execute``;
* ``cudnnfe bound (execute_ordered)``: ``graph.bind(...)`` once, then calling
  the result, a single cffi call of ``cudnnfe_graph_execute_ordered``;
* ``cffi call floor``: a cffi call of ``cudnnfe_version()`` (cost of crossing
  into C from Python, for scale);
* ``cudnn-frontend execute``: NVIDIA's ``cudnn`` package (pip
  ``nvidia-cudnn-frontend``), ``graph.execute(variant_pack, workspace,
  handle=handle)``, when it can be imported.

Each call is timed on its own with ``time.perf_counter_ns``. The GPU is
synchronized every --sync-every calls, outside the timed region, so the launch
queue never fills and what is timed is host work (argument handling, the C
library, cuDNN's plan execution and the kernel launches).

Usage: python3 bindings/python/bench_overhead.py [--iters 10000] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

# Prefer the installed package (with its bundled library) over the source tree
# next to this script; fall back to the source tree (with CUDNNFE_LIBRARY).
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
try:
    import cudnnfe  # noqa: F401
except ImportError:
    sys.path.insert(0, str(_HERE))

B, H, S, D = 2, 8, 1024, 128


def measure(fn: Callable[[], None], iters: int, sync: Callable[[], None], sync_every: int,
            warmup: int = 200) -> Dict[str, float]:
    for _ in range(warmup):
        fn()
    sync()
    times: List[int] = []
    clock = time.perf_counter_ns
    for i in range(iters):
        t0 = clock()
        fn()
        times.append(clock() - t0)
        if (i + 1) % sync_every == 0:
            sync()
    sync()
    times.sort()
    us = [t / 1000.0 for t in times]
    return {
        "median_us": statistics.median(us),
        "p99_us": us[min(len(us) - 1, math.ceil(0.99 * len(us)) - 1)],
        "mean_us": statistics.fmean(us),
        "min_us": us[0],
        "calls": len(us),
    }


def make_inputs(torch):
    dev = torch.device("cuda")
    q = torch.randn(B, H, S, D, device=dev, dtype=torch.bfloat16)
    k = torch.randn(B, H, S, D, device=dev, dtype=torch.bfloat16)
    v = torch.randn(B, H, S, D, device=dev, dtype=torch.bfloat16)
    o = torch.empty(B, H, S, D, device=dev, dtype=torch.bfloat16)
    stats = torch.empty(B, H, S, 1, device=dev, dtype=torch.float32)
    return q, k, v, o, stats


def bench_cudnnfe(torch, args) -> Dict[str, Dict[str, float]]:
    import cudnnfe

    q, k, v, o, stats = make_inputs(torch)
    handle = cudnnfe.create_handle()
    g = cudnnfe.pygraph(io_data_type=cudnnfe.data_type.BFLOAT16,
                        intermediate_data_type=cudnnfe.data_type.FLOAT,
                        compute_data_type=cudnnfe.data_type.FLOAT, handle=handle)
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    to, ts = g.sdpa(q=tq, k=tk, v=tv, attn_scale=1.0 / math.sqrt(D), use_causal_mask=True,
                    generate_stats=True, name="sdpa")
    to.set_output(True)
    ts.set_output(True).set_data_type(cudnnfe.data_type.FLOAT)
    g.build([cudnnfe.heur_mode.A, cudnnfe.heur_mode.FALLBACK])
    ws = torch.empty(g.get_workspace_size(), device="cuda", dtype=torch.uint8)
    pack = {tq: q, tk: k, tv: v, to: o, ts: stats}
    g.execute(pack, ws, handle=handle)
    torch.cuda.synchronize()
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    err = (o.float() - ref.float()).abs().max().item()
    sync = torch.cuda.synchronize
    results = {}
    results["cudnnfe dict execute"] = measure(lambda: g.execute(pack, ws, handle=handle),
                                              args.iters, sync, args.sync_every)
    bound = g.bind(pack, ws, handle=handle)
    results["cudnnfe bound (execute_ordered)"] = measure(bound, args.iters, sync,
                                                         args.sync_every)
    version = cudnnfe.lib.cudnnfe_version
    results["cffi call floor (cudnnfe_version)"] = measure(version, args.iters, lambda: None,
                                                           args.sync_every)
    results["_info"] = {"plan": g.get_plan_name(), "workspace_bytes": g.get_workspace_size(),
                        "max_abs_err_vs_torch": err, "cudnn": cudnnfe.backend_version()}
    cudnnfe.destroy_handle(handle)
    return results


def bench_cudnn_frontend(torch, args) -> Optional[Dict[str, Dict[str, float]]]:
    try:
        import cudnn
    except Exception as exc:  # ImportError, or a failing import of its dependencies
        print(f"cudnn-frontend: not importable ({type(exc).__name__}: {exc})", file=sys.stderr)
        return None
    q, k, v, o, stats = make_inputs(torch)
    handle = cudnn.create_handle()
    g = cudnn.pygraph(io_data_type=cudnn.data_type.BFLOAT16,
                      intermediate_data_type=cudnn.data_type.FLOAT,
                      compute_data_type=cudnn.data_type.FLOAT, handle=handle)
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    try:
        to, ts = g.sdpa(name="sdpa", q=tq, k=tk, v=tv, generate_stats=True,
                        attn_scale=1.0 / math.sqrt(D), use_causal_mask=True)
    except TypeError:  # older releases spell it is_inference=False
        to, ts = g.sdpa(name="sdpa", q=tq, k=tk, v=tv, is_inference=False,
                        attn_scale=1.0 / math.sqrt(D), use_causal_mask=True)
    to.set_output(True).set_dim(o.shape).set_stride(o.stride())
    ts.set_output(True).set_data_type(cudnn.data_type.FLOAT)
    g.build([cudnn.heur_mode.A])
    ws = torch.empty(g.get_workspace_size(), device="cuda", dtype=torch.uint8)
    pack = {tq: q, tk: k, tv: v, to: o, ts: stats}
    g.execute(pack, ws, handle=handle)
    torch.cuda.synchronize()
    results = {"cudnn-frontend execute": measure(lambda: g.execute(pack, ws, handle=handle),
                                                 args.iters, torch.cuda.synchronize,
                                                 args.sync_every)}
    results["_info"] = {"cudnn_frontend": getattr(cudnn, "__version__", "?"),
                        "cudnn": cudnn.backend_version()}
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=10000)
    parser.add_argument("--sync-every", type=int, default=20)
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--skip-frontend", action="store_true")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("bench_overhead: needs torch with CUDA", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("bench_overhead: no CUDA device", file=sys.stderr)
        return 2
    results: Dict[str, Dict[str, float]] = {}
    info = {"gpu": torch.cuda.get_device_name(), "shape": f"b={B} h={H} s={S} d={D}",
            "iters": args.iters}
    r = bench_cudnnfe(torch, args)
    info["cudnnfe"] = r.pop("_info")
    results.update(r)
    if not args.skip_frontend:
        r2 = bench_cudnn_frontend(torch, args)
        if r2 is not None:
            info["cudnn_frontend"] = r2.pop("_info")
            results.update(r2)
    print(f"SDPA {info['shape']}, bf16, causal, stats; {args.iters} calls; {info['gpu']}")
    print(json.dumps(info, default=str))
    width = max(len(k) for k in results)
    print(f"{'path':<{width}}  {'median us':>10}  {'p99 us':>10}  {'min us':>8}")
    for name, m in results.items():
        print(f"{name:<{width}}  {m['median_us']:10.2f}  {m['p99_us']:10.2f}  {m['min_us']:8.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"info": info, "results": results}, f, indent=2, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
