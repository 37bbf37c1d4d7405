#!/usr/bin/env python3
"""Which pointwise broadcast patterns cuDNN computes right (GPU): ``Y = X + B`` (alone) and
``Y = neg(X) + B`` (after another pointwise op) over every memory order of X's rank-2..4 dims
and every set of broadcast dims of B (B row-major or in X's order), plus unary-only graphs,
each run on NVIDIA's cudnn-frontend (cuDNN with no frontend rule in between) and on cudnnfe,
compared with NumPy. Prints the patterns either gets wrong, and cudnnfe's refusals, so that
a class-3 rule (docs/refusals.md) covers exactly what cuDNN computes wrong.

  CUDNNFE_LIBRARY=build/libcudnnfe.so PYTHONPATH=bindings/python:/tmp/site \\
      python3 tests/differential/probe_pointwise.py [--jobs 8]
"""
import argparse
import itertools
import multiprocessing as mp
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from difftest import compare, layout  # noqa: E402

DIMS = {2: [6, 10], 3: [4, 6, 10], 4: [3, 4, 5, 6]}


def patterns(zero=False):
    """Every pattern; with ``zero``, the binary ones of rank 3-4 again with B shown as a
    stride-0 view at the output's dims (how a frontend could present a broadcast)."""
    if zero:
        return [dict(p, zero=True) for p in patterns() if p["kind"] == "binary"
                and p["order"] in ([0, 1, 2], [1, 0, 2], [1, 2, 0])]
    out = []
    for rank, dims in DIMS.items():
        orders = sorted(set(itertools.permutations(range(rank))))
        if rank == 4:  # row-major, channels-last, reversed and three more
            orders = [o for i, o in enumerate(orders) if i in (0, 5, 9, 14, 18, 23)]
        for order in orders:
            out.append({"dims": dims, "order": list(order), "kind": "unary"})
            for mask in itertools.product([False, True], repeat=rank):
                if not any(mask):
                    continue
                bdims = [1 if m else d for m, d in zip(mask, dims)]
                for chain in (False, True):
                    for like_x in (False, True):
                        if like_x and list(order) == list(range(rank)):
                            continue
                        out.append({"dims": dims, "order": list(order), "kind": "binary",
                                    "b": bdims, "chain": chain, "b_like_x": like_x})
    return out


def _run(impl, p):
    nrng = np.random.default_rng(len(str(p)))
    x = layout.rounded(layout.normals(nrng, p["dims"]), "FLOAT")
    g = impl.new_graph("FLOAT")
    tx = g.tensor(name="X", dim=p["dims"], stride=layout.order_strides(p["dims"], p["order"]),
                  data_type=impl.mod.data_type.FLOAT)
    pack = {tx: impl.array(layout.stored(x, p["order"], "FLOAT"))}
    if p["kind"] == "unary":
        y = g.neg(tx)
        want = -x
    else:
        bv = layout.rounded(layout.normals(nrng, p["b"]), "FLOAT")
        border = p["order"] if p["b_like_x"] else list(range(len(p["dims"])))
        bstrides = layout.order_strides(p["b"], border)
        if p.get("zero"):  # B shown at the output's dims, stride 0 along broadcast dims
            tb = g.tensor(name="B", dim=p["dims"], data_type=impl.mod.data_type.FLOAT,
                          stride=[0 if b == 1 and d > 1 else s
                                  for b, d, s in zip(p["b"], p["dims"], bstrides)])
            stored = impl.array(layout.stored(bv, border, "FLOAT"))
            pack[tb] = stored.as_strided(tuple(p["dims"]), tuple(tb.get_stride()))
        else:
            tb = g.tensor(name="B", dim=p["b"], stride=bstrides,
                          data_type=impl.mod.data_type.FLOAT)
            pack[tb] = impl.array(layout.stored(bv, border, "FLOAT"))
        y = g.add(g.neg(tx) if p["chain"] else tx, tb)
        want = (-x if p["chain"] else x) + bv
    ystrides = layout.order_strides(p["dims"], p["order"])
    y.set_output(True).set_data_type(impl.mod.data_type.FLOAT).set_stride(ystrides)
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([impl.mod.heur_mode.A, impl.mod.heur_mode.FALLBACK])
    g.check_support()
    g.build_plans()
    out = impl.empty(p["dims"], ystrides, "FLOAT")
    impl.execute(g, {**pack, y: out})
    bad = compare.check(impl.host(out), np.broadcast_to(want, p["dims"]), "FLOAT")
    return "right" if bad is None else f"WRONG {bad['bad']}/{bad['compared']} nan {bad['nan']}"


_IMPLS = None


def _init():
    global _IMPLS
    from difftest.impls import CudnnfeGpu, FrontendGpu
    _IMPLS = (FrontendGpu(), CudnnfeGpu())


def _one(p):
    res = []
    for impl in _IMPLS:
        try:
            res.append(_run(impl, p))
        except Exception as e:  # noqa: BLE001 - a refusal is an answer
            kind = "refused" if impl.is_refusal(e) else "error"
            res.append(f"{kind}: {type(e).__name__}: {str(e)[:120]}")
    return p, res


def describe(p):
    s = f"rank {len(p['dims'])} order {p['order']}"
    if p["kind"] == "unary":
        return s + " neg(X)"
    return (s + f" {'neg(X)' if p['chain'] else 'X'} + B{p['b']}"
            f" ({'in X order' if p['b_like_x'] else 'row-major'})"
            + (" as a stride-0 view" if p.get("zero") else ""))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--zero-stride", action="store_true",
                    help="the broadcast patterns with B as a stride-0 view instead")
    args = ap.parse_args(argv)
    todo = patterns(args.zero_stride)
    ctx = mp.get_context("spawn")
    with ctx.Pool(args.jobs, initializer=_init) as pool:
        results = pool.map(_one, todo, chunksize=4)
    counts = {}
    for p, (fe, ours) in results:
        key = (fe.split(":")[0].split(" ")[0], ours.split(":")[0].split(" ")[0])
        counts[key] = counts.get(key, 0) + 1
        if fe != "right" or ours != "right":
            print(f"{describe(p)}: cudnn-frontend {fe} | cudnnfe {ours}")
    print(f"\n{len(results)} patterns; (cudnn-frontend, cudnnfe) -> count:")
    for key, n in sorted(counts.items()):
        print(f"  {key}: {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
