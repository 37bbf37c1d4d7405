# The documentation site's Julia getting-started code (docs/getting-started/julia.md
# shows the part between the --8<-- markers): y = relu(x * w .+ b) on the CPU
# reference with plain Arrays, checked against Julia's own arithmetic.
# Included by runtests.jl (which defines approx).

# --8<-- [start:example]
using CuDNNFE

function first_graph()
    x = rand(Float32, 8, 64)         # sizes and strides in Julia order
    w = rand(Float32, 64, 32)
    b = rand(Float32, 1, 32)         # broadcast over the rows
    y = Graph(name = "first_graph") do g
        tx = add_tensor!(g, x; name = "x")
        tw = add_tensor!(g, w; name = "w")
        tb = add_tensor!(g, b; name = "b")
        xw = matmul!(g, tx, tw)      # x * w: (8, 32)
        ty = set_output!(pointwise!(g, :relu_fwd, pointwise!(g, :add, xw, tb)))

        build!(g; target = :cpu_reference)   # or :gpu, or :auto (GPU when usable)
        out = allocate(ty)
        Handle() do h
            execute!(g, h, tx => x, tw => w, tb => b, ty => out)
        end
        out
    end
    return x, w, b, y
end
# --8<-- [end:example]

@testset "getting started (docs/getting-started/julia.md)" begin
    x, w, b, y = first_graph()
    @test size(y) == (8, 32)
    @test approx(y, max.(Float64.(x) * Float64.(w) .+ Float64.(b), 0))
end
