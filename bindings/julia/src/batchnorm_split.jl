# The split batch norm of cudnn-frontend (since 0.3): genstats!,
# bn_finalize! and dbn_weight!. Not the fused batchnorm! (ops.jl).

"""
    genstats!(g, x; compute_dtype = nothing, name = nothing) -> (sum, sq_sum)

Per-channel statistics of `x` `(spatial..., C, N)`: `sum` and `sq_sum` (of
`x .^ 2`) over every dimension but C, `(1, ..., 1, C, 1)` FLOAT unless set.
cuDNN runs it fused after a convolution.
"""
function genstats!(g::Graph, x; compute_dtype = nothing, name = nothing)
    ux = _uid(g, x)
    o = _default_options(Lib.cudnnfe_genstats_options_t, Lib.cudnnfe_genstats_options_init_sized)
    nm = _cstring(name)
    s, sq = Ref{Int64}(0), Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_with(o; name = _name_ptr(nm), compute_dtype = _compute(compute_dtype)))
        check(g, Lib.cudnnfe_graph_add_genstats(g, ux, r, s, sq))
    end
    return (Tensor(g, s[]), Tensor(g, sq[]))
end

"""
    bn_finalize!(g, sum, sq_sum, scale, bias, epsilon, accum_count;
                 running_mean = nothing, running_var = nothing, momentum = nothing,
                 compute_dtype = nothing, name = nothing)
        -> (eq_scale, eq_bias, mean, inv_variance, next_running_mean, next_running_var)

Batch-norm statistics from `genstats!`'s sums (cudnn-frontend's
bn_finalize). `sum`, `sq_sum`, `scale`, `bias` are `(1, ..., C, 1)`;
`epsilon` and `accum_count` (M, the elements summed per channel, an integer
type) are one-element tensors (`add_scalar!` makes them). With `mean = sum /
M` and `var = sq_sum / M - mean^2` (biased): `inv_variance = 1 / sqrt(var +
epsilon)`, `eq_scale = scale * inv_variance`, `eq_bias = bias - mean *
eq_scale`, so that `x .* eq_scale .+ eq_bias` is the batch norm of `x`.
With `running_mean`, `running_var` and `momentum` (a one-element tensor) the
last two results are the updated running statistics, as `batchnorm!`
computes them (M must then be above 1); else `nothing`.
"""
function bn_finalize!(g::Graph, sum, sq_sum, scale, bias, epsilon, accum_count;
                      running_mean = nothing, running_var = nothing, momentum = nothing,
                      compute_dtype = nothing, name = nothing)
    us, usq, usc, ub = _uid(g, sum), _uid(g, sq_sum), _uid(g, scale), _uid(g, bias)
    ueps, ucnt = _uid(g, epsilon), _uid(g, accum_count)
    um, uv, umom = _uid(g, running_mean), _uid(g, running_var), _uid(g, momentum)
    o = _default_options(Lib.cudnnfe_bn_finalize_options_t,
                         Lib.cudnnfe_bn_finalize_options_init_sized)
    nm = _cstring(name)
    eqs, eqb, mean, ivar, nmean, nvar = ntuple(_ -> Ref{Int64}(0), 6)
    GC.@preserve nm begin
        r = Ref(_with(o; name = _name_ptr(nm), compute_dtype = _compute(compute_dtype)))
        check(g, Lib.cudnnfe_graph_add_bn_finalize(g, us, usq, usc, ub, ueps, ucnt, um, uv, umom, r,
                                                   eqs, eqb, mean, ivar, nmean, nvar))
    end
    return (Tensor(g, eqs[]), Tensor(g, eqb[]), Tensor(g, mean[]), Tensor(g, ivar[]),
            _optional(g, nmean[]), _optional(g, nvar[]))
end

"""
    dbn_weight!(g, dy, x, mean, inv_variance, scale; compute_dtype = nothing, name = nothing)
        -> (dscale, dbias, eq_scale_dy, eq_scale_x, eq_bias)

Batch-norm backward, weights part (cudnn-frontend's dbn_weight): from `dy`
and `x` `(spatial..., C, N)` and the forward's `mean`, `inv_variance` and
`scale` `(1, ..., C, 1)`, with `xhat = (x - mean) * inv_variance` and M the
elements per channel: `dbias = sum(dy)`, `dscale = sum(dy .* xhat)` per
channel, and the coefficients of the data gradient `dx = eq_scale_dy .* dy
.+ eq_scale_x .* x .+ eq_bias`: `eq_scale_dy = scale * inv_variance`,
`eq_scale_x = -eq_scale_dy * inv_variance * dscale / M`, `eq_bias =
eq_scale_dy * (mean * inv_variance * dscale - dbias) / M`.
"""
function dbn_weight!(g::Graph, dy, x, mean, inv_variance, scale; compute_dtype = nothing,
                     name = nothing)
    udy, ux, um, uiv, us = _uid(g, dy), _uid(g, x), _uid(g, mean), _uid(g, inv_variance), _uid(g, scale)
    o = _default_options(Lib.cudnnfe_dbn_weight_options_t, Lib.cudnnfe_dbn_weight_options_init_sized)
    nm = _cstring(name)
    ds, db, esdy, esx, eb = ntuple(_ -> Ref{Int64}(0), 5)
    GC.@preserve nm begin
        r = Ref(_with(o; name = _name_ptr(nm), compute_dtype = _compute(compute_dtype)))
        check(g, Lib.cudnnfe_graph_add_dbn_weight(g, udy, ux, um, uiv, us, r, ds, db, esdy, esx, eb))
    end
    return (Tensor(g, ds[]), Tensor(g, db[]), Tensor(g, esdy[]), Tensor(g, esx[]), Tensor(g, eb[]))
end
