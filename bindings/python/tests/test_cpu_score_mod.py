"""sdpa(score_mod=f) and sdpa_backward(score_mod=, score_mod_bprop=) on the CPU reference
(docs/attention.md, "Score modifiers"): the callbacks of cudnn-frontend's
test_flexible_sdpa*.py (softcap, arrow, document and padding-style masks, the causal
mask and its gradient) against NumPy attention written here from the definitions,
the backward also against a numerical gradient, and the bad sub-graphs' errors."""
import math

import numpy as np
import pytest

import cudnnfe
from cudnnfe import data_type
from cpu_helpers import close, graph, run

B, H, SQ, SKV, D = 2, 2, 7, 9, 8
SCALE = 1 / math.sqrt(D)
NEG = -1e9


@pytest.fixture
def qkv(rng):
    q = rng.standard_normal((B, H, SQ, D)).astype(np.float32)
    k = rng.standard_normal((B, H, SKV, D)).astype(np.float32)
    v = rng.standard_normal((B, H, SKV, D)).astype(np.float32)
    return q, k, v


def by_value(g, name, value, dtype=data_type.FLOAT):
    """A pass-by-value [1,1,1,1] graph input, as the cudnn-frontend tests make them."""
    t = g.tensor(name=name, dim=[1, 1, 1, 1], stride=[1, 1, 1, 1], is_pass_by_value=True,
                 data_type=dtype)
    array = np.full((1, 1, 1, 1), value,
                    np.float32 if dtype == data_type.FLOAT else np.int32)
    return t, array


# ---- NumPy references -------------------------------------------------------------

def scores(q, k):
    return SCALE * np.einsum("bhid,bhjd->bhij", q.astype(np.float64), k.astype(np.float64))


def attend(s, v):
    """softmax over the last dim, then P @ V; returns O, stats and P."""
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    z = e.sum(axis=-1, keepdims=True)
    p = e / z
    return np.einsum("bhij,bhjd->bhid", p, v.astype(np.float64)), m + np.log(z), p


def softcap(s, c):
    return np.tanh(s / c) * c


def indices():
    i = np.arange(SQ).reshape(1, 1, SQ, 1)
    j = np.arange(SKV).reshape(1, 1, 1, SKV)
    return i, j


def forward(q, k, v, fn, extra=None, **options):
    """sdpa with score_mod=fn on the CPU reference; `extra` maps tensors to arrays."""
    g = graph()
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    inputs = {tq: q, tk: k, tv: v}
    made = fn(g) if callable(fn) else None
    mod, more = made if made else (None, {})
    inputs.update(more)
    o, stats = g.sdpa(tq, tk, tv, generate_stats=True, attn_scale=SCALE, score_mod=mod,
                      **options)
    return run(g, inputs, [o.set_output(True), stats.set_output(True)])


# ---- forward ----------------------------------------------------------------------

def test_softcap_matches_numpy(qkv):
    q, k, v = qkv
    cap = 0.8

    def build(g):
        c, c_array = by_value(g, "softcap", cap)

        def mod(graph, score):
            return graph.mul(a=graph.tanh(input=graph.div(a=score, b=c)), b=c)
        return mod, {c: c_array}

    o, stats = forward(q, k, v, build)
    want_o, want_stats, _ = attend(softcap(scores(q, k), cap), v)
    close(o, want_o, rtol=1e-4, atol=1e-5)
    close(stats, want_stats, rtol=1e-4, atol=1e-5)


def arrow_mask(graph, score, row_bound, col_bound, diag_0, diag_1, neg_inf):
    """test_flexible_sdpa.py's arrow mask, call for call."""
    row = graph.gen_index(input=score, axis=2)
    row.set_data_type(data_type.INT32)
    col = graph.gen_index(input=score, axis=3)
    col.set_data_type(data_type.INT32)
    below_row = graph.cmp_lt(input=row, comparison=row_bound, compute_data_type=data_type.BOOLEAN)
    below_row.set_data_type(data_type.INT32)
    below_col = graph.cmp_lt(input=col, comparison=col_bound, compute_data_type=data_type.BOOLEAN)
    below_col.set_data_type(data_type.INT32)
    diff = graph.sub(a=row, b=col, compute_data_type=data_type.INT32)
    diff.set_data_type(data_type.INT32)
    ge = graph.cmp_ge(input=diff, comparison=diag_0, compute_data_type=data_type.BOOLEAN)
    ge.set_data_type(data_type.INT32)
    le = graph.cmp_le(input=diff, comparison=diag_1, compute_data_type=data_type.BOOLEAN)
    le.set_data_type(data_type.INT32)
    band = graph.logical_and(ge, le, compute_data_type=data_type.BOOLEAN)
    band.set_data_type(data_type.INT32)
    mask = graph.logical_or(below_row, below_col, compute_data_type=data_type.BOOLEAN)
    mask.set_data_type(data_type.INT32)
    mask = graph.logical_or(mask, band, compute_data_type=data_type.BOOLEAN)
    mask.set_data_type(data_type.INT32)
    return graph.binary_select(input0=score, input1=neg_inf, mask=mask)


