"""NumPy reference computations that the CPU-reference tests compare against."""
import math

import numpy as np


def conv_fprop(x, w, pre, post, stride, dilation):
    """Cross-correlation: x [N,C,*S], w [K,C,*R] -> y [N,K,*O]."""
    nsp = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + list(zip(pre, post)))
    out = [(xp.shape[2 + i] - dilation[i] * (w.shape[2 + i] - 1) - 1) // stride[i] + 1
           for i in range(nsp)]
    y = np.zeros((x.shape[0], w.shape[0], *out), dtype=np.float64)
    for r in np.ndindex(*w.shape[2:]):
        sl = tuple(slice(r[i] * dilation[i], r[i] * dilation[i] + stride[i] * (out[i] - 1) + 1,
                         stride[i]) for i in range(nsp))
        patch = xp[(slice(None), slice(None)) + sl]
        y += np.einsum("nc...,kc->nk...", patch, w[(slice(None), slice(None)) + r])
    return y


def conv_dgrad(dy, w, x_spatial, pre, post, stride, dilation):
    """Adjoint of conv_fprop with respect to x."""
    nsp = dy.ndim - 2
    padded = [x_spatial[i] + pre[i] + post[i] for i in range(nsp)]
    dxp = np.zeros((dy.shape[0], w.shape[1], *padded), dtype=np.float64)
    out = dy.shape[2:]
    for r in np.ndindex(*w.shape[2:]):
        sl = tuple(slice(r[i] * dilation[i], r[i] * dilation[i] + stride[i] * (out[i] - 1) + 1,
                         stride[i]) for i in range(nsp))
        dxp[(slice(None), slice(None)) + sl] += np.einsum(
            "nk...,kc->nc...", dy, w[(slice(None), slice(None)) + r])
    crop = tuple(slice(pre[i], pre[i] + x_spatial[i]) for i in range(nsp))
    return dxp[(slice(None), slice(None)) + crop]


def conv_wgrad(x, dy, w_spatial, pre, post, stride, dilation):
    """Adjoint of conv_fprop with respect to w."""
    nsp = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + list(zip(pre, post)))
    out = dy.shape[2:]
    dw = np.zeros((dy.shape[1], x.shape[1], *w_spatial), dtype=np.float64)
    for r in np.ndindex(*w_spatial):
        sl = tuple(slice(r[i] * dilation[i], r[i] * dilation[i] + stride[i] * (out[i] - 1) + 1,
                         stride[i]) for i in range(nsp))
        patch = xp[(slice(None), slice(None)) + sl]
        dw[(slice(None), slice(None)) + r] = np.einsum(
            "nkp,ncp->kc", dy.reshape(dy.shape[0], dy.shape[1], -1),
            patch.reshape(patch.shape[0], patch.shape[1], -1))
    return dw


