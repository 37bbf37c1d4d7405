"""Ragged (packed) attention outputs with their own offsets, padded outputs of ragged inputs,
and packed page tables, as cudnn-frontend's samples 52 and 53 and its THD / chunked-prefill
tests use them: checked on the CPU reference against plain NumPy loops (docs/attention.md)."""
import numpy as np
import pytest

import cudnnfe
from cudnnfe import data_type
from cpu_helpers import graph

SCALE = 0.4


def _attention_loops(q, k, v, seq_q, seq_kv):
    """Padded attention by loops: row i of batch n sees keys j < seq_kv[n]; rows i >=
    seq_q[n] are 0. q [b, h, s_q, d], k/v [b, h, s_kv, d]."""
    b, h, s_q, _ = q.shape
    out = np.zeros((b, h, s_q, v.shape[3]))
    for n in range(b):
        for hh in range(h):
            for i in range(seq_q[n]):
                scores = [SCALE * float(np.dot(q[n, hh, i], k[n, hh, j]))
                          for j in range(seq_kv[n])]
                m = max(scores)
                weights = [np.exp(s - m) for s in scores]
                total = sum(weights)
                for j, w in enumerate(weights):
                    out[n, hh, i] += w / total * v[n, hh, j]
    return out


def _thd(padded, lengths, gap=0):
    """THD storage [tokens, h, d] of padded [b, h, s, d], with `gap` unused tokens after each
    sequence; returns (flat buffer, [b, h, s, d] view at batch stride 0, offsets)."""
    b, h, s, d = padded.shape
    starts, pos = [], 0
    for n in range(b):
        starts.append(pos)
        pos += (lengths[n] + gap) * h * d
    flat = np.full(pos + s * h * d, np.nan, np.float32)
    for n in range(b):
        rows = padded[n, :, :lengths[n], :].transpose(1, 0, 2).reshape(-1)
        flat[starts[n]:starts[n] + rows.size] = rows
    offsets = np.array(starts + [pos], np.int64).reshape(b + 1, 1, 1, 1)
    view = np.lib.stride_tricks.as_strided(flat, (b, h, s, d), [0, d * 4, h * d * 4, 4])
    return flat, view, offsets


B, H, SQ, SKV, D = 3, 2, 5, 6, 4
LQ, LKV = [5, 2, 3], [6, 3, 1]


@pytest.fixture
def data():
    rng = np.random.default_rng(7)
    q, k, v = (rng.standard_normal((B, H, s, D)).astype(np.float32) for s in (SQ, SKV, SKV))
    seq_q = np.array(LQ, np.int32).reshape(B, 1, 1, 1)
    seq_kv = np.array(LKV, np.int32).reshape(B, 1, 1, 1)
    return q, k, v, seq_q, seq_kv


def _ragged_q_graph(seq_q, seq_kv, q_offsets):
    g = graph()
    tq = g.tensor(dim=[B, H, SQ, D], stride=[0, D, H * D, 1], data_type=data_type.FLOAT)
    rq = g.tensor_like(q_offsets)
    tq.set_ragged_offset(rq)
    tk = g.tensor(dim=[B, H, SKV, D], data_type=data_type.FLOAT)
    tv = g.tensor(dim=[B, H, SKV, D], data_type=data_type.FLOAT)
    tsq, tskv = g.tensor_like(seq_q), g.tensor_like(seq_kv)
    o, _ = g.sdpa(tq, tk, tv, attn_scale=SCALE, use_padding_mask=True, seq_len_q=tsq,
                  seq_len_kv=tskv, generate_stats=False)
    return g, (tq, rq, tk, tv, tsq, tskv), o


