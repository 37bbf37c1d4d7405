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
# the tensor and the graph's target.
function _buffer(t::Tensor, target::Symbol, A::AbstractArray)
    _check_layout(t, size(A), strides(A), eltype(A))
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
_buffer(::Tensor, ::Symbol, p) = (_address(p), nothing)  # a raw address: no checks possible

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
    tgt = target(g)
    entries = _pairs(bindings)
    table = Vector{Lib.cudnnfe_binding_t}(undef, length(entries))
    keep = Vector{Any}(undef, length(entries))
    for (i, (key, buf)) in enumerate(entries)
        u = _uid(g, key)
        addr, obj = _buffer(Tensor(g, u), tgt, buf)
        table[i] = Lib.cudnnfe_binding_t(u, addr)
        keep[i] = obj
    end
    ws, wsize, wsobj = _workspace(workspace, workspace_size)
    st = _stream(stream)
    GC.@preserve keep wsobj table begin
        check(handle, Lib.cudnnfe_graph_execute(g, handle, table, length(table), ws, wsize, st))
    end
    return g
end

function execute!(g::Graph, handle::Handle, binding::Pair, more::Pair...; kwargs...)
    return execute!(g, handle, Pair[binding, more...]; kwargs...)
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
    ws, wsize, wsobj = _workspace(workspace, workspace_size)
    st = _stream(stream)
    GC.@preserve keep wsobj data begin
        check(handle, Lib.cudnnfe_graph_execute_ordered(g, handle, data, n, ws, wsize, st))
    end
    return g
end
