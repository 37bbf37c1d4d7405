#!/usr/bin/env python3
"""Graph building in Python on the CPU reference: a chain of N pointwise adds, added,
validated and built (cudnn-frontend's five steps), with default and with given node names.
Linear in N is the target (issue 27: 100,000 nodes in <= 3 s on a 2-core machine);
bindings/python/tests/test_graph_build_scaling.py keeps it from turning quadratic.

  CUDNNFE_LIBRARY=build/libcudnnfe.so PYTHONPATH=bindings/python \\
      python3 bench/bench_python_graph_build.py [N ...]
"""
import sys
import time

import cudnnfe


def chain(n, named):
    """Seconds to add, validate and build a chain of n adds."""
    g = cudnnfe.pygraph(io_data_type=cudnnfe.data_type.FLOAT,
                        compute_data_type=cudnnfe.data_type.FLOAT,
                        target=cudnnfe.target.CPU_REFERENCE)
    x = g.tensor(name="x", dim=[1, 1, 8], stride=[8, 8, 1])
    t0 = time.perf_counter()
    cur = x
    for i in range(n):
        cur = g.add(cur, x, name=f"n{i}") if named else g.add(cur, x)
    t1 = time.perf_counter()
    cur.set_output(True)
    g.validate()
    t2 = time.perf_counter()
    g.build_operation_graph()
    g.create_execution_plans([cudnnfe.heur_mode.A])
    g.check_support()
    g.build_plans()
    t3 = time.perf_counter()
    return t1 - t0, t2 - t1, t3 - t2


def main(argv):
    sizes = [int(a) for a in argv] or [1000, 10000, 100000]
    print(f"{'nodes':>8} {'names':>7} {'add s':>8} {'validate s':>11} {'build s':>8} "
          f"{'total s':>8} {'us/node':>8}")
    for n in sizes:
        for named in (False, True):
            add, validate, build = chain(n, named)
            total = add + validate + build
            print(f"{n:>8} {'given' if named else 'default':>7} {add:8.2f} {validate:11.2f} "
                  f"{build:8.2f} {total:8.2f} {1e6 * total / n:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