def test_ragged_q_with_padded_o(data):
    # Sample 52: q is packed, O is never given offsets, so it is written padded [b,h,s,d].
    q, k, v, seq_q, seq_kv = data
    _, qview, q_off = _thd(q, LQ)
    g, (tq, rq, tk, tv, tsq, tskv), o = _ragged_q_graph(seq_q, seq_kv, q_off)
    o.set_output(True).set_stride([H * SQ * D, SQ * D, D, 1])  # BHSD, as sample 52 sets it
    g.build()
    out = np.full((B, H, SQ, D), np.nan, np.float32)
    g.execute({tq: qview, rq: q_off, tk: k, tv: v, tsq: seq_q, tskv: seq_kv, o: out}, None)
    want = _attention_loops(q, k, v, LQ, LKV)
    for n in range(B):
        np.testing.assert_allclose(out[n, :, :LQ[n]], want[n, :, :LQ[n]], rtol=1e-5, atol=1e-6)
        # The CPU reference writes 0 past seq_len_q (the GPU leaves them unspecified).
        assert (out[n, :, LQ[n]:] == 0).all()


def test_o_with_its_own_offsets_set_after_the_op(data):
    # test_sdpa_chunked_prefill: O's offsets are made after sdpa() and differ from q's
    # (here O has gaps between its sequences, q has none).
    q, k, v, seq_q, seq_kv = data
    _, qview, q_off = _thd(q, LQ)
    g, (tq, rq, tk, tv, tsq, tskv), o = _ragged_q_graph(seq_q, seq_kv, q_off)
    o.set_output(True).set_stride([0, D, H * D, 1])
    o_flat, o_view, o_off = _thd(np.zeros((B, H, SQ, D), np.float32), LQ, gap=2)
    o_flat[:] = np.nan
    ro = g.tensor_like(o_off)
    o.set_ragged_offset(ro)
    g.build()
    g.execute({tq: qview, rq: q_off, tk: k, tv: v, tsq: seq_q, tskv: seq_kv, o: o_view,
               ro: o_off}, None)
    want = _attention_loops(q, k, v, LQ, LKV)
    for n in range(B):
        start = int(o_off[n, 0, 0, 0])
        rows = o_flat[start:start + LQ[n] * H * D].reshape(LQ[n], H, D).transpose(1, 0, 2)
        np.testing.assert_allclose(rows, want[n, :, :LQ[n]], rtol=1e-5, atol=1e-6)
        gap = o_flat[start + LQ[n] * H * D:start + (LQ[n] + 2) * H * D]
        assert np.isnan(gap).all()  # nothing is written between the sequences


def test_padded_q_with_ragged_o(data):
    q, k, v, seq_q, seq_kv = data
    g = graph()
    tq, tk, tv, tsq, tskv = (g.tensor_like(a) for a in (q, k, v, seq_q, seq_kv))
    o, _ = g.sdpa(tq, tk, tv, attn_scale=SCALE, use_padding_mask=True, seq_len_q=tsq,
                  seq_len_kv=tskv)
    o_flat, o_view, o_off = _thd(np.zeros((B, H, SQ, D), np.float32), LQ)
    ro = g.tensor_like(o_off)
    o.set_output(True).set_stride([0, D, H * D, 1]).set_ragged_offset(ro)
    g.build()
    g.execute({tq: q, tk: k, tv: v, tsq: seq_q, tskv: seq_kv, o: o_view, ro: o_off}, None)
    want = _attention_loops(q, k, v, LQ, LKV)
    for n in range(B):
        start = int(o_off[n, 0, 0, 0])
        rows = o_flat[start:start + LQ[n] * H * D].reshape(LQ[n], H, D).transpose(1, 0, 2)
        np.testing.assert_allclose(rows, want[n, :, :LQ[n]], rtol=1e-5, atol=1e-6)


def test_o_offsets_of_wrong_dims_or_type_are_refused(data):
    q, k, v, seq_q, seq_kv = data
    _, _, q_off = _thd(q, LQ)
    g, _, o = _ragged_q_graph(seq_q, seq_kv, q_off)
    o.set_output(True)
    o.set_ragged_offset(g.tensor(dim=[B, 1, 1, 1], data_type=data_type.INT32, name="bad"))
    with pytest.raises(cudnnfe.InvalidGraphError,
                       match=r"ragged_offset_o \"bad\" is \[3,1,1,1\]; expected \[b\+1,1,1,1\]"):
        g.validate()
    g, _, o = _ragged_q_graph(seq_q, seq_kv, q_off)
    o.set_output(True)
    o.set_ragged_offset(g.tensor(dim=[B + 1, 1, 1, 1], data_type=data_type.FLOAT, name="f"))
    with pytest.raises(cudnnfe.InvalidGraphError,
                       match=r"ragged_offset_o \"f\" is FLOAT; ragged_offset_o must be INT32 "
                             r"or INT64"):
        g.validate()


