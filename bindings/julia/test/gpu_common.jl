# GPU tests, shared by gpu_cuda.jl (CUDA.jl) and gpu_cudart.jl (the CUDA
# runtime called directly). Included by runtests.jl, which calls
# `gpu_tests(dev)` from one of those files, `dev` being a NamedTuple of
# device-memory functions:
#   upload(A) -> d, zeros(T, dims) -> d, download(d) -> Array, free(d),
#   binding(d) (what execute! binds), address(d) (a raw address),
#   workspace(nbytes) -> d, stream() (a stream for execute!, or nothing),
#   sync().
# Each graph is built for the GPU and its results compared with the Julia
# references (and so with the CPU reference's, tested above).

# Builds for the GPU; false, with the library's reason logged, where cuDNN
# has no engine for the graph on this GPU.
function gpu_build!(g::Graph, h::Handle)
    try
        build!(g, h; target = :gpu)
    catch e
        if e isa CuDNNFEError && e.kind === :not_supported
            @info "CuDNNFE GPU test skipped: not supported here" message = e.message
            return false
        end
        rethrow()
    end
    @test CuDNNFE.target(g) === :gpu
    @test !isempty(plan_name(g))
    return true
end

# Runs a built graph with device copies of `inputs`; returns host outputs.
function gpu_run(dev, g::Graph, h::Handle, inputs, outputs::Vector{Tensor}; ordered = false)
    devs = Any[]
    bindings = Pair[]
    for (t, A) in inputs
        d = dev.upload(A)
        push!(devs, d)
        push!(bindings, t => dev.binding(d))
    end
    outdevs = Any[]
    perms = Vector{Int}[]
    for t in outputs
        # An output packed in another dimension order than column-major (a
        # channels-last convolution output) is stored in that order and bound
        # by address; it is put back in Julia order after the download.
        perm = sortperm(collect(strides(t)))
        d = dev.zeros(eltype(t), size(t)[perm])
        push!(outdevs, d)
        push!(perms, perm)
        push!(bindings, t => (issorted(perm) ? dev.binding(d) : dev.address(d)))
    end
    ws = dev.workspace(workspace_size(g))
    try
        if ordered
            byuid = Dict(uid(t) => dev.address(d) for (t, d) in zip(first.(bindings),
                                                                    vcat(devs, outdevs)))
            execute_ordered!(g, h, [byuid[uid(t)] for t in bound_tensors(g)];
                             workspace = dev.address(ws), workspace_size = workspace_size(g),
                             stream = dev.stream())
        else
            execute!(g, h, bindings; workspace = dev.address(ws),
                     workspace_size = workspace_size(g), stream = dev.stream())
        end
        dev.sync()
        return [issorted(p) ? dev.download(d) : permutedims(dev.download(d), invperm(p))
                for (d, p) in zip(outdevs, perms)]
    finally
        foreach(dev.free, devs)
        foreach(dev.free, outdevs)
        dev.free(ws)
    end
end

