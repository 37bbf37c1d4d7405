// FP8 attention (forward and backward) shape and type rules; the rules of
// the diagonal band and the tensor options (padding, ALiBi, dropout, page
// tables) are attention's (ops/attention.cpp, ops/sdpa.cpp).
#include "ops/sdpa_fp8.h"

#include <cmath>

#include "core/dtype.h"
#include "core/error.h"
#include "ops/attention.h"
#include "ops/ops.h"

namespace cudnnfe {
namespace {

bool is_fp8(cudnnfe_dtype_t t) {
  return t == CUDNNFE_DTYPE_FP8_E4M3 || t == CUDNNFE_DTYPE_FP8_E5M2;
}

// The types an FP8 attention result may be written in.
bool is_result_type(cudnnfe_dtype_t t) {
  return is_fp8(t) || t == CUDNNFE_DTYPE_HALF || t == CUDNNFE_DTYPE_BFLOAT16;
}

const std::string &port_name(const Node &node, size_t port) {
  return Graph::input_port(node, port);
}

const Tensor &required(Graph &graph, const Node &node, size_t port, const char *what) {
  if (node.inputs[port] == 0)
    fail_graph(Graph::label(node), ": input ", port_name(node, port), " is missing (", what, ")");
  return graph.tensor(node.inputs[port]);
}

void require_rank4(const Node &node, size_t port, const Tensor &t, const char *expected) {
  if (t.dims.size() != 4)
    fail_graph(Graph::label(node), ": ", port_name(node, port), " \"", t.name, "\" has ",
               t.dims.size(), " dims ", dims_string(t.dims), "; expected 4 ", expected,
               " (logical BHSD order, any strides)");
}

// A descale or scale: present, one element (every dim 1).
void check_scale_tensor(Graph &graph, const Node &node, size_t port) {
  const Tensor &t = required(graph, node, port,
                             "FP8 attention needs every descale and scale: a one-element "
                             "FLOAT tensor such as [1,1,1,1], or a FLOAT scalar");
  for (int64_t d : t.dims)
    if (d != 1)
      fail_graph(Graph::label(node), ": ", port_name(node, port), " \"", t.name, "\" is ",
                 dims_string(t.dims),
                 "; a descale or scale must hold one element (every dim 1, e.g. [1,1,1,1])");
}

void check_attn_scale(const Node &node, double attn_scale) {
  if (!std::isfinite(attn_scale))
    fail_graph(Graph::label(node), ": attn_scale is ", attn_scale,
               "; it must be finite (0 means 1/sqrt(d))");
}

struct Shape {
  int64_t b, h_q, s_q, d, h_kv, s_kv, d_v;
};

// q, k, v (Sdpa::kQ, kK, kV): [b,h_q,s_q,d], [b,h_kv,s_kv,d], [b,h_kv,s_kv,d_v];
// a paged k or v is a page container [num_pages, h_kv, page_size, d] whose
// batch and sequence dims are the cache's (s_kv: attention_kv_length).
Shape check_qkv(Graph &graph, const Node &node) {
  const char *why = "attention reads q, k and v";
  const Tensor &q = required(graph, node, Sdpa::kQ, why);
  const Tensor &k = required(graph, node, Sdpa::kK, why);
  const Tensor &v = required(graph, node, Sdpa::kV, why);
  require_rank4(node, Sdpa::kQ, q, "[b,h_q,s_q,d]");
  require_rank4(node, Sdpa::kK, k, "[b,h_kv,s_kv,d]");
  require_rank4(node, Sdpa::kV, v, "[b,h_kv,s_kv,d_v]");
  const AttentionSpec spec = attention_spec(node);
  Shape s{q.dims[0], q.dims[1], q.dims[2], q.dims[3], k.dims[1], attention_kv_length(graph, node),
          v.dims[3]};
  auto mismatch = [&](size_t port, const Tensor &t, int dim, const char *what, int64_t expected,
                      const char *rule) {
    fail_graph(Graph::label(node), ": ", port_name(node, port), " \"", t.name, "\" ",
               dims_string(t.dims), " has ", what, " = ", t.dims[dim], "; expected ", expected,
               " (", rule, ")");
  };
  if (!spec.page_table_k && k.dims[0] != s.b) mismatch(1, k, 0, "b", s.b, "q's batch");
  if (!spec.page_table_v && v.dims[0] != s.b) mismatch(2, v, 0, "b", s.b, "q's batch");
  if (k.dims[3] != s.d) mismatch(1, k, 3, "d", s.d, "q's head dim");
  if (!spec.paged() && v.dims[2] != s.s_kv) mismatch(2, v, 2, "s", s.s_kv, "k's sequence length");
  require_head_groups(node, q, k, v);
  return s;
}

// Sets an output's shape (packed in `order`), refusing a user override
// that disagrees.
Tensor &output(Graph &graph, const Node &node, size_t port, const std::vector<int64_t> &dims,
               const DimOrder &order) {
  Tensor &out = set_output_shape(graph, node, port, dims, order);
  if (out.dims != dims)
    fail_graph(Graph::label(node), ": output \"", out.name, "\" was set to ", dims_string(out.dims),
               " but ", op_kind_name(node.kind), " produces ", dims_string(dims));
  return out;
}

// A FLOAT output of fixed shape (stats, amax).
void float_output(Graph &graph, const Node &node, size_t port, const std::vector<int64_t> &dims) {
  Tensor &t = output(graph, node, port, dims, row_major_order(dims.size()));
  if (t.dtype == CUDNNFE_DTYPE_NOT_SET) t.dtype = CUDNNFE_DTYPE_FLOAT;
}

const std::vector<int64_t> kAmaxDims = {1, 1, 1, 1};

void require_dims(Graph &graph, const Node &node, size_t port, const std::vector<int64_t> &dims,
                  const char *rule) {
  const Tensor &t = required(graph, node, port, "attention backward reads it");
  if (t.dims != dims)
    fail_graph(Graph::label(node), ": ", port_name(node, port), " \"", t.name, "\" is ",
               dims_string(t.dims), "; expected ", dims_string(dims), " (", rule, ")");
}

void require_type(const Node &node, size_t port, const Tensor &t, bool ok, const char *rule) {
  if (!ok)
    fail_graph(Graph::label(node), ": ", port_name(node, port), " \"", t.name, "\" is ",
               dtype_name(t.dtype), "; ", rule);
}

void require_output_type(const Node &node, const Tensor &t, bool ok, const char *rule) {
  if (!ok)
    fail_graph(Graph::label(node), ": output \"", t.name, "\" is ", dtype_name(t.dtype), "; ",
               rule);
}

// amax outputs are always computed (cuDNN's FP8 engines write every one).
void require_amax_output(const Node &node, const Tensor &t) {
  require_output_type(node, t, t.dtype == CUDNNFE_DTYPE_FLOAT, "an amax output must be FLOAT");
  if (t.is_virtual)
    fail_graph(Graph::label(node), ": amax output \"", t.name,
               "\" is virtual; FP8 attention always writes every amax (cuDNN's FP8 attention "
               "engines do): mark it with cudnnfe_tensor_set_output and bind a one-float buffer");
}

}  // namespace

double sdpa_fp8_attn_scale(double attn_scale, int64_t head_dim) {
  if (attn_scale != 0.0) return attn_scale;
  return 1.0 / std::sqrt(static_cast<double>(head_dim));
}

void infer_sdpa_fp8(Graph &graph, Node &node) {
  using namespace SdpaFp8;
  const SdpaFp8Attrs &attrs = node.as<SdpaFp8Attrs>();
  check_attn_scale(node, attrs.attn_scale);
  check_diagonal_band(node, attention_spec(node));
  const Shape s = check_qkv(graph, node);
  for (size_t port = kDescaleQ; port <= kScaleO; ++port) check_scale_tensor(graph, node, port);
  check_attention_tensor_options(graph, node);
  if (node.inputs[kSinkToken] != 0)
    require_dims(graph, node, kSinkToken, {1, s.h_q, 1, 1}, "one sink logit per query head");
  const Tensor &q = graph.tensor(node.inputs[kQ]);
  output(graph, node, kO, {s.b, s.h_q, s.s_q, s.d_v}, dimension_order(q));
  if (attrs.generate_stats) float_output(graph, node, kStats, {s.b, s.h_q, s.s_q, 1});
  float_output(graph, node, kAmaxS, kAmaxDims);
  float_output(graph, node, kAmaxO, kAmaxDims);
}

void infer_sdpa_fp8_backward(Graph &graph, Node &node) {
  using namespace SdpaFp8Backward;
  const SdpaFp8BackwardAttrs &attrs = node.as<SdpaFp8BackwardAttrs>();
  check_attn_scale(node, attrs.attn_scale);
  check_diagonal_band(node, attention_spec(node));
  const Shape s = check_qkv(graph, node);
  const std::vector<int64_t> o_dims = {s.b, s.h_q, s.s_q, s.d_v};
  require_dims(graph, node, kO, o_dims, "the forward's output [b,h_q,s_q,d_v]");
  require_dims(graph, node, kDO, o_dims, "o's shape");
  require_dims(graph, node, kStats, {s.b, s.h_q, s.s_q, 1}, "the forward's stats [b,h_q,s_q,1]");
  for (size_t port = kDescaleQ; port <= kScaleDP; ++port) check_scale_tensor(graph, node, port);
  check_attention_tensor_options(graph, node);
  const Tensor &q = graph.tensor(node.inputs[kQ]);
  const Tensor &k = graph.tensor(node.inputs[kK]);
  const Tensor &v = graph.tensor(node.inputs[kV]);
  output(graph, node, kDQ, q.dims, dimension_order(q));
  output(graph, node, kDK, k.dims, dimension_order(k));
  output(graph, node, kDV, v.dims, dimension_order(v));
  for (size_t port = kAmaxDQ; port <= kAmaxDP; ++port) float_output(graph, node, port, kAmaxDims);
}

void check_types_sdpa_fp8(Graph &graph, Node &node) {
  if (node.compute_dtype != CUDNNFE_DTYPE_FLOAT)
    fail_graph(Graph::label(node), ": compute data type is ", dtype_name(node.compute_dtype),
               "; FP8 attention computes in FLOAT");
  const bool forward = node.kind == OpKind::kSdpaFp8;
  const Tensor &q = graph.tensor(node.inputs[Sdpa::kQ]);
  require_type(node, Sdpa::kQ, q, is_fp8(q.dtype),
               "FP8 attention takes FP8_E4M3 or FP8_E5M2 q, k and v (use sdpa for HALF and "
               "BFLOAT16)");
  for (size_t port : {Sdpa::kK, Sdpa::kV}) {
    const Tensor &t = graph.tensor(node.inputs[port]);
    if (t.dtype != q.dtype)
      fail_graph(Graph::label(node), ": ", port_name(node, port), " \"", t.name, "\" is ",
                 dtype_name(t.dtype), " but q \"", q.name, "\" is ", dtype_name(q.dtype),
                 "; q, k and v must share one FP8 type");
  }
  const size_t first_scale =
      forward ? size_t{SdpaFp8::kDescaleQ} : size_t{SdpaFp8Backward::kDescaleQ};
  const size_t last_scale = forward ? size_t{SdpaFp8::kScaleO} : size_t{SdpaFp8Backward::kScaleDP};
  for (size_t port = first_scale; port <= last_scale; ++port) {
    const Tensor &t = graph.tensor(node.inputs[port]);
    require_type(node, port, t, t.dtype == CUDNNFE_DTYPE_FLOAT,
                 "descales and scales must be FLOAT");
  }
  check_attention_option_types(graph, node);
  if (forward) {
    using namespace SdpaFp8;
    const Tensor &o = graph.tensor(node.outputs[kO]);
    require_output_type(node, o, is_result_type(o.dtype),
                        "O must be FP8_E4M3, FP8_E5M2, HALF or BFLOAT16");
    if (node.outputs[kStats] != 0)
      require_output_type(node, graph.tensor(node.outputs[kStats]),
                          graph.tensor(node.outputs[kStats]).dtype == CUDNNFE_DTYPE_FLOAT,
                          "stats must be FLOAT");
    require_amax_output(node, graph.tensor(node.outputs[kAmaxS]));
    require_amax_output(node, graph.tensor(node.outputs[kAmaxO]));
    return;
  }
  using namespace SdpaFp8Backward;
  const Tensor &o = graph.tensor(node.inputs[kO]);
  require_type(node, kO, o, is_result_type(o.dtype),
               "o (the forward's output) must be FP8_E4M3, FP8_E5M2, HALF or BFLOAT16");
  const Tensor &d_o = graph.tensor(node.inputs[kDO]);
  require_type(node, kDO, d_o, is_fp8(d_o.dtype),
               "dO must be FP8_E4M3 or FP8_E5M2 (dS is cast to dO's type)");
  const Tensor &stats = graph.tensor(node.inputs[kStats]);
  require_type(node, kStats, stats, stats.dtype == CUDNNFE_DTYPE_FLOAT, "stats must be FLOAT");
  for (size_t port = kDQ; port <= kDV; ++port) {
    const Tensor &t = graph.tensor(node.outputs[port]);
    require_output_type(node, t, is_result_type(t.dtype),
                        "dQ, dK and dV must be FP8_E4M3, FP8_E5M2, HALF or BFLOAT16");
  }
  for (size_t port = kAmaxDQ; port <= kAmaxDP; ++port)
    require_amax_output(node, graph.tensor(node.outputs[port]));
}

}  // namespace cudnnfe
