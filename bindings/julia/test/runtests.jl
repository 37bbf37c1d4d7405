# Tests of CuDNNFE.jl: the whole API on the CPU reference, numerics included,
# and on the GPU when one is usable (CUDA.jl if it is installed, else the CUDA
# runtime called directly). The library is found as the package finds it:
# ENV["CUDNNFE_LIBRARY"], or libcudnnfe on the search path or in build*/.
using CuDNNFE
using CuDNNFE: LibCuDNNFE, version, header_version, check_version, cudnn_version, device_count,
               functional, status_name, dtype_name, dtype_size, last_error, dtype_code,
               julia_type, library_path
using LinearAlgebra: dot
using Random: seed!
using Test: @test, @testset, @test_throws

include("reference.jl")
include("gpu_common.jl")  # defines gpu_tests(dev); run at the end when a GPU is usable

seed!(20240601)

const CPU = :cpu_reference
const RTOL = 1e-4
const ATOL = 1e-5

approx(a, b; rtol = RTOL, atol = ATOL) = isapprox(Float64.(a), Float64.(b); rtol = rtol, atol = atol)

# Builds `g` for `target`, binds `inputs` (tensor => array pairs) and a fresh
# array for each of `outputs`, executes, and returns the output arrays.
function run_graph(g::Graph, inputs, outputs::Vector{Tensor}; target = CPU)
    build!(g; target = target)
    @test isbuilt(g)
    @test CuDNNFE.target(g) === target
    outs = Any[allocate(t) for t in outputs]
    Handle() do h
        bindings = Pair[inputs...]
        for (t, a) in zip(outputs, outs)
            push!(bindings, t => a)
        end
        execute!(g, h, bindings)
    end
    return outs
end

# One pointwise op on host arrays.
function pointwise_cpu(mode, xs::AbstractArray...; kwargs...)
    return Graph() do g
        ts = [add_tensor!(g, x) for x in xs]
        y = set_output!(pointwise!(g, mode, ts...; kwargs...))
        only(run_graph(g, [t => x for (t, x) in zip(ts, xs)], [y]))
    end
end

@testset "CuDNNFE.jl" begin

@testset "library" begin
    @test !isempty(library_path())
    @test version() >= header_version()
    @test check_version() === nothing
    @test header_version() == VersionNumber(LibCuDNNFE.CUDNNFE_VERSION_MAJOR,
                                            LibCuDNNFE.CUDNNFE_VERSION_MINOR,
                                            LibCuDNNFE.CUDNNFE_VERSION_PATCH)
    @test status_name(LibCuDNNFE.CUDNNFE_STATUS_OK) == "CUDNNFE_STATUS_OK"
    @test status_name(LibCuDNNFE.CUDNNFE_STATUS_INVALID_GRAPH) == "CUDNNFE_STATUS_INVALID_GRAPH"
    # Every status kind is the C name in lower case.
    for (kind, code) in CuDNNFE.STATUS_CODES
        @test status_kind(code) === kind
        @test status_name(code) == "CUDNNFE_STATUS_" * uppercase(String(kind))
    end
    @test status_kind(12345) === :unknown
    @test dtype_name(:bfloat16) == "BFLOAT16"
    @test dtype_name(Float32) == "FLOAT"
    @test dtype_size(Float16) == 2
    @test dtype_size(:fp8_e4m3) == 1
    @test dtype_size(Float64) == 8
    @test dtype_size(nothing) == 0
    @test dtype_code(Bool) == LibCuDNNFE.CUDNNFE_DTYPE_BOOLEAN
    @test julia_type(:int32) === Int32
    @test julia_type(:bfloat16) === nothing
    @test_throws ArgumentError dtype_code(:no_such_type)
    @test_throws ArgumentError dtype_code(ComplexF32)
    n = device_count()
    @test n >= 0
    try
        v = cudnn_version()
        @test v >= 90000
    catch e
        @test e isa CuDNNFEError
        @test e.kind === :cudnn_unavailable
        @test !isempty(e.message)
    end
    @test last_error() isa String
end

@testset "generated layer" begin
    # Options structs: cudnnfe_X_init is a C macro; the generated layer has
    # cudnnfe_X_init_sized(ptr, struct_size), which writes struct_size bytes
    # and stores struct_size. Told Julia's sizeof of the generated struct, it
    # fills it; told a smaller (older) size, it leaves the rest alone.
    inits = [n for n in names(LibCuDNNFE) if endswith(String(n), "_options_init_sized")]
    @test length(inits) >= 14
    @test !any(n -> endswith(String(n), "_options_init"), names(LibCuDNNFE))
    for n in inits
        T = getfield(LibCuDNNFE, Symbol(replace(String(n), "_init_sized" => "_t")))
        @test isbitstype(T)
        r = Ref{T}()
        getfield(LibCuDNNFE, n)(r, sizeof(T))
        @test Int(r[].struct_size) == sizeof(T)
    end
    sentinel = fill(0xAB, sizeof(LibCuDNNFE.cudnnfe_sdpa_options_t))
    old_size = fieldoffset(LibCuDNNFE.cudnnfe_sdpa_options_t,
                           Base.fieldindex(LibCuDNNFE.cudnnfe_sdpa_options_t, :attn_scale_tensor))
    GC.@preserve sentinel begin
        p = Ptr{LibCuDNNFE.cudnnfe_sdpa_options_t}(pointer(sentinel))
        LibCuDNNFE.cudnnfe_sdpa_options_init_sized(p, old_size)
    end
    @test all(==(0xAB), sentinel[(old_size + 1):end])
    @test reinterpret(UInt64, sentinel[1:8])[1] == old_size
    o = CuDNNFE._default_options(LibCuDNNFE.cudnnfe_conv_options_t,
                                 LibCuDNNFE.cudnnfe_conv_options_init_sized)
    @test o.stride == (1, 1, 1)
    @test o.dilation == (1, 1, 1)
    @test o.pre_padding == (0, 0, 0)
    @test o.mode == LibCuDNNFE.CUDNNFE_CONV_MODE_CROSS_CORRELATION
    b = CuDNNFE._default_options(LibCuDNNFE.cudnnfe_build_options_t,
                                 LibCuDNNFE.cudnnfe_build_options_init_sized)
    @test b.target == LibCuDNNFE.CUDNNFE_TARGET_AUTO
    @test b.num_heur_modes == 2
    @test b.heur_modes[1:2] == (LibCuDNNFE.CUDNNFE_HEUR_MODE_A, LibCuDNNFE.CUDNNFE_HEUR_MODE_FALLBACK)
    @test sizeof(LibCuDNNFE.cudnnfe_binding_t) == 16
    @test fieldoffset(LibCuDNNFE.cudnnfe_binding_t, 2) == 8

    # The raw layer returns status codes and never throws.
    out = Ref{Ptr{LibCuDNNFE.cudnnfe_graph_t}}(C_NULL)
    @test LibCuDNNFE.cudnnfe_graph_create(out) == LibCuDNNFE.CUDNNFE_STATUS_OK
    @test out[] != C_NULL
    @test LibCuDNNFE.cudnnfe_graph_validate(out[]) == LibCuDNNFE.CUDNNFE_STATUS_INVALID_GRAPH
    @test occursin("no operations", unsafe_string(LibCuDNNFE.cudnnfe_graph_last_error(out[])))
    @test LibCuDNNFE.cudnnfe_graph_destroy(out[]) == LibCuDNNFE.CUDNNFE_STATUS_OK
    @test LibCuDNNFE.cudnnfe_graph_destroy(C_NULL) == LibCuDNNFE.CUDNNFE_STATUS_OK
    @test LibCuDNNFE.cudnnfe_graph_create(C_NULL) == LibCuDNNFE.CUDNNFE_STATUS_INVALID_ARGUMENT
    @test !isempty(unsafe_string(LibCuDNNFE.cudnnfe_last_error()))
end

@testset "errors carry the kind and the full message" begin
    Graph(name = "errs") do g
        e = try
            validate!(g)
            nothing
        catch err
            err
        end
        @test e isa CuDNNFEError
        @test e.kind === :invalid_graph
        @test e.status == LibCuDNNFE.CUDNNFE_STATUS_INVALID_GRAPH
        @test occursin("errs", e.message)
        @test occursin("no operations", e.message)
        @test occursin("invalid_graph", sprint(showerror, e))

        e = try
            add_tensor!(g, Float32, (4, 0, 2); name = "bad")
            nothing
        catch err
            err
        end
        @test e isa CuDNNFEError
        @test e.kind === :invalid_argument
        @test occursin("bad", e.message)
        @test occursin("positive", e.message)

        # The message names the node, the tensor and the rule (here in C order).
        a = add_tensor!(g, Float32, (3, 4); name = "a")
        b = add_tensor!(g, Float32, (5, 6); name = "b")
        e = try
            matmul!(g, a, b; name = "mm")
            nothing
        catch err
            err
        end
        @test e isa CuDNNFEError
        @test e.kind === :invalid_graph
        @test occursin("mm", e.message)
        @test occursin("K", e.message)

        @test_throws CuDNNFEError find_tensor(g, "missing")
        @test_throws ArgumentError add_tensor!(g, Float32, (2,); name = "nul\0name")
        @test_throws CuDNNFEError workspace_size(g)  # not built: wrong_state
        e = try
            target(g)
            nothing
        catch err
            err
        end
        @test e isa CuDNNFEError && e.kind === :wrong_state
    end

    # Messages are read from the object, so a task on another thread sees its own.
    g1 = Graph(name = "first")
    g2 = Graph(name = "second")
    t1 = Threads.@spawn (try validate!(g1) catch err; err end)
    t2 = Threads.@spawn (try validate!(g2) catch err; err end)
    e1, e2 = fetch(t1), fetch(t2)
    @test e1 isa CuDNNFEError && occursin("first", e1.message)
    @test e2 isa CuDNNFEError && occursin("second", e2.message)
    close(g1)
    close(g2)

    e = try
        deserialize_graph("{ this is not a graph")
        nothing
    catch err
        err
    end
    @test e isa CuDNNFEError
    @test e.kind === :bad_serialized_data
    @test !isempty(e.message)