def test_arrow_mask_matches_numpy(qkv):
    q, k, v = qkv

    def build(g):
        made = [by_value(g, name, value, data_type.INT32) for name, value in
                (("row_bound", 2), ("col_bound", 2), ("diag_0", -1), ("diag_1", 1))]
        neg, neg_array = by_value(g, "neg_inf", NEG)
        tensors = [t for t, _ in made]

        def mod(graph, score):
            return arrow_mask(graph, score, *tensors, neg)
        return mod, dict(made + [(neg, neg_array)])

    o, stats = forward(q, k, v, build)
    i, j = indices()
    keep = (i < 2) | (j < 2) | ((i - j >= -1) & (i - j <= 1))
    want_o, want_stats, _ = attend(np.where(keep, scores(q, k), NEG), v)
    close(o, want_o, rtol=1e-4, atol=1e-5)
    close(stats, want_stats, rtol=1e-4, atol=1e-5)


def test_document_mask_reads_broadcast_graph_inputs(qkv, rng):
    """test_flexible_sdpa.py's document mask: scale() by [1,1,s,1] and [1,1,1,s] inputs."""
    q, k, v = qkv
    q, k, v = q[:, :, :SKV] if SQ >= SKV else q, k[:, :, :SQ], v[:, :, :SQ]
    doc = np.sort(rng.integers(0, 3, SQ)).astype(np.int32)

    def build(g):
        rows, cols = doc.reshape(1, 1, SQ, 1), doc.reshape(1, 1, 1, SQ)
        t_rows, t_cols = g.tensor_like(rows), g.tensor_like(cols)
        neg, neg_array = by_value(g, "neg_inf", NEG)

        def mod(graph, score):
            col = graph.gen_index(input=score, axis=3, compute_data_type=data_type.INT32)
            col.set_data_type(data_type.INT32)
            ones = graph.cmp_le(input=col, comparison=col, compute_data_type=data_type.FLOAT)
            ones.set_data_type(data_type.INT32)
            row_doc = graph.scale(input=ones, scale=t_rows, compute_data_type=data_type.FLOAT)
            row_doc.set_data_type(data_type.INT32)
            col_doc = graph.scale(input=ones, scale=t_cols, compute_data_type=data_type.FLOAT)
            col_doc.set_data_type(data_type.INT32)
            same = graph.cmp_eq(input=row_doc, comparison=col_doc,
                                compute_data_type=data_type.FLOAT)
            same.set_data_type(data_type.INT32)
            return graph.binary_select(input0=score, input1=neg, mask=same)
        return mod, {t_rows: rows, t_cols: cols, neg: neg_array}

    o, stats = forward(q, k, v, build)
    keep = doc.reshape(SQ, 1) == doc.reshape(1, SQ)
    want_o, want_stats, _ = attend(np.where(keep, scores(q, k), NEG), v)
    close(o, want_o, rtol=1e-4, atol=1e-5)
    close(stats, want_stats, rtol=1e-4, atol=1e-5)


