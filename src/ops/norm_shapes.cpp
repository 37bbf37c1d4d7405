// The shapes every norm shares (ops/norm_shapes.h).
#include "ops/norm_shapes.h"

#include <algorithm>

#include "core/error.h"
#include "ops/ops.h"

namespace cudnnfe {

bool norm_groups_follow_scale(OpKind kind) {
  switch (kind) {
    case OpKind::kLayerNorm:
    case OpKind::kRmsNorm:
    case OpKind::kLayerNormBackward:
    case OpKind::kRmsNormBackward:
    case OpKind::kAdaLayerNorm:
    case OpKind::kAdaLayerNormBackward: return true;
    default: return false;
  }
}

NormGroups norm_groups(OpKind kind, const std::vector<int64_t> &x_dims,
                       const std::vector<int64_t> &scale_dims) {
  NormGroups g;
  const size_t rank = std::min<size_t>(x_dims.size(), 32);
  const uint32_t all = rank >= 32 ? ~0u : (1u << rank) - 1;
  const uint32_t channel = rank > 1 ? 2u : 0u;
  switch (kind) {
    case OpKind::kBatchNorm:
    case OpKind::kBatchNormInference:
    case OpKind::kBatchNormBackward:
      g.reduced = all & ~channel;
      g.param = channel;
      return g;
    case OpKind::kInstanceNorm:
    case OpKind::kInstanceNormBackward:
      g.reduced = all & ~3u;
      g.param = channel;
      return g;
    default: break;
  }
  if (!norm_groups_follow_scale(kind)) return g;
  const bool ada = kind == OpKind::kAdaLayerNorm || kind == OpKind::kAdaLayerNormBackward;
  for (size_t i = 0; i < rank && i < scale_dims.size(); ++i) {
    if (scale_dims[i] == 1) continue;
    g.param |= 1u << i;
    if (!(ada && i == 0)) g.reduced |= 1u << i;
  }
  return g;
}

std::vector<int64_t> keep_dims(const std::vector<int64_t> &dims, uint32_t mask) {
  std::vector<int64_t> out(dims.size(), 1);
  for (size_t i = 0; i < dims.size() && i < 32; ++i)
    if (mask & (1u << i)) out[i] = dims[i];
  return out;
}

void require_norm_shape(const Node &node, size_t port, const Tensor &t,
                        const std::vector<int64_t> &dims, const char *rule) {
  if (t.dims != dims)
    fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", t.name, "\" is ",
               dims_string(t.dims), "; expected ", dims_string(dims), " (", rule, ")");
}

void require_norm_param(const Node &node, size_t port, const Tensor &t, const Tensor &x) {
  bool ok = t.dims.size() == x.dims.size();
  for (size_t i = 0; ok && i < t.dims.size(); ++i) ok = t.dims[i] == x.dims[i] || t.dims[i] == 1;
  if (!ok)
    fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", t.name, "\" is ",
               dims_string(t.dims), " for x \"", x.name, "\" ", dims_string(x.dims),
               "; each of its dims must be x's or 1 (it broadcasts over the others)");
}

void set_norm_output(Graph &graph, const Node &node, size_t port, const std::vector<int64_t> &dims,
                     const std::vector<int64_t> &layout, bool is_statistic) {
  if (!node.outputs[port]) return;
  Tensor &out = set_output_shape(graph, node, port, dims, dimension_order(dims, layout));
  if (out.dims != dims)
    fail_graph(Graph::label(node), ": output \"", out.name, "\" was set to ", dims_string(out.dims),
               " but ", op_kind_name(node.kind), " produces ", dims_string(dims));
  if (is_statistic && out.dtype == CUDNNFE_DTYPE_NOT_SET) out.dtype = CUDNNFE_DTYPE_FLOAT;
}

}  // namespace cudnnfe
