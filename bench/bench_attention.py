#!/usr/bin/env python3
"""Attention and RMSNorm benchmark: cudnnfe next to PyTorch, in one run.

SDPA forward and backward, BF16, b=1, h_q=64, h_kv=8, d=128, s = 2k..16k,
causal and not, for
  - cudnnfe, through ctypes on libcudnnfe.so: the graph is built with the C
    API and executed on torch tensors' data_ptr() on torch's current stream;
  - torch.nn.functional.scaled_dot_product_attention pinned to its CUDNN and
    FLASH backends (torch.nn.attention.sdpa_kernel).
TFLOP/s with fwd = 4*b*h_q*s^2*d (causal: half) and bwd = 2.5 x fwd, from
the median of >= 20 iterations timed with CUDA events after a warm-up.
Then the FlashAttention-3 paper's grid (MHA, b*s = 16k, d in {64, 128},
h = 2048/d, s = 512..16k), the same three side by side.
Then RMSNorm BF16 forward in GB/s (bytes read + written) for cudnnfe and
torch.nn.functional.rms_norm.

Usage: bench_attention.py [--lib build/libcudnnfe.so] [--iters 20]
       [--seqs 2048,4096,8192,16384] [--heur A|B|FALLBACK] [--skip-fa3]
"""
import argparse
import ctypes
import math
import os
import statistics
import sys

import torch
import torch.nn.functional as F

# ---------------------------------------------------------------------------
# The C ABI (only the leading fields this script sets: option structs are
# filled by the library's *_init_sized functions with this script's struct
# size, and the library gives the fields past it their defaults).

OK = 0
DTYPE_FLOAT, DTYPE_BF16 = 1, 3
TARGET_GPU = 1
HEUR = {"A": 0, "B": 1, "FALLBACK": 2}
NORM_TRAINING, NORM_INFERENCE = 0, 1


class SdpaOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("name", ctypes.c_char_p),
                ("attn_scale", ctypes.c_double), ("generate_stats", ctypes.c_int32),
                ("causal_mask", ctypes.c_int32), ("causal_mask_bottom_right", ctypes.c_int32),
                ("bias", ctypes.c_int64), ("compute_dtype", ctypes.c_int32)]


class SdpaBackwardOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("name", ctypes.c_char_p),
                ("attn_scale", ctypes.c_double), ("causal_mask", ctypes.c_int32),
                ("causal_mask_bottom_right", ctypes.c_int32), ("bias", ctypes.c_int64),
                ("deterministic", ctypes.c_int32), ("compute_dtype", ctypes.c_int32)]


class NormOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("name", ctypes.c_char_p),
                ("phase", ctypes.c_int32), ("epsilon", ctypes.c_double),
                ("zero_centered_gamma", ctypes.c_int32), ("compute_dtype", ctypes.c_int32)]


class BuildOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("target", ctypes.c_int32),
                ("num_heur_modes", ctypes.c_int32), ("heur_modes", ctypes.c_int32 * 4)]


class Binding(ctypes.Structure):
    _fields_ = [("uid", ctypes.c_int64), ("data", ctypes.c_void_p)]


