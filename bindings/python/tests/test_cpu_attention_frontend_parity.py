"""What cudnn-frontend's attention suites (test_mhas.py, test_mhas_v2.py) ask of the Python
layer, on the CPU reference against NumPy: k and v with different head counts, ALiBi without a
causal mask, the softmax's score_max / score_sum_exp and the dropout mask (rng_dump) written
into tensors the caller made (marked as outputs before the op takes them, as the suites do),
unfuse_fma, pygraph(sm_version=, sm_count=), and refusals raised at validate() with
cudnn-frontend's class (docs/refusals.md)."""
import math

import numpy as np
import pytest

import cudnnfe
from cudnnfe import data_type
from cpu_helpers import close, graph, run
import numpy_ref
import numpy_ref_ops as ref

B, HQ, SQ, SKV, D = 2, 4, 6, 9, 8
SCALE = 1 / math.sqrt(D)


def _inputs(rng, h_k, h_v, d_v=D):
    q = rng.standard_normal((B, HQ, SQ, D)).astype(np.float32)
    k = rng.standard_normal((B, h_k, SKV, D)).astype(np.float32)
    v = rng.standard_normal((B, h_v, SKV, d_v)).astype(np.float32)
    return q, k, v


@pytest.mark.parametrize("h_k,h_v", [(4, 1), (1, 2), (2, 4)])
def test_k_and_v_head_counts_may_differ(rng, h_k, h_v):
    q, k, v = _inputs(rng, h_k, h_v, d_v=5)
    g = graph()
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    o, stats = g.sdpa(tq, tk, tv, generate_stats=True, attn_scale=SCALE)
    out, lse = run(g, {tq: q, tk: k, tv: v}, [o.set_output(True), stats.set_output(True)])
    want_o, want_lse = numpy_ref.sdpa(q, k, v, SCALE)
    close(out, want_o, rtol=1e-4, atol=1e-5)
    close(lse, want_lse, rtol=1e-4, atol=1e-5)

    # The backward: dK sums over k's query groups, dV over v's.
    do = rng.standard_normal(out.shape).astype(np.float32)
    gb = graph()
    ins = [gb.tensor_like(a) for a in (q, k, v, out, do, lse)]
    grads = gb.sdpa_backward(*ins, attn_scale=SCALE)
    got = run(gb, dict(zip(ins, (q, k, v, out, do, lse))), [t.set_output(True) for t in grads])
    for g_got, g_want in zip(got, numpy_ref.sdpa_backward(q, k, v, do, SCALE)):
        close(g_got, g_want, rtol=1e-4, atol=1e-5)


def test_alibi_without_a_causal_mask_runs_on_the_cpu_reference(rng):
    q, k, v = _inputs(rng, HQ, HQ)
    g = graph()
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    o, _ = g.sdpa(tq, tk, tv, use_alibi_mask=True, attn_scale=SCALE)
    (out,) = run(g, {tq: q, tk: k, tv: v}, [o.set_output(True)])
    want, _, _ = ref.attention(q, k, v, SCALE, ref.visible(B, SQ, SKV), alibi=True)
    close(out, want, rtol=1e-4, atol=1e-5)


