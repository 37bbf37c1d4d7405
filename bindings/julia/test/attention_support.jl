# The 0.4 additions on the CPU reference, no GPU needed: validate_for_build!
# applies a GPU's support rules for `sm_version` (ALiBi without a causal mask
# is refused for a GPU, accepted by the CPU reference); negative `sm_count` /
# `sm_version` are invalid arguments; sdpa! writes `score_max`,
# `score_sum_exp` and `rng_dump` into tensors the caller made, checked
# against plain Julia (stats = max + log(sum), O = the attention with the
# dumped mask); sdpa_backward! takes `max_total_seq_len_q` / `_kv`;
# paged_cache_load! gathers a paged cache (checked against loops).
# Included by runtests.jl (which defines approx, CPU and ref_attention).

function thrown(f)
    try
        f()
        nothing
    catch err
        err
    end
end

# A Float16 sdpa! node named "attn" on (64, 16, 4, 2) queries and
# (64, 32, 2, 2) keys and values; `o` marked as an output.
function half_sdpa!(g; kwargs...)
    tq = add_tensor!(g, Float16, (64, 16, 4, 2); name = "q")
    tk = add_tensor!(g, Float16, (64, 32, 2, 2); name = "k")
    tv = add_tensor!(g, Float16, (64, 32, 2, 2); name = "v")
    o, _ = sdpa!(g, tq, tk, tv; name = "attn", kwargs...)
    return set_output!(o)
end

@testset "validate_for_build!: a GPU's support rules from sm_version" begin
    Graph() do g
        half_sdpa!(g; alibi = true)
        err = thrown(() -> validate_for_build!(g; target = :gpu, sm_version = 90))
        @test err isa CuDNNFEError && err.kind === :not_supported
        @test occursin("sdpa \"attn\"", err.message)
        @test occursin("alibi_mask needs a right bound of 0", err.message)
        @test validate_for_build!(g; target = CPU) === g
        Handle() do h
            @test validate_for_build!(g, h; target = CPU) === g
            @test validate_for_build!(g; handle = h, target = CPU) === g
            err = thrown(() -> validate_for_build!(g, h; target = :gpu, sm_version = 90))
            @test err isa CuDNNFEError && err.kind === :not_supported
        end
        # Validation left the graph buildable: the CPU reference runs ALiBi
        # without a causal mask.
        build!(g; target = CPU)
        @test isbuilt(g) && CuDNNFE.target(g) === CPU
        err = thrown(() -> validate_for_build!(g; target = CPU))
        @test err isa CuDNNFEError && err.kind === :wrong_state
    end
    # With the causal mask cuDNN needs, the GPU rules accept it...
    Graph() do g
        half_sdpa!(g; alibi = true, causal = true)
        @test validate_for_build!(g; target = :gpu, sm_version = 90) === g
    end
    # ...but not with bottom-right alignment.
    Graph() do g
        half_sdpa!(g; alibi = true, causal = :bottom_right)
        err = thrown(() -> validate_for_build!(g; target = :gpu, sm_version = 90))
        @test err isa CuDNNFEError && err.kind === :not_supported
        @test occursin("alibi_mask", err.message)
        @test validate_for_build!(g; target = CPU) === g
    end
end

@testset "sm_count and sm_version" begin
    Graph() do g
        half_sdpa!(g)
        @test validate_for_build!(g; target = CPU, sm_count = 8, sm_version = 90) === g
        for (kw, message) in (((sm_count = -1,), "sm_count is -1"),
                              ((sm_version = -90,), "sm_version is -90"))
            err = thrown(() -> validate_for_build!(g; target = CPU, kw...))
            @test err isa CuDNNFEError && err.kind === :invalid_argument
            @test occursin(message, err.message)
        end
        err = thrown(() -> build!(g; target = CPU, sm_count = -4))
        @test err isa CuDNNFEError && err.kind === :invalid_argument
        @test occursin("sm_count is -4", err.message)
        @test !isbuilt(g)
        build!(g; target = CPU, sm_count = 4)
        @test isbuilt(g)
    end
end