class Lib:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        L = self.lib
        vp, i64, i32 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32
        p64 = ctypes.POINTER(ctypes.c_int64)
        for name, args in {
            "cudnnfe_graph_create": [ctypes.POINTER(vp)],
            "cudnnfe_graph_destroy": [vp],
            "cudnnfe_graph_set_name": [vp, ctypes.c_char_p],
            "cudnnfe_graph_set_io_dtype": [vp, i32],
            "cudnnfe_graph_set_intermediate_dtype": [vp, i32],
            "cudnnfe_graph_set_compute_dtype": [vp, i32],
            "cudnnfe_graph_add_tensor": [vp, ctypes.c_char_p, i32, i32, p64, p64, p64],
            "cudnnfe_tensor_set_output": [vp, i64, i32],
            "cudnnfe_tensor_set_dtype": [vp, i64, i32],
            "cudnnfe_graph_add_sdpa": [vp, i64, i64, i64, vp, p64, p64],
            "cudnnfe_graph_add_sdpa_backward": [vp, i64, i64, i64, i64, i64, i64, vp, p64, p64, p64],
            "cudnnfe_graph_add_rmsnorm": [vp, i64, i64, i64, vp, p64, p64],
            "cudnnfe_graph_build": [vp, vp, vp],
            "cudnnfe_graph_get_workspace_size": [vp, p64],
            "cudnnfe_graph_get_plan_name": [vp, ctypes.POINTER(ctypes.c_char_p)],
            "cudnnfe_graph_execute": [vp, vp, vp, ctypes.c_size_t, vp, ctypes.c_size_t, vp],
            "cudnnfe_handle_create": [ctypes.POINTER(vp), i32],
            "cudnnfe_cudnn_version": [p64],
            "cudnnfe_sdpa_options_init_sized": [vp, ctypes.c_size_t],
            "cudnnfe_sdpa_backward_options_init_sized": [vp, ctypes.c_size_t],
            "cudnnfe_norm_options_init_sized": [vp, ctypes.c_size_t],
            "cudnnfe_build_options_init_sized": [vp, ctypes.c_size_t],
        }.items():
            fn = getattr(L, name)
            fn.argtypes = args
            fn.restype = None if name.endswith("_init_sized") else ctypes.c_int32
        L.cudnnfe_graph_last_error.argtypes = [vp]
        L.cudnnfe_graph_last_error.restype = ctypes.c_char_p
        L.cudnnfe_handle_last_error.argtypes = [vp]
        L.cudnnfe_handle_last_error.restype = ctypes.c_char_p
        L.cudnnfe_last_error.restype = ctypes.c_char_p
        self.handle = vp()
        self.check(L.cudnnfe_handle_create(ctypes.byref(self.handle), -1), "handle_create")

    def check(self, status, what, graph=None):
        if status != OK:
            msg = (self.lib.cudnnfe_graph_last_error(graph) if graph
                   else self.lib.cudnnfe_last_error())
            raise RuntimeError(f"{what} failed ({status}): {msg.decode()}")

    def options(self, cls, init):
        """A struct of this script's size, filled by the library's init."""
        buf = ctypes.create_string_buffer(ctypes.sizeof(cls))
        getattr(self.lib, init + "_sized")(buf, ctypes.sizeof(cls))
        return buf, cls.from_buffer(buf)

    def cudnn_version(self):
        v = ctypes.c_int64()
        self.check(self.lib.cudnnfe_cudnn_version(ctypes.byref(v)), "cudnn_version")
        return v.value


_DT = {torch.bfloat16: DTYPE_BF16, torch.float32: DTYPE_FLOAT}


class Graph:
    """A cudnnfe graph whose bound tensors are torch tensors."""

    def __init__(self, lib, name):
        self.lib, self.L = lib, lib.lib
        self.g = ctypes.c_void_p()
        lib.check(self.L.cudnnfe_graph_create(ctypes.byref(self.g)), "graph_create")
        self.L.cudnnfe_graph_set_name(self.g, name.encode())
        self.L.cudnnfe_graph_set_io_dtype(self.g, DTYPE_BF16)
        self.L.cudnnfe_graph_set_intermediate_dtype(self.g, DTYPE_FLOAT)
        self.L.cudnnfe_graph_set_compute_dtype(self.g, DTYPE_FLOAT)
        self.bound = {}  # uid -> torch tensor
        self.plan = ""
        self.workspace = None

    def __del__(self):
        if getattr(self, "g", None):
            self.L.cudnnfe_graph_destroy(self.g)

    def check(self, status, what):
        self.lib.check(status, what, self.g)

    def tensor(self, name, t):
        n = t.dim()
        dims = (ctypes.c_int64 * n)(*t.shape)
        strides = (ctypes.c_int64 * n)(*t.stride())
        uid = ctypes.c_int64()
        self.check(self.L.cudnnfe_graph_add_tensor(self.g, name.encode(), _DT[t.dtype], n, dims,
                                                   strides, ctypes.byref(uid)), "add_tensor")
        self.bound[uid.value] = t
        return uid.value

    def output(self, uid, t):
        self.check(self.L.cudnnfe_tensor_set_output(self.g, uid, 1), "set_output")
        self.check(self.L.cudnnfe_tensor_set_dtype(self.g, uid, _DT[t.dtype]), "set_dtype")
        self.bound[uid] = t

    def build(self, heur="A"):
        buf, o = self.lib.options(BuildOptions, "cudnnfe_build_options_init")
        o.target = TARGET_GPU
        if heur != "A":
            o.num_heur_modes = 1
            o.heur_modes[0] = HEUR[heur]
        self.check(self.L.cudnnfe_graph_build(self.g, self.lib.handle, buf), "build")
        size = ctypes.c_int64()
        self.check(self.L.cudnnfe_graph_get_workspace_size(self.g, ctypes.byref(size)),
                   "workspace_size")
        self.workspace = torch.empty(max(size.value, 1), dtype=torch.uint8, device="cuda")
        name = ctypes.c_char_p()
        self.L.cudnnfe_graph_get_plan_name(self.g, ctypes.byref(name))
        self.plan = name.value.decode()
        items = list(self.bound.items())
        self.bindings = (Binding * len(items))(*[Binding(u, t.data_ptr()) for u, t in items])
        self.nbind = len(items)
        return self

    def __call__(self):
        stream = torch.cuda.current_stream().cuda_stream
        status = self.L.cudnnfe_graph_execute(self.g, self.lib.handle, self.bindings, self.nbind,
                                              ctypes.c_void_p(self.workspace.data_ptr()),
                                              self.workspace.numel(), ctypes.c_void_p(stream))
        if status != OK:
            raise RuntimeError("execute failed: " +
                               self.L.cudnnfe_handle_last_error(self.lib.handle).decode())


