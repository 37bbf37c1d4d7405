// The shapes every norm shares: which of x's dims the statistics reduce
// over, which the parameters span, and the shape rules of parameters,
// statistics and outputs (used by ops/norm.cpp and ops/grouped_norm.cpp, and
// by the CPU reference and the lowering through norm_groups).
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"

namespace cudnnfe {

// Bit i of `reduced` set: the statistics are taken over x's dim i; bit i of
// `param`: the scale varies along dim i.
//   batchnorm     x [N, C, spatial...]  reduced: all but C   param: C
//   instancenorm  x [N, C, spatial...]  reduced: spatial     param: C
//   layernorm, rmsnorm (and their backward): reduced and param are the dims
//                 where the scale is not 1, as cudnn-frontend infers their
//                 statistics (include/cudnn_frontend/node/layernorm.h,
//                 rmsnorm.h): a [b, s, d] x with a [1, 1, d] scale is
//                 normalized per (b, s) over d, with a [1, s, d] scale per b
//   adalayernorm  as layernorm, except that dim 0 is never reduced (its
//                 per-sample scale is [B, 1, d] or [1, 1, d]; adaptive_layernorm.h)
// Other kinds: both 0.
struct NormGroups {
  uint32_t reduced = 0;
  uint32_t param = 0;
};
NormGroups norm_groups(OpKind kind, const std::vector<int64_t> &x_dims,
                       const std::vector<int64_t> &scale_dims);
// Whether the scale's dims choose the groups (layernorm, rmsnorm,
// adalayernorm and their backward) rather than the kind.
bool norm_groups_follow_scale(OpKind kind);
// `dims` with every dim whose bit is clear in `mask` set to 1.
std::vector<int64_t> keep_dims(const std::vector<int64_t> &dims, uint32_t mask);

// INVALID_GRAPH unless input `port`'s tensor `t` has exactly `dims`; `rule`
// says what they are.
void require_norm_shape(const Node &node, size_t port, const Tensor &t,
                        const std::vector<int64_t> &dims, const char *rule);
// INVALID_GRAPH unless input `port`'s tensor `t` (a scale or bias) has x's
// rank and each dim x's or 1: the parameters broadcast over the dims they
// do not vary along.
void require_norm_param(const Node &node, size_t port, const Tensor &t, const Tensor &x);
// Sets output `port`'s shape (when the node has it), refusing an override
// that disagrees; statistics default to FLOAT.
void set_norm_output(Graph &graph, const Node &node, size_t port, const std::vector<int64_t> &dims,
                     const std::vector<int64_t> &layout, bool is_statistic);

}  // namespace cudnnfe
