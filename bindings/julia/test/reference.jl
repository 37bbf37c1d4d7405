# Plain-Julia reference implementations, in Julia order, that the tests
# compare cudnnfe's results with. Float64 accumulation.

"""
    ref_conv(x, w; pre, post, stride, dilation, flip = false)

Convolution forward in Julia order: `x` is `(spatial..., C, N)`, `w` is
`(kspatial..., C, K)`; the result is `(ospatial..., K, N)`. `flip = true` is
mathematical convolution (the filter reversed in every spatial dim).
"""
function ref_conv(x, w; pre, post, stride, dilation, flip = false)
    nsp = ndims(x) - 2
    xs = size(x)
    ks = size(w)[1:nsp]
    C, N, K = xs[nsp + 1], xs[nsp + 2], size(w, nsp + 2)
    osz = ntuple(i -> (xs[i] + pre[i] + post[i] - dilation[i] * (ks[i] - 1) - 1) ÷ stride[i] + 1, nsp)
    y = zeros(Float64, osz..., K, N)
    for n in 1:N, k in 1:K, o in CartesianIndices(osz), c in 1:C, f in CartesianIndices(ks)
        idx = ntuple(i -> (o[i] - 1) * stride[i] + (f[i] - 1) * dilation[i] + 1 - pre[i], nsp)
        all(i -> 1 <= idx[i] <= xs[i], 1:nsp) || continue
        fi = flip ? ntuple(i -> ks[i] + 1 - f[i], nsp) : Tuple(f)
        y[Tuple(o)..., k, n] += Float64(x[idx..., c, n]) * Float64(w[fi..., c, k])
    end
    return y
end

"""
    ref_conv_dgrad(dy, w, xsize; pre, post, stride, dilation)

The adjoint of `ref_conv` with respect to `x`: `dx` of size `xsize`.
"""
function ref_conv_dgrad(dy, w, xsize; pre, post, stride, dilation)
    nsp = length(xsize) - 2
    ks = size(w)[1:nsp]
    osz = size(dy)[1:nsp]
    C, N, K = xsize[nsp + 1], xsize[nsp + 2], size(w, nsp + 2)
    dx = zeros(Float64, xsize...)
    for n in 1:N, k in 1:K, o in CartesianIndices(osz), c in 1:C, f in CartesianIndices(ks)
        idx = ntuple(i -> (o[i] - 1) * stride[i] + (f[i] - 1) * dilation[i] + 1 - pre[i], nsp)
        all(i -> 1 <= idx[i] <= xsize[i], 1:nsp) || continue
        dx[idx..., c, n] += Float64(dy[Tuple(o)..., k, n]) * Float64(w[Tuple(f)..., c, k])
    end
    return dx
end

"""
    ref_conv_wgrad(x, dy, wsize; pre, post, stride, dilation)

The adjoint of `ref_conv` with respect to `w`: `dw` of size `wsize`.
"""
function ref_conv_wgrad(x, dy, wsize; pre, post, stride, dilation)
    nsp = ndims(x) - 2
    xs = size(x)
    ks = wsize[1:nsp]
    osz = size(dy)[1:nsp]
    C, N, K = xs[nsp + 1], xs[nsp + 2], wsize[nsp + 2]
    dw = zeros(Float64, wsize...)
    for n in 1:N, k in 1:K, o in CartesianIndices(osz), c in 1:C, f in CartesianIndices(ks)
        idx = ntuple(i -> (o[i] - 1) * stride[i] + (f[i] - 1) * dilation[i] + 1 - pre[i], nsp)
        all(i -> 1 <= idx[i] <= xs[i], 1:nsp) || continue
        dw[Tuple(f)..., c, k] += Float64(x[idx..., c, n]) * Float64(dy[Tuple(o)..., k, n])
    end
    return dw
end

_bidx(A, d, i) = size(A, d) == 1 ? 1 : i

