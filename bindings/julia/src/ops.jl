# Operations. Each takes its operands (Tensors of the graph, or UIDs) and
# keyword arguments for the C options struct, and returns the new output
# tensor(s): virtual until marked with `set_output!`. Sizes, axes, paddings,
# strides and dilations are in Julia order (see the module docstring).

const CONV_MODE_CODES = _prefixed_constants("CUDNNFE_CONV_MODE_")   # :cross_correlation, :convolution
const POINTWISE_CODES = _prefixed_constants("CUDNNFE_POINTWISE_")   # :add, :relu_fwd, ...
const REDUCTION_CODES = _prefixed_constants("CUDNNFE_REDUCTION_")   # :add, :max, :avg, ...

# An options struct as its C init function (`cudnnfe_X_init_sized`) fills
# it, told the size of the generated struct: the library writes exactly
# those bytes (`cudnnfe_X_init` is a C macro, which no ccall can reach).
function _default_options(::Type{T}, init::F) where {T,F}
    r = Ref{T}()
    init(r, sizeof(T))
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
        "$what has $(length(vals)) entries but the operation has $n spatial dims " *
        "(give them in Julia order, e.g. (W, H))"))
    c = reverse(vals)
    return ntuple(i -> i <= n ? c[i] : default[i], 3)
end

function _conv!(kind::Symbol, g::Graph, a, b, pre_padding, post_padding, stride, dilation, mode,
                compute_dtype, name)
    ua = _uid(g, a)
    ub = _uid(g, b)
    o = _default_options(Lib.cudnnfe_conv_options_t, Lib.cudnnfe_conv_options_init_sized)
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
NCHW / KCRS tensors of cuDNN, and the layout of NNlib and Flux). `y` (and
`conv_dgrad!`'s dx, `conv_wgrad!`'s dw) is stored channels-last, K innermost,
unless its strides are set (`set_strides!`), as in cudnn-frontend;
`allocate(y)` gives an array with that layout.

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
    o = _default_options(Lib.cudnnfe_matmul_options_t, Lib.cudnnfe_matmul_options_init_sized)
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
    o = _default_options(Lib.cudnnfe_pointwise_options_t, Lib.cudnnfe_pointwise_options_init_sized)
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
`:norm2` or `:mul_no_zeros`. `y` is stored channels-last (C innermost; column-major
for 2 dims) unless its strides are set, as in cudnn-frontend.
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
    o = _default_options(Lib.cudnnfe_reduction_options_t, Lib.cudnnfe_reduction_options_init_sized)
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

const DIAGONAL_CODES = _prefixed_constants("CUDNNFE_DIAGONAL_")  # :top_left, :bottom_right
# :auto, :composite, :unified (since 0.3)
const IMPLEMENTATION_CODES = _prefixed_constants("CUDNNFE_ATTENTION_IMPLEMENTATION_")

_float_or_nothing(x) = x === nothing ? nothing : Float64(x)
# A band bound: `nothing` is open (the C -1).
_bound(x) = x === nothing ? Int64(-1) : Int64(x)

# The C fields of the attention options forward and backward share
# (docs/attention.md), as keyword arguments of `_with`. `scale` is a number
# (attn_scale) or a Tensor (attn_scale_tensor); giving a sequence length
# turns the padding mask on.
function _attention_fields(g::Graph, scale, causal, bias, seq_len_q, seq_len_kv, window_left,
                           window_right, diagonal_alignment, alibi, dropout_probability,
                           dropout_seed, dropout_offset, dropout_mask, dropout_scale)
    top_left, bottom_right = _causal_flags(causal)
    return (attn_scale = scale isa Tensor ? nothing : _float_or_nothing(scale),
            attn_scale_tensor = scale isa Tensor ? _uid(g, scale) : Int64(0),
            causal_mask = top_left, causal_mask_bottom_right = bottom_right, bias = _uid(g, bias),
            padding_mask = Int32(seq_len_q !== nothing || seq_len_kv !== nothing),
            seq_len_q = _uid(g, seq_len_q), seq_len_kv = _uid(g, seq_len_kv),
            window_left = _bound(window_left), window_right = _bound(window_right),
            diagonal_alignment = _code(DIAGONAL_CODES, "diagonal alignment", diagonal_alignment),
            alibi_mask = Int32(alibi), dropout_probability = _float_or_nothing(dropout_probability),
            dropout_seed = _uid(g, dropout_seed), dropout_offset = _uid(g, dropout_offset),
            dropout_mask = _uid(g, dropout_mask), dropout_scale = _uid(g, dropout_scale))
end

const _ATTENTION_KWARGS_DOC = """
Attention options (`docs/attention.md` defines each; the backward takes the
forward's):

  * `scale`: the softmax scale, a number (default `1/sqrt(d)`) or a FLOAT
    tensor of one element (a graph input read at every execute, or a scalar);
  * `causal`: `false`, `true` or `:top_left` (row `i` sees keys `<= i`), or
    `:bottom_right` (keys `<= i + s_kv - s_q`);
  * `bias`: an additive tensor broadcastable to `(s_kv, s_q, h_q, b)`;
  * `seq_len_q`, `seq_len_kv`: variable sequence lengths, INT32 graph inputs
    of size `(1, 1, 1, b)` (giving them turns the padding mask on): query
    `i` of batch `n` sees key `j` only if `i <= seq_len_q[n]` and
    `j <= seq_len_kv[n]` (1-based). Padding rows are unspecified on the GPU
    (0, and stats `-Inf`, on the CPU reference);
  * `window_left`, `window_right`: the diagonal band (sliding window) around
    query `i`'s diagonal `d(i)`: it sees key `j` only if
    `j > d(i) - window_left` and `j <= d(i) + window_right`; `nothing`
    (default) leaves that side open. `diagonal_alignment = :top_left`
    (`d(i) = i`) or `:bottom_right` (`i + s_kv - s_q`; with padding, of the
    batch's lengths). A causal mask is `window_right = 0`;
  * `alibi = true`: ALiBi, `slope(h) * (j - i)` added to the scores with
    cudnn-frontend's slopes (on a GPU it needs a top-left causal mask,
    refused with `:not_supported` at validation; the CPU reference takes
    any mask);
  * `ragged_offset_q`, `ragged_offset_k`, `ragged_offset_v`,
    `ragged_offset_o`: packed (THD) storage: INT32/INT64 graph inputs of size
    `(1, 1, 1, b + 1)` holding each sequence's element offset (needs the
    sequence lengths); in the backward each also covers its gradient
    (dq, dk, dv, dO); `ragged_offset_stats` the same for the stats (the
    forward's output, the backward's input);
  * `score_mod`: a score modifier (the placeholder `score_mod!` or
    `begin_score_mod!` returned), applied to every score after the scale;
    the backward builds the forward's modifier again and takes it too, with
    `score_mod_bprop` (the gradient's modifier, dS' -> dS; default dS =
    dS'). Since 0.3;
  * dropout of the softmax output, drawn: `dropout_probability` with
    `dropout_seed` and `dropout_offset` (INT64 tensors of one element; the
    CPU reference draws other bits than cuDNN); or given: `dropout_mask`
    (broadcastable to `(s_kv, s_q, h_q, b)`) and `dropout_scale` (a FLOAT
    tensor of one element).
"""