end

@testset "lifetime: close, finalizers, do-blocks" begin
    g = Graph()
    @test isopen(g)
    close(g)
    @test !isopen(g)
    close(g)  # idempotent
    @test_throws ArgumentError tensor_count(g)
    @test occursin("closed", sprint(show, g))

    h = Handle()
    @test isopen(h)
    close(h)
    close(h)
    @test !isopen(h)
    @test occursin("closed", sprint(show, h))

    r = Graph(g -> (add_tensor!(g, Float32, (2,)); tensor_count(g)))
    @test r == 1
    @test Handle(h -> isopen(h))

    # Unreachable graphs and handles are freed by their finalizers.
    for _ in 1:200
        g = Graph()
        add_tensor!(g, Float32, (8, 8))
        Handle()
    end
    GC.gc(true)
    GC.gc(true)
    @test true
end

@testset "tensors: Julia order, explicit strides" begin
    Graph(name = "tensors") do g
        t = add_tensor!(g, Float32, (4, 3, 2); name = "x")
        @test size(t) == (4, 3, 2)
        @test strides(t) == (1, 4, 12)        # column-major, like Array
        @test cdims(t) == [2, 3, 4]           # C order: the reverse
        @test cstrides(t) == [12, 4, 1]
        @test ndims(t) == 3
        @test size(t, 2) == 3
        @test stride(t, 3) == 12
        @test dtype(t) === :float
        @test eltype(t) === Float32
        @test tensor_name(t) == "x"
        @test uid(t) > 0
        @test isbound(t)
        @test find_tensor(g, "x") == t
        @test strides(t) == strides(zeros(Float32, 4, 3, 2))

        A = rand(Float64, 5, 6)
        ta = add_tensor!(g, A; name = "A")
        @test size(ta) == (5, 6) && strides(ta) == (1, 5) && dtype(ta) === :double

        P = PermutedDimsArray(rand(Float32, 3, 4), (2, 1))  # a transposed view
        tp = add_tensor!(g, P; name = "P")
        @test size(tp) == (4, 3)
        @test strides(tp) == (3, 1)
        @test cstrides(tp) == [1, 3]

        s = add_tensor!(g, Float16, (4, 3); strides = (1, 0), name = "bcast")
        @test strides(s) == (1, 0)
        @test dtype(s) === :half

        v = add_tensor!(g, :bfloat16, (7,); name = "bf")
        @test dtype(v) === :bfloat16
        @test eltype(v) === Nothing

        @test_throws DimensionMismatch add_tensor!(g, Float32, (2, 2); strides = (1,))

        set_name!(t, "x2")
        @test tensor_name(t) == "x2"
        @test find_tensor(g, :x2) == t
        t9 = set_uid!(t, 900)
        @test uid(t9) == 900
        @test tensor_name(t9) == "x2"

        sc = add_scalar!(g, 2.5f0; name = "two_and_a_half")
        @test size(sc) == (1,)
        @test !isbound(sc)
        @test dtype(sc) === :float

        @test tensor_count(g) == 6
        @test node_count(g) == 0
        @test [tensor_name(x) for x in tensors(g)] == ["x2", "A", "P", "bcast", "bf", "two_and_a_half"]
        @test uid(tensors(g)[1]) == 900

        y = pointwise!(g, :relu_fwd, t9)
        @test tensor_name(y) == "pointwise_0::out"
        @test size(y) == (4, 3, 2)
        @test !isbound(y)
        set_output!(y)
        @test isbound(y)
        set_output!(y, false)
        @test !isbound(y)
        set_dims!(y, (4, 3, 2))
        set_strides!(y, (6, 2, 1))
        @test strides(y) == (6, 2, 1)
        set_dtype!(y, Float16)
        @test dtype(y) === :half
        @test occursin("pointwise_0::out", sprint(show, y))
    end

    Graph(io_dtype = Float32, intermediate_dtype = :float, compute_dtype = Float32) do g
        x = add_tensor!(g, nothing, (3, 2); name = "untyped")
        @test dtype(x) === :not_set
        y = set_output!(pointwise!(g, :neg, x))
        validate!(g)
        @test dtype(x) === :float
        @test dtype(y) === :float
    end
end

@testset "pointwise numerics" begin
    x = rand(Float32, 5, 4) .* 2 .- 1
    y = rand(Float32, 5, 4) .* 2 .- 1
    pos = rand(Float32, 5, 4) .+ 0.5f0
    σ(v) = 1 / (1 + exp(-v))
    unary = [(:neg, v -> -v), (:abs, abs), (:ceil, ceil), (:floor, floor), (:exp, exp),
             (:sin, sin), (:cos, cos), (:tan, tan), (:identity, identity),
             (:relu_fwd, v -> max(v, 0)), (:tanh_fwd, tanh), (:sigmoid_fwd, σ),
             (:elu_fwd, v -> v > 0 ? v : exp(v) - 1), (:softplus_fwd, v -> log1p(exp(v))),
             (:swish_fwd, v -> v * σ(v)),
             (:gelu_approx_tanh_fwd, v -> 0.5 * v * (1 + tanh(sqrt(2 / π) * (v + 0.044715 * v^3))))]
    for (mode, f) in unary
        @testset "$mode" begin
            @test approx(pointwise_cpu(mode, x), f.(Float64.(x)))
        end
    end
    for (mode, f) in [(:sqrt, sqrt), (:rsqrt, v -> 1 / sqrt(v)), (:log, log), (:reciprocal, inv)]
        @testset "$mode" begin
            @test approx(pointwise_cpu(mode, pos), f.(Float64.(pos)))
        end
    end
    binary = [(:add, +), (:sub, -), (:mul, *), (:max, max), (:min, min), (:atan2, atan),
              (:add_square, (a, b) -> a + b * b)]
    for (mode, f) in binary
        @testset "$mode" begin
            @test approx(pointwise_cpu(mode, x, y), f.(Float64.(x), Float64.(y)))
        end
    end
    @test approx(pointwise_cpu(:div, x, pos), Float64.(x) ./ Float64.(pos))
    @test approx(pointwise_cpu(:pow, pos, y), Float64.(pos) .^ Float64.(y))
    @test approx(pointwise_cpu(:mod, pos .* 3.3f0, pos), rem.(Float64.(pos .* 3.3f0), Float64.(pos)))

    # Backward modes: in0 = dy, in1 = x.
    dy = rand(Float32, 5, 4)
    @test approx(pointwise_cpu(:relu_bwd, dy, x), dy .* (x .> 0))
    @test approx(pointwise_cpu(:tanh_bwd, dy, x), Float64.(dy) .* (1 .- tanh.(Float64.(x)) .^ 2))
    @test approx(pointwise_cpu(:sigmoid_bwd, dy, x),
                 Float64.(dy) .* σ.(Float64.(x)) .* (1 .- σ.(Float64.(x))))

    # Options.
    @test approx(pointwise_cpu(:relu_fwd, x; relu_lower_clip_slope = 0.1),
                 [v > 0 ? Float64(v) : 0.1 * v for v in x])
    @test approx(pointwise_cpu(:relu_fwd, x; relu_upper_clip = 0.5), clamp.(Float64.(x), 0, 0.5))
    @test approx(pointwise_cpu(:elu_fwd, x; elu_alpha = 2.0),
                 [v > 0 ? Float64(v) : 2 * (exp(Float64(v)) - 1) for v in x])
    @test approx(pointwise_cpu(:softplus_fwd, x; softplus_beta = 2.0),
                 log1p.(exp.(2 .* Float64.(x))) ./ 2)
    @test approx(pointwise_cpu(:swish_fwd, x; swish_beta = 2.0), Float64.(x) .* σ.(2 .* Float64.(x)))

    # Comparisons and logic produce Bool arrays.
    gt = pointwise_cpu(:cmp_gt, x, y)
    @test eltype(gt) === Bool
    @test gt == (x .> y)
    @test pointwise_cpu(:cmp_le, x, y) == (x .<= y)
    @test pointwise_cpu(:cmp_eq, x, x) == trues(size(x))
    p, q = rand(Bool, 5, 4), rand(Bool, 5, 4)
    @test pointwise_cpu(:logical_and, p, q) == (p .& q)
    @test pointwise_cpu(:logical_or, p, q) == (p .| q)
    @test pointwise_cpu(:logical_not, p) == .!p
    @test pointwise_cpu(:binary_select, x, y, p) == ifelse.(p, x, y)

    # GEN_INDEX: 0-based index along a Julia dimension.
    gi1 = pointwise_cpu(:gen_index, x; dim = 1)
    @test eltype(gi1) === Int32
    @test gi1 == [Int32(i - 1) for i in 1:5, j in 1:4]
    @test pointwise_cpu(:gen_index, x; dim = 2) == [Int32(j - 1) for i in 1:5, j in 1:4]
    Graph() do g
        t = add_tensor!(g, x)
        @test_throws ArgumentError pointwise!(g, :gen_index, t)
        @test_throws ArgumentError pointwise!(g, :gen_index, t; dim = 3)
        @test_throws ArgumentError pointwise!(g, :relu_fwd, t; dim = 1)
        @test_throws ArgumentError pointwise!(g, :no_such_mode, t)
    end

    # Broadcasting in Julia order: a (5,1) column and a (1,4) row.
    col = rand(Float32, 5, 1)
    row = rand(Float32, 1, 4)
    @test approx(pointwise_cpu(:add, x, col), x .+ col)
    @test approx(pointwise_cpu(:mul, x, row), x .* row)

    # A pass-by-value scalar (shape (1,)) needs no buffer.
    xv = rand(Float32, 6)
    out = Graph() do g
        tv = add_tensor!(g, xv)
        s = add_scalar!(g, 2.5f0)
        @test scalar_value(s) == 2.5
        @test_throws CuDNNFEError scalar_value(tv)
        ty = set_output!(pointwise!(g, :mul, tv, s))
        only(run_graph(g, [tv => xv], [ty]))
    end
    @test approx(out, xv .* 2.5f0)

    # The next op writes its output into a tensor the caller made.
    av, bv = rand(Float32, 5), rand(Float32, 5)
    out = Graph() do g
        ta, tb = add_tensor!(g, av), add_tensor!(g, bv)
        sum = add_tensor!(g, Float32, (5,); name = "sum")
        set_next_output!(g, "y", sum)  # no such port: refused, request used up
        @test_throws CuDNNFEError pointwise!(g, :add, ta, tb)
        set_next_output!(g, "out", sum)
        ty = pointwise!(g, :add, ta, tb)
        @test ty.uid == sum.uid && tensor_name(ty) == "sum"
        only(run_graph(g, [ta => av, tb => bv], [sum]))
    end
    @test approx(out, av .+ bv)

    # Inputs no op reads leave a pruning graph at validation; bindings for them are ignored.
    xv = rand(Float32, 4)
    out = Graph() do g
        tx = add_tensor!(g, xv)
        unused = add_tensor!(g, Float32, (1,); name = "epsilon_bwd")
        ty = set_output!(pointwise!(g, :neg, tx))
        set_prune_unread_inputs!(g)
        validate!(g)
        @test [t.uid for t in pruned_tensors(g)] == [unused.uid]
        @test_throws CuDNNFEError pointwise!(g, :add, tx, unused)
        only(run_graph(g, [tx => xv, unused => Float32[1]], [ty]))
    end
    @test approx(out, -xv)

    # Chained ops with a virtual intermediate: relu(x + y) .* 2
    out = Graph() do g
        tx, ty = add_tensor!(g, x), add_tensor!(g, y)
        s = pointwise!(g, :add, tx, ty)
        r = pointwise!(g, :relu_fwd, s)
        two = add_tensor!(g, Float32, (1, 1); name = "two")
        z = set_output!(pointwise!(g, :mul, r, two; name = "scale"))
        @test tensor_name(z) == "scale::out"
        @test node_count(g) == 3
        only(run_graph(g, [tx => x, ty => y, two => fill(2f0, 1, 1)], [z]))
    end
    @test approx(out, max.(x .+ y, 0) .* 2)
