# Execution contexts.

"""
    Handle(device::Integer = -1)
    Handle(f, device = -1)

An execution context: one thread's cuDNN handle for CUDA device `device`
(-1: the device current when it first touches the GPU), created lazily, plus
the message of its last failure. Needed for `execute!` on any target (the CPU
reference included) and optionally for `build!`.

Freed by `close(h)` or, failing that, by its finalizer. The do-block form
closes it when `f` returns. A handle is meant for one task at a time: give
each concurrently executing task its own handle (and workspace).
"""
mutable struct Handle
    ptr::Ptr{Lib.cudnnfe_handle_t}
    device::Int32

    function Handle(device::Integer = -1)
        _ensure_library()
        out = Ref{Ptr{Lib.cudnnfe_handle_t}}(C_NULL)
        check(Lib.cudnnfe_handle_create(out, Int32(device)))
        return finalizer(_destroy!, new(out[], Int32(device)))
    end
end

function Handle(f::Function, device::Integer = -1)
    h = Handle(device)
    try
        return f(h)
    finally
        close(h)
    end
end

function _destroy!(h::Handle)
    p = h.ptr
    h.ptr = C_NULL
    return p == C_NULL ? OK : Lib.cudnnfe_handle_destroy(p)
end

"""
    close(h::Handle)

Frees the handle now (idempotent). Using it afterwards throws an `ArgumentError`.
"""
function Base.close(h::Handle)
    check(_destroy!(h))
    return nothing
end

Base.isopen(h::Handle) = h.ptr != C_NULL

# ccall converts a Handle argument with this, keeping `h` alive (and so not
# finalized) for the duration of the call.
function Base.unsafe_convert(::Type{Ptr{Lib.cudnnfe_handle_t}}, h::Handle)
    h.ptr == C_NULL && throw(ArgumentError("this CuDNNFE.Handle is closed"))
    return h.ptr
end

# Messages of execute calls are stored on the handle.
@inline function check(h::Handle, status::Integer)
    status == OK && return nothing
    _throw_handle_error(h, status)
end

@noinline function _throw_handle_error(h::Handle, status)
    msg = h.ptr == C_NULL ? _string(Lib.cudnnfe_last_error()) :
          _string(Lib.cudnnfe_handle_last_error(h))
    throw(CuDNNFEError(status, msg))
end

function Base.show(io::IO, h::Handle)
    print(io, "CuDNNFE.Handle(device ", h.device, isopen(h) ? "" : ", closed", ")")
end
