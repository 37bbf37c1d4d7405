# Graphs: lifetime, graph-wide settings, validation, build and queries.

"""
    Graph(; name = nothing, io_dtype = nothing, intermediate_dtype = nothing,
            compute_dtype = nothing)
    Graph(f; kwargs...)

A graph of tensors and operations; after `build!`, a runnable plan. Data
types are Julia types (`Float32`) or Symbols (`:bfloat16`); `nothing` leaves
the library's default. `io_dtype` applies to graph inputs and outputs whose
type is not set, `intermediate_dtype` to virtual tensors, `compute_dtype` to
the operations' math.

Freed by `close(g)` or its finalizer; the do-block form closes it when `f`
returns. One task at a time may construct a graph; a built graph may be
executed from many tasks at once, each with its own `Handle`.
"""
mutable struct Graph
    ptr::Ptr{Lib.cudnnfe_graph_t}

    function Graph(::Val{:empty})
        _ensure_library()
        out = Ref{Ptr{Lib.cudnnfe_graph_t}}(C_NULL)
        check(Lib.cudnnfe_graph_create(out))
        return finalizer(_destroy!, new(out[]))
    end
end

function Graph(; name = nothing, io_dtype = nothing, intermediate_dtype = nothing,
               compute_dtype = nothing)
    g = Graph(Val(:empty))
    try
        name === nothing || set_name!(g, name)
        io_dtype === nothing || set_io_dtype!(g, io_dtype)
        intermediate_dtype === nothing || set_intermediate_dtype!(g, intermediate_dtype)
        compute_dtype === nothing || set_compute_dtype!(g, compute_dtype)
    catch
        close(g)
        rethrow()
    end
    return g
end

function Graph(f::Function; kwargs...)
    g = Graph(; kwargs...)
    try
        return f(g)
    finally
        close(g)
    end
end

function _destroy!(g::Graph)
    p = g.ptr
    g.ptr = C_NULL
    return p == C_NULL ? OK : Lib.cudnnfe_graph_destroy(p)
end

"""
    close(g::Graph)

Frees the graph now (idempotent). Its `Tensor`s become unusable.
"""
function Base.close(g::Graph)
    check(_destroy!(g))
    return nothing
end

Base.isopen(g::Graph) = g.ptr != C_NULL

function Base.unsafe_convert(::Type{Ptr{Lib.cudnnfe_graph_t}}, g::Graph)
    g.ptr == C_NULL && throw(ArgumentError("this CuDNNFE.Graph is closed"))
    return g.ptr
end

# Messages of graph calls are stored on the graph.
@inline function check(g::Graph, status::Integer)
    status == OK && return nothing
    _throw_graph_error(g, status)
end

@noinline function _throw_graph_error(g::Graph, status)
    msg = g.ptr == C_NULL ? _string(Lib.cudnnfe_last_error()) : _copy_graph_error(g)
    throw(CuDNNFEError(status, msg))
end

# Copies the graph's message under the library's lock (safe while other
# tasks fail calls on the same built graph), falling back to the pointer form.
function _copy_graph_error(g::Graph)
    size = Ref{Csize_t}(0)
    Lib.cudnnfe_graph_copy_last_error(g, C_NULL, 0, size) == OK ||
        return _string(Lib.cudnnfe_graph_last_error(g))
    buf = Vector{UInt8}(undef, size[] + 1)
    Lib.cudnnfe_graph_copy_last_error(g, buf, length(buf), size) == OK ||
        return _string(Lib.cudnnfe_graph_last_error(g))
    return String(buf[1:size[]])
end

# ---- graph-wide settings ---------------------------------------------------

"""
    set_name!(g::Graph, name) -> g

Names the graph (used in messages).
"""
function set_name!(g::Graph, name::Union{AbstractString,Symbol})
    check(g, Lib.cudnnfe_graph_set_name(g, _cstring(name)))
    return g
end

