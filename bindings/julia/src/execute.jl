# Execution: bind buffers to the bound tensors and run the built plan.
#
# A buffer is either
#   * an array (`Array`, any strided host array, or a device array such as
#     CUDA.jl's `CuArray`): its element type, size and strides are checked
#     against the tensor, in Julia order, and `pointer(A)` is passed; or
#   * a raw address: a `Ptr`, an integer, or a pointer-sized primitive such as
#     CUDA.jl's `CuPtr` (no checks possible; you own the layout).
# The caller keeps device buffers alive until the stream has finished with
# them: GPU execution is asynchronous on `stream`.

# A raw address as Ptr{Cvoid}.
_address(p::Ptr) = convert(Ptr{Cvoid}, p)
_address(p::Integer) = convert(Ptr{Cvoid}, UInt(p))
function _address(p)
    T = typeof(p)
    if isprimitivetype(T) && sizeof(T) == sizeof(Ptr{Cvoid})
        return reinterpret(Ptr{Cvoid}, p)  # e.g. CUDA.jl's CuPtr{T}
    end
    if hasproperty(p, :handle)  # e.g. CUDA.jl's CuStream
        return _address(getproperty(p, :handle))
    end
    throw(ArgumentError("cannot use a $(typeof(p)) as a buffer address; pass an array, a Ptr, " *
                        "an integer address or a CuPtr"))
end

_is_host(p::Ptr) = true
_is_host(p) = false

# (address, object to keep alive) for one tensor's buffer, checked against
# the tensor (or its overridden (size, strides), Julia order) and the graph's
# target.
function _buffer(t::Tensor, target::Symbol, A::AbstractArray, shape = nothing)
    if shape === nothing
        _check_layout(t, size(A), strides(A), eltype(A))
    else
        _check_layout(t, size(A), strides(A), eltype(A), shape...)
    end
    p = pointer(A)
    if target === :cpu_reference && !_is_host(p)
        throw(ArgumentError("tensor \"$(tensor_name(t))\": the graph runs on the CPU reference " *
                            "but the buffer is a $(typeof(A)) (device memory); pass a host Array"))
    elseif target === :gpu && _is_host(p)
        throw(ArgumentError("tensor \"$(tensor_name(t))\": the graph runs on the GPU but the " *
                            "buffer is a $(typeof(A)) in host memory; pass device memory " *
                            "(e.g. a CuArray) or its address"))
    end
    return _address(p), A
end
_buffer(::Tensor, ::Symbol, p, shape = nothing) = (_address(p), nothing)  # a raw address: no checks possible

function _workspace(workspace, size)
    if workspace === nothing
        return C_NULL, something(size, 0), nothing
    elseif workspace isa AbstractArray
        n = size === nothing ? sizeof(eltype(workspace)) * length(workspace) : size
        return _address(pointer(workspace)), n, workspace
    else
        size === nothing && throw(ArgumentError(
            "workspace given as an address: pass workspace_size (bytes) too"))
        return _address(workspace), size, nothing
    end
end

_stream(::Nothing) = C_NULL
_stream(s) = _address(s)

_pairs(bindings::AbstractDict) = collect(pairs(bindings))
_pairs(bindings::Union{AbstractVector,Tuple}) = collect(bindings)
_pairs(binding::Pair) = [binding]

"""
    execute!(g, handle, bindings; workspace = nothing, workspace_size = nothing,
             stream = nothing) -> g
    execute!(g, handle, t1 => buf1, t2 => buf2, ...; kwargs...)

Runs the built graph. `bindings` maps every bound tensor (inputs and outputs
marked with `set_output!`; see `bound_tensors(g)`) to its buffer: a
`Tensor` or UID `=>` an array or an address. Arrays must have the tensor's
element type, size and strides in Julia order, checked here (a dimension the
tensor broadcasts with stride 0 takes size 1); a graph built for the CPU
reference takes host arrays, one built for the GPU device memory (`CuArray`s,
`CuPtr`s, integer addresses). Scalars take no buffer.

`workspace` is device memory of at least `workspace_size(g)` bytes (an array,
or an address with `workspace_size`); the CPU reference needs none. `stream`
is a `cudaStream_t` (a `Ptr`, an integer, or CUDA.jl's `CuStream`); `nothing`
is the default stream. GPU execution is asynchronous on it.

Errors are reported on `handle`; use one handle per concurrently executing task.
"""
function execute!(g::Graph, handle::Handle, bindings; workspace = nothing,
                  workspace_size = nothing, stream = nothing)
    table, keep = _binding_table(g, bindings)
    ws, wsize, wsobj = _workspace(workspace, workspace_size)
    st = _stream(stream)
    GC.@preserve keep wsobj table begin
        check(handle, Lib.cudnnfe_graph_execute(g, handle, table, length(table), ws, wsize, st))
    end
    return g
end

