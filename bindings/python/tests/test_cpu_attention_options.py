"""sdpa / sdpa_backward with the attention options, and FP8 attention, on the CPU reference,
checked against NumPy (numpy_ref_ops), plus their bad-input errors."""
import math

import numpy as np
import pytest

import cudnnfe
from cudnnfe import data_type, diagonal_alignment
from cpu_helpers import close, graph, run
import numpy_ref_ops as ref

B, HQ, HKV, SQ, SKV, D = 2, 4, 2, 6, 9, 8
SCALE = 1 / math.sqrt(D)


@pytest.fixture
def qkv(rng):
    q = rng.standard_normal((B, HQ, SQ, D)).astype(np.float32)
    k = rng.standard_normal((B, HKV, SKV, D)).astype(np.float32)
    v = rng.standard_normal((B, HKV, SKV, D)).astype(np.float32)
    return q, k, v


def _forward(q, k, v, extra_inputs=None, **options):
    """Run sdpa on the CPU with ``options``; returns (O, stats) arrays."""
    g = graph()
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    inputs = {tq: q, tk: k, tv: v}
    for key, value in (extra_inputs or {}).items():
        t = g.tensor_like(value)
        inputs[t] = value
        options[key] = t
    o, stats = g.sdpa(tq, tk, tv, generate_stats=True, **options)
    return run(g, inputs, [o.set_output(True), stats.set_output(True)])


def _valid_rows(seq_q):
    return [(n, slice(None), slice(0, int(s))) for n, s in enumerate(seq_q)]


# ---------------------------------------------------------------------------
# forward options
# ---------------------------------------------------------------------------

def test_padding_mask(qkv):
    q, k, v = qkv
    seq_q = np.array([6, 3], np.int32).reshape(B, 1, 1, 1)
    seq_kv = np.array([9, 4], np.int32).reshape(B, 1, 1, 1)
    o, stats = _forward(q, k, v, {"seq_len_q": seq_q, "seq_len_kv": seq_kv},
                        use_padding_mask=True, attn_scale=SCALE)
    mask = ref.visible(B, SQ, SKV, seq_q, seq_kv)
    want_o, want_stats, _ = ref.attention(q, k, v, SCALE, mask)
    close(o, want_o, rtol=1e-4, atol=1e-5)
    close(stats, want_stats, rtol=1e-4, atol=1e-5)
    # docs/attention.md: the CPU reference writes O = 0 and stats = -inf on padding rows
    assert np.all(o[1, :, 3:] == 0) and np.all(np.isneginf(stats[1, :, 3:]))


