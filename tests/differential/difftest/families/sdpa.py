"""Scaled dot-product attention, forward and backward: MHA / GQA / MQA, BHSD and BSHD
layouts, causal (top-left and bottom-right), sliding windows and two-sided bands, ALiBi,
padding masks with per-batch lengths, ragged (packed THD) q / k / v / o, additive bias (and
its gradient), dropout.

Dropout: on the CPU target the reference draws the CPU reference's documented mask
(numpy_ref_ops.dropout_keep); on the GPU cuDNN draws it with Philox, which the reference cannot
reproduce, so dropout outputs are compared between the two GPU implementations only.

Rows a padding mask leaves unspecified (O, stats and dQ past seq_len_q, dK and dV past
seq_len_kv) are not compared. Masks keep every valid row's visible range non-empty
(s_q <= s_kv and seq_len_q <= seq_len_kv whenever a causal mask or band is set)."""
import math

import numpy as np

from .. import layout, refs
from ..builder import Data, Expected, Ragged
from . import common

NAME = "sdpa"
MASKS = ("none", "none", "causal", "bottom_right", "window", "window_bottom_right", "band")


def _seq(rng):
    return rng.choice([rng.randint(1, 16), rng.randint(17, 128), 64 * rng.randint(1, 3)])


def generate(rng, degenerate):
    p = {"direction": "fwd" if rng.random() < 0.6 else "bwd",
         "dtype": common.io_dtype(rng, ("HALF", "BFLOAT16"))}
    forced = common.degenerate_dims(rng, ("s_q", "s_kv", "b", "h")) if degenerate else set()
    p["b"] = 1 if "b" in forced else rng.randint(1, 3)
    p["h_kv"] = 1 if "h" in forced else rng.choice([1, 2, 4])
    p["h_q"] = p["h_kv"] * (1 if "h" in forced else rng.choice([1, 1, 2, 4]))
    while p["b"] * p["h_q"] > 16:
        p["h_q"] //= 2
        p["h_kv"] = max(1, min(p["h_kv"], p["h_q"]))
    p["d"] = rng.choice([32, 64, 64, 128])
    p["d_v"] = p["d"] if rng.random() < 0.85 else rng.choice([32, 64, 128])
    p["s_q"] = 1 if "s_q" in forced else _seq(rng)
    p["s_kv"] = 1 if "s_kv" in forced else _seq(rng)
    p["mask"] = rng.choice(MASKS)
    p["alibi"] = p["mask"] == "causal" and rng.random() < 0.3
    p["left"] = rng.randint(1, 24) if p["mask"] in ("window", "window_bottom_right",
                                                    "band") else None
    p["right"] = rng.randint(1, 8) if p["mask"] == "band" else None
    if p["mask"] != "none" and p["s_q"] > p["s_kv"]:
        p["s_q"], p["s_kv"] = p["s_kv"], p["s_q"]
    p["layout"] = rng.choice(["BHSD", "BSHD"])
    p["padding"] = rng.random() < 0.3
    if p["padding"]:
        p["seq_q"] = [rng.randint(1, p["s_q"]) for _ in range(p["b"])]
        p["seq_kv"] = [rng.randint(1, p["s_kv"]) for _ in range(p["b"])]
        if p["mask"] != "none":
            p["seq_q"] = [min(q, kv) for q, kv in zip(p["seq_q"], p["seq_kv"])]
    p["ragged"] = p["padding"] and rng.random() < 0.5
    p["bias"] = ([rng.choice([1, p["b"]]), rng.choice([1, p["h_q"]])]
                 if rng.random() < 0.2 else None)
    p["dbias"] = (p["direction"] == "bwd" and p["bias"] == [1, p["h_q"]]
                  and not p["padding"] and rng.random() < 0.5)
    p["dropout"] = rng.choice([0.1, 0.3]) if rng.random() < 0.15 else None
    p["scale"] = round(rng.uniform(0.05, 0.3), 4)
    p["stats"] = p["direction"] == "bwd" or rng.random() < 0.7
    p["explicit"] = common.explicit(rng)
    p["forced"] = sorted(forced)
    return p


def graph_types(p):
    return common.types(p["dtype"])


def _dims(p):
    b, hq, hkv, sq, skv, d, dv = (p[k] for k in ("b", "h_q", "h_kv", "s_q", "s_kv", "d", "d_v"))
    return {"q": [b, hq, sq, d], "k": [b, hkv, skv, d], "v": [b, hkv, skv, dv],
            "o": [b, hq, sq, dv], "stats": [b, hq, sq, 1]}


SEQ_OF = {"q": "seq_q", "o": "seq_q", "k": "seq_kv", "v": "seq_kv"}
GRAD_OF = {"q": "dQ", "k": "dK", "v": "dV", "o": "dO"}


def _order(p):
    return [0, 1, 2, 3] if p["layout"] == "BHSD" else [0, 2, 1, 3]


