# Operations. Each takes its operands (Tensors of the graph, or UIDs) and
# keyword arguments for the C options struct, and returns the new output
# tensor(s): virtual until marked with `set_output!`. Sizes, axes, paddings,
# strides and dilations are in Julia order (see the module docstring).

const CONV_MODE_CODES = _prefixed_constants("CUDNNFE_CONV_MODE_")   # :cross_correlation, :convolution
const POINTWISE_CODES = _prefixed_constants("CUDNNFE_POINTWISE_")   # :add, :relu_fwd, ...
const REDUCTION_CODES = _prefixed_constants("CUDNNFE_REDUCTION_")   # :add, :max, :avg, ...

# An options struct as its C init function fills it.
function _default_options(::Type{T}, init::F) where {T,F}
    r = Ref{T}()
    init(r)
    return r[]
end

# A copy of the (immutable) options struct `o` with some fields replaced;
# `nothing` values keep the field as it is.
function _with(o::T; kwargs...) where {T}
    for k in keys(kwargs)
        hasfield(T, k) || throw(ArgumentError("$T has no field $k"))
    end
    values = ntuple(fieldcount(T)) do i
        f = fieldname(T, i)
        v = get(kwargs, f, nothing)
        v === nothing ? getfield(o, i) : convert(fieldtype(T, i), v)
    end
    return T(values...)
end

# The `name` field of an options struct: NULL, or a pointer into `s`, which
# the caller keeps alive with GC.@preserve for the duration of the C call.
_name_ptr(::Ptr{Cvoid}) = convert(Ptr{Cchar}, C_NULL)
_name_ptr(s::String) = convert(Ptr{Cchar}, pointer(s))

_compute(dtype) = dtype === nothing ? nothing : dtype_code(dtype)

# Julia-order spatial values (an integer for all dims, or one per dim) as the
# C struct's int64_t[3] in C order, unused trailing entries at `default`.
function _spatial(v, n::Int, default::NTuple{3,Int64}, what::String)
    vals = v isa Integer ? fill(Int64(v), n) : Int64[x for x in v]
    length(vals) == n || throw(ArgumentError(
        "$what has $(length(vals)) entries but the convolution has $n spatial dims " *
        "(give them in Julia order, e.g. (W, H))"))
    c = reverse(vals)
    return ntuple(i -> i <= n ? c[i] : default[i], 3)
end

function _conv!(kind::Symbol, g::Graph, a, b, pre_padding, post_padding, stride, dilation, mode,
                compute_dtype, name)
    ua = _uid(g, a)
    ub = _uid(g, b)
    o = _default_options(Lib.cudnnfe_conv_options_t, Lib.cudnnfe_conv_options_init)
    n = ndims(Tensor(g, ua)) - 2
    if 1 <= n <= Lib.CUDNNFE_MAX_SPATIAL_DIMS
        o = _with(o; spatial_dims = Int32(n),
                  pre_padding = _spatial(pre_padding, n, o.pre_padding, "pre_padding"),
                  post_padding = _spatial(post_padding, n, o.post_padding, "post_padding"),
                  stride = _spatial(stride, n, o.stride, "stride"),
                  dilation = _spatial(dilation, n, o.dilation, "dilation"))
    end  # else the library reports the bad rank, naming the node and tensors
    nm = _cstring(name)
    out = Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_with(o; name = _name_ptr(nm), mode = _code(CONV_MODE_CODES, "convolution mode", mode),
                      compute_dtype = _compute(compute_dtype)))
        status = if kind === :fprop
            Lib.cudnnfe_graph_add_conv_fprop(g, ua, ub, r, out)
        elseif kind === :dgrad
            Lib.cudnnfe_graph_add_conv_dgrad(g, ua, ub, r, out)
        else
            Lib.cudnnfe_graph_add_conv_wgrad(g, ua, ub, r, out)
        end
        check(g, status)
    end
    return Tensor(g, out[])
end

