# Tensors: graph inputs, scalars, setters and getters. Sizes and strides are
# in Julia order (the reverse of the C order), see the module docstring.

"""
    Tensor

A tensor of a `Graph`: the graph and the tensor's UID (an `Int64` > 0, the
same number the C API, the serialized graph and execution use). Created by
`add_tensor!`, `add_scalar!` and the operations.

`size(t)`, `strides(t)` and `ndims(t)` are in Julia order; `cdims(t)` and
`cstrides(t)` in C order. `dtype(t)` is a Symbol (`:float`), `:not_set` until
validation resolves it.
"""
struct Tensor
    graph::Graph
    uid::Int64
end

"""
    uid(t::Tensor) -> Int64
"""
uid(t::Tensor) = t.uid

# An operand: a Tensor of this graph, a UID, or `nothing` (no tensor, UID 0).
_uid(::Graph, ::Nothing) = Int64(0)
_uid(::Graph, u::Integer) = Int64(u)
function _uid(g::Graph, t::Tensor)
    t.graph === g || throw(ArgumentError("tensor UID $(t.uid) belongs to another graph"))
    return t.uid
end

_dims_vector(dims::Integer) = Int64[dims]
_dims_vector(dims) = Int64[d for d in dims]

"""
    add_tensor!(g, dtype, size; strides = nothing, name = nothing) -> Tensor
    add_tensor!(g, A::AbstractArray; name = nothing) -> Tensor

Adds a graph input. `size` and `strides` (in elements) are in Julia order;
`strides = nothing` means packed column-major (a plain `Array`). The C tensor
gets `reverse(size)` and `reverse(strides)`. The second form describes `A`
exactly: its element type, `size(A)` and `strides(A)` (any strided array,
e.g. an `Array`, a `PermutedDimsArray`, or a `CuArray`). `name` may be
`nothing` (an automatic name is given).
"""
function add_tensor!(g::Graph, dtype, size; strides = nothing, name = nothing)
    cd = reverse(_dims_vector(size))
    u = Ref{Int64}(0)
    if strides === nothing
        check(g, Lib.cudnnfe_graph_add_tensor(g, _cstring(name), dtype_code(dtype),
                                              Int32(length(cd)), cd, C_NULL, u))
    else
        cs = reverse(_dims_vector(strides))
        length(cs) == length(cd) || throw(DimensionMismatch(
            "$(length(cs)) strides for a tensor of $(length(cd)) dims"))
        check(g, Lib.cudnnfe_graph_add_tensor(g, _cstring(name), dtype_code(dtype),
                                              Int32(length(cd)), cd, cs, u))
    end
    return Tensor(g, u[])
end

function add_tensor!(g::Graph, A::AbstractArray; name = nothing)
    return add_tensor!(g, eltype(A), size(A); strides = strides(A), name = name)
end

"""
    add_scalar!(g, value; dtype = typeof(value), name = nothing) -> Tensor

Adds a pass-by-value scalar (size `(1,)`) holding `value`; it needs no buffer
at execution.
"""
function add_scalar!(g::Graph, value::Real; dtype = typeof(value), name = nothing)
    u = Ref{Int64}(0)
    check(g, Lib.cudnnfe_graph_add_scalar(g, _cstring(name), dtype_code(dtype), Float64(value), u))
    return Tensor(g, u[])
end

"""
    set_output!(t, is_output = true) -> t

Marks an operation output as a graph output (it then needs a buffer at
execution), or back to virtual. On a graph input, `true` does nothing (an
input is never virtual; an op may take it as its output later, as `sdpa!`'s
`score_max`) and `false` throws `CuDNNFEError(:invalid_argument, ...)`.
"""
function set_output!(t::Tensor, is_output::Bool = true)
    check(t.graph, Lib.cudnnfe_tensor_set_output(t.graph, t.uid, Int32(is_output)))
    return t
end

"""
    set_next_output!(g, port, t) -> t

Makes the next operation added to `g` write its output `port` (its name in
docs/graph-json.md, e.g. `"dBias"`) into `t`, a tensor made with
`add_tensor!` that no operation reads yet; `t` becomes a graph output keeping
its UID, name, dims and strides. The next `add_*!` call consumes the request,
added or refused (since 0.4).
"""
function set_next_output!(g::Graph, port::AbstractString, t::Tensor)
    check(g, Lib.cudnnfe_graph_set_next_output(g, _cstring(port), t.uid))
    return t
end

"""
    set_pass_by_value!(t, pass_by_value = true) -> t

Marks a one-element graph input as pass-by-value: its buffer at execution is
host memory whose value cuDNN reads when `execute!` is called
(cudnn-frontend's `is_pass_by_value`; since 0.3).
"""
function set_pass_by_value!(t::Tensor, pass_by_value::Bool = true)
    check(t.graph, Lib.cudnnfe_tensor_set_pass_by_value(t.graph, t.uid, Int32(pass_by_value)))
    return t
end