"""
    graph_name(g::Graph) -> String

The graph's name (as set, or as loaded by `deserialize_graph`).
"""
function graph_name(g::Graph)
    p = Ref{Cstring}(C_NULL)
    check(g, Lib.cudnnfe_graph_get_name(g, p))
    return _string(p[])
end

"""
    set_io_dtype!(g, dtype) -> g

Default data type of graph inputs and outputs whose type is not set.
"""
function set_io_dtype!(g::Graph, dtype)
    check(g, Lib.cudnnfe_graph_set_io_dtype(g, dtype_code(dtype)))
    return g
end

"""
    set_intermediate_dtype!(g, dtype) -> g

Default data type of virtual (intermediate) tensors.
"""
function set_intermediate_dtype!(g::Graph, dtype)
    check(g, Lib.cudnnfe_graph_set_intermediate_dtype(g, dtype_code(dtype)))
    return g
end

"""
    set_compute_dtype!(g, dtype) -> g

Default data type of the operations' math.
"""
function set_compute_dtype!(g::Graph, dtype)
    check(g, Lib.cudnnfe_graph_set_compute_dtype(g, dtype_code(dtype)))
    return g
end

"""
    set_prune_unread_inputs!(g, prune = true) -> g

With `prune`, graph inputs that no operation reads leave the graph when it is
validated, as cudnn-frontend's graph holds only the tensors its operations
use: a binding for one is ignored at execute, and a call naming one throws
saying that it left (`pruned_tensors` lists them). Default off: such an
input stays and takes no buffer (since 0.4).
"""
function set_prune_unread_inputs!(g::Graph, prune::Bool = true)
    check(g, Lib.cudnnfe_graph_set_prune_unread_inputs(g, Int32(prune)))
    return g
end

# ---- enumeration -----------------------------------------------------------

"""
    tensor_count(g) -> Int

Number of tensors in the graph (inputs, scalars and operation outputs).
"""
function tensor_count(g::Graph)
    n = Ref{Csize_t}(0)
    check(g, Lib.cudnnfe_graph_get_tensor_count(g, n))
    return Int(n[])
end

"""
    node_count(g) -> Int

Number of operations in the graph.
"""
function node_count(g::Graph)
    n = Ref{Csize_t}(0)
    check(g, Lib.cudnnfe_graph_get_node_count(g, n))
    return Int(n[])
end

"""
    tensors(g) -> Vector{Tensor}

Every tensor of the graph, in creation order.
"""
function tensors(g::Graph)
    n = Ref{Csize_t}(0)
    check(g, Lib.cudnnfe_graph_get_tensor_uids(g, C_NULL, 0, n))
    uids = Vector{Int64}(undef, n[])
    check(g, Lib.cudnnfe_graph_get_tensor_uids(g, uids, length(uids), n))
    return [Tensor(g, u) for u in view(uids, 1:Int(n[]))]
end

"""
    pruned_tensors(g) -> Vector{Tensor}

The inputs that left the graph at validation (`set_prune_unread_inputs!`),
in ascending UID order (since 0.4).
"""
function pruned_tensors(g::Graph)
    n = Ref{Csize_t}(0)
    check(g, Lib.cudnnfe_graph_get_pruned_uids(g, C_NULL, 0, n))
    uids = Vector{Int64}(undef, n[])
    check(g, Lib.cudnnfe_graph_get_pruned_uids(g, uids, length(uids), n))
    return [Tensor(g, u) for u in view(uids, 1:Int(n[]))]
end

"""
    find_tensor(g, name) -> Tensor

The tensor named `name`; throws `CuDNNFEError(:invalid_argument, ...)` if
there is none. Operation outputs are named `"<node>::<port>"`.
"""
function find_tensor(g::Graph, name::Union{AbstractString,Symbol})
    u = Ref{Int64}(0)
    check(g, Lib.cudnnfe_graph_find_tensor(g, _cstring(name), u))
    return Tensor(g, u[])
