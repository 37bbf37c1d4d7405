"""moe_grouped_matmul (NONE, GATHER, SCATTER) and moe_grouped_matmul_bwd on the CPU
reference against NumPy loops, with cudnn-frontend's pygraph arguments and layouts
(test_moe_grouped_matmul.py): token [1, T, K], weight [E, K, N] column-major in K, N."""
import numpy as np
import pytest

import cudnnfe
from cudnnfe import data_type, moe_grouped_matmul_mode
from cpu_helpers import graph, run


def inputs(rng, e, t, k, n):
    token = rng.integers(-3, 4, (1, t, k)).astype(np.float32)
    # [E, N, K] row-major seen as [E, K, N]: strides [K*N, 1, K], cudnn-frontend's layout.
    weight = rng.integers(-3, 4, (e, n, k)).astype(np.float32).transpose(0, 2, 1)
    return token, weight


def add_inputs(g, token, weight, offsets):
    e, k, n = weight.shape
    tk = g.tensor(name="token", dim=list(token.shape), stride=[token.shape[1] * k, k, 1],
                  data_type=data_type.FLOAT)
    w = g.tensor(name="weight", dim=[e, k, n], stride=[k * n, 1, k], data_type=data_type.FLOAT)
    f = g.tensor(name="first_token_offset", dim=[len(offsets), 1, 1], stride=[1, 1, 1],
                 data_type=data_type.INT32)
    return tk, w, f


def bounds(offsets, rows):
    return list(offsets) + [rows]


def test_none_matches_loops(rng):
    token, weight = inputs(rng, 3, 10, 5, 4)
    offsets = np.array([0, 2, 2], np.int32)  # an empty second group
    g = graph()
    tk, w, f = add_inputs(g, token, weight, offsets)
    out = g.moe_grouped_matmul(tk, w, f, mode=cudnnfe.moe_grouped_matmul_mode.NONE,
                               compute_data_type=data_type.FLOAT, name="moe")
    out.set_output(True).set_data_type(data_type.FLOAT)
    assert out.get_dim() == [1, 10, 4] and out.get_stride() == [40, 4, 1]
    (got,) = run(g, {tk: token, w: weight, f: offsets}, [out])
    want = np.zeros((1, 10, 4), np.float32)
    b = bounds(offsets, 10)
    for grp in range(3):
        for r in range(b[grp], b[grp + 1]):
            want[0, r] = token[0, r] @ weight[grp]
    np.testing.assert_array_equal(got, want)


def test_gather_and_scatter_match_loops(rng):
    token, weight = inputs(rng, 2, 4, 3, 5)
    offsets = np.array([0, 2], np.int32)
    index = np.array([3, 0, 1, 3, 2, 0], np.int32).reshape(1, 6, 1)
    g = graph()
    tk, w, f = add_inputs(g, token, weight, offsets)
    ix = g.tensor(name="token_index", dim=[1, 6, 1], stride=[6, 1, 1], data_type=data_type.INT32)
    out = g.moe_grouped_matmul(tk, w, f, token_index=ix, mode="gather")
    out.set_output(True)
    (got,) = run(g, {tk: token, w: weight, f: offsets, ix: index}, [out])
    want = np.stack([token[0, index[0, r, 0]] @ weight[0 if r < 2 else 1] for r in range(6)])
    np.testing.assert_array_equal(got[0], want)

    routed, _ = inputs(rng, 2, 6, 3, 5)
    slot = np.array([5, 0, 3, 2, 4, 1])
    idx, ks = (slot // 2).astype(np.int32).reshape(1, 6, 1), (slot % 2).astype(np.int32)
    g = graph()
    tk, w, f = add_inputs(g, routed, weight, offsets)
    ix = g.tensor(name="token_index", dim=[1, 6, 1], stride=[6, 1, 1], data_type=data_type.INT32)
    kt = g.tensor(name="token_ks", dim=[1, 6, 1], stride=[6, 1, 1], data_type=data_type.INT32)
    out = g.moe_grouped_matmul(tk, w, f, token_index=ix, token_ks=kt,
                               mode=moe_grouped_matmul_mode.SCATTER, top_k=2)
    out.set_output(True)
    (got,) = run(g, {tk: routed, w: weight, f: offsets, ix: idx, kt: ks.reshape(1, 6, 1)}, [out])
    want = np.zeros((6, 5), np.float32)
    for r in range(6):
        want[slot[r]] = routed[0, r] @ weight[0 if r < 2 else 1]
    np.testing.assert_array_equal(got[0], want)


def test_bwd_matches_loops(rng):
    token, _ = inputs(rng, 1, 7, 3, 1)
    dout = rng.integers(-3, 4, (1, 7, 4)).astype(np.float32)
    offsets = np.array([0, 3, 5], np.int32)
    g = graph()
    d = g.tensor(name="doutput", dim=[1, 7, 4], stride=[28, 4, 1], data_type=data_type.FLOAT)
    tk = g.tensor(name="token", dim=[1, 7, 3], stride=[21, 3, 1], data_type=data_type.FLOAT)
    f = g.tensor(name="first_token_offset", dim=[3, 1, 1], stride=[1, 1, 1],
                 data_type=data_type.INT32)
    dw = g.moe_grouped_matmul_bwd(d, tk, f, compute_data_type=data_type.FLOAT)
    dw.set_output(True).set_data_type(data_type.FLOAT)
    assert dw.get_dim() == [3, 3, 4] and dw.get_stride() == [12, 1, 3]
    (got,) = run(g, {d: dout, tk: token, f: offsets}, [dw])
    b = bounds(offsets, 7)
    want = np.stack([token[0, b[e]:b[e + 1]].T @ dout[0, b[e]:b[e + 1]] for e in range(3)])
    np.testing.assert_array_equal(got, want)


def test_bad_inputs_name_the_rule(rng):
    token, weight = inputs(rng, 2, 6, 4, 3)
    g = graph()
    tk, w, f = add_inputs(g, token, weight, np.array([0, 3], np.int32))
    with pytest.raises(cudnnfe.InvalidGraphError, match="mode GATHER reads input token_index"):
        g.moe_grouped_matmul(tk, w, f, mode="gather")
    with pytest.raises(ValueError, match="unknown .*mode 'combine'"):
        g.moe_grouped_matmul(tk, w, f, mode="combine")
    with pytest.raises(cudnnfe.InvalidArgumentError, match="top_k is 0"):
        g.moe_grouped_matmul(tk, w, f, mode="scatter")
