#!/usr/bin/env python3
"""Differential tester: seeded random graphs written once in cudnn-frontend's Python API, run
on cudnnfe and (on the GPU) on NVIDIA's cudnn-frontend, compared with each other and with NumPy
references. See tests/differential/README.md.

  CPU (no GPU, no cudnn-frontend): cudnnfe's CPU reference executor vs NumPy
    CUDNNFE_LIBRARY=build/libcudnnfe.so PYTHONPATH=bindings/python \\
        python3 tests/differential/run.py --target cpu --count 300
  GPU: cudnnfe and cudnn-frontend on the same GPU, each vs NumPy and vs each other
    CUDNNFE_LIBRARY=build/libcudnnfe.so PYTHONPATH=bindings/python:/tmp/site \\
        python3 tests/differential/run.py --target gpu --count 5000 --jobs 16 --out r.json
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from difftest import report  # noqa: E402
from difftest.families import FAMILIES  # noqa: E402


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--count", type=int, default=60, help="graphs in all (default 60)")
    ap.add_argument("--seed", type=int, default=1,
                    help="first seed; family f's k-th graph has seed SEED + k (default 1)")
    ap.add_argument("--family", default="all",
                    help="comma-separated families, or all: " + ",".join(FAMILIES))
    ap.add_argument("--jobs", type=int, default=0,
                    help="worker processes (default: the CPU count; 1 runs inline)")
    ap.add_argument("--out", help="write every result (params, statuses, findings) as JSON")
    ap.add_argument("--expect-clean", action="store_true",
                    help="exit 1 on any unexplained mismatch or error")
    ap.add_argument("--ignore-user-layout", action="store_true",
                    help="with --expect-clean: mismatches of user-allocated outputs (no "
                         "set_stride) are reported but do not fail the run")
    ap.add_argument("--no-frontend", action="store_true",
                    help="GPU target: run cudnnfe only")
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="seconds one graph may take before its worker is killed (default 300)")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="seconds after which no more graphs start; those finished are "
                         "reported (keeps a run inside a command's time limit)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="execute each graph this many times on the same buffers, outputs "
                         "overwritten with NaN between calls; the last results are compared "
                         "(checks execute replay, docs/plans.md)")
    ap.add_argument("--list", type=int, default=100,
                    help="findings listed per kind (default 100; --out has all)")
    args = ap.parse_args(argv)
    fams = list(FAMILIES) if args.family == "all" else args.family.split(",")
    bad = [f for f in fams if f not in FAMILIES]
    if bad:
        ap.error(f"unknown family {', '.join(bad)}; families: {', '.join(FAMILIES)}")
    if args.count < 1:
        ap.error("--count must be >= 1")
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")
    os.environ["DIFFTEST_REPEAT"] = str(args.repeat)  # read by the workers' runner
    args.families = fams
    return args


def items(args):
    """(index, family, seed): graph i is family i % F with seed SEED + i // F."""
    n = len(args.families)
    return [(i, args.families[i % n], args.seed + i // n) for i in range(args.count)]


def failing(result, ignore_user_layout):
    """An error, or a mismatch not explained (nor, if asked, only of user-allocated outputs)."""
    if result["verdict"] == "error":
        return True
    return any(not f["explained"] and not (ignore_user_layout and f["variant"] == "user-layout")
               for f in result["findings"])


def main(argv=None):
    args = parse(argv)
    if args.target == "gpu":
        from difftest.impls import gpu_reason
        reason = gpu_reason()
        if reason:
            print(f"cannot run --target gpu: {reason}", file=sys.stderr)
            return 2
    jobs = args.jobs or os.cpu_count() or 1
    jobs = max(1, min(jobs, args.count))
    results = []
    t0 = time.perf_counter()
    deadline = None if args.time_limit is None else time.monotonic() + args.time_limit
    work = items(args)
    if jobs == 1:
        from difftest.pool import run_inline
        versions, skipped = run_inline(work, args.target, not args.no_frontend, results.append,
                                       deadline)
    else:
        from difftest.pool import run_pool
        try:
            versions, skipped = run_pool(work, args.target, not args.no_frontend, jobs,
                                         args.timeout, results.append, deadline)
        except RuntimeError as e:
            print(f"cannot run: {e}", file=sys.stderr)
            return 2
    wall = time.perf_counter() - t0
    results.sort(key=lambda r: r["index"])
    print(f"target {args.target}; implementations: {versions}")
    for name, why in (skipped or {}).items():
        print(f"{name} column skipped: {why}")
    print()
    if len(results) < len(work):
        print(f"--time-limit {args.time_limit:g} s reached: {len(results)} of {len(work)} "
              "graphs ran (the graphs of the table)")
    print(report.table(results))
    print(report.findings(results, args.list))
    print(report.layout_notes(results))
    print(report.timing(results, wall, jobs))
    runs = sum(1 for r in results for rec in r["records"].values() if rec["status"] != "skipped")
    print(f"checked {len(results)} graphs ({runs} implementation runs)")
    if args.out:
        report.write_json(args.out, results, {"argv": sys.argv, "versions": versions,
                                              "skipped": skipped, "wall_s": wall,
                                              "jobs": jobs})
    unclean = [r for r in results if failing(r, args.ignore_user_layout)]
    if args.expect_clean and unclean:
        print(f"--expect-clean: {len(unclean)} graph(s) with unexplained mismatches or errors")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
