"""Pointwise chains: 1 to 5 steps on x (rank 2 to 5, any memory order), each a unary mode, a
binary mode with a broadcast operand, a comparison feeding binary_select, or a domain-safe
abs -> add -> sqrt / log / rsqrt / reciprocal; sometimes an intermediate is an output too.
User code allocates an output like the input it follows (``empty_like``; see follows()).

The generator keeps a bound on |value| so that no step overflows or leaves its domain."""
import math

import numpy as np

from .. import layout, refs
from ..builder import Data, Expected
from . import common

NAME = "pointwise"
# unary op -> (reference mode, new bound from the old one; None: needs bound <= 4)
UNARY = {
    "neg": ("NEG", lambda b: b), "abs": ("ABS", lambda b: b),
    "identity": ("IDENTITY", lambda b: b), "relu": ("RELU_FWD", lambda b: b),
    "tanh": ("TANH_FWD", lambda b: 1.0), "sigmoid": ("SIGMOID_FWD", lambda b: 1.0),
    "sin": ("SIN", lambda b: 1.0), "cos": ("COS", lambda b: 1.0), "erf": ("ERF", lambda b: 1.0),
    "elu": ("ELU_FWD", lambda b: b), "gelu": ("GELU_FWD", lambda b: b),
    "gelu_approx_tanh": ("GELU_APPROX_TANH_FWD", lambda b: b),
    "softplus": ("SOFTPLUS_FWD", lambda b: b + 1), "swish": ("SWISH_FWD", lambda b: b),
    "exp": ("EXP", None),
}
FIRST_ONLY = {"ceil": "CEIL", "floor": "FLOOR"}  # exact on the input's own values only
BINARY = {"add": "ADD", "sub": "SUB", "mul": "MUL", "div": "DIV", "max": "MAX", "min": "MIN",
          "add_square": "ADD_SQUARE"}
COMPARE = {"cmp_gt": "CMP_GT", "cmp_ge": "CMP_GE", "cmp_lt": "CMP_LT", "cmp_le": "CMP_LE"}
SAFE = {"sqrt": "SQRT", "log": "LOG", "rsqrt": "RSQRT", "reciprocal": "RECIPROCAL"}


def _dims(rng, rank, degenerate):
    dims = [rng.randint(1, 12) for _ in range(rank)]
    if degenerate:
        for i in rng.sample(range(rank), rng.randint(1, max(1, rank - 1))):
            dims[i] = 1
    while math.prod(dims) > 40000:
        dims[dims.index(max(dims))] //= 2
    return dims


def _order(rng, rank):
    r = rng.random()
    if r < 0.5:
        return list(range(rank))
    if r < 0.8 and rank >= 3:
        return layout.channels_last_order(rank)
    return rng.sample(range(rank), rank)


def _broadcast(rng, dims):
    return [1 if rng.random() < 0.4 else d for d in dims]


def _step(rng, bound, first, last, dims, k):
    r = rng.random()
    if first and r < 0.15:
        return {"kind": "unary", "op": rng.choice(sorted(FIRST_ONLY))}, bound
    if bound > 100:
        return {"kind": "unary", "op": rng.choice(["tanh", "sigmoid", "sin"])}, 1.0
    if r < 0.35:
        ops = [o for o, (_, f) in UNARY.items() if f is not None or bound <= 4]
        op = rng.choice(sorted(ops))
        f = UNARY[op][1]
        return {"kind": "unary", "op": op}, (math.exp(bound) if f is None else f(bound))
    if r < 0.75:
        op = rng.choice(sorted(BINARY))
        swap = not last and rng.random() < 0.2
        grow = {"add": bound + 3, "sub": bound + 3, "mul": bound * 3, "div": bound * 2,
                "max": max(bound, 3), "min": max(bound, 3), "add_square": bound + 9}[op]
        if swap and op == "div":
            op, grow = "mul", bound * 3  # keep divisors away from 0
        return {"kind": "binary", "op": op, "operand": f"I{k}", "swap": swap,
                "dims": _broadcast(rng, dims), "order": rng.random() < 0.5}, grow
    if r < 0.88:
        return {"kind": "select", "op": rng.choice(sorted(COMPARE)), "operand": f"I{k}",
                "other": f"J{k}", "dims": _broadcast(rng, dims),
                "order": rng.random() < 0.5}, max(bound, 3)
    op = rng.choice(sorted(SAFE))
    new = {"sqrt": math.sqrt(bound + 2), "log": math.log(bound + 2), "rsqrt": 1.0,
           "reciprocal": 1.0}[op]
    return {"kind": "safe", "op": op, "operand": f"I{k}",
            "dims": [1] * len(dims), "order": False}, new