# The ragged-offset fields of both directions.
_ragged_fields(g::Graph, q, k, v, o, stats) =
    (ragged_offset_q = _uid(g, q), ragged_offset_k = _uid(g, k), ragged_offset_v = _uid(g, v),
     ragged_offset_o = _uid(g, o), ragged_offset_stats = _uid(g, stats))

"""
    sdpa!(g, q, k, v; scale = nothing, causal = false, bias = nothing, stats = false,
          seq_len_q = nothing, seq_len_kv = nothing, window_left = nothing,
          window_right = nothing, diagonal_alignment = :top_left, alibi = false,
          dropout_probability = nothing, dropout_seed = nothing, dropout_offset = nothing,
          dropout_mask = nothing, dropout_scale = nothing, ragged_offset_q = nothing,
          ragged_offset_k = nothing, ragged_offset_v = nothing, ragged_offset_o = nothing,
          ragged_offset_stats = nothing, page_table_k = nothing, page_table_v = nothing, max_seq_len_kv = nothing,
          ragged_offset_page_table_k = nothing, ragged_offset_page_table_v = nothing,
          implementation = :auto, sink_token = nothing, block_mask = nothing,
          score_mod = nothing, score_max = nothing, score_sum_exp = nothing,
          rng_dump = nothing, ragged_offset_score_max = nothing,
          ragged_offset_score_sum_exp = nothing, unfuse_fma = false, compute_dtype = nothing,
          name = nothing) -> (o, stats_tensor)

Scaled dot-product attention forward, in Julia order: `q` `(d, s_q, h_q, b)`,
`k` `(d, s_kv, h_k, b)`, `v` `(d_v, s_kv, h_v, b)` (any strides; `h_k` and
`h_v`, which may differ, must each divide `h_q`: GQA/MQA; else
`CuDNNFEError(:not_supported, ...)`); `o` is `(d_v, s_q, h_q, b)` with `q`'s
dimension order. With `stats = true` the second result is the FLOAT
log-sum-exp tensor `(1, s_q, h_q, b)` for backward; else it is `nothing`.
A paged K/V cache: `k`/`v` are page containers `(d, page_size, h_kv,
num_pages)` read through `page_table_k`/`page_table_v` (INT32 graph inputs of
size `(1, pages_per_sequence, 1, b)`, needing `seq_len_kv`); `max_seq_len_kv`
sets s_kv (default: the pages' capacity). `ragged_offset_page_table_k` /
`_v` make a table packed (INT32/INT64 graph inputs of size `(1, 1, 1, b + 1)`:
batch n's entries start at its offset; cuDNN 9.10.2 and newer). `o` is
ragged only with `ragged_offset_o`, else padded, whatever `q`'s layout.
`implementation` is `:auto`,
`:composite` or `:unified` (cudnn-frontend's attention_implementation);
`sink_token` a FLOAT `(1, 1, h_q, 1)` sink logit per head added to each row's
softmax denominator; `block_mask` a UINT8 bit-packed mask of 128x128 score
tiles `(ceil(ceil(s_kv/128)/8), ceil(s_q/128), h_q, b)` (unified only).
`score_max` and `score_sum_exp` (Float32 `(1, s_q, h_q, b)`) and `rng_dump`
(Float32 `(s_kv, s_q, h_q, b)`): tensors made with `add_tensor!` that no op
reads, which the node takes as its outputs (cudnn-frontend's): the
softmax's row max `m`, its sum of exponentials `Z` (a sink included; `stats
= m + log(Z)`; a row that sees nothing has `m = -Inf`, `Z = 0`) and the
dropout mask drawn from `dropout_seed` and `dropout_offset` (0 or 1); bind
arrays for them at `execute!` (since 0.4). `unfuse_fma = true`: the unified
operation's softmax with unfused multiply-adds (cuDNN 9.21 and newer; the
composite graph and the CPU reference ignore it; since 0.4).

$_ATTENTION_KWARGS_DOC
"""
function sdpa!(g::Graph, q, k, v; scale = nothing, causal = false, bias = nothing,
               stats::Bool = false, seq_len_q = nothing, seq_len_kv = nothing,
               window_left = nothing, window_right = nothing, diagonal_alignment = :top_left,
               alibi::Bool = false, dropout_probability = nothing, dropout_seed = nothing,
               dropout_offset = nothing, dropout_mask = nothing, dropout_scale = nothing,
               ragged_offset_q = nothing, ragged_offset_k = nothing, ragged_offset_v = nothing,
               ragged_offset_o = nothing, ragged_offset_stats = nothing,
               page_table_k = nothing, page_table_v = nothing,
               max_seq_len_kv = nothing, ragged_offset_page_table_k = nothing,
               ragged_offset_page_table_v = nothing, implementation = :auto,
               sink_token = nothing, block_mask = nothing, score_mod = nothing,
               score_max = nothing, score_sum_exp = nothing, rng_dump = nothing,
               ragged_offset_score_max = nothing, ragged_offset_score_sum_exp = nothing,
               unfuse_fma::Bool = false, compute_dtype = nothing, name = nothing)
    uq = _uid(g, q)
    uk = _uid(g, k)
    uv = _uid(g, v)
    fields = _attention_fields(g, scale, causal, bias, seq_len_q, seq_len_kv, window_left,
                               window_right, diagonal_alignment, alibi, dropout_probability,
                               dropout_seed, dropout_offset, dropout_mask, dropout_scale)
    o = _default_options(Lib.cudnnfe_sdpa_options_t, Lib.cudnnfe_sdpa_options_init_sized)
    nm = _cstring(name)
    out = Ref{Int64}(0)
    st = Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_with(o; name = _name_ptr(nm), compute_dtype = _compute(compute_dtype),
                      generate_stats = Int32(stats), fields...,
                      _ragged_fields(g, ragged_offset_q, ragged_offset_k, ragged_offset_v,
                                     ragged_offset_o, ragged_offset_stats)...,
                      page_table_k = _uid(g, page_table_k), page_table_v = _uid(g, page_table_v),
                      max_seq_len_kv = max_seq_len_kv === nothing ? Int64(0) :
                                       Int64(max_seq_len_kv),
                      implementation = _code(IMPLEMENTATION_CODES, "attention implementation",
                                             implementation),
                      sink_token = _uid(g, sink_token), block_mask = _uid(g, block_mask),
                      ragged_offset_page_table_k = _uid(g, ragged_offset_page_table_k),
                      ragged_offset_page_table_v = _uid(g, ragged_offset_page_table_v),
                      score_mod = _uid(g, score_mod), score_max = _uid(g, score_max),
                      score_sum_exp = _uid(g, score_sum_exp), rng_dump = _uid(g, rng_dump),
                      ragged_offset_score_max = _uid(g, ragged_offset_score_max),
                      ragged_offset_score_sum_exp = _uid(g, ragged_offset_score_sum_exp),
                      unfuse_fma = Int32(unfuse_fma)))
        check(g, Lib.cudnnfe_graph_add_sdpa(g, uq, uk, uv, r, out, st))
    end
    return (Tensor(g, out[]), stats ? Tensor(g, st[]) : nothing)
