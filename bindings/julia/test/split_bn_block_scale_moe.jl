# The ops of issue 16 on the CPU reference, against plain Julia: the split
# batch norm, block-scale quantize / dequantize, the MoE grouped matmul and
# its backward, execute_with_overrides! against a fresh graph of the smaller
# shape, and the KernelCache; and bad input naming node and tensor.
# Included by runtests.jl (which defines run_graph, approx and CPU).

function failure16(f)
    try
        f()
        nothing
    catch err
        err
    end
end

@testset "split batch norm: genstats!, bn_finalize!, dbn_weight!" begin
    # x (S, C, N) with C = 4; per-channel tensors (1, C, 1).
    x = randn(Float32, 5, 4, 3)
    scale, bias = randn(Float32, 1, 4, 1), randn(Float32, 1, 4, 1)
    rm, rv = randn(Float32, 1, 4, 1), rand(Float32, 1, 4, 1) .+ 2
    X = Float64.(x)
    m = 15
    s1 = sum(X; dims = (1, 3))
    s2 = sum(X .^ 2; dims = (1, 3))
    out = Graph() do g
        tx, ts, tb = add_tensor!(g, x), add_tensor!(g, scale), add_tensor!(g, bias)
        trm, trv = add_tensor!(g, rm), add_tensor!(g, rv)
        eps = add_scalar!(g, 1e-3; dtype = Float32)
        cnt = add_scalar!(g, m; dtype = Int64)
        mom = add_scalar!(g, 0.25; dtype = Float32)
        ts1, ts2 = genstats!(g, tx; name = "gs")
        @test size(ts1) == (1, 4, 1)
        outs = bn_finalize!(g, ts1, ts2, ts, tb, eps, cnt; running_mean = trm, running_var = trv,
                            momentum = mom, name = "fin")
        @test tensor_name(outs[4]) == "fin::inv_variance"
        all = [ts1, ts2, outs...]
        foreach(set_output!, all)
        run_graph(g, [tx => x, ts => scale, tb => bias, trm => rm, trv => rv], all)
    end
    mu = s1 ./ m
    var = s2 ./ m .- mu .^ 2
    iv = 1 ./ sqrt.(var .+ 1e-3)
    @test approx(out[1], s1) && approx(out[2], s2)
    @test approx(out[3], scale .* iv)
    @test approx(out[4], bias .- mu .* scale .* iv)
    @test approx(out[5], mu) && approx(out[6], iv; rtol = 1e-3)
    @test approx(out[7], 0.75 .* rm .+ 0.25 .* mu)
    @test approx(out[8], 0.75 .* rv .+ 0.25 .* var .* m ./ (m - 1); rtol = 1e-3)

    dy = randn(Float32, size(x))
    mean32, iv32 = Float32.(mu), Float32.(iv)
    out = Graph() do g
        tdy, tx = add_tensor!(g, dy), add_tensor!(g, x)
        tm, tiv, ts = add_tensor!(g, mean32), add_tensor!(g, iv32), add_tensor!(g, scale)
        outs = collect(dbn_weight!(g, tdy, tx, tm, tiv, ts; name = "dbw"))
        foreach(set_output!, outs)
        run_graph(g, [tdy => dy, tx => x, tm => mean32, tiv => iv32, ts => scale], outs)
    end
    xhat = (X .- mean32) .* iv32
    ds = sum(dy .* xhat; dims = (1, 3))
    db = sum(Float64.(dy); dims = (1, 3))
    k = scale .* iv32
    @test approx(out[1], ds; rtol = 1e-3, atol = 1e-4) && approx(out[2], db; rtol = 1e-3, atol = 1e-4)
    @test approx(out[3], k)
    @test approx(out[4], -k .* iv32 .* ds ./ m; rtol = 1e-3, atol = 1e-4)
    @test approx(out[5], k .* (mean32 .* iv32 .* ds .- db) ./ m; rtol = 1e-3, atol = 1e-4)

    Graph() do g
        t1 = add_tensor!(g, Float32, (6,); name = "x1d")
        e = failure16(() -> genstats!(g, t1; name = "gs"))
        @test e isa CuDNNFEError && occursin("gs", e.message) && occursin("x1d", e.message)
        a, b = add_tensor!(g, Float32, (4, 3, 2); name = "dy"), add_tensor!(g, Float32, (5, 3, 2); name = "x_other")
        c = add_tensor!(g, Float32, (1, 3, 1))
        e = failure16(() -> dbn_weight!(g, a, b, c, c, c; name = "dbw"))
        @test e isa CuDNNFEError && occursin("dbw", e.message) && occursin("x_other", e.message)
    end