end

# ---- validation and build ----------------------------------------------------

const TARGET_CODES = _prefixed_constants("CUDNNFE_TARGET_")        # :auto, :gpu, :cpu_reference
const VERIFY_CODES = _prefixed_constants("CUDNNFE_VERIFY_")        # :from_env, :on, :off

# build!'s `verify`: nothing (the environment decides), a Bool, or a Symbol.
_verify_code(v::Nothing) = VERIFY_CODES[:from_env]
_verify_code(v::Bool) = VERIFY_CODES[v ? :on : :off]
_verify_code(v::Symbol) = _code(VERIFY_CODES, "verify mode", v)
const TARGET_SYMBOLS = Dict{Int32,Symbol}(v => k for (k, v) in TARGET_CODES)
const HEUR_MODE_CODES = _prefixed_constants("CUDNNFE_HEUR_MODE_")  # :a, :b, :fallback

function _code(table::Dict{Symbol,Int32}, what::String, x)
    x isa Integer && return Int32(x)
    code = get(table, x, nothing)
    code === nothing && throw(ArgumentError(
        "unknown $what $(repr(x)); expected one of $(join(repr.(sort!(collect(keys(table)))), ", "))"))
    return code
end

"""
    validate!(g) -> g

Resolves data types and checks every node's shapes and types, and, where a
GPU is usable, the support rules of that GPU (as `validate_for_build!(g)`);
throws `CuDNNFEError(:invalid_graph, ...)` naming the node, tensor and rule,
or `CuDNNFEError(:not_supported, ...)` for a graph cudnn-frontend or cuDNN
refuses on that GPU.
"""
function validate!(g::Graph)
    check(g, Lib.cudnnfe_graph_validate(g))
    return g
end

"""
    validate_for_build!(g, handle = nothing; handle = handle, target = :auto,
                        sm_version = 0, <the other keywords of build!>) -> g

Validates the graph as `build!(g, handle; ...)` with the same keywords would
before building, without building it: shapes and types for every target;
for a GPU target (`:gpu`, `:auto` with a usable GPU, or `device_properties`)
also the support rules of cudnn-frontend and cuDNN for that GPU's
architecture, or `sm_version` when given, which throw
`CuDNNFEError(:not_supported, ...)` (docs/refusals.md). The CPU reference
checks shapes and types only. `target = :gpu, sm_version = 90` applies the
rules of compute capability 9.0 without a GPU. The handle may be given as
the second argument (as to `build!`) or as the `handle` keyword. Since 0.4.
"""
function validate_for_build!(g::Graph, h::Union{Handle,Nothing} = nothing;
                             handle::Union{Handle,Nothing} = h, options...)
    _with_build_options(handle; options...) do hptr, r
        check(g, Lib.cudnnfe_graph_validate_for_build(g, hptr, r))
    end
    return g
end