def test_ragged_offsets_on_a_non_attention_output_are_refused():
    g = graph()
    x = g.tensor(dim=[2, 3], name="x")
    y = g.abs(x, name="abs")
    offsets = g.tensor(dim=[3, 1, 1, 1], data_type=data_type.INT32)
    y.set_ragged_offset(offsets)  # abs is no attention op: refused when validated
    y.set_output(True)
    with pytest.raises(cudnnfe.NotOfferedError, match=r"'abs::OUT_0'.*no attention op"):
        g.validate()


def test_stats_with_their_own_offsets(data):
    # cudnn-frontend's THD training graphs give stats [b, h, s, 1] strides [s*h, 1, h, 1]
    # and offsets of their own, after sdpa().
    q, k, v, seq_q, seq_kv = data
    _, qview, q_off = _thd(q, LQ)
    g, (tq, rq, tk, tv, tsq, tskv), o = _ragged_q_graph(seq_q, seq_kv, q_off)
    del o
    g = graph()
    tq = g.tensor(dim=[B, H, SQ, D], stride=[0, D, H * D, 1], data_type=data_type.FLOAT)
    rq = g.tensor_like(q_off)
    tq.set_ragged_offset(rq)
    tk, tv, tsq, tskv = (g.tensor_like(a) for a in (k, v, seq_q, seq_kv))
    o, stats = g.sdpa(tq, tk, tv, attn_scale=SCALE, use_padding_mask=True, seq_len_q=tsq,
                      seq_len_kv=tskv, generate_stats=True)
    o.set_output(True).set_stride([H * SQ * D, SQ * D, D, 1])
    starts = np.array([0] + list(np.cumsum([n + 1 for n in LQ]) * H), np.int64)  # 1-row gaps
    s_off = starts.reshape(B + 1, 1, 1, 1)
    rs = g.tensor_like(s_off)
    stats.set_output(True).set_stride([SQ * H, 1, H, 1]).set_ragged_offset(rs)
    g.build()
    s_flat = np.full(int(starts[-1]) + SQ * H, np.nan, np.float32)
    s_view = np.lib.stride_tricks.as_strided(s_flat, (B, H, SQ, 1), [0, 4, H * 4, 4])
    out = np.zeros((B, H, SQ, D), np.float32)
    g.execute({tq: qview, rq: q_off, tk: k, tv: v, tsq: seq_q, tskv: seq_kv, o: out,
               stats: s_view, rs: s_off}, None)
    want = _stats_loops(q, k, LQ, LKV)
    for n in range(B):
        rows = s_flat[starts[n]:starts[n] + LQ[n] * H].reshape(LQ[n], H).T
        np.testing.assert_allclose(rows, want[n, :, :LQ[n], 0], rtol=1e-5, atol=1e-6)
        assert np.isnan(s_flat[starts[n] + LQ[n] * H:starts[n + 1]]).all()  # the gap row


