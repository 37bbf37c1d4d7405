# Device memory through CUDA.jl: `CuArray`s are bound directly (their
# element type, size and strides are checked like host arrays; their
# `CuPtr` is passed) and the stream is CUDA.jl's task-local `CuStream`.
import CUDA

gpu_tests((upload = A -> CUDA.CuArray(A),
           zeros = (T, dims) -> CUDA.zeros(T, dims...),
           download = d -> Array(d),
           free = d -> CUDA.unsafe_free!(d),
           binding = d -> d,              # the CuArray itself
           address = d -> pointer(d),     # its CuPtr: a raw address
           workspace = n -> CUDA.CuArray{UInt8}(undef, max(Int(n), 1)),
           stream = () -> CUDA.stream(),
           sync = () -> CUDA.synchronize()))