end

@testset "block-scale quantize and dequantize round trip" begin
    # Blocks of 32 along the first Julia dim (the C library's last).
    x = randn(Float32, 64, 3) .* Float32[1 + i % 7 for i in 0:63]
    q, s, back = Graph() do g
        tx = add_tensor!(g, x; name = "x")
        y, sc = block_scale_quantize!(g, tx; name = "q")
        @test size(sc) == (2, 3)
        z = block_scale_dequantize!(g, y, sc; name = "dq")
        set_dtype!(z, Float32)
        foreach(set_output!, (y, sc, z))
        build!(g; target = CPU)
        yb, sb, zb = zeros(UInt8, 64, 3), zeros(UInt8, 2, 3), zeros(Float32, 64, 3)
        Handle() do h
            execute!(g, h, tx => x, y => yb, sc => sb, z => zb)
        end
        (yb, sb, zb)
    end
    for col in 1:3, blk in 1:2
        rows = (32 * (blk - 1) + 1):(32 * blk)
        amax = maximum(abs, x[rows, col])
        @test s[blk, col] == UInt8(ceil(Int, log2(amax / 448)) + 127)
        step = 2.0^(Int(s[blk, col]) - 127)
        tol = max.(abs.(x[rows, col]) ./ 16, step * 2.0^-10) .* 1.0001
        @test all(abs.(back[rows, col] .- x[rows, col]) .<= tol)
    end
    Graph() do g
        t = add_tensor!(g, Float32, (48, 2); name = "x_odd")
        e = failure16(() -> block_scale_quantize!(g, t; name = "q"))
        @test e isa CuDNNFEError && occursin("q", e.message) && occursin("x_odd", e.message)
        @test_throws ArgumentError block_scale_quantize!(g, t; dims = 3)
    end
end

@testset "MoE grouped matmul (none) and backward against loops" begin
    # Julia order: token (K, T, 1), weight (N, K, E) with strides (K, 1, K*N).
    K, T, E, N = 5, 10, 3, 4
    token = Float32.(rand(-3:3, K, T, 1))
    w = Float32.(rand(-3:3, K, N, E))  # w[k, n, e]: packed, so strides (1, K, K*N) of (K, N, E)
    dout = Float32.(rand(-3:3, N, T, 1))
    offsets = Int32[0, 2, 2]  # the second group is empty
    bounds = [0, 2, 2, T]
    out = Graph() do g
        tt = add_tensor!(g, token; name = "token")
        tw = add_tensor!(g, Float32, (N, K, E); strides = (K, 1, K * N), name = "weight")
        to = add_tensor!(g, Int32, (1, 1, 3); name = "first_token_offset")
        o = set_output!(moe_grouped_matmul!(g, tt, tw, to; compute_dtype = Float32, name = "moe"))
        set_dtype!(o, Float32)
        @test size(o) == (N, T, 1)
        wview = PermutedDimsArray(w, (2, 1, 3))  # (N, K, E) with strides (K, 1, K*N)
        only(run_graph(g, [tt => token, tw => wview, to => reshape(offsets, 1, 1, 3)], [o]))
    end
    want = zeros(Float32, N, T, 1)
    for grp in 1:E, r in (bounds[grp] + 1):bounds[grp + 1]
        want[:, r, 1] = w[:, :, grp]' * token[:, r, 1]
    end
    @test out == want

    dw = Graph() do g
        td = add_tensor!(g, dout; name = "doutput")
        tt = add_tensor!(g, token; name = "token")
        to = add_tensor!(g, Int32, (1, 1, 3); name = "first_token_offset")
        d = set_output!(moe_grouped_matmul_backward!(g, td, tt, to; name = "moe_bwd"))
        set_dtype!(d, Float32)
        @test size(d) == (N, K, E) && strides(d) == (K, 1, K * N)
        build!(g; target = CPU)
        buf = zeros(Float32, K, N, E)
        Handle() do h
            execute!(g, h, td => dout, tt => token, to => reshape(offsets, 1, 1, 3),
                     d => PermutedDimsArray(buf, (2, 1, 3)))
        end
        buf
    end
    wantw = zeros(Float32, K, N, E)
    for grp in 1:E, r in (bounds[grp] + 1):bounds[grp + 1]
        wantw[:, :, grp] .+= token[:, r, 1] * dout[:, r, 1]'
    end
    @test dw == wantw

    Graph() do g
        tt = add_tensor!(g, Float32, (5, 4, 1); name = "token")
        tw = add_tensor!(g, Float32, (3, 5, 2); name = "weight")
        to = add_tensor!(g, Int32, (1, 1, 2); name = "first_token_offset")
        e = failure16(() -> moe_grouped_matmul!(g, tt, tw, to; mode = :gather, name = "moe_g"))
        @test e isa CuDNNFEError && occursin("moe_g", e.message) && occursin("token_index", e.message)
        @test_throws ArgumentError moe_grouped_matmul!(g, tt, tw, to; mode = :sideways)
    end
