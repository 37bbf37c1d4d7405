"""Building and running small graphs on the CPU reference with NumPy (shared by the tests
of the attention options, the norms and the layout / resampling ops)."""
import numpy as np

import cudnnfe
from cudnnfe import data_type

CPU = cudnnfe.target.CPU_REFERENCE
F32 = dict(io_data_type=data_type.FLOAT, intermediate_data_type=data_type.FLOAT,
           compute_data_type=data_type.FLOAT)


def graph(**kw):
    for k, v in F32.items():
        kw.setdefault(k, v)
    kw.setdefault("target", CPU)
    return cudnnfe.pygraph(**kw)


def alloc(t, fill=np.nan):
    """An array laid out as tensor t says (dims, strides, dtype), pre-filled with ``fill``
    (NaN for floats, so that an element the op does not write shows)."""
    dims, strides = t.get_dim(), t.get_stride()
    dt = cudnnfe._arrays.numpy_dtype(t.get_data_type())
    span = 1 + sum((d - 1) * s for d, s in zip(dims, strides))
    buf = np.full(span, fill if np.issubdtype(dt, np.floating) else 0, dtype=dt)
    return np.lib.stride_tricks.as_strided(buf, dims, [s * dt.itemsize for s in strides])


def run(g, inputs, outputs, **build_kw):
    """Build g for the CPU, bind inputs (tensor -> array), return the outputs' arrays."""
    if not g.is_built():
        g.build(**build_kw)
    assert g.get_target() == CPU
    outs = [alloc(t) for t in outputs]
    pack = dict(inputs)
    pack.update(zip(outputs, outs))
    g.execute(pack, None)
    return outs


def close(actual, expected, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(actual, dtype=np.float64), expected, rtol=rtol,
                               atol=atol)
