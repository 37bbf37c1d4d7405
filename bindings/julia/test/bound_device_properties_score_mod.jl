# Bound executions, device properties, set_ragged_offset! and score
# modifiers on the CPU reference, against plain Julia: a bound run equals
# a * b and reads its arrays again at each run; `o`'s ragged offsets given
# after sdpa! equal the padded attention on the valid rows; softcap as a
# score modifier, forward and backward; bad input named. Included by
# runtests.jl (which defines approx, CPU and ref_attention).

function failure_of(f)
    try
        f()
        nothing
    catch err
        err
    end
end

@testset "bind_execution: bound runs on the CPU reference" begin
    a, b = randn(Float32, 3, 4), randn(Float32, 4, 5)
    Graph() do g
        ta, tb = add_tensor!(g, a; name = "a"), add_tensor!(g, b; name = "b")
        tc = matmul!(g, ta, tb)
        set_output!(tc)
        build!(g; target = CPU)
        c = fill(NaN32, 3, 5)
        arrays = Dict(uid(ta) => a, uid(tb) => b, uid(tc) => c)
        buffers = [arrays[uid(t)] for t in bound_tensors(g)]
        Handle() do h
            be = bind_execution(g, h, buffers)
            @test cuda_graph_mode(be) === :off
            execute!(be)
            @test approx(c, Float64.(a) * Float64.(b))
            a .*= -2  # the bound arrays are read again at each run
            execute!(be)
            @test approx(c, Float64.(a) * Float64.(b))
            close(be)
            close(be)  # idempotent
            @test !isopen(be)
            @test failure_of(() -> execute!(be)) isa ArgumentError

            for mode in (:native, :capture, :auto)
                err = failure_of(() -> bind_execution(g, h, buffers; cuda_graph = mode))
                @test err isa CuDNNFEError && err.kind === :not_supported
                @test occursin("CPU reference", err.message)
            end
            @test failure_of(() -> bind_execution(g, h, buffers[1:2])) isa ArgumentError
            @test failure_of(() -> bind_execution(g, h, buffers; cuda_graph = :sometimes)) isa
                  ArgumentError
            # A raw NULL address is refused naming its tensor.
            raw = Ptr{Cvoid}[pointer(x) for x in buffers]
            raw[2] = C_NULL
            err = GC.@preserve buffers failure_of(() -> bind_execution(g, h, raw))
            @test err isa CuDNNFEError && err.kind === :invalid_argument
            @test occursin("data[1] for tensor \"$(tensor_name(bound_tensors(g)[2]))\"", err.message)
        end
    end
end

# The properties of an H100 SXM as cuDNN writes them (tests/test_device_properties.cpp's).
const H100_JSON = string(
    """{"maxGridSize":[2147483647,65535,65535],"maxBlockSize":[1024,1024,64],""",
    """"regsPerBlock":65536,"multiProcessorCount":132,"smCountOrigin":0,"warpSize":32,""",
    """"maxSharedMemoryPerBlock":49152,"maxSharedMemoryPerBlockOptin":232448,""",
    """"oversizedSharedMemoryPerBlock":0,"reservedSharedMemoryPerBlock":1024,""",
    """"maxRegistersPerSM":65536,"maxCtasPerSM":32,"maxThreadsPerBlock":1024,""",
    """"maxThreadsPerSM":2048,"pciDeviceId":0,"isTccDriver":0,"supportCoopLaunch":1,""",
    """"smClockRateKHz":1980000,"memClockRateKHz":2619000,"memoryBusWidth":5120,""",
    """"l2CacheSize":52428800,"deviceName":"NVIDIA H100 80GB HBM3","deviceVer":900,""",
    """"driverVer":12080,"cudaDeviceId":0,"totalGlobalMem":85031714816}""")