const _CONV_KWARGS_DOC = """
Keyword arguments (spatial values in Julia order, `(W,)`, `(W, H)` or
`(W, H, D)`, or one integer for every spatial dim): `padding = 0` (both
sides), `pre_padding = padding`, `post_padding = padding`, `stride = 1`,
`dilation = 1`, `mode = :cross_correlation` (or `:convolution`, which flips
the filter), `compute_dtype = nothing` (the graph's default), `name = nothing`
(the node's name, `"conv_fprop_0"` etc. if `nothing`).
"""

"""
    conv_fprop!(g, x, w; padding = 0, pre_padding = padding, post_padding = padding,
                stride = 1, dilation = 1, mode = :cross_correlation,
                compute_dtype = nothing, name = nothing) -> y

Convolution forward: `x` is `(W, H, C, N)` (or `(W, C, N)`, `(W, H, D, C,
N)`), `w` is `(kW, kH, C, K)`, `y` is `(W', H', K, N)` (Julia order: the
NCHW / KCRS tensors of cuDNN, and the layout of NNlib and Flux).

$_CONV_KWARGS_DOC
"""
function conv_fprop!(g::Graph, x, w; padding = 0, pre_padding = padding, post_padding = padding,
                     stride = 1, dilation = 1, mode = :cross_correlation, compute_dtype = nothing,
                     name = nothing)
    return _conv!(:fprop, g, x, w, pre_padding, post_padding, stride, dilation, mode, compute_dtype,
                  name)
end

"""
    conv_dgrad!(g, dy, w; kwargs...) -> dx

Convolution data gradient: `dy` `(W', H', K, N)`, `w` `(kW, kH, C, K)`, `dx`
`(W, H, C, N)`. `dx`'s spatial size is inferred as the smallest consistent
one; with stride > 1 set the one you need with `set_dims!`.

$_CONV_KWARGS_DOC
"""
function conv_dgrad!(g::Graph, dy, w; padding = 0, pre_padding = padding, post_padding = padding,
                     stride = 1, dilation = 1, mode = :cross_correlation, compute_dtype = nothing,
                     name = nothing)
    return _conv!(:dgrad, g, dy, w, pre_padding, post_padding, stride, dilation, mode,
                  compute_dtype, name)
end

"""
    conv_wgrad!(g, x, dy; kwargs...) -> dw

Convolution weight gradient: `x` `(W, H, C, N)`, `dy` `(W', H', K, N)`, `dw`
`(kW, kH, C, K)`. The filter size is inferred as the largest consistent one;
with stride > 1 set the one you need with `set_dims!`.

$_CONV_KWARGS_DOC
"""
function conv_wgrad!(g::Graph, x, dy; padding = 0, pre_padding = padding, post_padding = padding,
                     stride = 1, dilation = 1, mode = :cross_correlation, compute_dtype = nothing,
                     name = nothing)
    return _conv!(:wgrad, g, x, dy, pre_padding, post_padding, stride, dilation, mode,
                  compute_dtype, name)
end

"""
    matmul!(g, a, b; compute_dtype = nothing, name = nothing) -> c

Julia matrix product, batched: `a` is `(M, K, batch...)`, `b` is
`(K, N, batch...)`, `c = a * b` is `(M, N, batch...)`; batch dims of size 1
broadcast. Since Julia order is the reverse of C order, this is the C
library's `c[..., N, M] = b[..., N, K] @ a[..., K, M]`: the node's C input
`a` is this function's `b` and vice versa, as its messages show.
"""
function matmul!(g::Graph, a, b; compute_dtype = nothing, name = nothing)
    ua = _uid(g, a)
    ub = _uid(g, b)
    o = _default_options(Lib.cudnnfe_matmul_options_t, Lib.cudnnfe_matmul_options_init)
    nm = _cstring(name)
    out = Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_with(o; name = _name_ptr(nm), compute_dtype = _compute(compute_dtype)))
        check(g, Lib.cudnnfe_graph_add_matmul(g, ub, ua, r, out))
    end
    return Tensor(g, out[])
end

