#!/usr/bin/env python3
"""Per-engine evidence for a differential finding (GPU): runs one generated graph on NVIDIA's
cudnn-frontend once for every cuDNN engine that takes it (``create_execution_plan(engine_id)``:
cuDNN with no frontend rule in between) and says, per engine, whether its outputs match the
NumPy reference; then names the plan cudnnfe's heuristics pick. For a wrong output it also
reads the output buffer in other memory layouts (row-major, channels-last, the layout of each
input) and says which, if any, holds the right values: a kernel that ignored the output's
strides shows up that way.

  CUDNNFE_LIBRARY=build/libcudnnfe.so PYTHONPATH=bindings/python:/tmp/site \\
      python3 tests/differential/engines.py conv:63 pointwise:55 ...
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from difftest import case as case_mod  # noqa: E402
from difftest import compare, layout  # noqa: E402
from difftest.builder import Builder  # noqa: E402
from difftest.families import FAMILIES  # noqa: E402
from difftest.impls import CudnnfeGpu, FrontendGpu  # noqa: E402


# --outputs-like NAME: every output set to the memory order of input NAME (a variant that
# tells a kernel ignoring the output's layout from one mishandling the input's)
OUTPUTS_LIKE = None
SWEEP = True


def _graph(impl, fam, params, data):
    g = impl.new_graph(**fam.graph_types(params))
    b = Builder(impl.mod, g, data, bool(params.get("explicit")))
    fam.build(b, params)
    if OUTPUTS_LIKE and OUTPUTS_LIKE in data.bind:
        strides = layout.elem_strides(data.bind[OUTPUTS_LIKE])
        order = sorted(range(len(strides)), key=lambda i: (-strides[i], i))
        for o in b.outputs.values():
            if len(o.dims) == len(order):
                o.strides = layout.order_strides(o.dims, order)
                o.tensor.set_stride(o.strides)
    g.validate()
    g.build_operation_graph()
    return g, b


def _candidate_layouts(dims, data):
    """name -> strides of layouts a kernel might have written instead."""
    out = {"row-major": layout.contiguous(dims)}
    if len(dims) >= 3:
        out["channels-last"] = layout.channels_last(dims)
    for name, array in data.bind.items():
        if array.ndim != len(dims):
            continue
        strides = layout.elem_strides(array)
        order = sorted(range(len(dims)), key=lambda i: (-strides[i], i))
        out[f"like input {name}"] = layout.order_strides(dims, order)
    return out


def _execute(impl, g, b, data, plan=None):
    """{name: (logical float64 values, flat float64 buffer, strides)}; ``plan``: run the
    plan of that index (execute_plan_at_index) instead of the graph's chosen one."""
    pack = {i.tensor: impl.array(data.bind[n], i.by_value) for n, i in b.inputs.items()}
    own = {}
    for n, o in b.outputs.items():
        strides = list(o.tensor.get_stride()) if o.strides is None else o.strides
        own[n] = (impl.empty(o.dims, strides, o.dtype), strides)
    pack.update({b.outputs[n].tensor: a for n, (a, _) in own.items()})
    if plan is None:
        impl.execute(g, pack)
    else:
        ws = impl.torch.empty(max(g.get_workspace_size_plan_at_index(plan), 1),
                              dtype=impl.torch.uint8, device=impl.dev)
        g.execute_plan_at_index(pack, ws, plan, handle=impl.handle)
        impl.torch.cuda.synchronize()
    res = {}
    for n, (a, strides) in own.items():
        span = (layout.span(a.shape, strides),)
        flat = (a.as_strided(span, (1,)) if hasattr(a, "as_strided")  # torch
                else np.lib.stride_tricks.as_strided(a, span, (a.itemsize,)))
        res[n] = (impl.host(a), impl.host(flat), strides)
    return res


