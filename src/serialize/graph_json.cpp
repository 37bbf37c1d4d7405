// Graph <-> JSON (format described in docs/graph-json.md). Loading replays
// the construction calls (add_tensor, add_node, overrides) so that every
// rule a hand-built graph obeys also holds for a loaded one.
#include "serialize/graph_json.h"

#include <unordered_set>

#include "core/dtype.h"
#include "core/error.h"
#include "ops/ops.h"
#include "serialize/json.h"

namespace cudnnfe {
namespace {

using json::Value;

constexpr const char *kFormat = "cudnnfe.graph";

Value int_array(const std::vector<int64_t> &values) {
  Value a = Value::array();
  for (int64_t v : values) a.push(Value::integer(v));
  return a;
}

template <size_t N>
Value int_array(const std::array<int64_t, N> &values, int count) {
  return int_array(std::vector<int64_t>(values.begin(), values.begin() + count));
}

// Attention's options beyond the causal flags.
void write_attention_options(const AttentionOptions &o, Value &a) {
  a.set("padding_mask", Value::boolean(o.padding_mask));
  a.set("window_left", Value::integer(o.window_left));
  a.set("window_right", Value::integer(o.window_right));
  a.set("diagonal_alignment",
        Value::string(o.diagonal_alignment == CUDNNFE_DIAGONAL_BOTTOM_RIGHT ? "BOTTOM_RIGHT"
                                                                            : "TOP_LEFT"));
  a.set("alibi_mask", Value::boolean(o.alibi_mask));
  a.set("dropout_probability", Value::number(o.dropout_probability));
}

Value node_attributes(const Node &node) {
  Value a = Value::object();
  switch (node.kind) {
    case OpKind::kConvFprop:
    case OpKind::kConvDgrad:
    case OpKind::kConvWgrad: {
      const ConvAttrs &c = node.as<ConvAttrs>();
      a.set("spatial_dims", Value::integer(c.spatial_dims));
      a.set("pre_padding", int_array(c.pre_padding, c.spatial_dims));
      a.set("post_padding", int_array(c.post_padding, c.spatial_dims));
      a.set("stride", int_array(c.stride, c.spatial_dims));
      a.set("dilation", int_array(c.dilation, c.spatial_dims));
      a.set("mode", Value::string(c.mode == CUDNNFE_CONV_MODE_CONVOLUTION ? "CONVOLUTION"
                                                                          : "CROSS_CORRELATION"));
      break;
    }
    case OpKind::kMatmul: break;
    case OpKind::kPointwise: {
      const PointwiseAttrs &p = node.as<PointwiseAttrs>();
      a.set("mode", Value::string(pointwise_mode_name(p.mode)));
      a.set("relu_lower_clip", Value::number(p.relu_lower_clip));
      a.set("relu_upper_clip", Value::number(p.relu_upper_clip));
      a.set("relu_lower_clip_slope", Value::number(p.relu_lower_clip_slope));
      a.set("elu_alpha", Value::number(p.elu_alpha));
      a.set("softplus_beta", Value::number(p.softplus_beta));
      a.set("swish_beta", Value::number(p.swish_beta));
      a.set("axis", Value::integer(p.axis));
      break;
    }
    case OpKind::kReduction: {
      const ReductionAttrs &r = node.as<ReductionAttrs>();
      a.set("mode", Value::string(reduction_mode_name(r.mode)));
      a.set("axes_mask", Value::integer(r.axes_mask));
      a.set("deterministic", Value::boolean(r.deterministic));
      break;
    }
    case OpKind::kSdpa: {
      const SdpaAttrs &s = node.as<SdpaAttrs>();
      a.set("attn_scale", Value::number(s.attn_scale));
      a.set("generate_stats", Value::boolean(s.generate_stats));
      a.set("causal_mask", Value::boolean(s.causal_mask));
      a.set("causal_mask_bottom_right", Value::boolean(s.causal_mask_bottom_right));
      write_attention_options(s.options, a);
      a.set("max_seq_len_kv", Value::integer(s.options.max_seq_len_kv));
      break;
    }
    case OpKind::kSdpaBackward: {
      const SdpaBackwardAttrs &s = node.as<SdpaBackwardAttrs>();
      a.set("attn_scale", Value::number(s.attn_scale));
      a.set("causal_mask", Value::boolean(s.causal_mask));
      a.set("causal_mask_bottom_right", Value::boolean(s.causal_mask_bottom_right));
      a.set("deterministic", Value::boolean(s.deterministic));
      write_attention_options(s.options, a);
      a.set("generate_dbias", Value::boolean(s.generate_dbias));
      break;
    }
    case OpKind::kLayerNorm:
    case OpKind::kRmsNorm:
    case OpKind::kLayerNormBackward:
    case OpKind::kRmsNormBackward:
    case OpKind::kBatchNorm:
    case OpKind::kBatchNormInference:
    case OpKind::kBatchNormBackward:
    case OpKind::kInstanceNorm:
    case OpKind::kInstanceNormBackward:
    case OpKind::kAdaLayerNorm:
    case OpKind::kAdaLayerNormBackward: {
      const NormAttrs &n = node.as<NormAttrs>();
      a.set("phase",
            Value::string(n.phase == CUDNNFE_NORM_PHASE_INFERENCE ? "INFERENCE" : "TRAINING"));
      a.set("epsilon", Value::number(n.epsilon));
      a.set("zero_centered_gamma", Value::boolean(n.zero_centered_gamma));
      a.set("has_dbias", Value::boolean(n.has_dbias));
      if (node.kind == OpKind::kBatchNorm) a.set("momentum", Value::number(n.momentum));
      break;
    }
    case OpKind::kSoftmax:
      a.set("generate_stats", Value::boolean(node.as<SoftmaxAttrs>().generate_stats));
      break;
    case OpKind::kReshape: a.set("dims", int_array(node.as<ReshapeAttrs>().dims)); break;
    case OpKind::kTranspose:
      a.set("permutation", int_array(node.as<TransposeAttrs>().permutation));
      break;
    case OpKind::kSlice: {
      const SliceAttrs &s = node.as<SliceAttrs>();
      a.set("start", int_array(s.start));
      a.set("end", int_array(s.end));
      a.set("step", int_array(s.step));
      break;
    }
    case OpKind::kConcatenate: a.set("axis", Value::integer(node.as<ConcatAttrs>().axis)); break;
    case OpKind::kResample: {
      const ResampleAttrs &r = node.as<ResampleAttrs>();
      // Before validation spatial_dims may still be 0 (from x's rank): write
      // all three entries then, so that nothing is lost.
      const int n = r.spatial_dims > 0 ? r.spatial_dims : 3;
      a.set("mode", Value::string(resample_mode_name(r.mode)));
      a.set("padding_mode", Value::string(padding_mode_name(r.padding_mode)));
      a.set("spatial_dims", Value::integer(r.spatial_dims));
      a.set("window", int_array(r.window, n));
      a.set("stride", int_array(r.stride, n));
      a.set("pre_padding", int_array(r.pre_padding, n));
      a.set("post_padding", int_array(r.post_padding, n));
      a.set("scale", int_array(r.scale, n));
      a.set("generate_index", Value::boolean(r.generate_index));
      break;
    }
    case OpKind::kRng: {
      const RngAttrs &r = node.as<RngAttrs>();
      a.set("distribution", Value::string(rng_distribution_name(r.distribution)));
      a.set("bernoulli_probability", Value::number(r.bernoulli_probability));
      a.set("uniform_min", Value::number(r.uniform_min));
      a.set("uniform_max", Value::number(r.uniform_max));
      a.set("normal_mean", Value::number(r.normal_mean));
      a.set("normal_stddev", Value::number(r.normal_stddev));
      a.set("seed", Value::integer(r.seed));
      a.set("dims", int_array(r.dims));
      break;
    }
    case OpKind::kSdpaFp8: {
      const SdpaFp8Attrs &s = node.as<SdpaFp8Attrs>();
      a.set("attn_scale", Value::number(s.attn_scale));
      a.set("generate_stats", Value::boolean(s.generate_stats));
      a.set("causal_mask", Value::boolean(s.causal_mask));
      break;
    }
    case OpKind::kSdpaFp8Backward: {
      const SdpaFp8BackwardAttrs &s = node.as<SdpaFp8BackwardAttrs>();
      a.set("attn_scale", Value::number(s.attn_scale));
      a.set("causal_mask", Value::boolean(s.causal_mask));
      break;
    }
    case OpKind::kBlockScaleQuantize:
    case OpKind::kBlockScaleDequantize: {
      const BlockScaleAttrs &b = node.as<BlockScaleAttrs>();
      a.set("block_size", Value::integer(b.block_size));
      a.set("axis", Value::integer(b.axis));
      if (node.kind == OpKind::kBlockScaleQuantize) {
        a.set("transpose", Value::boolean(b.transpose));
        a.set("y_data_type", Value::string(dtype_name(b.y_dtype)));
      }
      break;
    }
  }
  return a;
}

const char *tensor_kind(const Tensor &t) {
  if (t.is_scalar) return "scalar";
  if (t.producer < 0) return "input";
  return t.is_virtual ? "virtual" : "output";
}

}  // namespace

std::string serialize_graph(const Graph &graph) {
  Value root = Value::object();
  root.set("format", Value::string(kFormat));
  root.set("version", Value::integer(kGraphJsonVersion));
  root.set("name", Value::string(graph.name));
  root.set("io_data_type", Value::string(dtype_name(graph.io_dtype)));
  root.set("intermediate_data_type", Value::string(dtype_name(graph.intermediate_dtype)));
  root.set("compute_data_type", Value::string(dtype_name(graph.compute_dtype)));
  // Canonical order: inputs and scalars, then op outputs in node order —
  // the order a load recreates them in, so that round trips are exact.
  std::vector<const Tensor *> ordered;
  for (const Tensor &t : graph.tensors())
    if (t.producer < 0) ordered.push_back(&t);
  for (const Node &node : graph.nodes())
    for (int64_t uid : node.outputs)
      if (uid) ordered.push_back(&graph.tensor(uid));
  Value tensors = Value::array();
  for (const Tensor *tensor : ordered) {
    const Tensor &t = *tensor;
    Value v = Value::object();
    v.set("uid", Value::integer(t.uid));
    v.set("name", Value::string(t.name));
    v.set("kind", Value::string(tensor_kind(t)));
    v.set("data_type", Value::string(dtype_name(t.dtype)));
    v.set("dims", int_array(t.dims));
    v.set("strides", int_array(t.strides));
    if (t.is_scalar) v.set("value", Value::number(t.scalar_value));
    if (t.producer >= 0) {
      v.set("dims_set_by_user", Value::boolean(t.dims_set_by_user));
      v.set("strides_set_by_user", Value::boolean(t.strides_set_by_user));
    }
    tensors.push(std::move(v));
  }
  root.set("tensors", std::move(tensors));
  Value nodes = Value::array();
  for (const Node &node : graph.nodes()) {
    Value v = Value::object();
    v.set("op", Value::string(op_kind_name(node.kind)));
    v.set("name", Value::string(node.name));
    v.set("compute_data_type", Value::string(dtype_name(node.compute_dtype)));
    Value inputs = Value::object();
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (node.inputs[i])
        inputs.set(input_port_names(node.kind)[i], Value::integer(node.inputs[i]));
    Value outputs = Value::object();
    for (size_t i = 0; i < node.outputs.size(); ++i)
      if (node.outputs[i])
        outputs.set(output_port_names(node.kind)[i], Value::integer(node.outputs[i]));
    v.set("inputs", std::move(inputs));
    v.set("outputs", std::move(outputs));
    v.set("attributes", node_attributes(node));
    nodes.push(std::move(v));
  }
  root.set("nodes", std::move(nodes));
  return root.dump();
}

namespace {

cudnnfe_dtype_t read_dtype(const Value &v, const std::string &where) {
  cudnnfe_dtype_t dtype;
  if (!dtype_from_name(v.as_string(where).c_str(), &dtype))
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ": unknown data type \"",
         v.as_string(where), "\"");
  return dtype;
}

std::vector<int64_t> read_ints(const Value &v, const std::string &where, size_t max_count) {
  const auto &items = v.as_array(where);
  if (items.size() > max_count)
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ": ", items.size(),
         " entries; at most ", max_count);
  std::vector<int64_t> out;
  for (size_t i = 0; i < items.size(); ++i) out.push_back(items[i].as_int(cat(where, "[", i, "]")));
  return out;
}