"""
    scalar_value(t) -> Float64

The value of a scalar made with `add_scalar!` (a `CuDNNFEError` of kind
`:invalid_argument` for any other tensor; since 0.4).
"""
function scalar_value(t::Tensor)
    v = Ref{Float64}(0)
    check(t.graph, Lib.cudnnfe_tensor_get_scalar_value(t.graph, t.uid, v))
    return v[]
end

"""
    is_pass_by_value(t) -> Bool

Whether the tensor is a pass-by-value graph input (`set_pass_by_value!`).
"""
function is_pass_by_value(t::Tensor)
    b = Ref{Int32}(0)
    check(t.graph, Lib.cudnnfe_tensor_get_pass_by_value(t.graph, t.uid, b))
    return b[] != 0
end

"""
    set_dtype!(t, dtype) -> t

Overrides the tensor's data type (inferred outputs included).
"""
function set_dtype!(t::Tensor, dtype)
    check(t.graph, Lib.cudnnfe_tensor_set_dtype(t.graph, t.uid, dtype_code(dtype)))
    return t
end

"""
    set_dims!(t, size) -> t

Overrides the tensor's size (Julia order; inferred outputs included).
Strides are re-derived as packed in the same dimension order unless set.
"""
function set_dims!(t::Tensor, size)
    cd = reverse(_dims_vector(size))
    check(t.graph, Lib.cudnnfe_tensor_set_dims(t.graph, t.uid, Int32(length(cd)), cd))
    return t
end

"""
    set_strides!(t, strides) -> t

Overrides the tensor's strides (Julia order, in elements).
"""
function set_strides!(t::Tensor, strides)
    cs = reverse(_dims_vector(strides))
    check(t.graph, Lib.cudnnfe_tensor_set_strides(t.graph, t.uid, Int32(length(cs)), cs))
    return t
end

"""
    set_name!(t::Tensor, name) -> t

Renames the tensor; names are unique within a graph.
"""
function set_name!(t::Tensor, name::Union{AbstractString,Symbol})
    check(t.graph, Lib.cudnnfe_tensor_set_name(t.graph, t.uid, _cstring(name)))
    return t
end

"""
    set_uid!(t, new_uid) -> Tensor

Changes the tensor's UID (> 0 and unused) and returns the tensor under its new
UID; `t` itself is stale afterwards.
"""
function set_uid!(t::Tensor, new_uid::Integer)
    check(t.graph, Lib.cudnnfe_tensor_set_uid(t.graph, t.uid, Int64(new_uid)))
    return Tensor(t.graph, Int64(new_uid))
end

# (C dims, C strides) of a tensor.
function _cshape(t::Tensor)
    maxd = Lib.CUDNNFE_MAX_DIMS
    d = Vector{Int64}(undef, maxd)
    s = Vector{Int64}(undef, maxd)
    n = Ref{Int32}(0)
    check(t.graph, Lib.cudnnfe_tensor_get_shape(t.graph, t.uid, d, s, Int32(maxd), n))
    k = Int(n[])
    return resize!(d, k), resize!(s, k)
end

"""
    cdims(t) -> Vector{Int64}

The tensor's dims in C (row-major) order: `reverse(collect(size(t)))`.
"""
cdims(t::Tensor) = _cshape(t)[1]

"""
    cstrides(t) -> Vector{Int64}

The tensor's strides in C order: `reverse(collect(strides(t)))`.
"""
cstrides(t::Tensor) = _cshape(t)[2]

Base.size(t::Tensor) = Tuple(Int.(reverse(cdims(t))))
function Base.size(t::Tensor, d::Integer)
    s = size(t)
    return d <= length(s) ? s[d] : 1
end
Base.strides(t::Tensor) = Tuple(Int.(reverse(cstrides(t))))
Base.stride(t::Tensor, d::Integer) = strides(t)[d]

function Base.ndims(t::Tensor)
    n = Ref{Int32}(0)
    check(t.graph, Lib.cudnnfe_tensor_get_shape(t.graph, t.uid, C_NULL, C_NULL, Int32(0), n))
    return Int(n[])
end

function _dtype_code(t::Tensor)
    d = Ref{Lib.cudnnfe_dtype_t}(0)
    check(t.graph, Lib.cudnnfe_tensor_get_dtype(t.graph, t.uid, d))
    return d[]
end

"""
    dtype(t) -> Symbol

`:float`, `:half`, `:bfloat16`, ...; `:not_set` until validation resolves it.
"""
dtype(t::Tensor) = dtype_symbol(_dtype_code(t))

"""
    eltype(t::Tensor)

The Julia element type of the tensor's data type; `Nothing` where Base has
none (BFLOAT16, FP8) or while it is not set.
"""
function Base.eltype(t::Tensor)
    T = julia_type(_dtype_code(t))
    return T === nothing ? Nothing : T
end