end

@testset "matmul: a * b in Julia order" begin
    A = rand(Float32, 3, 4)
    B = rand(Float32, 4, 5)
    C = Graph() do g
        ta, tb = add_tensor!(g, A), add_tensor!(g, B)
        tc = set_output!(matmul!(g, ta, tb; name = "mm"))
        @test size(tc) == (3, 5)
        @test strides(tc) == (1, 3)
        only(run_graph(g, [ta => A, tb => B], [tc]))
    end
    @test approx(C, Float64.(A) * Float64.(B))

    # Batched, with a broadcast batch dim.
    A3 = rand(Float32, 3, 4, 2)
    B3 = rand(Float32, 4, 5, 1)
    C3 = Graph() do g
        ta, tb = add_tensor!(g, A3), add_tensor!(g, B3)
        tc = set_output!(matmul!(g, ta, tb))
        @test size(tc) == (3, 5, 2)
        only(run_graph(g, [ta => A3, tb => B3], [tc]))
    end
    for i in 1:2
        @test approx(C3[:, :, i], Float64.(A3[:, :, i]) * Float64.(B3[:, :, 1]))
    end

    # A transposed operand described by its strides, not copied.
    At = PermutedDimsArray(rand(Float32, 4, 3), (2, 1))  # 3x4 view of a 4x3 array
    C = Graph() do g
        ta, tb = add_tensor!(g, At), add_tensor!(g, B)
        tc = set_output!(matmul!(g, ta, tb))
        only(run_graph(g, [ta => At, tb => B], [tc]))
    end
    @test approx(C, Float64.(At) * Float64.(B))
end

@testset "reduction" begin
    x = rand(Float32, 5, 4, 3) .+ 0.1f0
    red(mode; kwargs...) = Graph() do g
        tx = add_tensor!(g, x)
        ty = set_output!(reduction!(g, mode, tx; kwargs...))
        only(run_graph(g, [tx => x], [ty]))
    end
    X = Float64.(x)
    @test approx(red(:add; dims = 1), sum(X; dims = 1))
    @test size(red(:add; dims = (1, 3))) == (1, 4, 1)
    @test approx(red(:add; dims = (1, 3)), sum(X; dims = (1, 3)))
    @test approx(red(:add), sum(X; dims = (1, 2, 3)))
    @test approx(red(:max; dims = 2), maximum(X; dims = 2))
    @test approx(red(:min; dims = 3), minimum(X; dims = 3))
    @test approx(red(:avg; dims = 2), sum(X; dims = 2) ./ 4)
    @test approx(red(:amax; dims = 1), maximum(abs, X; dims = 1))
    @test approx(red(:norm1; dims = 1), sum(abs, X; dims = 1))
    @test approx(red(:norm2; dims = 1), sqrt.(sum(abs2, X; dims = 1)))
    @test approx(red(:mul; dims = 1), prod(X; dims = 1))
    @test approx(red(:add; dims = 2, deterministic = true), sum(X; dims = 2))
    Graph() do g
        tx = add_tensor!(g, x)
        @test_throws ArgumentError reduction!(g, :add, tx; dims = 4)
        @test_throws ArgumentError reduction!(g, :add, tx; dims = ())
        @test_throws ArgumentError reduction!(g, :sum, tx)
    end
end

@testset "convolution in WHCN order" begin
    # 2-D: x (W=7, H=6, C=3, N=2), w (kW=3, kH=2, C=3, K=4); every spatial
    # argument differs between W and H, so a transposition would show.
    x = rand(Float32, 7, 6, 3, 2) .- 0.5f0
    w = rand(Float32, 3, 2, 3, 4) .- 0.5f0
    pre, post, stride, dil = (1, 0), (1, 1), (2, 1), (1, 2)
    kw = (pre_padding = pre, post_padding = post, stride = stride, dilation = dil)
    yref = ref_conv(x, w; pre = pre, post = post, stride = stride, dilation = dil)
    @test size(yref) == (4, 5, 4, 2)

    y = Graph() do g
        tx, tw = add_tensor!(g, x; name = "x"), add_tensor!(g, w; name = "w")
        ty = set_output!(conv_fprop!(g, tx, tw; kw..., name = "conv"))
        @test size(ty) == (4, 5, 4, 2)       # shape inference, Julia order
        @test cdims(ty) == [2, 4, 5, 4]      # NCHW
        @test tensor_name(ty) == "conv::y"
        only(run_graph(g, [tx => x, tw => w], [ty]))
    end
    @test approx(y, yref)

    # Mathematical convolution flips the filter.
    y = Graph() do g
        tx, tw = add_tensor!(g, x), add_tensor!(g, w)
        ty = set_output!(conv_fprop!(g, tx, tw; kw..., mode = :convolution))
        only(run_graph(g, [tx => x, tw => w], [ty]))
    end
    @test approx(y, ref_conv(x, w; pre = pre, post = post, stride = stride, dilation = dil, flip = true))

    # Data gradient: dx for dy, inferred as (7, 6, 3, 2).
    dy = rand(Float32, 4, 5, 4, 2) .- 0.5f0
    dx = Graph() do g
        tdy, tw = add_tensor!(g, dy), add_tensor!(g, w)
        tdx = set_output!(conv_dgrad!(g, tdy, tw; kw...))
        @test size(tdx) == (7, 6, 3, 2)
        only(run_graph(g, [tdy => dy, tw => w], [tdx]))
    end
    dxref = ref_conv_dgrad(dy, w, size(x); pre = pre, post = post, stride = stride, dilation = dil)
    @test approx(dx, dxref)

    # Weight gradient: dw inferred as (3, 2, 3, 4).
    dw = Graph() do g
        tx, tdy = add_tensor!(g, x), add_tensor!(g, dy)
        tdw = set_output!(conv_wgrad!(g, tx, tdy; kw...))
        @test size(tdw) == (3, 2, 3, 4)
        only(run_graph(g, [tx => x, tdy => dy], [tdw]))
    end
    dwref = ref_conv_wgrad(x, dy, size(w); pre = pre, post = post, stride = stride, dilation = dil)
    @test approx(dw, dwref)

    # The references are adjoint to each other: <conv(x,w), dy> = <x, dx> = <w, dw>.
    @test dot(yref, dy) ≈ dot(Float64.(x), dxref)
    @test dot(yref, dy) ≈ dot(Float64.(w), dwref)

    # 1-D with one integer for every spatial dim.
    x1 = rand(Float32, 9, 2, 3)
    w1 = rand(Float32, 3, 2, 5)
    y1 = Graph() do g
        tx, tw = add_tensor!(g, x1), add_tensor!(g, w1)
        ty = set_output!(conv_fprop!(g, tx, tw; padding = 1, stride = 2))
        @test size(ty) == (5, 5, 3)
        only(run_graph(g, [tx => x1, tw => w1], [ty]))
    end
    @test approx(y1, ref_conv(x1, w1; pre = (1,), post = (1,), stride = (2,), dilation = (1,)))

    Graph() do g
        tx, tw = add_tensor!(g, x), add_tensor!(g, w)
        @test_throws ArgumentError conv_fprop!(g, tx, tw; stride = (1, 1, 1))
        @test_throws ArgumentError conv_fprop!(g, tx, tw; mode = :sideways)
        bad = add_tensor!(g, Float32, (3, 2, 5, 4))  # C = 5, image has 3 channels
        e = try
            conv_fprop!(g, tx, bad; name = "bad_conv")
            nothing
        catch err
            err
        end
        @test e isa CuDNNFEError && e.kind === :invalid_graph && occursin("bad_conv", e.message)
    end
