"""NumPy references in float64: the Python package's test references
(bindings/python/tests/numpy_ref.py, numpy_ref_ops.py: convolutions, pointwise modes,
reductions, norms, attention with its masks, the CPU reference's dropout generator) and what
the differential families add on top (grouped convolutions)."""
import os
import sys

import numpy as np

_TESTS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "bindings", "python", "tests")
sys.path.insert(0, os.path.abspath(_TESTS))

import numpy_ref  # noqa: E402
import numpy_ref_ops  # noqa: E402

POINTWISE = numpy_ref.POINTWISE
REDUCTION = numpy_ref.REDUCTION
attention = numpy_ref_ops.attention
attention_backward = numpy_ref_ops.attention_backward
visible = numpy_ref_ops.visible
dropout_keep = numpy_ref_ops.dropout_keep
batchnorm = numpy_ref_ops.batchnorm
instancenorm = numpy_ref_ops.instancenorm
layernorm = numpy_ref.layernorm
rmsnorm = numpy_ref.rmsnorm


def _groups(total, groups):
    step = total // groups
    return [slice(g * step, (g + 1) * step) for g in range(groups)]


def conv_fprop(x, w, pre, post, stride, dilation, groups):
    """Grouped cross-correlation: x [N,C,*], w [K,C/groups,*] -> [N,K,*]."""
    parts = [numpy_ref.conv_fprop(x[:, cs], w[ks], pre, post, stride, dilation)
             for cs, ks in zip(_groups(x.shape[1], groups), _groups(w.shape[0], groups))]
    return np.concatenate(parts, axis=1)


def conv_dgrad(dy, w, x_spatial, pre, post, stride, dilation, groups):
    parts = [numpy_ref.conv_dgrad(dy[:, ks], w[ks], x_spatial, pre, post, stride, dilation)
             for ks in _groups(dy.shape[1], groups)]
    return np.concatenate(parts, axis=1)


def conv_wgrad(x, dy, w_spatial, pre, post, stride, dilation, groups):
    parts = [numpy_ref.conv_wgrad(x[:, cs], dy[:, ks], w_spatial, pre, post, stride, dilation)
             for cs, ks in zip(_groups(x.shape[1], groups), _groups(dy.shape[1], groups))]
    return np.concatenate(parts, axis=0)


def attention_backward_given_o(q, k, v, o, do, scale, mask, bias=None, alibi=False, drop=None):
    """(dQ, dK, dV, dBias) as numpy_ref_ops.attention_backward, but with D = rowsum(dO * O) from
    the O the graph is given (rounded to its data type), as cuDNN and the CPU reference compute
    it: with one visible key, or dropout, the exact O's D cancels dP exactly and the rounded
    O's does not."""
    _, _, p = attention(q, k, v, scale, mask, bias, alibi, drop)
    q, k, v, o, do = (np.asarray(a, dtype=np.float64) for a in (q, k, v, o, do))
    hq, hkv = q.shape[1], k.shape[1]
    rep = hq // hkv
    kr, vr = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
    factor = np.ones_like(p) if drop is None else np.broadcast_to(drop, p.shape)
    dv = np.swapaxes(p * factor, -1, -2) @ do
    dp = (do @ np.swapaxes(vr, -1, -2)) * factor
    ds = p * (dp - (do * o).sum(axis=-1, keepdims=True))
    dq = ds @ kr * scale
    dk = np.swapaxes(ds, -1, -2) @ q * scale
    b = q.shape[0]
    dk = dk.reshape(b, hkv, rep, *dk.shape[2:]).sum(axis=2)
    dv = dv.reshape(b, hkv, rep, *dv.shape[2:]).sum(axis=2)
    return dq, dk, dv, ds.sum(axis=0, keepdims=True)
