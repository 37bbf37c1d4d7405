"""One graph on one implementation: build it with the family's builder, run it, and read its
outputs back in two allocations.

* ``own``: each output allocated from the implementation's own ``get_stride()`` once the
  graph is built (what a careful caller does; cudnn-frontend 1.32 reports provisional
  row-major strides between validate and build_operation_graph, so strides that changed
  after validate are recorded as ``stride_drift``);
* ``user``: outputs whose strides the graph inferred allocated the way user code does
  without asking (channels-last for conv outputs, contiguous for matmul, like the input
  for norms and pointwise ops: Output.user_strides), run again on the same built graph.
  Only outputs where the two layouts place elements differently are run this way; this is
  the variant that exposes a wrong stride inference (e.g. a C=1 NHWC input's ambiguous
  strides)."""
import os
import time
import traceback
import warnings

import numpy as np

from . import layout


def _message(exc):
    text = str(exc).strip().replace("\n", " ")
    return f"{type(exc).__name__}: {text[:600]}"


def _read(impl, out, array):
    if out.ragged is None:
        return impl.host(array)
    flat = impl.host(array)
    return unpack_ragged(flat, out.dims, out.strides, out.ragged)


def unpack_ragged(flat, dims, strides, ragged):
    """The logical (padded) values of a packed tensor; rows past each length are NaN."""
    values = np.full(dims, np.nan)
    inner = list(dims[1:])
    for n, (start, rows) in enumerate(zip(ragged.offsets, ragged.lengths)):
        view = layout.strided_view(flat[start:], inner, strides[1:])
        index = [slice(None)] * len(inner)
        index[ragged.row_axis - 1] = slice(0, rows)
        values[n][tuple(index)] = view[tuple(index)]
    return values


def _allocate(impl, out, strides):
    if out.ragged is not None:
        return impl.flat(out.buffer_elements, out.dtype)
    return impl.empty(out.dims, strides, out.dtype)


def run(impl, family, case, data):
    """A dict: status (ok / refused / error), stage, message, times (ms), strides,
    outputs {name: float64 logical}, user_outputs {name: ...}, warnings."""
    rec = {"impl": impl.name, "status": "error", "stage": "construct", "message": "",
           "times": {}, "strides": {}, "dtypes": {}, "outputs": {}, "user_outputs": {},
           "warnings": []}
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            _run(impl, family, case, data, rec)
            rec["status"] = "ok"
        except Exception as e:  # noqa: BLE001 - every failure is a result
            rec["status"] = "refused" if impl.is_refusal(e) else "error"
            rec["message"] = _message(e)
            if rec["status"] == "error":
                rec["traceback"] = traceback.format_exc(limit=6)[-2000:]
    rec["warnings"] = sorted({f"{w.category.__name__}: {str(w.message)[:300]}"
                              for w in caught})
    rec["times"]["total"] = 1e3 * (time.perf_counter() - t0)
    return rec


def _run(impl, family, case, data, rec):
    from .builder import Builder
    p = case.params
    g = impl.new_graph(**family.graph_types(p))
    b = Builder(impl.mod, g, data, bool(p.get("explicit")))
    family.build(b, p)
    rec["dtypes"] = {n: o.dtype for n, o in b.outputs.items()}
    rec["dims"] = {n: o.dims for n, o in b.outputs.items()}
    rec["stage"] = "validate"
    t = time.perf_counter()
    g.validate()
    after_validate = {n: list(o.tensor.get_stride()) for n, o in b.outputs.items()}
    rec["stage"] = "build"
    impl.build(g)
    rec["times"]["build"] = 1e3 * (time.perf_counter() - t)
    strides = {n: list(o.tensor.get_stride()) for n, o in b.outputs.items()}
    rec["strides"] = strides
    rec["stride_drift"] = {n: [after_validate[n], s] for n, s in strides.items()
                           if not layout.same_layout(b.outputs[n].dims, after_validate[n], s)}
    for n, o in b.outputs.items():
        if o.strides is None:
            o.strides = strides[n]
    rec["stage"] = "execute"
    t = time.perf_counter()
    pack = {i.tensor: impl.array(data.bind[n], i.by_value) for n, i in b.inputs.items()}
    own = {n: _allocate(impl, o, o.strides) for n, o in b.outputs.items()}
    bindings = {**pack, **{b.outputs[n].tensor: a for n, a in own.items()}}
    impl.execute(g, bindings)
    # --repeat: the same buffers again, outputs poisoned between calls (a
    # repeated execute may run another way, e.g. replayed from a CUDA graph).
    for _ in range(int(os.environ.get("DIFFTEST_REPEAT", "1")) - 1):
        for a in own.values():
            impl.poison(a)
        impl.execute(g, bindings)
    rec["outputs"] = {n: _read(impl, b.outputs[n], a) for n, a in own.items()}
    rec["times"]["execute"] = 1e3 * (time.perf_counter() - t)
    differ = [n for n, o in b.outputs.items()
              if o.ragged is None and o.user_strides is not None
              and not layout.same_layout(o.dims, o.strides, o.user_strides)]
    rec["user_layout_outputs"] = differ
    if differ:
        rec["stage"] = "execute (user layout)"
        user = {n: impl.empty(b.outputs[n].dims, b.outputs[n].user_strides,
                              b.outputs[n].dtype) for n in differ}
        outs = {b.outputs[n].tensor: user.get(n, own[n]) for n in b.outputs}
        impl.execute(g, {**pack, **outs})
        rec["user_outputs"] = {n: impl.host(a) for n, a in user.items()}
