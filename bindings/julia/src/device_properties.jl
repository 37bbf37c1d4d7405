# Device properties for building without a GPU (cudnnfe_device_properties_t,
# cuDNN 9.8 or later): one GPU as cuDNN describes it, made where the GPU is
# and loaded from its JSON anywhere with cuDNN (`build!(...;
# device_properties)`). Not the plan blobs (plans.jl).

"""
    DeviceProperties(device::Integer)
    DeviceProperties(json::Union{AbstractString,AbstractVector{UInt8}})

One GPU's properties as cuDNN sees them (cudnn-frontend's
`create_device_properties`): of CUDA device `device` (needs cuDNN and that
GPU), or loaded from what `serialize_device_properties` wrote (needs cuDNN,
not a GPU). Give them to `build!(g; device_properties = p)` to build that
GPU's plan without using one; the built graph cannot execute: write its plan
with `serialize_plan` and load it with `deserialize_plan` on such a GPU
(docs/plans.md). Throws `CuDNNFEError(:bad_serialized_data, ...)` for JSON
that is not an object or that cuDNN refuses (the message says why),
`:cudnn_unavailable` or `:not_supported` where cuDNN is absent or older
than 9.8. Immutable; freed by `close(p)` or its finalizer.
"""
mutable struct DeviceProperties
    ptr::Ptr{Lib.cudnnfe_device_properties_t}

    function DeviceProperties(device::Integer)
        _ensure_library()
        out = Ref{Ptr{Lib.cudnnfe_device_properties_t}}(C_NULL)
        check(Lib.cudnnfe_device_properties_create(out, Int32(device)))
        return finalizer(_destroy!, new(out[]))
    end

    function DeviceProperties(json::Union{AbstractString,AbstractVector{UInt8}})
        _ensure_library()
        bytes = json isa AbstractString ? Vector{UInt8}(codeunits(String(json))) : Vector{UInt8}(json)
        out = Ref{Ptr{Lib.cudnnfe_device_properties_t}}(C_NULL)
        GC.@preserve bytes begin
            check(Lib.cudnnfe_device_properties_create_from_json(
                out, convert(Ptr{Cchar}, pointer(bytes)), length(bytes)))
        end
        return finalizer(_destroy!, new(out[]))
    end
end

function _destroy!(p::DeviceProperties)
    ptr = p.ptr
    p.ptr = C_NULL
    return ptr == C_NULL ? OK : Lib.cudnnfe_device_properties_destroy(ptr)
end

"""
    close(p::DeviceProperties)

Frees the properties now (idempotent); graphs built with them are not
affected. Using them afterwards throws an `ArgumentError`.
"""
function Base.close(p::DeviceProperties)
    check(_destroy!(p))
    return nothing
end

Base.isopen(p::DeviceProperties) = p.ptr != C_NULL

# ccall converts a DeviceProperties argument with this, keeping it alive for the call.
function Base.unsafe_convert(::Type{Ptr{Lib.cudnnfe_device_properties_t}}, p::DeviceProperties)
    p.ptr == C_NULL && throw(ArgumentError("this CuDNNFE.DeviceProperties is closed"))
    return p.ptr
end

"""
    serialize_device_properties(p) -> String

cuDNN's JSON of the properties, which `DeviceProperties(json)` takes back.
"""
function serialize_device_properties(p::DeviceProperties)
    n = Ref{Csize_t}(0)
    check(Lib.cudnnfe_device_properties_serialize(p, convert(Ptr{Cchar}, C_NULL), 0, n))
    buf = Vector{UInt8}(undef, n[])
    GC.@preserve buf begin
        check(Lib.cudnnfe_device_properties_serialize(p, convert(Ptr{Cchar}, pointer(buf)),
                                                      length(buf), n))
    end
    return String(resize!(buf, Int(n[])))
end

function Base.show(io::IO, p::DeviceProperties)
    print(io, "CuDNNFE.DeviceProperties(", isopen(p) ? "open" : "closed", ")")
end