def cudnnfe_sdpa(lib, q, k, v, o, stats, causal, heur):
    g = Graph(lib, f"sdpa_fwd_s{q.shape[2]}{'_causal' if causal else ''}")
    uq, uk, uv = g.tensor("q", q), g.tensor("k", k), g.tensor("v", v)
    buf, opt = lib.options(SdpaOptions, "cudnnfe_sdpa_options_init")
    opt.causal_mask = int(causal)
    opt.generate_stats = 1
    uo, us = ctypes.c_int64(), ctypes.c_int64()
    g.check(g.L.cudnnfe_graph_add_sdpa(g.g, uq, uk, uv, buf, ctypes.byref(uo), ctypes.byref(us)),
            "add_sdpa")
    g.output(uo.value, o)
    g.output(us.value, stats)
    return g.build(heur)


def cudnnfe_sdpa_backward(lib, q, k, v, o, d_o, stats, dq, dk, dv, causal, heur):
    g = Graph(lib, f"sdpa_bwd_s{q.shape[2]}{'_causal' if causal else ''}")
    ids = [g.tensor(n, t) for n, t in (("q", q), ("k", k), ("v", v), ("o", o), ("dO", d_o),
                                        ("stats", stats))]
    buf, opt = lib.options(SdpaBackwardOptions, "cudnnfe_sdpa_backward_options_init")
    opt.causal_mask = int(causal)
    out = [ctypes.c_int64() for _ in range(3)]
    g.check(g.L.cudnnfe_graph_add_sdpa_backward(g.g, *ids, buf, *[ctypes.byref(x) for x in out]),
            "add_sdpa_backward")
    for uid, t in zip(out, (dq, dk, dv)):
        g.output(uid.value, t)
    return g.build(heur)


def cudnnfe_rmsnorm(lib, x, scale, y, inv_rms, heur):
    g = Graph(lib, f"rmsnorm_{x.shape[0]}x{x.shape[1]}")
    ux, us = g.tensor("x", x), g.tensor("scale", scale)
    buf, opt = lib.options(NormOptions, "cudnnfe_norm_options_init")
    opt.phase = NORM_TRAINING if inv_rms is not None else NORM_INFERENCE
    opt.epsilon = 1e-5
    uy, ui = ctypes.c_int64(), ctypes.c_int64()
    g.check(g.L.cudnnfe_graph_add_rmsnorm(g.g, ux, us, 0, buf, ctypes.byref(uy),
                                          ctypes.byref(ui)), "add_rmsnorm")
    g.output(uy.value, y)
    if inv_rms is not None:
        g.output(ui.value, inv_rms)
    return g.build(heur)


# ---------------------------------------------------------------------------
# Timing