end

"""
    set_ragged_offset!(g, tensor, offset) -> g

Gives `tensor` the ragged (packed) offsets `offset` (as the `ragged_offset_*`
keywords) after the attention nodes that read or write it were added, as
cudnn-frontend's `set_ragged_offset` does on an op's output (e.g. the `o`
`sdpa!` returned); `offset = nothing` makes it padded. It sets that
operand's offsets in every attention node using `tensor`: q, k, v, o, stats
and the page tables of `sdpa!`; q, k, v, o (which also describe dq, dk, dv,
dO) and stats of `sdpa_backward!`. Throws `CuDNNFEError(:invalid_argument,
...)` when no attention node uses `tensor` at such a port. Since 0.3.
"""
function set_ragged_offset!(g::Graph, tensor, offset)
    check(g, Lib.cudnnfe_graph_set_ragged_offset(g, _uid(g, tensor), _uid(g, offset)))
    return g
end

# A token count that `nothing` leaves unset (0).
_tokens(n) = n === nothing ? Int64(0) : Int64(n)

"""
    sdpa_backward!(g, q, k, v, o, dO, stats; dbias = false, deterministic = false,
                   dropout_scale_inv = nothing, <the attention options of sdpa!>,
                   sink_token = nothing, dsink_token = nothing,
                   max_total_seq_len_q = nothing, max_total_seq_len_kv = nothing,
                   compute_dtype = nothing, name = nothing) -> (dq, dk, dv)

Scaled dot-product attention backward, in Julia order as `sdpa!`: from the
forward's `q`, `k`, `v`, its output `o`, the loss gradient `dO` (shaped as
`o`) and the forward's `stats` `(1, s_q, h_q, b)`, makes `dq`, `dk`, `dv`
with the shapes and dimension orders of `q`, `k`, `v`. The attention options
must be the forward's. `deterministic = true` asks for bitwise reproducible
gradients. With `dbias = true` (`bias` of size `(s_kv, s_q, h_q, 1)`, the
one dBias shape cuDNN's engines produce) the result is `(dq, dk, dv, dbias)`,
`dbias` shaped as `bias`: the sum over the batch of the gradient of the
biased scores. With a given `dropout_mask`, `dropout_scale_inv` (a FLOAT
tensor of one element holding `1 / dropout_scale`) is required; on the GPU
it must be a scalar of 1 (fold the scale into the mask). `sink_token`: the
forward's FLOAT `(1, 1, h_q, 1)` sink logits; `dsink_token`: their gradient,
a FLOAT `(1, 1, h_q, 1)` tensor made with `add_tensor!` that no op reads, which
the node writes (it becomes a graph output; needs `sink_token`; since 0.3).
`max_total_seq_len_q` / `max_total_seq_len_kv`: cudnn-frontend's bounds on
the total tokens of a ragged (packed) layout, only checked: a GPU refuses
them (`CuDNNFEError(:not_supported, ...)` at validation) when no tensor of
the node has ragged offsets; `nothing`: not given (since 0.4).

$_ATTENTION_KWARGS_DOC
"""
function sdpa_backward!(g::Graph, q, k, v, o, dO, stats; scale = nothing, causal = false,
                        bias = nothing, deterministic::Bool = false, dbias::Bool = false,
                        seq_len_q = nothing, seq_len_kv = nothing, window_left = nothing,
                        window_right = nothing, diagonal_alignment = :top_left,
                        alibi::Bool = false, dropout_probability = nothing,
                        dropout_seed = nothing, dropout_offset = nothing, dropout_mask = nothing,
                        dropout_scale = nothing, dropout_scale_inv = nothing,
                        ragged_offset_q = nothing, ragged_offset_k = nothing,
                        ragged_offset_v = nothing, ragged_offset_o = nothing,
                        ragged_offset_stats = nothing, score_mod = nothing,
                        score_mod_bprop = nothing, sink_token = nothing,
                        dsink_token = nothing, max_total_seq_len_q = nothing,
                        max_total_seq_len_kv = nothing, compute_dtype = nothing, name = nothing)
    uq, uk, uv, uo, udo, ust = _uid(g, q), _uid(g, k), _uid(g, v), _uid(g, o), _uid(g, dO),
                               _uid(g, stats)
    fields = _attention_fields(g, scale, causal, bias, seq_len_q, seq_len_kv, window_left,
                               window_right, diagonal_alignment, alibi, dropout_probability,
                               dropout_seed, dropout_offset, dropout_mask, dropout_scale)
    opts = _default_options(Lib.cudnnfe_sdpa_backward_options_t,
                            Lib.cudnnfe_sdpa_backward_options_init_sized)
    nm = _cstring(name)
    dq, dk, dv, db = Ref{Int64}(0), Ref{Int64}(0), Ref{Int64}(0), Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_with(opts; name = _name_ptr(nm), compute_dtype = _compute(compute_dtype),
                      deterministic = Int32(deterministic),
                      dropout_scale_inv = _uid(g, dropout_scale_inv), fields...,
                      sink_token = _uid(g, sink_token), dsink_token = _uid(g, dsink_token),
                      _ragged_fields(g, ragged_offset_q, ragged_offset_k, ragged_offset_v,
                                     ragged_offset_o, ragged_offset_stats)...,
                      score_mod = _uid(g, score_mod), score_mod_bprop = _uid(g, score_mod_bprop),
                      max_total_seq_len_q = _tokens(max_total_seq_len_q),
                      max_total_seq_len_kv = _tokens(max_total_seq_len_kv)))
        if dbias
            check(g, Lib.cudnnfe_graph_add_sdpa_backward_ex(g, uq, uk, uv, uo, udo, ust, r, dq, dk,
                                                            dv, db))
        else
            check(g, Lib.cudnnfe_graph_add_sdpa_backward(g, uq, uk, uv, uo, udo, ust, r, dq, dk,
                                                         dv))
        end
    end
    grads = (Tensor(g, dq[]), Tensor(g, dk[]), Tensor(g, dv[]))
    return dbias ? (grads..., Tensor(g, db[])) : grads