@testset "DeviceProperties: bad JSON, round trip, a build without a GPU" begin
    for (bad, what) in (("deviceVer=900", "not JSON"), ("[900, 132]", "not an object"),
                        (H100_JSON[1:40], "not JSON"))
        err = failure_of(() -> DeviceProperties(bad))
        @test err isa CuDNNFEError && err.kind === :bad_serialized_data
        @test occursin(what, err.message)
    end
    p = try
        DeviceProperties(H100_JSON)
    catch err
        (err isa CuDNNFEError && err.kind in (:cudnn_unavailable, :not_supported)) || rethrow()
        @info "skipping the deviceless build: $(err.message)"
        nothing
    end
    if p !== nothing
        json = serialize_device_properties(p)
        @test occursin("\"deviceVer\"", json)
        again = DeviceProperties(json)
        @test serialize_device_properties(again) == json
        close(again)
        Graph(; name = "deviceless_conv", io_dtype = Float32, compute_dtype = Float32) do g
            x = add_tensor!(g, Float32, (10, 10, 8, 2); strides = (8, 80, 1, 800), name = "X")
            w = add_tensor!(g, Float32, (3, 3, 8, 16); strides = (8, 24, 1, 72), name = "W")
            set_output!(conv_fprop!(g, x, w; padding = 1))
            err = failure_of(() -> build!(g; target = CPU, device_properties = p))
            @test err isa CuDNNFEError && occursin("CPU_REFERENCE", err.message)
            build!(g; device_properties = p)
            @test CuDNNFE.target(g) === :gpu
            @test occursin("NVIDIA H100 80GB HBM3", String(serialize_plan(g)))
        end
        close(p)
        @test failure_of(() -> serialize_device_properties(p)) isa ArgumentError
    end
end

# The valid rows of a (w, s, h, b) array packed by sequence (THD: token-major,
# then head), the tail NaN; and the element offset of each sequence (b + 1).
function pack_thd(dense, lens)
    w, s, h, b = size(dense)
    buf = fill(NaN32, w * s * h * b)
    offsets = zeros(Int32, b + 1)
    at = 0
    for n in 1:b
        offsets[n] = at
        for i in 1:lens[n], hh in 1:h
            buf[(at + ((i - 1) * h + hh - 1) * w + 1):(at + ((i - 1) * h + hh) * w)] .= dense[:, i, hh, n]
        end
        at += lens[n] * h * w
    end
    offsets[b + 1] = at
    return buf, offsets
end

@testset "set_ragged_offset!: o's offsets given after sdpa!" begin
    d, sq, skv, h, b = 4, 4, 5, 2, 2
    lq, lkv = Int32[3, 4], Int32[5, 2]
    q, k, v = randn(Float32, d, sq, h, b), randn(Float32, d, skv, h, b), randn(Float32, d, skv, h, b)
    (qp, offq), (kp, offkv), (vp, _) = pack_thd(q, lq), pack_thd(k, lkv), pack_thd(v, lkv)
    thd(s) = (1, h * d, d, s * h * d)
    got = Graph() do g
        tq = add_tensor!(g, Float32, (d, sq, h, b); strides = thd(sq), name = "q")
        tk = add_tensor!(g, Float32, (d, skv, h, b); strides = thd(skv), name = "k")
        tv = add_tensor!(g, Float32, (d, skv, h, b); strides = thd(skv), name = "v")
        tlq, tlkv = add_tensor!(g, Int32, (1, 1, 1, b)), add_tensor!(g, Int32, (1, 1, 1, b))
        trq, trkv = add_tensor!(g, Int32, (1, 1, 1, b + 1)), add_tensor!(g, Int32, (1, 1, 1, b + 1))
        o, _ = sdpa!(g, tq, tk, tv; scale = 1 / sqrt(d), seq_len_q = tlq, seq_len_kv = tlkv,
                     ragged_offset_q = trq, ragged_offset_k = trkv, ragged_offset_v = trkv)
        set_ragged_offset!(g, o, trq)
        set_output!(o)
        lonely = add_tensor!(g, Float32, (d, sq, h, b); name = "lonely")
        err = failure_of(() -> set_ragged_offset!(g, lonely, trq))
        @test err isa CuDNNFEError && err.kind === :invalid_argument
        build!(g; target = CPU)
        out = fill(NaN32, d * sq * h * b)
        # Packed buffers have no Julia array of the tensors' strides: raw addresses.
        GC.@preserve qp kp vp out Handle() do hd
            execute!(g, hd, [tq => pointer(qp), tk => pointer(kp), tv => pointer(vp),
                             tlq => reshape(lq, 1, 1, 1, b), tlkv => reshape(lkv, 1, 1, 1, b),
                             trq => reshape(offq, 1, 1, 1, b + 1),
                             trkv => reshape(offkv, 1, 1, 1, b + 1), o => pointer(out)])
        end
        out
    end
    want, _, _ = ref_attention(q, k, v; scale = 1 / sqrt(d), seq_len_q = lq, seq_len_kv = lkv)
    packed, _ = pack_thd(Float32.(want), lq)
    n = offq[b + 1]
    @test approx(got[1:n], packed[1:n])
    @test all(isnan, got[(n + 1):end])  # nothing past the packed rows is written
end