"""
    build!(g, handle = nothing; target = :auto, heur_modes = nothing,
           policy = :heuristics_choice, max_workspace_size = nothing,
           exclude_numerical_notes = (), exclude_behavior_notes = (),
           require_behavior_notes = (), exclude_engines = (), max_plans = 0,
           disable_plan_cache = false, plan_cache_dir = nothing,
           override_shape_enabled = false, dynamic_shape_enabled = false,
           kernel_cache = nothing, device_properties = nothing,
           sm_count = 0, sm_version = 0, verify = nothing, verify_samples = 0,
           verify_rtol = 0.0) -> g

Validates and builds the graph for `target` (`:auto`: the GPU when cuDNN and a
GPU load, else the CPU reference; `:gpu`; `:cpu_reference`). `heur_modes` is
a sequence of up to 4 of `:a`, `:b`, `:fallback` tried in order (default
`(:a, :fallback)`). `handle` may be `nothing` (the library's own per-device
handle). Afterwards the graph can no longer be modified.

Plan control (docs/plans.md; see `plans`, `select_plan!`, `autotune!`):

  * `policy`: `:heuristics_choice` (one plan, the first configuration that
    passes the filters and builds) or `:all` (every one, in heuristics order).
  * Engine filters: `max_workspace_size` (bytes; `nothing`: no limit);
    `exclude_numerical_notes` (e.g. `(:tensor_core,)` to keep full FP32 math
    on Float32 data, `:nondeterministic`), `exclude_behavior_notes` (e.g.
    `(:runtime_compilation,)`), `require_behavior_notes` (e.g.
    `(:supports_cuda_graph_native_api,)`): Symbols, lower-case names of the
    `CUDNNFE_*_NOTE_*` constants; `exclude_engines`: engine ids (the N of a
    plan name `"engN_..."`). When they remove every engine configuration the
    build throws `CuDNNFEError(:not_supported, ...)` saying which filter
    removed what.
  * `max_plans`: with `:all`, at most this many (0: no limit).
  * `disable_plan_cache`: neither reuse nor store cached plans.
  * `plan_cache_dir`: persistent plan cache directory; `nothing`: the
    environment variable `CUDNNFE_PLAN_CACHE_DIR` when set; `""`: none.
  * `override_shape_enabled`: the plan may run with other shapes given at
    execute (`cudnnfe_graph_execute_with_overrides`; since 0.3).
  * `dynamic_shape_enabled`: build a dynamic-shape graph (since 0.3).
  * `kernel_cache`: a `KernelCache` that GPU builds of graphs of one
    topology and different shapes share compiled kernels through (implies
    `dynamic_shape_enabled`; the CPU reference ignores it; since 0.3).
  * `device_properties`: `DeviceProperties` to build the GPU plan for the
    device they describe without using a GPU, on any machine with cuDNN
    (`handle` must be `nothing`, `target` `:auto` or `:gpu`; the plan caches
    are not used). The built graph cannot execute: write its plan with
    `serialize_plan` and load it with `deserialize_plan` on such a GPU.
    Experimental (since 0.3).
  * `sm_count`: the number of SMs a GPU plan may use (cuDNN's heuristics SM
    count target, cudnn-frontend's `sm_count`); 0: all of the GPU's (since
    0.4).
  * `sm_version`: the architecture whose support rules validation applies
    (90 for compute capability 9.0, cudnn-frontend's `sm_version`); plans
    are still built for the GPU in use. 0: that GPU's (since 0.4). A
    negative `sm_count` or `sm_version` throws
    `CuDNNFEError(:invalid_argument, ...)`.

Verify mode (docs/verify.md; since 0.4):

  * `verify`: `true` (or `:on`) checks the first execute of each plan, and the
    first run of each bound execution, against the CPU reference on a sample
    of output elements (copying back just the inputs that sample depends on);
    a mismatch throws `CuDNNFEError(:verify_failed, ...)` naming the graph,
    node, plan, cuDNN version, GPU and the worst element. `false` (`:off`):
    off whatever the environment says; `nothing` (`:from_env`, the default):
    on when the environment variable `CUDNNFE_VERIFY` is `1`.
  * `verify_samples`: output elements sampled per output (0: 64, or
    `CUDNNFE_VERIFY_SAMPLES`).
  * `verify_rtol`: relative tolerance of floating outputs (0.0: by data type).
"""
function build!(g::Graph, handle::Union{Handle,Nothing} = nothing; options...)
    _with_build_options(handle; options...) do hptr, r
        check(g, Lib.cudnnfe_graph_build(g, hptr, r))
    end
    return g
end

