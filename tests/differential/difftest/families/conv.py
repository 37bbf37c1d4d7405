"""Convolutions: fprop (with bias / relu epilogues), dgrad and wgrad; 2D and 3D, groups
(depthwise included), padding (symmetric and not), stride, dilation, NHWC and NCHW.

Data are small integers, so every output is exact in fp32 (and TF32) accumulation and the
comparison is tight. Degenerate graphs force N, C, K, a spatial size or a filter size to 1,
half of them as C=1 with a channels-last input (strides that also read as NCHW)."""
import numpy as np

from .. import layout, refs
from ..builder import Expected
from . import common

NAME = "conv"
OPS = ("fprop", "fprop", "dgrad", "wgrad")
EPILOGUES = ("none", "bias", "relu", "bias_relu")


def _pick_geometry(rng, nsp, degenerate):
    forced = set()
    if degenerate:
        if rng.random() < 0.5:
            forced = {"C1_NHWC"}
        else:
            forced = common.degenerate_dims(rng, ("N", "C", "K", "H", "R"))
    groups = rng.choice([1, 1, 1, 2, 3, 4, "depthwise"])
    if groups == "depthwise":
        groups = rng.randint(2, 8)
        cpg, kpg = 1, rng.choice([1, 2])
    else:
        cpg, kpg = rng.randint(1, 8), rng.randint(1, 8)
    if forced & {"C", "C1_NHWC"}:
        groups, cpg = 1, 1
    if "K" in forced:
        groups, kpg = 1, 1
    n = 1 if "N" in forced else rng.randint(1, 4)
    filt, pre, post, stride, dil, spatial = [], [], [], [], [], []
    for i in range(nsp):
        r = 1 if "R" in forced and i == 0 else rng.choice([1, 2, 3, 3, 5] if nsp == 2 else [1, 2, 3])
        d = rng.choice([1, 1, 1, 2])
        eff = (r - 1) * d + 1
        p0 = rng.randint(0, eff - 1) if eff > 1 else 0
        p1 = p0 if rng.random() < 0.8 else rng.randint(0, eff - 1)
        if "H" in forced and i == 0:  # a size-1 input: the padding makes room for the filter
            r, d = rng.choice([1, 3]), 1
            eff = r
            p0 = p1 = (r - 1) // 2
        lo = max(1, eff - p0 - p1)
        hi = 12 if nsp == 2 else 6
        x = 1 if "H" in forced and i == 0 else rng.randint(lo, max(lo, hi))
        filt.append(r), dil.append(d), pre.append(p0), post.append(p1), spatial.append(x)
        stride.append(rng.choice([1, 1, 2, 3]))
    return dict(N=n, groups=groups, C=groups * cpg, K=groups * kpg, spatial=spatial,
                filter=filt, pre=pre, post=post, stride=stride, dilation=dil,
                forced=sorted(forced))


def generate(rng, degenerate):
    nsp = 2 if rng.random() < 0.8 else 3
    p = _pick_geometry(rng, nsp, degenerate)
    p["op"] = rng.choice(OPS)
    p["dtype"] = common.io_dtype(rng)
    p["layout"] = "NHWC" if rng.random() < 0.7 or "C1_NHWC" in p["forced"] else "NCHW"
    p["epilogue"] = rng.choice(EPILOGUES) if p["op"] == "fprop" else "none"
    p["symmetric"] = p["pre"] == p["post"]
    p["explicit"] = common.explicit(rng)
    return p


def out_spatial(p):
    return [(x + a + b - ((r - 1) * d + 1)) // s + 1 for x, a, b, r, d, s in
            zip(p["spatial"], p["pre"], p["post"], p["filter"], p["dilation"], p["stride"])]


def shapes(p):
    x = [p["N"], p["C"]] + p["spatial"]
    w = [p["K"], p["C"] // p["groups"]] + p["filter"]
    y = [p["N"], p["K"]] + out_spatial(p)
    return x, w, y


def graph_types(p):
    return common.types(p["dtype"])


def _order(p, rank):
    return (layout.channels_last_order(rank) if p["layout"] == "NHWC"
            else list(range(rank)))


def make_inputs(p, nrng):
    from ..builder import Data
    data = Data()
    x, w, y = shapes(p)
    names = {"fprop": (("X", x), ("W", w)), "dgrad": (("DY", y), ("W", w)),
             "wgrad": (("X", x), ("DY", y))}[p["op"]]
    for name, dims in names:
        v = layout.ints(nrng, dims, -2, 2, zero_fraction=0.2)
        data.add(name, layout.stored(v, _order(p, len(dims)), p["dtype"]), v)
    if "bias" in p["epilogue"]:
        dims = [1, p["K"]] + [1] * len(p["spatial"])
        v = layout.ints(nrng, dims, -3, 3)
        data.add("B", layout.stored(v, layout.channels_last_order(len(dims)), p["dtype"]), v)
    return data


def _padding(p):
    if p["symmetric"]:
        return {"padding": p["pre"]}
    return {"pre_padding": p["pre"], "post_padding": p["post"]}


def build(b, p):
    g = b.g
    x, w, y = shapes(p)
    conv = dict(stride=p["stride"], dilation=p["dilation"], **_padding(p))
    if p["op"] == "fprop":
        out = g.conv_fprop(image=b.tensor("X"), weight=b.tensor("W"), **conv)
        if "bias" in p["epilogue"]:
            out = g.bias(input=out, bias=b.tensor("B"))
        if "relu" in p["epilogue"]:
            out = g.relu(input=out)
        b.output(out, "Y", y, p["dtype"], layout.channels_last(y))
    elif p["op"] == "dgrad":
        out = g.conv_dgrad(loss=b.tensor("DY"), filter=b.tensor("W"), **conv)
        b.output(out, "DX", x, p["dtype"], layout.channels_last(x), set_dim=True)
    else:
        out = g.conv_wgrad(image=b.tensor("X"), loss=b.tensor("DY"), **conv)
        b.output(out, "DW", w, p["dtype"], layout.channels_last(w), set_dim=True)


def reference(p, data, target):
    v = data.values
    x, w, y = shapes(p)
    geo = (p["pre"], p["post"], p["stride"], p["dilation"], p["groups"])
    if p["op"] == "fprop":
        out = refs.conv_fprop(v["X"], v["W"], *geo)
        if "bias" in p["epilogue"]:
            out = out + v["B"]
        if "relu" in p["epilogue"]:
            out = np.maximum(out, 0)
        return {"Y": Expected(out)}
    if p["op"] == "dgrad":
        return {"DX": Expected(refs.conv_dgrad(v["DY"], v["W"], x[2:], *geo))}
    return {"DW": Expected(refs.conv_wgrad(v["X"], v["DY"], w[2:], *geo))}