"""
    pointwise!(g, mode, in0, in1 = nothing, in2 = nothing; dim = nothing,
               relu_lower_clip = nothing, relu_upper_clip = nothing,
               relu_lower_clip_slope = nothing, elu_alpha = nothing,
               softplus_beta = nothing, swish_beta = nothing,
               compute_dtype = nothing, name = nothing) -> out

Elementwise operation. `mode` is a Symbol named after the C constant
(`CUDNNFE_POINTWISE_RELU_FWD` -> `:relu_fwd`): binary `:add`, `:add_square`
(`in0 + in1^2`), `:sub`, `:mul`, `:div`, `:max`, `:min`, `:mod`, `:pow`,
`:atan2`; unary `:neg`, `:abs`, `:ceil`, `:floor`, `:reciprocal`, `:sqrt`,
`:rsqrt`, `:exp`, `:log`, `:sin`, `:cos`, `:tan`, `:erf`, `:identity`,
`:relu_fwd`, `:tanh_fwd`, `:sigmoid_fwd`, `:elu_fwd`, `:gelu_fwd`,
`:gelu_approx_tanh_fwd`, `:softplus_fwd`, `:swish_fwd`; backward
`:relu_bwd` ... `:swish_bwd` (`in0 = dy`, `in1 = x`); comparisons `:cmp_eq`,
`:cmp_neq`, `:cmp_gt`, `:cmp_ge`, `:cmp_lt`, `:cmp_le` and logic
`:logical_and`, `:logical_or`, `:logical_not` (BOOLEAN output);
`:binary_select` (`in2 ? in0 : in1`); `:gen_index` (INT32: each element's
0-based index along Julia dimension `dim`, required).

Operands broadcast: each dim equals the output's or is 1. Keywords left at
`nothing` keep the library's defaults (clip 0 and 3.4e38, slope 0, alpha and
betas 1).
"""
function pointwise!(g::Graph, mode, in0, in1 = nothing, in2 = nothing; dim = nothing,
                    relu_lower_clip = nothing, relu_upper_clip = nothing,
                    relu_lower_clip_slope = nothing, elu_alpha = nothing, softplus_beta = nothing,
                    swish_beta = nothing, compute_dtype = nothing, name = nothing)
    code = _code(POINTWISE_CODES, "pointwise mode", mode)
    u0 = _uid(g, in0)
    u1 = _uid(g, in1)
    u2 = _uid(g, in2)
    o = _default_options(Lib.cudnnfe_pointwise_options_t, Lib.cudnnfe_pointwise_options_init)
    axis = nothing
    if code == Lib.CUDNNFE_POINTWISE_GEN_INDEX
        dim === nothing && throw(ArgumentError(
            "pointwise :gen_index needs `dim`, the (1-based, Julia-order) dimension to index"))
        n = ndims(Tensor(g, u0))
        1 <= dim <= n || throw(ArgumentError("dim = $dim is outside 1:$n"))
        axis = Int32(n - dim)
    elseif dim !== nothing
        throw(ArgumentError("`dim` applies only to pointwise :gen_index"))
    end
    nm = _cstring(name)
    out = Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_with(o; name = _name_ptr(nm), compute_dtype = _compute(compute_dtype),
                      relu_lower_clip = relu_lower_clip, relu_upper_clip = relu_upper_clip,
                      relu_lower_clip_slope = relu_lower_clip_slope, elu_alpha = elu_alpha,
                      softplus_beta = softplus_beta, swish_beta = swish_beta, axis = axis))
        check(g, Lib.cudnnfe_graph_add_pointwise(g, code, u0, u1, u2, r, out))
    end
    return Tensor(g, out[])
end

"""
    reduction!(g, mode, x; dims = :, deterministic = false, compute_dtype = nothing,
               name = nothing) -> y

Reduces `x` over `dims` (Julia dimensions, 1-based: an integer, a tuple, or
`:` for all), which become 1 in `y`; like `sum(x; dims)`. `mode` is `:add`,
`:mul`, `:min`, `:max`, `:amax` (max of absolute values), `:avg`, `:norm1`,
`:norm2` or `:mul_no_zeros`.
"""
function reduction!(g::Graph, mode, x; dims = :, deterministic::Bool = false,
                    compute_dtype = nothing, name = nothing)
    code = _code(REDUCTION_CODES, "reduction mode", mode)
    ux = _uid(g, x)
    mask = UInt32(0)
    if !(dims isa Colon)
        n = ndims(Tensor(g, ux))
        for d in (dims isa Integer ? (dims,) : dims)
            1 <= d <= n || throw(ArgumentError("reduction dims: $d is outside 1:$n"))
            mask |= UInt32(1) << (n - d)
        end
        mask == 0 && throw(ArgumentError("dims is empty; pass `:` to reduce every dimension"))
    end
    o = _default_options(Lib.cudnnfe_reduction_options_t, Lib.cudnnfe_reduction_options_init)
    nm = _cstring(name)
    out = Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_with(o; name = _name_ptr(nm), compute_dtype = _compute(compute_dtype),
                      axes_mask = mask, deterministic = Int32(deterministic)))
        check(g, Lib.cudnnfe_graph_add_reduction(g, code, ux, r, out))
    end
    return Tensor(g, out[])
