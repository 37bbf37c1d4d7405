# Plan control (docs/plans.md): the plans of a built graph, their selection
# and autotuning, how the graph was built, plan blobs, the process's plan
# cache, and CUDA graphs. Plan indices are 1-based here, as Julia's are
# (the C ABI counts from 0).

const BUILD_POLICY_CODES = _prefixed_constants("CUDNNFE_BUILD_POLICY_")      # :heuristics_choice, :all
const NUMERICAL_NOTE_CODES = _prefixed_constants("CUDNNFE_NUMERICAL_NOTE_")  # :tensor_core, ..., :all
const BEHAVIOR_NOTE_CODES = _prefixed_constants("CUDNNFE_BEHAVIOR_NOTE_")    # :runtime_compilation, ..., :all
const PLAN_SOURCE_CODES = _prefixed_constants("CUDNNFE_PLAN_SOURCE_")        # :built, :memory_cache, ...
const PLAN_SOURCE_SYMBOLS = Dict{Int32,Symbol}(v => k for (k, v) in PLAN_SOURCE_CODES)

# Note bits from a Symbol, an integer mask, or a collection of those.
function _note_bits(table::Dict{Symbol,Int32}, what::String, notes)
    notes === nothing && return UInt32(0)
    notes isa Bool && throw(ArgumentError("$(what)s: expected Symbols or a bit mask, not a Bool"))
    if notes isa Integer
        bits = UInt32(notes)
        bits & ~UInt32(table[:all]) == 0 ||
            throw(ArgumentError("$what mask $(repr(bits)) has bits that are no $(what)s"))
        return bits
    end
    notes isa Symbol && return UInt32(_code(table, what, notes))
    bits = UInt32(0)
    for n in notes
        bits |= _note_bits(table, what, n)
    end
    return bits
end

# The single-bit notes set in `bits`, as Symbols in bit order.
function _note_symbols(table::Dict{Symbol,Int32}, bits::Integer)
    named = [(v, k) for (k, v) in table if k !== :all && count_ones(v) == 1]
    return Symbol[k for (v, k) in sort!(named) if bits & v != 0]
end

"""
    PlanInfo

One plan of a built graph (`cudnnfe_plan_info_t`): `index` (1-based, for
`select_plan!`), `name` (engine and knob choices, `"eng9_k2=3_k13=1"`;
`"cpu_reference"`), `engine_id` (cuDNN's global engine index; -1 for the CPU
reference), `workspace_size` (bytes), `numerical_notes` and `behavior_notes`
(Symbols), `autotune_time_ms` (median time of one execute measured by the
last `autotune!`; `nothing` when not timed), `selected` (the plan `execute!`
runs) and `chosen_by_autotune`.
"""
struct PlanInfo
    index::Int
    name::String
    engine_id::Int64
    workspace_size::Int64
    numerical_notes::Vector{Symbol}
    behavior_notes::Vector{Symbol}
    autotune_time_ms::Union{Float64,Nothing}
    selected::Bool
    chosen_by_autotune::Bool
end

"""
    BuildInfo

How a graph was built (`cudnnfe_build_info_t`): `source` (`:built`,
`:memory_cache`, `:disk_cache`, `:serialized`, `:rebuilt`) and the host
wall-clock time of each stage in milliseconds (`total_ms`, `validate_ms`,
`cache_ms`, `lower_ms`, `heuristics_ms`, `plan_build_ms`; 0 for a stage that
did not run).
"""
struct BuildInfo
    source::Symbol
    total_ms::Float64
    validate_ms::Float64
    cache_ms::Float64
    lower_ms::Float64
    heuristics_ms::Float64
    plan_build_ms::Float64
end

# The C index of Julia plan index `i`, checked against the plan count (so
# that the message counts from 1, as the caller does).
function _plan_index(g::Graph, i::Integer)
    n = plan_count(g)
    1 <= i <= n || throw(CuDNNFEError(Lib.CUDNNFE_STATUS_INVALID_ARGUMENT,
        "graph \"$(graph_name(g))\": plan index $i is out of range 1:$n; it has $n plan" *
        (n == 1 ? " (build with policy = :all for more)" : "s")))
    return Int64(i) - 1
end