def sdpa(q, k, v, scale=None, causal=False, bottom_right=False, bias=None):
    """Attention forward in float64; returns (O, stats) with stats the log-sum-exp."""
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    # k and v may have different head counts, each dividing q's.
    k = np.repeat(k, q.shape[1] // k.shape[1], axis=1)
    v = np.repeat(v, q.shape[1] // v.shape[1], axis=1)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    s = q @ np.swapaxes(k, -1, -2) * scale
    if bias is not None:
        s = s + bias
    s_q, s_kv = s.shape[-2], s.shape[-1]
    i = np.arange(s_q)[:, None]
    j = np.arange(s_kv)[None, :]
    if causal:
        s = np.where(j > i, -np.inf, s)
    if bottom_right:
        s = np.where(j > i + s_kv - s_q, -np.inf, s)
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    return (e / total) @ v, m + np.log(total)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _erf(x):
    return np.vectorize(math.erf)(x)


def _gelu_grad(x):
    return 0.5 * (1 + _erf(x / math.sqrt(2))) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def _gelu_tanh(x):
    k = math.sqrt(2 / math.pi)
    return 0.5 * x * (1 + np.tanh(k * (x + 0.044715 * x ** 3)))


def _gelu_tanh_grad(x):
    k = math.sqrt(2 / math.pi)
    t = np.tanh(k * (x + 0.044715 * x ** 3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)


# mode name -> (number of operands, function of float64 arrays)
POINTWISE = {
    "ADD": (2, lambda a, b: a + b),
    "ADD_SQUARE": (2, lambda a, b: a + b * b),
    "SUB": (2, lambda a, b: a - b),
    "MUL": (2, lambda a, b: a * b),
    "DIV": (2, lambda a, b: a / b),
    "MAX": (2, np.fmax),
    "MIN": (2, np.fmin),
    "MOD": (2, np.fmod),
    "POW": (2, np.power),
    "ATAN2": (2, np.arctan2),
    "NEG": (1, np.negative),
    "ABS": (1, np.abs),
    "CEIL": (1, np.ceil),
    "FLOOR": (1, np.floor),
    "RECIPROCAL": (1, lambda a: 1 / a),
    "SQRT": (1, np.sqrt),
    "RSQRT": (1, lambda a: 1 / np.sqrt(a)),
    "EXP": (1, np.exp),
    "LOG": (1, np.log),
    "SIN": (1, np.sin),
    "COS": (1, np.cos),
    "TAN": (1, np.tan),
    "ERF": (1, _erf),
    "IDENTITY": (1, lambda a: a),
    "RELU_FWD": (1, lambda a: np.maximum(a, 0)),
    "TANH_FWD": (1, np.tanh),
    "SIGMOID_FWD": (1, _sigmoid),
    "ELU_FWD": (1, lambda a: np.where(a > 0, a, np.expm1(a))),
    "GELU_FWD": (1, lambda a: 0.5 * a * (1 + _erf(a / math.sqrt(2)))),
    "GELU_APPROX_TANH_FWD": (1, _gelu_tanh),
    "SOFTPLUS_FWD": (1, lambda a: np.log1p(np.exp(a))),
    "SWISH_FWD": (1, lambda a: a * _sigmoid(a)),
    "RELU_BWD": (2, lambda dy, x: np.where(x > 0, dy, 0.0)),
    "TANH_BWD": (2, lambda dy, x: dy * (1 - np.tanh(x) ** 2)),
    "SIGMOID_BWD": (2, lambda dy, x: dy * _sigmoid(x) * (1 - _sigmoid(x))),
    "ELU_BWD": (2, lambda dy, x: np.where(x > 0, dy, dy * np.exp(x))),
    "GELU_BWD": (2, lambda dy, x: dy * _gelu_grad(x)),
    "GELU_APPROX_TANH_BWD": (2, lambda dy, x: dy * _gelu_tanh_grad(x)),
    "SOFTPLUS_BWD": (2, lambda dy, x: dy * _sigmoid(x)),
    "SWISH_BWD": (2, lambda dy, x: dy * (_sigmoid(x) + x * _sigmoid(x) * (1 - _sigmoid(x)))),
    "CMP_EQ": (2, lambda a, b: a == b),
    "CMP_NEQ": (2, lambda a, b: a != b),
    "CMP_GT": (2, lambda a, b: a > b),
    "CMP_GE": (2, lambda a, b: a >= b),
    "CMP_LT": (2, lambda a, b: a < b),
    "CMP_LE": (2, lambda a, b: a <= b),
    "LOGICAL_AND": (2, lambda a, b: (a != 0) & (b != 0)),
    "LOGICAL_OR": (2, lambda a, b: (a != 0) | (b != 0)),
    "LOGICAL_NOT": (1, lambda a: a == 0),
    "BINARY_SELECT": (3, lambda a, b, c: np.where(c != 0, a, b)),
}

REDUCTION = {
    "ADD": lambda x, ax: x.sum(axis=ax, keepdims=True),
    "MUL": lambda x, ax: x.prod(axis=ax, keepdims=True),
    "MIN": lambda x, ax: x.min(axis=ax, keepdims=True),
    "MAX": lambda x, ax: x.max(axis=ax, keepdims=True),
    "AMAX": lambda x, ax: np.abs(x).max(axis=ax, keepdims=True),
    "AVG": lambda x, ax: x.mean(axis=ax, keepdims=True),
    "NORM1": lambda x, ax: np.abs(x).sum(axis=ax, keepdims=True),
    "NORM2": lambda x, ax: np.sqrt((x * x).sum(axis=ax, keepdims=True)),
    "MUL_NO_ZEROS": lambda x, ax: np.where(x == 0, 1.0, x).prod(axis=ax, keepdims=True),
}


def _stat_axes(x):
    return tuple(range(1, x.ndim))


def layernorm(x, scale, bias, eps, zero_centered=False):
    ax = _stat_axes(x)
    mean = x.mean(axis=ax, keepdims=True)
    inv = 1.0 / np.sqrt(((x - mean) ** 2).mean(axis=ax, keepdims=True) + eps)
    g = 1 + scale if zero_centered else scale
    return (x - mean) * inv * g + bias, mean, inv


def rmsnorm(x, scale, bias, eps, zero_centered=False):
    ax = _stat_axes(x)
    inv = 1.0 / np.sqrt((x * x).mean(axis=ax, keepdims=True) + eps)
    g = 1 + scale if zero_centered else scale
    y = x * inv * g
    return (y + bias if bias is not None else y), inv


def layernorm_backward(dy, x, scale, mean, inv):
    ax = _stat_axes(x)
    xhat = (x - mean) * inv
    dscale = (dy * xhat).sum(axis=0, keepdims=True)
    dbias = dy.sum(axis=0, keepdims=True)
    dxhat = dy * scale
    dx = inv * (dxhat - dxhat.mean(axis=ax, keepdims=True)
                - xhat * (dxhat * xhat).mean(axis=ax, keepdims=True))
    return dx, dscale, dbias


def rmsnorm_backward(dy, x, scale, inv):
    ax = _stat_axes(x)
    xhat = x * inv
    dscale = (dy * xhat).sum(axis=0, keepdims=True)
    dbias = dy.sum(axis=0, keepdims=True)
    dxhat = dy * scale
    dx = inv * (dxhat - xhat * (dxhat * xhat).mean(axis=ax, keepdims=True))
    return dx, dscale, dbias


def softmax(x):
    m = x.max(axis=-1, keepdims=True)
    e = np.exp(x - m)
    total = e.sum(axis=-1, keepdims=True)
    return e / total, m + np.log(total)


def sdpa_backward(q, k, v, do, scale, causal=False, bottom_right=False, bias=None):
    """(dQ, dK, dV) in float64, GQA gradients summed over each KV head's query heads."""
    q, k, v, do = (a.astype(np.float64) for a in (q, k, v, do))
    hq, hk, hv = q.shape[1], k.shape[1], v.shape[1]
    kr, vr = np.repeat(k, hq // hk, axis=1), np.repeat(v, hq // hv, axis=1)
    s = q @ np.swapaxes(kr, -1, -2) * scale
    if bias is not None:
        s = s + bias
    s_q, s_kv = s.shape[-2:]
    i = np.arange(s_q)[:, None]
    j = np.arange(s_kv)[None, :]
    if causal:
        s = np.where(j > i, -np.inf, s)
    if bottom_right:
        s = np.where(j > i + s_kv - s_q, -np.inf, s)
    p, _ = softmax(s)
    o = p @ vr
    dv = np.swapaxes(p, -1, -2) @ do
    dp = do @ np.swapaxes(vr, -1, -2)
    ds = p * (dp - (do * o).sum(axis=-1, keepdims=True))
    dq = ds @ kr * scale
    dk = np.swapaxes(ds, -1, -2) @ q * scale
    b = q.shape[0]
    dk = dk.reshape(b, hk, hq // hk, *dk.shape[2:]).sum(axis=2)
    dv = dv.reshape(b, hv, hq // hv, *dv.shape[2:]).sum(axis=2)
    return dq, dk, dv