def test_softcap_then_padding_style_mask_reads_the_lengths(qkv):
    """test_flexible_sdpa.py's decode mask: the lengths are sdpa inputs without
    use_padding_mask (cudnn-frontend allows that with a score_mod) that the modifier
    compares against; here the mask keeps j < seq_len_kv."""
    q, k, v = qkv
    seq_kv = np.array([9, 4], np.int32).reshape(B, 1, 1, 1)
    seq_q = np.array([7, 5], np.int32).reshape(B, 1, 1, 1)

    g = graph()
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    t_sq, t_skv = g.tensor_like(seq_q), g.tensor_like(seq_kv)
    c, c_array = by_value(g, "softcap", 0.8)
    neg, neg_array = by_value(g, "neg_inf", NEG)

    def mod(graph, score):
        capped = graph.mul(a=graph.tanh(input=graph.div(a=score, b=c)), b=c)
        col = graph.gen_index(input=capped, axis=3, compute_data_type=data_type.INT32)
        col.set_data_type(data_type.INT32)
        inside = graph.cmp_lt(input=col, comparison=t_skv, compute_data_type=data_type.FLOAT)
        inside.set_data_type(data_type.BOOLEAN)
        return graph.binary_select(input0=capped, input1=neg, mask=inside)

    o, = g.sdpa(tq, tk, tv, generate_stats=False, attn_scale=SCALE, seq_len_q=t_sq,
                seq_len_kv=t_skv, score_mod=mod)[:1]
    (o_out,) = run(g, {tq: q, tk: k, tv: v, t_sq: seq_q, t_skv: seq_kv, c: c_array,
                       neg: neg_array}, [o.set_output(True)])
    _, j = indices()
    s = np.where(j < seq_kv, softcap(scores(q, k), 0.8), NEG)
    want_o, _, _ = attend(s, v)
    close(o_out, want_o, rtol=1e-4, atol=1e-5)


# ---- backward ---------------------------------------------------------------------

def causal(graph, score, fill):
    row = graph.gen_index(input=score, axis=2)
    row.set_data_type(data_type.INT32)
    col = graph.gen_index(input=score, axis=3)
    col.set_data_type(data_type.INT32)
    mask = graph.cmp_ge(input=row, comparison=col, compute_data_type=data_type.BOOLEAN)
    mask.set_data_type(data_type.BOOLEAN)
    return graph.binary_select(input0=score, input1=fill, mask=mask)


def numpy_backward(q, k, v, do, mod, mod_grad):
    """dQ, dK, dV of O = softmax(mod(scale Q Kᵀ)) V: dS' = P * (dP - rowsum(dO * O)),
    dS = mod_grad(s) * dS', dQ = scale dS K, dK = scale dSᵀ Q."""
    s = scores(q, k)
    o, _, p = attend(mod(s), v)
    dp = np.einsum("bhid,bhjd->bhij", do, v.astype(np.float64))
    ds = p * (dp - (do * o).sum(axis=-1, keepdims=True)) * mod_grad(s)
    dq = SCALE * np.einsum("bhij,bhjd->bhid", ds, k.astype(np.float64))
    dk = SCALE * np.einsum("bhij,bhid->bhjd", ds, q.astype(np.float64))
    dv = np.einsum("bhij,bhid->bhjd", p, do)
    return o, dq, dk, dv


def run_backward(q, k, v, do, build_fwd, build_bwd):
    """Forward (for O and stats) then backward, both on the CPU with the modifiers that
    build_fwd(g) / build_bwd(g, state) make; returns O, dQ, dK, dV."""
    g = graph()
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    mod, inputs = build_fwd(g)
    o, stats = g.sdpa(tq, tk, tv, generate_stats=True, attn_scale=SCALE, score_mod=mod)
    inputs.update({tq: q, tk: k, tv: v})
    o_out, stats_out = run(g, inputs, [o.set_output(True), stats.set_output(True)])

    g = graph()
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    to, tdo = g.tensor_like(np.ascontiguousarray(o_out)), g.tensor_like(do)
    tstats = g.tensor_like(np.ascontiguousarray(stats_out))
    mod, inputs = build_fwd(g)
    bprop, more = build_bwd(g)
    inputs.update(more)
    dq, dk, dv = g.sdpa_backward(tq, tk, tv, to, tdo, tstats, attn_scale=SCALE, score_mod=mod,
                                 score_mod_bprop=bprop)
    inputs.update({tq: q, tk: k, tv: v, to: np.ascontiguousarray(o_out), tdo: do,
                   tstats: np.ascontiguousarray(stats_out)})
    grads = run(g, inputs, [t.set_output(True) for t in (dq, dk, dv)])
    return [o_out] + grads


def test_causal_mask_backward_matches_numpy(qkv, rng):
    """test_flexible_sdpa_bprop.py's pair: the causal mask forward, and its bprop that
    zeroes dS' where the forward masked."""
    q, k, v = qkv
    do = rng.standard_normal(q.shape[:3] + (v.shape[3],)).astype(np.float32)

    def build_fwd(g):
        neg, neg_array = by_value(g, "neg_inf", NEG)
        return (lambda graph, score: causal(graph, score, neg)), {neg: neg_array}

    def build_bwd(g):
        zero, zero_array = by_value(g, "zero", 0.0)
        return (lambda graph, ds: causal(graph, ds, zero)), {zero: zero_array}

    got = run_backward(q, k, v, do, build_fwd, build_bwd)
    i, j = indices()
    want = numpy_backward(q, k, v, do, lambda s: np.where(i >= j, s, NEG),
                          lambda s: (i >= j).astype(np.float64))
    for a, b in zip(got, want):
        close(a, b, rtol=1e-4, atol=1e-5)


