# Device memory through the CUDA runtime, called directly: for machines with
# a GPU but without CUDA.jl. Buffers are bound by raw address (no checks).
const Libdl = CuDNNFE.Libdl  # the package's own import: no extra test dependency

const CUDART = let path = get(ENV, "CUDNNFE_CUDART_LIBRARY", "")
    isempty(path) ? Libdl.find_library(["libcudart", "libcudart.so.13", "libcudart.so.12"]) : path
end

struct DevBuf{T,N}
    ptr::Ptr{Cvoid}
    dims::NTuple{N,Int}
end

_nbytes(::Type{T}, dims) where {T} = max(sizeof(T) * prod(dims), 1)

function _cuda_check(status::Cint, what::String)
    status == 0 || error("$what failed with cudaError $status")
    return nothing
end

function dev_alloc(::Type{T}, dims) where {T}
    p = Ref{Ptr{Cvoid}}(C_NULL)
    _cuda_check(ccall((:cudaMalloc, CUDART), Cint, (Ptr{Ptr{Cvoid}}, Csize_t), p,
                      _nbytes(T, dims)), "cudaMalloc")
    return DevBuf{T,length(dims)}(p[], Tuple(Int.(dims)))
end

function dev_upload(A::Array{T}) where {T}
    d = dev_alloc(T, size(A))
    _cuda_check(ccall((:cudaMemcpy, CUDART), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Csize_t, Cint), d.ptr,
                      A, sizeof(A), 1), "cudaMemcpy (host to device)")
    return d
end

function dev_zeros(::Type{T}, dims) where {T}
    d = dev_alloc(T, dims)
    _cuda_check(ccall((:cudaMemset, CUDART), Cint, (Ptr{Cvoid}, Cint, Csize_t), d.ptr, 0,
                      _nbytes(T, dims)), "cudaMemset")
    return d
end

function dev_download(d::DevBuf{T}) where {T}
    A = Array{T}(undef, d.dims)
    dev_sync()
    _cuda_check(ccall((:cudaMemcpy, CUDART), Cint, (Ptr{Cvoid}, Ptr{Cvoid}, Csize_t, Cint), A,
                      d.ptr, sizeof(A), 2), "cudaMemcpy (device to host)")
    return A
end

dev_free(d::DevBuf) = _cuda_check(ccall((:cudaFree, CUDART), Cint, (Ptr{Cvoid},), d.ptr), "cudaFree")
dev_sync() = _cuda_check(ccall((:cudaDeviceSynchronize, CUDART), Cint, ()), "cudaDeviceSynchronize")

if isempty(CUDART)
    @info "CuDNNFE: skipping GPU tests: libcudart not found (set CUDNNFE_CUDART_LIBRARY)"
else
    gpu_tests((upload = dev_upload, zeros = dev_zeros, download = dev_download, free = dev_free,
               binding = d -> d.ptr,  # a raw address: no checks possible
               address = d -> d.ptr,
               workspace = n -> dev_alloc(UInt8, (max(Int(n), 1),)),
               stream = () -> nothing,  # the default stream
               sync = dev_sync))
end