def generate(rng, degenerate):
    rank = rng.choice([2, 3, 4, 4, 4, 5])
    dims = _dims(rng, rank, degenerate)
    steps, bound = [], 4.5
    n = rng.randint(1, 5)
    for k in range(n):
        step, bound = _step(rng, bound, k == 0, k == n - 1, dims, k)
        steps.append(step)
    return {"dims": dims, "order": _order(rng, rank), "steps": steps,
            "dtype": common.io_dtype(rng),
            "tap": rng.randint(0, n - 2) if n > 1 and rng.random() < 0.3 else None,
            "explicit": common.explicit(rng)}


def graph_types(p):
    return common.types(p["dtype"])


def _operand_values(nrng, step):
    dims = step["dims"]
    if step["kind"] == "safe":
        return nrng.uniform(1.0, 2.0, dims)
    if step["op"] in ("div",):
        mag = nrng.uniform(0.5, 2.0, dims)
        return np.where(nrng.random(dims) < 0.5, -mag, mag)
    return layout.normals(nrng, dims)


def make_inputs(p, nrng):
    data = Data()
    x = layout.rounded(np.clip(layout.normals(nrng, p["dims"], 1.5), -4.5, 4.5), p["dtype"])
    data.add("X", layout.stored(x, p["order"], p["dtype"]), x)
    for step in p["steps"]:
        if step["kind"] == "unary":
            continue
        order = p["order"] if step["order"] else list(range(len(p["dims"])))
        names = [step["operand"]] + ([step["other"]] if step["kind"] == "select" else [])
        for name in names:
            v = layout.rounded(_operand_values(nrng, step), p["dtype"])
            data.add(name, layout.stored(v, order, p["dtype"]), v)
    return data


def follows(p, upto):
    """The input whose strides the value after step ``upto`` takes by cudnn-frontend's rule
    (a pointwise output takes the strides of its first operand of the output's dims): x,
    unless a swapped binary step put a full-size operand first."""
    name = "X"
    for step in p["steps"][:upto + 1]:
        if step["kind"] == "binary" and step["swap"] and step["dims"] == p["dims"]:
            name = step["operand"]
    return name


def build(b, p):
    g = b.g
    cur = b.tensor("X")

    def like(k):
        return layout.elem_strides(b.data.bind[follows(p, k)])

    for k, step in enumerate(p["steps"]):
        kind, op = step["kind"], step["op"]
        if kind == "unary":
            cur = getattr(g, op)(cur)
        elif kind == "binary":
            other = b.tensor(step["operand"])
            cur = getattr(g, op)(*((other, cur) if step["swap"] else (cur, other)))
        elif kind == "select":
            mask = getattr(g, op)(cur, b.tensor(step["operand"]))
            mask.set_data_type(b.dtype("BOOLEAN"))
            cur = g.binary_select(cur, b.tensor(step["other"]), mask)
        else:
            cur = getattr(g, op)(g.add(g.abs(cur), b.tensor(step["operand"])))
        if k == p["tap"]:
            b.output(cur, "T", p["dims"], "FLOAT", like(k))
    b.output(cur, "Y", p["dims"], p["dtype"], like(len(p["steps"]) - 1))


def reference(p, data, target):
    v = data.values
    cur = v["X"]
    out = {}
    for k, step in enumerate(p["steps"]):
        kind, op = step["kind"], step["op"]
        if kind == "unary":
            mode = FIRST_ONLY.get(op) or UNARY[op][0]
            cur = refs.POINTWISE[mode][1](cur)
        elif kind == "binary":
            a, c = (v[step["operand"]], cur) if step["swap"] else (cur, v[step["operand"]])
            cur = refs.POINTWISE[BINARY[op]][1](a, c)
        elif kind == "select":
            mask = refs.POINTWISE[COMPARE[op]][1](cur, v[step["operand"]])
            cur = np.where(mask, cur, v[step["other"]])
        else:
            cur = refs.POINTWISE[SAFE[op]][1](np.abs(cur) + v[step["operand"]])
        cur = np.broadcast_to(cur, p["dims"]).astype(np.float64)
        if k == p["tap"]:
            out["T"] = Expected(cur.copy())
    out["Y"] = Expected(cur)
    return out