def median_ms(fn, iters, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def torch_sdpa(backend, q, k, v, causal, gqa, d_o):
    """(forward fn, backward fn, note) for one pinned PyTorch backend."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    which = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}[backend]
    note = ""
    group = q.shape[1] // k.shape[1]

    def run(qq, kk, vv, use_gqa):
        with sdpa_kernel([which]):
            return F.scaled_dot_product_attention(qq, kk, vv, is_causal=causal,
                                                  enable_gqa=use_gqa)

    qq = q.detach().requires_grad_()
    try:
        kk, vv = k.detach().requires_grad_(), v.detach().requires_grad_()
        out = run(qq, kk, vv, gqa)
        use_gqa = gqa
    except RuntimeError:
        # This backend takes no GQA: K and V expanded to h_q heads (leaf
        # tensors, so the backward is attention's alone).
        kk = k.repeat_interleave(group, dim=1).detach().requires_grad_()
        vv = v.repeat_interleave(group, dim=1).detach().requires_grad_()
        out = run(qq, kk, vv, False)
        use_gqa = False
        note = "kv expanded"

    def fwd():
        run(qq, kk, vv, use_gqa)

    def bwd():
        torch.autograd.grad(out, (qq, kk, vv), d_o, retain_graph=True)

    def dq():
        return torch.autograd.grad(out, (qq,), d_o, retain_graph=True)[0]

    return fwd, bwd, note, out, dq


def fmt(x):
    return f"{x:7.1f}" if x == x else "    n/a"


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--lib", default=os.environ.get("CUDNNFE_LIBRARY",
                                                    os.path.join(here, "..", "build",
                                                                 "libcudnnfe.so")))
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--seqs", default="2048,4096,8192,16384")
    ap.add_argument("--heur", default="A", choices=list(HEUR))
    ap.add_argument("--skip-norm", action="store_true")
    ap.add_argument("--skip-attention", action="store_true")
    ap.add_argument("--skip-fa3", action="store_true",
                    help="skip the FlashAttention-3 paper grid")
    ap.add_argument("--layout", default="bshd", choices=["bshd", "bhsd"],
                    help="storage of q, k, v, o (viewed as BHSD either way)")
    ap.add_argument("--json", default="",
                    help="also write the LLM-shape rows here (bench/plot_results.py's format; "
                         "PyTorch's column is its cuDNN backend)")
    args = ap.parse_args()
    iters = max(args.iters, 20)

    lib = Lib(args.lib)
    dev = torch.cuda.get_device_name()
    print(f"GPU: {dev}")
    print(f"cuDNN: cudnnfe loaded {lib.cudnn_version()} "
          f"({os.environ.get('CUDNNFE_CUDNN_LIBRARY', 'libcudnn.so.9 from the loader path')}); "
          f"PyTorch {torch.__version__} uses {torch.backends.cudnn.version()}")
    print(f"cudnnfe library: {os.path.realpath(args.lib)}; heuristics mode {args.heur}; "
          f"median of {iters} iterations after 5 warm-up, CUDA events")
    print()

    seqs = [] if args.skip_attention else [int(x) for x in args.seqs.split(",")]
    llm = [(1, 64, 8, 128, s) for s in seqs]
    if llm:
        rows, plans = bench_attention(lib, args, iters, llm)
        print_attention("SDPA BF16, b=1, h_q=64, h_kv=8, d=128", rows, plans, args.layout)
        if args.json:
            write_json(args.json, rows, lib, dev)
    if not (args.skip_attention or args.skip_fa3):
        fa3 = [(16384 // s, 2048 // d, 2048 // d, d, s)
               for d in (64, 128) for s in (512, 1024, 2048, 4096, 8192, 16384)]
        rows, plans = bench_attention(lib, args, iters, fa3)
        print_attention("FlashAttention-3 grid: SDPA BF16 MHA, b*s = 16k, h = 2048/d", rows,
                        plans, args.layout)
    if args.skip_norm:
        return
    bench_norm(lib, args, iters)


def write_json(path, rows, lib, dev):
    """The LLM rows as bench/plot_results.py reads them (names as bench_same_code's)."""
    import datetime
    import json
    import subprocess

    out = []
    for r in rows:
        seq = f"s{r['s'] // 1024}k" if r["s"] % 1024 == 0 else f"s{r['s']}"
        mask = "causal" if r["causal"] else "noncausal"
        for phase in ("fwd", "bwd"):
            values = {"cudnnfe": r["fe_" + phase], "pytorch": r.get("cudnn_" + phase)}
            values = {k: round(v, 1) for k, v in values.items() if v is not None and v == v}
            if values:
                out.append({"name": f"sdpa_{phase}_{seq}_{mask}", "group": "attention",
                            "unit": "TFLOP/s", "higher_is_better": True, "values": values})
    version = lib.cudnn_version()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=os.path.dirname(os.path.abspath(__file__))).stdout
    doc = {"benchmark": "bench_attention", "gpu": dev,
           "cudnn_version": f"{version // 10000}.{version // 100 % 100}.{version % 100}",
           "cudnn_frontend_version": "not run", "torch_version": torch.__version__,
           "date": datetime.date.today().isoformat(), "commit": commit.strip() or "unknown",
           "rows": out}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"wrote {path}")