# Calls f(handle pointer, Ref(cudnnfe_build_options_t)) with the options
# build! and validate_for_build! take, keeping the memory the struct points
# into alive for the call.
function _with_build_options(f, handle::Union{Handle,Nothing}; target = :auto,
                             heur_modes = nothing, policy = :heuristics_choice,
                             max_workspace_size = nothing,
                             exclude_numerical_notes = (), exclude_behavior_notes = (),
                             require_behavior_notes = (), exclude_engines = (), max_plans = 0,
                             disable_plan_cache = false, plan_cache_dir = nothing,
                             override_shape_enabled = false, dynamic_shape_enabled = false,
                             kernel_cache::Union{KernelCache,Nothing} = nothing,
                             device_properties::Union{DeviceProperties,Nothing} = nothing,
                             sm_count::Integer = 0, sm_version::Integer = 0,
                             verify::Union{Bool,Symbol,Nothing} = nothing,
                             verify_samples::Integer = 0, verify_rtol::Real = 0.0)
    r = Ref{Lib.cudnnfe_build_options_t}()
    Lib.cudnnfe_build_options_init_sized(r, sizeof(Lib.cudnnfe_build_options_t))
    o = r[]
    modes = o.heur_modes
    nmodes = o.num_heur_modes
    if heur_modes !== nothing
        codes = Int32[_code(HEUR_MODE_CODES, "heuristic mode", m) for m in heur_modes]
        length(codes) in 1:length(modes) ||
            throw(ArgumentError("heur_modes has $(length(codes)) entries; expected 1 to $(length(modes))"))
        modes = ntuple(i -> i <= length(codes) ? codes[i] : modes[i], length(modes))
        nmodes = Int32(length(codes))
    end
    engines = Int64[e for e in exclude_engines]
    cache_dir = plan_cache_dir === nothing ? nothing : _cstring(plan_cache_dir)
    max_workspace_size === nothing || max_workspace_size >= 0 || throw(ArgumentError(
        "max_workspace_size is $max_workspace_size; expected a byte count >= 0 (nothing: no limit)"))
    hptr = handle === nothing ? Ptr{Lib.cudnnfe_handle_t}(C_NULL) : handle
    kc = kernel_cache === nothing ? Ptr{Lib.cudnnfe_kernel_cache_t}(C_NULL) :
         Base.unsafe_convert(Ptr{Lib.cudnnfe_kernel_cache_t}, kernel_cache)
    dp = device_properties === nothing ? Ptr{Lib.cudnnfe_device_properties_t}(C_NULL) :
         Base.unsafe_convert(Ptr{Lib.cudnnfe_device_properties_t}, device_properties)
    GC.@preserve engines cache_dir kernel_cache device_properties begin
        o = _with(o; target = _code(TARGET_CODES, "target", target), num_heur_modes = nmodes,
                  heur_modes = modes, policy = _code(BUILD_POLICY_CODES, "build policy", policy),
                  max_workspace_size = max_workspace_size === nothing ? Int64(-1) : Int64(max_workspace_size),
                  exclude_numerical_notes = _note_bits(NUMERICAL_NOTE_CODES, "numerical note", exclude_numerical_notes),
                  exclude_behavior_notes = _note_bits(BEHAVIOR_NOTE_CODES, "behavior note", exclude_behavior_notes),
                  require_behavior_notes = _note_bits(BEHAVIOR_NOTE_CODES, "behavior note", require_behavior_notes),
                  num_exclude_engines = Int32(min(length(engines), typemax(Int32))),
                  exclude_engines = isempty(engines) ? Ptr{Int64}(C_NULL) : pointer(engines),
                  max_plans = Int32(max_plans), disable_plan_cache = Int32(disable_plan_cache),
                  plan_cache_dir = cache_dir === nothing ? Ptr{Cchar}(C_NULL) :
                                   convert(Ptr{Cchar}, pointer(cache_dir)),
                  override_shape_enabled = Int32(override_shape_enabled),
                  dynamic_shape_enabled = Int32(dynamic_shape_enabled),
                  kernel_cache = kc, device_properties = dp,
                  sm_count = Int32(sm_count), sm_version = Int32(sm_version),
                  verify = _verify_code(verify), verify_samples = Int32(verify_samples),
                  verify_rtol = Float64(verify_rtol))
        f(hptr, Ref(o))
    end