"""
    tensor_name(t) -> String

The tensor's name (`"<node>::<port>"` for operation outputs unless renamed).
"""
function tensor_name(t::Tensor)
    p = Ref{Cstring}(C_NULL)
    check(t.graph, Lib.cudnnfe_tensor_get_name(t.graph, t.uid, p))
    return _string(p[])
end

"""
    tensor_kind(t) -> Symbol

`:input`, `:scalar`, `:virtual` or `:output`.
"""
function tensor_kind(t::Tensor)
    k = Ref{Lib.cudnnfe_tensor_kind_t}(0)
    check(t.graph, Lib.cudnnfe_tensor_get_kind(t.graph, t.uid, k))
    return k[] == Lib.CUDNNFE_TENSOR_KIND_INPUT ? :input :
           k[] == Lib.CUDNNFE_TENSOR_KIND_SCALAR ? :scalar :
           k[] == Lib.CUDNNFE_TENSOR_KIND_VIRTUAL ? :virtual : :output
end

"""
    isbound(t) -> Bool

Whether the tensor needs a buffer at execution (a graph input or output);
false for virtual tensors and pass-by-value scalars.
"""
function isbound(t::Tensor)
    b = Ref{Int32}(0)
    check(t.graph, Lib.cudnnfe_tensor_is_bound(t.graph, t.uid, b))
    return b[] != 0
end

"""
    allocate(t; zero = true) -> AbstractArray

A host array laid out exactly as the tensor (its Julia element type, size and
strides). A tensor packed column-major gets an `Array`; one packed in another
dimension order a `PermutedDimsArray` over an `Array` stored in that order:
convolution, pooling and reduction outputs are channels-last unless their
strides are set, so a (W, H, C, N) result is stored as (C, W, H, N). A tensor
with gaps between its elements is refused. Call after `build!` (or
`validate!`) so the data type is resolved.
"""
function allocate(t::Tensor; zero::Bool = true)
    T = julia_type(_dtype_code(t))
    T === nothing && throw(ArgumentError(
        "tensor \"$(tensor_name(t))\" has data type $(dtype(t)), which has no Julia element type " *
        "(validate or build the graph first, or allocate it yourself)"))
    sz = size(t)
    # The dims from the innermost (smallest stride) out; the sort is stable, and
    # where dims of size 1 tie with others their place does not matter.
    perm = sortperm(collect(strides(t)))
    P = zero ? zeros(T, ntuple(i -> sz[perm[i]], length(sz))) :
        Array{T}(undef, ntuple(i -> sz[perm[i]], length(sz)))
    A = issorted(perm) ? P : PermutedDimsArray(P, Tuple(invperm(perm)))
    _check_layout(t, size(A), strides(A), T)
    return A
end

# The array layout (size, strides, element type) must be the tensor's.
# `tsize` and `tstr` default to the tensor's own; an execute-time override
# (`execute_with_overrides!`) gives others.
function _check_layout(t::Tensor, asize::Tuple, astrides::Tuple, T::Type, tsize = size(t),
                       tstr = strides(t))
    code = _dtype_code(t)
    expected = julia_type(code)
    esize = Int(Lib.cudnnfe_dtype_size(code))
    if expected === nothing ? (esize != 0 && sizeof(T) != esize) : T !== expected
        throw(ArgumentError("tensor \"$(tensor_name(t))\" is $(dtype_name(code)) but the array's " *
                            "element type is $T"))
    end
    if length(asize) != length(tsize)
        throw(DimensionMismatch("tensor \"$(tensor_name(t))\" has size $tsize (Julia order) but the " *
                                "array has size $asize"))
    end
    for d in eachindex(tsize)
        if tstr[d] == 0
            # A broadcast dimension: the buffer holds one element along it.
            asize[d] == 1 || throw(DimensionMismatch(
                "tensor \"$(tensor_name(t))\" broadcasts dim $d (stride 0) but the array has size " *
                "$(asize[d]) there; pass size 1"))
        elseif asize[d] != tsize[d]
            throw(DimensionMismatch("tensor \"$(tensor_name(t))\" has size $tsize (Julia order) but " *
                                    "the array has size $asize"))
        elseif tsize[d] > 1 && astrides[d] != tstr[d]
            throw(DimensionMismatch("tensor \"$(tensor_name(t))\" has strides $tstr (Julia order) but " *
                                    "the array has strides $astrides; set_strides! the tensor " *
                                    "or pass an array with that layout"))
        end
    end
    return nothing
end

function Base.show(io::IO, t::Tensor)
    if !isopen(t.graph)
        print(io, "CuDNNFE.Tensor(uid ", t.uid, ", graph closed)")
        return
    end
    try
        print(io, "CuDNNFE.Tensor(\"", tensor_name(t), "\", uid ", t.uid, ", :", dtype(t), ", size ",
              size(t), ", strides ", strides(t), ")")
    catch e
        e isa CuDNNFEError || rethrow()
        print(io, "CuDNNFE.Tensor(uid ", t.uid, ": ", e.message, ")")
    end
end