end

@testset "scaled dot-product attention" begin
    d, sq, skv, hq, hkv, B = 8, 5, 7, 4, 2, 2
    q = randn(Float32, d, sq, hq, B)
    k = randn(Float32, d, skv, hkv, B)
    v = randn(Float32, 6, skv, hkv, B)
    scale = 1 / sqrt(d)
    function attn(; causal = false, scale = nothing, bias = nothing)
        Graph() do g
            tq, tk, tv = add_tensor!(g, q), add_tensor!(g, k), add_tensor!(g, v)
            tb = bias === nothing ? nothing : add_tensor!(g, bias)
            o, st = sdpa!(g, tq, tk, tv; bias = tb, stats = true, causal = causal, scale = scale)
            @test size(o) == (6, sq, hq, B)
            @test size(st) == (1, sq, hq, B)
            @test dtype(st) === :float
            set_output!(o)
            set_output!(st)
            inputs = Pair[tq => q, tk => k, tv => v]
            tb === nothing || push!(inputs, tb => bias)
            run_graph(g, inputs, [o, st])
        end
    end
    for causal in (false, :top_left, :bottom_right)
        @testset "causal = $causal" begin
            o, st = attn(causal = causal)
            oref, stref = ref_sdpa(q, k, v; scale = scale, causal = causal)
            @test approx(o, oref)
            @test approx(st, stref)
        end
    end
    o, _ = attn(scale = 0.3)
    @test approx(o, ref_sdpa(q, k, v; scale = 0.3)[1])
    bias = randn(Float32, skv, sq, 1, B)
    o, _ = attn(bias = bias)
    @test approx(o, ref_sdpa(q, k, v; scale = scale, bias = bias)[1])

    Graph() do g
        tq, tk, tv = add_tensor!(g, q), add_tensor!(g, k), add_tensor!(g, v)
        o, st = sdpa!(g, tq, tk, tv)
        @test st === nothing
        @test size(o) == (6, sq, hq, B)
        @test_throws ArgumentError sdpa!(g, tq, tk, tv; causal = :diagonal)
        e = try
            sdpa!(g, tq, tk, tv; causal = true, name = "attn")
            sdpa!(g, tk, tq, tv; name = "swapped")  # s mismatch between k (as q) and v
            nothing
        catch err
            err
        end
        @test e isa CuDNNFEError && e.kind === :invalid_graph
    end
end

@testset "the references are self-consistent (finite differences)" begin
    q = randn(4, 3, 2, 1)
    k = randn(4, 5, 1, 1)
    v = randn(3, 5, 1, 1)
    dO = randn(3, 3, 2, 1)
    for causal in (false, :top_left, :bottom_right)
        dq, dk, dv = ref_sdpa_backward(q, k, v, dO; scale = 0.7, causal = causal)
        loss = (qq, kk, vv) -> sum(ref_sdpa(qq, kk, vv; scale = 0.7, causal = causal)[1] .* dO)
        for i in (1, 7, 24)
            @test isapprox(numgrad(x -> loss(x, k, v), q, i), dq[i]; atol = 1e-6)
        end
        for i in (2, 11, 20)
            @test isapprox(numgrad(x -> loss(q, x, v), k, i), dk[i]; atol = 1e-6)
            @test isapprox(numgrad(x -> loss(q, k, x), v, min(i, length(v))), dv[min(i, length(v))];
                           atol = 1e-6)
        end
    end
    x = randn(5, 3)
    scale = rand(5, 1) .+ 0.5
    bias = randn(5, 1)
    dy = randn(5, 3)
    _, mean, ivar = ref_layernorm(x, scale, bias)
    dx, dscale, dbias = ref_layernorm_backward(dy, x, scale, mean, ivar)
    lln = (xx, ss, bb) -> sum(ref_layernorm(xx, ss, bb)[1] .* dy)
    for i in (1, 8, 15)
        @test isapprox(numgrad(t -> lln(t, scale, bias), x, i), dx[i]; atol = 1e-6)
    end
    for i in 1:5
        @test isapprox(numgrad(t -> lln(x, t, bias), scale, i), dscale[i]; atol = 1e-6)
        @test isapprox(numgrad(t -> lln(x, scale, t), bias, i), dbias[i]; atol = 1e-6)
    end
    _, irms = ref_rmsnorm(x, scale)
    dx, dscale, _ = ref_rmsnorm_backward(dy, x, scale, irms)
    lrms = (xx, ss) -> sum(ref_rmsnorm(xx, ss)[1] .* dy)
    for i in (2, 9, 14)
        @test isapprox(numgrad(t -> lrms(t, scale), x, i), dx[i]; atol = 1e-6)
    end
    for i in 1:5
        @test isapprox(numgrad(t -> lrms(x, t), scale, i), dscale[i]; atol = 1e-6)
    end
end

@testset "attention backward" begin
    d, sq, skv, hq, hkv, B = 8, 5, 7, 4, 2, 2
    q = randn(Float32, d, sq, hq, B)
    k = randn(Float32, d, skv, hkv, B)
    v = randn(Float32, 6, skv, hkv, B)
    dO = randn(Float32, 6, sq, hq, B)
    scale = 1 / sqrt(d)
    for causal in (false, :top_left, :bottom_right)
        @testset "causal = $causal" begin
            o, st = ref_sdpa(q, k, v; scale = scale, causal = causal)
            o32, st32 = Float32.(o), Float32.(st)
            dq, dk, dv = Graph() do g
                tq, tk, tv = add_tensor!(g, q), add_tensor!(g, k), add_tensor!(g, v)
                to, tdo, tst = add_tensor!(g, o32), add_tensor!(g, dO), add_tensor!(g, st32)
                grads = sdpa_backward!(g, tq, tk, tv, to, tdo, tst; causal = causal,
                                       name = "attn_bwd")
                @test [size(t) for t in grads] == [size(q), size(k), size(v)]
                @test tensor_name(grads[1]) == "attn_bwd::dQ"
                foreach(set_output!, grads)
                run_graph(g, [tq => q, tk => k, tv => v, to => o32, tdo => dO, tst => st32],
                          collect(grads))
            end
            rq, rk, rv = ref_sdpa_backward(q, k, v, dO; scale = scale, causal = causal)
            @test approx(dq, rq; rtol = 1e-3, atol = 1e-4)
            @test approx(dk, rk; rtol = 1e-3, atol = 1e-4)
            @test approx(dv, rv; rtol = 1e-3, atol = 1e-4)
        end
    end
end

@testset "normalization: statistics per last Julia dimension" begin
    x = randn(Float32, 6, 4, 3)        # features (6, 4), N = 3
    scale = rand(Float32, 6, 4, 1) .+ 0.5f0
    bias = randn(Float32, 6, 4, 1)
    yr, mr, ivr = ref_layernorm(x, scale, bias; epsilon = 1e-3)
    out = Graph() do g
        tx, ts, tb = add_tensor!(g, x), add_tensor!(g, scale), add_tensor!(g, bias)
        y, m, iv = layernorm!(g, tx, ts, tb; epsilon = 1e-3, name = "ln")
        @test size(y) == (6, 4, 3)
        @test size(m) == (1, 1, 3) && size(iv) == (1, 1, 3)
        @test dtype(m) === :float
        @test tensor_name(iv) == "ln::inv_variance"
        foreach(set_output!, (y, m, iv))
        run_graph(g, [tx => x, ts => scale, tb => bias], [y, m, iv])
    end
    @test approx(out[1], yr)
    @test approx(out[2], mr)
    @test approx(out[3], ivr; rtol = 1e-3)

    # Inference makes no statistics; zero-centred gamma uses 1 + scale.
    out = Graph() do g
        tx, ts, tb = add_tensor!(g, x), add_tensor!(g, scale), add_tensor!(g, bias)
        y, m, iv = layernorm!(g, tx, ts, tb; phase = :inference, zero_centered_gamma = true)
        @test m === nothing && iv === nothing
        only(run_graph(g, [tx => x, ts => scale, tb => bias], [set_output!(y)]))
    end
    @test approx(out, ref_layernorm(x, scale, bias; zero_centered_gamma = true)[1]; rtol = 1e-3)

    # RMS norm, without and with bias.
    for with_bias in (false, true)
        out = Graph() do g
            tx, ts = add_tensor!(g, x), add_tensor!(g, scale)
            tb = with_bias ? add_tensor!(g, bias) : nothing
            y, r = rmsnorm!(g, tx, ts, tb)
            @test size(r) == (1, 1, 3)
            inputs = Pair[tx => x, ts => scale]
            with_bias && push!(inputs, tb => bias)
            run_graph(g, inputs, [set_output!(y), set_output!(r)])
        end
        yr, rr = ref_rmsnorm(x, scale, with_bias ? bias : nothing)
        @test approx(out[1], yr; rtol = 1e-3)
        @test approx(out[2], rr; rtol = 1e-3)
    end
    Graph() do g
        tx, ts = add_tensor!(g, x), add_tensor!(g, scale)
        @test rmsnorm!(g, tx, ts; phase = :inference)[2] === nothing
        @test_throws ArgumentError rmsnorm!(g, tx, ts; phase = :warmup)
        bad = add_tensor!(g, Float32, (6, 4, 3))  # scale must be (6, 4, 1)
        e = try
            layernorm!(g, tx, bad, bad; name = "bad_ln")
            nothing
        catch err
            err
        end
        @test e isa CuDNNFEError && e.kind === :invalid_graph && occursin("bad_ln", e.message)
    end

    # Backward, from the forward's statistics.
    dy = randn(Float32, 6, 4, 3)
    _, m, iv = ref_layernorm(x, scale, bias)
    m32, iv32 = Float32.(m), Float32.(iv)
    grads = Graph() do g
        tdy, tx, ts = add_tensor!(g, dy), add_tensor!(g, x), add_tensor!(g, scale)
        tm, tiv = add_tensor!(g, m32), add_tensor!(g, iv32)
        dx, dscale, dbias = layernorm_backward!(g, tdy, tx, ts, tm, tiv)
        @test size(dscale) == size(scale) && size(dbias) == size(scale)
        run_graph(g, [tdy => dy, tx => x, ts => scale, tm => m32, tiv => iv32],
                  [set_output!(dx), set_output!(dscale), set_output!(dbias)])
    end
    for (got, want) in zip(grads, ref_layernorm_backward(dy, x, scale, m32, iv32))
        @test approx(got, want; rtol = 1e-3, atol = 1e-4)
    end
    _, r = ref_rmsnorm(x, scale)
    r32 = Float32.(r)
    for with_bias in (false, true)
        grads = Graph() do g
            tdy, tx, ts, tr = add_tensor!(g, dy), add_tensor!(g, x), add_tensor!(g, scale),
                              add_tensor!(g, r32)
            dx, dscale, dbias = rmsnorm_backward!(g, tdy, tx, ts, tr; with_bias = with_bias)
            @test (dbias === nothing) == !with_bias
            outs = [set_output!(dx), set_output!(dscale)]
            with_bias && push!(outs, set_output!(dbias))
            run_graph(g, [tdy => dy, tx => x, ts => scale, tr => r32], outs)
        end
        want = ref_rmsnorm_backward(dy, x, scale, r32)
        for i in eachindex(grads)
            @test approx(grads[i], want[i]; rtol = 1e-3, atol = 1e-4)
        end
    end
