"""NumPy references for the attention options, FP8 attention, batch / instance / adaptive
layer norms, pooling / upsampling and the CPU reference's random numbers.

Straightforward float64 computations written from the definitions in
docs/attention.md, docs/layout-ops.md and the C header, independent of the
library's code.
"""
import math

import numpy as np

# ---------------------------------------------------------------------------
# SplitMix64's finalizer and the CPU reference's documented generators
# ---------------------------------------------------------------------------

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def mix(z):
    z = np.asarray(z, dtype=np.uint64).copy()
    with np.errstate(over="ignore"):
        z ^= z >> np.uint64(30)
        z *= _M1
        z ^= z >> np.uint64(27)
        z *= _M2
        z ^= z >> np.uint64(31)
    return z


def _u64(value):
    return np.asarray(np.int64(value)).view(np.uint64)


def dropout_keep(shape, p, seed, offset):
    """docs/attention.md: element (n, h, i, j) is kept iff (x >> 11) * 2^-53 >= p."""
    linear = np.arange(math.prod(shape), dtype=np.uint64).reshape(shape)
    x = mix(mix(mix(linear) ^ _u64(offset)) ^ _u64(seed))
    return (x >> np.uint64(11)).astype(np.float64) * 2.0 ** -53 >= p


def _uniform(seed, counters):
    with np.errstate(over="ignore"):
        word = mix(mix(_u64(seed)) + (counters + np.uint64(1)) * _GOLDEN)
    return ((word >> np.uint64(11)).astype(np.float64) + 0.5) / 2.0 ** 53


def rng(shape, distribution, seed, offset=0, p=0.5, lo=0.0, hi=1.0, mean=0.0, std=1.0):
    """docs/layout-ops.md: the CPU reference's counter-based generator."""
    k = np.arange(math.prod(shape), dtype=np.uint64) + _u64(offset)
    with np.errstate(over="ignore"):
        u0 = _uniform(seed, np.uint64(2) * k)
        u1 = _uniform(seed, np.uint64(2) * k + np.uint64(1))
    if distribution == "BERNOULLI":
        out = (u0 < p).astype(np.float64)
    elif distribution == "UNIFORM":
        out = lo + (hi - lo) * u0
    else:
        out = mean + std * np.sqrt(-2.0 * np.log(u0)) * np.cos(2.0 * math.pi * u1)
    return out.reshape(shape)


# ---------------------------------------------------------------------------
# Attention with its options
# ---------------------------------------------------------------------------

def alibi_slopes(h_q):
    n = 1 << (h_q.bit_length() - 1)
    return np.array([2.0 ** (-8.0 * (h + 1) / n) if h < n else
                     2.0 ** (-4.0 * (2 * (h - n) + 1) / n) for h in range(h_q)])


def visible(b, s_q, s_kv, seq_q=None, seq_kv=None, left=-1, right=-1, bottom_right=False):
    """[b, 1, s_q, s_kv] booleans: which columns each row sees (docs/attention.md)."""
    i = np.arange(s_q)[None, :, None]
    j = np.arange(s_kv)[None, None, :]
    sq = np.full(b, s_q) if seq_q is None else np.asarray(seq_q).reshape(b)
    skv = np.full(b, s_kv) if seq_kv is None else np.asarray(seq_kv).reshape(b)
    sq_, skv_ = sq[:, None, None], skv[:, None, None]
    ok = (i < sq_) & (j < skv_)
    diag = i + ((skv_ - sq_) if bottom_right else 0)
    if left >= 1:
        ok &= j > diag - left
    if right >= 0:
        ok &= j <= diag + right
    return ok[:, None]