end

# (causal_mask, causal_mask_bottom_right) of the C options.
function _causal_flags(causal)
    if causal === false || causal === :none
        return (Int32(0), Int32(0))
    elseif causal === true || causal === :top_left
        return (Int32(1), Int32(0))
    elseif causal === :bottom_right
        return (Int32(0), Int32(1))
    end
    throw(ArgumentError("causal = $(repr(causal)); expected false, true, :top_left or :bottom_right"))
end

# An optional output: UID 0 means the library did not create it.
_optional(g::Graph, u::Integer) = u == 0 ? nothing : Tensor(g, u)

"""
    sdpa!(g, q, k, v; scale = nothing, causal = false, bias = nothing, stats = false,
          compute_dtype = nothing, name = nothing) -> (o, stats_tensor)

Scaled dot-product attention forward, in Julia order: `q` `(d, s_q, h_q, b)`,
`k` `(d, s_kv, h_kv, b)`, `v` `(d_v, s_kv, h_kv, b)` (any strides; `h_q` a
multiple of `h_kv` for GQA/MQA); `o` is `(d_v, s_q, h_q, b)` with `q`'s
dimension order. `scale` defaults to `1/sqrt(d)`. `causal` is `false`,
`true` or `:top_left` (row `i` sees keys `<= i`), or `:bottom_right` (keys
`<= i + s_kv - s_q`). `bias` is an additive tensor broadcastable to
`(s_kv, s_q, h_q, b)`. With `stats = true` the second result is the FLOAT
log-sum-exp tensor `(1, s_q, h_q, b)` for backward; else it is `nothing`.
"""
function sdpa!(g::Graph, q, k, v; scale = nothing, causal = false, bias = nothing,
               stats::Bool = false, compute_dtype = nothing, name = nothing)
    uq = _uid(g, q)
    uk = _uid(g, k)
    uv = _uid(g, v)
    top_left, bottom_right = _causal_flags(causal)
    o = _default_options(Lib.cudnnfe_sdpa_options_t, Lib.cudnnfe_sdpa_options_init)
    nm = _cstring(name)
    out = Ref{Int64}(0)
    st = Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_with(o; name = _name_ptr(nm), compute_dtype = _compute(compute_dtype),
                      attn_scale = scale === nothing ? nothing : Float64(scale),
                      generate_stats = Int32(stats), causal_mask = top_left,
                      causal_mask_bottom_right = bottom_right, bias = _uid(g, bias)))
        check(g, Lib.cudnnfe_graph_add_sdpa(g, uq, uk, uv, r, out, st))
    end
    return (Tensor(g, out[]), stats ? Tensor(g, st[]) : nothing)
end