@testset "sdpa!: score_max, score_sum_exp and rng_dump" begin
    d, sq, skv, hq, B = 4, 3, 5, 2, 1
    q, k, v = randn(Float32, d, sq, hq, B), randn(Float32, d, skv, hq, B), randn(Float32, d, skv, hq, B)
    scale = 1 / sqrt(d)
    o, st, m, z = Graph() do g
        tq, tk, tv = add_tensor!(g, q), add_tensor!(g, k), add_tensor!(g, v)
        # cudnn-frontend's order: marked as outputs before sdpa! takes them.
        tmax = set_output!(add_tensor!(g, Float32, (1, sq, hq, B); name = "score_max"))
        tsum = set_output!(add_tensor!(g, Float32, (1, sq, hq, B); name = "score_sum_exp"))
        @test tensor_kind(tmax) === :input
        to, tst = sdpa!(g, tq, tk, tv; stats = true, score_max = tmax, score_sum_exp = tsum)
        @test tensor_kind(tmax) === :output && tensor_kind(tsum) === :output
        run_graph(g, [tq => q, tk => k, tv => v], [set_output!(to), set_output!(tst), tmax, tsum])
    end
    scores(i, h, b) = [scale * dot(Float64.(q[:, i, h, b]), Float64.(k[:, j, h, b])) for j in 1:skv]
    want_m = [maximum(scores(i, h, b)) for _ in 1:1, i in 1:sq, h in 1:hq, b in 1:B]
    want_z = [sum(exp.(scores(i, h, b) .- want_m[1, i, h, b])) for _ in 1:1, i in 1:sq, h in 1:hq, b in 1:B]
    @test approx(m, want_m)
    @test approx(z, want_z)
    @test approx(st, Float64.(m) .+ log.(Float64.(z)))  # stats = m + log(Z)
    oref, sref, _ = ref_attention(q, k, v; scale = scale)
    @test approx(o, oref) && approx(st, sref)

    # rng_dump: the drawn dropout mask, (s_kv, s_q, h_q, b); O is the
    # attention with that mask given back.
    p = 0.25
    od, mask = Graph() do g
        tq, tk, tv = add_tensor!(g, q), add_tensor!(g, k), add_tensor!(g, v)
        seed, offset = add_scalar!(g, 99; dtype = Int64), add_scalar!(g, 7; dtype = Int64)
        dump = add_tensor!(g, Float32, (skv, sq, hq, B); name = "rng_dump")
        to, _ = sdpa!(g, tq, tk, tv; dropout_probability = p, dropout_seed = seed,
                      dropout_offset = offset, rng_dump = dump, unfuse_fma = true)
        run_graph(g, [tq => q, tk => k, tv => v], [set_output!(to), dump])
    end
    @test all(x -> x == 0 || x == 1, mask)
    @test approx(od, ref_attention(q, k, v; scale = scale, dropout = (mask, 1 / (1 - p)))[1])
end

@testset "sdpa_backward!: max_total_seq_len_q / _kv" begin
    Graph() do g
        x = add_tensor!(g, Float16, (64, 8, 2, 1); name = "x")
        st = add_tensor!(g, Float32, (1, 8, 2, 1); name = "stats")
        err = thrown(() -> sdpa_backward!(g, x, x, x, x, x, st; max_total_seq_len_kv = -1))
        @test err isa CuDNNFEError && err.kind === :invalid_argument
        @test occursin("max_total_seq_len_kv is -1", err.message)
        grads = sdpa_backward!(g, x, x, x, x, x, st; max_total_seq_len_q = 64,
                               max_total_seq_len_kv = 96, name = "bwd")
        foreach(set_output!, grads)
        # Without ragged offsets cudnn-frontend refuses them for a GPU.
        err = thrown(() -> validate_for_build!(g; target = :gpu, sm_version = 90))
        @test err isa CuDNNFEError && err.kind === :not_supported
        @test occursin("max_total_seq_len", err.message)
        @test validate_for_build!(g; target = CPU) === g
    end
end

@testset "paged_cache_load! against loops" begin
    # Julia order: container (d, page_size, h, num_pages), page table
    # (1, pages, 1, b) of 0-based page numbers, lengths (1, 1, 1, b).
    d, P, h, npages, pages, b = 3, 2, 2, 7, 3, 2
    cache = Float32.(rand(-9:9, d, P, h, npages))
    table = reshape(Int32[4, 0, 6, 2, 5, 1], 1, pages, 1, b)
    lens = reshape(Int32[5, 2], 1, 1, 1, b)
    y = Graph() do g
        tc = add_tensor!(g, cache; name = "cache")
        tl = add_tensor!(g, lens; name = "lengths")
        tt = add_tensor!(g, table; name = "table")
        t = set_output!(paged_cache_load!(g, tc, tl, tt; name = "load"))
        @test size(t) == (d, pages * P, h, b)
        only(run_graph(g, [tc => cache, tl => lens, tt => table], [t]))
    end
    want = zeros(Float32, d, pages * P, h, b)
    for n in 1:b, hh in 1:h, j in 0:(lens[1, 1, 1, n] - 1)
        page = table[1, j ÷ P + 1, 1, n]
        want[:, j + 1, hh, n] = cache[:, j % P + 1, hh, page + 1]
    end
    @test y == want
    Graph() do g
        tc = add_tensor!(g, Float32, (3, 2, 2, 7); name = "cache")
        tl = add_tensor!(g, Int32, (1, 1, 1, 2); name = "lengths")
        tt = add_tensor!(g, Int32, (2, 3, 1, 2); name = "wide")
        err = thrown(() -> paged_cache_load!(g, tc, tl, tt; name = "load"))
        @test err isa CuDNNFEError && err.kind === :invalid_graph
        @test occursin("page_table \"wide\"", err.message)
    end
end
