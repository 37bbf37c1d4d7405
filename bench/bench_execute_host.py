#!/usr/bin/env python3
"""Execute host time, both implementations in one process, interleaved.

bench_same_code.py times each implementation in its own fresh process; host
microseconds per call then move by several microseconds between processes
(the same cudnn-frontend row read 17.8, 25.6 and 35 us in one run). Here
cudnnfe (imported as ``cudnnfe``) and cudnn-frontend (``import cudnn``, when
importable) run the same 64x64 matmul graph, written once in cudnn-frontend's
API, in one process on one stream: each round times every variant for
``--calls`` back-to-back calls, in a rotated order, and the table prints the
median over rounds. Same clock, same GPU queue, same Python.

Rows: dict keyed by tensors, dict keyed by UIDs, the bound path (cudnnfe's
``graph.bind`` with its default CUDA graph and with ``cuda_graph=False``;
cudnn-frontend's preindexed ``execute(buffers, tensor_uids=)``), and
``torch.matmul`` on the same tensors for scale.

Usage: bench_execute_host.py [--rounds 15] [--calls 2000]
"""
import argparse
import importlib
import statistics
import sys
import time

import bench_same_code as same


def load_implementations():
    impls = {"cudnnfe": importlib.import_module("cudnnfe")}
    try:
        fe = importlib.import_module("cudnn")
        if "cudnnfe" not in (getattr(fe, "__file__", "") or ""):
            impls["cudnn-frontend"] = fe
    except ImportError:
        pass
    return impls


def variants(name, cudnn, torch):
    """{row: zero-argument callable} for one implementation."""
    handle = cudnn.create_handle()
    cudnn.set_stream(handle=handle, stream=torch.cuda.current_stream().cuda_stream)
    g, pack, _, _ = same.matmul_graph(cudnn, torch, 64, 64, 64, torch.half)
    same.build(cudnn, g, handle)
    ws = same.workspace_for(torch, g)
    by_uid = {t.get_uid(): a for t, a in pack.items()}
    rows = {"dict": lambda: g.execute(pack, ws, handle=handle),
            "uid dict": lambda: g.execute(by_uid, ws, handle=handle)}
    if name == "cudnnfe":
        print(f"cudnnfe 64x64 matmul: {plan_note(g)}")
        rows["C call alone (execute_ordered)"] = c_call_alone(cudnn, g, pack, ws, handle, torch)
        rows["bound (CUDA graph, the default)"] = g.bind(pack, ws, handle=handle)
        rows["bound, cuda_graph=False"] = g.bind(pack, ws, handle=handle, cuda_graph=False)
    else:
        uids, buffers = list(by_uid), tuple(by_uid.values())
        rows["preindexed (tensor_uids=)"] = lambda: g.execute(buffers, ws, handle=handle,
                                                              tensor_uids=uids)
    return rows


def c_call_alone(cudnn, g, pack, ws, handle, torch):
    """cudnnfe's execute without its Python: the one C call that g.execute makes, its
    arguments made once (what the dict row costs beyond this is the Python layer)."""
    from cudnnfe._lib import ffi, lib
    by_uid = {t.get_uid(): a for t, a in pack.items()}
    ptrs = ffi.new("void *[]", [ffi.cast("void *", by_uid[u].data_ptr())
                                for u in g.get_bound_uids()])
    n = len(ptrs)
    wsp, wsn = ffi.cast("void *", ws.data_ptr()), ws.numel()
    stream = ffi.cast("void *", torch.cuda.current_stream().cuda_stream)
    gp, hp, call = g._ptr, handle._ptr, lib.cudnnfe_graph_execute_ordered
    return lambda: call(gp, hp, ptrs, n, wsp, wsn, stream)


def plan_note(g):
    """Whether cudnnfe's selected plan has cuDNN's native CUDA graph support (execute
    replays it from a CUDA graph on repeated buffers, docs/plans.md)."""
    notes = [n.name for n in g.get_behavior_notes()]
    return f"plan {g.get_plan_name_at_index(g.get_selected_plan())}, behavior notes {notes}"


def time_calls(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    import torch

    cases = []
    for name, module in load_implementations().items():
        for row, fn in variants(name, module, torch).items():
            cases.append((name, row, fn))
    a = torch.randn(1, 64, 64, device="cuda", dtype=torch.half)
    cases.append(("torch", "torch.matmul", lambda: torch.matmul(a, a)))
    for _, _, fn in cases:  # warm-up: first-call work, allocator, queue
        time_calls(fn, 200)
    samples = {(n, r): [] for n, r, _ in cases}
    for i in range(args.rounds):
        order = cases[i % len(cases):] + cases[:i % len(cases)]
        for name, row, fn in order:
            samples[(name, row)].append(time_calls(fn, args.calls))
        torch.cuda.synchronize()
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}; one process, "
          f"{args.rounds} interleaved rounds of {args.calls} calls, median and spread (us/call)")
    print(f"{'implementation':16} {'execute':34} {'median':>8} {'min':>8} {'max':>8}")
    for (name, row), values in samples.items():
        print(f"{name:16} {row:34} {statistics.median(values):8.2f} {min(values):8.2f} "
              f"{max(values):8.2f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
