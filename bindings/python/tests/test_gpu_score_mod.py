"""Score modifiers (sdpa(score_mod=), sdpa_backward(score_mod=, score_mod_bprop=)) on the GPU,
each compared with the CPU reference on the same HALF inputs at half-precision tolerance:
the callbacks of cudnn-frontend's test_flexible_sdpa*.py (softcap with a padding-style
mask over a paged cache, an arrow mask, a document mask; the causal mask and its bprop)
and softcap's backward reading the forward's tanh.

Skipped, with the reason shown, when torch is not installed or sees no CUDA device.
CUDNNFE_SCORE_MOD_DRY_RUN=1 runs the "GPU" side on the CPU reference too (no torch
needed): it checks this file's own plumbing on a machine without a GPU.
"""
import math
import os

import numpy as np
import pytest

DRY_RUN = os.environ.get("CUDNNFE_SCORE_MOD_DRY_RUN") == "1"
if not DRY_RUN:
    torch = pytest.importorskip("torch", reason="GPU tests need torch, which is not installed")
    if not torch.cuda.is_available():
        pytest.skip("GPU tests need a CUDA device; torch sees none", allow_module_level=True)

import cudnnfe  # noqa: E402
from cudnnfe import data_type  # noqa: E402

TOL = dict(atol=2e-2, rtol=2e-2)
NEG = -1e9
GPU = cudnnfe.target.CPU_REFERENCE if DRY_RUN else cudnnfe.target.GPU
CPU = cudnnfe.target.CPU_REFERENCE


def new_graph(target):
    return cudnnfe.pygraph(io_data_type=data_type.HALF, intermediate_data_type=data_type.FLOAT,
                           compute_data_type=data_type.FLOAT, target=target)


def by_value(g, name, value, dtype):
    """A pass-by-value [1,1,1,1] input and its host array (bound as is on both targets)."""
    t = g.tensor(name=name, dim=[1, 1, 1, 1], stride=[1, 1, 1, 1], is_pass_by_value=True,
                 data_type=dtype)
    by_value.names.add(name)
    return t, np.full((1, 1, 1, 1), value,
                      np.float32 if dtype == data_type.FLOAT else np.int32)


by_value.names = set()


def strided(dims, strides, dtype):
    span = 1 + sum((d - 1) * s for d, s in zip(dims, strides))
    buf = np.zeros(span, dtype)
    return np.lib.stride_tricks.as_strided(buf, dims, [s * buf.itemsize for s in strides])


def execute(g, on_gpu, pack, outputs):
    """Build, bind (device copies on the GPU; host arrays on the CPU and for pass-by-value
    tensors) and return the outputs as float64 NumPy arrays."""
    g.build([cudnnfe.heur_mode.A, cudnnfe.heur_mode.FALLBACK])
    device = on_gpu and not DRY_RUN
    bound = {t: (torch.from_numpy(a).to("cuda")
                 if device and t.get_name() not in by_value.names else a)
             for t, a in pack.items()}
    outs = []
    for t in outputs:
        dt = np.float32 if t.get_data_type() == data_type.FLOAT else np.float16
        host = strided(t.get_dim(), t.get_stride(), dt)
        outs.append(torch.from_numpy(host).to("cuda") if device else host)
    bound.update(zip(outputs, outs))
    workspace = None
    if device:
        workspace = torch.empty(max(g.get_workspace_size(), 1), device="cuda", dtype=torch.uint8)
    g.execute(bound, workspace)
    if device:
        torch.cuda.synchronize()
        outs = [o.cpu().numpy() for o in outs]
    return [np.asarray(o, np.float64) for o in outs]


def both(build):
    """build(g) -> (pack, outputs); runs it on the GPU and the CPU reference."""
    results = []
    for target in (GPU, CPU):
        g = new_graph(target)
        pack, outputs = build(g)
        try:
            results.append(execute(g, len(results) == 0, pack, outputs))
        except cudnnfe.GraphNotSupportedError as e:
            if len(results) == 0 and not DRY_RUN:
                pytest.skip(f"cuDNN refuses this score modifier here: {e}")
            raise
    return results


def compare(gpu, cpu):
    for a, b in zip(gpu, cpu):
        np.testing.assert_allclose(a, b, **TOL)


RNG = np.random.default_rng(0)


def bhsd(b, h, s, d):
    """A HALF [b, h, s, d] array stored BSHD, as the cudnn-frontend tests store them."""
    return RNG.standard_normal((b, s, h, d)).astype(np.float16).transpose(0, 2, 1, 3)


def softcap_mod(cap_t):
    def mod(graph, score):
        return graph.mul(a=graph.tanh(input=graph.div(a=score, b=cap_t)), b=cap_t)
    return mod


# ---- forward ----------------------------------------------------------------------