"""
    plan_count(g) -> Int

Number of plans of the built graph: 1 for a `:heuristics_choice` build and
for the CPU reference; with `policy = :all`, every engine configuration that
passed the filters and built. Throws `CuDNNFEError(:wrong_state, ...)` before
`build!`.
"""
function plan_count(g::Graph)
    n = Ref{Int64}(0)
    check(g, Lib.cudnnfe_graph_get_plan_count(g, n))
    return Int(n[])
end

"""
    plan_info(g, i) -> PlanInfo

Plan `i` (1-based) of the built graph; `CuDNNFEError(:invalid_argument, ...)`
naming the plan count when out of range.
"""
function plan_info(g::Graph, i::Integer)
    r = Ref{Lib.cudnnfe_plan_info_t}()
    Lib.cudnnfe_plan_info_init_sized(r, sizeof(Lib.cudnnfe_plan_info_t))
    check(g, Lib.cudnnfe_graph_get_plan_info(g, _plan_index(g, i), r))
    c = r[]
    return PlanInfo(Int(i), c.name == C_NULL ? "" : unsafe_string(c.name), c.engine_id, c.workspace_size,
                    _note_symbols(NUMERICAL_NOTE_CODES, c.numerical_notes),
                    _note_symbols(BEHAVIOR_NOTE_CODES, c.behavior_notes),
                    c.autotune_time_ms < 0 ? nothing : Float64(c.autotune_time_ms),
                    c.selected != 0, c.chosen_by_autotune != 0)
end

"""
    plans(g) -> Vector{PlanInfo}

Every plan of the built graph.
"""
plans(g::Graph) = PlanInfo[plan_info(g, i) for i in 1:plan_count(g)]

"""
    selected_plan(g) -> Int

Index (1-based) of the plan `execute!` runs.
"""
function selected_plan(g::Graph)
    i = Ref{Int64}(0)
    check(g, Lib.cudnnfe_graph_get_selected_plan(g, i))
    return Int(i[]) + 1
end

"""
    select_plan!(g, i) -> g

Makes plan `i` (1-based) the one `execute!` runs and `serialize_plan` writes;
`workspace_size(g)` and `plan_name(g)` follow it. It changes which plan the
graph runs: do it before tasks share the graph for execution.
"""
function select_plan!(g::Graph, i::Integer)
    check(g, Lib.cudnnfe_graph_select_plan(g, _plan_index(g, i)))
    return g
end

"""
    autotune!(g, handle; bindings = nothing, workspace = nothing,
              workspace_size = nothing, stream = nothing, warmup_iterations = nothing,
              min_iterations = nothing, max_iterations = nothing, tolerance = nothing,
              max_ms_per_plan = nothing) -> Int

Times every plan of the built GPU graph with CUDA events, selects the
fastest and returns its index (1-based). Build with `policy = :all` to have a
choice. The timings are recorded in `plans(g)` (`autotune_time_ms`), in the
plan blob and in the plan caches.

`bindings` are buffers for every bound tensor as for `execute!` (outputs are
overwritten); `nothing`: the library's own scratch buffers. `workspace`:
plans needing more than it holds are not timed; `nothing`: the library
allocates the largest plan's. `stream`: as for `execute!`; the call
synchronizes it. The other keywords are `cudnnfe_autotune_options_t`'s
(`nothing`: the library's defaults). Throws `CuDNNFEError(:not_supported,
...)` for a CPU reference graph, or when no plan could be timed (the message
says why for each). Changes the selected plan, like `select_plan!`.
"""
function autotune!(g::Graph, handle::Handle; bindings = nothing, workspace = nothing,
                   workspace_size = nothing, stream = nothing, warmup_iterations = nothing,
                   min_iterations = nothing, max_iterations = nothing, tolerance = nothing,
                   max_ms_per_plan = nothing)
    r = Ref{Lib.cudnnfe_autotune_options_t}()
    Lib.cudnnfe_autotune_options_init_sized(r, sizeof(Lib.cudnnfe_autotune_options_t))
    o = _with(r[]; warmup_iterations = warmup_iterations, min_iterations = min_iterations,
              max_iterations = max_iterations, tolerance = tolerance,
              max_ms_per_plan = max_ms_per_plan)
    table, keep = bindings === nothing ? (Lib.cudnnfe_binding_t[], Any[]) :
                  _binding_table(g, bindings)
    ws, wsize, wsobj = _workspace(workspace, workspace_size)
    st = _stream(stream)
    tptr = isempty(table) ? Ptr{Lib.cudnnfe_binding_t}(C_NULL) : pointer(table)
    GC.@preserve keep wsobj table begin
        check(g, Lib.cudnnfe_graph_autotune(g, handle, tptr, length(table), ws, wsize, st, Ref(o)))
    end
    return selected_plan(g)