"""
    ref_sdpa(q, k, v; scale, causal = false, bias = nothing) -> (o, stats)

Attention in Julia order: `q` `(d, s_q, h_q, b)`, `k` `(d, s_kv, h_kv, b)`,
`v` `(d_v, s_kv, h_kv, b)`; query head `h` uses key/value head
`(h - 1) ÷ (h_q ÷ h_kv) + 1`. `causal` is `false`, `:top_left` or
`:bottom_right`; `bias` broadcasts to `(s_kv, s_q, h_q, b)`. `stats` is the
log-sum-exp of each row's scaled, masked scores, `(1, s_q, h_q, b)`.
"""
function ref_sdpa(q, k, v; scale, causal = false, bias = nothing)
    d, sq, hq, B = size(q)
    skv, hkv = size(k, 2), size(k, 3)
    dv = size(v, 1)
    group = hq ÷ hkv
    o = zeros(Float64, dv, sq, hq, B)
    stats = zeros(Float64, 1, sq, hq, B)
    for b in 1:B, h in 1:hq
        hk = (h - 1) ÷ group + 1
        for i in 1:sq
            s = fill(-Inf, skv)
            for j in 1:skv
                if causal === :top_left && j > i
                    continue
                elseif causal === :bottom_right && j > i + skv - sq
                    continue
                end
                acc = 0.0
                for t in 1:d
                    acc += Float64(q[t, i, h, b]) * Float64(k[t, j, hk, b])
                end
                acc *= scale
                if bias !== nothing
                    acc += Float64(bias[_bidx(bias, 1, j), _bidx(bias, 2, i), _bidx(bias, 3, h),
                                        _bidx(bias, 4, b)])
                end
                s[j] = acc
            end
            m = maximum(s)
            p = exp.(s .- m)
            total = sum(p)
            stats[1, i, h, b] = m + log(total)
            for j in 1:skv, t in 1:dv
                o[t, i, h, b] += p[j] / total * Float64(v[t, j, hk, b])
            end
        end
    end
    return o, stats
end

"""
    ref_sdpa_backward(q, k, v, dO; scale, causal = false, bias = nothing) -> (dq, dk, dv)

Gradients of `sum(ref_sdpa(q, k, v)[1] .* dO)` with respect to `q`, `k`, `v`
(Julia order, as `ref_sdpa`); grouped query heads add into their key/value
head's gradients.
"""
function ref_sdpa_backward(q, k, v, dO; scale, causal = false, bias = nothing)
    sq, hq, B = size(q, 2), size(q, 3), size(q, 4)
    skv, hkv = size(k, 2), size(k, 3)
    group = hq ÷ hkv
    dq = zeros(Float64, size(q))
    dk = zeros(Float64, size(k))
    dv = zeros(Float64, size(v))
    for b in 1:B, h in 1:hq
        hk = (h - 1) ÷ group + 1
        Q = Float64.(q[:, :, h, b])
        K = Float64.(k[:, :, hk, b])
        V = Float64.(v[:, :, hk, b])
        DO = Float64.(dO[:, :, h, b])
        S = scale .* (transpose(K) * Q)  # S[j, i]: key j, query i
        for i in 1:sq, j in 1:skv
            if bias !== nothing
                S[j, i] += Float64(bias[_bidx(bias, 1, j), _bidx(bias, 2, i), _bidx(bias, 3, h),
                                        _bidx(bias, 4, b)])
            end
            if (causal === :top_left && j > i) || (causal === :bottom_right && j > i + skv - sq)
                S[j, i] = -Inf
            end
        end
        P = exp.(S .- maximum(S; dims = 1))
        P ./= sum(P; dims = 1)
        dv[:, :, hk, b] .+= DO * transpose(P)
        dP = transpose(V) * DO
        dS = P .* (dP .- sum(P .* dP; dims = 1))
        dq[:, :, h, b] .= scale .* (K * dS)
        dk[:, :, hk, b] .+= scale .* (Q * transpose(dS))
    end
    return dq, dk, dv
end

# (F, N) views of a normalization's x: statistics per column (the last Julia dim).
_features(x) = reshape(Float64.(x), length(x) ÷ size(x, ndims(x)), size(x, ndims(x)))
_stats_shape(x) = (ntuple(_ -> 1, ndims(x) - 1)..., size(x, ndims(x)))

"""
    ref_layernorm(x, scale, bias; epsilon = 1e-5, zero_centered_gamma = false)
        -> (y, mean, inv_variance)

Layer norm in Julia order: per index of the last dimension, over all others.
"""
function ref_layernorm(x, scale, bias; epsilon = 1e-5, zero_centered_gamma = false)
    X = _features(x)
    F = size(X, 1)
    S = vec(Float64.(scale)) .+ (zero_centered_gamma ? 1 : 0)
    Bv = vec(Float64.(bias))
    mean = sum(X; dims = 1) ./ F
    ivar = 1 ./ sqrt.(sum(abs2, X .- mean; dims = 1) ./ F .+ epsilon)
    y = (X .- mean) .* ivar .* S .+ Bv
    return reshape(y, size(x)), reshape(mean, _stats_shape(x)), reshape(ivar, _stats_shape(x))