def attention(q, k, v, scale, mask, bias=None, alibi=False, drop=None):
    """(O, stats, P, kept) in float64; ``mask`` from :func:`visible`; ``drop`` the factor
    multiplying P after the softmax (keep / (1 - p), or mask * scale), or None."""
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    # k and v may have different head counts, each dividing q's.
    k = np.repeat(k, q.shape[1] // k.shape[1], axis=1)
    v = np.repeat(v, q.shape[1] // v.shape[1], axis=1)
    s = q @ np.swapaxes(k, -1, -2) * scale
    if bias is not None:
        s = s + bias
    if alibi:
        i = np.arange(s.shape[2])[:, None]
        j = np.arange(s.shape[3])[None, :]
        s = s + alibi_slopes(q.shape[1])[None, :, None, None] * (j - i)
    mask = np.broadcast_to(mask, s.shape)
    s = np.where(mask, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    safe_m = np.where(np.isfinite(m), m, 0.0)
    e = np.where(mask, np.exp(s - safe_m), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    p = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    stats = np.where(total > 0, safe_m + np.log(np.where(total > 0, total, 1.0)), -np.inf)
    factor = 1.0 if drop is None else np.broadcast_to(drop, p.shape)
    return (p * factor) @ v, stats, p


def attention_backward(q, k, v, do, scale, mask, bias=None, alibi=False, drop=None, o=None):
    """(dQ, dK, dV, dBias) in float64, the exact gradients of :func:`attention`
    (dBias summed over the batch; GQA gradients summed over each KV head's query heads).
    ``o``: the forward output the graph is given (rounded to its data type); D = rowsum(dO * O)
    then uses it, as cuDNN and the CPU reference do, instead of the exact O."""
    exact_o, _, p = attention(q, k, v, scale, mask, bias, alibi, drop)
    o = exact_o if o is None else np.asarray(o, dtype=np.float64)
    q64, k64, v64, do = (np.asarray(a, dtype=np.float64) for a in (q, k, v, do))
    hq, hk, hv = q.shape[1], k.shape[1], v.shape[1]
    kr, vr = np.repeat(k64, hq // hk, axis=1), np.repeat(v64, hq // hv, axis=1)
    factor = np.ones_like(p) if drop is None else np.broadcast_to(drop, p.shape)
    dv = np.swapaxes(p * factor, -1, -2) @ do
    dp = (do @ np.swapaxes(vr, -1, -2)) * factor
    ds = p * (dp - (do * o).sum(axis=-1, keepdims=True))
    dq = ds @ kr * scale
    dk = np.swapaxes(ds, -1, -2) @ q64 * scale
    b = q.shape[0]
    dk = dk.reshape(b, hk, hq // hk, *dk.shape[2:]).sum(axis=2)
    dv = dv.reshape(b, hv, hq // hv, *dv.shape[2:]).sum(axis=2)
    return dq, dk, dv, ds.sum(axis=0, keepdims=True)


# ---------------------------------------------------------------------------
# FP8 attention (the header's formulas, with FP8 roundings)
# ---------------------------------------------------------------------------

def fp8(x, dtype):
    return np.asarray(x, dtype=np.float64).astype(dtype).astype(np.float64)


def _masked(s, causal):
    """Scores with the hidden ones -inf: ``causal`` a bool (top-left causal) or a
    boolean array of the visible scores (``visible``)."""
    if isinstance(causal, np.ndarray):
        return np.where(causal, s, -np.inf)
    if causal:
        i = np.arange(s.shape[2])[:, None]
        j = np.arange(s.shape[3])[None, :]
        s = np.where(j > i, -np.inf, s)
    return s


def sdpa_fp8(q8, k8, v8, dq, dk, dv, ds, ss, so, scale, causal):
    """(o8 as float64, stats, amax_s, amax_o, P): q8/k8/v8 FP8 arrays, scales as floats;
    ``causal`` a bool or a ``visible`` mask."""
    ftype = q8.dtype
    q, k, v = (a.astype(np.float64) for a in (q8, k8, v8))
    s = _masked(q @ np.swapaxes(k, -1, -2) * scale * dq * dk, causal)
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    p = e / total
    amax_s = np.abs(p).max()
    p8 = fp8(p * ss, ftype)
    o_prime = p8 @ v * ds * dv
    amax_o = np.abs(o_prime).max()
    return fp8(o_prime * so, ftype), m + np.log(total), amax_s, amax_o, o_prime


def sdpa_fp8_backward(q8, k8, v8, o8, do8, stats, d, s, scale, causal):
    """(dq8, dk8, dv8 as float64, amax_dq, amax_dk, amax_dv, amax_dp, dq', dk', dv').

    ``d`` holds the descales (q, k, v, o, do, s, dp) and ``s`` the scales
    (s, dq, dk, dv, dp) as dicts of floats."""
    ftype = q8.dtype
    q, k, v, o, do = (a.astype(np.float64) for a in (q8, k8, v8, o8, do8))
    sc = _masked(q @ np.swapaxes(k, -1, -2) * scale * d["q"] * d["k"], causal)
    p = np.exp(sc - stats)
    dd = (do * o).sum(axis=-1, keepdims=True) * d["do"] * d["o"]
    dv_p = np.swapaxes(fp8(p * s["s"], ftype), -1, -2) @ do * d["s"] * d["do"]
    dsc = (do @ np.swapaxes(v, -1, -2) * d["do"] * d["v"] - dd) * p * scale
    amax_dp = np.abs(dsc).max()
    ds8 = fp8(dsc * s["dp"], do8.dtype)
    dq_p = ds8 @ k * d["dp"] * d["k"]
    dk_p = np.swapaxes(ds8, -1, -2) @ q * d["dp"] * d["q"]
    return (fp8(dq_p * s["dq"], ftype), fp8(dk_p * s["dk"], ftype), fp8(dv_p * s["dv"], ftype),
            np.abs(dq_p).max(), np.abs(dk_p).max(), np.abs(dv_p).max(), amax_dp,
            dq_p, dk_p, dv_p)


# ---------------------------------------------------------------------------
# Batch, instance and adaptive layer norms
# ---------------------------------------------------------------------------

def _group_norm(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return mean, var, 1.0 / np.sqrt(var + eps)


def batchnorm(x, scale, bias, eps, running=None, momentum=0.1):
    """(y, mean, inv_var, next_mean, next_var); statistics per channel over N and spatial."""
    axes = (0,) + tuple(range(2, x.ndim))
    mean, var, inv = _group_norm(x, axes, eps)
    y = (x - mean) * inv * scale + bias
    if running is None:
        return y, mean, inv, None, None
    count = x.size // x.shape[1]
    next_mean = (1 - momentum) * running[0] + momentum * mean
    next_var = (1 - momentum) * running[1] + momentum * var * count / (count - 1)
    return y, mean, inv, next_mean, next_var


def instancenorm(x, scale, bias, eps):
    mean, _, inv = _group_norm(x, tuple(range(2, x.ndim)), eps)
    return (x - mean) * inv * scale + bias, mean, inv


def adalayernorm(x, scale, bias, eps, zero_centered=False):
    mean, _, inv = _group_norm(x, tuple(range(2, x.ndim)), eps)
    g = 1 + scale if zero_centered else scale
    return (x - mean) * inv * g + bias, mean, inv


def norm_backward(dy, x, scale, mean, inv, stat_axes, param_axes, zero_centered=False):
    """(dx, dscale, dbias) of y = (x - mean) * inv * g + bias with the statistics taken over
    ``stat_axes`` and the parameters broadcast over ``param_axes``."""
    xhat = (x - mean) * inv
    g = 1 + scale if zero_centered else scale
    dxhat = dy * g
    dx = inv * (dxhat - dxhat.mean(axis=stat_axes, keepdims=True)
                - xhat * (dxhat * xhat).mean(axis=stat_axes, keepdims=True))
    return (dx, (dy * xhat).sum(axis=param_axes, keepdims=True),
            dy.sum(axis=param_axes, keepdims=True))


# ---------------------------------------------------------------------------
# Pooling and upsampling
# ---------------------------------------------------------------------------

def pool(x, mode, window, stride, pre, post, padding="AUTO"):
    """(y, index) for x [N, C, spatial...] (float64); index is the row-major window
    position of the first maximum (MAXPOOL) or None."""
    nsp = x.ndim - 2
    if padding == "AUTO":
        padding = "NEG_INF" if mode == "MAXPOOL" else "ZERO"
    out = [(x.shape[2 + i] + pre[i] + post[i] - window[i]) // stride[i] + 1 for i in range(nsp)]
    y = np.zeros(x.shape[:2] + tuple(out))
    index = np.zeros(y.shape, dtype=np.int64) if mode == "MAXPOOL" else None
    for o in np.ndindex(*out):
        values, inside = [], []
        for r in np.ndindex(*window):
            pos = [o[i] * stride[i] - pre[i] + r[i] for i in range(nsp)]
            ok = all(0 <= pos[i] < x.shape[2 + i] for i in range(nsp))
            if ok:
                values.append(x[(slice(None), slice(None)) + tuple(pos)])
            elif padding == "EDGE":
                clamped = tuple(min(max(pos[i], 0), x.shape[2 + i] - 1) for i in range(nsp))
                values.append(x[(slice(None), slice(None)) + clamped])
            else:
                fill = -np.inf if padding == "NEG_INF" else 0.0
                values.append(np.full(x.shape[:2], fill))
            inside.append(ok)
        stack = np.stack(values, axis=-1)
        at = (slice(None), slice(None)) + o
        if mode == "MAXPOOL":
            y[at] = stack.max(axis=-1)
            index[at] = stack.argmax(axis=-1)
        elif mode == "AVGPOOL_INCLUDE_PADDING":
            y[at] = stack.sum(axis=-1) / len(values)
        else:
            y[at] = stack.sum(axis=-1) / sum(inside)
    return y, index


def upsample(x, mode, scale):
    """NEAREST / BILINEAR upsampling by integer factors with half-pixel centres."""
    nsp = x.ndim - 2
    out = [x.shape[2 + i] * scale[i] for i in range(nsp)]
    y = np.zeros(x.shape[:2] + tuple(out))
    for o in np.ndindex(*out):
        at = (slice(None), slice(None)) + o
        if mode == "NEAREST":
            y[at] = x[(slice(None), slice(None)) + tuple(o[i] // scale[i] for i in range(nsp))]
            continue
        lo, frac = [], []
        for i in range(nsp):
            c = min(max((o[i] + 0.5) / scale[i] - 0.5, 0.0), x.shape[2 + i] - 1)
            lo.append(int(math.floor(c)))
            frac.append(c - math.floor(c))
        total = 0.0
        for corner in np.ndindex(*([2] * nsp)):
            w = 1.0
            pos = []
            for i in range(nsp):
                w *= frac[i] if corner[i] else 1 - frac[i]
                pos.append(min(lo[i] + corner[i], x.shape[2 + i] - 1))
            total = total + w * x[(slice(None), slice(None)) + tuple(pos)]
        y[at] = total
    return y