end

@testset "softmax over the first Julia dimension" begin
    x = randn(Float32, 5, 4, 2)
    y, st = Graph() do g
        tx = add_tensor!(g, x)
        ty, ts = softmax!(g, tx; stats = true)
        @test size(ts) == (1, 4, 2)
        run_graph(g, [tx => x], [set_output!(ty), set_output!(ts)])
    end
    yr, sr = ref_softmax(x)
    @test approx(y, yr)
    @test approx(st, sr)
    @test all(s -> isapprox(s, 1; atol = 1e-5), sum(y; dims = 1))
    Graph() do g
        tx = add_tensor!(g, x)
        @test softmax!(g, tx)[2] === nothing
    end
end

@testset "batch, instance and adaptive layer norm" begin
    # batchnorm!: x (W, H, C, N), per-channel tensors (1, 1, C, 1).
    x = randn(Float32, 3, 2, 4, 2) .* 2 .+ 0.5f0
    scale = randn(Float32, 1, 1, 4, 1)
    bias = randn(Float32, 1, 1, 4, 1)
    rm = randn(Float32, 1, 1, 4, 1)
    rv = rand(Float32, 1, 1, 4, 1) .+ 0.5f0
    X = Float64.(x)
    mu = sum(X; dims = (1, 2, 4)) ./ 12
    var = sum((X .- mu) .^ 2; dims = (1, 2, 4)) ./ 12
    out = Graph() do g
        tx, ts, tb = add_tensor!(g, x), add_tensor!(g, scale), add_tensor!(g, bias)
        trm, trv = add_tensor!(g, rm), add_tensor!(g, rv)
        y, m, iv, nm, nv = batchnorm!(g, tx, ts, tb; running_mean = trm, running_var = trv,
                                      momentum = 0.25, epsilon = 1e-3, name = "bn")
        @test size(m) == (1, 1, 4, 1) && size(nv) == (1, 1, 4, 1)
        @test tensor_name(iv) == "bn::inv_variance"
        foreach(set_output!, (y, m, iv, nm, nv))
        run_graph(g, [tx => x, ts => scale, tb => bias, trm => rm, trv => rv], [y, m, iv, nm, nv])
    end
    @test approx(out[1], (X .- mu) ./ sqrt.(var .+ 1e-3) .* scale .+ bias)
    @test approx(out[2], mu)
    @test approx(out[3], 1 ./ sqrt.(var .+ 1e-3); rtol = 1e-3)
    @test approx(out[4], 0.75 .* rm .+ 0.25 .* mu)
    @test approx(out[5], 0.75 .* rv .+ 0.25 .* var .* 12 ./ 11; rtol = 1e-3)
    Graph() do g
        tx, ts, tb = add_tensor!(g, x), add_tensor!(g, scale), add_tensor!(g, bias)
        @test batchnorm!(g, tx, ts, tb)[4:5] == (nothing, nothing)
    end

    # Inference from given statistics, and the backward.
    m32, iv32 = Float32.(mu), Float32.(1 ./ sqrt.(var .+ 1e-5))
    dy = randn(Float32, size(x))
    out = Graph() do g
        tx, tdy = add_tensor!(g, x), add_tensor!(g, dy)
        ts, tb = add_tensor!(g, scale), add_tensor!(g, bias)
        tm, tiv = add_tensor!(g, m32), add_tensor!(g, iv32)
        y = batchnorm_inference!(g, tx, ts, tb, tm, tiv)
        dx, dscale, dbias = batchnorm_backward!(g, tdy, tx, ts, tm, tiv)
        @test size(dscale) == size(scale)
        run_graph(g, [tx => x, tdy => dy, ts => scale, tb => bias, tm => m32, tiv => iv32],
                  [set_output!(y), set_output!(dx), set_output!(dscale), set_output!(dbias)])
    end
    xhat = (X .- m32) .* iv32
    db = sum(Float64.(dy); dims = (1, 2, 4))
    ds = sum(dy .* xhat; dims = (1, 2, 4))
    @test approx(out[1], xhat .* scale .+ bias)
    @test approx(out[2], scale .* iv32 ./ 12 .* (12 .* dy .- db .- xhat .* ds); rtol = 1e-3, atol = 1e-4)
    @test approx(out[3], ds; rtol = 1e-3, atol = 1e-4)
    @test approx(out[4], db; rtol = 1e-3, atol = 1e-4)

    # instancenorm!: statistics per (C, N) over the spatial dims.
    xi = randn(Float32, 4, 3, 2) .* 3
    si, bi = randn(Float32, 1, 3, 1), randn(Float32, 1, 3, 1)
    out = Graph() do g
        tx, ts, tb = add_tensor!(g, xi), add_tensor!(g, si), add_tensor!(g, bi)
        y, m, iv = instancenorm!(g, tx, ts, tb)
        @test size(m) == (1, 3, 2)
        run_graph(g, [tx => xi, ts => si, tb => bi], [set_output!(y), set_output!(m), set_output!(iv)])
    end
    Xi = Float64.(xi)
    mi = sum(Xi; dims = 1) ./ 4
    ivi = 1 ./ sqrt.(sum((Xi .- mi) .^ 2; dims = 1) ./ 4 .+ 1e-5)
    @test approx(out[1], (Xi .- mi) .* ivi .* si .+ bi)
    @test approx(out[2], mi)
    @test approx(out[3], ivi; rtol = 1e-3)

    # adalayernorm!: x (F, T, B), per-sample scale and bias (F, 1, B); 1 + scale.
    sa, ba = randn(Float32, 4, 1, 2), randn(Float32, 4, 1, 2)
    out = Graph() do g
        tx, ts, tb = add_tensor!(g, xi), add_tensor!(g, sa), add_tensor!(g, ba)
        y, m, iv = adalayernorm!(g, tx, ts, tb; phase = :inference, zero_centered_gamma = true)
        @test m === nothing && iv === nothing
        only(run_graph(g, [tx => xi, ts => sa, tb => ba], [set_output!(y)]))
    end
    @test approx(out, (Xi .- mi) .* ivi .* (1 .+ sa) .+ ba)

    # The backward ops shape their gradients as scale.
    Graph() do g
        tdy, tx = add_tensor!(g, xi), add_tensor!(g, xi)
        tm, tiv = add_tensor!(g, Float32, (1, 3, 2)), add_tensor!(g, Float32, (1, 3, 2))
        _, dscale, dbias = instancenorm_backward!(g, tdy, tx, add_tensor!(g, si), tm, tiv)
        @test size(dscale) == (1, 3, 1) && size(dbias) == (1, 3, 1)
        _, dscale, _ = adalayernorm_backward!(g, tdy, tx, add_tensor!(g, sa), tm, tiv)
        @test size(dscale) == (4, 1, 2)
    end
end

