# Library information, version checks and names.

"""
    library_path() -> String

The shared library the wrappers call (`LibCuDNNFE.libcudnnfe`): from
`ENV["CUDNNFE_LIBRARY"]` or `Libdl.find_library`, see `LibCuDNNFE.find_libcudnnfe`.
"""
library_path() = Lib.libcudnnfe

const _library_checked = Ref(false)

# Called before the first object is created: a clear error when the library
# cannot be loaded or is older than the header this binding was generated from.
function _ensure_library()
    _library_checked[] && return nothing
    path = library_path()
    if Libdl.dlopen(path; throw_error = false) === nothing
        error("CuDNNFE: cannot load the cudnnfe shared library ($(repr(path))). Build it " *
              "(cmake --build build) or set ENV[\"CUDNNFE_LIBRARY\"] to the path of " *
              "libcudnnfe.so before `using CuDNNFE`.")
    end
    check_version()
    _library_checked[] = true
    return nothing
end

_version_number(v::Integer) = VersionNumber(v ÷ 10000, (v ÷ 100) % 100, v % 100)

"""
    version() -> VersionNumber

Version of the loaded cudnnfe library.
"""
version() = _version_number(Lib.cudnnfe_version())

"""
    header_version() -> VersionNumber

Version of the header this binding was generated from.
"""
header_version() = VersionNumber(Lib.CUDNNFE_VERSION_MAJOR, Lib.CUDNNFE_VERSION_MINOR,
                                 Lib.CUDNNFE_VERSION_PATCH)

"""
    check_version()

Throws `CuDNNFEError(:not_supported, ...)` unless the loaded library is at
least `header_version()` with the same ABI major (`cudnnfe_check_version`).
"""
function check_version()
    status = Lib.cudnnfe_check_version(UInt32(Lib.CUDNNFE_VERSION), UInt32(Lib.CUDNNFE_ABI_VERSION))
    status == OK && return nothing
    throw(CuDNNFEError(status, "the cudnnfe library at $(library_path()) is version $(version()); " *
                               "this binding was generated from header $(header_version()) " *
                               "(ABI $(Lib.CUDNNFE_ABI_VERSION)) and needs at least that, " *
                               "with the same ABI major"))
end

"""
    cudnn_version() -> Int

Version of the cuDNN library cudnnfe loads (e.g. 91900 for 9.19.0), loading
it if needed. Throws `CuDNNFEError(:cudnn_unavailable, ...)`, naming the paths
tried, when it cannot be loaded.
"""
function cudnn_version()
    v = Ref{Int64}(0)
    check(Lib.cudnnfe_cudnn_version(v))
    return Int(v[])
end

"""
    device_count() -> Int

Number of usable CUDA devices; 0 when the CUDA runtime or driver is missing.
"""
function device_count()
    n = Ref{Int32}(0)
    check(Lib.cudnnfe_device_count(n))
    return Int(n[])
end

"""
    functional() -> Bool

Whether graphs can be built for the GPU here: a CUDA device is usable and
cuDNN loads.
"""
function functional()
    device_count() > 0 || return false
    try
        cudnn_version()
        return true
    catch e
        e isa CuDNNFEError || rethrow()
        return false
    end
end

"""
    status_name(status) -> String

Static name of a status (`"CUDNNFE_STATUS_INVALID_GRAPH"`).
"""
status_name(status::Integer) = _string(Lib.cudnnfe_status_name(Int32(status)))

"""
    dtype_name(dtype) -> String

Static name of a data type (`"BFLOAT16"`); `"UNKNOWN"` for other values.
"""
dtype_name(dtype) = _string(Lib.cudnnfe_dtype_name(dtype_code(dtype)))

"""
    dtype_size(dtype) -> Int

Size in bytes of one element; 0 for NOT_SET or unknown.
"""
dtype_size(dtype) = Int(Lib.cudnnfe_dtype_size(dtype_code(dtype)))

"""
    last_error() -> String

Message of the last failure on the calling OS thread (`""` if none). A Julia
task can move between OS threads at yield points, so prefer the message of a
`CuDNNFEError`, which is read from the object the failing call acted on.
"""
last_error() = _string(Lib.cudnnfe_last_error())