def test_softcap_with_a_padding_style_mask_over_a_paged_cache():
    b, h, s_kv, d, page = 2, 4, 256, 64, 16
    q, k, v = bhsd(b, h, 1, d), bhsd(b, h, s_kv, d), bhsd(b, h, s_kv, d)
    pages = s_kv // page

    def container(x):  # [b * pages, h, page, d]: page p of batch n is n * pages + p
        return np.ascontiguousarray(
            x.reshape(b, h, pages, page, d).transpose(0, 2, 1, 3, 4).reshape(b * pages, h, page, d))
    k_cont, v_cont = container(k), container(v)
    table = np.arange(b * pages, dtype=np.int32).reshape(b, 1, pages, 1)
    seq_q = np.ones((b, 1, 1, 1), np.int32)
    seq_kv = np.array([200, 37], np.int32).reshape(b, 1, 1, 1)

    def build(g):
        tq, tk, tv = g.tensor_like(q), g.tensor_like(k_cont), g.tensor_like(v_cont)
        tkt, tvt = g.tensor_like(table), g.tensor_like(table.copy())
        tsq, tskv = g.tensor_like(seq_q), g.tensor_like(seq_kv)
        cap, cap_a = by_value(g, "softcap", 0.8, data_type.FLOAT)
        neg, neg_a = by_value(g, "neg_inf", NEG, data_type.FLOAT)

        def mod(graph, score):
            capped = softcap_mod(cap)(graph, score)
            col = graph.gen_index(input=capped, axis=3, compute_data_type=data_type.INT32)
            col.set_data_type(data_type.INT32)
            inside = graph.cmp_lt(input=col, comparison=tskv, compute_data_type=data_type.FLOAT)
            inside.set_data_type(data_type.BOOLEAN)
            return graph.binary_select(input0=capped, input1=neg, mask=inside)

        o, _ = g.sdpa(q=tq, k=tk, v=tv, seq_len_q=tsq, seq_len_kv=tskv, generate_stats=False,
                      attn_scale=1 / math.sqrt(d), paged_attention_k_table=tkt,
                      paged_attention_v_table=tvt, paged_attention_max_seq_len_kv=s_kv,
                      score_mod=mod)
        pack = {tq: q, tk: k_cont, tv: v_cont, tkt: table, tvt: table.copy(), tsq: seq_q,
                tskv: seq_kv, cap: cap_a, neg: neg_a}
        return pack, [o.set_output(True)]

    compare(*both(build))


def test_arrow_mask():
    b, h, s, d = 2, 2, 128, 64
    q, k, v = bhsd(b, h, s, d), bhsd(b, h, s, d), bhsd(b, h, s, d)

    def build(g):
        tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
        made = {name: by_value(g, name, value, data_type.INT32)
                for name, value in (("row_bound", 2), ("col_bound", 2), ("diag_0", 1),
                                    ("diag_1", 1))}
        neg, neg_a = by_value(g, "neg_inf", NEG, data_type.FLOAT)

        def mod(graph, score):
            row = graph.gen_index(input=score, axis=2)
            row.set_data_type(data_type.INT32)
            col = graph.gen_index(input=score, axis=3)
            col.set_data_type(data_type.INT32)

            def flag(x):
                x.set_data_type(data_type.INT32)
                return x
            boolean = data_type.BOOLEAN
            near_row = flag(graph.cmp_lt(input=row, comparison=made["row_bound"][0],
                                         compute_data_type=boolean))
            near_col = flag(graph.cmp_lt(input=col, comparison=made["col_bound"][0],
                                         compute_data_type=boolean))
            diff = flag(graph.sub(a=row, b=col, compute_data_type=data_type.INT32))
            band = flag(graph.logical_and(
                flag(graph.cmp_ge(input=diff, comparison=made["diag_0"][0],
                                  compute_data_type=boolean)),
                flag(graph.cmp_le(input=diff, comparison=made["diag_1"][0],
                                  compute_data_type=boolean)),
                compute_data_type=boolean))
            keep = flag(graph.logical_or(flag(graph.logical_or(near_row, near_col,
                                                               compute_data_type=boolean)),
                                         band, compute_data_type=boolean))
            return graph.binary_select(input0=score, input1=neg, mask=keep)

        o, _ = g.sdpa(q=tq, k=tk, v=tv, generate_stats=False, attn_scale=1 / math.sqrt(d),
                      score_mod=mod)
        pack = {tq: q, tk: k, tv: v, neg: neg_a}
        pack.update({t: a for t, a in made.values()})
        return pack, [o.set_output(True)]

    compare(*both(build))