@testset "attention options" begin
    d, sq, skv, hq, hkv, B = 4, 5, 6, 2, 1, 2
    q = randn(Float32, d, sq, hq, B)
    k = randn(Float32, d, skv, hkv, B)
    v = randn(Float32, d, skv, hkv, B)
    scale = 1 / sqrt(d)
    lq = reshape(Int32[3, 5], 1, 1, 1, B)
    lkv = reshape(Int32[4, 6], 1, 1, 1, B)
    function attn(kw, extra = Pair[])
        Graph() do g
            tq, tk, tv = add_tensor!(g, q), add_tensor!(g, k), add_tensor!(g, v)
            ins = Pair[tq => q, tk => k, tv => v]
            opts = Dict{Symbol,Any}(kw)
            for (key, arr) in extra  # keyword => array: a graph input
                t = add_tensor!(g, arr)
                opts[key] = t
                push!(ins, t => arr)
            end
            o, st = sdpa!(g, tq, tk, tv; stats = true, opts...)
            run_graph(g, ins, [set_output!(o), set_output!(st)])
        end
    end
    # Padding rows have stats -Inf on the CPU reference, as in ref_attention.
    finite(a) = ifelse.(isinf.(a), 0.0, Float64.(a))
    same(got, want) = approx(got[1], want[1]) && isinf.(got[2]) == isinf.(want[2]) &&
                      approx(finite(got[2]), finite(want[2]))
    # Padding: the lengths turn the padding mask on.
    @test same(attn(Dict(), [:seq_len_q => lq, :seq_len_kv => lkv]),
               ref_attention(q, k, v; scale = scale, seq_len_q = lq, seq_len_kv = lkv))
    @test same(attn(Dict(:causal => :bottom_right), [:seq_len_q => lq, :seq_len_kv => lkv]),
               ref_attention(q, k, v; scale = scale, seq_len_q = lq, seq_len_kv = lkv, causal = true,
                             bottom_right = true))
    # Diagonal bands.
    @test same(attn(Dict(:window_left => 2, :window_right => 1)),
               ref_attention(q, k, v; scale = scale, window_left = 2, window_right = 1))
    @test same(attn(Dict(:window_left => 3, :window_right => 0, :diagonal_alignment => :bottom_right)),
               ref_attention(q, k, v; scale = scale, window_left = 3, window_right = 0,
                             bottom_right = true))
    # ALiBi (6 heads: slopes 2^-2, 2^-4, 2^-6, 2^-8, 2^-1, 2^-3) and a scale tensor.
    @test [alibi_slope(h, 6) for h in 1:6] == [2.0^-2, 2.0^-4, 2.0^-6, 2.0^-8, 2.0^-1, 2.0^-3]
    q6 = randn(Float32, d, sq, 6, 1)
    k6, v6 = randn(Float32, d, sq, 3, 1), randn(Float32, d, sq, 3, 1)
    s = fill(0.3f0, 1, 1, 1, 1)
    o6 = Graph() do g
        tq, tk, tv, ts = add_tensor!(g, q6), add_tensor!(g, k6), add_tensor!(g, v6), add_tensor!(g, s)
        o, st = sdpa!(g, tq, tk, tv; causal = true, alibi = true, scale = ts, stats = true)
        run_graph(g, [tq => q6, tk => k6, tv => v6, ts => s], [set_output!(o), set_output!(st)])
    end
    @test same(o6, ref_attention(q6, k6, v6; scale = 0.3, causal = true, alibi = true))
    # Given dropout: P .* mask .* scale.
    mask = Float32.(rand(skv, sq, hq, B) .< 0.75)
    od = Graph() do g
        tq, tk, tv, tm = add_tensor!(g, q), add_tensor!(g, k), add_tensor!(g, v), add_tensor!(g, mask)
        ds = add_scalar!(g, 4 / 3; dtype = :float)
        o, _ = sdpa!(g, tq, tk, tv; dropout_mask = tm, dropout_scale = ds)
        only(run_graph(g, [tq => q, tk => k, tv => v, tm => mask], [set_output!(o)]))
    end
    @test approx(od, ref_attention(q, k, v; scale = scale, dropout = (mask, 4 / 3))[1])

    # Backward with dbias: bias (s_kv, s_q, h_q, 1); dbias sums dS over the batch.
    kb, vb = randn(Float32, d, skv, hq, B), randn(Float32, d, skv, hq, B)
    bias = randn(Float32, skv, sq, hq, 1)
    dO = randn(Float32, d, sq, hq, B)
    o, st, P = ref_attention(q, kb, vb; scale = scale, bias = bias)
    o32, st32 = Float32.(o), Float32.(st)
    grads = Graph() do g
        ins = [add_tensor!(g, a) for a in (q, kb, vb, o32, dO, st32, bias)]
        res = sdpa_backward!(g, ins[1:6]...; bias = ins[7], dbias = true, name = "bwd")
        @test length(res) == 4 && size(res[4]) == size(bias)
        @test tensor_name(res[4]) == "bwd::dBias"
        run_graph(g, [t => a for (t, a) in zip(ins, (q, kb, vb, o32, dO, st32, bias))],
                  [set_output!(t) for t in res])
    end
    dbias = zeros(size(bias))
    for b in 1:B, h in 1:hq
        p = P[:, :, h, b]
        dP = transpose(Float64.(vb[:, :, h, b])) * Float64.(dO[:, :, h, b])
        dbias[:, :, h, 1] .+= p .* (dP .- sum(p .* dP; dims = 1))
    end
    rq, rk, rv = ref_sdpa_backward(q, kb, vb, dO; scale = scale, bias = bias)
    @test approx(grads[1], rq; rtol = 1e-3, atol = 1e-4)
    @test approx(grads[2], rk; rtol = 1e-3, atol = 1e-4)
    @test approx(grads[3], rv; rtol = 1e-3, atol = 1e-4)
    @test approx(grads[4], dbias; rtol = 1e-3, atol = 1e-4)
    Graph() do g
        ts = [add_tensor!(g, a) for a in (q, kb, vb, o32, dO, st32)]
        @test length(sdpa_backward!(g, ts...)) == 3
    end
end

@testset "FP8 attention" begin
    d, s, h = 8, 4, 2
    out = Graph() do g
        tq, tk, tv = (add_tensor!(g, :fp8_e4m3, (d, s, h, 1)) for _ in 1:3)
        one = add_scalar!(g, 1.0f0)
        o, st, amax_s, amax_o = sdpa_fp8!(g, tq, tk, tv; descale_q = one, descale_k = one,
                                          descale_v = one, descale_s = one, scale_s = one,
                                          scale_o = one, causal = true, stats = true)
        @test size(o) == (d, s, h, 1) && size(amax_s) == (1, 1, 1, 1)
        set_dtype!(o, :half)
        zeros8 = zeros(UInt8, d, s, h, 1)
        ones8 = fill(0x38, d, s, h, 1)  # 1.0 in E4M3
        run_graph(g, [tq => zeros8, tk => zeros8, tv => ones8],
                  [set_output!(o), set_output!(st), set_output!(amax_s), set_output!(amax_o)])
    end
    # Zero scores: P = 1/i over the i causal keys of query i, cast to E4M3
    # before P·V: 1/3 becomes 0.34375, so query 3 gives 1.03125.
    @test out[1] == repeat(reshape(Float16[1, 1, 1.03125, 1], 1, s, 1, 1), d, 1, h, 1)
    @test approx(out[2], repeat(reshape(log.(1:s), 1, s, 1, 1), 1, 1, h, 1))
    @test out[3][1] == 1 && out[4][1] == 1.03125f0
    Graph() do g
        fp8 = [add_tensor!(g, :fp8_e4m3, (d, s, h, 1)) for _ in 1:5]
        st = add_tensor!(g, Float32, (1, s, h, 1))
        one = add_scalar!(g, 1.0f0)
        grads = sdpa_fp8_backward!(g, fp8..., st; descale_q = one, descale_k = one, descale_v = one,
                                   descale_o = one, descale_do = one, descale_s = one,
                                   descale_dp = one, scale_s = one, scale_dq = one, scale_dk = one,
                                   scale_dv = one, scale_dp = one, causal = true)
        @test length(grads) == 7
        @test size(grads[2]) == (d, s, h, 1) && size(grads[7]) == (1, 1, 1, 1)
    end
end

@testset "layout ops mean what they mean for arrays" begin
    x = randn(Float32, 4, 6, 2)
    y = randn(Float32, 4, 3, 2)
    out = Graph() do g
        tx, ty = add_tensor!(g, x), add_tensor!(g, y)
        r = reshape!(g, tx, 8, 6)
        @test size(r) == (8, 6)
        t = transpose!(g, tx, (3, 1, 2))
        @test size(t) == (2, 4, 6)
        tc = pointwise!(g, :identity, t)
        set_strides!(tc, (1, 2, 8))
        sl = slice!(g, tx, 2:3, 1:2:6, :; name = "sl")
        @test size(sl) == (2, 3, 2)
        sc = pointwise!(g, :identity, sl)
        c = concatenate!(g, tx, ty; dims = 2)
        @test size(c) == (4, 9, 2)
        run_graph(g, [tx => x, ty => y], [set_output!(t) for t in (r, tc, sc, c)])
    end
    @test out[1] == reshape(x, 8, 6)
    @test out[2] == permutedims(x, (3, 1, 2))
    @test out[3] == x[2:3, 1:2:6, :]
    @test out[4] == cat(x, y; dims = 2)
end

@testset "pooling" begin
    x = randn(Float32, 6, 5, 2, 1)
    for (mode, ref) in ((:maxpool, :max), (:avgpool_include_padding, :avg_incl),
                        (:avgpool_exclude_padding, :avg_excl))
        out = Graph() do g
            tx = add_tensor!(g, x)
            y, idx = resample!(g, tx; mode = mode, window = (3, 2), stride = (2, 1), padding = (1, 0),
                               index = mode === :maxpool)
            @test (idx === nothing) == (mode !== :maxpool)
            outs = idx === nothing ? [set_output!(y)] : [set_output!(y), set_output!(idx)]
            run_graph(g, [tx => x], outs)
        end
        yr, ir = ref_pool(x; window = (3, 2), stride = (2, 1), pad = (1, 0), mode = ref)
        @test approx(out[1], yr)
        mode === :maxpool && @test out[2] == ir
    end
end

@testset "random numbers" begin
    out = Graph() do g
        ts, to = add_tensor!(g, [Int64(1234)]), add_tensor!(g, [Int64(7)])
        u = rng!(g, (3, 4); distribution = :uniform, uniform_min = -2, uniform_max = 3, seed = ts,
                 offset = to)
        c = rng!(g, 16; bernoulli_probability = 0.3, seed = 99, name = "coin")
        @test tensor_name(c) == "coin::y" && size(u) == (3, 4)
        run_graph(g, [ts => [Int64(1234)], to => [Int64(7)]], [set_output!(u), set_output!(c)])
    end
    # Element i (Julia linear index, from 0) at offset o is counter 2(o + i).
    @test approx(out[1], reshape([-2 + 5 * rng_uniform(1234, 2 * (7 + i)) for i in 0:11], 3, 4))
    @test out[2] == Float32[rng_uniform(99, 2i) < 0.3 for i in 0:15]