def softcap_pair(cap):
    """softcap forward, and its bprop dS = dS' * (1 - tanh²(s / c)) reading the forward's
    tanh (a score_mod_bprop may read score_mod's tensors)."""
    state = {}

    def build_fwd(g):
        c, c_array = by_value(g, "softcap", cap)

        def mod(graph, score):
            state["tanh"] = graph.tanh(input=graph.div(a=score, b=c))
            return graph.mul(a=state["tanh"], b=c)
        return mod, {c: c_array}

    def build_bwd(g):
        one, one_array = by_value(g, "one", 1.0)

        def bprop(graph, ds):
            t = state["tanh"]
            return graph.mul(a=ds, b=graph.sub(a=one, b=graph.mul(a=t, b=t)))
        return bprop, {one: one_array}
    return build_fwd, build_bwd


def test_softcap_backward_matches_numpy_and_a_numerical_gradient(qkv, rng):
    q, k, v = qkv
    do = rng.standard_normal(q.shape[:3] + (v.shape[3],)).astype(np.float32)
    cap = 0.8
    got = run_backward(q, k, v, do, *softcap_pair(cap))
    want = numpy_backward(q, k, v, do, lambda s: softcap(s, cap),
                          lambda s: 1 - np.tanh(s / cap) ** 2)
    for a, b in zip(got, want):
        close(a, b, rtol=1e-4, atol=1e-5)

    # The NumPy gradient itself against central differences of sum(dO * O).
    def loss(qq):
        o, _, _ = attend(softcap(SCALE * np.einsum("bhid,bhjd->bhij", qq, k.astype(np.float64)),
                                 cap), v)
        return float((do * o).sum())
    q64, eps = q.astype(np.float64), 1e-6
    for at in [(0, 0, 0, 0), (1, 1, 3, 5), (0, 1, 6, 7)]:
        plus, minus = q64.copy(), q64.copy()
        plus[at] += eps
        minus[at] -= eps
        numeric = (loss(plus) - loss(minus)) / (2 * eps)
        assert abs(numeric - want[1][at]) < 1e-6 * max(1.0, abs(numeric))
        assert abs(numeric - got[1][at]) < 1e-4 * max(1.0, abs(numeric))


def test_backward_without_bprop_passes_the_gradient_through(qkv, rng):
    """cudnn-frontend's rule: without score_mod_bprop, dS = dS' (right for masks)."""
    q, k, v = qkv
    do = rng.standard_normal(q.shape[:3] + (v.shape[3],)).astype(np.float32)
    build_fwd, _ = softcap_pair(0.8)
    got = run_backward(q, k, v, do, build_fwd, lambda g: (None, {}))
    want = numpy_backward(q, k, v, do, lambda s: softcap(s, 0.8), lambda s: np.ones_like(s))
    for a, b in zip(got, want):
        close(a, b, rtol=1e-4, atol=1e-5)


# ---- bad sub-graphs ---------------------------------------------------------------

def _graph_with_qkv(qkv):
    g = graph()
    q, k, v = qkv
    return g, g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)


def test_a_matmul_inside_a_modifier_is_refused(qkv):
    g, tq, tk, tv = _graph_with_qkv(qkv)
    w = g.tensor(name="w", dim=[B, H, SKV, SKV], stride=[H * SKV * SKV, SKV * SKV, SKV, 1],
                 data_type=data_type.FLOAT)
    with pytest.raises(cudnnfe.InvalidGraphError, match=r"matmul .*only pointwise ops"):
        g.sdpa(tq, tk, tv, attn_scale=SCALE, score_mod=lambda graph, s: graph.matmul(s, w))


def test_a_result_that_ignores_the_scores_is_refused(qkv):
    g, tq, tk, tv = _graph_with_qkv(qkv)
    bias = g.tensor(name="bias", dim=[B, H, SQ, SKV],
                    stride=[H * SQ * SKV, SQ * SKV, SKV, 1], data_type=data_type.FLOAT)
    with pytest.raises(cudnnfe.InvalidGraphError, match=r"does not depend on the score tensor"):
        g.sdpa(tq, tk, tv, attn_scale=SCALE,
               score_mod=lambda graph, s: graph.tanh(input=bias))