end

"""
    ref_rmsnorm(x, scale, bias = nothing; epsilon = 1e-5) -> (y, inv_rms)
"""
function ref_rmsnorm(x, scale, bias = nothing; epsilon = 1e-5)
    X = _features(x)
    F = size(X, 1)
    irms = 1 ./ sqrt.(sum(abs2, X; dims = 1) ./ F .+ epsilon)
    y = X .* irms .* vec(Float64.(scale))
    bias === nothing || (y = y .+ vec(Float64.(bias)))
    return reshape(y, size(x)), reshape(irms, _stats_shape(x))
end

"""
    ref_layernorm_backward(dy, x, scale, mean, inv_variance) -> (dx, dscale, dbias)
"""
function ref_layernorm_backward(dy, x, scale, mean, inv_variance)
    X, DY = _features(x), _features(dy)
    F = size(X, 1)
    M = reshape(Float64.(mean), 1, :)
    IV = reshape(Float64.(inv_variance), 1, :)
    xhat = (X .- M) .* IV
    dxhat = DY .* vec(Float64.(scale))
    dx = IV .* (dxhat .- sum(dxhat; dims = 1) ./ F .- xhat .* sum(dxhat .* xhat; dims = 1) ./ F)
    dscale = sum(DY .* xhat; dims = 2)
    dbias = sum(DY; dims = 2)
    return reshape(dx, size(x)), reshape(dscale, size(scale)), reshape(dbias, size(scale))
end

"""
    ref_rmsnorm_backward(dy, x, scale, inv_rms) -> (dx, dscale, dbias)
"""
function ref_rmsnorm_backward(dy, x, scale, inv_rms)
    X, DY = _features(x), _features(dy)
    F = size(X, 1)
    R = reshape(Float64.(inv_rms), 1, :)
    xhat = X .* R
    dxhat = DY .* vec(Float64.(scale))
    dx = R .* (dxhat .- xhat .* sum(dxhat .* xhat; dims = 1) ./ F)
    return reshape(dx, size(x)), reshape(sum(DY .* xhat; dims = 2), size(scale)),
           reshape(sum(DY; dims = 2), size(scale))
end

"""
    ref_softmax(x) -> (y, stats)

Softmax over the first Julia dimension, and its log-sum-exp `(1, ...)`.
"""
function ref_softmax(x)
    X = Float64.(x)
    m = maximum(X; dims = 1)
    e = exp.(X .- m)
    s = sum(e; dims = 1)
    return e ./ s, m .+ log.(s)
end

"""
    numgrad(f, x, i; h = 1e-6)

Central difference of the scalar function `f` at `x` along entry `i`.
"""
function numgrad(f, x, i; h = 1e-6)
    xp, xm = copy(x), copy(x)
    xp[i] += h
    xm[i] -= h
    return (f(xp) - f(xm)) / (2h)
end

"""
    alibi_slope(h, heads)

cudnn-frontend's ALiBi slope of query head `h` (1-based) of `heads`: with `n`
the largest power of two `<= heads`, `2^(-8h/n)` for `h <= n`, else
`2^(-4(2(h - n) - 1)/n)`.
"""
function alibi_slope(h, heads)
    n = prevpow(2, heads)
    return h <= n ? 2.0^(-8h / n) : 2.0^(-4 * (2 * (h - n) - 1) / n)
end