end

@testset "bad input names node, tensor and rule" begin
    Graph(name = "bad") do g
        x = add_tensor!(g, Float32, (10, 4); name = "x")
        y = add_tensor!(g, Float32, (3, 5); name = "y")
        function failure(f)
            try
                f()
                nothing
            catch err
                err
            end
        end
        e = failure(() -> slice!(g, x, :, 3:11; name = "sl"))
        @test e isa CuDNNFEError && e.kind === :invalid_graph && occursin("\"sl\"", e.message)
        @test_throws ArgumentError slice!(g, x, :)
        @test_throws ArgumentError slice!(g, x, :, 5:-1:1)
        e = failure(() -> concatenate!(g, x, y; dims = 2, name = "cat"))
        @test e isa CuDNNFEError && occursin("only the axis", e.message)
        e = failure(() -> transpose!(g, x, (1, 1); name = "tr"))
        @test e isa CuDNNFEError && occursin("permutation", e.message)
        q = add_tensor!(g, Float32, (8, 4, 2, 1); name = "q")
        e = failure(() -> sdpa!(g, q, q, q; window_left = 0, name = "attn"))
        @test e isa CuDNNFEError && occursin("window_left", e.message)
        img = add_tensor!(g, Float32, (4, 4, 1, 1); name = "img")
        e = failure(() -> resample!(g, img; window = 2, padding = 2, name = "pool"))
        @test e isa CuDNNFEError && occursin("smaller than the window", e.message)
        @test_throws ArgumentError resample!(g, img; mode = :median)
        e = failure(() -> batchnorm!(g, img, img, img; name = "bn"))
        @test e isa CuDNNFEError && e.kind === :invalid_graph &&
              occursin("one value per channel", e.message)
        @test node_count(g) == 0
    end
end

include("split_bn_block_scale_moe.jl")
include("bound_device_properties_score_mod.jl")
include("attention_support.jl")
include("getting_started.jl")

@testset "execute: bindings are checked, never transposed" begin
    x = rand(Float32, 4, 3)
    Graph() do g
        tx = add_tensor!(g, x; name = "x")
        ty = set_output!(pointwise!(g, :neg, tx))
        build!(g; target = CPU)
        @test workspace_size(g) == 0
        @test plan_name(g) == "cpu_reference"
        @test [uid(t) for t in bound_tensors(g)] == sort([uid(tx), uid(ty)])
        y = zeros(Float32, 4, 3)
        Handle() do h
            @test_throws DimensionMismatch execute!(g, h, tx => zeros(Float32, 3, 4), ty => y)
            xt = PermutedDimsArray(permutedims(x), (2, 1))  # same size, row-major strides
            @test strides(xt) == (3, 1)
            @test_throws DimensionMismatch execute!(g, h, tx => xt, ty => y)
            @test_throws ArgumentError execute!(g, h, tx => Float64.(x), ty => y)
            e = try
                execute!(g, h, tx => x)  # the output is missing
                nothing
            catch err
                err
            end
            @test e isa CuDNNFEError && e.kind === :invalid_argument
            @test occursin("no binding", e.message)

            execute!(g, h, tx => x, ty => y)
            @test y == -x
            fill!(y, 0)
            execute!(g, h, Dict(uid(tx) => x, uid(ty) => y))
            @test y == -x

            # The ordered form, with arrays and with raw pointers.
            order = bound_tensors(g)
            bufs = [uid(t) == uid(tx) ? x : y for t in order]
            fill!(y, 0)
            execute_ordered!(g, h, bufs)
            @test y == -x
            fill!(y, 0)
            GC.@preserve x y begin
                execute_ordered!(g, h, [pointer(b) for b in bufs])
            end
            @test y == -x
            @test_throws CuDNNFEError execute_ordered!(g, h, [pointer(x)])
        end
        @test_throws CuDNNFEError pointwise!(g, :neg, tx)  # built graphs are immutable
    end

    # A broadcast input (stride 0) takes a buffer of size 1 along that dim.
    x = rand(Float32, 4, 3)
    col = rand(Float32, 4, 1)
    out = Graph() do g
        tx = add_tensor!(g, x)
        tb = add_tensor!(g, Float32, (4, 3); strides = (1, 0), name = "bcast")
        ty = set_output!(pointwise!(g, :add, tx, tb))
        only(run_graph(g, [tx => x, tb => col], [ty]))
    end
    @test approx(out, x .+ col)

    # A transposed output layout is described, and the bound array must match it.
    x = rand(Float32, 4, 3)
    Graph() do g
        tx = add_tensor!(g, x)
        ty = set_output!(pointwise!(g, :identity, tx))
        set_strides!(ty, (3, 1))  # row-major in Julia order
        build!(g; target = CPU)
        Handle() do h
            @test_throws DimensionMismatch execute!(g, h, tx => x, ty => zeros(Float32, 4, 3))
            ybuf = zeros(Float32, 3, 4)
            execute!(g, h, tx => x, ty => PermutedDimsArray(ybuf, (2, 1)))
            @test permutedims(ybuf) == x
        end
    end
end

@testset "serialization round trip" begin
    x = rand(Float32, 5, 4)
    w = rand(Float32, 4, 3)
    json = Graph(name = "saved") do g
        tx = add_tensor!(g, x; name = "x")
        tw = add_tensor!(g, w; name = "w")
        set_output!(pointwise!(g, :relu_fwd, matmul!(g, tx, tw; name = "mm"); name = "act"))
        serialize_graph(g)
    end
    @test json isa String
    @test startswith(lstrip(json), "{")
    @test occursin("saved", json)
    g = deserialize_graph(json)
    try
        @test node_count(g) == 2
        tx, tw, ty = find_tensor(g, "x"), find_tensor(g, "w"), find_tensor(g, "act::out")
        @test size(ty) == (5, 3)
        @test serialize_graph(g) == json  # loading and saving again changes nothing
        y = only(run_graph(g, [tx => x, tw => w], [ty]))
        @test approx(y, max.(Float64.(x) * Float64.(w), 0))
    finally
        close(g)
    end
    g2 = deserialize_graph(Vector{UInt8}(codeunits(json)))
    @test node_count(g2) == 2
    close(g2)
end

@testset "build options" begin
    Graph() do g
        tx = add_tensor!(g, Float32, (3,))
        set_output!(pointwise!(g, :abs, tx))
        @test_throws ArgumentError build!(g; target = :tpu)
        @test_throws ArgumentError build!(g; heur_modes = (:a, :b, :fallback, :a, :b))
        @test_throws ArgumentError build!(g; heur_modes = (:c,))
        Handle() do h
            build!(g, h; target = :cpu_reference, heur_modes = (:fallback,))
        end
        @test isbuilt(g)
        @test CuDNNFE.target(g) === :cpu_reference
        @test_throws CuDNNFEError build!(g; target = :cpu_reference)  # already built
    end
    Graph() do g
        tx = add_tensor!(g, Float32, (3,))
        set_output!(pointwise!(g, :abs, tx))
        if functional()
            # :auto picks the GPU, where cuDNN may have no engine for this graph.
            try
                build!(g)
                @test CuDNNFE.target(g) === :gpu
            catch e
                @test e isa CuDNNFEError && e.kind === :not_supported
            end
        else
            build!(g)  # :auto
            @test CuDNNFE.target(g) === :cpu_reference
        end
    end
end

