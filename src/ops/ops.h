// Per-op shape inference and validation. Each op kind lives in its own file
// (conv.cpp, matmul.cpp, ...); this header dispatches to them through the
// rules table (ops/op_rules.h).
#pragma once

#include "core/checked.h"
#include "graph/graph.h"

namespace cudnnfe {

// Infers the shapes of `node`'s outputs (keeping user overrides where the op
// allows them) and checks the shape rules. Throws INVALID_GRAPH with a
// message naming the node, the tensor and the rule.
void infer_and_check(Graph &graph, Node &node);

// Checks data types once they are resolved and fixes the node's compute
// type. Throws INVALID_GRAPH.
void check_types(Graph &graph, Node &node);

// For a GPU target, the support rules of cudnn-frontend and cuDNN that
// `node` must meet (docs/refusals.md). Throws NOT_SUPPORTED naming the node
// and the rule (INVALID_GRAPH where cudnn-frontend calls the graph
// ill-formed).
void check_support(const Graph &graph, const Node &node, const SupportTarget &target);

// Whether the CPU reference computes in the node's compute type: FLOAT,
// HALF, INT32 or DOUBLE, and BOOLEAN for comparisons and logic.
bool compute_type_computable(const Node &node);

// Fails unless the inputs on ports below `end_port` are floating or INT8
// (attention's type rule).
void check_numeric_inputs(Graph &graph, const Node &node, size_t end_port);

// Whether output `port` of a node exists (SDPA's stats only when asked).
bool output_used(const Node &node, size_t port);

// The softmax scale SDPA (forward or backward) applies: attn_scale, or
// 1/sqrt(d) when 0.
double effective_attn_scale(const Graph &graph, const Node &node);

// Per-kind entry points (one file each).
void infer_conv(Graph &graph, Node &node);
void infer_matmul(Graph &graph, Node &node);
void infer_pointwise(Graph &graph, Node &node);
void infer_reduction(Graph &graph, Node &node);
void infer_sdpa(Graph &graph, Node &node);
void infer_sdpa_backward(Graph &graph, Node &node);
void infer_norm(Graph &graph, Node &node);
void infer_grouped_norm(Graph &graph, Node &node);
void infer_softmax(Graph &graph, Node &node);
void check_types_sdpa(Graph &graph, Node &node);
// An attention node's score modifiers (score_mod.cpp): their nodes inferred
// again, and their placeholders and results against the scores `dims`.
void infer_score_mods(Graph &graph, Node &node, const std::vector<int64_t> &dims);
void check_score_mod_types(Graph &graph, Node &node);
// reshape, transpose, slice, concatenate (layout.cpp).
void infer_layout(Graph &graph, Node &node);
void check_types_layout(Graph &graph, Node &node);
void infer_resample(Graph &graph, Node &node);
void check_types_resample(Graph &graph, Node &node);
void infer_rng(Graph &graph, Node &node);
void check_types_rng(Graph &graph, Node &node);
// block_scale_quantize, block_scale_dequantize (block_scale.cpp).
void infer_block_scale(Graph &graph, Node &node);
// genstats, bn_finalize and dbn_weight (batchnorm_split.cpp).
void infer_genstats(Graph &graph, Node &node);
void infer_bn_finalize(Graph &graph, Node &node);
void infer_dbn_weight(Graph &graph, Node &node);
// moe_grouped_matmul, moe_grouped_matmul_backward (moe_grouped_matmul.cpp).
void infer_moe_grouped_matmul(Graph &graph, Node &node);
void check_types_moe_grouped_matmul(Graph &graph, Node &node);
// paged_cache_load (paged_cache.cpp).
void infer_paged_cache_load(Graph &graph, Node &node);
void check_types_paged_cache_load(Graph &graph, Node &node);

// ---- helpers shared by the per-kind files ----

// The tensor on input `port`; INVALID_GRAPH if the port is required and empty.
const Tensor &required_input(Graph &graph, const Node &node, size_t port);
// The value of a size computed from caller dims and attributes; INVALID_GRAPH
// naming the node and `what` (the quantity and its formula) on overflow.
int64_t checked_size(const Node &node, CheckedInt size, const std::string &what);
// Sets an output's dims and strides unless the user overrode them; strides
// are packed in `order` (dimension_order(x) for "like x", channels_last_order
// or row_major_order; docs/design.md "Output layouts"). Returns the output.
Tensor &set_output_shape(Graph &graph, const Node &node, size_t port,
                         const std::vector<int64_t> &dims, const DimOrder &order);
// Fails unless `t` has exactly `rank` dims; `expected` describes them.
void require_rank(const Node &node, const std::string &port, const Tensor &t, size_t rank,
                  const char *expected);

}  // namespace cudnnfe