"""
    ref_attention(q, k, v; scale, seq_len_q = nothing, seq_len_kv = nothing, causal = false,
                  window_left = nothing, window_right = nothing, bottom_right = false,
                  alibi = false, bias = nothing, dropout = nothing) -> (o, stats, P)

Attention with the masks of docs/attention.md, in Julia order as `ref_sdpa`
(1-based): query `i` of batch `n` with diagonal `d(i)` (`i`, or `i + lkv -
lq` with `bottom_right`) sees key `j` only if `i <= lq`, `j <= lkv`, `j <=
d(i)` (`causal`), `j > d(i) - window_left` and `j <= d(i) + window_right`.
Rows that see nothing give `o = 0` and `stats = -Inf`. `dropout` is `(mask,
scale)` with `mask` `(s_kv, s_q, h_q, b)`; `P` is the softmax before it.
"""
function ref_attention(q, k, v; scale, seq_len_q = nothing, seq_len_kv = nothing, causal = false,
                       window_left = nothing, window_right = nothing, bottom_right = false,
                       alibi = false, bias = nothing, dropout = nothing)
    d, sq, hq, B = size(q)
    skv, hkv = size(k, 2), size(k, 3)
    group = hq ÷ hkv
    o = zeros(Float64, size(v, 1), sq, hq, B)
    stats = fill(-Inf, 1, sq, hq, B)
    P = zeros(Float64, skv, sq, hq, B)
    for b in 1:B, h in 1:hq
        hk = (h - 1) ÷ group + 1
        lq = seq_len_q === nothing ? sq : Int(seq_len_q[b])
        lkv = seq_len_kv === nothing ? skv : Int(seq_len_kv[b])
        for i in 1:lq
            diag = bottom_right ? i + lkv - lq : i
            s = fill(-Inf, skv)
            for j in 1:lkv
                (causal && j > diag) && continue
                (window_left !== nothing && j <= diag - window_left) && continue
                (window_right !== nothing && j > diag + window_right) && continue
                acc = 0.0
                for t in 1:d
                    acc += Float64(q[t, i, h, b]) * Float64(k[t, j, hk, b])
                end
                s[j] = acc * scale
                alibi && (s[j] += alibi_slope(h, hq) * (j - i))
                bias === nothing || (s[j] += Float64(bias[j, i, h, 1]))
            end
            m = maximum(s)
            m == -Inf && continue
            p = exp.(s .- m)
            stats[1, i, h, b] = m + log(sum(p))
            p ./= sum(p)
            P[:, i, h, b] .= p
            keep = dropout === nothing ? ones(skv) : Float64.(dropout[1][:, i, h, b]) .* dropout[2]
            for j in 1:skv, t in 1:size(v, 1)
                o[t, i, h, b] += p[j] * keep[j] * Float64(v[t, j, hk, b])
            end
        end
    end
    return o, stats, P
end

"""
    ref_pool(x; window, stride, pad, mode) -> (y, index)

Pooling of `x` `(W, H, C, N)` in Julia order; `mode` is `:max`, `:avg_incl`
or `:avg_excl`; `index` is the 0-based column-major position of the first
maximum in its `(W, H)` window.
"""
function ref_pool(x; window, stride, pad, mode)
    W, H, C, N = size(x)
    ow = (W + 2pad[1] - window[1]) ÷ stride[1] + 1
    oh = (H + 2pad[2] - window[2]) ÷ stride[2] + 1
    y = zeros(Float64, ow, oh, C, N)
    index = zeros(Int8, ow, oh, C, N)
    for n in 1:N, c in 1:C, i in 1:ow, j in 1:oh
        best, at, total, count = -Inf, 0, 0.0, 0
        for b in 1:window[2], a in 1:window[1]
            wi = (i - 1) * stride[1] + a - pad[1]
            hi = (j - 1) * stride[2] + b - pad[2]
            (1 <= wi <= W && 1 <= hi <= H) || continue
            val = Float64(x[wi, hi, c, n])
            if val > best
                best, at = val, (a - 1) + (b - 1) * window[1]
            end
            total += val
            count += 1
        end
        y[i, j, c, n] = mode === :max ? best :
                        mode === :avg_incl ? total / (window[1] * window[2]) : total / count
        index[i, j, c, n] = at
    end
    return y, index
end

# The CPU reference's random numbers (docs/layout-ops.md): SplitMix64's
# finalizer and the uniform of counter `c` under seed `s`.
function splitmix(z::UInt64)
    z ⊻= z >> 30
    z *= 0xBF58476D1CE4E5B9
    z ⊻= z >> 27
    z *= 0x94D049BB133111EB
    return z ⊻ (z >> 31)
end
rng_uniform(s, c) = (Float64(splitmix(splitmix(UInt64(s)) + UInt64(c + 1) * 0x9E3779B97F4A7C15) >> 11) +
                     0.5) / 2.0^53
