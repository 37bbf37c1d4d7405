# Data types: Julia element types and Symbols <-> cudnnfe_dtype_t.

# :not_set, :float, :half, :bfloat16, :fp8_e4m3, :fp8_e5m2, :int8, :int32,
# :int64, :boolean, :uint8, :double (from the generated constants).
const DTYPE_CODES = _prefixed_constants("CUDNNFE_DTYPE_")
const DTYPE_SYMBOLS = Dict{Int32,Symbol}(v => k for (k, v) in DTYPE_CODES)

# Julia element types with an exact cudnnfe counterpart.
const JULIA_DTYPES = Dict{DataType,Int32}(
    Float32 => Lib.CUDNNFE_DTYPE_FLOAT,
    Float16 => Lib.CUDNNFE_DTYPE_HALF,
    Float64 => Lib.CUDNNFE_DTYPE_DOUBLE,
    Int8 => Lib.CUDNNFE_DTYPE_INT8,
    Int32 => Lib.CUDNNFE_DTYPE_INT32,
    Int64 => Lib.CUDNNFE_DTYPE_INT64,
    UInt8 => Lib.CUDNNFE_DTYPE_UINT8,
    Bool => Lib.CUDNNFE_DTYPE_BOOLEAN,  # one byte, 0 or 1, as in C
)
const DTYPE_JULIA = Dict{Int32,DataType}(v => k for (k, v) in JULIA_DTYPES)

"""
    dtype_code(x) -> Int32

The `cudnnfe_dtype_t` for `x`: a Julia type (`Float32`, `Float16`,
`Float64`, `Int8`, `Int32`, `Int64`, `UInt8`, `Bool`, and any 2-byte type
named `BFloat16`, e.g. from BFloat16s.jl), a Symbol (`:float`, `:half`,
`:bfloat16`, `:fp8_e4m3`, `:fp8_e5m2`, ...), an integer code, or `nothing`
(NOT_SET: resolved from the graph's defaults at validation).
"""
dtype_code(::Nothing) = Lib.CUDNNFE_DTYPE_NOT_SET
dtype_code(x::Integer) = Int32(x)
function dtype_code(x::Symbol)
    code = get(DTYPE_CODES, x, nothing)
    code === nothing && throw(ArgumentError(
        "unknown data type :$x; expected one of $(join(sort!(collect(keys(DTYPE_CODES))), ", "))"))
    return code
end
function dtype_code(T::Type)
    code = get(JULIA_DTYPES, T, nothing)
    code === nothing || return code
    if T isa DataType && nameof(T) === :BFloat16 && isbitstype(T) && sizeof(T) == 2
        return Lib.CUDNNFE_DTYPE_BFLOAT16
    end
    throw(ArgumentError("no cudnnfe data type for Julia type $T; pass a Symbol such as :bfloat16"))
end

"""
    dtype_symbol(code) -> Symbol

`:float`, `:half`, ... for a `cudnnfe_dtype_t`; `:unknown` for other values.
"""
dtype_symbol(code::Integer) = get(DTYPE_SYMBOLS, Int32(code), :unknown)

"""
    julia_type(dtype) -> Union{DataType,Nothing}

The Julia element type of a data type (`:float` -> `Float32`), `nothing`
for those without one in Base (BFLOAT16, FP8) and for NOT_SET.
"""
julia_type(dtype) = get(DTYPE_JULIA, dtype_code(dtype), nothing)