def test_document_mask():
    s, d = 16, 128
    q, k, v = bhsd(1, 1, s, d), bhsd(1, 1, s, d), bhsd(1, 1, s, d)
    doc = np.sort(RNG.integers(0, s, (1, 1, s, 1)), axis=2).astype(np.int32)
    doc_t = doc.reshape(1, 1, 1, s)

    def build(g):
        tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
        td, tdt = g.tensor_like(doc), g.tensor_like(doc_t)
        neg, neg_a = by_value(g, "neg_inf", NEG, data_type.FLOAT)

        def mod(graph, score):
            col = graph.gen_index(input=score, axis=3, compute_data_type=data_type.INT32)
            col.set_data_type(data_type.INT32)
            ones = graph.cmp_le(input=col, comparison=col, compute_data_type=data_type.FLOAT)
            ones.set_data_type(data_type.INT32)
            rows = graph.scale(input=ones, scale=td, compute_data_type=data_type.FLOAT)
            rows.set_data_type(data_type.INT32)
            cols = graph.scale(input=ones, scale=tdt, compute_data_type=data_type.FLOAT)
            cols.set_data_type(data_type.INT32)
            same = graph.cmp_eq(input=rows, comparison=cols, compute_data_type=data_type.FLOAT)
            same.set_data_type(data_type.INT32)
            return graph.binary_select(input0=score, input1=neg, mask=same)

        o, _ = g.sdpa(q=tq, k=tk, v=tv, generate_stats=False, attn_scale=1 / math.sqrt(d),
                      score_mod=mod)
        return {tq: q, tk: k, tv: v, td: doc, tdt: doc_t, neg: neg_a}, [o.set_output(True)]

    compare(*both(build))


# ---- backward ---------------------------------------------------------------------

def causal(graph, score, fill):
    row = graph.gen_index(input=score, axis=2)
    row.set_data_type(data_type.INT32)
    col = graph.gen_index(input=score, axis=3)
    col.set_data_type(data_type.INT32)
    mask = graph.cmp_ge(input=row, comparison=col, compute_data_type=data_type.BOOLEAN)
    mask.set_data_type(data_type.BOOLEAN)
    return graph.binary_select(input0=score, input1=fill, mask=mask)


def forward_and_backward(fwd_mod, bwd_mod):
    """Runs the forward on the GPU and the CPU (compared), then the backward on both
    from the GPU's O and stats (compared). fwd_mod(g) / bwd_mod(g) -> (callback, pack)."""
    b, h, s, d = 2, 2, 128, 64
    q, k, v = bhsd(b, h, s, d), bhsd(b, h, s, d), bhsd(b, h, s, d)
    do = bhsd(b, h, s, d)

    def build_fwd(g):
        tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
        mod, pack = fwd_mod(g)
        o, stats = g.sdpa(q=tq, k=tk, v=tv, generate_stats=True, attn_scale=1 / math.sqrt(d),
                          score_mod=mod)
        stats.set_data_type(data_type.FLOAT)
        pack.update({tq: q, tk: k, tv: v})
        return pack, [o.set_output(True), stats.set_output(True)]

    (o_gpu, stats_gpu), cpu = both(build_fwd)
    compare([o_gpu, stats_gpu], cpu)
    o_h = o_gpu.astype(np.float16)
    stats_f = stats_gpu.astype(np.float32)

    def build_bwd(g):
        tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
        to, tdo, ts = g.tensor_like(o_h), g.tensor_like(do), g.tensor_like(stats_f)
        mod, pack = fwd_mod(g)
        bprop, more = bwd_mod(g)
        pack.update(more)
        dq, dk, dv = g.sdpa_backward(q=tq, k=tk, v=tv, o=to, dO=tdo, stats=ts,
                                     attn_scale=1 / math.sqrt(d), score_mod=mod,
                                     score_mod_bprop=bprop)
        pack.update({tq: q, tk: k, tv: v, to: o_h, tdo: do, ts: stats_f})
        return pack, [t.set_output(True) for t in (dq, dk, dv)]

    compare(*both(build_bwd))


def test_causal_mask_and_its_bprop():
    def fwd(g):
        neg, neg_a = by_value(g, "neg_inf", NEG, data_type.FLOAT)
        return (lambda graph, score: causal(graph, score, neg)), {neg: neg_a}

    def bwd(g):
        zero, zero_a = by_value(g, "zero", 0.0, data_type.FLOAT)
        return (lambda graph, ds: causal(graph, ds, zero)), {zero: zero_a}

    forward_and_backward(fwd, bwd)


def test_softcap_backward_reads_the_forward_tanh():
    state = {}

    def fwd(g):
        cap, cap_a = by_value(g, "softcap", 0.8, data_type.FLOAT)

        def mod(graph, score):
            state["t"] = graph.tanh(input=graph.div(a=score, b=cap))
            return graph.mul(a=state["t"], b=cap)
        return mod, {cap: cap_a}

    def bwd(g):
        one, one_a = by_value(g, "one", 1.0, data_type.FLOAT)

        def bprop(graph, ds):
            t = state["t"]
            return graph.mul(a=ds, b=graph.sub(a=one, b=graph.mul(a=t, b=t)))
        return bprop, {one: one_a}

    forward_and_backward(fwd, bwd)
