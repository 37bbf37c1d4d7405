# Attention score modifiers (cudnnfe_graph_begin_score_mod / _end_score_mod):
# a sub-graph of pointwise ops that an attention node applies to every
# element of its scores, named by `sdpa!(...; score_mod)` and
# `sdpa_backward!(...; score_mod, score_mod_bprop)`. The attention ops are
# ops.jl's.

"""
    begin_score_mod!(g, size; name = nothing) -> Tensor

Opens a score modifier (cudnn-frontend's `score_mod`; docs/attention.md) and
returns its placeholder, a virtual FLOAT tensor of the scores' size in Julia
order `(s_kv, s_q, h_q, b)` (`s_kv` a paged cache's logical length). Add
its nodes with `pointwise!` (any mode, `:gen_index` included), reading the
placeholder, their own outputs, graph inputs and scalars; any other op while
it is open throws `CuDNNFEError(:invalid_graph, ...)`. Close it with
`end_score_mod!`, then pass the placeholder as `sdpa!`'s `score_mod` (or
`sdpa_backward!`'s `score_mod` / `score_mod_bprop`). Throws
`CuDNNFEError(:wrong_state, ...)` while another is open.
"""
function begin_score_mod!(g::Graph, size; name = nothing)
    cd = reverse(_dims_vector(size))
    u = Ref{Int64}(0)
    check(g, Lib.cudnnfe_graph_begin_score_mod(g, _cstring(name), Int32(length(cd)), cd, u))
    return Tensor(g, u[])
end

"""
    end_score_mod!(g, score, result) -> g

Closes the open score modifier of placeholder `score` with `result` (an
output of its nodes that depends on `score`, of a floating type). Throws
`CuDNNFEError(:invalid_graph, ...)` naming the rule otherwise; the modifier
then stays open.
"""
function end_score_mod!(g::Graph, score, result)
    check(g, Lib.cudnnfe_graph_end_score_mod(g, _uid(g, score), _uid(g, result)))
    return g
end

"""
    score_mod!(f, g, size; name = nothing) -> Tensor

A whole score modifier: `begin_score_mod!(g, size; name)`, then `f(score)`
adds its nodes and returns the result, then `end_score_mod!`. Returns the
placeholder to pass as `score_mod` (or `score_mod_bprop`):

    s = score_mod!(g, (s_kv, s_q, h, b)) do score
        t = pointwise!(g, :tanh_fwd, pointwise!(g, :div, score, cap))
        pointwise!(g, :mul, t, cap)
    end
    o, _ = sdpa!(g, q, k, v; score_mod = s)
"""
function score_mod!(f::Function, g::Graph, size; name = nothing)
    score = begin_score_mod!(g, size; name = name)
    end_score_mod!(g, score, f(score))
    return score
end
