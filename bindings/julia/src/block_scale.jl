# Block-scale quantization (microscaling, MXFP8): block_scale_quantize! and
# block_scale_dequantize!. Not the per-tensor FP8 scaling of attention (ops.jl).

# The C options for a tensor of `n` dims blocked along the Julia dimension
# `dims` (C axis n - dims).
function _block_scale_options(nameptr, n::Integer, dims::Integer, block_size, transpose, y_dtype)
    1 <= dims <= n || throw(ArgumentError("dims = $dims is outside 1:$n"))
    o = _default_options(Lib.cudnnfe_block_scale_options_t,
                         Lib.cudnnfe_block_scale_options_init_sized)
    return _with(o; name = nameptr, axis = Int32(n - dims),
                 block_size = block_size === nothing ? nothing : Int32(block_size),
                 transpose = Int32(transpose),
                 y_dtype = y_dtype === nothing ? nothing : dtype_code(y_dtype))
end

"""
    block_scale_quantize!(g, x; block_size = 32, dims = 1, transpose = false,
                          y_dtype = nothing, name = nothing) -> (y, scale)

Block-scale quantize of `x` (Float32, Float16 or BFLOAT16): blocks of
`block_size` consecutive elements along the Julia dimension `dims` (default
1, the fastest; its size must be a multiple of `block_size`) each get one
FP8_E8M0 `scale`, `amax / max_finite(y type)` rounded up to a power of two,
and `y = x / scale` rounded to nearest even, saturating. `y` has `x`'s size
and is FP8_E4M3 (`y_dtype = :fp8_e5m2` for E5M2) unless set; `scale` has
`x`'s size with dimension `dims` divided by `block_size`. `transpose = true`
makes `dims` the packed dimension of `y` and `scale`. cuDNN runs it on
Blackwell GPUs only (docs/layout-ops.md, "Block scaling").
"""
function block_scale_quantize!(g::Graph, x; block_size = nothing, dims::Integer = 1,
                               transpose::Bool = false, y_dtype = nothing, name = nothing)
    ux = _uid(g, x)
    nm = _cstring(name)
    y, s = Ref{Int64}(0), Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_block_scale_options(_name_ptr(nm), ndims(Tensor(g, ux)), dims, block_size,
                                     transpose, y_dtype))
        check(g, Lib.cudnnfe_graph_add_block_scale_quantize(g, ux, r, y, s))
    end
    return (Tensor(g, y[]), Tensor(g, s[]))
end

"""
    block_scale_dequantize!(g, x, scale; block_size = 32, dims = 1, name = nothing) -> y

`y = x .* scale[block]` for FP8 `x` and its FP8_E8M0 `scale` (as
`block_scale_quantize!` makes them, with the same `block_size` and `dims`).
`y` has `x`'s size and strides; its type is the graph's io type unless set
(else FLOAT). cuDNN runs it fused into a matmul on Blackwell GPUs only.
"""
function block_scale_dequantize!(g::Graph, x, scale; block_size = nothing, dims::Integer = 1,
                                 name = nothing)
    ux, us = _uid(g, x), _uid(g, scale)
    nm = _cstring(name)
    y = Ref{Int64}(0)
    GC.@preserve nm begin
        r = Ref(_block_scale_options(_name_ptr(nm), ndims(Tensor(g, ux)), dims, block_size, false,
                                     nothing))
        check(g, Lib.cudnnfe_graph_add_block_scale_dequantize(g, ux, us, r, y))
    end
    return Tensor(g, y[])
end