def test_a_boolean_result_is_refused(qkv):
    g, tq, tk, tv = _graph_with_qkv(qkv)
    o, _ = g.sdpa(tq, tk, tv, attn_scale=SCALE,
                  score_mod=lambda graph, s: graph.cmp_gt(input=s, comparison=s))
    o.set_output(True)
    with pytest.raises(cudnnfe.InvalidGraphError, match=r"score_mod result .* is BOOLEAN"):
        g.validate()


def test_reading_an_op_output_from_outside_is_refused(qkv):
    g, tq, tk, tv = _graph_with_qkv(qkv)
    x = g.tensor(name="x", dim=[B, H, SQ, SKV], stride=[H * SQ * SKV, SQ * SKV, SKV, 1],
                 data_type=data_type.FLOAT)
    outside = g.tanh(input=x)  # a virtual op output of the graph
    with pytest.raises(cudnnfe.InvalidGraphError, match=r"outside the score modifier"):
        g.sdpa(tq, tk, tv, attn_scale=SCALE,
               score_mod=lambda graph, s: graph.add(a=s, b=outside))


def test_a_callback_must_return_a_tensor(qkv):
    g, tq, tk, tv = _graph_with_qkv(qkv)
    with pytest.raises(TypeError, match=r"score_mod must return a tensor"):
        g.sdpa(tq, tk, tv, attn_scale=SCALE, score_mod=lambda graph, s: None)


def test_score_mod_must_be_callable(qkv):
    g, tq, tk, tv = _graph_with_qkv(qkv)
    with pytest.raises(TypeError, match=r"score_mod must be a callable f\(graph, score\)"):
        g.sdpa(tq, tk, tv, attn_scale=SCALE, score_mod=0.8)


def test_boolean_math_is_only_for_comparisons_and_logic():
    """Any compute type makes a well-formed graph (cuDNN decides on the GPU); the CPU
    reference computes in BOOLEAN only for comparisons and logic, and says so at build."""
    g = graph()
    x = g.tensor(name="x", dim=[2, 3], stride=[3, 1], data_type=data_type.FLOAT)
    y = g.add(a=x, b=x, compute_data_type=data_type.BOOLEAN)
    y.set_output(True)
    g.validate()
    with pytest.raises(cudnnfe.GraphNotSupportedError,
                       match=r"compute data type BOOLEAN.*CPU reference"):
        g.build()


def test_grouped_query_heads_share_the_modifier(rng):
    """GQA: h_q = 4 query heads over h_kv = 2; the modifier sees [b, h_q, s_q, s_kv]."""
    q = rng.standard_normal((B, 4, SQ, D)).astype(np.float32)
    k = rng.standard_normal((B, 2, SKV, D)).astype(np.float32)
    v = rng.standard_normal((B, 2, SKV, D)).astype(np.float32)

    def build(g):
        c, c_array = by_value(g, "softcap", 0.5)
        return softcap_mod(c), {c: c_array}

    o, stats = forward(q, k, v, build)
    k2, v2 = np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1)
    want_o, want_stats, _ = attend(softcap(scores(q, k2), 0.5), v2)
    close(o, want_o, rtol=1e-4, atol=1e-5)
    close(stats, want_stats, rtol=1e-4, atol=1e-5)


def softcap_mod(c):
    def mod(graph, score):
        return graph.mul(a=graph.tanh(input=graph.div(a=score, b=c)), b=c)
    return mod


def test_logic_keeps_the_compute_type_it_is_given():
    """cudnn-frontend's decode mask (test_flexible_sdpa.py) asks for FLOAT logical_and; cuDNN's
    attention engines match the graph only with that math type, so it must reach the graph
    unchanged. Logic left to the default computes in BOOLEAN."""
    import json

    g = graph()
    x = g.tensor(name="x", dim=[2, 3], stride=[3, 1], data_type=data_type.FLOAT)
    a = g.cmp_gt(input=x, comparison=x)
    b = g.cmp_lt(input=x, comparison=x)
    given = g.logical_and(a=a, b=b, compute_data_type=data_type.FLOAT, name="given")
    default = g.logical_or(a=a, b=b, name="default")
    g.binary_select(input0=x, input1=x, mask=given).set_output(True)
    g.binary_select(input0=x, input1=x, mask=default).set_output(True)
    g.validate()
    nodes = {n["name"]: n for n in json.loads(g.serialize())["nodes"]}
    assert nodes["given"]["compute_data_type"] == "FLOAT"
    assert nodes["default"]["compute_data_type"] == "BOOLEAN"