end

# FP8 attention's mask fields: `causal` as for `sdpa!` (the C ABI's FP8
# options have no bottom-right flag: `:bottom_right` is window_right = 0 with
# the bottom-right alignment) and the diagonal band.
function _fp8_band_fields(causal, window_left, window_right, diagonal_alignment)
    top_left, bottom_right = _causal_flags(causal)
    right = bottom_right == 1 ? Int64(0) : _bound(window_right)
    alignment = bottom_right == 1 ? :bottom_right : diagonal_alignment
    return (causal_mask = top_left, window_left = _bound(window_left), window_right = right,
            diagonal_alignment = _code(DIAGONAL_CODES, "diagonal alignment", alignment))
end

# FP8 attention's padding and dropout fields (forward and backward), as for
# `sdpa!`: giving a sequence length turns the padding mask on.
function _fp8_padding_dropout_fields(g::Graph, seq_len_q, seq_len_kv, dropout_probability,
                                     dropout_seed, dropout_offset, dropout_mask, dropout_scale)
    return (padding_mask = Int32(seq_len_q !== nothing || seq_len_kv !== nothing),
            seq_len_q = _uid(g, seq_len_q), seq_len_kv = _uid(g, seq_len_kv),
            dropout_probability = _float_or_nothing(dropout_probability),
            dropout_seed = _uid(g, dropout_seed), dropout_offset = _uid(g, dropout_offset),
            dropout_mask = _uid(g, dropout_mask), dropout_scale = _uid(g, dropout_scale))
end

"""
    sdpa_fp8!(g, q, k, v; descale_q, descale_k, descale_v, descale_s, scale_s, scale_o,
              scale = nothing, causal = false, stats = false, window_left = nothing,
              window_right = nothing, diagonal_alignment = :top_left, seq_len_q = nothing,
              seq_len_kv = nothing, alibi = false, dropout_probability = nothing,
              dropout_seed = nothing, dropout_offset = nothing, dropout_mask = nothing,
              dropout_scale = nothing, page_table_k = nothing, page_table_v = nothing,
              max_seq_len_kv = nothing, sink_token = nothing, name = nothing)
        -> (o, stats_tensor, amax_s, amax_o)

FP8 attention forward (cudnn-frontend's `sdpa_fp8`; cuDNN runs it on Hopper
and newer), in Julia order as `sdpa!`: `q`, `k`, `v` of one FP8 type
(`:fp8_e4m3` or `:fp8_e5m2`). Every descale and scale is a FLOAT tensor of
one element (a graph input or a scalar). With `S = Q·Kᵀ * scale * descale_q
* descale_k` and `P = softmax(S)`: `amax_s = max|P|`, `P8 = fp8(P * scale_s)`,
`O' = P8·V * descale_s * descale_v`, `amax_o = max|O'|`, `o = O' * scale_o`.
`o` has `q`'s type unless set (`set_dtype!`: FP8, `:half` or `:bfloat16`).
Mark `amax_s` and `amax_o` with `set_output!` (a virtual amax is refused).
`causal` is `false`, `true` or `:top_left`, or `:bottom_right`; `window_left`,
`window_right` and `diagonal_alignment` are the diagonal band (sliding
window); `seq_len_q`/`seq_len_kv` (padding), `alibi`, dropout (drawn:
`dropout_probability` with `dropout_seed` and `dropout_offset`; given:
`dropout_mask` and `dropout_scale`; P is dropped before `scale_s` and
`amax_s` is taken after), a paged K/V cache (`page_table_k`,
`page_table_v`, `max_seq_len_kv`) and `sink_token` are as for `sdpa!`.
"""
function sdpa_fp8!(g::Graph, q, k, v; descale_q, descale_k, descale_v, descale_s, scale_s,
                   scale_o, scale = nothing, causal = false, stats::Bool = false,
                   window_left = nothing, window_right = nothing,
                   diagonal_alignment = :top_left, seq_len_q = nothing, seq_len_kv = nothing,
                   alibi::Bool = false, dropout_probability = nothing, dropout_seed = nothing,
                   dropout_offset = nothing, dropout_mask = nothing, dropout_scale = nothing,
                   page_table_k = nothing, page_table_v = nothing, max_seq_len_kv = nothing,
                   sink_token = nothing, name = nothing)
    t = map(x -> _uid(g, x), (q, k, v, descale_q, descale_k, descale_v, descale_s, scale_s,
                              scale_o))
    o = _default_options(Lib.cudnnfe_sdpa_fp8_options_t, Lib.cudnnfe_sdpa_fp8_options_init_sized)
    nm = _cstring(name)
    out, st, amax_s, amax_o = Ref{Int64}(0), Ref{Int64}(0), Ref{Int64}(0), Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_with(o; name = _name_ptr(nm), attn_scale = _float_or_nothing(scale),
                      generate_stats = Int32(stats),
                      _fp8_band_fields(causal, window_left, window_right,
                                       diagonal_alignment)...,
                      _fp8_padding_dropout_fields(g, seq_len_q, seq_len_kv, dropout_probability,
                                                  dropout_seed, dropout_offset, dropout_mask,
                                                  dropout_scale)...,
                      alibi_mask = Int32(alibi), page_table_k = _uid(g, page_table_k),
                      page_table_v = _uid(g, page_table_v),
                      max_seq_len_kv = max_seq_len_kv === nothing ? Int64(0) :
                                       Int64(max_seq_len_kv),
                      sink_token = _uid(g, sink_token)))
        check(g, Lib.cudnnfe_graph_add_sdpa_fp8(g, t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8],
                                                t[9], r, out, st, amax_s, amax_o))
    end
    return (Tensor(g, out[]), stats ? Tensor(g, st[]) : nothing, Tensor(g, amax_s[]),
            Tensor(g, amax_o[]))
end