def bench_attention(lib, args, iters, configs):
    """Times every (b, h_q, h_kv, d, s) of `configs`, causal and not."""
    dt = torch.bfloat16
    rows = []
    plans = []
    for b, h_q, h_kv, d, s in configs:
        def make(h, empty=False):
            # BSHD storage viewed as BHSD (what training code passes), or BHSD.
            fn = torch.empty if empty else torch.randn
            if args.layout == "bshd":
                return fn(b, s, h, d, device="cuda", dtype=dt).transpose(1, 2)
            return fn(b, h, s, d, device="cuda", dtype=dt)

        for causal in (True, False):
            torch.manual_seed(0)
            q, k, v = (make(h) for h in (h_q, h_kv, h_kv))
            flops = 4 * b * h_q * s * s * d * (0.5 if causal else 1.0)
            row = {"b": b, "h": h_q, "d": d, "s": s, "causal": causal}

            # cudnnfe
            o, dq, d_o = make(h_q, empty=True), make(h_q, empty=True), make(h_q)
            dk, dv = make(h_kv, empty=True), make(h_kv, empty=True)
            stats = torch.empty(b, h_q, s, 1, device="cuda", dtype=torch.float32)
            try:
                gf = cudnnfe_sdpa(lib, q, k, v, o, stats, causal, args.heur)
                row["fe_fwd"] = flops / median_ms(gf, iters) / 1e9
                gb = cudnnfe_sdpa_backward(lib, q, k, v, o, d_o, stats, dq, dk, dv, causal,
                                           args.heur)
                row["fe_bwd"] = 2.5 * flops / median_ms(gb, iters) / 1e9
                plans.append((f"b={b} h={h_q} d={d} s={s}", causal, gf.plan, gb.plan))
            except RuntimeError as e:
                print(f"cudnnfe s={s} causal={causal}: {e}")
                row.setdefault("fe_fwd", float("nan"))
                row.setdefault("fe_bwd", float("nan"))
            # PyTorch
            for backend in ("cudnn", "flash"):
                try:
                    fwd, bwd, note, out, grad_q = torch_sdpa(backend, q, k, v, causal,
                                                             h_q != h_kv, d_o)
                    row[backend + "_fwd"] = flops / median_ms(fwd, iters) / 1e9
                    row[backend + "_bwd"] = 2.5 * flops / median_ms(bwd, iters) / 1e9
                    row[backend + "_note"] = note
                    if backend == "flash" and s == configs[0][4] and row["fe_fwd"] == row["fe_fwd"]:
                        err = (o.float() - out.float()).abs().max().item()
                        err_dq = (dq.float() - grad_q().float()).abs().max().item()
                        row["check"] = (f"max|o_fe - o_flash| = {err:.3g}, "
                                        f"max|dq_fe - dq_flash| = {err_dq:.3g} "
                                        f"(max|dq| {dq.float().abs().max().item():.3g})")
                except RuntimeError as e:
                    print(f"torch {backend} s={s} causal={causal}: {str(e).splitlines()[0]}")
                    row[backend + "_fwd"] = row[backend + "_bwd"] = float("nan")
            rows.append(row)
            del q, k, v, o, stats, dq, dk, dv, d_o
            torch.cuda.empty_cache()
    return rows, plans


