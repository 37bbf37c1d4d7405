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