end

# A checked cudnnfe_binding_t table for `bindings` (as `execute!` takes them),
# and the objects to keep alive during the call.
function _binding_table(g::Graph, bindings)
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
    return table, keep
end

"""
    build_info(g) -> BuildInfo

Where the built graph's plan came from and how long each build stage took.
"""
function build_info(g::Graph)
    r = Ref{Lib.cudnnfe_build_info_t}()
    Lib.cudnnfe_build_info_init_sized(r, sizeof(Lib.cudnnfe_build_info_t))
    check(g, Lib.cudnnfe_graph_get_build_info(g, r))
    c = r[]
    return BuildInfo(get(PLAN_SOURCE_SYMBOLS, c.source, :unknown), c.total_ms, c.validate_ms,
                     c.cache_ms, c.lower_ms, c.heuristics_ms, c.plan_build_ms)
end

"""
    fingerprint(g) -> String

The graph's structural fingerprint, 32 lowercase hex digits: a hash of its
description without graph, node and tensor names (structure, UIDs, shapes,
strides, data types, attributes, scalar values). Graphs with equal
fingerprints share plans. Types left unset are hashed as such: fingerprint a
validated or built graph to get the plan cache's key.
"""
function fingerprint(g::Graph)
    buf = Vector{UInt8}(undef, Lib.CUDNNFE_FINGERPRINT_SIZE)
    GC.@preserve buf begin
        check(g, Lib.cudnnfe_graph_get_fingerprint(g, convert(Ptr{Cchar}, pointer(buf)), length(buf)))
    end
    n = something(findfirst(==(0x00), buf), length(buf) + 1) - 1
    return String(buf[1:n])
end

"""
    serialize_plan(g) -> Vector{UInt8}

The built graph's selected plan as a plan blob: a `CUDNNFE-PLAN` header line,
then JSON holding the graph description, the build options, the engine
configuration, the GPU architecture and cuDNN version it was built for, and
the autotune record. `deserialize_plan` builds it again without heuristics or
plan search; it is tied to the GPU architecture and cuDNN version, unlike
`serialize_graph` (the description only, which rebuilds anywhere).
"""
function serialize_plan(g::Graph)
    n = Ref{Csize_t}(0)
    check(g, Lib.cudnnfe_graph_serialize_plan(g, convert(Ptr{Cchar}, C_NULL), 0, n))
    buf = Vector{UInt8}(undef, n[])
    GC.@preserve buf begin
        check(g, Lib.cudnnfe_graph_serialize_plan(g, convert(Ptr{Cchar}, pointer(buf)), length(buf), n))
    end
    return resize!(buf, Int(n[]))
end

"""
    deserialize_plan(data, handle = nothing; rebuild_on_mismatch = false) -> Graph

A new, built graph from a plan blob (`serialize_plan`'s bytes, or a String):
the stored engine configuration is built directly (`build_info(g).source ==
:serialized`). Throws `CuDNNFEError(:bad_serialized_data, ...)` for
truncated, corrupt or hostile bytes, and for a plan made for another GPU
architecture or cuDNN version (the message names both) unless
`rebuild_on_mismatch = true`, which builds the graph again from its
description with the stored build options (`:rebuilt`).
"""
function deserialize_plan(data::Union{AbstractString,AbstractVector{UInt8}},
                          handle::Union{Handle,Nothing} = nothing; rebuild_on_mismatch::Bool = false)
    bytes = data isa AbstractString ? Vector{UInt8}(codeunits(String(data))) : Vector{UInt8}(data)
    r = Ref{Lib.cudnnfe_plan_load_options_t}()
    Lib.cudnnfe_plan_load_options_init_sized(r, sizeof(Lib.cudnnfe_plan_load_options_t))
    o = _with(r[]; rebuild_on_mismatch = Int32(rebuild_on_mismatch))
    hptr = handle === nothing ? Ptr{Lib.cudnnfe_handle_t}(C_NULL) : handle
    g = Graph(Val(:empty))
    try
        GC.@preserve bytes begin
            check(g, Lib.cudnnfe_graph_deserialize_plan(g, hptr, convert(Ptr{Cchar}, pointer(bytes)),
                                                        length(bytes), Ref(o)))
        end
    catch
        close(g)
        rethrow()
    end
    return g
