"""Matmuls: batched (3D, sometimes 4D) with batch broadcast, transposed (column-major)
operands, unaligned sizes and M / N / K = 1, with bias and activation epilogues.

Data are small integers: exact in every accumulation, so the comparison is tight (activations
of integers are compared at the data type's tolerance)."""
import numpy as np

from .. import layout, refs
from ..builder import Data, Expected
from . import common

NAME = "matmul"
ACTIVATIONS = ("none", "relu", "gelu", "tanh", "sigmoid", "gelu_approx_tanh")
BIAS = ("none", "row", "column", "batch_row")


def _size(rng):
    return rng.choice([rng.randint(1, 16), rng.randint(17, 96), 8 * rng.randint(1, 12),
                       rng.choice([32, 64])])


def generate(rng, degenerate):
    p = {"M": _size(rng), "N": _size(rng), "K": _size(rng)}
    forced = common.degenerate_dims(rng, ("M", "N", "K", "batch")) if degenerate else set()
    for d in ("M", "N", "K"):
        if d in forced:
            p[d] = 1
    rank = 3 if rng.random() < 0.8 else 4
    batch = [1 if "batch" in forced else rng.randint(1, 4) for _ in range(rank - 2)]
    p["batch_a"] = [1 if rng.random() < 0.25 else s for s in batch]
    p["batch_b"] = [1 if rng.random() < 0.25 else s for s in batch]
    p["trans_a"] = rng.random() < 0.3
    p["trans_b"] = rng.random() < 0.3
    p["dtype"] = common.io_dtype(rng)
    p["bias"] = rng.choice(BIAS)
    p["activation"] = rng.choice(ACTIVATIONS)
    p["explicit"] = common.explicit(rng)
    p["forced"] = sorted(forced)
    return p


def graph_types(p):
    return common.types(p["dtype"])


def _batch(p):
    return [max(a, b) for a, b in zip(p["batch_a"], p["batch_b"])]


def _stored(v, transposed, dtype):
    order = list(range(v.ndim))
    if transposed:
        order[-1], order[-2] = order[-2], order[-1]
    return layout.stored(v, order, dtype)


def bias_dims(p):
    batch = _batch(p)
    return {"row": [1] * len(batch) + [1, p["N"]],
            "column": [1] * len(batch) + [p["M"], 1],
            "batch_row": batch + [1, p["N"]]}[p["bias"]]


def make_inputs(p, nrng):
    data = Data()
    a = layout.ints(nrng, p["batch_a"] + [p["M"], p["K"]], -2, 2, zero_fraction=0.2)
    b = layout.ints(nrng, p["batch_b"] + [p["K"], p["N"]], -2, 2, zero_fraction=0.2)
    data.add("A", _stored(a, p["trans_a"], p["dtype"]), a)
    data.add("B", _stored(b, p["trans_b"], p["dtype"]), b)
    if p["bias"] != "none":
        v = layout.ints(nrng, bias_dims(p), -3, 3)
        data.add("Bias", layout.stored(v, list(range(v.ndim)), p["dtype"]), v)
    return data


def build(b, p):
    g = b.g
    c = g.matmul(A=b.tensor("A"), B=b.tensor("B"))
    if p["bias"] != "none":
        c = g.bias(input=c, bias=b.tensor("Bias"))
    if p["activation"] != "none":
        c = getattr(g, p["activation"])(c)
    dims = _batch(p) + [p["M"], p["N"]]
    b.output(c, "C", dims, p["dtype"], layout.contiguous(dims))


def reference(p, data, target):
    v = data.values
    c = np.matmul(v["A"], v["B"])
    if p["bias"] != "none":
        c = c + v["Bias"]
    if p["activation"] != "none":
        mode = {"relu": "RELU_FWD", "gelu": "GELU_FWD", "tanh": "TANH_FWD",
                "sigmoid": "SIGMOID_FWD", "gelu_approx_tanh": "GELU_APPROX_TANH_FWD"}
        c = refs.POINTWISE[mode[p["activation"]]][1](c)
    return {"C": Expected(c)}