def test_backward_gradient_needs_its_inputs_offsets(data):
    q, k, v, seq_q, seq_kv = data
    _, _, q_off = _thd(q, LQ)
    g, (tq, rq, tk, tv, tsq, tskv), o = _ragged_q_graph(seq_q, seq_kv, q_off)
    g2 = graph()
    del g, o
    tq = g2.tensor(dim=[B, H, SQ, D], stride=[0, D, H * D, 1], data_type=data_type.FLOAT)
    rq = g2.tensor_like(q_off)
    tq.set_ragged_offset(rq)
    tk, tv = (g2.tensor(dim=[B, H, SKV, D], data_type=data_type.FLOAT) for _ in range(2))
    to = g2.tensor(dim=[B, H, SQ, D], data_type=data_type.FLOAT)
    tdo = g2.tensor(dim=[B, H, SQ, D], data_type=data_type.FLOAT)
    st = g2.tensor(dim=[B, H, SQ, 1], data_type=data_type.FLOAT)
    tsq, tskv = g2.tensor_like(seq_q), g2.tensor_like(seq_kv)
    dq, _, _ = g2.sdpa_backward(tq, tk, tv, to, tdo, st, use_padding_mask=True, seq_len_q=tsq,
                                seq_len_kv=tskv)
    with pytest.raises(cudnnfe.NotOfferedError, match="other offsets are not offered"):
        dq.set_ragged_offset(g2.tensor_like(q_off))
    dq.set_ragged_offset(rq)  # q's own offsets: the C ABI's layout


def _pages(cache, page_size, rng):
    """A page container [pages, h, page_size, d] holding padded cache [b, h, s, d] in
    shuffled pages, and its uniform table [b, 1, s/page_size, 1]."""
    b, h, s, d = cache.shape
    per = s // page_size
    order = rng.permutation(b * per)
    container = np.zeros((b * per, h, page_size, d), np.float32)
    table = np.zeros((b, 1, per, 1), np.int32)
    for n in range(b):
        for p in range(per):
            page = order[n * per + p]
            container[page] = cache[n, :, p * page_size:(p + 1) * page_size, :]
            table[n, 0, p, 0] = page
    return container, table