end

"""
    plan_cache_stats() -> NamedTuple

Counters of this process's plan caches: `entries`, `hits`, `misses`,
`disk_hits`, `disk_writes`, `disk_errors`. Only GPU builds use the caches.
"""
function plan_cache_stats()
    _ensure_library()
    r = Ref{Lib.cudnnfe_plan_cache_stats_t}()
    Lib.cudnnfe_plan_cache_stats_init_sized(r, sizeof(Lib.cudnnfe_plan_cache_stats_t))
    check(Lib.cudnnfe_plan_cache_get_stats(r))
    c = r[]
    return (entries = Int(c.entries), hits = Int(c.hits), misses = Int(c.misses),
            disk_hits = Int(c.disk_hits), disk_writes = Int(c.disk_writes),
            disk_errors = Int(c.disk_errors))
end

"""
    clear_plan_cache!() -> nothing

Empties this process's plan cache and zeroes its counters. Graphs built from
it keep their plans; the cache directory is not touched.
"""
function clear_plan_cache!()
    _ensure_library()
    check(Lib.cudnnfe_plan_cache_clear())
    return nothing
end

"""
    populate_cuda_graph!(g, handle, cuda_graph, bindings; workspace = nothing,
                         workspace_size = nothing) -> g
    update_cuda_graph!(g, handle, cuda_graph, bindings; ...) -> g

`populate_cuda_graph!` adds the selected plan's work on these buffers (as
`execute!` takes them) to `cuda_graph`, a `cudaGraph_t` (a `Ptr`, an integer
address, or a pointer-sized handle such as CUDA.jl's `CuGraph.handle`) the
caller created empty and owns; instantiate and launch it with the CUDA
runtime. `update_cuda_graph!` points the nodes it added at new buffers (then
`cudaGraphExecUpdate`, or instantiate again). Both need a plan with the
`:supports_cuda_graph_native_api` behaviour note (ask for one with
`build!(g; require_behavior_notes = (:supports_cuda_graph_native_api,))`)
and cuDNN 9.5 or later: otherwise, and for the CPU reference,
`CuDNNFEError(:not_supported, ...)` (stream capture of `execute!` works for
every GPU plan). Errors are reported on `handle`.
"""
function populate_cuda_graph!(g::Graph, handle::Handle, cuda_graph, bindings; workspace = nothing,
                              workspace_size = nothing)
    return _cuda_graph_call(Lib.cudnnfe_graph_populate_cuda_graph, g, handle, cuda_graph, bindings,
                            workspace, workspace_size)
end

function update_cuda_graph!(g::Graph, handle::Handle, cuda_graph, bindings; workspace = nothing,
                            workspace_size = nothing)
    return _cuda_graph_call(Lib.cudnnfe_graph_update_cuda_graph, g, handle, cuda_graph, bindings,
                            workspace, workspace_size)
end

function _cuda_graph_call(f::F, g::Graph, handle::Handle, cuda_graph, bindings, workspace,
                          workspace_size) where {F}
    table, keep = _binding_table(g, bindings)
    ws, wsize, wsobj = _workspace(workspace, workspace_size)
    cg = cuda_graph === nothing ? C_NULL : _address(cuda_graph)
    GC.@preserve keep wsobj table begin
        check(handle, f(g, handle, table, length(table), ws, wsize, cg))
    end
    return g
end

function Base.show(io::IO, p::PlanInfo)
    print(io, "CuDNNFE.PlanInfo(", p.index, ": ", repr(p.name), ", workspace ", p.workspace_size,
          p.autotune_time_ms === nothing ? "" : ", $(p.autotune_time_ms) ms",
          p.selected ? ", selected" : "", ")")
end