end

@testset "execute_with_overrides! matches a fresh graph of the smaller shape" begin
    # c = a * b with a (k, m) ... in Julia order: matmul!(g, a, b) is a * b.
    a, b = randn(Float32, 2, 4), randn(Float32, 4, 3)
    big = Graph() do g
        ta = add_tensor!(g, Float32, (6, 4); name = "a")
        tb = add_tensor!(g, b; name = "b")
        tc = set_output!(matmul!(g, ta, tb))
        build!(g; target = CPU, override_shape_enabled = true)
        c = zeros(Float32, 2, 3)
        Handle() do h
            execute_with_overrides!(g, h, [ta => a, tb => b, tc => c], [ta => (2, 4), tc => (2, 3)])
            e = failure16(() -> execute_with_overrides!(g, h, [ta => a, tb => b, tc => zeros(Float32, 6, 3)],
                                                        [ta => (2, 4)]))
            @test e isa CuDNNFEError && e.kind === :invalid_argument &&
                  occursin("give it an override too", e.message)
            @test_throws DimensionMismatch execute_with_overrides!(g, h, [ta => a, tb => b, tc => c],
                                                                   [ta => (2, 4)])
        end
        c
    end
    @test approx(big, a * b)
    Graph() do g
        ta, tb = add_tensor!(g, a), add_tensor!(g, b)
        tc = set_output!(matmul!(g, ta, tb))
        @test only(run_graph(g, [ta => a, tb => b], [tc])) == big
        Handle() do h
            e = failure16(() -> execute_with_overrides!(g, h, [ta => a, tb => b, tc => zeros(Float32, 2, 3)],
                                                        [ta => (2, 4)]))
            @test e isa CuDNNFEError && e.kind === :wrong_state
        end
    end
end

@testset "KernelCache: serialize / deserialize round trip and errors" begin
    KernelCache() do kc
        e = failure16(() -> serialize_kernel_cache(kc))
        @test e isa CuDNNFEError && e.kind === :wrong_state
        e = failure16(() -> deserialize_kernel_cache!(kc, "not json"))
        @test e isa CuDNNFEError && e.kind === :bad_serialized_data
        deserialize_kernel_cache!(kc, """{"kernels": []}""")
        @test serialize_kernel_cache(kc) == """{"kernels": []}"""
        e = failure16(() -> deserialize_kernel_cache!(kc, "{}"))
        @test e isa CuDNNFEError && e.kind === :wrong_state
        Graph() do g
            tx = add_tensor!(g, Float32, (2,))
            ty = set_output!(pointwise!(g, :neg, tx))
            build!(g; target = CPU, kernel_cache = kc)
            @test isbuilt(g)
        end
    end
    kc = KernelCache()
    close(kc)
    close(kc)
    @test !isopen(kc)
    @test_throws ArgumentError serialize_kernel_cache(kc)
end
