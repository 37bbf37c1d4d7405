"""The graph families, each a module with NAME, generate(rng, degenerate) -> params,
graph_types(params), make_inputs(params, nrng) -> builder.Data, build(builder, params) and
reference(params, data, target) -> {output: builder.Expected}."""
from . import conv, matmul, norms, pointwise, reduction, sdpa

FAMILIES = {m.NAME: m for m in (conv, matmul, norms, pointwise, reduction, sdpa)}