"""
    sdpa_fp8_backward!(g, q, k, v, o, dO, stats; descale_q, descale_k, descale_v, descale_o,
                       descale_do, descale_s, descale_dp, scale_s, scale_dq, scale_dk, scale_dv,
                       scale_dp, scale = nothing, causal = false, window_left = nothing,
                       window_right = nothing, diagonal_alignment = :top_left,
                       seq_len_q = nothing, seq_len_kv = nothing, dropout_probability = nothing,
                       dropout_seed = nothing, dropout_offset = nothing, dropout_mask = nothing,
                       dropout_scale = nothing, dropout_scale_inv = nothing, name = nothing)
        -> (dq, dk, dv, amax_dq, amax_dk, amax_dv, amax_dp)

FP8 attention backward (the C header gives the formulas), in Julia order: from
`q`, `k`, `v`, the forward's `o`, the FP8 loss gradient `dO` and the forward's
`stats`; every descale and scale a FLOAT tensor of one element. The
gradients have the shapes and dimension orders of `q`, `k`, `v`; mark the
four amax outputs with `set_output!`. `causal`, the band, padding and dropout
as the forward's; with a given `dropout_mask`, `dropout_scale_inv` (a FLOAT
tensor of one element, `1 / dropout_scale`) is required, as for
`sdpa_backward!`.
"""
function sdpa_fp8_backward!(g::Graph, q, k, v, o, dO, stats; descale_q, descale_k, descale_v,
                            descale_o, descale_do, descale_s, descale_dp, scale_s, scale_dq,
                            scale_dk, scale_dv, scale_dp, scale = nothing, causal = false,
                            window_left = nothing, window_right = nothing,
                            diagonal_alignment = :top_left, seq_len_q = nothing,
                            seq_len_kv = nothing, dropout_probability = nothing,
                            dropout_seed = nothing, dropout_offset = nothing,
                            dropout_mask = nothing, dropout_scale = nothing,
                            dropout_scale_inv = nothing, name = nothing)
    t = map(x -> _uid(g, x), (q, k, v, o, dO, stats, descale_q, descale_k, descale_v, descale_o,
                              descale_do, descale_s, descale_dp, scale_s, scale_dq, scale_dk,
                              scale_dv, scale_dp))
    opts = _default_options(Lib.cudnnfe_sdpa_fp8_backward_options_t,
                            Lib.cudnnfe_sdpa_fp8_backward_options_init_sized)
    nm = _cstring(name)
    out = ntuple(_ -> Ref{Int64}(0), 7)
    GC.@preserve nm begin
        r = Ref(_with(opts; name = _name_ptr(nm), attn_scale = _float_or_nothing(scale),
                      _fp8_band_fields(causal, window_left, window_right,
                                       diagonal_alignment)...,
                      _fp8_padding_dropout_fields(g, seq_len_q, seq_len_kv, dropout_probability,
                                                  dropout_seed, dropout_offset, dropout_mask,
                                                  dropout_scale)...,
                      dropout_scale_inv = _uid(g, dropout_scale_inv)))
        check(g, Lib.cudnnfe_graph_add_sdpa_fp8_backward(g, t[1], t[2], t[3], t[4], t[5], t[6],
                                                         t[7], t[8], t[9], t[10], t[11], t[12],
                                                         t[13], t[14], t[15], t[16], t[17],
                                                         t[18], r, out[1], out[2], out[3],
                                                         out[4], out[5], out[6], out[7]))
    end
    return map(x -> Tensor(g, x[]), out)
end

const NORM_PHASE_CODES = _prefixed_constants("CUDNNFE_NORM_PHASE_")  # :training, :inference

# epsilon and momentum: a number (the option), or a Tensor, a one-element
# FLOAT graph input read at execute (epsilon_tensor / momentum_tensor;
# pass-by-value for the GPU).
_norm_number(v) = v isa Tensor ? nothing : _float_or_nothing(v)
_norm_tensor(v) = v isa Tensor ? v.uid : Int64(0)

function _norm_options(nameptr, phase, epsilon, zero_centered_gamma, compute_dtype;
                       momentum = nothing)
    o = _default_options(Lib.cudnnfe_norm_options_t, Lib.cudnnfe_norm_options_init_sized)
    return _with(o; name = nameptr, compute_dtype = _compute(compute_dtype),
                 phase = _code(NORM_PHASE_CODES, "normalization phase", phase),
                 epsilon = _norm_number(epsilon), epsilon_tensor = _norm_tensor(epsilon),
                 zero_centered_gamma = Int32(zero_centered_gamma),
                 momentum = _norm_number(momentum), momentum_tensor = _norm_tensor(momentum))
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
    o = _default_options(Lib.cudnnfe_softmax_options_t, Lib.cudnnfe_softmax_options_init_sized)
    nm = _cstring(name)
    y, st = Ref{Int64}(0), Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_with(o; name = _name_ptr(nm), compute_dtype = _compute(compute_dtype),
                      generate_stats = Int32(stats)))
        check(g, Lib.cudnnfe_graph_add_softmax(g, ux, r, y, st))
    end
    return (Tensor(g, y[]), stats ? Tensor(g, st[]) : nothing)
end

"""
    batchnorm!(g, x, scale, bias; running_mean = nothing, running_var = nothing,
               momentum = nothing, epsilon = nothing, compute_dtype = nothing, name = nothing)
        -> (y, mean, inv_variance, next_running_mean, next_running_var)

Batch normalization, training, in Julia order: `x` is `(spatial..., C, N)`
(e.g. WHCN), statistics are per channel over N and the spatial dims (`M`
values each); `scale`, `bias` and the statistics are `(1, ..., 1, C, 1)`,
FLOAT; `inv_variance = 1/sqrt(var + epsilon)` (biased variance). With
`running_mean` and `running_var` (`(1, ..., C, 1)`) the last two results are
the updated running statistics, `(1 - momentum) * running + momentum *
batch` (`momentum` default 0.1), the variance Bessel-corrected (`var * M /
(M - 1)`), else `nothing`. Binding a result to its running input's array
updates it in place.
"""
function batchnorm!(g::Graph, x, scale, bias; running_mean = nothing, running_var = nothing,
                    momentum = nothing, epsilon = nothing, compute_dtype = nothing,
                    name = nothing)
    ux, us, ub = _uid(g, x), _uid(g, scale), _uid(g, bias)
    um, uv = _uid(g, running_mean), _uid(g, running_var)
    nm = _cstring(name)
    y, mean, ivar, nmean, nvar = ntuple(_ -> Ref{Int64}(0), 5)
    GC.@preserve nm begin
        r = Ref(_norm_options(_name_ptr(nm), :training, epsilon, false, compute_dtype;
                              momentum = momentum))
        check(g, Lib.cudnnfe_graph_add_batchnorm(g, ux, us, ub, um, uv, r, y, mean, ivar, nmean,
                                                 nvar))
    end
    return (Tensor(g, y[]), Tensor(g, mean[]), Tensor(g, ivar[]), _optional(g, nmean[]),
            _optional(g, nvar[]))