# The C binding table of `bindings` and the objects to keep alive; `shapes`
# maps overridden UIDs to their (size, strides) in Julia order.
function _binding_table(g::Graph, bindings, shapes = nothing)
    tgt = target(g)
    entries = _pairs(bindings)
    table = Vector{Lib.cudnnfe_binding_t}(undef, length(entries))
    keep = Vector{Any}(undef, length(entries))
    for (i, (key, buf)) in enumerate(entries)
        u = _uid(g, key)
        shape = shapes === nothing ? nothing : get(shapes, u, nothing)
        addr, obj = _buffer(Tensor(g, u), tgt, buf, shape)
        table[i] = Lib.cudnnfe_binding_t(u, addr)
        keep[i] = obj
    end
    return table, keep
end

function execute!(g::Graph, handle::Handle, binding::Pair, more::Pair...; kwargs...)
    return execute!(g, handle, Pair[binding, more...]; kwargs...)
end

# The addresses of `buffers` in `bound_tensors(g)` order, and what keeps them
# alive: arrays are checked against their tensors; raw addresses are taken as
# they are (`execute_ordered!`'s and `bind_execution`'s hot path).
function _ordered_pointers(g::Graph, buffers)
    n = length(buffers)
    data = Vector{Ptr{Cvoid}}(undef, n)
    keep = Vector{Any}(nothing, n)
    if any(b -> b isa AbstractArray, buffers)
        bound = bound_tensors(g)
        length(bound) == n || throw(ArgumentError(
            "$n buffers given for $(length(bound)) bound tensors (bound_tensors(g))"))
        tgt = target(g)
        for (i, b) in enumerate(buffers)
            data[i], keep[i] = _buffer(bound[i], tgt, b)
        end
    else
        for (i, b) in enumerate(buffers)
            data[i] = _address(b)
        end
    end
    return data, keep
end

"""
    execute_ordered!(g, handle, buffers; workspace = nothing, workspace_size = nothing,
                     stream = nothing) -> g

The faster form of `execute!`: `buffers[i]` is the buffer of
`bound_tensors(g)[i]`. Arrays are checked as by `execute!`; raw addresses
(`Ptr`, integers, `CuPtr`) skip all checks, for the hot path.
"""
function execute_ordered!(g::Graph, handle::Handle, buffers::Union{AbstractVector,Tuple};
                          workspace = nothing, workspace_size = nothing, stream = nothing)
    data, keep = _ordered_pointers(g, buffers)
    n = length(data)
    ws, wsize, wsobj = _workspace(workspace, workspace_size)
    st = _stream(stream)
    GC.@preserve keep wsobj data begin
        check(handle, Lib.cudnnfe_graph_execute_ordered(g, handle, data, n, ws, wsize, st))
    end
    return g
end

# An override's (size, strides) in Julia order: a size alone is packed
# column-major.
function _override_shape(spec)
    if !isempty(spec) && first(spec) isa Union{Tuple,AbstractVector}
        length(spec) == 2 || throw(ArgumentError(
            "override $(repr(spec)): expected a size, or (size, strides)"))
        sz, st = Tuple(Int64.(spec[1])), Tuple(Int64.(spec[2]))
        length(sz) == length(st) || throw(ArgumentError(
            "override $(repr(spec)): $(length(sz)) sizes but $(length(st)) strides"))
        return sz, st
    end
    sz = Tuple(Int64.(spec))
    return sz, Tuple(Int64[prod(sz[1:(d - 1)]; init = Int64(1)) for d in eachindex(sz)])
end

"""
    execute_with_overrides!(g, handle, bindings, overrides; workspace = nothing,
                            workspace_size = nothing, stream = nothing) -> g

Runs a graph built with `override_shape_enabled = true` as `execute!` does,
with the tensors of `overrides` taking other shapes for this call (since
0.3). `overrides` maps bound tensors (or UIDs; each at most once) to a size,
or `(size, strides)`, in Julia order (a size alone is packed column-major);
the rank cannot change and every other bound tensor keeps its own shape.
Arrays bound to overridden tensors are checked against the override. The
CPU reference infers the graph's shapes again from the overridden ones: a
bound tensor whose shape would change (an output included) must be
overridden too. Throws `CuDNNFEError(:invalid_argument, ...)` naming the
tensor and the rule for a bad override, `:wrong_state` for a graph built
without `override_shape_enabled`.
"""
function execute_with_overrides!(g::Graph, handle::Handle, bindings, overrides;
                                 workspace = nothing, workspace_size = nothing, stream = nothing)
    specs = [(_uid(g, key), _override_shape(spec)) for (key, spec) in _pairs(overrides)]
    table, keep = _binding_table(g, bindings, Dict(specs))
    # C order: the reversed Julia sizes and strides, kept alive for the call.
    cshapes = [(Int64[reverse(sz)...], Int64[reverse(st)...]) for (_, (sz, st)) in specs]
    ws, wsize, wsobj = _workspace(workspace, workspace_size)
    st = _stream(stream)
    GC.@preserve keep wsobj table cshapes begin
        ov = Lib.cudnnfe_shape_override_t[
            Lib.cudnnfe_shape_override_t(u, Int32(length(d)), pointer(d), pointer(s))
            for ((u, _), (d, s)) in zip(specs, cshapes)]
        check(handle, Lib.cudnnfe_graph_execute_with_overrides(g, handle, table, length(table), ov,
                                                                length(ov), ws, wsize, st))
    end
    return g
end