@testset "plans: queries, blobs, filters, GPU-only calls" begin
    fnv1a64(bytes) = foldl((h, b) -> (h ⊻ UInt64(b)) * 0x00000100000001b3, bytes; init = 0xcbf29ce484222325)
    wrap_payload(p::String) = Vector{UInt8}(codeunits(
        "CUDNNFE-PLAN 1 $(ncodeunits(p)) $(string(fnv1a64(codeunits(p)); base = 16, pad = 16))\n" * p))
    x = rand(Float32, 3, 4)
    w = rand(Float32, 4, 2)
    expected = Float64.(x) * Float64.(w)
    mm_graph(; name = "mm", cols = 2) = begin
        g = Graph(name = name)
        tx = add_tensor!(g, Float32, (3, 4); name = "x")
        tw = add_tensor!(g, Float32, (4, cols); name = "w")
        set_output!(matmul!(g, tx, tw; name = "mm"))
        g
    end
    run_mm(g) = Handle() do h
        y = zeros(Float32, 3, 2)
        execute!(g, h, find_tensor(g, "x") => x, find_tensor(g, "w") => w, find_tensor(g, "mm::c") => y)
        y
    end

    # Queries before and after build; indices are 1-based.
    g = mm_graph()
    try
        @test_throws CuDNNFEError plan_count(g)
        @test_throws CuDNNFEError serialize_plan(g)
        @test_throws CuDNNFEError build_info(g)
        fp_unbuilt = fingerprint(g)
        @test length(fp_unbuilt) == 32 && all(in("0123456789abcdef"), fp_unbuilt)
        build!(g; target = CPU)
        @test plan_count(g) == 1
        p = plan_info(g, 1)
        @test p.index == 1 && p.name == "cpu_reference" && p.engine_id == -1
        @test p.workspace_size == 0 && isempty(p.numerical_notes) && isempty(p.behavior_notes)
        @test p.autotune_time_ms === nothing && p.selected && !p.chosen_by_autotune
        @test length(plans(g)) == 1 && only(plans(g)).name == "cpu_reference"
        @test selected_plan(g) == 1
        @test select_plan!(g, 1) === g
        for bad in (0, 2)
            err = try
                select_plan!(g, bad)
                nothing
            catch e
                e
            end
            @test err isa CuDNNFEError && err.kind === :invalid_argument
            @test occursin("out of range", err.message) && occursin("it has 1 plan", err.message)
        end
        @test approx(run_mm(g), expected)
        info = build_info(g)
        @test info.source === :built && info.total_ms >= info.validate_ms >= 0
        @test info.lower_ms == 0 && info.heuristics_ms == 0 && info.plan_build_ms == 0

        # Fingerprints ignore names and see shapes.
        other = mm_graph(name = "other")
        wider = mm_graph(cols = 5)
        @test fingerprint(other) == fp_unbuilt
        @test fingerprint(wider) != fp_unbuilt
        close(other)
        close(wider)

        # Plan blob: header, checksum, round trip.
        blob = serialize_plan(g)
        text = String(copy(blob))
        header, payload = split(text, '\n'; limit = 2)
        fields = split(header, ' ')
        @test fields[1:2] == ["CUDNNFE-PLAN", "1"]
        @test parse(Int, fields[3]) == ncodeunits(payload)
        @test fields[4] == string(fnv1a64(codeunits(payload)); base = 16, pad = 16)
        @test occursin("\"target\": \"CPU_REFERENCE\"", payload)
        @test occursin("\"fingerprint\": \"$(fingerprint(g))\"", payload)
        @test startswith(lstrip(serialize_graph(g)), "{")  # the description is plain JSON
        loaded = deserialize_plan(blob)
        try
            @test isbuilt(loaded) && CuDNNFE.target(loaded) === :cpu_reference
            @test build_info(loaded).source === :serialized
            @test serialize_plan(loaded) == blob
            @test approx(run_mm(loaded), expected)
        finally
            close(loaded)
        end
        Handle() do h
            l2 = deserialize_plan(text, h)
            @test build_info(l2).source === :serialized
            close(l2)
        end

        # Damaged blobs.
        flipped = copy(blob)
        flipped[end - 20] ⊻= 0x01
        for (bad, needle) in ((flipped, "checksum"), (blob[1:(end ÷ 2)], "plan blob"),
                              (UInt8[], "plan blob"), (Vector{UInt8}(codeunits(serialize_graph(g))), "plan blob"))
            err = try
                deserialize_plan(bad)
                nothing
            catch e
                e
            end
            @test err isa CuDNNFEError && err.kind === :bad_serialized_data
            @test occursin(needle, err.message)
        end

        # A blob made for another GPU: refused, naming both; rebuilt on request.
        top = "\n  \"target\": \"CPU_REFERENCE\","
        @test count(top, payload) == 1
        faked = replace(payload, top => "\n  \"target\": \"GPU\", \"cudnn_version\": 90100, " *
            "\"device\": {\"name\": \"Faked GPU\", \"sm\": 75}, \"plan\": {\"name\": \"eng0\", " *
            "\"engine_id\": 0, \"knobs\": [], \"workspace_size\": 0, \"numerical_notes\": [], " *
            "\"behavior_notes\": []},")
        foreign = wrap_payload(String(faked))
        err = try
            deserialize_plan(foreign)
            nothing
        catch e
            e
        end
        @test err isa CuDNNFEError && err.kind === :bad_serialized_data
        @test occursin("Faked GPU (sm_75)", err.message) && occursin("rebuild_on_mismatch", err.message)
        rebuilt = deserialize_plan(foreign; rebuild_on_mismatch = true)
        @test build_info(rebuilt).source === :rebuilt
        @test approx(run_mm(rebuilt), expected)
        close(rebuilt)

        # GPU-only calls are refused with the library's message.
        Handle() do h
            err = try
                autotune!(g, h)
                nothing
            catch e
                e
            end
            @test err isa CuDNNFEError && err.kind === :not_supported
            @test occursin("built for the CPU reference; autotune needs a GPU plan", err.message)
            err = try
                autotune!(g, h; min_iterations = 10, max_iterations = 5)
                nothing
            catch e
                e
            end
            @test err isa CuDNNFEError && err.kind === :invalid_argument
            @test occursin("min_iterations 10 and max_iterations 5", err.message)
            y = zeros(Float32, 3, 2)
            bindings = [find_tensor(g, "x") => x, find_tensor(g, "w") => w, find_tensor(g, "mm::c") => y]
            for f in (populate_cuda_graph!, update_cuda_graph!)
                err = try
                    f(g, h, Ptr{Cvoid}(UInt(0x1000)), bindings)
                    nothing
                catch e
                    e
                end
                @test err isa CuDNNFEError && err.kind === :not_supported
                @test occursin("a CUDA graph needs a GPU plan", err.message)
            end
        end
        @test selected_plan(g) == 1
    finally
        close(g)
    end

    # Build options reach the library (read back from the blob).
    g = mm_graph()
    try
        build!(g; target = CPU, heur_modes = (:b,), policy = :all, max_workspace_size = 1 << 20,
               exclude_numerical_notes = (:tensor_core, :nondeterministic),
               exclude_behavior_notes = :runtime_compilation,
               require_behavior_notes = (:supports_cuda_graph_native_api,),
               exclude_engines = [3, 7], max_plans = 4, disable_plan_cache = true, plan_cache_dir = "")
        payload = String(serialize_plan(g))
        for part in ("\"policy\": \"ALL\"", "\"heur_modes\": [\"B\"]", "\"max_workspace_size\": 1048576",
                     "\"exclude_numerical_notes\": [\"TENSOR_CORE\", \"NONDETERMINISTIC\"]",
                     "\"exclude_behavior_notes\": [\"RUNTIME_COMPILATION\"]",
                     "\"require_behavior_notes\": [\"SUPPORTS_CUDA_GRAPH_NATIVE_API\"]",
                     "\"exclude_engines\": [3, 7]", "\"max_plans\": 4")
            @test occursin(part, payload)
        end
    finally
        close(g)
    end
    for (kwargs, kind) in (((policy = :some,), ArgumentError), ((exclude_numerical_notes = (:fast,),), ArgumentError),
                           ((exclude_behavior_notes = true,), ArgumentError),
                           ((max_workspace_size = -5,), ArgumentError),
                           ((exclude_engines = [-3],), CuDNNFEError), ((max_plans = -1,), CuDNNFEError),
                           ((exclude_behavior_notes = (:runtime_compilation,),
                             require_behavior_notes = (:runtime_compilation,)), CuDNNFEError))
        g = mm_graph()
        @test_throws kind build!(g; target = CPU, kwargs...)
        @test !isbuilt(g)
        close(g)
    end

    # The plan cache: CPU builds leave it alone.
    clear_plan_cache!()
    stats = plan_cache_stats()
    @test stats == (entries = 0, hits = 0, misses = 0, disk_hits = 0, disk_writes = 0, disk_errors = 0)
    g = mm_graph()
    build!(g; target = CPU)
    @test plan_cache_stats() == stats
    close(g)
end

@testset "verify mode: build! keywords reach the library" begin
    # On the CPU reference: a right result passes; the library's test hook
    # plants a wrong element, caught as :verify_failed; `verify = false`
    # wins over the environment; bad values are refused (docs/verify.md).
    x = rand(Float32, 3, 4)
    w = rand(Float32, 4, 5)
    run_mm(; kw...) = Graph(name = "verified") do g
        tx = add_tensor!(g, Float32, (3, 4); name = "x")
        tw = add_tensor!(g, Float32, (4, 5); name = "w")
        y = set_output!(matmul!(g, tx, tw; name = "mm"))
        build!(g; target = CPU, kw...)
        Handle() do h
            out = zeros(Float32, 3, 5)
            execute!(g, h, tx => x, tw => w, y => out)
            out
        end
    end
    withenv("CUDNNFE_VERIFY" => nothing, "CUDNNFE_VERIFY_TEST_CORRUPT" => nothing) do
        @test approx(run_mm(verify = true, verify_samples = 4, verify_rtol = 0.01), Float64.(x) * Float64.(w))
        withenv("CUDNNFE_VERIFY_TEST_CORRUPT" => "1") do
            err = try
                run_mm(verify = :on, verify_rtol = 0.01)
                nothing
            catch e
                e
            end
            @test err isa CuDNNFEError && err.kind === :verify_failed
            @test occursin("verify: graph \"verified\"", err.message)
            @test occursin("matmul \"mm\"", err.message) && occursin("rtol 0.01", err.message)
            @test occursin("cpu_reference", err.message)
            withenv("CUDNNFE_VERIFY" => "1") do
                @test_throws CuDNNFEError run_mm()
                @test size(run_mm(verify = false)) == (3, 5)
            end
        end
        @test_throws ArgumentError run_mm(verify = :sometimes)
        err = try
            run_mm(verify_rtol = -1.0)
            nothing
        catch e
            e
        end
        @test err isa CuDNNFEError && err.kind === :invalid_argument && occursin("verify_rtol", err.message)
    end
end

@testset "one built graph, many tasks" begin
    x = rand(Float32, 64, 32)
    Graph() do g
        tx = add_tensor!(g, x)
        ty = set_output!(pointwise!(g, :sqrt, pointwise!(g, :abs, tx)))
        build!(g; target = CPU)
        tasks = map(1:8) do i
            Threads.@spawn begin
                Handle() do h
                    xi = x .* i
                    yi = zeros(Float32, size(x))
                    for _ in 1:10
                        execute!(g, h, tx => xi, ty => yi)
                    end
                    approx(yi, sqrt.(abs.(Float64.(xi))))
                end
            end
        end
        @test all(fetch, tasks)
    end
end

if functional() && get(ENV, "CUDNNFE_TEST_GPU", "auto") != "0"
    if Base.find_package("CUDA") !== nothing
        @info "CuDNNFE GPU tests with CUDA.jl"
        include("gpu_cuda.jl")
    else
        @info "CuDNNFE GPU tests with the CUDA runtime (CUDA.jl is not installed)"
        include("gpu_cudart.jl")
    end
else
    @info "CuDNNFE: skipping GPU tests" functional = functional() device_count = device_count()
end

end # @testset "CuDNNFE.jl"