end

"""
    isbuilt(g) -> Bool
"""
function isbuilt(g::Graph)
    b = Ref{Int32}(0)
    check(g, Lib.cudnnfe_graph_is_built(g, b))
    return b[] != 0
end

"""
    target(g) -> Symbol

Where the built graph runs: `:gpu` or `:cpu_reference`. Throws
`CuDNNFEError(:wrong_state, ...)` before `build!`.
"""
function target(g::Graph)
    t = Ref{Lib.cudnnfe_target_t}(0)
    check(g, Lib.cudnnfe_graph_get_target(g, t))
    return get(TARGET_SYMBOLS, t[], :unknown)
end

"""
    workspace_size(g) -> Int

Bytes of device workspace the built graph needs (0 for the CPU reference).
"""
function workspace_size(g::Graph)
    s = Ref{Int64}(0)
    check(g, Lib.cudnnfe_graph_get_workspace_size(g, s))
    return Int(s[])
end

"""
    plan_name(g) -> String

Name of the engine configuration the built plan uses (`"cpu_reference"` for
the CPU target).
"""
function plan_name(g::Graph)
    p = Ref{Cstring}(C_NULL)
    check(g, Lib.cudnnfe_graph_get_plan_name(g, p))
    return _string(p[])
end

"""
    bound_tensors(g) -> Vector{Tensor}

The tensors that need a buffer at execution, in the order
`execute_ordered!` takes them. Throws `CuDNNFEError(:wrong_state, ...)`
before `build!`.
"""
function bound_tensors(g::Graph)
    n = Ref{Csize_t}(0)
    check(g, Lib.cudnnfe_graph_get_bound_uids(g, C_NULL, 0, n))
    uids = Vector{Int64}(undef, n[])
    check(g, Lib.cudnnfe_graph_get_bound_uids(g, uids, length(uids), n))
    return [Tensor(g, u) for u in view(uids, 1:Int(n[]))]
end

# ---- serialization -----------------------------------------------------------

"""
    serialize_graph(g) -> String

The graph description as versioned JSON (docs/graph-json.md), which rebuilds
on any GPU and cuDNN version.
"""
function serialize_graph(g::Graph)
    n = Ref{Csize_t}(0)
    check(g, Lib.cudnnfe_graph_serialize(g, convert(Ptr{Cchar}, C_NULL), 0, n))
    buf = Vector{UInt8}(undef, n[])
    GC.@preserve buf begin
        check(g, Lib.cudnnfe_graph_serialize(g, convert(Ptr{Cchar}, pointer(buf)), length(buf), n))
    end
    return String(resize!(buf, Int(n[])))
end

"""
    deserialize_graph(data::Union{AbstractString,AbstractVector{UInt8}}) -> Graph

A new graph loaded from `serialize_graph` output. Throws
`CuDNNFEError(:bad_serialized_data, ...)` saying what is wrong and where.
"""
function deserialize_graph(data::Union{AbstractString,AbstractVector{UInt8}})
    bytes = data isa AbstractString ? Vector{UInt8}(codeunits(String(data))) : Vector{UInt8}(data)
    g = Graph(Val(:empty))
    try
        GC.@preserve bytes begin
            check(g, Lib.cudnnfe_graph_deserialize(g, convert(Ptr{Cchar}, pointer(bytes)),
                                                   length(bytes)))
        end
    catch
        close(g)
        rethrow()
    end
    return g
end

function Base.show(io::IO, g::Graph)
    if !isopen(g)
        print(io, "CuDNNFE.Graph(closed)")
        return
    end
    print(io, "CuDNNFE.Graph(", tensor_count(g), " tensors, ", node_count(g), " nodes",
          isbuilt(g) ? ", built for $(target(g))" : "", ")")
end