def print_attention(title, rows, plans, layout):
    print(f"{title}, {layout.upper()} storage; TFLOP/s "
          f"(fwd = 4*b*h_q*s^2*d, causal half; bwd = 2.5 x fwd)")
    print(f"{'b':>3} {'h':>3} {'d':>4} {'s':>6} {'causal':>6} | {'fwd cudnnfe':>11} {'torch cuDNN':>11} {'torch FLASH':>11} | "
          f"{'bwd cudnnfe':>11} {'torch cuDNN':>11} {'torch FLASH':>11} | fe/flash fwd bwd")
    for r in rows:
        ratio_f = r["fe_fwd"] / r["flash_fwd"] if r.get("flash_fwd") else float("nan")
        ratio_b = r["fe_bwd"] / r["flash_bwd"] if r.get("flash_bwd") else float("nan")
        notes = ", ".join(f"torch {bk}: {r[bk + '_note']}" for bk in ("cudnn", "flash")
                          if r.get(bk + "_note"))
        print(f"{r['b']:>3} {r['h']:>3} {r['d']:>4} {r['s']:>6} {str(r['causal']):>6} | {fmt(r['fe_fwd']):>11} {fmt(r['cudnn_fwd']):>11} "
              f"{fmt(r['flash_fwd']):>11} | {fmt(r['fe_bwd']):>11} {fmt(r['cudnn_bwd']):>11} "
              f"{fmt(r['flash_bwd']):>11} | {ratio_f:5.2f}x {ratio_b:5.2f}x"
              + (f"   ({notes})" if notes else ""))
    for r in rows:
        if "check" in r:
            print(f"check b={r['b']} h={r['h']} d={r['d']} s={r['s']} causal={r['causal']}: "
                  f"{r['check']}")
    print("cudnnfe plans (engine and knobs):")
    for shape, causal, pf, pb in plans:
        print(f"  {shape} causal={str(causal):>5}: fwd {pf}  bwd {pb}")
    print()


def bench_norm(lib, args, iters):
    dt = torch.bfloat16
    print("RMSNorm BF16 forward, eps 1e-5; GB/s = (x read + y written + scale"
          " [+ inv_rms written]) / time; cudnnfe with a BF16 scale (as torch's weight) and with a"
          " FLOAT scale")
    print(f"{'shape':>12} | {'fe infer bf16w':>14} {'fe train bf16w':>14} {'fe infer f32w':>13} "
          f"{'torch rms_norm':>14} | plans (infer bf16w, train bf16w, infer f32w)")
    for n, m in ((16384, 4096), (8192, 8192)):
        x = torch.randn(n, m, device="cuda", dtype=dt)
        w32 = torch.rand(1, m, device="cuda", dtype=torch.float32) + 0.5
        w16 = w32.to(dt)
        y = torch.empty_like(x)
        inv = torch.empty(n, 1, device="cuda", dtype=torch.float32)
        base = 2 * n * m * 2
        res, names, errs = {}, [], []
        for label, w, stats in (("infer16", w16, None), ("train16", w16, inv),
                                ("infer32", w32, None)):
            try:
                g = cudnnfe_rmsnorm(lib, x, w, y, stats, args.heur)
                ms = median_ms(g, iters)
                res[label] = (base + w.element_size() * m +
                              (4 * n if stats is not None else 0)) / ms / 1e6
                names.append(g.plan)
                ref = F.rms_norm(x.float(), (m,), w.float().reshape(m), eps=1e-5)
                errs.append(f"{(y.float() - ref).abs().max().item():.3g}")
            except RuntimeError as e:
                print(f"cudnnfe rmsnorm {label} {n}x{m}: {e}")
                res[label] = float("nan")
                names.append("-")
        ms = median_ms(lambda: F.rms_norm(x, (m,), w16.reshape(m), eps=1e-5), iters)
        res["torch"] = (base + 2 * m) / ms / 1e6
        print(f"{f'{n}x{m}':>12} | {fmt(res['infer16']):>14} {fmt(res['train16']):>14} "
              f"{fmt(res['infer32']):>13} {fmt(res['torch']):>14} | {' '.join(names)}"
              f"  (max|y - fp32 ref| {' '.join(errs)})")

if __name__ == "__main__":
    sys.exit(main())
