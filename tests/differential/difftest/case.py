"""One generated graph: its family, seed and parameters, and its evaluation on every
implementation (runner), against the reference and between implementations (compare), with a
verdict for the table."""
import random
import time
from dataclasses import dataclass

import numpy as np

from . import compare, known, runner
from .families import FAMILIES
from .impls import CUDNNFE, FRONTEND

# Every DEGENERATE_EVERY-th seed makes a graph with degenerate dimensions on purpose (size-1
# N / C / K / H / W / M / N / K / s_q ..., and ambiguous strides such as C=1 channels-last).
DEGENERATE_EVERY = 4

VERDICTS = ("agree", "mismatch", "explained", "refused-cudnnfe", "refused-frontend",
            "refused-both", "error")


@dataclass
class Case:
    family: str
    seed: int
    params: dict


def make(family, seed):
    fam = FAMILIES[family]
    rng = random.Random(f"{family}:{seed}")
    degenerate = seed % DEGENERATE_EVERY == 0
    params = fam.generate(rng, degenerate)
    params["degenerate"] = degenerate
    return Case(family, seed, params)


def repro(case, target):
    return (f"python3 tests/differential/run.py --family {case.family} --seed {case.seed} "
            f"--count 1 --target {target}")


def evaluate(case, impls, skipped, target):
    """The result of one graph, as a JSON-able dict (no arrays)."""
    fam = FAMILIES[case.family]
    t0 = time.perf_counter()
    data = fam.make_inputs(case.params, np.random.default_rng(case.seed))
    records = {impl.name: runner.run(impl, fam, case, data) for impl in impls}
    expected = None
    t_ref = time.perf_counter()
    if any(r["status"] == "ok" for r in records.values()):
        expected = fam.reference(case.params, data, target)
    t_ref = 1e3 * (time.perf_counter() - t_ref)
    findings = compare.compare_case(expected, records, target)
    for f in findings:
        f["explained"] = known.explain(case.family, case.params, f)
    for rec in records.values():
        rec.pop("outputs", None)
        rec.pop("user_outputs", None)
    for name, reason in skipped.items():
        records[name] = {"impl": name, "status": "skipped", "message": reason}
    return {"family": case.family, "seed": case.seed, "params": case.params,
            "records": records, "findings": findings,
            "verdict": verdict(records, findings), "repro": repro(case, target),
            "ms": {"total": 1e3 * (time.perf_counter() - t0), "reference": t_ref}}


def verdict(records, findings):
    status = {name: r["status"] for name, r in records.items()}
    if "error" in status.values():
        return "error"
    if any(not f["explained"] for f in findings):
        return "mismatch"
    if findings:
        return "explained"
    fe = status.get(FRONTEND)
    ours = status.get(CUDNNFE)
    if ours == "refused" and fe == "refused":
        return "refused-both"
    if ours == "refused":
        return "refused-cudnnfe"
    if fe == "refused":
        return "refused-frontend"
    return "agree"