end

"""
    batchnorm_inference!(g, x, scale, bias, mean, inv_variance; compute_dtype = nothing,
                         name = nothing) -> y

Batch normalization, inference: `y = (x - mean) * inv_variance * scale + bias`
per channel, with the given statistics `(1, ..., C, 1)` (from running
statistics, `inv_variance = 1 ./ sqrt.(running_var .+ epsilon)`). On the GPU
cuDNN runs it only inside its fused batch norm patterns (see the C header).
"""
function batchnorm_inference!(g::Graph, x, scale, bias, mean, inv_variance;
                              compute_dtype = nothing, name = nothing)
    ux, us, ub, um, uv = _uid(g, x), _uid(g, scale), _uid(g, bias), _uid(g, mean),
                         _uid(g, inv_variance)
    nm = _cstring(name)
    y = Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_norm_options(_name_ptr(nm), :training, nothing, false, compute_dtype))
        check(g, Lib.cudnnfe_graph_add_batchnorm_inference(g, ux, us, ub, um, uv, r, y))
    end
    return Tensor(g, y[])
end

# The normalizations' backward ops: (dx, dscale, dbias).
function _norm_backward(add::F, g::Graph, dy, x, scale, mean, inv_variance, epsilon,
                        zero_centered_gamma, compute_dtype, name) where {F}
    udy, ux, us, um, uv = _uid(g, dy), _uid(g, x), _uid(g, scale), _uid(g, mean),
                          _uid(g, inv_variance)
    nm = _cstring(name)
    dx, dscale, dbias = Ref{Int64}(0), Ref{Int64}(0), Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_norm_options(_name_ptr(nm), :training, epsilon, zero_centered_gamma,
                              compute_dtype))
        check(g, add(g, udy, ux, us, um, uv, r, dx, dscale, dbias))
    end
    return (Tensor(g, dx[]), Tensor(g, dscale[]), Tensor(g, dbias[]))
end

"""
    batchnorm_backward!(g, dy, x, scale, mean, inv_variance; compute_dtype = nothing,
                        name = nothing) -> (dx, dscale, dbias)

Batch norm backward from the loss gradient `dy` (shaped as `x`), the
forward's `x`, `scale` and statistics; `dscale` and `dbias` are shaped as
`scale`, in its type.
"""
function batchnorm_backward!(g::Graph, dy, x, scale, mean, inv_variance; compute_dtype = nothing,
                             name = nothing)
    return _norm_backward(Lib.cudnnfe_graph_add_batchnorm_backward, g, dy, x, scale, mean,
                          inv_variance, nothing, false, compute_dtype, name)
end

# instancenorm! and adalayernorm!: (y, mean, inv_variance).
function _norm_forward(add::F, g::Graph, x, scale, bias, phase, epsilon, zero_centered_gamma,
                       compute_dtype, name) where {F}
    ux, us, ub = _uid(g, x), _uid(g, scale), _uid(g, bias)
    nm = _cstring(name)
    y, mean, ivar = Ref{Int64}(0), Ref{Int64}(0), Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_norm_options(_name_ptr(nm), phase, epsilon, zero_centered_gamma, compute_dtype))
        check(g, add(g, ux, us, ub, r, y, mean, ivar))
    end
    return (Tensor(g, y[]), _optional(g, mean[]), _optional(g, ivar[]))
end

"""
    instancenorm!(g, x, scale, bias; phase = :training, epsilon = nothing,
                  compute_dtype = nothing, name = nothing) -> (y, mean, inv_variance)

Instance normalization, in Julia order: `x` is `(spatial..., C, N)`;
statistics are per (channel, sample) over the spatial dims, FLOAT `(1, ...,
1, C, N)` (`nothing` in inference); `scale` and `bias` are `(1, ..., C, 1)`.
"""
function instancenorm!(g::Graph, x, scale, bias; phase = :training, epsilon = nothing,
                       compute_dtype = nothing, name = nothing)
    return _norm_forward(Lib.cudnnfe_graph_add_instancenorm, g, x, scale, bias, phase, epsilon,
                         false, compute_dtype, name)
end

"""
    instancenorm_backward!(g, dy, x, scale, mean, inv_variance; epsilon = nothing,
                           compute_dtype = nothing, name = nothing) -> (dx, dscale, dbias)

Instance norm backward; `dscale` and `dbias` are shaped as `scale`.
"""
function instancenorm_backward!(g::Graph, dy, x, scale, mean, inv_variance; epsilon = nothing,
                                compute_dtype = nothing, name = nothing)
    return _norm_backward(Lib.cudnnfe_graph_add_instancenorm_backward, g, dy, x, scale, mean,
                          inv_variance, epsilon, false, compute_dtype, name)
end

"""
    adalayernorm!(g, x, scale, bias; phase = :training, epsilon = nothing,
                  zero_centered_gamma = false, compute_dtype = nothing, name = nothing)
        -> (y, mean, inv_variance)

Adaptive layer normalization (DiT's), in Julia order: `x` is `(features...,
S, B)`; statistics are per (token, sample) over the features, FLOAT `(1,
..., 1, S, B)` (`nothing` in inference); `scale` and `bias` are per sample,
`(features..., 1, B)`. With `zero_centered_gamma` the gain is `1 + scale`
(DiT's `modulate(x, shift, scale)` with `bias = shift`).
"""
function adalayernorm!(g::Graph, x, scale, bias; phase = :training, epsilon = nothing,
                       zero_centered_gamma::Bool = false, compute_dtype = nothing, name = nothing)
    return _norm_forward(Lib.cudnnfe_graph_add_adalayernorm, g, x, scale, bias, phase, epsilon,
                         zero_centered_gamma, compute_dtype, name)
end

"""
    adalayernorm_backward!(g, dy, x, scale, mean, inv_variance; epsilon = nothing,
                           zero_centered_gamma = false, compute_dtype = nothing,
                           name = nothing) -> (dx, dscale, dbias)

Adaptive layer norm backward; `dscale` and `dbias` are per sample, shaped as
`scale`.
"""
function adalayernorm_backward!(g::Graph, dy, x, scale, mean, inv_variance; epsilon = nothing,
                                zero_centered_gamma::Bool = false, compute_dtype = nothing,
                                name = nothing)
    return _norm_backward(Lib.cudnnfe_graph_add_adalayernorm_backward, g, dy, x, scale, mean,
                          inv_variance, epsilon, zero_centered_gamma, compute_dtype, name)
