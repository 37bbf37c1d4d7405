# Bound executions (cudnnfe_bound_t): a built graph fixed to its buffers,
# workspace and handle once (`bind_execution`), then run with one call each
# time, optionally as a replayed CUDA graph. Plain executes are execute.jl's.

const CUDA_GRAPH_MODE_CODES = _prefixed_constants("CUDNNFE_CUDA_GRAPH_")  # :off, :native, :capture, :auto
const CUDA_GRAPH_MODE_SYMBOLS = Dict{Int32,Symbol}(v => k for (k, v) in CUDA_GRAPH_MODE_CODES)

"""
    bind_execution(g, handle, buffers; workspace = nothing, workspace_size = nothing,
                   cuda_graph = :off) -> BoundExecution

Binds the built graph's selected plan to `buffers` (`buffers[i]` for
`bound_tensors(g)[i]`, checked as by `execute_ordered!`: arrays by type,
size and strides, raw addresses not at all), a workspace (as for `execute!`)
and `handle` (cudnnfe_graph_bind). Every check is made here; `execute!(b)`
is then one C call. `cuda_graph`: `:off` (the default; the only mode of the
CPU reference), `:native`, `:capture` or `:auto` records the work now and
replays it at each run (refused with `CuDNNFEError(:not_supported, ...)`,
naming the reason, on the CPU reference and for graphs with pass-by-value
inputs). The bound execution keeps the arrays, the graph and the handle
alive; the arrays' contents may change between runs. Errors, from `handle`:
`:invalid_argument` (a wrong count, a NULL address naming its tensor, a
small workspace), `:wrong_state` (not built), `:not_supported`.
"""
function bind_execution(g::Graph, handle::Handle, buffers::Union{AbstractVector,Tuple};
                        workspace = nothing, workspace_size = nothing, cuda_graph = :off)
    data, keep = _ordered_pointers(g, buffers)
    n = length(data)
    ws, wsize, wsobj = _workspace(workspace, workspace_size)
    r = Ref{Lib.cudnnfe_bind_options_t}()
    Lib.cudnnfe_bind_options_init_sized(r, sizeof(Lib.cudnnfe_bind_options_t))
    o = _with(r[]; cuda_graph = _code(CUDA_GRAPH_MODE_CODES, "CUDA graph mode", cuda_graph))
    out = Ref{Ptr{Lib.cudnnfe_bound_t}}(C_NULL)
    GC.@preserve keep wsobj data begin
        check(handle, Lib.cudnnfe_graph_bind(out, g, handle, data, n, ws, wsize, Ref(o)))
    end
    return BoundExecution(out[], g, handle, (keep, wsobj))
end

"""
    BoundExecution

A built graph bound to its buffers, workspace and handle (`bind_execution`).
Run it with `execute!(b; stream = nothing)`; `cuda_graph_mode(b)` says how
it runs. Freed by `close(b)` or its finalizer; a task at a time uses it (it
runs on its handle).
"""
mutable struct BoundExecution
    ptr::Ptr{Lib.cudnnfe_bound_t}
    graph::Graph
    handle::Handle
    keep::Any  # the bound arrays and workspace, alive as long as the bound execution

    function BoundExecution(ptr::Ptr{Lib.cudnnfe_bound_t}, g::Graph, h::Handle, keep)
        return finalizer(_destroy!, new(ptr, g, h, keep))
    end
end

function _destroy!(b::BoundExecution)
    p = b.ptr
    b.ptr = C_NULL
    b.keep = nothing
    return p == C_NULL ? OK : Lib.cudnnfe_bound_destroy(p)
end

"""
    close(b::BoundExecution)

Frees the bound execution (its variant pack and CUDA graph) now
(idempotent). Using it afterwards throws an `ArgumentError`.
"""
function Base.close(b::BoundExecution)
    check(_destroy!(b))
    return nothing
end

Base.isopen(b::BoundExecution) = b.ptr != C_NULL

function Base.unsafe_convert(::Type{Ptr{Lib.cudnnfe_bound_t}}, b::BoundExecution)
    b.ptr == C_NULL && throw(ArgumentError("this CuDNNFE.BoundExecution is closed"))
    return b.ptr
end

"""
    execute!(b::BoundExecution; stream = nothing) -> b

Runs the bound work on `stream` (a `cudaStream_t`; `nothing`: the default
stream; ignored by the CPU reference), asynchronously on the GPU. Throws
`CuDNNFEError(:invalid_argument, ...)` when its graph or handle was closed,
`:wrong_state` when the graph holds another plan than at bind.
"""
function execute!(b::BoundExecution; stream = nothing)
    st = _stream(stream)
    check(b.handle, Lib.cudnnfe_bound_execute(b, st))
    return b
end

"""
    cuda_graph_mode(b::BoundExecution) -> Symbol

How it runs: `:off`, `:native` or `:capture` (`:auto` is resolved at bind).
"""
function cuda_graph_mode(b::BoundExecution)
    m = Ref{Lib.cudnnfe_cuda_graph_mode_t}(0)
    check(Lib.cudnnfe_bound_get_cuda_graph_mode(b, m))
    return get(CUDA_GRAPH_MODE_SYMBOLS, Int32(m[]), :unknown)
end

function Base.show(io::IO, b::BoundExecution)
    print(io, "CuDNNFE.BoundExecution(", isopen(b) ? "open" : "closed", ")")
end