template <size_t N>
void read_spatial(const Value &attrs, const char *key, const std::string &where,
                  std::array<int64_t, N> &out) {
  std::vector<int64_t> values = read_ints(attrs.at(key, where), cat(where, ".", key), N);
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
}

// Optional keys (absent in documents written before they existed) keep
// their defaults.
bool optional_bool(const Value &a, const char *key, const std::string &where, bool fallback) {
  const Value *v = a.find(key);
  return v ? v->as_bool(cat(where, ".", key)) : fallback;
}

AttentionOptions read_attention_options(const Value &a, const std::string &where) {
  AttentionOptions o;
  o.padding_mask = optional_bool(a, "padding_mask", where, o.padding_mask);
  if (const Value *v = a.find("window_left")) o.window_left = v->as_int(where + ".window_left");
  if (const Value *v = a.find("window_right")) o.window_right = v->as_int(where + ".window_right");
  if (const Value *v = a.find("diagonal_alignment")) {
    const std::string &name = v->as_string(where + ".diagonal_alignment");
    if (name == "TOP_LEFT")
      o.diagonal_alignment = CUDNNFE_DIAGONAL_TOP_LEFT;
    else if (name == "BOTTOM_RIGHT")
      o.diagonal_alignment = CUDNNFE_DIAGONAL_BOTTOM_RIGHT;
    else
      fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where,
           ".diagonal_alignment: unknown \"", name, "\" (TOP_LEFT or BOTTOM_RIGHT)");
  }
  o.alibi_mask = optional_bool(a, "alibi_mask", where, o.alibi_mask);
  if (const Value *v = a.find("dropout_probability"))
    o.dropout_probability = v->as_double(where + ".dropout_probability");
  return o;
}

