"""Reductions: every mode over a random non-empty set of axes of x (rank 3 to 5, any memory
order), sometimes after a pointwise prologue (x * y or |x|); the output is FLOAT with the
reduced axes of size 1 (its dims set with set_dim, as cudnn-frontend needs).

User code allocates the output in cudnn-frontend's inferred order for reductions (N, spatial,
C: channels-last)."""
import math

import numpy as np

from .. import layout, refs
from ..builder import Data, Expected
from . import common

NAME = "reduction"
MODES = ("ADD", "MUL", "MIN", "MAX", "AMAX", "AVG", "NORM1", "NORM2", "MUL_NO_ZEROS")


def generate(rng, degenerate):
    rank = rng.choice([3, 4, 4, 5])
    dims = [rng.randint(1, 16) for _ in range(rank)]
    if degenerate:
        for i in rng.sample(range(rank), rng.randint(1, rank - 1)):
            dims[i] = 1
    while math.prod(dims) > 40000:
        dims[dims.index(max(dims))] //= 2
    axes = sorted(rng.sample(range(rank), rng.randint(1, rank)))
    mode = rng.choice(MODES)
    if mode.startswith("MUL"):  # keep products of up to 32 values in range
        while math.prod(dims[a] for a in axes) > 32:
            big = max(axes, key=lambda a: dims[a])
            dims[big] = max(1, dims[big] // 2)
    r = rng.random()
    order = (list(range(rank)) if r < 0.5 else layout.channels_last_order(rank) if r < 0.8
             else rng.sample(range(rank), rank))
    return {"dims": dims, "axes": axes, "mode": mode, "order": order,
            "dtype": common.io_dtype(rng),
            "prologue": rng.choice(["none", "none", "mul", "abs"]),
            "explicit": common.explicit(rng)}


def graph_types(p):
    return common.types(p["dtype"])


def out_dims(p):
    return [1 if i in p["axes"] else d for i, d in enumerate(p["dims"])]


def _values(nrng, p):
    if p["mode"].startswith("MUL"):
        pick = nrng.choice([-1.0, 1.0, 1.0, -1.0, 2.0, 0.5, -0.5], size=p["dims"])
        if p["mode"] == "MUL_NO_ZEROS":
            pick[nrng.random(p["dims"]) < 0.2] = 0.0
        return pick
    return layout.ints(nrng, p["dims"], -4, 4)


def make_inputs(p, nrng):
    data = Data()
    x = _values(nrng, p)
    data.add("X", layout.stored(x, p["order"], p["dtype"]), x)
    if p["prologue"] == "mul":
        y = nrng.choice([-1.0, 1.0], size=p["dims"])
        data.add("Y", layout.stored(y, p["order"], p["dtype"]), y)
    return data


def build(b, p):
    g = b.g
    x = b.tensor("X")
    if p["prologue"] == "mul":
        x = g.mul(x, b.tensor("Y"))
    elif p["prologue"] == "abs":
        x = g.abs(x)
    r = g.reduction(input=x, mode=getattr(b.cudnn.reduction_mode, p["mode"]))
    dims = out_dims(p)
    b.output(r, "R", dims, "FLOAT", layout.channels_last(dims), set_dim=True)


def reference(p, data, target):
    x = data.values["X"]
    if p["prologue"] == "mul":
        x = x * data.values["Y"]
    elif p["prologue"] == "abs":
        x = np.abs(x)
    return {"R": Expected(refs.REDUCTION[p["mode"]](x, tuple(p["axes"])))}