# softcap: tanh(s / c) * c, its placeholder and its tanh.
function softcap!(g, size, c)
    cap = add_scalar!(g, c; dtype = Float32)
    t = Ref{Any}(nothing)
    score = score_mod!(g, size; name = "score") do s
        t[] = pointwise!(g, :tanh_fwd, pointwise!(g, :div, s, cap))
        pointwise!(g, :mul, t[], cap)
    end
    return score, t[]
end

@testset "score modifiers: softcap forward and backward" begin
    d, sq, skv, h, c = 4, 3, 5, 2, 0.7
    q, k, v, dO = randn(Float32, d, sq, h, 1), randn(Float32, d, skv, h, 1),
                  randn(Float32, d, skv, h, 1), randn(Float32, d, sq, h, 1)
    scores = (skv, sq, h, 1)
    o, stats = Graph() do g
        tq, tk, tv = add_tensor!(g, q), add_tensor!(g, k), add_tensor!(g, v)
        score, _ = softcap!(g, scores, c)
        to, tst = sdpa!(g, tq, tk, tv; stats = true, score_mod = score)
        set_output!(to)
        set_output!(tst)
        run_graph(g, [tq => q, tk => k, tv => v], [to, tst])
    end
    # Plain Julia: s = tanh(scale q.k / c) c, P = softmax(s), o = P v.
    scale = 1 / sqrt(d)
    T = [tanh(scale * sum(Float64.(q[:, i, hh, 1]) .* k[:, j, hh, 1]) / c) for j in 1:skv, i in 1:sq, hh in 1:h]
    S = T .* c
    P = exp.(S .- maximum(S; dims = 1))
    P ./= sum(P; dims = 1)
    want_o = zeros(d, sq, h, 1)
    want_dv = zeros(d, skv, h, 1)
    for hh in 1:h
        want_o[:, :, hh, 1] = Float64.(v[:, :, hh, 1]) * P[:, :, hh]
        want_dv[:, :, hh, 1] = Float64.(dO[:, :, hh, 1]) * P[:, :, hh]'
    end
    @test approx(o, want_o)

    dq, dv = Graph() do g
        tq, tk, tv = add_tensor!(g, q), add_tensor!(g, k), add_tensor!(g, v)
        to, tdo, tst = add_tensor!(g, o), add_tensor!(g, dO), add_tensor!(g, stats)
        score, t = softcap!(g, scores, c)
        one = add_scalar!(g, 1.0; dtype = Float32)
        ds = score_mod!(g, scores; name = "dS'") do dsp
            pointwise!(g, :mul, dsp, pointwise!(g, :sub, one, pointwise!(g, :mul, t, t)))
        end
        tdq, _, tdv = sdpa_backward!(g, tq, tk, tv, to, tdo, tst; score_mod = score,
                                     score_mod_bprop = ds)
        set_output!(tdq)
        set_output!(tdv)
        run_graph(g, [tq => q, tk => k, tv => v, to => o, tdo => dO, tst => stats], [tdq, tdv])
    end
    @test approx(dv, want_dv)
    # dq = scale * K dS, dS = P (dP - rowsum(P dP)) (1 - tanh^2).
    want_dq = zeros(d, sq, h, 1)
    for hh in 1:h
        dP = Float64.(v[:, :, hh, 1])' * Float64.(dO[:, :, hh, 1])
        dS = P[:, :, hh] .* (dP .- sum(P[:, :, hh] .* dP; dims = 1)) .* (1 .- T[:, :, hh] .^ 2)
        want_dq[:, :, hh, 1] = scale .* (Float64.(k[:, :, hh, 1]) * dS)
    end
    @test approx(dq, want_dq; rtol = 1e-3)
end

@testset "score modifiers: scope rules" begin
    Graph() do g
        x = add_tensor!(g, Float32, (5, 3, 2, 1); name = "x")
        err = failure_of(() -> begin_score_mod!(g, (5, 3, 2)))
        @test err isa CuDNNFEError && err.kind === :invalid_argument && occursin("4 dims", err.message)
        score = begin_score_mod!(g, (5, 3, 2, 1))
        @test size(score) == (5, 3, 2, 1)
        err = failure_of(() -> begin_score_mod!(g, (5, 3, 2, 1)))
        @test err isa CuDNNFEError && err.kind === :wrong_state
        # A result that does not depend on the placeholder is refused.
        err = failure_of(() -> end_score_mod!(g, score, pointwise!(g, :neg, x)))
        @test err isa CuDNNFEError && err.kind === :invalid_graph
        end_score_mod!(g, score, pointwise!(g, :neg, score))
    end
end