def _softmax_rows(q, k, scale, sink=None):
    """(row max, row sum of exp(s - max)) with a sink logit per head, as cudnn-frontend's
    reference computes score_max and score_sum_exp."""
    k = np.repeat(k.astype(np.float64), q.shape[1] // k.shape[1], axis=1)
    s = q.astype(np.float64) @ np.swapaxes(k, -1, -2) * scale
    m = s.max(axis=-1, keepdims=True)
    if sink is not None:
        m = np.maximum(m, sink.reshape(1, -1, 1, 1))
    total = np.exp(s - m).sum(axis=-1, keepdims=True)
    if sink is not None:
        total = total + np.exp(sink.reshape(1, -1, 1, 1) - m)
    return m, total


@pytest.mark.parametrize("with_sink", [False, True])
def test_score_max_and_sum_exp_into_caller_tensors(rng, with_sink):
    q, k, v = _inputs(rng, 2, 2)
    sink = rng.standard_normal((1, HQ, 1, 1)).astype(np.float32)
    g = graph()
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    # test_mhas_v2 makes them with graph.tensor and marks them outputs before sdpa.
    tmax = g.tensor(dim=[B, HQ, SQ, 1], stride=[HQ * SQ, SQ, 1, 1], data_type=data_type.FLOAT)
    tsum = g.tensor(dim=[B, HQ, SQ, 1], stride=[HQ * SQ, SQ, 1, 1], data_type=data_type.FLOAT)
    tmax.set_output(True)
    tsum.set_output(True)
    inputs = {tq: q, tk: k, tv: v}
    kw = {}
    if with_sink:
        tsink = g.tensor_like(sink)
        inputs[tsink] = sink
        kw["sink_token"] = tsink
    o, stats = g.sdpa(tq, tk, tv, generate_stats=True, attn_scale=SCALE, score_max=tmax,
                      score_sum_exp=tsum, **kw)
    out, lse, got_max, got_sum = run(g, inputs, [o.set_output(True), stats.set_output(True),
                                                 tmax, tsum])
    want_max, want_sum = _softmax_rows(q, k, SCALE, sink if with_sink else None)
    close(got_max, want_max, rtol=1e-5, atol=1e-5)
    close(got_sum, want_sum, rtol=1e-5, atol=1e-5)
    close(lse, want_max + np.log(want_sum), rtol=1e-5, atol=1e-5)  # stats = m + log(Z)


def test_rng_dump_is_the_mask_the_output_used(rng):
    q, k, v = _inputs(rng, HQ, HQ)
    p, seed, offset = 0.25, 99, 7
    g = graph()
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    dump = g.tensor(dim=[B, HQ, SQ, SKV], data_type=data_type.FLOAT)
    o, _ = g.sdpa(tq, tk, tv, attn_scale=SCALE, dropout=(p, seed, offset), rng_dump=dump)
    out, mask = run(g, {tq: q, tk: k, tv: v}, [o.set_output(True), dump])
    assert set(np.unique(mask)) <= {0.0, 1.0}
    assert 0.5 < mask.mean() < 0.95
    # O with the dumped mask given back (cudnn-frontend's test_mhas reference).
    want, _, _ = ref.attention(q, k, v, SCALE, ref.visible(B, SQ, SKV), drop=mask / (1 - p))
    close(out, want, rtol=1e-4, atol=1e-5)


def test_unfuse_fma_is_taken_and_ignored_by_the_cpu_reference(rng):
    q, k, v = _inputs(rng, HQ, HQ)
    outs = []
    for unfuse in (False, True):
        g = graph()
        tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
        o, _ = g.sdpa(tq, tk, tv, attn_scale=SCALE, unfuse_fma=unfuse)
        outs += run(g, {tq: q, tk: k, tv: v}, [o.set_output(True)])
    np.testing.assert_array_equal(outs[0], outs[1])


def test_sm_targets_are_accepted_and_checked():
    g = graph(sm_version=90, sm_count=16)
    assert g._sm_version == 90 and g._sm_count == 16
    graph(sm_version=None, sm_count=-1)  # cudnn-frontend's "not set"
    with pytest.raises(ValueError, match="sm_count is -5"):
        graph(sm_count=-5)


def _gpu_graph(**kw):
    """A graph validated for an sm 90 GPU without one (cudnn-frontend's support rules)."""
    return graph(target=cudnnfe.target.GPU, sm_version=90, **kw)


def test_support_refusals_come_from_validate_with_cudnn_frontends_class():
    # test_mhas_v2 wraps validate() .. build_plans() and skips on cudnnGraphNotSupportedError.
    g = _gpu_graph(io_data_type=data_type.HALF)
    q = g.tensor(dim=[B, HQ, SQ, 64])
    o, _ = g.sdpa(q, q, q, use_alibi_mask=True)  # adding the op succeeds
    o.set_output(True)
    with pytest.raises(cudnnfe.GraphNotSupportedError, match="alibi_mask needs a right bound"):
        g.validate()


def test_features_the_abi_lacks_are_refused_at_validate():
    g = graph(io_data_type=data_type.FP8_E4M3)
    q = g.tensor(dim=[1, 2, 16, 16])
    bias = g.tensor(dim=[1, 2, 16, 16], data_type=data_type.HALF)
    outs = g.sdpa_fp8(q, q, q, *[1.0] * 6, is_inference=True, bias=bias)
    for t in (outs[0], outs[2], outs[3]):
        t.set_output(True)
    with pytest.raises(cudnnfe.NotOfferedError, match="bias"):
        g.validate()
    assert isinstance(cudnnfe.NotOfferedError("x"), cudnnfe.GraphNotSupportedError)


def test_ragged_score_max_and_sum_exp_follow_their_offsets(rng):
    # test_mhas_v2's ragged inference with both dumps: offsets set after sdpa, like O's.
    q, k, v = _inputs(rng, HQ, HQ)
    seq_q = np.array([4, 6], np.int32).reshape(B, 1, 1, 1)
    seq_kv = np.array([9, 5], np.int32).reshape(B, 1, 1, 1)
    # score rows packed: batch n's rows start at offsets[n] * 1 (THD with h_q heads, d = 1).
    offsets = np.array([0, 4 * HQ, 10 * HQ], np.int64).reshape(B + 1, 1, 1, 1)
    g = graph()
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    tsq, tskv, toff = g.tensor_like(seq_q), g.tensor_like(seq_kv), g.tensor_like(offsets)
    dims, strides = [B, HQ, SQ, 1], [SQ * HQ, 1, HQ, 1]  # BSHD, as the suite's THD stats
    tmax = g.tensor(dim=dims, stride=strides, data_type=data_type.FLOAT).set_output(True)
    tsum = g.tensor(dim=dims, stride=strides, data_type=data_type.FLOAT).set_output(True)
    o, _ = g.sdpa(tq, tk, tv, attn_scale=SCALE, use_padding_mask=True, seq_len_q=tsq,
                  seq_len_kv=tskv, score_max=tmax, score_sum_exp=tsum)
    tmax.set_ragged_offset(toff)
    tsum.set_ragged_offset(toff)
    o.set_output(True)
    packed = [np.full(B * SQ * HQ, np.nan, np.float32) for _ in range(2)]
    g.build()
    out = np.zeros((B, HQ, SQ, D), np.float32)
    g.execute({tq: q, tk: k, tv: v, tsq: seq_q, tskv: seq_kv, toff: offsets,
               o: out, tmax: packed[0], tsum: packed[1]}, None)
    mask = ref.visible(B, SQ, SKV, seq_q, seq_kv)
    kk = k.astype(np.float64)
    s = q.astype(np.float64) @ np.swapaxes(kk, -1, -2) * SCALE
    s = np.where(np.broadcast_to(mask, s.shape), s, -np.inf)
    for n in range(B):
        rows = int(seq_q.ravel()[n])
        m = s[n, :, :rows].max(axis=-1)  # [h, rows]
        z = np.exp(s[n, :, :rows] - m[..., None]).sum(axis=-1)
        start = int(offsets.ravel()[n])
        for got, want in ((packed[0], m), (packed[1], z)):
            block = got[start:start + rows * HQ].reshape(rows, HQ).T
            close(block, want, rtol=1e-5, atol=1e-5)
    assert np.isnan(packed[0][10 * HQ:]).all()  # nothing written past the packed rows