OpAttrs read_attributes(OpKind kind, const Value &a, const std::string &where) {
  switch (kind) {
    case OpKind::kConvFprop:
    case OpKind::kConvDgrad:
    case OpKind::kConvWgrad: {
      ConvAttrs c;
      c.spatial_dims =
          static_cast<int>(a.at("spatial_dims", where).as_int(where + ".spatial_dims"));
      read_spatial(a, "pre_padding", where, c.pre_padding);
      read_spatial(a, "post_padding", where, c.post_padding);
      read_spatial(a, "stride", where, c.stride);
      read_spatial(a, "dilation", where, c.dilation);
      const std::string &mode = a.at("mode", where).as_string(where + ".mode");
      if (mode == "CONVOLUTION")
        c.mode = CUDNNFE_CONV_MODE_CONVOLUTION;
      else if (mode == "CROSS_CORRELATION")
        c.mode = CUDNNFE_CONV_MODE_CROSS_CORRELATION;
      else
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ".mode: unknown \"", mode,
             "\"");
      return c;
    }
    case OpKind::kMatmul: return MatmulAttrs{};
    case OpKind::kPointwise: {
      PointwiseAttrs p;
      const std::string &mode = a.at("mode", where).as_string(where + ".mode");
      if (!pointwise_mode_from_name(mode, &p.mode))
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where,
             ".mode: unknown pointwise mode \"", mode, "\"");
      p.relu_lower_clip = a.at("relu_lower_clip", where).as_double(where + ".relu_lower_clip");
      p.relu_upper_clip = a.at("relu_upper_clip", where).as_double(where + ".relu_upper_clip");
      p.relu_lower_clip_slope =
          a.at("relu_lower_clip_slope", where).as_double(where + ".relu_lower_clip_slope");
      p.elu_alpha = a.at("elu_alpha", where).as_double(where + ".elu_alpha");
      p.softplus_beta = a.at("softplus_beta", where).as_double(where + ".softplus_beta");
      p.swish_beta = a.at("swish_beta", where).as_double(where + ".swish_beta");
      p.axis = static_cast<int>(a.at("axis", where).as_int(where + ".axis"));
      return p;
    }
    case OpKind::kReduction: {
      ReductionAttrs r;
      const std::string &mode = a.at("mode", where).as_string(where + ".mode");
      if (!reduction_mode_from_name(mode, &r.mode))
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where,
             ".mode: unknown reduction mode \"", mode, "\"");
      int64_t mask = a.at("axes_mask", where).as_int(where + ".axes_mask");
      if (mask < 0 || mask > 0xFFFFFFFFll)
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ".axes_mask out of range");
      r.axes_mask = static_cast<uint32_t>(mask);
      r.deterministic = a.at("deterministic", where).as_bool(where + ".deterministic");
      return r;
    }
    case OpKind::kSdpa: {
      SdpaAttrs s;
      s.attn_scale = a.at("attn_scale", where).as_double(where + ".attn_scale");
      s.generate_stats = a.at("generate_stats", where).as_bool(where + ".generate_stats");
      s.causal_mask = a.at("causal_mask", where).as_bool(where + ".causal_mask");
      s.causal_mask_bottom_right =
          a.at("causal_mask_bottom_right", where).as_bool(where + ".causal_mask_bottom_right");
      s.options = read_attention_options(a, where);
      if (const Value *v = a.find("max_seq_len_kv"))
        s.options.max_seq_len_kv = v->as_int(where + ".max_seq_len_kv");
      return s;
    }
    case OpKind::kSdpaBackward: {
      SdpaBackwardAttrs s;
      s.attn_scale = a.at("attn_scale", where).as_double(where + ".attn_scale");
      s.causal_mask = a.at("causal_mask", where).as_bool(where + ".causal_mask");
      s.causal_mask_bottom_right =
          a.at("causal_mask_bottom_right", where).as_bool(where + ".causal_mask_bottom_right");
      s.deterministic = a.at("deterministic", where).as_bool(where + ".deterministic");
      s.options = read_attention_options(a, where);
      s.generate_dbias = optional_bool(a, "generate_dbias", where, false);
      return s;
    }
    case OpKind::kLayerNorm:
    case OpKind::kRmsNorm:
    case OpKind::kLayerNormBackward:
    case OpKind::kRmsNormBackward:
    case OpKind::kBatchNorm:
    case OpKind::kBatchNormInference:
    case OpKind::kBatchNormBackward:
    case OpKind::kInstanceNorm:
    case OpKind::kInstanceNormBackward:
    case OpKind::kAdaLayerNorm:
    case OpKind::kAdaLayerNormBackward: {
      NormAttrs n;
      const std::string &phase = a.at("phase", where).as_string(where + ".phase");
      if (phase == "TRAINING")
        n.phase = CUDNNFE_NORM_PHASE_TRAINING;
      else if (phase == "INFERENCE")
        n.phase = CUDNNFE_NORM_PHASE_INFERENCE;
      else
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ".phase: unknown \"", phase,
             "\"");
      n.epsilon = a.at("epsilon", where).as_double(where + ".epsilon");
      n.zero_centered_gamma =
          a.at("zero_centered_gamma", where).as_bool(where + ".zero_centered_gamma");
      n.has_dbias = a.at("has_dbias", where).as_bool(where + ".has_dbias");
      if (kind == OpKind::kBatchNorm)
        n.momentum = a.at("momentum", where).as_double(where + ".momentum");
      return n;
    }
    case OpKind::kSoftmax: {
      SoftmaxAttrs s;
      s.generate_stats = a.at("generate_stats", where).as_bool(where + ".generate_stats");
      return s;
    }
    case OpKind::kReshape: {
      ReshapeAttrs r;
      r.dims = read_ints(a.at("dims", where), where + ".dims", CUDNNFE_MAX_DIMS);
      return r;
    }
    case OpKind::kTranspose: {
      TransposeAttrs t;
      t.permutation =
          read_ints(a.at("permutation", where), where + ".permutation", CUDNNFE_MAX_DIMS);
      return t;
    }
    case OpKind::kSlice: {
      SliceAttrs s;
      s.start = read_ints(a.at("start", where), where + ".start", CUDNNFE_MAX_DIMS);
      s.end = read_ints(a.at("end", where), where + ".end", CUDNNFE_MAX_DIMS);
      s.step = read_ints(a.at("step", where), where + ".step", CUDNNFE_MAX_DIMS);
      return s;
    }
    case OpKind::kConcatenate: {
      ConcatAttrs c;
      const int64_t axis = a.at("axis", where).as_int(where + ".axis");
      if (axis < 0 || axis >= CUDNNFE_MAX_DIMS)
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ".axis: ", axis,
             " is outside 0..", CUDNNFE_MAX_DIMS - 1);
      c.axis = static_cast<int>(axis);
      return c;
    }
    case OpKind::kResample: {
      ResampleAttrs r;
      const std::string &mode = a.at("mode", where).as_string(where + ".mode");
      if (!resample_mode_from_name(mode, &r.mode))
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where,
             ".mode: unknown resample mode \"", mode, "\"");
      const std::string &pad = a.at("padding_mode", where).as_string(where + ".padding_mode");
      if (!padding_mode_from_name(pad, &r.padding_mode))
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where,
             ".padding_mode: unknown padding mode \"", pad, "\"");
      const int64_t spatial = a.at("spatial_dims", where).as_int(where + ".spatial_dims");
      if (spatial < 0 || spatial > CUDNNFE_MAX_SPATIAL_DIMS)
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ".spatial_dims: ", spatial,
             " is outside 0..3");
      r.spatial_dims = static_cast<int>(spatial);
      read_spatial(a, "window", where, r.window);
      read_spatial(a, "stride", where, r.stride);
      read_spatial(a, "pre_padding", where, r.pre_padding);
      read_spatial(a, "post_padding", where, r.post_padding);
      read_spatial(a, "scale", where, r.scale);
      r.generate_index = a.at("generate_index", where).as_bool(where + ".generate_index");
      return r;
    }
    case OpKind::kRng: {
      RngAttrs r;
      const std::string &d = a.at("distribution", where).as_string(where + ".distribution");
      if (!rng_distribution_from_name(d, &r.distribution))
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where,
             ".distribution: unknown distribution \"", d, "\"");
      r.bernoulli_probability =
          a.at("bernoulli_probability", where).as_double(where + ".bernoulli_probability");
      r.uniform_min = a.at("uniform_min", where).as_double(where + ".uniform_min");
      r.uniform_max = a.at("uniform_max", where).as_double(where + ".uniform_max");
      r.normal_mean = a.at("normal_mean", where).as_double(where + ".normal_mean");
      r.normal_stddev = a.at("normal_stddev", where).as_double(where + ".normal_stddev");
      r.seed = a.at("seed", where).as_int(where + ".seed");
      r.dims = read_ints(a.at("dims", where), where + ".dims", CUDNNFE_MAX_DIMS);
      return r;
    }
    case OpKind::kSdpaFp8: {
      SdpaFp8Attrs s;
      s.attn_scale = a.at("attn_scale", where).as_double(where + ".attn_scale");
      s.generate_stats = a.at("generate_stats", where).as_bool(where + ".generate_stats");
      s.causal_mask = a.at("causal_mask", where).as_bool(where + ".causal_mask");
      return s;
    }
    case OpKind::kSdpaFp8Backward: {
      SdpaFp8BackwardAttrs s;
      s.attn_scale = a.at("attn_scale", where).as_double(where + ".attn_scale");
      s.causal_mask = a.at("causal_mask", where).as_bool(where + ".causal_mask");
      return s;
    }
    case OpKind::kBlockScaleQuantize:
    case OpKind::kBlockScaleDequantize: {
      BlockScaleAttrs b;
      b.block_size = a.at("block_size", where).as_int(where + ".block_size");
      if (b.block_size < 1 || b.block_size > INT32_MAX)
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where,
             ".block_size: ", b.block_size, " is outside 1..", INT32_MAX);
      const int64_t axis = a.at("axis", where).as_int(where + ".axis");
      if (axis < -CUDNNFE_MAX_DIMS || axis >= CUDNNFE_MAX_DIMS)
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ".axis: ", axis,
             " is outside ", -CUDNNFE_MAX_DIMS, "..", CUDNNFE_MAX_DIMS - 1);
      b.axis = static_cast<int>(axis);
      if (kind == OpKind::kBlockScaleQuantize) {
        b.transpose = a.at("transpose", where).as_bool(where + ".transpose");
        b.y_dtype = read_dtype(a.at("y_data_type", where), where + ".y_data_type");
        if (b.y_dtype != CUDNNFE_DTYPE_FP8_E4M3 && b.y_dtype != CUDNNFE_DTYPE_FP8_E5M2)
          fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where,
               ".y_data_type: ", dtype_name(b.y_dtype), " is not FP8_E4M3 or FP8_E5M2");
      }
      return b;
    }
  }
  return MatmulAttrs{};
}