def _paged(x, page_size, rng):
    """x [b, h, s, d] as a page container [b * pages, h, page_size, d] with its shuffled
    page table [b, 1, pages, 1] (INT32), as cudnn-frontend's sample 52 builds them."""
    b, h, s, d = x.shape
    pages = -(-s // page_size)
    padded = np.zeros((b, h, pages * page_size, d), x.dtype)
    padded[:, :, :s] = x
    order = rng.permutation(b * pages)
    container = np.zeros((b * pages, h, page_size, d), x.dtype)
    table = np.zeros((b, 1, pages, 1), np.int32)
    for n in range(b):
        for p in range(pages):
            container[order[n * pages + p]] = padded[n, :, p * page_size:(p + 1) * page_size]
            table[n, 0, p, 0] = order[n * pages + p]
    return container, table


@pytest.mark.parametrize("page_k,page_v", [(True, True), (True, False), (False, True)])
def test_paged_caches_match_the_gathered_attention(qkv, rng, page_k, page_v):
    """sdpa(paged_attention_k_table=, paged_attention_v_table=,
    paged_attention_max_seq_len_kv=) reads k / v through their page tables
    (docs/attention.md, paged K/V cache)."""
    q, k, v = qkv
    seq_q = np.array([6, 3], np.int32).reshape(B, 1, 1, 1)
    seq_kv = np.array([9, 4], np.int32).reshape(B, 1, 1, 1)
    ck, tk = _paged(k, 4, rng) if page_k else (k, None)
    cv, tv = _paged(v, 4, rng) if page_v else (v, None)
    extra = {"seq_len_q": seq_q, "seq_len_kv": seq_kv}
    if page_k:
        extra["paged_attention_k_table"] = tk
    if page_v:
        extra["paged_attention_v_table"] = tv
    o, stats = _forward(q, ck, cv, extra, use_padding_mask=True, attn_scale=SCALE,
                        use_causal_mask_bottom_right=True,
                        paged_attention_max_seq_len_kv=SKV)
    mask = ref.visible(B, SQ, SKV, seq_q, seq_kv, right=0, bottom_right=True)
    want_o, want_stats, _ = ref.attention(q, k, v, SCALE, mask)
    for n, h, rows in _valid_rows(seq_q.reshape(B)):
        close(o[n, h, rows], want_o[n, h, rows], rtol=1e-4, atol=1e-5)
        close(stats[n, h, rows], want_stats[n, h, rows], rtol=1e-4, atol=1e-5)


def test_paged_cache_errors_name_the_option(qkv, rng):
    q, k, v = qkv
    ck, tk = _paged(k, 4, rng)
    g = graph()
    tq, tck, tv, ttk = (g.tensor_like(a) for a in (q, ck, v, tk))
    with pytest.raises(cudnnfe.InvalidGraphError, match="padding"):
        g.sdpa(tq, tck, tv, paged_attention_k_table=ttk)  # needs the padding mask
    with pytest.raises(TypeError, match="paged_attention_max_seq_len_kv"):
        g.sdpa(tq, tck, tv, paged_attention_max_seq_len_kv="16")
    # A packed table's offsets are [b+1, 1, 1, 1] (test_cpu_ragged_outputs.py runs them).
    offsets = g.tensor(dim=[B, 1, 1, 1], data_type=data_type.INT32)
    ttk.set_ragged_offset(offsets)
    seq = g.tensor(dim=[B, 1, 1, 1], data_type=data_type.INT32)
    with pytest.raises(cudnnfe.InvalidGraphError,
                       match=r"ragged_offset_page_table_k .* is \[2,1,1,1\]; expected "
                             r"\[b\+1,1,1,1\]"):
        g.sdpa(tq, tck, tv, paged_attention_k_table=ttk, use_padding_mask=True,
               seq_len_q=seq, seq_len_kv=seq)


@pytest.mark.parametrize("band", [
    dict(diagonal_band_left_bound=3),
    dict(sliding_window_length=2, use_causal_mask=True),
    dict(diagonal_band_left_bound=4, diagonal_band_right_bound=1),
    dict(diagonal_band_right_bound=2, diagonal_alignment=diagonal_alignment.BOTTOM_RIGHT),
    dict(diagonal_band_left_bound=3, use_causal_mask_bottom_right=True),
    dict(diagonal_band_right_bound=0, diagonal_alignment="bottom_right"),
], ids=["left", "sliding-causal", "left-right", "right-bottom-right", "left-causal-br",
        "right0-br-by-name"])
def test_diagonal_band(qkv, band):
    q, k, v = qkv
    o, stats = _forward(q, k, v, attn_scale=SCALE, **band)
    left = band.get("diagonal_band_left_bound", band.get("sliding_window_length", -1))
    right = band.get("diagonal_band_right_bound", -1)
    causal = band.get("use_causal_mask") or band.get("use_causal_mask_bottom_right")
    if causal:
        right = 0
    alignment = band.get("diagonal_alignment", diagonal_alignment.TOP_LEFT)
    bottom_right = (band.get("use_causal_mask_bottom_right", False)
                    or alignment in (diagonal_alignment.BOTTOM_RIGHT, "bottom_right"))
    mask = ref.visible(B, SQ, SKV, left=left, right=right, bottom_right=bottom_right)
    want_o, want_stats, _ = ref.attention(q, k, v, SCALE, mask)
    close(o, want_o, rtol=1e-4, atol=1e-5)
    close(stats, want_stats, rtol=1e-4, atol=1e-5)


def test_band_with_padding_aligns_bottom_right_on_the_lengths(qkv):
    q, k, v = qkv
    seq_q = np.array([4, 6], np.int32).reshape(B, 1, 1, 1)
    seq_kv = np.array([7, 8], np.int32).reshape(B, 1, 1, 1)
    o, _ = _forward(q, k, v, {"seq_len_q": seq_q, "seq_len_kv": seq_kv}, use_padding_mask=True,
                    use_causal_mask_bottom_right=True, diagonal_band_left_bound=2)
    mask = ref.visible(B, SQ, SKV, seq_q, seq_kv, left=2, right=0, bottom_right=True)
    want_o, _, _ = ref.attention(q, k, v, SCALE, mask)
    for rows in _valid_rows(seq_q.ravel()):
        close(o[rows], want_o[rows], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("hq", [4, 6])
def test_alibi_mask(rng, hq):
    q = rng.standard_normal((1, hq, 5, D)).astype(np.float32)
    k = rng.standard_normal((1, hq, 5, D)).astype(np.float32)
    v = rng.standard_normal((1, hq, 5, D)).astype(np.float32)
    o, stats = _forward(q, k, v, use_alibi_mask=True, use_causal_mask=True)
    mask = ref.visible(1, 5, 5, right=0)
    want_o, want_stats, _ = ref.attention(q, k, v, SCALE, mask, alibi=True)
    close(o, want_o, rtol=1e-4, atol=1e-5)
    close(stats, want_stats, rtol=1e-4, atol=1e-5)
    if hq == 6:  # docs/attention.md: 2^-2, 2^-4, 2^-6, 2^-8, 2^-1, 2^-3
        np.testing.assert_allclose(ref.alibi_slopes(6), 2.0 ** -np.array([2, 4, 6, 8, 1, 3]))


def test_attn_scale_tensor_is_read_at_every_execute(qkv):
    q, k, v = qkv
    g = graph()
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    scale_t = g.tensor(dim=[1, 1, 1, 1], data_type=data_type.FLOAT, name="scale")
    o, _ = g.sdpa(tq, tk, tv, attn_scale=scale_t, use_causal_mask=True)
    o.set_output(True)
    g.build()
    mask = ref.visible(B, SQ, SKV, right=0)
    for value in (0.25, 1.5):
        out = np.full(o.get_dim(), np.nan, np.float32)
        g.execute({tq: q, tk: k, tv: v, "scale": np.full((1, 1, 1, 1), value, np.float32),
                   o: out})
        close(out, ref.attention(q, k, v, value, mask)[0], rtol=1e-4, atol=1e-5)


def test_attn_scale_scalar_tensor_with_bias(qkv, rng):
    q, k, v = qkv
    bias = rng.standard_normal((1, HQ, SQ, SKV)).astype(np.float32)
    g = graph()
    tq, tk, tv, tb = (g.tensor_like(a) for a in (q, k, v, bias))
    # a Python array for the scale becomes a graph input named "<node>::attn_scale"
    o, _ = g.sdpa(tq, tk, tv, attn_scale=np.full((1, 1, 1, 1), 0.3, np.float32), bias=tb,
                  name="attn")
    (out,) = run(g, {tq: q, tk: k, tv: v, tb: bias,
                     "attn::attn_scale": np.full((1, 1, 1, 1), 0.3, np.float32)},
                 [o.set_output(True)])
    close(out, ref.attention(q, k, v, 0.3, ref.visible(B, SQ, SKV), bias=bias)[0], rtol=1e-4,
          atol=1e-5)


@pytest.mark.parametrize("form", ["tuple-tensors", "tuple-ints", "seeds-keywords"])
def test_dropout_drawn(qkv, form):
    q, k, v = qkv
    p, seed, offset = 0.3, 1234, 77
    g = graph()
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    inputs = {tq: q, tk: k, tv: v}
    if form == "tuple-tensors":
        ts = g.tensor(dim=[1, 1, 1, 1], data_type=data_type.INT64)
        to = g.tensor(dim=[1, 1, 1, 1], data_type=data_type.INT64)
        inputs[ts] = np.full((1, 1, 1, 1), seed, np.int64)
        inputs[to] = np.full((1, 1, 1, 1), offset, np.int64)
        kw = dict(dropout=(p, ts, to))
    elif form == "tuple-ints":
        kw = dict(dropout=(p, seed, offset))
    else:
        kw = dict(dropout=p, dropout_seed=seed, dropout_offset=offset)
    o, stats = g.sdpa(tq, tk, tv, generate_stats=True, **kw)
    out_o, out_stats = run(g, inputs, [o.set_output(True), stats.set_output(True)])
    keep = ref.dropout_keep((B, HQ, SQ, SKV), p, seed, offset)
    assert 0.5 < keep.mean() < 0.9
    want_o, want_stats, _ = ref.attention(q, k, v, SCALE, ref.visible(B, SQ, SKV),
                                          drop=keep / (1 - p))
    close(out_o, want_o, rtol=1e-4, atol=1e-5)
    close(out_stats, want_stats, rtol=1e-4, atol=1e-5)  # stats are those before dropout


def test_dropout_given_mask(qkv, rng):
    q, k, v = qkv
    mask = (rng.random((B, HQ, SQ, SKV)) > 0.25).astype(np.float32)
    g = graph()
    tq, tk, tv, tm = (g.tensor_like(a) for a in (q, k, v, mask))
    o, _ = g.sdpa(tq, tk, tv, dropout=(tm, 1 / 0.75))  # a float scale becomes a scalar
    (out,) = run(g, {tq: q, tk: k, tv: v, tm: mask}, [o.set_output(True)])
    want = ref.attention(q, k, v, SCALE, ref.visible(B, SQ, SKV), drop=mask / 0.75)[0]
    close(out, want, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------
# backward
# ---------------------------------------------------------------------------

def _backward_case(rng, q, k, v, fwd_inputs, options, dbias=None):
    """Forward then backward on the CPU; returns (dq, dk, dv[, dbias]) arrays and do."""
    do = rng.standard_normal((B, HQ, SQ, D)).astype(np.float32)
    g = graph()
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    extra = {name: g.tensor_like(a) for name, a in fwd_inputs.items()}
    o, stats = g.sdpa(tq, tk, tv, generate_stats=True, **options(extra, g))
    inputs = {tq: q, tk: k, tv: v}
    inputs.update({extra[n]: a for n, a in fwd_inputs.items()})
    out_o, out_stats = run(g, inputs, [o.set_output(True), stats.set_output(True)])

    gb = graph()
    tq, tk, tv, to, tdo, ts = (gb.tensor_like(a) for a in (q, k, v, out_o, do, out_stats))
    extra = {name: gb.tensor_like(a) for name, a in fwd_inputs.items()}
    inputs = {tq: q, tk: k, tv: v, to: out_o, tdo: do, ts: out_stats}
    inputs.update({extra[n]: a for n, a in fwd_inputs.items()})
    kw = options(extra, gb)
    if dbias == "placeholder":
        placeholder = gb.tensor(dim=[1, HQ, SQ, SKV], name="dBias", uid=99)
        kw["dBias"] = placeholder
    elif dbias:
        kw["dBias"] = True
    grads = gb.sdpa_backward(tq, tk, tv, to, tdo, ts, **kw)
    outputs = [t.set_output(True) for t in grads]
    if dbias == "placeholder":
        assert len(grads) == 3
        assert placeholder.get_uid() == 99 and placeholder.get_name() == "dBias"
        assert placeholder.get_is_output() and placeholder.get_kind() == cudnnfe.tensor_kind.OUTPUT
        outputs.append(placeholder)
    return run(gb, inputs, outputs), do


@pytest.mark.parametrize("case", ["padding-band", "alibi-causal", "bias-dbias",
                                  "bias-dbias-placeholder", "dropout-drawn", "dropout-mask"])
def test_backward_with_options(rng, qkv, case):
    q, k, v = qkv
    seq_q = np.array([6, 4], np.int32).reshape(B, 1, 1, 1)
    seq_kv = np.array([9, 5], np.int32).reshape(B, 1, 1, 1)
    bias = rng.standard_normal((1, HQ, SQ, SKV)).astype(np.float32)
    dmask = (rng.random((B, HQ, SQ, SKV)) > 0.2).astype(np.float32) / np.float32(0.8)
    mask, kw_ref, fwd_inputs, dbias = ref.visible(B, SQ, SKV), {}, {}, None
    if case == "padding-band":
        fwd_inputs = {"seq_len_q": seq_q, "seq_len_kv": seq_kv}

        def options(t, g):
            return dict(use_padding_mask=True, seq_len_q=t["seq_len_q"],
                        seq_len_kv=t["seq_len_kv"], diagonal_band_left_bound=3,
                        diagonal_band_right_bound=2, attn_scale=0.4)
        mask = ref.visible(B, SQ, SKV, seq_q, seq_kv, left=3, right=2)
        scale = 0.4
    elif case == "alibi-causal":
        def options(t, g):
            return dict(use_alibi_mask=True, use_causal_mask=True)
        mask, kw_ref, scale = ref.visible(B, SQ, SKV, right=0), dict(alibi=True), SCALE
    elif case.startswith("bias-dbias"):
        fwd_inputs = {"bias": bias}

        def options(t, g):
            return dict(bias=t["bias"], use_causal_mask=True)
        mask, kw_ref, scale = ref.visible(B, SQ, SKV, right=0), dict(bias=bias), SCALE
        dbias = "placeholder" if case.endswith("placeholder") else True
    elif case == "dropout-drawn":
        def options(t, g):
            return dict(dropout=(0.25, 5, 9))
        keep = ref.dropout_keep((B, HQ, SQ, SKV), 0.25, 5, 9)
        kw_ref, scale = dict(drop=keep / 0.75), SCALE
    else:
        fwd_inputs = {"mask": dmask}

        def options(t, g):
            # the backward takes (mask, scale, scale_inv); the forward ignores scale_inv
            return dict(dropout=(t["mask"], 1.0, 1.0))
        kw_ref, scale = dict(drop=dmask), SCALE
    outs, do = _backward_case(rng, q, k, v, fwd_inputs, options, dbias)
    want = ref.attention_backward(q, k, v, do, scale, mask, **kw_ref)
    for got, expected in zip(outs, want):
        close(got, expected, rtol=1e-3, atol=1e-4)
    if dbias:
        assert len(outs) == 4


def test_dbias_placeholder_must_be_an_unread_input(rng):
    g = graph()
    x = [g.tensor(dim=[1, 2, 4, 8]) for _ in range(5)]
    st = g.tensor(dim=[1, 2, 4, 1])
    bias = g.tensor(dim=[1, 2, 4, 4])
    used = g.tensor(dim=[1, 2, 4, 4])
    g.relu(used)
    with pytest.raises(ValueError, match="dBias .* is read by"):
        g.sdpa_backward(*x, st, bias=bias, dBias=used)
    with pytest.raises(TypeError, match="dBias"):
        g.sdpa_backward(*x, st, bias=bias, dBias=np.zeros((1, 2, 4, 4), np.float32))
    with pytest.raises(cudnnfe.InvalidGraphError, match="dbias is asked for but the node has no"):
        g.sdpa_backward(*x, st, dBias=True)
    assert g.get_node_count() == 1  # the relu only


# ---------------------------------------------------------------------------
# FP8 attention
# ---------------------------------------------------------------------------

E4M3 = pytest.importorskip("ml_dtypes").float8_e4m3fn


def test_sdpa_fp8_forward(rng):
    b, h, s, d = 1, 2, 16, 16
    q8, k8, v8 = (rng.standard_normal((b, h, s, d)).astype(E4M3) for _ in range(3))
    scales = dict(descale_q=0.5, descale_k=0.5, descale_v=1.0, descale_s=1 / 224.0,
                  scale_s=224.0, scale_o=1.0)
    g = cudnnfe.pygraph(io_data_type=data_type.FP8_E4M3, intermediate_data_type=data_type.FLOAT,
                        compute_data_type=data_type.FLOAT, target=cudnnfe.target.CPU_REFERENCE)
    tq, tk, tv = g.tensor_like(q8), g.tensor_like(k8), g.tensor_like(v8)
    descales = {n: g.tensor(dim=[1, 1, 1, 1], data_type=data_type.FLOAT, name=n)
                for n in scales}
    o, stats, amax_s, amax_o = g.sdpa_fp8(tq, tk, tv, *descales.values(), generate_stats=True,
                                          attn_scale=0.25, use_causal_mask=True, name="fp8")
    outs = run(g, dict({tq: q8, tk: k8, tv: v8},
                       **{n: np.full((1, 1, 1, 1), val, np.float32) for n, val in scales.items()}),
               [o.set_output(True), stats.set_output(True), amax_s.set_output(True),
                amax_o.set_output(True)])
    want_o, want_stats, want_amax_s, want_amax_o, _ = ref.sdpa_fp8(
        q8, k8, v8, 0.5, 0.5, 1.0, 1 / 224.0, 224.0, 1.0, 0.25, True)
    assert outs[0].dtype == E4M3
    close(outs[0].astype(np.float64), want_o, rtol=0.13, atol=0.02)  # one E4M3 step
    close(outs[1], want_stats, rtol=1e-4, atol=1e-4)
    close(outs[2], want_amax_s, rtol=1e-4)
    close(outs[3], want_amax_o, rtol=2e-2)


def test_sdpa_fp8_backward(rng):
    b, h, s, d = 1, 2, 16, 16
    q8, k8, v8, do8 = (rng.standard_normal((b, h, s, d)).astype(E4M3) for _ in range(4))
    _, stats, _, _, o_prime = ref.sdpa_fp8(q8, k8, v8, 1, 1, 1, 1 / 64.0, 64.0, 1.0, 0.25, False)
    o8 = o_prime.astype(E4M3)
    dsc = dict(q=1.0, k=1.0, v=1.0, o=1.0, do=1.0, s=1 / 64.0, dp=1 / 16.0)
    sc = dict(s=64.0, dq=1.0, dk=1.0, dv=1.0, dp=16.0)
    g = cudnnfe.pygraph(io_data_type=data_type.FP8_E4M3, intermediate_data_type=data_type.FLOAT,
                        compute_data_type=data_type.FLOAT, target=cudnnfe.target.CPU_REFERENCE)
    ts = [g.tensor_like(a) for a in (q8, k8, v8, o8, do8)]
    tstats = g.tensor_like(stats.astype(np.float32))
    # Python floats for the descales and scales become FLOAT scalars
    outs = g.sdpa_fp8_backward(*ts, tstats, dsc["q"], dsc["k"], dsc["v"], dsc["o"], dsc["do"],
                               dsc["s"], dsc["dp"], sc["s"], sc["dq"], sc["dk"], sc["dv"],
                               sc["dp"], attn_scale=0.25)
    assert len(outs) == 7
    got = run(g, dict(zip(ts + [tstats], [q8, k8, v8, o8, do8, stats.astype(np.float32)])),
              [t.set_output(True) for t in outs])
    want = ref.sdpa_fp8_backward(q8, k8, v8, o8, do8, stats, dsc, sc, 0.25, False)
    for i in range(3):
        close(got[i].astype(np.float64), want[i], rtol=0.13, atol=0.05)
    for i in range(3, 7):
        close(got[i], want[i], rtol=5e-2, atol=1e-3)


# ---------------------------------------------------------------------------
# bad inputs
# ---------------------------------------------------------------------------

@pytest.fixture
def g4():
    g = graph()
    q = g.tensor(dim=[1, 2, 4, 8], name="q")
    return g, q


def test_sdpa_writes_its_softmax_dumps_into_unread_caller_tensors(g4):
    g, q = g4
    # score_max / score_sum_exp / rng_dump become the node's outputs: a tensor the node
    # reads cannot be one (tests/test_cpu_attention_frontend_parity.py checks the values).
    with pytest.raises(cudnnfe.InvalidArgumentError, match="is read by"):
        g.sdpa(q, q, q, score_max=q)
    with pytest.raises(TypeError, match="rng_dump must be a cudnnfe.Tensor"):
        g.sdpa(q, q, q, rng_dump="mask")
    assert g.get_node_count() == 0
    g.sdpa(q, q, q, implementation="AUTO", unfuse_fma=True)  # taken (ignored off unified)


def test_sdpa_option_errors_carry_the_library_message(g4):
    g, q = g4
    with pytest.raises(cudnnfe.InvalidGraphError, match="window_left") as info:
        g.sdpa(q, q, q, diagonal_band_left_bound=0, name="attn")
    assert 'sdpa "attn"' in info.value.message and info.value.status_name.endswith("GRAPH")
    with pytest.raises(cudnnfe.InvalidGraphError, match="seq_len"):
        g.sdpa(q, q, q, use_padding_mask=True)
    with pytest.raises(cudnnfe.InvalidGraphError, match="dropout"):
        g.sdpa(q, q, q, dropout=(1.5, 1, 2))
    with pytest.raises(ValueError, match="same bound"):
        g.sdpa(q, q, q, sliding_window_length=2, diagonal_band_left_bound=2)
    with pytest.raises(ValueError, match="attn_bias"):
        g.sdpa(q, q, q, bias=q, attn_bias=q)
    with pytest.raises(TypeError, match="dropout must be a tuple"):
        g.sdpa(q, q, q, dropout=(q,))
    with pytest.raises(TypeError, match="dropout must be a tuple"):
        g.sdpa(q, q, q, dropout="0.1")
    with pytest.raises(ValueError, match="dropout_seed"):
        g.sdpa(q, q, q, dropout_seed=1)
    with pytest.raises(TypeError, match="diagonal_band_left_bound"):
        g.sdpa(q, q, q, diagonal_band_left_bound=2.5)
    with pytest.raises(ValueError, match="diagonal_alignment"):
        g.sdpa(q, q, q, diagonal_alignment="MIDDLE")
    with pytest.raises(ValueError, match="2\\*\\*53"):
        g.sdpa(q, q, q, dropout=(0.1, 2**60, 0))
    with pytest.raises(TypeError, match="unexpected"):
        g.sdpa(q, q, q, sliding_window=3)  # sdpa_fp8's spelling, not sdpa's


def test_sdpa_fp8_refuses_what_the_abi_lacks():
    scales = [1.0] * 6
    # cudnn-frontend refuses bias in FP8 attention too ("SDPA FP8 does not support bias");
    # every refusal comes from validate(), where cudnn-frontend's tests skip on it.
    for kw, match in ((dict(bias=True), r'^f: bias .*FP8 attention \(sdpa_fp8\): '
                                        r'cudnn-frontend refuses it too'),
                      (dict(attn_scale=True), "attn_scale as a tensor"),
                      (dict(compute_data_type=data_type.HALF), "FLOAT")):
        g = graph(io_data_type=data_type.FP8_E4M3)
        q = g.tensor(dim=[1, 2, 16, 16])
        kw = {k: (q if v is True else v) for k, v in kw.items()}
        o, _, amax_s, amax_o = g.sdpa_fp8(q, q, q, *scales, generate_stats=False, name="f",
                                          **kw)
        for t in (o, amax_s, amax_o):
            t.set_output(True)
        with pytest.raises(cudnnfe.NotOfferedError, match=match):
            g.validate()
    g = graph(io_data_type=data_type.FP8_E4M3)
    q = g.tensor(dim=[1, 2, 16, 16])
    # right_bound=0 with TOP_LEFT alignment is the causal mask the ABI has
    o, stats, amax_s, amax_o = g.sdpa_fp8(q, q, q, *scales, right_bound=0, is_inference=True)
    assert stats is None and amax_s.get_dim() == [1, 1, 1, 1]
    with pytest.raises(cudnnfe.InvalidGraphError, match="FP8"):
        h = graph()
        x = h.tensor(dim=[1, 2, 16, 16])  # FLOAT q
        h.sdpa_fp8(x, x, x, *scales, name="f")
        h.validate()


def _fp8_forward_loop(q8, k8, v8, sc, scale, visible, drop=None):
    """FP8 attention forward, one query row at a time (independent of numpy_ref_ops):
    dequantize, softmax over the visible columns, P [times drop = (mask, scale)] quantized
    after scale_s, O' = P8 V descaled, O quantized after scale_o. Returns (O as float64,
    stats, amax_s, amax_o)."""
    ftype = q8.dtype
    q, k, v = (a.astype(np.float64) for a in (q8, k8, v8))
    b, h_q, s_q, _ = q.shape
    group = h_q // k.shape[1]
    o = np.zeros((b, h_q, s_q, v.shape[3]))
    stats = np.full((b, h_q, s_q, 1), -np.inf)
    amax_s = 0.0
    for n in range(b):
        for h in range(h_q):
            kh, vh = k[n, h // group], v[n, h // group]
            for i in range(s_q):
                cols = np.flatnonzero(visible(i))
                if cols.size == 0:
                    continue
                s = kh[cols] @ q[n, h, i] * scale * sc["descale_q"] * sc["descale_k"]
                m = s.max()
                e = np.exp(s - m)
                p = e / e.sum()
                if drop is not None:
                    p = p * drop[0][n, h, i, cols] * drop[1]
                stats[n, h, i, 0] = m + np.log(e.sum())
                amax_s = max(amax_s, p.max())
                p8 = (p * sc["scale_s"]).astype(ftype).astype(np.float64)
                o[n, h, i] = p8 @ vh[cols] * sc["descale_s"] * sc["descale_v"]
    o8 = (o * sc["scale_o"]).astype(ftype).astype(np.float64)
    return o8, stats, amax_s, np.abs(o).max()


def _fp8_graph(q8, k8, v8):
    g = cudnnfe.pygraph(io_data_type=data_type.FP8_E4M3, intermediate_data_type=data_type.FLOAT,
                        compute_data_type=data_type.FLOAT, target=cudnnfe.target.CPU_REFERENCE)
    return g, [g.tensor_like(a) for a in (q8, k8, v8)]


_FP8_SCALES = dict(descale_q=1 / 4.0, descale_k=1 / 4.0, descale_v=1 / 8.0, descale_s=1 / 256.0,
                   scale_s=256.0, scale_o=4.0)


def _run_fp8(g, ts, arrays, outs):
    return run(g, dict(zip(ts, arrays)), [t.set_output(True) for t in outs if t is not None])


def test_sdpa_fp8_sliding_window_matches_a_numpy_loop(rng):
    """cudnn-frontend's FP8 sliding-window case (d_qk = 192, d_v = 128, h_q = 7, h_k = h_v = 1,
    causal with a left bound of 227), shortened to s = 260: the call that used to raise
    NotOfferedError."""
    s_len, left = 260, 227
    q8 = (rng.standard_normal((1, 7, s_len, 192)) * 4).astype(E4M3)
    k8 = (rng.standard_normal((1, 1, s_len, 192)) * 4).astype(E4M3)
    v8 = (rng.standard_normal((1, 1, s_len, 128)) * 8).astype(E4M3)
    g, ts = _fp8_graph(q8, k8, v8)
    o, stats, amax_s, amax_o = g.sdpa_fp8(*ts, *_FP8_SCALES.values(), generate_stats=True,
                                          attn_scale=0.125, left_bound=left, right_bound=0,
                                          diagonal_alignment=diagonal_alignment.TOP_LEFT,
                                          name="swa")
    got = _run_fp8(g, ts, (q8, k8, v8), (o, stats, amax_s, amax_o))
    j = np.arange(s_len)
    want = _fp8_forward_loop(q8, k8, v8, _FP8_SCALES, 0.125,
                             lambda i: (j > i - left) & (j <= i))
    assert got[0].dtype == E4M3
    close(got[0].astype(np.float64), want[0], rtol=0.13, atol=0.02)  # one E4M3 step
    close(got[1], want[1], rtol=1e-5, atol=1e-5)
    close(got[2], want[2], rtol=1e-5)
    close(got[3], want[3], rtol=1e-5)
    # The window matters: without it the last rows differ.
    g2, ts2 = _fp8_graph(q8, k8, v8)
    o2, st2, a2, b2 = g2.sdpa_fp8(*ts2, *_FP8_SCALES.values(), generate_stats=True,
                                  attn_scale=0.125, use_causal_mask=True)
    causal = _run_fp8(g2, ts2, (q8, k8, v8), (o2, st2, a2, b2))
    assert np.abs(causal[1][0, :, left:] - got[1][0, :, left:]).max() > 1e-3


def test_sdpa_fp8_bottom_right_band_and_spellings(rng):
    """use_causal_mask_bottom_right is right_bound=0 with BOTTOM_RIGHT (cudnn-frontend's mapping),
    and sliding_window is left_bound; a two-sided bottom-right band against the loop."""
    q8 = rng.standard_normal((2, 4, 6, 16)).astype(E4M3)
    k8, v8 = (rng.standard_normal((2, 2, 11, 16)).astype(E4M3) for _ in range(2))

    def forward(**kw):
        g, ts = _fp8_graph(q8, k8, v8)
        outs = g.sdpa_fp8(*ts, *_FP8_SCALES.values(), generate_stats=True, **kw)
        return _run_fp8(g, ts, (q8, k8, v8), outs)

    a = forward(use_causal_mask_bottom_right=True, sliding_window=3)
    b = forward(right_bound=0, left_bound=3, diagonal_alignment=diagonal_alignment.BOTTOM_RIGHT)
    for x, y in zip(a, b):
        assert np.array_equal(x.astype(np.float64), y.astype(np.float64))
    got = forward(left_bound=3, right_bound=2, diagonal_alignment="BOTTOM_RIGHT")
    j = np.arange(11)
    want = _fp8_forward_loop(q8, k8, v8, _FP8_SCALES, 0.25,
                             lambda i: (j > i + 5 - 3) & (j <= i + 5 + 2))
    close(got[0].astype(np.float64), want[0], rtol=0.13, atol=0.02)
    close(got[1], want[1], rtol=1e-5, atol=1e-5)


def test_sdpa_fp8_backward_with_a_band(rng):
    b, h, s, d = 1, 2, 16, 16
    q8, k8, v8, do8 = (rng.standard_normal((b, h, s, d)).astype(E4M3) for _ in range(4))
    mask = ref.visible(b, s, s, left=4, right=1)
    _, stats, _, _, o_prime = ref.sdpa_fp8(q8, k8, v8, 1, 1, 1, 1 / 64.0, 64.0, 1.0, 0.25, mask)
    o8 = o_prime.astype(E4M3)
    dsc = dict(q=1.0, k=1.0, v=1.0, o=1.0, do=1.0, s=1 / 64.0, dp=1 / 16.0)
    sc = dict(s=64.0, dq=1.0, dk=1.0, dv=1.0, dp=16.0)
    g = cudnnfe.pygraph(io_data_type=data_type.FP8_E4M3, intermediate_data_type=data_type.FLOAT,
                        compute_data_type=data_type.FLOAT, target=cudnnfe.target.CPU_REFERENCE)
    ts = [g.tensor_like(a) for a in (q8, k8, v8, o8, do8)]
    tstats = g.tensor_like(stats.astype(np.float32))
    outs = g.sdpa_fp8_backward(*ts, tstats, dsc["q"], dsc["k"], dsc["v"], dsc["o"], dsc["do"],
                               dsc["s"], dsc["dp"], sc["s"], sc["dq"], sc["dk"], sc["dv"],
                               sc["dp"], attn_scale=0.25, left_bound=4, right_bound=1)
    got = run(g, dict(zip(ts + [tstats], [q8, k8, v8, o8, do8, stats.astype(np.float32)])),
              [t.set_output(True) for t in outs])
    want = ref.sdpa_fp8_backward(q8, k8, v8, o8, do8, stats, dsc, sc, 0.25, mask)
    for i in range(3):
        close(got[i].astype(np.float64), want[i], rtol=0.13, atol=0.05)
    for i in range(3, 7):
        close(got[i], want[i], rtol=5e-2, atol=1e-3)


def test_sdpa_fp8_band_errors():
    g = graph(io_data_type=data_type.FP8_E4M3)
    q = g.tensor(dim=[1, 2, 16, 16])
    scales = [1.0] * 6
    # Each call its own name: float scales become scalars named after the node, and a call
    # the library refuses leaves them in the graph.
    with pytest.raises(cudnnfe.InvalidGraphError, match="window_left is -3") as info:
        g.sdpa_fp8(q, q, q, *scales, is_inference=True, left_bound=-3, name="f")
    assert 'sdpa_fp8 "f"' in info.value.message and ">= 1" in info.value.message
    with pytest.raises(cudnnfe.InvalidGraphError, match="window_right is -2"):
        g.sdpa_fp8(q, q, q, *scales, is_inference=True, right_bound=-2, name="f2")
    with pytest.raises(cudnnfe.InvalidGraphError, match="BOTTOM_RIGHT"):
        g.sdpa_fp8(q, q, q, *scales, is_inference=True, use_causal_mask=True,
                   diagonal_alignment=diagonal_alignment.BOTTOM_RIGHT, name="f3")
    with pytest.raises(ValueError, match="same bound"):
        g.sdpa_fp8(q, q, q, *scales, is_inference=True, sliding_window=2, left_bound=2)
    with pytest.raises(ValueError, match="right_bound"):
        g.sdpa_fp8(q, q, q, *scales, is_inference=True, use_causal_mask=True, right_bound=0)
    with pytest.raises(ValueError, match="both"):
        g.sdpa_fp8(q, q, q, *scales, is_inference=True, use_causal_mask=True,
                   use_causal_mask_bottom_right=True)
    with pytest.raises(TypeError, match="left_bound"):
        g.sdpa_fp8(q, q, q, *scales, is_inference=True, left_bound=2.5)
    with pytest.raises(cudnnfe.InvalidGraphError, match="window_left is 0"):
        g.sdpa_fp8_backward(q, q, q, q, q, g.tensor(dim=[1, 2, 16, 1]), *([1.0] * 12),
                            left_bound=0, name="b")
    assert g.get_node_count() == 0


def test_numpy_scalars_are_numbers(qkv):
    q, k, v = qkv
    o, _ = _forward(q, k, v, attn_scale=np.float32(0.5), dropout=(np.float64(0.0), 3, 4),
                    diagonal_band_left_bound=np.int64(3), use_causal_mask=True)
    want = ref.attention(q, k, v, 0.5, ref.visible(B, SQ, SKV, left=3, right=0))[0]
    close(o, want, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------
# sink token, block mask, implementation (issue 16; docs/attention.md)
# ---------------------------------------------------------------------------

def _sink_block_reference(q, k, v, scale, sink=None, keep=None):
    """NumPy: s = scale q.k (-inf where `keep` is False); m = max(max s, sink);
    P = exp(s - m) / (sum exp(s - m) + exp(sink - m)); stats = m + log(that sum)."""
    group = q.shape[1] // k.shape[1]
    k = np.repeat(k, group, axis=1).astype(np.float64)
    v = np.repeat(v, group, axis=1).astype(np.float64)
    s = scale * np.einsum("bhid,bhjd->bhij", q.astype(np.float64), k)
    if keep is not None:
        s = np.where(keep, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    if sink is not None:
        m = np.maximum(m, sink.astype(np.float64))
    e = np.exp(s - m)
    z = e.sum(axis=-1, keepdims=True)
    if sink is not None:
        z = z + np.exp(sink.astype(np.float64) - m)
    return np.einsum("bhij,bhjd->bhid", e / z, v), m + np.log(z)


def test_sink_token(qkv):
    q, k, v = qkv
    sink = np.linspace(-1.0, 2.0, HQ).astype(np.float32).reshape(1, HQ, 1, 1)
    o, stats = _forward(q, k, v, {"sink_token": sink}, attn_scale=SCALE)
    want_o, want_stats = _sink_block_reference(q, k, v, SCALE, sink=sink)
    close(o, want_o, rtol=1e-4, atol=1e-5)
    close(stats, want_stats, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("implementation", [None, "AUTO", cudnnfe.attention_implementation.UNIFIED])
def test_block_mask(rng, implementation):
    sq, skv = 130, 260  # two query tile rows, three key tiles
    q = rng.standard_normal((1, 2, sq, 4)).astype(np.float32)
    k = rng.standard_normal((1, 2, skv, 4)).astype(np.float32)
    v = rng.standard_normal((1, 2, skv, 4)).astype(np.float32)
    bits = np.array([0b101, 0b011, 0b110, 0b100], np.uint8).reshape(1, 2, 2, 1)
    o, stats = _forward(q, k, v, {"block_mask": bits}, attn_scale=0.5,
                        implementation=implementation)
    tile = (bits[..., None] >> np.arange(8)) & 1  # [1, 2, 2, 1, 8]
    tile = tile.reshape(1, 2, 2, 8)
    keep = np.repeat(np.repeat(tile, 128, axis=2), 128, axis=3)[:, :, :sq, :skv].astype(bool)
    want_o, want_stats = _sink_block_reference(q, k, v, 0.5, keep=keep)
    close(o, want_o, rtol=1e-4, atol=1e-5)
    close(stats, want_stats, rtol=1e-4, atol=1e-5)


def test_block_mask_refused_with_composite(g4):
    g, q = g4
    bm = g.tensor(dim=[1, 2, 1, 1], data_type=data_type.UINT8, name="bm")
    with pytest.raises(cudnnfe.InvalidGraphError, match="block_mask needs the UNIFIED"):
        g.sdpa(q, q, q, block_mask=bm, implementation="COMPOSITE")
    with pytest.raises((ValueError, TypeError), match="implementation"):
        g.sdpa(q, q, q, implementation="FASTEST")


def test_sdpa_fp8_padding_equals_the_truncated_batches(rng):
    """use_padding_mask with seq_len_q / seq_len_kv (cudnn-frontend's keywords): each batch's
    valid rows equal, bit for bit, a graph run on that batch cut to its lengths; padding rows
    are 0."""
    q8 = rng.standard_normal((2, 2, 8, 16)).astype(E4M3)
    k8, v8 = (rng.standard_normal((2, 2, 10, 16)).astype(E4M3) for _ in range(2))
    lq = np.array([8, 5], np.int32).reshape(2, 1, 1, 1)
    lkv = np.array([10, 6], np.int32).reshape(2, 1, 1, 1)
    g, ts = _fp8_graph(q8, k8, v8)
    tq, tkv = g.tensor_like(lq), g.tensor_like(lkv)
    outs = g.sdpa_fp8(*ts, *_FP8_SCALES.values(), generate_stats=True, use_causal_mask=True,
                      use_padding_mask=True, seq_len_q=tq, seq_len_kv=tkv)
    got = run(g, dict(zip(ts + [tq, tkv], (q8, k8, v8, lq, lkv))),
              [t.set_output(True) for t in outs])
    for n in range(2):
        sq, skv = int(lq[n, 0, 0, 0]), int(lkv[n, 0, 0, 0])
        parts = (q8[n:n + 1, :, :sq], k8[n:n + 1, :, :skv], v8[n:n + 1, :, :skv])
        g1, ts1 = _fp8_graph(*parts)
        one = _run_fp8(g1, ts1, parts, g1.sdpa_fp8(*ts1, *_FP8_SCALES.values(),
                                                   generate_stats=True, use_causal_mask=True))
        assert np.array_equal(got[0][n, :, :sq].astype(np.float64), one[0][0].astype(np.float64))
        close(got[1][n, :, :sq], one[1][0], rtol=1e-6, atol=1e-6)
        assert not got[0][n, :, sq:].astype(np.float64).any()
        assert np.isneginf(got[1][n, :, sq:]).all()


def test_sdpa_fp8_dropout_mask_and_alibi_keywords(rng):
    """dropout=(mask, scale) against the loop; use_alibi_mask changes the result (its values
    are checked against loops in tests/test_cpu_fp8.cpp)."""
    q8, k8, v8 = (rng.standard_normal((1, 2, 8, 16)).astype(E4M3) for _ in range(3))
    mask = (rng.random((1, 2, 8, 8)) < 0.75).astype(np.float32)
    g, ts = _fp8_graph(q8, k8, v8)
    tm = g.tensor_like(mask)
    outs = g.sdpa_fp8(*ts, *_FP8_SCALES.values(), generate_stats=True,
                      dropout=(tm, 1 / 0.75))
    got = run(g, dict(zip(ts + [tm], (q8, k8, v8, mask))), [t.set_output(True) for t in outs])
    want = _fp8_forward_loop(q8, k8, v8, _FP8_SCALES, 0.25, lambda i: np.ones(8, bool),
                             drop=(mask, np.float32(1 / 0.75)))
    close(got[0].astype(np.float64), want[0], rtol=0.13, atol=0.02)
    close(got[2], want[2], rtol=1e-5)
    g2, ts2 = _fp8_graph(q8, k8, v8)
    alibi = g2.sdpa_fp8(*ts2, *_FP8_SCALES.values(), generate_stats=True, use_causal_mask=True,
                        use_alibi_mask=True)
    g3, ts3 = _fp8_graph(q8, k8, v8)
    plain = g3.sdpa_fp8(*ts3, *_FP8_SCALES.values(), generate_stats=True, use_causal_mask=True)
    a = _run_fp8(g2, ts2, (q8, k8, v8), alibi)
    b = _run_fp8(g3, ts3, (q8, k8, v8), plain)
    assert np.abs(a[1] - b[1]).max() > 1e-3


def test_sdpa_fp8_backward_padding_and_dropout_keywords(rng):
    """sdpa_fp8_backward takes use_padding_mask, seq_len_q, seq_len_kv and
    dropout=(mask, scale, scale_inv); gradients of padding rows and keys are 0, and a mask
    of ones with scales 1 gives the gradients without dropout."""
    b, h, s, d = 2, 2, 8, 16
    q8, k8, v8, do8 = (rng.standard_normal((b, h, s, d)).astype(E4M3) for _ in range(4))
    _, stats, _, _, o_prime = ref.sdpa_fp8(q8, k8, v8, 1, 1, 1, 1 / 64.0, 64.0, 1.0, 0.25, False)
    o8 = o_prime.astype(E4M3)
    lq = np.array([8, 5], np.int32).reshape(2, 1, 1, 1)
    lkv = np.array([8, 3], np.int32).reshape(2, 1, 1, 1)
    ones = np.ones((b, h, s, s), np.float32)
    scales = [1.0, 1.0, 1.0, 1.0, 1.0, 1 / 64.0, 1 / 16.0, 64.0, 1.0, 1.0, 1.0, 16.0]

    def backward(**kw):
        g = cudnnfe.pygraph(io_data_type=data_type.FP8_E4M3,
                            intermediate_data_type=data_type.FLOAT,
                            compute_data_type=data_type.FLOAT,
                            target=cudnnfe.target.CPU_REFERENCE)
        ts = [g.tensor_like(a) for a in (q8, k8, v8, o8, do8, stats.astype(np.float32))]
        feeds = dict(zip(ts, [q8, k8, v8, o8, do8, stats.astype(np.float32)]))
        extra = {}
        if kw.pop("padded", False):
            extra["seq_len_q"], extra["seq_len_kv"] = g.tensor_like(lq), g.tensor_like(lkv)
            feeds[extra["seq_len_q"]], feeds[extra["seq_len_kv"]] = lq, lkv
            extra["use_padding_mask"] = True
        if kw.pop("dropped", False):
            tm = g.tensor_like(ones)
            feeds[tm] = ones
            extra["dropout"] = (tm, 1.0, 1.0)
        outs = g.sdpa_fp8_backward(*ts, *scales, attn_scale=0.25, **extra)
        return run(g, feeds, [t.set_output(True) for t in outs])

    padded = backward(padded=True)
    assert not padded[0][1, :, 5:].astype(np.float64).any()  # dQ past seq_len_q
    assert not padded[1][1, :, 3:].astype(np.float64).any()  # dK past seq_len_kv
    assert not padded[2][1, :, 3:].astype(np.float64).any()  # dV
    assert padded[0][1, :, :5].astype(np.float64).any()
    plain, dropped = backward(), backward(dropped=True)
    for x, y in zip(plain, dropped):
        assert np.array_equal(np.asarray(x, np.float64), np.asarray(y, np.float64))


def test_sdpa_fp8_sink_token_keyword(rng):
    """sink_token (cudnn-frontend's keyword): a sink of -inf changes nothing, bit for bit; a
    large one takes the softmax mass (stats rise to about the sink)."""
    q8, k8, v8 = (rng.standard_normal((1, 2, 8, 16)).astype(E4M3) for _ in range(3))

    def forward(sink):
        g, ts = _fp8_graph(q8, k8, v8)
        feeds = dict(zip(ts, (q8, k8, v8)))
        kw = {}
        if sink is not None:
            kw["sink_token"] = g.tensor_like(sink)
            feeds[kw["sink_token"]] = sink
        outs = g.sdpa_fp8(*ts, *_FP8_SCALES.values(), generate_stats=True, **kw)
        return run(g, feeds, [t.set_output(True) for t in outs])

    plain = forward(None)
    none = forward(np.full((1, 2, 1, 1), -np.inf, np.float32))
    for x, y in zip(plain, none):
        assert np.array_equal(np.asarray(x, np.float64), np.asarray(y, np.float64))
    big = forward(np.full((1, 2, 1, 1), 30.0, np.float32))
    close(big[1], np.full_like(big[1], 30.0), rtol=0, atol=1e-3)