function gpu_tests(dev)
@testset "GPU" begin
    @test device_count() > 0
    @test cudnn_version() >= 90000

    Handle(0) do h
        @testset "matmul (HALF)" begin
            A = rand(Float16, 64, 32)
            B = rand(Float16, 32, 48)
            Graph(compute_dtype = Float32) do g
                ta, tb = add_tensor!(g, A), add_tensor!(g, B)
                tc = set_output!(matmul!(g, ta, tb))
                if gpu_build!(g, h)
                    C = only(gpu_run(dev, g, h, [ta => A, tb => B], [tc]))
                    @test approx(C, Float64.(A) * Float64.(B); rtol = 2e-2, atol = 2e-2)
                    C2 = only(gpu_run(dev, g, h, [ta => A, tb => B], [tc]; ordered = true))
                    @test C2 == C
                end
            end
        end

        @testset "convolution (HALF, WHCN)" begin
            x = rand(Float16, 16, 12, 8, 2) .- Float16(0.5)
            w = rand(Float16, 3, 3, 8, 16) .- Float16(0.5)
            Graph(compute_dtype = Float32) do g
                tx, tw = add_tensor!(g, x), add_tensor!(g, w)
                ty = set_output!(conv_fprop!(g, tx, tw; padding = 1, stride = (2, 1)))
                @test size(ty) == (8, 12, 16, 2)
                if gpu_build!(g, h)
                    y = only(gpu_run(dev, g, h, [tx => x, tw => w], [ty]))
                    yref = ref_conv(x, w; pre = (1, 1), post = (1, 1), stride = (2, 1),
                                    dilation = (1, 1))
                    @test approx(y, yref; rtol = 2e-2, atol = 5e-2)
                end
            end
        end

        @testset "conv + bias + relu fused (HALF)" begin
            x = rand(Float16, 8, 8, 16, 1) .- Float16(0.5)
            w = rand(Float16, 3, 3, 16, 32) .- Float16(0.5)
            bias = rand(Float16, 1, 1, 32, 1)
            Graph(compute_dtype = Float32, intermediate_dtype = Float32) do g
                tx, tw, tb = add_tensor!(g, x), add_tensor!(g, w), add_tensor!(g, bias)
                c = conv_fprop!(g, tx, tw; padding = 1)
                y = set_output!(pointwise!(g, :relu_fwd, pointwise!(g, :add, c, tb)))
                set_dtype!(y, Float16)
                if gpu_build!(g, h)
                    out = only(gpu_run(dev, g, h, [tx => x, tw => w, tb => bias], [y]))
                    yref = max.(ref_conv(x, w; pre = (1, 1), post = (1, 1), stride = (1, 1),
                                         dilation = (1, 1)) .+ Float64.(bias), 0)
                    @test approx(out, yref; rtol = 2e-2, atol = 5e-2)
                end
            end
        end

        @testset "sdpa (HALF, causal, GQA)" begin
            d, s, hq, hkv, B = 64, 128, 4, 2, 2
            q = Float16.(randn(Float32, d, s, hq, B) ./ 2)
            k = Float16.(randn(Float32, d, s, hkv, B) ./ 2)
            v = Float16.(randn(Float32, d, s, hkv, B) ./ 2)
            Graph(compute_dtype = Float32, intermediate_dtype = Float32) do g
                tq, tk, tv = add_tensor!(g, q), add_tensor!(g, k), add_tensor!(g, v)
                o, st = sdpa!(g, tq, tk, tv; causal = true, stats = true)
                set_output!(o)
                set_output!(st)
                if gpu_build!(g, h)
                    out, stats = gpu_run(dev, g, h, [tq => q, tk => k, tv => v], [o, st])
                    oref, stref = ref_sdpa(q, k, v; scale = 1 / sqrt(d), causal = :top_left)
                    @test approx(out, oref; rtol = 2e-2, atol = 2e-2)
                    @test approx(stats, stref; rtol = 1e-2, atol = 1e-2)
                end
            end
        end

        @testset "host arrays are refused for a GPU graph" begin
            Graph(compute_dtype = Float32) do g
                A = rand(Float16, 16, 16)
                ta, tb = add_tensor!(g, A), add_tensor!(g, A)
                tc = set_output!(matmul!(g, ta, tb))
                if gpu_build!(g, h)
                    @test_throws ArgumentError execute!(g, h, ta => A, tb => A,
                                                        tc => zeros(Float16, 16, 16))
                end
            end
        end

        @testset "plans: policy :all, select_plan!, autotune!, plan blob" begin
            A = rand(Float16, 64, 32)
            B = rand(Float16, 32, 48)
            Graph(compute_dtype = Float32) do g
                ta, tb = add_tensor!(g, A), add_tensor!(g, B)
                tc = set_output!(matmul!(g, ta, tb))
                built = try
                    build!(g, h; target = :gpu, policy = :all, disable_plan_cache = true)
                    true
                catch e
                    e isa CuDNNFEError && e.kind === :not_supported || rethrow()
                    @info "CuDNNFE GPU plans test skipped: not supported here" message = e.message
                    false
                end
                if built
                    ps = plans(g)
                    @test !isempty(ps)
                    @test all(p -> p.engine_id >= 0 && startswith(p.name, "eng"), ps)
                    for p in ps
                        select_plan!(g, p.index)
                        @test workspace_size(g) == p.workspace_size
                        @test plan_name(g) == p.name
                        C = only(gpu_run(dev, g, h, [ta => A, tb => B], [tc]))
                        @test approx(C, Float64.(A) * Float64.(B); rtol = 2e-2, atol = 2e-2)
                    end
                    best = autotune!(g, h; max_ms_per_plan = 20)
                    @test best == selected_plan(g)
                    info = plan_info(g, best)
                    @test info.chosen_by_autotune
                    @test something(info.autotune_time_ms, 0.0) > 0
                    loaded = deserialize_plan(serialize_plan(g), h)
                    @test build_info(loaded).source === :serialized
                    @test plan_name(loaded) == info.name
                    close(loaded)
                end
            end
        end
    end

    @testset "one GPU graph, several tasks with their own handles" begin
        A = rand(Float16, 32, 32)
        Graph(compute_dtype = Float32) do g
            ta, tb = add_tensor!(g, A), add_tensor!(g, A)
            tc = set_output!(matmul!(g, ta, tb))
            ok = Handle(h -> gpu_build!(g, h), 0)
            if ok
                expected = Float64.(A) * Float64.(A)
                tasks = map(1:4) do _
                    Threads.@spawn Handle(0) do h
                        C = only(gpu_run(dev, g, h, [ta => A, tb => A], [tc]))
                        approx(C, expected; rtol = 2e-2, atol = 2e-2)
                    end
                end
                @test all(fetch, tasks)
            end
        end
    end
end
end