void load(const Value &root, Graph &graph) {
  const std::string top = "document";
  if (root.at("format", top).as_string("format") != kFormat)
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: format is not \"", kFormat, "\"");
  const int64_t version = root.at("version", top).as_int("version");
  if (version != kGraphJsonVersion)
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: version ", version,
         " is not supported; this library reads version ", kGraphJsonVersion);
  graph.name = root.at("name", top).as_string("name");
  graph.io_dtype = read_dtype(root.at("io_data_type", top), "io_data_type");
  graph.intermediate_dtype =
      read_dtype(root.at("intermediate_data_type", top), "intermediate_data_type");
  graph.compute_dtype = read_dtype(root.at("compute_data_type", top), "compute_data_type");

  const auto &tensors = root.at("tensors", top).as_array("tensors");
  std::unordered_set<int64_t> recorded_uids;
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::string where = cat("tensors[", i, "]");
    int64_t uid = tensors[i].at("uid", where).as_int(where + ".uid");
    if (uid <= 0 || uid > kMaxUid)
      fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ": uid ", uid,
           " is outside 1..2^62");
    recorded_uids.insert(uid);
  }
  graph.reserve_uids(std::move(recorded_uids));

  // Inputs and scalars first; op outputs are recreated by their nodes.
  std::map<int64_t, const Value *> outputs_by_uid;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Value &t = tensors[i];
    std::string where = cat("tensors[", i, "]");
    const std::string &kind = t.at("kind", where).as_string(where + ".kind");
    int64_t uid = t.at("uid", where).as_int(where + ".uid");
    const std::string &name = t.at("name", where).as_string(where + ".name");
    cudnnfe_dtype_t dtype = read_dtype(t.at("data_type", where), where + ".data_type");
    std::vector<int64_t> dims = read_ints(t.at("dims", where), where + ".dims", CUDNNFE_MAX_DIMS);
    std::vector<int64_t> strides =
        read_ints(t.at("strides", where), where + ".strides", CUDNNFE_MAX_DIMS);
    if (kind == "input" || kind == "scalar") {
      int64_t created =
          kind == "scalar"
              ? graph.add_scalar(name, dtype, t.at("value", where).as_double(where + ".value"))
              : graph.add_tensor(name, dtype, dims, strides);
      graph.set_uid(created, uid);
    } else if (kind == "virtual" || kind == "output") {
      if (outputs_by_uid.count(uid))
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ": uid ", uid, " repeats");
      outputs_by_uid[uid] = &t;
    } else {
      fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ".kind: unknown \"", kind,
           "\"");
    }
  }

  const auto &nodes = root.at("nodes", top).as_array("nodes");
  for (size_t n = 0; n < nodes.size(); ++n) {
    const Value &v = nodes[n];
    std::string where = cat("nodes[", n, "]");
    OpKind kind;
    const std::string &op = v.at("op", where).as_string(where + ".op");
    if (!op_kind_from_name(op, &kind))
      fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ".op: unknown op \"", op,
           "\"");
    const auto &in_ports = input_port_names(kind);
    const Value &inputs = v.at("inputs", where);
    for (const auto &entry : inputs.as_object(where + ".inputs"))
      if (std::find(in_ports.begin(), in_ports.end(), entry.first) == in_ports.end())
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ".inputs: ", op,
             " has no input \"", entry.first, "\"");
    std::vector<int64_t> in_uids;
    for (const std::string &port : in_ports) {
      const Value *uid = inputs.find(port);
      in_uids.push_back(uid ? uid->as_int(cat(where, ".inputs.", port)) : 0);
    }
    Node built =
        graph.add_node(kind, v.at("name", where).as_string(where + ".name"), in_uids,
                       read_attributes(kind, v.at("attributes", where), where + ".attributes"),
                       read_dtype(v.at("compute_data_type", where), where + ".compute_data_type"));
    const Value &outputs = v.at("outputs", where);
    const auto &out_ports = output_port_names(kind);
    for (size_t port = 0; port < out_ports.size(); ++port) {
      const Value *recorded = outputs.find(out_ports[port]);
      if (!built.outputs[port]) {
        if (recorded)
          fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ".outputs: \"",
               out_ports[port], "\" is listed but the node's attributes do not produce it");
        continue;
      }
      if (!recorded)
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ".outputs: missing \"",
             out_ports[port], "\"");
      int64_t uid = recorded->as_int(cat(where, ".outputs.", out_ports[port]));
      auto it = outputs_by_uid.find(uid);
      if (it == outputs_by_uid.end())
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ".outputs.",
             out_ports[port], ": uid ", uid, " is not a virtual or output tensor of the document");
      const Value &t = *it->second;
      outputs_by_uid.erase(it);
      const std::string tw = cat("tensor uid ", uid);
      graph.set_uid(built.outputs[port], uid);
      graph.set_tensor_name(uid, t.at("name", tw).as_string(tw + ".name"));
      Tensor &out = graph.tensor(uid);
      out.dtype = read_dtype(t.at("data_type", tw), tw + ".data_type");
      out.is_virtual = t.at("kind", tw).as_string(tw + ".kind") == "virtual";
      if (t.at("dims_set_by_user", tw).as_bool(tw + ".dims_set_by_user")) {
        out.dims = read_ints(t.at("dims", tw), tw + ".dims", CUDNNFE_MAX_DIMS);
        out.dims_set_by_user = true;
      }
      if (t.at("strides_set_by_user", tw).as_bool(tw + ".strides_set_by_user")) {
        out.strides = read_ints(t.at("strides", tw), tw + ".strides", CUDNNFE_MAX_DIMS);
        out.strides_set_by_user = true;
      }
      if (out.dims.empty() || out.strides.size() != out.dims.size())
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", tw, ": dims and strides disagree");
      for (size_t i = 0; i < out.dims.size(); ++i)
        if (out.dims[i] <= 0 || out.strides[i] < 0)
          fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", tw, ": bad dims or strides");
      require_shape_fits(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, cat("graph JSON: ", tw), out.dims,
                         &out.strides);
    }
  }
  if (!outputs_by_uid.empty())
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: tensor uid ",
         outputs_by_uid.begin()->first, " is marked as an op output but no node produces it");
  // Overridden shapes may change inference downstream: re-run it now so the
  // loaded graph's shapes are consistent (and hostile overrides are caught).
  for (Node &node : graph.nodes()) infer_and_check(graph, node);
  graph.reserve_uids({});
}

}  // namespace

void deserialize_graph(const char *data, size_t size, Graph &graph) {
  Value root = json::parse(data, size);
  try {
    load(root, graph);
  } catch (const Error &e) {
    if (e.status() == CUDNNFE_STATUS_BAD_SERIALIZED_DATA) throw;
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA,
         "graph JSON does not describe a valid graph: ", e.message());
  }
}

}  // namespace cudnnfe
