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