"""
    sdpa_backward!(g, q, k, v, o, dO, stats; scale = nothing, causal = false, bias = nothing,
                   deterministic = false, compute_dtype = nothing, name = nothing) -> (dq, dk, dv)

Scaled dot-product attention backward, in Julia order as `sdpa!`: from the
forward's `q`, `k`, `v`, its output `o`, the loss gradient `dO` (shaped as
`o`) and the forward's `stats` `(1, s_q, h_q, b)`, makes `dq`, `dk`, `dv`
with the shapes and dimension orders of `q`, `k`, `v`. `scale`, `causal` and
`bias` must be the forward's; `deterministic = true` asks for bitwise
reproducible gradients.
"""
function sdpa_backward!(g::Graph, q, k, v, o, dO, stats; scale = nothing, causal = false,
                        bias = nothing, deterministic::Bool = false, compute_dtype = nothing,
                        name = nothing)
    uq, uk, uv, uo, udo, ust = _uid(g, q), _uid(g, k), _uid(g, v), _uid(g, o), _uid(g, dO),
                               _uid(g, stats)
    top_left, bottom_right = _causal_flags(causal)
    opts = _default_options(Lib.cudnnfe_sdpa_backward_options_t,
                            Lib.cudnnfe_sdpa_backward_options_init)
    nm = _cstring(name)
    dq, dk, dv = Ref{Int64}(0), Ref{Int64}(0), Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_with(opts; name = _name_ptr(nm), compute_dtype = _compute(compute_dtype),
                      attn_scale = scale === nothing ? nothing : Float64(scale),
                      causal_mask = top_left, causal_mask_bottom_right = bottom_right,
                      bias = _uid(g, bias), deterministic = Int32(deterministic)))
        check(g, Lib.cudnnfe_graph_add_sdpa_backward(g, uq, uk, uv, uo, udo, ust, r, dq, dk, dv))
    end
    return (Tensor(g, dq[]), Tensor(g, dk[]), Tensor(g, dv[]))
end

const NORM_PHASE_CODES = _prefixed_constants("CUDNNFE_NORM_PHASE_")  # :training, :inference

function _norm_options(nameptr, phase, epsilon, zero_centered_gamma, compute_dtype)
    o = _default_options(Lib.cudnnfe_norm_options_t, Lib.cudnnfe_norm_options_init)
    return _with(o; name = nameptr, compute_dtype = _compute(compute_dtype),
                 phase = _code(NORM_PHASE_CODES, "normalization phase", phase),
                 epsilon = epsilon === nothing ? nothing : Float64(epsilon),
                 zero_centered_gamma = Int32(zero_centered_gamma))
end

const _NORM_DOC = """
Julia order: statistics are taken per index of the **last** dimension (the
sample or token) over all the others, so `x` is `(features..., N)`, e.g. an
LLM's `(hidden, tokens)`; `scale` and `bias` are `(features..., 1)`; the
statistics are FLOAT `(1, ..., 1, N)`. Keywords: `phase = :training` (also
makes the statistics) or `:inference`, `epsilon` (default 1e-5),
`zero_centered_gamma = false` (true: `1 + scale` instead of `scale`),
`compute_dtype`, `name`.
"""

"""
    layernorm!(g, x, scale, bias; phase = :training, epsilon = nothing,
               zero_centered_gamma = false, compute_dtype = nothing, name = nothing)
        -> (y, mean, inv_variance)

`y = (x - mean) * inv_variance * scale + bias` with `inv_variance =
1/sqrt(var + epsilon)`; `mean` and `inv_variance` are `nothing` in inference.

$_NORM_DOC
"""
function layernorm!(g::Graph, x, scale, bias; phase = :training, epsilon = nothing,
                    zero_centered_gamma::Bool = false, compute_dtype = nothing, name = nothing)
    ux, us, ub = _uid(g, x), _uid(g, scale), _uid(g, bias)
    nm = _cstring(name)
    y, mean, ivar = Ref{Int64}(0), Ref{Int64}(0), Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_norm_options(_name_ptr(nm), phase, epsilon, zero_centered_gamma, compute_dtype))
        check(g, Lib.cudnnfe_graph_add_layernorm(g, ux, us, ub, r, y, mean, ivar))
    end
    return (Tensor(g, y[]), _optional(g, mean[]), _optional(g, ivar[]))
end

"""
    rmsnorm!(g, x, scale, bias = nothing; phase = :training, epsilon = nothing,
             zero_centered_gamma = false, compute_dtype = nothing, name = nothing)
        -> (y, inv_rms)

`y = x * inv_rms * scale (+ bias)` with `inv_rms = 1/sqrt(mean(x^2) +
epsilon)`; `inv_rms` is `nothing` in inference.

$_NORM_DOC
"""
function rmsnorm!(g::Graph, x, scale, bias = nothing; phase = :training, epsilon = nothing,
                  zero_centered_gamma::Bool = false, compute_dtype = nothing, name = nothing)
    ux, us, ub = _uid(g, x), _uid(g, scale), _uid(g, bias)
    nm = _cstring(name)
    y, irms = Ref{Int64}(0), Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_norm_options(_name_ptr(nm), phase, epsilon, zero_centered_gamma, compute_dtype))
        check(g, Lib.cudnnfe_graph_add_rmsnorm(g, ux, us, ub, r, y, irms))
    end
    return (Tensor(g, y[]), _optional(g, irms[]))