end

# ---------------------------------------------------------------------------
# Layout, resampling and random numbers (docs/layout-ops.md). Sizes,
# permutations, ranges and dims are Julia's (1-based, Julia order).
# ---------------------------------------------------------------------------

# A layout op's options: only the node name.
function _layout_options(nameptr)
    o = _default_options(Lib.cudnnfe_layout_options_t, Lib.cudnnfe_layout_options_init_sized)
    return _with(o; name = nameptr)
end

"""
    reshape!(g, x, size...; name = nothing) -> y
    reshape!(g, x, size::Tuple; name = nothing) -> y

`y = reshape(x, size)` in Julia's sense (column-major element order kept;
the C library's row-major reshape of the reversed dims is the same thing).
`y` is packed unless its strides are set. On the GPU a reshape is a view of
`x`'s memory, which `x`'s layout must allow.
"""
reshape!(g::Graph, x, size::Integer...; name = nothing) = reshape!(g, x, size; name = name)
function reshape!(g::Graph, x, size::Tuple; name = nothing)
    ux = _uid(g, x)
    cd = reverse(Int64[d for d in size])
    nm = _cstring(name)
    y = Ref{Int64}(0)
    GC.@preserve nm cd begin
        r = Ref(_layout_options(_name_ptr(nm)))
        check(g, Lib.cudnnfe_graph_add_reshape(g, ux, Int32(length(cd)), cd, r, y))
    end
    return Tensor(g, y[])
end

"""
    transpose!(g, x, perm; name = nothing) -> y

cudnnfe's transpose, `y = permutedims(x, perm)`: `size(y, i) == size(x,
perm[i])` (1-based, Julia order). `y`'s strides default to `x`'s permuted, a
view of `x`'s memory in another dimension order (no data moves on the GPU).
"""
function transpose!(g::Graph, x, perm; name = nothing)
    ux = _uid(g, x)
    p = Int[i for i in perm]
    n = length(p)
    # Julia dim i is C dim n - i: C permutation[k] = n - perm[n - k].
    # Entries out of 1:n stay out of 0:n-1, for the library to report.
    cp = Int32[n - p[n - k] for k in 0:(n - 1)]
    nm = _cstring(name)
    y = Ref{Int64}(0)
    GC.@preserve nm cp begin
        r = Ref(_layout_options(_name_ptr(nm)))
        check(g, Lib.cudnnfe_graph_add_transpose(g, ux, Int32(n), cp, r, y))
    end
    return Tensor(g, y[])
end

# (start, end, step) in C terms of one Julia index range of a dim of size n.
_slice_range(r::Colon, n) = (Int64(0), Int64(n), Int64(1))
_slice_range(i::Integer, n) = (Int64(i - 1), Int64(i), Int64(1))
function _slice_range(r::AbstractRange{<:Integer}, n)
    step(r) >= 1 || throw(ArgumentError("slice range $r: the step must be positive"))
    isempty(r) && throw(ArgumentError("slice range $r is empty"))
    return (Int64(first(r) - 1), Int64(last(r)), Int64(step(r)))
end
_slice_range(r, n) = throw(ArgumentError(
    "slice index $(repr(r)): expected a range (2:5, 1:2:9), an integer or `:`"))

"""
    slice!(g, x, indices...; name = nothing) -> y

`y = x[indices...]` as a **view**: one index per dimension of `x` (Julia
order, 1-based): a range with a positive step (`2:5`, `1:3:10`), `:` for the
whole dim, or an integer (the dim is kept, with size 1). `y` has no buffer:
it cannot be an output (feed it to an op, e.g. `pointwise!(g, :identity, y)`),
and on the GPU `x` must be a graph input.
"""
function slice!(g::Graph, x, indices...; name = nothing)
    ux = _uid(g, x)
    t = Tensor(g, ux)
    n = ndims(t)
    length(indices) == n || throw(ArgumentError(
        "slice! of a $n-dimensional tensor needs $n indices; got $(length(indices))"))
    ranges = [_slice_range(indices[i], size(t, i)) for i in 1:n]
    start = Int64[ranges[n + 1 - k][1] for k in 1:n]  # C order: reversed
    stop = Int64[ranges[n + 1 - k][2] for k in 1:n]
    stp = Int64[ranges[n + 1 - k][3] for k in 1:n]
    nm = _cstring(name)
    y = Ref{Int64}(0)
    GC.@preserve nm start stop stp begin
        r = Ref(_layout_options(_name_ptr(nm)))
        check(g, Lib.cudnnfe_graph_add_slice(g, ux, Int32(n), start, stop, stp, r, y))
    end
    return Tensor(g, y[])
end

"""
    concatenate!(g, xs...; dims, name = nothing) -> y

`y = cat(xs...; dims)`: 2 to 16 tensors of one type and rank, equal sizes
except along the Julia dimension `dims`. `y` keeps the first input's
dimension order. On the GPU it needs cuDNN 9.7 or newer and a fused pattern
cuDNN knows.
"""
function concatenate!(g::Graph, xs...; dims::Integer, name = nothing)
    uids = Int64[_uid(g, x) for x in xs]
    isempty(uids) && throw(ArgumentError("concatenate! needs tensors to join"))
    n = ndims(Tensor(g, uids[1]))
    1 <= dims <= n || throw(ArgumentError("dims = $dims is outside 1:$n"))
    nm = _cstring(name)
    y = Ref{Int64}(0)
    GC.@preserve nm uids begin
        r = Ref(_layout_options(_name_ptr(nm)))
        check(g, Lib.cudnnfe_graph_add_concatenate(g, Int32(length(uids)), uids, Int32(n - dims), r,
                                                   y))
    end
    return Tensor(g, y[])
end

const RESAMPLE_MODE_CODES = _prefixed_constants("CUDNNFE_RESAMPLE_")  # :maxpool, :nearest, ...
const PADDING_MODE_CODES = _prefixed_constants("CUDNNFE_PADDING_")    # :auto, :zero, ...

