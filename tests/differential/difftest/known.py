"""Known cuDNN / cudnn-frontend defects: findings they explain are reported as "explained",
with the reason, instead of as mismatches (never silently dropped).

Each entry: family, a predicate over (case params, finding), and the reason with a
reproduction (the run.py line and what was seen). Entries are added only with evidence from
a GPU run (one NVIDIA H200, cuDNN 9.19.0, cudnn-frontend 1.32.0; per-engine evidence from
``engines.py``, pattern tables from ``probe_pointwise.py``). cudnnfe's own bugs are never
listed here: they are fixed. A pattern cudnnfe refuses or routes around (docs/refusals.md,
class 3) is listed for cudnn-frontend only, so a cudnnfe finding of it stays a mismatch.
"""
from typing import Callable, List, NamedTuple


class Known(NamedTuple):
    family: str
    applies: Callable[[dict, dict], bool]  # (params, finding) -> explained?
    reason: str


def _frontend(finding):
    """A finding about cudnn-frontend's output (against the reference or against cudnnfe)."""
    return finding["impl"] in ("cudnn-frontend", "cudnnfe vs cudnn-frontend",
                               "cudnn-frontend vs cudnnfe")


def _pointwise_operands(p):
    return [s["dims"] for s in p["steps"] if s.get("dims")]


def _innermost(dims, order):
    """The innermost dim larger than 1 of dims stored in ``order`` (outermost first)."""
    larger = [d for d in order if dims[d] > 1]
    return larger[-1] if larger else None


def _first_dim_innermost(p):
    dims = p["dims"]
    return (len(dims) >= 3 and sum(d > 1 for d in dims) >= 2
            and _innermost(dims, p["order"]) == 0)


def _two_dim_broadcast_row_major(p):
    dims = p["dims"]
    if len(dims) < 3 or dims[-1] == 1 or p["order"][-1] != len(dims) - 1:
        return False
    for b in _pointwise_operands(p):
        if all(x == 1 for x in b):
            continue
        if sum(1 for x, d in zip(b, dims) if x == 1 and d > 1) >= 2:
            return True
    return False


def _size1_middle_dim_broadcast(p):
    dims = p["dims"]
    return (len(dims) == 3 and dims[0] > 1 and dims[1] == 1 and dims[2] > 1
            and any(b[0] > 1 and b[1] == 1 and b[2] == 1 for b in _pointwise_operands(p)))


KNOWN: List[Known] = [
    Known("pointwise",
          lambda p, f: _frontend(f) and len(p["dims"]) == 2,
          "cuDNN 9.19's pointwise engine writes only part of a rank-2 output; cudnn-frontend "
          "hands rank-2 tensors to cuDNN as they are (cudnnfe lowers them as rank 3 and is "
          "right). probe_pointwise.py: all 22 rank-2 patterns wrong on cudnn-frontend; e.g. "
          "run.py --family pointwise --seed 23 --count 1 --target gpu"),
    Known("pointwise",
          lambda p, f: _frontend(f) and (_first_dim_innermost(p)
                                         or _two_dim_broadcast_row_major(p)),
          "cuDNN 9.19 computes pointwise-only graphs wrongly when the output's first dim is "
          "innermost or an input broadcasts along two or more (not all) dims of a row-major "
          "output (probe_pointwise.py; every engine configuration, engines.py); cudnn-frontend "
          "has no check, cudnnfe refuses them (docs/refusals.md). e.g. run.py --family "
          "pointwise --seed 55 / 635 --count 1 --target gpu"),
    Known("pointwise",
          lambda p, f: _size1_middle_dim_broadcast(p),
          "cuDNN 9.19 computes a pointwise-only graph wrongly whose rank-3 output has a size-1 "
          "middle dim and an input [d,1,1] (ambiguous strides: two size-1 dims), with every "
          "engine configuration, through both frontends (engines.py pointwise:414 / :624); "
          "too few cases to tell the pattern from those cuDNN computes right, so cudnnfe does "
          "not refuse it yet. run.py --family pointwise --seed 414 --count 1 --target gpu"),
    Known("conv",
          lambda p, f: (_frontend(f) and p["op"] == "fprop" and p["layout"] == "NCHW"
                        and p["epilogue"] == "relu"),
          "cuDNN 9.19's engine 7 with kernel 29 (eng7_k24=29, the heuristics' first choice) "
          "fuses NCHW conv_fprop + ReLU wrongly, and so does engine 4 with every kernel; "
          "engine 7's kernels 21, 22 and default are right (engines.py conv:122 / :394); "
          "cudnn-frontend builds them, cudnnfe skips them. run.py --family conv --seed 122 "
          "--count 1 --target gpu"),
    Known("matmul",
          lambda p, f: (_frontend(f) and p["M"] == 1 and p["N"] == 1
                        and (p["bias"] != "none" or p["activation"] != "none")),
          "cuDNN 9.19's engine 0 computes a batch of dot products (M = N = 1) with a fused "
          "bias and activation wrongly; engine 7 is right (engines.py matmul:116 / :848); "
          "cudnn-frontend builds engine 0 (its heuristics' first choice), cudnnfe skips it. "
          "run.py --family matmul --seed 116 --count 1 --target gpu"),
    Known("conv",
          lambda p, f: (p["op"] == "wgrad" and p["layout"] == "NCHW" and len(p["spatial"]) == 3
                        and p["N"] == 4 and p["C"] == 8 and p["K"] == 6
                        and p["spatial"] == [6, 3, 6] and p["pre"] == [0, 0, 1]),
          "cuDNN 9.19's engines 1 and 20 (eng20_k2=6_k3=0 is the heuristics' first choice) "
          "compute this 3-D NCHW wgrad with asymmetric padding wrongly; engines 0, 9, 37, 65, "
          "67 are right (engines.py conv:670). One case among 25 such graphs, so cudnnfe has "
          "no rule for it yet. run.py --family conv --seed 670 --count 1 --target gpu"),
    Known("reduction",
          lambda p, f: (p["dims"] == [8, 2, 9] and p["order"] == [0, 2, 1]
                        and p["axes"] == [1] and p["mode"] == "AMAX"),
          "cuDNN 9.19's reduction engine (eng1, all five kernels offered) computes AMAX over "
          "the innermost size-2 axis of this layout wrongly, through both frontends "
          "(engines.py reduction:213); 31 other reductions over an innermost axis of a "
          "permuted layout were right, so cudnnfe has no rule for it yet. run.py --family "
          "reduction --seed 213 --count 1 --target gpu"),
]


def explain(family, params, finding):
    """The reason a known defect gives for a finding, or None."""
    for k in KNOWN:
        if k.family == family and k.applies(params, finding):
            return k.reason
    return None
