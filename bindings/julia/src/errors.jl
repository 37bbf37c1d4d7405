# Status codes as Julia exceptions.

# Symbol => value for every constant of LibCuDNNFE whose name starts with
# `prefix` (CUDNNFE_DTYPE_ -> :float, :half, ...). Built from the generated
# constants, so a value added to the header is picked up by regenerating.
function _prefixed_constants(prefix::String)
    table = Dict{Symbol,Int32}()
    for n in names(Lib; all = true)
        s = String(n)
        if startswith(s, prefix)
            table[Symbol(lowercase(s[(length(prefix) + 1):end]))] = Int32(getfield(Lib, n))
        end
    end
    return table
end

const STATUS_CODES = _prefixed_constants("CUDNNFE_STATUS_")
const STATUS_KINDS = Dict{Int32,Symbol}(v => k for (k, v) in STATUS_CODES)

"""
    status_kind(status::Integer) -> Symbol

The kind of a `cudnnfe_status_t`: `:ok`, `:invalid_argument`,
`:invalid_graph`, `:not_supported`, `:cudnn_unavailable`, `:cuda_error`,
`:cudnn_error`, `:out_of_memory`, `:bad_serialized_data`, `:wrong_state`,
`:internal`, `:verify_failed` (verify mode, since 0.4); `:unknown` for a
value this binding does not know (a newer library).
"""
status_kind(status::Integer) = get(STATUS_KINDS, Int32(status), :unknown)

"""
    CuDNNFEError(kind::Symbol, status::Int32, message::String)

Thrown for every failing cudnnfe call. `kind` is `status_kind(status)`,
`status` the C status code, `message` the library's full message (naming the
node, tensor and rule), read from the object the call acted on
(`cudnnfe_graph_last_error` for graph calls, `cudnnfe_handle_last_error` for
execution), so it is right whatever thread the task runs on.
"""
struct CuDNNFEError <: Exception
    kind::Symbol
    status::Int32
    message::String
end

CuDNNFEError(status::Integer, message::AbstractString) =
    CuDNNFEError(status_kind(status), Int32(status), String(message))

function Base.showerror(io::IO, e::CuDNNFEError)
    print(io, "CuDNNFEError(:", e.kind, ", status ", e.status, "): ", e.message)
end

const OK = Lib.CUDNNFE_STATUS_OK

_string(p::Cstring) = p == C_NULL ? "" : unsafe_string(p)

# A call that acted on no object: its message is in the calling OS thread's
# slot. It is read right after the failing call, with no yield point in
# between, so the task cannot have moved to another thread.
@inline function check(status::Integer)
    status == OK && return nothing
    _throw_thread_error(status)
end

@noinline _throw_thread_error(status) =
    throw(CuDNNFEError(status, _string(Lib.cudnnfe_last_error())))

# A C string argument: `nothing` is NULL, anything else a String without NULs.
_cstring(::Nothing) = C_NULL
function _cstring(s::Union{AbstractString,Symbol})
    str = String(s)
    occursin('\0', str) && throw(ArgumentError("names may not contain NUL characters: $(repr(str))"))
    return str
end