"""
    resample!(g, x; mode = :maxpool, window = 2, stride = 2, padding = 0,
              pre_padding = padding, post_padding = padding, padding_mode = :auto,
              scale = 2, index = false, compute_dtype = nothing, name = nothing)
        -> (y, index_tensor)

Pooling or upsampling of `x` `(spatial..., C, N)` (1 to 3 spatial dims, any
layout; `y` and the index are channels-last unless their strides are set: C
innermost in memory, as in cudnn-frontend). `mode`: `:maxpool`,
`:avgpool_include_padding` (divides by the window size),
`:avgpool_exclude_padding` (by the in-image count), `:nearest` or
`:bilinear` (upsampling by the integer `scale`, half-pixel centres).
Spatial values are in Julia order (`(W, H)`), or one integer for all.
Pooling gives `fld(in + pre + post - window, stride) + 1` outputs per
spatial dim; paddings must be smaller than the window. `padding_mode`:
`:auto` (`:neg_inf` for max pooling, `:zero` for average pooling), `:zero`,
`:neg_inf` or `:edge`. With `index = true` (max pooling) the second result
is the position of each maximum in its window, first maximum on ties: the
0-based linear (column-major, Julia order) index of its position
in the window, INT8 unless set. Else it is `nothing`.
"""
function resample!(g::Graph, x; mode = :maxpool, window = 2, stride = 2, padding = 0,
                   pre_padding = padding, post_padding = padding, padding_mode = :auto,
                   scale = 2, index::Bool = false, compute_dtype = nothing, name = nothing)
    ux = _uid(g, x)
    o = _default_options(Lib.cudnnfe_resample_options_t, Lib.cudnnfe_resample_options_init_sized)
    n = ndims(Tensor(g, ux)) - 2
    if 1 <= n <= Lib.CUDNNFE_MAX_SPATIAL_DIMS
        o = _with(o; spatial_dims = Int32(n),
                  window = _spatial(window, n, o.window, "window"),
                  stride = _spatial(stride, n, o.stride, "stride"),
                  pre_padding = _spatial(pre_padding, n, o.pre_padding, "pre_padding"),
                  post_padding = _spatial(post_padding, n, o.post_padding, "post_padding"),
                  scale = _spatial(scale, n, o.scale, "scale"))
    end  # else the library reports the bad rank, naming the node and tensor
    nm = _cstring(name)
    y, idx = Ref{Int64}(0), Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_with(o; name = _name_ptr(nm), compute_dtype = _compute(compute_dtype),
                      mode = _code(RESAMPLE_MODE_CODES, "resample mode", mode),
                      padding_mode = _code(PADDING_MODE_CODES, "padding mode", padding_mode),
                      generate_index = Int32(index)))
        check(g, Lib.cudnnfe_graph_add_resample(g, ux, r, y, idx))
    end
    return (Tensor(g, y[]), _optional(g, idx[]))
end

const RNG_DISTRIBUTION_CODES = _prefixed_constants("CUDNNFE_RNG_")  # :bernoulli, :uniform, :normal

"""
    rng!(g, size; distribution = :bernoulli, bernoulli_probability = nothing,
         uniform_min = nothing, uniform_max = nothing, normal_mean = nothing,
         normal_stddev = nothing, seed = 0, offset = nothing, dtype = nothing,
         compute_dtype = nothing, name = nothing) -> y

A tensor of `size` (Julia order, packed) filled with random numbers:
`:bernoulli` (1 with `bernoulli_probability`, default 0.5, else 0),
`:uniform` on `[uniform_min, uniform_max)` (default `[0, 1)`) or `:normal`
(`normal_mean`, `normal_stddev`; default 0 and 1). `seed` is an integer (the
seed, offset 0) or, with `offset`, a one-element INT64 (or INT32) tensor: a
graph input read at every execute, or a scalar. The same seed and offset
give the same numbers: element `i` (Julia linear index) at offset `o` is
element `i + o` at offset 0. The CPU reference's generator is not cuDNN's
(docs/layout-ops.md). `y` is FLOAT unless `dtype` says otherwise.
"""
function rng!(g::Graph, size; distribution = :bernoulli, bernoulli_probability = nothing,
              uniform_min = nothing, uniform_max = nothing, normal_mean = nothing,
              normal_stddev = nothing, seed = 0, offset = nothing, dtype = nothing,
              compute_dtype = nothing, name = nothing)
    cd = reverse(_dims_vector(size))
    seed_value, useed = seed isa Integer ? (Int64(seed), Int64(0)) : (nothing, _uid(g, seed))
    o = _default_options(Lib.cudnnfe_rng_options_t, Lib.cudnnfe_rng_options_init_sized)
    nm = _cstring(name)
    y = Ref{Int64}(0)
    GC.@preserve nm cd begin
        r = Ref(_with(o; name = _name_ptr(nm), compute_dtype = _compute(compute_dtype),
                      distribution = _code(RNG_DISTRIBUTION_CODES, "distribution", distribution),
                      bernoulli_probability = _float_or_nothing(bernoulli_probability),
                      uniform_min = _float_or_nothing(uniform_min),
                      uniform_max = _float_or_nothing(uniform_max),
                      normal_mean = _float_or_nothing(normal_mean),
                      normal_stddev = _float_or_nothing(normal_stddev), seed = seed_value))
        check(g, Lib.cudnnfe_graph_add_rng(g, Int32(length(cd)), cd, useed, _uid(g, offset), r, y))
    end
    t = Tensor(g, y[])
    dtype === nothing || set_dtype!(t, dtype)
    return t
end

"""
    paged_cache_load!(g, container, seq_len, page_table; compute_dtype = nothing,
                      name = nothing) -> y

Gathers a paged K or V cache into a contiguous tensor (cudnn-frontend's
paged_cache_load; experimental, cuDNN 9.5 or newer on the GPU). In Julia
order `container` is `(d, page_size, h, num_pages)`, `page_table`
`(1, pages, 1, b)` and `seq_len` `(1, 1, 1, b)`, integers (Int32 as in
cudnn-frontend), and `y`
`(d, s, h, b)` with `s = pages * page_size` unless its size is set
(`set_dims!`) with `cld(s, page_size) == pages`. Row `j` (0-based) of
sequence `n` is row `j % page_size` of page `page_table[1, j ÷ page_size + 1,
1, n]` (0-based page numbers) for `j < seq_len[n]`; later rows are
unspecified (0 on the CPU reference).
"""
function paged_cache_load!(g::Graph, container, seq_len, page_table; compute_dtype = nothing,
                           name = nothing)
    uc, ul, ut = _uid(g, container), _uid(g, seq_len), _uid(g, page_table)
    o = _default_options(Lib.cudnnfe_paged_cache_load_options_t,
                         Lib.cudnnfe_paged_cache_load_options_init_sized)
    nm = _cstring(name)
    y = Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_with(o; name = _name_ptr(nm), compute_dtype = _compute(compute_dtype)))
        check(g, Lib.cudnnfe_graph_add_paged_cache_load(g, uc, ul, ut, r, y))
    end
    return Tensor(g, y[])
end