const _ORIGINS = Dict(Lib.CUDNNFE_LIBRARY_ORIGIN_NOT_LOADED => :not_loaded,
                      Lib.CUDNNFE_LIBRARY_ORIGIN_ENVIRONMENT => :environment,
                      Lib.CUDNNFE_LIBRARY_ORIGIN_ALREADY_LOADED => :already_loaded,
                      Lib.CUDNNFE_LIBRARY_ORIGIN_SEARCH_DIR => :search_dir,
                      Lib.CUDNNFE_LIBRARY_ORIGIN_SYSTEM => :system)

"""
    library_info() -> NamedTuple

Which files cudnnfe loaded and why, loading cuDNN and the CUDA runtime if not
yet tried (a missing library is reported, not thrown). Fields: `cudnnfe_path`,
then for `cudnn` and `cudart` each a NamedTuple `(path, version, origin,
reason)`; `origin` is `:environment`, `:already_loaded`, `:search_dir`,
`:system` or `:not_loaded` (docs/loading.md has the search order).
"""
function library_info()
    _ensure_library()
    info = Ref(Lib.cudnnfe_library_info_t(0, C_NULL, C_NULL, 0, 0, C_NULL, C_NULL, 0, 0, C_NULL))
    Lib.cudnnfe_library_info_init_sized(info, sizeof(Lib.cudnnfe_library_info_t))
    check(Lib.cudnnfe_library_info(info))
    i = info[]
    # The struct's strings are Ptr{Cchar} fields, owned by the library.
    text(p::Ptr{Cchar}) = p == C_NULL ? "" : unsafe_string(p)
    entry(path, version, origin, reason) =
        (path = text(path), version = Int(version),
         origin = get(_ORIGINS, origin, Symbol(origin)), reason = text(reason))
    return (cudnnfe_path = text(i.cudnnfe_path),
            cudnn = entry(i.cudnn_path, i.cudnn_version, i.cudnn_origin, i.cudnn_reason),
            cudart = entry(i.cudart_path, i.cudart_version, i.cudart_origin, i.cudart_reason))
end

"""
    add_library_search_dir(library::Symbol, directory::AbstractString)

Adds a directory to search for `library` (`:cudnn` or `:cudart`) after the
explicit variable and the copy already loaded in the process. Throws
`CuDNNFEError(:wrong_state, ...)` once that library has been looked for.
"""
function add_library_search_dir(library::Symbol, directory::AbstractString)
    code = library === :cudnn ? Lib.CUDNNFE_LIBRARY_CUDNN :
           library === :cudart ? Lib.CUDNNFE_LIBRARY_CUDART :
           throw(ArgumentError("library must be :cudnn or :cudart, not $(repr(library))"))
    check(Lib.cudnnfe_library_add_search_dir(code, String(directory)))
    return nothing
end

const _LOG_LEVELS = Dict(:off => Lib.CUDNNFE_LOG_LEVEL_OFF, :info => Lib.CUDNNFE_LOG_LEVEL_INFO,
                         :debug => Lib.CUDNNFE_LOG_LEVEL_DEBUG)
const _log_function = Ref{Any}(nothing)

# The one C entry point the library calls; it forwards to the Julia function
# set last. Exceptions are printed, never thrown into C.
function _log_trampoline(level::Int32, message::Cstring, user_data::Ptr{Cvoid})::Cvoid
    f = _log_function[]
    f === nothing && return nothing
    try
        f(level == Lib.CUDNNFE_LOG_LEVEL_DEBUG ? :debug : :info, unsafe_string(message))
    catch e
        @error "CuDNNFE log callback failed" exception = e
    end
    return nothing
end

"""
    set_log_callback(f; level = :info)

Sends the library's log lines at `level` (`:off`, `:info`, `:debug`) and below
to `f(level::Symbol, line::String)`; `f === nothing` sends them to standard
error. Overrides `ENV["CUDNNFE_LOG"]`. `f` may be called from the thread of
any cudnnfe call, one call at a time.
"""
function set_log_callback(f; level::Symbol = :info)
    haskey(_LOG_LEVELS, level) ||
        throw(ArgumentError("level must be :off, :info or :debug, not $(repr(level))"))
    _ensure_library()
    _log_function[] = f
    c_callback = f === nothing ? C_NULL :
                 @cfunction(_log_trampoline, Cvoid, (Int32, Cstring, Ptr{Cvoid}))
    check(Lib.cudnnfe_set_log_callback(c_callback, C_NULL, _LOG_LEVELS[level]))
    return nothing
end
