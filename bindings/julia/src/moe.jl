# Mixture-of-experts grouped matmul and its weight gradient (docs/moe.md;
# since 0.3). Not the plain matmul! (ops.jl).

const MOE_MODE_CODES = _prefixed_constants("CUDNNFE_MOE_GROUPED_MATMUL_MODE_")  # :none, :gather, :scatter

"""
    moe_grouped_matmul!(g, token, weight, first_token_offset; token_index = nothing,
                        token_ks = nothing, mode = :none, top_k = nothing,
                        compute_dtype = nothing, name = nothing) -> output

Each expert multiplies its own rows of the token matrix by its own weight.
In Julia order `token` is `(K, T, 1)`, `weight` `(N, K, E)` (cudnn-frontend
stores it column-major in K and N: strides `(K, 1, K*N)`), and the result
`(N, R, 1)`. `first_token_offset` (Int32) is `(1, 1, G)` group starts (E >
1, G a multiple of E) or `(1, 1, G + 1)` boundaries; group `g` (0-based)
uses `weight[:, :, g % E + 1]`. `mode`: `:none` (output row r = token row r
times its expert's weight), `:gather` (token row `token_index[r]`) or
`:scatter` (output row `token_index[r] * top_k + token_ks[r]`);
`token_index` and `token_ks` are `(1, R, 1)` Int32. Rows no group writes are
unspecified (the CPU reference writes 0).
"""
function moe_grouped_matmul!(g::Graph, token, weight, first_token_offset; token_index = nothing,
                             token_ks = nothing, mode = :none, top_k = nothing,
                             compute_dtype = nothing, name = nothing)
    ut, uw, uo = _uid(g, token), _uid(g, weight), _uid(g, first_token_offset)
    ui, uk = _uid(g, token_index), _uid(g, token_ks)
    o = _default_options(Lib.cudnnfe_moe_grouped_matmul_options_t,
                         Lib.cudnnfe_moe_grouped_matmul_options_init_sized)
    nm = _cstring(name)
    out = Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_with(o; name = _name_ptr(nm), compute_dtype = _compute(compute_dtype),
                      mode = _code(MOE_MODE_CODES, "MoE grouped matmul mode", mode),
                      top_k = top_k === nothing ? nothing : Int32(top_k)))
        check(g, Lib.cudnnfe_graph_add_moe_grouped_matmul(g, ut, uw, uo, ui, uk, r, out))
    end
    return Tensor(g, out[])
end

"""
    moe_grouped_matmul_backward!(g, doutput, token, first_token_offset;
                                 compute_dtype = nothing, name = nothing) -> dweight

The weight gradient of a `mode = :none` `moe_grouped_matmul!`: for
`doutput` `(N, T, 1)` and `token` `(K, T, 1)`, `dweight[:, :, e]` is the sum
over the groups of expert `e` of `doutput[rows] * token[rows]'`; `dweight`
is `(N, K, E)` with strides `(K, 1, K*N)`. E is `first_token_offset`'s
group count unless `set_dims!` says otherwise (set it for `G + 1`
boundaries).
"""
function moe_grouped_matmul_backward!(g::Graph, doutput, token, first_token_offset;
                                      compute_dtype = nothing, name = nothing)
    ud, ut, uo = _uid(g, doutput), _uid(g, token), _uid(g, first_token_offset)
    o = _default_options(Lib.cudnnfe_moe_grouped_matmul_options_t,
                         Lib.cudnnfe_moe_grouped_matmul_options_init_sized)
    nm = _cstring(name)
    out = Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_with(o; name = _name_ptr(nm), compute_dtype = _compute(compute_dtype)))
        check(g, Lib.cudnnfe_graph_add_moe_grouped_matmul_backward(g, ud, ut, uo, r, out))
    end
    return Tensor(g, out[])
end