end

"""
    layernorm_backward!(g, dy, x, scale, mean, inv_variance; epsilon = nothing,
                        zero_centered_gamma = false, compute_dtype = nothing,
                        name = nothing) -> (dx, dscale, dbias)

Layer norm backward from the loss gradient `dy` (shaped as `x`), the forward's
`x`, `scale` and statistics. `dscale` and `dbias` are shaped as `scale`.

$_NORM_DOC
"""
function layernorm_backward!(g::Graph, dy, x, scale, mean, inv_variance; epsilon = nothing,
                             zero_centered_gamma::Bool = false, compute_dtype = nothing,
                             name = nothing)
    udy, ux, us, um, uv = _uid(g, dy), _uid(g, x), _uid(g, scale), _uid(g, mean),
                          _uid(g, inv_variance)
    nm = _cstring(name)
    dx, dscale, dbias = Ref{Int64}(0), Ref{Int64}(0), Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_norm_options(_name_ptr(nm), :training, epsilon, zero_centered_gamma,
                              compute_dtype))
        check(g, Lib.cudnnfe_graph_add_layernorm_backward(g, udy, ux, us, um, uv, r, dx, dscale,
                                                          dbias))
    end
    return (Tensor(g, dx[]), Tensor(g, dscale[]), Tensor(g, dbias[]))
end

"""
    rmsnorm_backward!(g, dy, x, scale, inv_rms; with_bias = false, epsilon = nothing,
                      zero_centered_gamma = false, compute_dtype = nothing,
                      name = nothing) -> (dx, dscale, dbias)

RMS norm backward; `dbias` (shaped as `scale`) is made when `with_bias` (the
forward had a bias), else it is `nothing`.

$_NORM_DOC
"""
function rmsnorm_backward!(g::Graph, dy, x, scale, inv_rms; with_bias::Bool = false,
                           epsilon = nothing, zero_centered_gamma::Bool = false,
                           compute_dtype = nothing, name = nothing)
    udy, ux, us, ur = _uid(g, dy), _uid(g, x), _uid(g, scale), _uid(g, inv_rms)
    nm = _cstring(name)
    dx, dscale, dbias = Ref{Int64}(0), Ref{Int64}(0), Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_norm_options(_name_ptr(nm), :training, epsilon, zero_centered_gamma,
                              compute_dtype))
        dbias_out = with_bias ? dbias : C_NULL
        check(g, Lib.cudnnfe_graph_add_rmsnorm_backward(g, udy, ux, us, ur, r, dx, dscale,
                                                        dbias_out))
    end
    return (Tensor(g, dx[]), Tensor(g, dscale[]), with_bias ? Tensor(g, dbias[]) : nothing)
end

"""
    softmax!(g, x; stats = false, compute_dtype = nothing, name = nothing) -> (y, stats_tensor)

Softmax over the **first** dimension in Julia order (the C library's last),
like `NNlib.softmax(x; dims = 1)`. With `stats = true` the second result is
the FLOAT log-sum-exp `(1, size(x)[2:end]...)`; else it is `nothing`.
"""
function softmax!(g::Graph, x; stats::Bool = false, compute_dtype = nothing, name = nothing)
    ux = _uid(g, x)
    o = _default_options(Lib.cudnnfe_softmax_options_t, Lib.cudnnfe_softmax_options_init)
    nm = _cstring(name)
    y, st = Ref{Int64}(0), Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_with(o; name = _name_ptr(nm), compute_dtype = _compute(compute_dtype),
                      generate_stats = Int32(stats)))
        check(g, Lib.cudnnfe_graph_add_softmax(g, ux, r, y, st))
    end
    return (Tensor(g, y[]), stats ? Tensor(g, st[]) : nothing)
end