def _ragged_rows(p, which):
    """(offsets in elements, lengths, packed strides, buffer elements) of a ragged tensor."""
    lengths = p[SEQ_OF[which]]
    dims = _dims(p)[which]
    h, x = dims[1], dims[3]
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    total = int(starts[-1])
    rows = max(64, -(-total // 64) * 64)  # cudnn-frontend's samples' max_total_seq_len
    return ([int(s) * h * x for s in starts], list(lengths), [dims[2] * h * x, x, h * x, 1],
            rows * h * x, rows)


def _add_tensor(data, p, name, which, values):
    """Store values (logical [b, h, s, x]) as tensor ``name`` laid out like ``which``."""
    if not p["ragged"]:
        data.add(name, layout.stored(values, _order(p), p["dtype"]), values)
        return
    offsets, lengths, strides, elements, _ = _ragged_rows(p, which)
    buf = np.zeros(elements, layout.NUMPY[p["dtype"]])
    logical = np.zeros(values.shape)
    for n, (start, rows) in enumerate(zip(offsets, lengths)):
        view = layout.strided_view(buf[start:], list(values.shape[1:]), strides[1:])
        view[:, :rows] = values[n, :, :rows].astype(buf.dtype)
        logical[n, :, :rows] = values[n, :, :rows]
    data.add(name, buf, logical, dims=values.shape, strides=strides)


def _drop(p, target):
    """The factor multiplying P (None: no dropout) and whether the reference knows it."""
    if not p["dropout"]:
        return None, True
    if target != "cpu":
        return None, False
    shape = [p["b"], p["h_q"], p["s_q"], p["s_kv"]]
    keep = refs.dropout_keep(shape, p["dropout"], SEED, OFFSET)
    return keep / (1.0 - p["dropout"]), True


SEED, OFFSET = 1234567, 89


def _visible(p):
    bottom = p["mask"] in ("bottom_right", "window_bottom_right")
    right = {"none": -1, "band": p["right"]}.get(p["mask"], 0)
    left = p["left"] if p["left"] else -1
    return refs.visible(p["b"], p["s_q"], p["s_kv"], p.get("seq_q"), p.get("seq_kv"),
                        left=left, right=right, bottom_right=bottom)


def make_inputs(p, nrng):
    data = Data()
    dims = _dims(p)
    vals = {}
    for name in ("q", "k", "v"):
        vals[name] = layout.rounded(layout.normals(nrng, dims[name], 1.0, -0.25), p["dtype"])
        _add_tensor(data, p, name, name, vals[name])
    if p["bias"]:
        bdims = p["bias"] + [p["s_q"], p["s_kv"]]
        v = layout.rounded(layout.normals(nrng, bdims, 0.5), p["dtype"])
        data.add("bias", layout.stored(v, [0, 1, 2, 3], p["dtype"]), v)
    if p["padding"]:
        for name in ("seq_q", "seq_kv"):
            data.add(name, np.array(p[name], np.int32).reshape(p["b"], 1, 1, 1))
    if p["ragged"]:
        for which in ("q", "k", "v", "o"):
            offsets = _ragged_rows(p, which)[0]
            data.add(f"offset_{which}", np.array(offsets, np.int64).reshape(-1, 1, 1, 1))
    if p["dropout"]:
        data.add("seed", np.full([1, 1, 1, 1], SEED, np.int64))
        data.add("offset", np.full([1, 1, 1, 1], OFFSET, np.int64))
    if p["direction"] == "bwd":
        _backward_inputs(data, p, nrng, vals)
    return data


def _backward_inputs(data, p, nrng, vals):
    """o and stats of the forward (reference, with the CPU dropout mask) and a random dO."""
    drop, _ = _drop(p, "cpu")
    bias = data.values.get("bias")
    o, stats, _ = refs.attention(vals["q"], vals["k"], vals["v"], p["scale"], _visible(p), bias,
                                 p["alibi"], drop)
    o = layout.rounded(o, p["dtype"])
    _add_tensor(data, p, "o", "o", o)
    stats = np.where(np.isfinite(stats), stats, 0.0)
    data.add("stats", layout.stored(stats, [0, 1, 2, 3], "FLOAT"), stats)
    do = layout.rounded(layout.normals(nrng, o.shape, 0.5), p["dtype"])
    _add_tensor(data, p, "dO", "o", do)


def _options(b, p):
    cudnn = b.cudnn
    opts = {"attn_scale": p["scale"]}
    if p["mask"] in ("causal", "window"):
        opts["use_causal_mask"] = True
    if p["mask"] in ("bottom_right", "window_bottom_right"):
        opts["use_causal_mask_bottom_right"] = True
    if p["left"]:
        opts["diagonal_band_left_bound"] = p["left"]
    if p["mask"] == "band":
        opts["diagonal_band_right_bound"] = p["right"]
        opts["diagonal_alignment"] = cudnn.diagonal_alignment.TOP_LEFT
    if p["alibi"]:
        opts["use_alibi_mask"] = True
    if p["bias"]:
        opts["bias"] = b.tensor("bias")
    if p["padding"]:
        opts.update(use_padding_mask=True, seq_len_q=b.tensor("seq_q"),
                    seq_len_kv=b.tensor("seq_kv"))
    if p["dropout"]:
        opts["dropout"] = (p["dropout"], b.tensor("seed"), b.tensor("offset"))
    return opts


def _qkv(b, p):
    ts = {name: b.tensor(name) for name in ("q", "k", "v")}
    if p["ragged"]:
        for name, t in ts.items():
            t.set_ragged_offset(b.tensor(f"offset_{name}"))
    return ts


def _out(b, p, t, name, which, dtype):
    """O, dQ, dK, dV: strides like their input's when ``explicit`` (cudnn-frontend's samples
    always set them); otherwise inferred, and allocated from get_stride() only (user code has
    no convention to follow here)."""
    dims = _dims(p)[which]
    if not p["ragged"]:
        like = layout.order_strides(dims, _order(p))
        b.output(t, name, dims, dtype, None, strides=like if p["explicit"] else None)
        return
    offsets, lengths, strides, elements, _ = _ragged_rows(p, which)
    t.set_ragged_offset(b.tensor(f"offset_{which}"))
    b.output(t, name, dims, dtype, None, strides=strides, ragged=Ragged(offsets, lengths),
             buffer_elements=elements)


def build(b, p):
    if p["direction"] == "fwd":
        _build_forward(b, p)
    else:
        _build_backward(b, p)


def _build_forward(b, p):
    ts = _qkv(b, p)
    o, stats = b.g.sdpa(q=ts["q"], k=ts["k"], v=ts["v"], generate_stats=p["stats"],
                        **_options(b, p))
    _out(b, p, o, "O", "o", p["dtype"])
    if p["stats"]:
        dims = _dims(p)["stats"]
        b.output(stats, "stats", dims, "FLOAT", layout.contiguous(dims))


def _build_backward(b, p):
    ts = _qkv(b, p)
    o, do = b.tensor("o"), b.tensor("dO")
    if p["ragged"]:
        o.set_ragged_offset(b.tensor("offset_o"))
        do.set_ragged_offset(b.tensor("offset_o"))
    opts = _options(b, p)
    if p["dbias"]:
        bias_dims = p["bias"] + [p["s_q"], p["s_kv"]]
        dbias = b.g.tensor(name="dBias", dim=bias_dims, stride=layout.contiguous(bias_dims),
                           data_type=b.dtype(p["dtype"]))
        opts["dBias"] = dbias
    if p["ragged"]:
        opts["max_total_seq_len_q"] = _ragged_rows(p, "q")[4]
        opts["max_total_seq_len_kv"] = _ragged_rows(p, "k")[4]
    dq, dk, dv = b.g.sdpa_backward(q=ts["q"], k=ts["k"], v=ts["v"], o=o, dO=do,
                                   stats=b.tensor("stats"), **opts)
    for t, name, which in ((dq, "dQ", "q"), (dk, "dK", "k"), (dv, "dV", "v")):
        _out(b, p, t, name, which, p["dtype"])
    if p["dbias"]:
        bias_dims = p["bias"] + [p["s_q"], p["s_kv"]]
        b.output(opts["dBias"], "dBias", bias_dims, p["dtype"], layout.contiguous(bias_dims),
                 strides=layout.contiguous(bias_dims))


def _row_mask(p, seq_name, rows):
    if not p["padding"]:
        return None
    seq = np.array(p[seq_name]).reshape(-1, 1, 1, 1)
    return np.arange(rows).reshape(1, 1, -1, 1) < seq


def reference(p, data, target):
    v = data.values
    drop, exact = _drop(p, target)
    mask = _visible(p)
    bias = v.get("bias")
    q, k, vv = v["q"], v["k"], v["v"]
    if p["direction"] == "fwd":
        o, stats, _ = refs.attention(q, k, vv, p["scale"], mask, bias, p["alibi"], drop)
        rows = _row_mask(p, "seq_q", p["s_q"])
        out = {"O": Expected(o, rows, exact)}
        if p["stats"]:
            out["stats"] = Expected(stats, rows, True)  # taken before dropout
        return out
    # D = rowsum(dO * O) from the O the graph is given, rounded to its data type, as cuDNN and
    # the CPU reference compute it: with one visible key, or dropout, the exact O's D cancels
    # dP exactly and the rounded O's does not.
    dq, dk, dv, dbias = refs.attention_backward(q, k, vv, v["dO"], p["scale"], mask, bias,
                                                p["alibi"], drop, o=v["o"])
    tol = 2.0  # longer accumulations, P and dS rounded to the data type inside cuDNN
    out = {"dQ": Expected(dq, _row_mask(p, "seq_q", p["s_q"]), exact, tol),
           "dK": Expected(dk, _row_mask(p, "seq_kv", p["s_kv"]), exact, tol),
           "dV": Expected(dv, _row_mask(p, "seq_kv", p["s_kv"]), exact, tol)}
    if p["dbias"]:
        out["dBias"] = Expected(dbias, None, exact, tol)
    return out


def elements(p):
    return sum(math.prod(d) for d in _dims(p).values())