def _packed_table(table, seq_kv, page_size, spare=1):
    """Sample 53's packed table: batch n keeps only its ceil(seq_kv[n]/page_size) entries,
    then `spare` unused slots; returns (table buffer [b, 1, per, 1], offsets)."""
    b, _, per, _ = table.shape
    flat = np.full(b * per, -1, np.int32)
    offsets, pos = [], 0
    for n in range(b):
        used = -(-int(seq_kv[n]) // page_size)
        offsets.append(pos)
        flat[pos:pos + used] = table[n, 0, :used, 0]
        pos += used + spare
    offsets.append(pos)
    view = flat.reshape(b, 1, per, 1)  # the table keeps its dims; offsets place the batches
    return view, np.array(offsets, np.int32).reshape(b + 1, 1, 1, 1)


@pytest.mark.parametrize("which", ["k", "v", "kv"])
def test_packed_page_tables(which):
    rng = np.random.default_rng(3)
    b, h, s_q, s_kv, d, page = 3, 2, 1, 8, 4, 2  # decode: s_q = 1
    q = rng.standard_normal((b, h, s_q, d)).astype(np.float32)
    k = rng.standard_normal((b, h, s_kv, d)).astype(np.float32)
    v = rng.standard_normal((b, h, s_kv, d)).astype(np.float32)
    lq, lkv = [1, 1, 1], [7, 2, 5]
    seq_q = np.array(lq, np.int32).reshape(b, 1, 1, 1)
    seq_kv = np.array(lkv, np.int32).reshape(b, 1, 1, 1)
    g = graph()
    tq, tsq, tskv = g.tensor_like(q), g.tensor_like(seq_q), g.tensor_like(seq_kv)
    arrays, kw = {tq: q, tsq: seq_q, tskv: seq_kv}, {}
    operands = {}
    for name, cache in (("k", k), ("v", v)):
        if name not in which:
            t = operands[name] = g.tensor_like(cache)
            arrays[t] = cache
            continue
        container, table = _pages(cache, page, rng)
        packed, offsets = _packed_table(table, lkv, page)
        tc, tt, to = g.tensor_like(container), g.tensor_like(packed), g.tensor_like(offsets)
        tt.set_ragged_offset(to)
        operands[name] = tc
        kw[f"paged_attention_{name}_table"] = tt
        arrays.update({tc: container, tt: packed, to: offsets})
    o, _ = g.sdpa(tq, operands["k"], operands["v"], attn_scale=SCALE, use_padding_mask=True,
                  seq_len_q=tsq, seq_len_kv=tskv, paged_attention_max_seq_len_kv=s_kv, **kw)
    o.set_output(True)
    g.build()
    out = np.full((b, h, s_q, d), np.nan, np.float32)
    arrays[o] = out
    g.execute(arrays, None)
    np.testing.assert_allclose(out, _attention_loops(q, k, v, lq, lkv), rtol=1e-5, atol=1e-6)


def test_packed_page_table_offsets_set_after_the_op():
    # The table's offsets may also come after sdpa() (cudnnfe_graph_set_ragged_offset).
    rng = np.random.default_rng(5)
    b, h, s_kv, d, page = 2, 1, 4, 2, 2
    q = rng.standard_normal((b, h, 1, d)).astype(np.float32)
    k = rng.standard_normal((b, h, s_kv, d)).astype(np.float32)
    v = rng.standard_normal((b, h, s_kv, d)).astype(np.float32)
    lkv = [3, 1]
    seq_q = np.ones((b, 1, 1, 1), np.int32)
    seq_kv = np.array(lkv, np.int32).reshape(b, 1, 1, 1)
    container, table = _pages(k, page, rng)
    packed, offsets = _packed_table(table, lkv, page, spare=0)
    g = graph()
    tq, tc, tv, tt, tsq, tskv = (g.tensor_like(a) for a in (q, container, v, packed, seq_q,
                                                              seq_kv))
    o, _ = g.sdpa(tq, tc, tv, attn_scale=SCALE, use_padding_mask=True, seq_len_q=tsq,
                  seq_len_kv=tskv, paged_attention_k_table=tt,
                  paged_attention_max_seq_len_kv=s_kv)
    to = g.tensor_like(offsets)
    tt.set_ragged_offset(to)
    o.set_output(True)
    g.build()
    out = np.full((b, h, 1, d), np.nan, np.float32)
    g.execute({tq: q, tc: container, tv: v, tt: packed, to: offsets, tsq: seq_q,
               tskv: seq_kv, o: out}, None)
    np.testing.assert_allclose(out, _attention_loops(q, k, v, [1, 1], lkv), rtol=1e-5,
                               atol=1e-6)


def test_graph_json_round_trip_keeps_o_offsets_and_packed_tables(data):
    # O's own offsets (set after the op) and a packed page table survive serialize().
    q, k, v, seq_q, seq_kv = data
    _, qview, q_off = _thd(q, LQ)
    g, (tq, rq, tk, tv, tsq, tskv), o = _ragged_q_graph(seq_q, seq_kv, q_off)
    o.set_output(True).set_stride([0, D, H * D, 1])
    o_flat, o_view, o_off = _thd(np.zeros((B, H, SQ, D), np.float32), LQ, gap=1)
    ro = g.tensor_like(o_off)
    o.set_ragged_offset(ro)
    text = g.serialize()
    assert b'"ragged_offset_o"' in text
    loaded = cudnnfe.pygraph.deserialize(text, target=cudnnfe.target.CPU_REFERENCE)
    o_flat[:] = np.nan
    pack = {tq: qview, rq: q_off, tk: k, tv: v, tsq: seq_q, tskv: seq_kv, o: o_view, ro: o_off}
    loaded.execute({t.get_uid(): a for t, a in pack.items()}, None)
    want = _attention_loops(q, k, v, LQ, LKV)
    for n in range(B):
        start = int(o_off[n, 0, 0, 0])
        rows = o_flat[start:start + LQ[n] * H * D].reshape(LQ[n], H, D).transpose(1, 0, 2)
        np.testing.assert_allclose(rows, want[n, :, :LQ[n]], rtol=1e-5, atol=1e-6)

    # A packed page table's offsets are the port ragged_offset_page_table_k.
    g2 = graph()
    tq2 = g2.tensor(dim=[B, H, 1, D], data_type=data_type.FLOAT)
    tc = g2.tensor(dim=[6, H, 2, D], data_type=data_type.FLOAT)
    tv2 = g2.tensor(dim=[B, H, 4, D], data_type=data_type.FLOAT)
    tt = g2.tensor(dim=[B, 1, 2, 1], data_type=data_type.INT32)
    tt.set_ragged_offset(g2.tensor(dim=[B + 1, 1, 1, 1], data_type=data_type.INT32))
    s = g2.tensor(dim=[B, 1, 1, 1], data_type=data_type.INT32)
    s2 = g2.tensor(dim=[B, 1, 1, 1], data_type=data_type.INT32)
    o2, _ = g2.sdpa(tq2, tc, tv2, use_padding_mask=True, seq_len_q=s, seq_len_kv=s2,
                    paged_attention_k_table=tt)
    o2.set_output(True)
    text2 = g2.serialize()
    assert b'"ragged_offset_page_table_k"' in text2
    loaded2 = cudnnfe.pygraph.deserialize(text2, build=False)
    assert loaded2.serialize() == text2


def _stats_loops(q, k, seq_q, seq_kv):
    """Log-sum-exp of each valid row's scaled scores, [b, h, s_q, 1] (0 on padding rows)."""
    b, h, s_q, _ = q.shape
    out = np.zeros((b, h, s_q, 1), np.float32)
    for n in range(b):
        for hh in range(h):
            for i in range(seq_q[n]):
                scores = SCALE * (k[n, hh, :seq_kv[n]] @ q[n, hh, i]).astype(np.float64)
                m = scores.max()
                out[n, hh, i, 0] = m + np.log(np.exp(scores - m).sum())
    return out


@pytest.mark.parametrize("ragged_stats", [False, True], ids=["padded-stats", "ragged-stats"])
def test_ragged_backward_as_test_mhas_builds_it(data, ragged_stats):
    # Offsets on q, k, v, o and dO before the op, on dQ, dK, dV after it (their inputs'),
    # and cudnn-frontend's max_total_seq_len bounds, which cudnnfe checks and needs not.
    import numpy_ref as ref
    q, k, v, seq_q, seq_kv = data
    rng = np.random.default_rng(11)
    do = rng.standard_normal(q.shape).astype(np.float32)
    o = _attention_loops(q, k, v, LQ, LKV).astype(np.float32)
    stats = _stats_loops(q, k, LQ, LKV)
    packed = {name: _thd(a, lengths) for name, a, lengths in
              (("q", q, LQ), ("k", k, LKV), ("v", v, LKV), ("o", o, LQ), ("dO", do, LQ))}
    g = graph()
    t = {}
    for name, (_, view, offsets) in packed.items():
        t[name] = g.tensor(dim=list(view.shape), stride=[0, D, view.shape[1] * D, 1],
                           data_type=data_type.FLOAT, name=name)
    r = {name: g.tensor_like(packed[name][2]) for name in ("q", "k", "v", "o")}
    for name in ("q", "k", "v", "o"):
        t[name].set_ragged_offset(r[name])
    t["dO"].set_ragged_offset(r["o"])
    if ragged_stats:  # sdpa/fp16.py's THD stats: [s*h, 1, h, 1], offsets set after the op
        s_flat, s_view, s_off = _thd(stats, LQ)
        tst = g.tensor(dim=[B, H, SQ, 1], stride=[0, 1, H, 1], data_type=data_type.FLOAT)
    else:
        tst = g.tensor_like(stats)
    tsq, tskv = g.tensor_like(seq_q), g.tensor_like(seq_kv)
    dq, dk, dv = g.sdpa_backward(t["q"], t["k"], t["v"], t["o"], t["dO"], tst, attn_scale=SCALE,
                                 use_padding_mask=True, seq_len_q=tsq, seq_len_kv=tskv,
                                 max_total_seq_len_q=64, max_total_seq_len_kv=64)
    if ragged_stats:
        rs = g.tensor_like(s_off)
        tst.set_ragged_offset(rs)
    grads = {}
    for grad, name in ((dq, "q"), (dk, "k"), (dv, "v")):
        flat, view, _ = _thd(np.zeros_like(data[("q", "k", "v").index(name)]),
                             LQ if name == "q" else LKV)
        flat[:] = np.nan
        grad.set_output(True).set_stride([0, D, H * D, 1]).set_ragged_offset(r[name])
        grads[name] = (grad, flat, view)
    g.build()
    pack = {t[name]: packed[name][1] for name in packed}
    pack.update({r[name]: packed[name][2] for name in r})
    pack.update({tst: s_view, rs: s_off} if ragged_stats else {tst: stats})
    pack.update({tsq: seq_q, tskv: seq_kv})
    pack.update({grad: view for grad, _, view in grads.values()})
    g.execute(pack, None)
    for n in range(B):
        want = ref.sdpa_backward(q[n:n + 1, :, :LQ[n]], k[n:n + 1, :, :LKV[n]],
                                 v[n:n + 1, :, :LKV[n]], do[n:n + 1, :, :LQ[n]], SCALE)
        for (name, lengths), w in zip((("q", LQ), ("k", LKV), ("v", LKV)), want):
            _, flat, _ = grads[name]
            start = int(packed[name][2][n, 0, 0, 0])
            rows = flat[start:start + lengths[n] * H * D].reshape(lengths[n], H, D)
            np.testing.assert_allclose(rows.transpose(1, 0, 2), w[0], rtol=1e-4, atol=1e-5)


def test_total_length_bounds_need_a_ragged_backward(data):
    q, k, v, seq_q, seq_kv = data
    # As cudnn-frontend: refused at validation for a GPU (GraphNotSupportedError, which its
    # tests skip on), where every ragged offset is known; the CPU reference ignores it. The
    # GPU's rules are checked here without one: target GPU, sm_version given.
    for target, refused in ((cudnnfe.target.CPU_REFERENCE, False), (cudnnfe.target.GPU, True)):
        g = graph(target=target, sm_version=90)
        tq, tk, tv, tsq, tskv = (g.tensor_like(a) for a in (q, k, v, seq_q, seq_kv))
        st = g.tensor(dim=[B, H, SQ, 1], data_type=data_type.FLOAT)
        dq, _, _ = g.sdpa_backward(tq, tk, tv, tq, tq, st, use_padding_mask=True,
                                   seq_len_q=tsq, seq_len_kv=tskv, max_total_seq_len_q=64)
        dq.set_output(True)
        if refused:
            with pytest.raises(cudnnfe.GraphNotSupportedError,
                               match="max_total_seq_len_q .* ragged"):
                g.validate()
        else:
            g.validate()
    with pytest.raises(ValueError, match="max_total_seq_len_kv"):
        g.sdpa_backward(tq, tk, tv, tq, tq, st, use_padding_mask=True, seq_len_q=tsq,
                        seq_len_kv=tskv, max_total_seq_len_kv=-1, name="negative")


def test_int64_sequence_lengths_as_sample_52_passes_them(data):
    # torch.randint / torch.full give INT64 lengths; cudnn-frontend passes them through.
    q, k, v, seq_q, seq_kv = data
    _, qview, q_off = _thd(q, LQ)
    g, (tq, rq, tk, tv, tsq, tskv), o = _ragged_q_graph(seq_q.astype(np.int64),
                                                        seq_kv.astype(np.int64), q_off)
    assert tsq.get_data_type() == data_type.INT64
    o.set_output(True).set_stride([H * SQ * D, SQ * D, D, 1])
    g.build()
    out = np.full((B, H, SQ, D), np.nan, np.float32)
    g.execute({tq: qview, rq: q_off, tk: k, tv: v, tsq: seq_q.astype(np.int64),
               tskv: seq_kv.astype(np.int64), o: out}, None)
    want = _attention_loops(q, k, v, LQ, LKV)
    for n in range(B):
        np.testing.assert_allclose(out[n, :, :LQ[n]], want[n, :, :LQ[n]], rtol=1e-5, atol=1e-6)
