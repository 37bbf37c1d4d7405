"""sdpa_backward(sink_token=, dSink_token=) on the CPU reference, with cudnn-frontend's calling
convention (dSink_token is a tensor the caller makes and passes in), against NumPy: dSink from
finite differences of sum(O * dO), padded rows left out, dQ/dK/dV unchanged, and bad inputs."""
import numpy as np
import pytest

import cudnnfe
from cudnnfe import data_type
from cpu_helpers import close, graph, run

B, H, SQ, SKV, D = 2, 3, 5, 7, 4
SCALE = 0.5


def _forward(q, k, v, sink):
    """NumPy float64: the forward with a sink column (docs/attention.md); (O, stats)."""
    s = SCALE * np.einsum("bhid,bhjd->bhij", q.astype(np.float64), k.astype(np.float64))
    sink = sink.astype(np.float64).reshape(1, H, 1, 1)
    m = np.maximum(s.max(-1, keepdims=True), sink)
    e = np.exp(s - m)
    z = e.sum(-1, keepdims=True) + np.exp(sink - m)
    return np.einsum("bhij,bhjd->bhid", e / z, v.astype(np.float64)), m + np.log(z)


def _loss(q, k, v, sink, do, rows):
    o, _ = _forward(q, k, v, sink)
    return sum(float((o[n, :, :r] * do[n, :, :r]).sum()) for n, r in enumerate(rows))


def _numeric_dsink(q, k, v, sink, do, rows, step=1e-6):
    grad = np.zeros(H)
    for h in range(H):
        up, down = sink.astype(np.float64), sink.astype(np.float64)
        up.flat[h] += step
        down.flat[h] -= step
        grad[h] = (_loss(q, k, v, up, do, rows) - _loss(q, k, v, down, do, rows)) / (2 * step)
    return grad


def _backward(q, k, v, o, do, stats, sink=None, rows=None):
    """sdpa_backward on the CPU; returns [dq, dk, dv] (and dSink when ``sink`` is given)."""
    g = graph()
    tensors = [g.tensor_like(a) for a in (q, k, v, o, do, stats)]
    inputs = dict(zip(tensors, (q, k, v, o, do, stats)))
    kw = {"attn_scale": SCALE}
    dsink = None
    if sink is not None:
        kw["sink_token"] = g.tensor_like(sink)
        inputs[kw["sink_token"]] = sink
        dsink = g.tensor(dim=[1, H, 1, 1], stride=[H, 1, 1, 1], data_type=data_type.FLOAT,
                         name="dsink", uid=77)
        kw["dSink_token"] = dsink
    if rows is not None:
        lengths = [np.array(x, np.int32).reshape(B, 1, 1, 1) for x in (rows, [SKV] * B)]
        tq, tkv = (g.tensor_like(a) for a in lengths)
        inputs.update({tq: lengths[0], tkv: lengths[1]})
        kw.update(use_padding_mask=True, seq_len_q=tq, seq_len_kv=tkv)
    grads = g.sdpa_backward(*tensors, **kw)
    outputs = [t.set_output(True) for t in grads]
    if dsink is not None:
        assert dsink.get_uid() == 77 and dsink.get_name() == "dsink"
        assert dsink.get_kind() == cudnnfe.tensor_kind.OUTPUT
        outputs.append(dsink)
    return run(g, inputs, outputs)


@pytest.fixture
def case(rng):
    q = rng.standard_normal((B, H, SQ, D)).astype(np.float32)
    k = rng.standard_normal((B, H, SKV, D)).astype(np.float32)
    v = rng.standard_normal((B, H, SKV, D)).astype(np.float32)
    do = rng.standard_normal((B, H, SQ, D)).astype(np.float32)
    sink = np.array([0.5, -0.25, 1.5], np.float32).reshape(1, H, 1, 1)
    o, stats = _forward(q, k, v, sink)
    return q, k, v, do, sink, o.astype(np.float32), stats.astype(np.float32)


@pytest.mark.parametrize("rows", [None, [SQ, 2]])
def test_dsink_is_the_gradient_of_the_loss(case, rows):
    q, k, v, do, sink, o, stats = case
    if rows is not None:  # garbage in the padded rows must not count
        o[1, :, rows[1]:], stats[1, :, rows[1]:] = 9.0, 0.0
    *_, dsink = _backward(q, k, v, o, do, stats, sink, rows)
    valid = rows or [SQ] * B
    want = _numeric_dsink(q, k, v, sink, do, valid)
    close(dsink.reshape(H), want, rtol=1e-4, atol=1e-4)
    # The closed form of docs/attention.md, sign included.
    d_row = (do.astype(np.float64) * o).sum(-1, keepdims=True)
    p_sink = np.exp(sink.astype(np.float64) - stats)
    closed = -sum((p_sink * d_row)[n, :, :r, 0].sum(-1) for n, r in enumerate(valid))
    close(dsink.reshape(H), closed, rtol=1e-4, atol=1e-5)


def test_sink_leaves_dq_dk_dv_unchanged(case):
    q, k, v, do, sink, o, stats = case
    with_sink = _backward(q, k, v, o, do, stats, sink)
    without = _backward(q, k, v, o, do, stats)
    for got, want in zip(with_sink[:3], without):
        np.testing.assert_array_equal(got, want)


def test_dsink_without_sink_is_refused(case):
    q, k, v, do, sink, o, stats = case
    g = graph()
    tensors = [g.tensor_like(a) for a in (q, k, v, o, do, stats)]
    dsink = g.tensor(dim=[1, H, 1, 1], data_type=data_type.FLOAT, name="dsink")
    with pytest.raises(cudnnfe.InvalidGraphError, match="dSink_token .*sink_token is not given"):
        g.sdpa_backward(*tensors, dSink_token=dsink, name="bwd")


def test_dsink_must_be_a_tensor_of_this_graph(case):
    q, k, v, do, sink, o, stats = case
    g = graph()
    tensors = [g.tensor_like(a) for a in (q, k, v, o, do, stats)]
    ts = g.tensor_like(sink)
    with pytest.raises(TypeError, match="dSink_token must be a cudnnfe.Tensor"):
        g.sdpa_backward(*tensors, sink_token=ts, dSink_token=True)
    other = graph().tensor(dim=[1, H, 1, 1], data_type=data_type.FLOAT)
    with pytest.raises(ValueError, match="another graph"):
        g.sdpa_backward(*tensors, sink_token=ts, dSink_token=other)
    wide = g.tensor(dim=[1, H + 1, 1, 1], data_type=data_type.FLOAT, name="wide")
    with pytest.raises(cudnnfe.InvalidGraphError, match="one gradient per sink logit"):
        g.sdpa_backward(*tensors, sink_token=ts, dSink_token=wide)
