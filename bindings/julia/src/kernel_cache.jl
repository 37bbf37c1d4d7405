# The kernel cache for dynamic shapes (cudnnfe_kernel_cache_t): GPU builds
# of graphs of one topology and different shapes share compiled kernels
# through it (`build!(...; kernel_cache)`). Not the plan caches (plans.jl).

"""
    KernelCache()
    KernelCache(f)

An empty kernel cache (cudnn-frontend's `create_kernel_cache`), safe to share
between tasks. Give it to `build!(g; kernel_cache = kc)`; plans built with it
keep what they need after it is closed. Freed by `close(kc)` or its
finalizer; the do-block form closes it when `f` returns.
"""
mutable struct KernelCache
    ptr::Ptr{Lib.cudnnfe_kernel_cache_t}

    function KernelCache()
        _ensure_library()
        out = Ref{Ptr{Lib.cudnnfe_kernel_cache_t}}(C_NULL)
        check(Lib.cudnnfe_kernel_cache_create(out))
        return finalizer(_destroy!, new(out[]))
    end
end

function KernelCache(f::Function)
    kc = KernelCache()
    try
        return f(kc)
    finally
        close(kc)
    end
end

function _destroy!(kc::KernelCache)
    p = kc.ptr
    kc.ptr = C_NULL
    return p == C_NULL ? OK : Lib.cudnnfe_kernel_cache_destroy(p)
end

"""
    close(kc::KernelCache)

Frees the cache now (idempotent). Using it afterwards throws an `ArgumentError`.
"""
function Base.close(kc::KernelCache)
    check(_destroy!(kc))
    return nothing
end

Base.isopen(kc::KernelCache) = kc.ptr != C_NULL

# ccall converts a KernelCache argument with this, keeping it alive for the call.
function Base.unsafe_convert(::Type{Ptr{Lib.cudnnfe_kernel_cache_t}}, kc::KernelCache)
    kc.ptr == C_NULL && throw(ArgumentError("this CuDNNFE.KernelCache is closed"))
    return kc.ptr
end

"""
    serialize_kernel_cache(kc) -> String

cuDNN's JSON of the cache. Throws `CuDNNFEError(:wrong_state, ...)` while it
is empty (no GPU build used it and nothing was loaded), `:not_supported`
where the loaded cuDNN cannot serialize it.
"""
function serialize_kernel_cache(kc::KernelCache)
    n = Ref{Csize_t}(0)
    check(Lib.cudnnfe_kernel_cache_serialize(kc, convert(Ptr{Cchar}, C_NULL), 0, n))
    buf = Vector{UInt8}(undef, n[])
    GC.@preserve buf begin
        check(Lib.cudnnfe_kernel_cache_serialize(kc, convert(Ptr{Cchar}, pointer(buf)), length(buf), n))
    end
    return String(resize!(buf, Int(n[])))
end

"""
    deserialize_kernel_cache!(kc, data::Union{AbstractString,AbstractVector{UInt8}}) -> kc

Loads what `serialize_kernel_cache` wrote into the empty cache `kc`. Throws
`CuDNNFEError(:wrong_state, ...)` when it is not empty,
`:bad_serialized_data` for text that is not JSON. cuDNN reads it when a GPU
build first uses the cache, and refuses it there if another cuDNN or GPU
wrote it.
"""
function deserialize_kernel_cache!(kc::KernelCache, data::Union{AbstractString,AbstractVector{UInt8}})
    bytes = data isa AbstractString ? Vector{UInt8}(codeunits(String(data))) : Vector{UInt8}(data)
    GC.@preserve bytes begin
        check(Lib.cudnnfe_kernel_cache_deserialize(kc, convert(Ptr{Cchar}, pointer(bytes)),
                                                   length(bytes)))
    end
    return kc
end

function Base.show(io::IO, kc::KernelCache)
    print(io, "CuDNNFE.KernelCache(", isopen(kc) ? "open" : "closed", ")")
end