def _judge(res, expected, b, data):
    words = []
    for n, (values, flat, strides) in res.items():
        exp = expected.get(n)
        if exp is None or not exp.exact_reference:
            continue
        bad = compare.check(values, exp.values, b.outputs[n].dtype, exp.mask, exp.tolerance)
        if not bad:
            words.append(f"{n} right")
            continue
        words.append(f"{n} WRONG {bad.get('bad')}/{bad.get('compared')} "
                     f"(nan {bad.get('nan')}, at {bad.get('at')} got {bad.get('got')} "
                     f"want {bad.get('want')}, strides {strides})")
        dims = b.outputs[n].dims
        for label, other in _candidate_layouts(dims, data).items():
            if layout.same_layout(dims, other, strides) or layout.span(dims, other) > flat.size:
                continue
            view = layout.strided_view(flat, dims, other)
            if not compare.check(view, exp.values, b.outputs[n].dtype, exp.mask,
                                 exp.tolerance):
                words.append(f"{n}'s buffer holds the right values in the {label} layout "
                             f"{other}")
    return "; ".join(words)


def candidates(impl, fam, p, data, expected):
    """Every plan heuristics A and FALLBACK offer, built and run one by one."""
    try:
        g, b = _graph(impl, fam, p, data)
        g.create_execution_plans([impl.mod.heur_mode.A, impl.mod.heur_mode.FALLBACK])
        g.check_support()
        count = g.get_execution_plan_count()
    except Exception as e:  # noqa: BLE001 - reported
        print(f"   {impl.name} heuristics: {type(e).__name__}: {str(e)[:200]}")
        return
    for i in range(count):
        try:
            g.build_plan_at_index(i)
            name = g.get_plan_name_at_index(i)
            verdict = _judge(_execute(impl, g, b, data, plan=i), expected, b, data)
        except Exception as e:  # noqa: BLE001 - a plan that does not build or run
            name, verdict = f"#{i}", f"not run ({type(e).__name__}: {str(e)[:160]})"
        print(f"   {impl.name} heuristic plan {i} ({name}): {verdict}")


def sweep(family, seed, fe, ours):
    fam = FAMILIES[family]
    case = case_mod.make(family, seed)
    p = case.params
    print(f"== {family} seed {seed}: {p}")
    data = fam.make_inputs(p, np.random.default_rng(seed))
    expected = fam.reference(p, data, "gpu")
    try:
        g, _ = _graph(fe, fam, p, data)
        engines = g.get_engine_count() if SWEEP else 0
    except Exception as e:  # noqa: BLE001 - reported
        print(f"   cudnn-frontend cannot make the graph: {type(e).__name__}: {str(e)[:300]}")
        engines = 0
    for eid in range(engines):
        try:
            g, b = _graph(fe, fam, p, data)
            g.create_execution_plan(eid, {})
            g.check_support()
            g.build_plans()
            name = g.get_plan_name_at_index(0)
        except Exception as e:  # noqa: BLE001 - an engine that does not take the graph
            print(f"   engine {eid}: not built ({type(e).__name__}: {str(e)[:160]})")
            continue
        print(f"   engine {eid} ({name}): {_judge(_execute(fe, g, b, data), expected, b, data)}")
    for impl in (fe, ours):
        candidates(impl, fam, p, data, expected)
    try:
        g, b = _graph(ours, fam, p, data)
        g.create_execution_plans([ours.mod.heur_mode.A, ours.mod.heur_mode.FALLBACK])
        g.check_support()
        g.build_plans()
        name = g.get_plan_name_at_index(0)
        print(f"   cudnnfe ({name}): {_judge(_execute(ours, g, b, data), expected, b, data)}")
    except Exception as e:  # noqa: BLE001 - a refusal is an answer too
        print(f"   cudnnfe: {type(e).__name__}: {str(e)[:300]}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("graphs", nargs="+", help="FAMILY:SEED, e.g. conv:63")
    ap.add_argument("--outputs-like", metavar="INPUT",
                    help="set every output's strides to this input's memory order")
    ap.add_argument("--no-sweep", action="store_true",
                    help="skip the per-engine sweep (heuristic plans and cudnnfe only)")
    args = ap.parse_args(argv)
    global OUTPUTS_LIKE, SWEEP
    OUTPUTS_LIKE, SWEEP = args.outputs_like, not args.no_sweep
    fe, ours = FrontendGpu(), CudnnfeGpu()
    for item in args.graphs:
        family, seed = item.split(":")
        sweep(family, int(seed), fe, ours)
    return 0


if __name__ == "__main__":
    sys.exit(main())
