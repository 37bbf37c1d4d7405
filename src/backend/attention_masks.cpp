#include "backend/attention_masks.h"

#include <cstring>
#include <limits>

#include "backend/attribute_util.h"
#include "core/error.h"
#include "ops/ops.h"
#include "plan/notes.h"

namespace cudnnfe::backend {
namespace {

constexpr cudnnDataType_t kFloat = CUDNN_DATA_FLOAT;
constexpr cudnnDataType_t kInt32 = CUDNN_DATA_INT32;
constexpr cudnnDataType_t kBool = CUDNN_DATA_BOOLEAN;
// Up to this version the backward engines need sequence lengths when
// s_kv % 128 != 0 (cudnn-frontend's workaround).
constexpr size_t kBackwardPaddingWorkaroundUntil = 91500;

PointwiseAttrs mode(cudnnfe_pointwise_mode_t m, int axis = 0) {
  PointwiseAttrs attrs;
  attrs.mode = m;
  attrs.axis = axis;
  return attrs;
}

// The value masked scores take: -inf from cuDNN 9.10 on (its kernels
// special-case it), the lowest float before, as cudnn-frontend does.
double masked_value(size_t cudnn_version) {
  return cudnn_version >= 91000 ? -std::numeric_limits<double>::infinity()
                                : static_cast<double>(std::numeric_limits<float>::lowest());
}

template <class T>
std::vector<unsigned char> bytes_of(const std::vector<T> &values) {
  std::vector<unsigned char> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

}  // namespace

AttentionLowering::AttentionLowering(Lowering &lowering, const Node &node)
    : lowering_(lowering),
      node_(node),
      spec_(attention_spec(node)),
      compute_(to_cudnn(node.compute_dtype)) {
  const Graph &graph = lowering.graph();
  const Tensor &q = graph.tensor(node.inputs[Sdpa::kQ]);
  const Tensor &k = graph.tensor(node.inputs[Sdpa::kK]);
  const int64_t b = q.dims[0], s_q = q.dims[2], s_kv = attention_kv_length(graph, node);
  (void)k;
  scores_ = {b, q.dims[1], s_q, s_kv};
  // Ragged (packed) tensors: their descriptors carry the offsets, and so do
  // the gradients of the same layout in the backward (cudnn-frontend's).
  auto ragged = [&](int64_t uid, int64_t offsets) {
    if (uid != 0 && offsets != 0) lowering.set_ragged_offset(uid, offsets);
  };
  ragged(node.inputs[Sdpa::kQ], spec_.ragged_q);
  ragged(node.inputs[Sdpa::kK], spec_.ragged_k);
  ragged(node.inputs[Sdpa::kV], spec_.ragged_v);
  if (node.kind == OpKind::kSdpa) {
    ragged(node.outputs[Sdpa::kO], spec_.ragged_o);
    ragged(node.outputs[Sdpa::kStats], spec_.ragged_stats);
    ragged(node.outputs[Sdpa::kScoreMax], spec_.ragged_score_max);
    ragged(node.outputs[Sdpa::kScoreSumExp], spec_.ragged_score_sum_exp);
    // Packed page tables (cuDNN 9.10.2 and newer): the table's descriptor
    // carries its offsets, as cudnn-frontend's does.
    ragged(spec_.page_table_k, spec_.ragged_page_table_k);
    ragged(spec_.page_table_v, spec_.ragged_page_table_v);
  } else {
    using namespace SdpaBackward;
    ragged(node.inputs[kO], spec_.ragged_o);
    ragged(node.inputs[kDO], spec_.ragged_o);
    ragged(node.inputs[kStats], spec_.ragged_stats);
    ragged(node.outputs[kDQ], spec_.ragged_q);
    ragged(node.outputs[kDK], spec_.ragged_k);
    ragged(node.outputs[kDV], spec_.ragged_v);
  }
  if (spec_.options.padding_mask) {
    seq_len_q_ = lowering.tensor(spec_.seq_len_q);
    seq_len_kv_ = lowering.tensor(spec_.seq_len_kv);
  } else if (spec_.score_mod && (spec_.seq_len_q || spec_.seq_len_kv)) {
    // Lengths beside a score modifier (which reads them) only bound the
    // matmuls and paged loads, as in cudnn-frontend: no padding mask.
    if (spec_.seq_len_q) seq_len_q_ = lowering.tensor(spec_.seq_len_q);
    if (spec_.seq_len_kv) seq_len_kv_ = lowering.tensor(spec_.seq_len_kv);
    lengths_only_ = true;
  } else if (node.kind == OpKind::kSdpaBackward && s_kv % 128 != 0 &&
             lowering.cudnn_version() <= kBackwardPaddingWorkaroundUntil) {
    const std::vector<int64_t> dims = {b, 1, 1, 1};
    seq_len_q_ = lowering.constant_tensor(
        dims, CUDNNFE_DTYPE_INT32,
        bytes_of(std::vector<int32_t>(static_cast<size_t>(b), static_cast<int32_t>(s_q))),
        "the sequence lengths of the s_kv % 128 padding workaround");
    seq_len_kv_ = lowering.constant_tensor(
        dims, CUDNNFE_DTYPE_INT32,
        bytes_of(std::vector<int32_t>(static_cast<size_t>(b), static_cast<int32_t>(s_kv))),
        "the sequence lengths of the s_kv % 128 padding workaround");
  }
}

cudnnBackendDescriptor_t AttentionLowering::one_element(int64_t uid) {
  const Tensor &t = lowering_.graph().tensor(uid);
  if (t.is_scalar) return lowering_.operand(uid, 4);
  return lowering_.tensor_view(uid, {1, 1, 1, 1}, {1, 1, 1, 1});
}

cudnnBackendDescriptor_t AttentionLowering::binary(cudnnfe_pointwise_mode_t m,
                                                   cudnnBackendDescriptor_t a,
                                                   cudnnBackendDescriptor_t b,
                                                   cudnnDataType_t out_type) {
  cudnnBackendDescriptor_t out = lowering_.virtual_tensor(scores_, out_type);
  add_pointwise(lowering_, mode(m), compute_, a, b, nullptr, out);
  return out;
}

cudnnBackendDescriptor_t AttentionLowering::index(int axis, cudnnDataType_t math,
                                                  cudnnBackendDescriptor_t s) {
  cudnnBackendDescriptor_t out = lowering_.virtual_tensor(scores_, kInt32);
  add_pointwise(lowering_, mode(CUDNNFE_POINTWISE_GEN_INDEX, axis), math, s, nullptr, nullptr, out);
  return out;
}

cudnnBackendDescriptor_t AttentionLowering::select(cudnnBackendDescriptor_t s,
                                                   cudnnBackendDescriptor_t keep) {
  cudnnBackendDescriptor_t out = lowering_.virtual_tensor(scores_, kFloat);
  add_pointwise(lowering_, mode(CUDNNFE_POINTWISE_BINARY_SELECT), compute_, s,
                lowering_.scalar(masked_value(lowering_.cudnn_version()), CUDNNFE_DTYPE_FLOAT, 4),
                keep, out);
  return out;
}

cudnnBackendDescriptor_t AttentionLowering::attn_scale() {
  if (!attn_scale_)
    attn_scale_ = spec_.attn_scale_tensor != 0
                      ? one_element(spec_.attn_scale_tensor)
                      : lowering_.scalar(effective_attn_scale(lowering_.graph(), node_),
                                         CUDNNFE_DTYPE_FLOAT, 4);
  return attn_scale_;
}

cudnnBackendDescriptor_t AttentionLowering::add_bias_and_alibi(cudnnBackendDescriptor_t s) {
  if (spec_.bias != 0) s = binary(CUDNNFE_POINTWISE_ADD, s, lowering_.tensor(spec_.bias), kFloat);
  if (spec_.options.alibi_mask) {
    cudnnBackendDescriptor_t row = index(2, kInt32, s);
    cudnnBackendDescriptor_t col = index(3, kInt32, s);
    cudnnBackendDescriptor_t distance = lowering_.virtual_tensor(scores_, kInt32);
    add_pointwise(lowering_, mode(CUDNNFE_POINTWISE_SUB), kInt32, col, row, nullptr, distance);
    const int64_t heads = scores_[1];
    cudnnBackendDescriptor_t slopes = lowering_.constant_tensor(
        {1, heads, 1, 1}, CUDNNFE_DTYPE_FLOAT, bytes_of(alibi_slopes(heads)), "ALiBi's slopes");
    cudnnBackendDescriptor_t alibi = binary(CUDNNFE_POINTWISE_MUL, distance, slopes, kFloat);
    s = binary(CUDNNFE_POINTWISE_ADD, s, alibi, kFloat);
  }
  return s;
}

cudnnBackendDescriptor_t AttentionLowering::padding_mask(cudnnBackendDescriptor_t s) {
  if (!padded()) return s;
  cudnnBackendDescriptor_t row = index(2, kInt32, s);
  cudnnBackendDescriptor_t col = index(3, kInt32, s);
  cudnnBackendDescriptor_t row_ok = lowering_.virtual_tensor(scores_, kBool);
  add_pointwise(lowering_, mode(CUDNNFE_POINTWISE_CMP_LT), kBool, row, seq_len_q_, nullptr, row_ok);
  cudnnBackendDescriptor_t col_ok = lowering_.virtual_tensor(scores_, kBool);
  add_pointwise(lowering_, mode(CUDNNFE_POINTWISE_CMP_LT), kBool, col, seq_len_kv_, nullptr,
                col_ok);
  cudnnBackendDescriptor_t keep = lowering_.virtual_tensor(scores_, kBool);
  add_pointwise(lowering_, mode(CUDNNFE_POINTWISE_LOGICAL_AND), kBool, row_ok, col_ok, nullptr,
                keep);
  return select(s, keep);
}

cudnnBackendDescriptor_t AttentionLowering::band_mask(cudnnBackendDescriptor_t s) {
  const int64_t s_q = scores_[2], s_kv = scores_[3];
  const bool bottom_right = spec_.bottom_right();
  auto int_scalar = [&](int64_t v) {
    return lowering_.scalar(static_cast<double>(v), CUDNNFE_DTYPE_INT32, 4);
  };
  auto int_op = [&](cudnnfe_pointwise_mode_t m, cudnnBackendDescriptor_t a,
                    cudnnBackendDescriptor_t b) {
    cudnnBackendDescriptor_t out = lowering_.virtual_tensor(scores_, kInt32);
    add_pointwise(lowering_, mode(m), kInt32, a, b, nullptr, out);
    return out;
  };
  const int64_t right = spec_.right_bound();
  if (right >= 0) {
    // Keep row [+ s_kv - s_q] [+ right] >= col.
    cudnnBackendDescriptor_t row = index(2, compute_, s);
    cudnnBackendDescriptor_t col = index(3, compute_, s);
    if (bottom_right) {
      row = int_op(CUDNNFE_POINTWISE_ADD, row, padded() ? seq_len_kv_ : int_scalar(s_kv));
      row = int_op(CUDNNFE_POINTWISE_SUB, row, padded() ? seq_len_q_ : int_scalar(s_q));
    }
    if (right != 0) row = int_op(CUDNNFE_POINTWISE_ADD, row, int_scalar(right));
    cudnnBackendDescriptor_t keep = lowering_.virtual_tensor(scores_, kBool);
    add_pointwise(lowering_, mode(CUDNNFE_POINTWISE_CMP_GE), kBool, row, col, nullptr, keep);
    s = select(s, keep);
  }
  const int64_t left = spec_.left_bound();
  if (left >= 1) {
    // Keep col + left [- s_kv + s_q] > row: in float with fixed lengths
    // (one scalar), in INT32 with per-batch lengths.
    cudnnBackendDescriptor_t row = index(2, compute_, s);
    cudnnBackendDescriptor_t col = index(3, compute_, s);
    cudnnBackendDescriptor_t shifted;
    if (bottom_right && padded()) {
      shifted = int_op(CUDNNFE_POINTWISE_ADD, col, int_scalar(left));
      shifted = int_op(CUDNNFE_POINTWISE_SUB, shifted, seq_len_kv_);
      shifted = int_op(CUDNNFE_POINTWISE_ADD, shifted, seq_len_q_);
    } else {
      const double shift = static_cast<double>(bottom_right ? left - s_kv + s_q : left);
      shifted = lowering_.virtual_tensor(scores_, kFloat);
      add_pointwise(lowering_, mode(CUDNNFE_POINTWISE_ADD), kFloat, col,
                    lowering_.scalar(shift, CUDNNFE_DTYPE_FLOAT, 4), nullptr, shifted);
    }
    cudnnBackendDescriptor_t keep = lowering_.virtual_tensor(scores_, kBool);
    add_pointwise(lowering_, mode(CUDNNFE_POINTWISE_CMP_GT), kBool, shifted, row, nullptr, keep);
    s = select(s, keep);
  }
  return s;
}

cudnnBackendDescriptor_t AttentionLowering::dropout_mask() {
  if (dropout_mask_) return dropout_mask_;
  if (spec_.mask_dropout()) return dropout_mask_ = lowering_.tensor(spec_.dropout_mask);
  Descriptor rng(CUDNN_BACKEND_RNG_DESCRIPTOR);
  set_attribute(rng, CUDNN_ATTR_RNG_DISTRIBUTION, CUDNN_TYPE_RNG_DISTRIBUTION,
                CUDNN_RNG_DISTRIBUTION_BERNOULLI, "the RNG distribution");
  rng.set_double(CUDNN_ATTR_RNG_BERNOULLI_DIST_PROBABILITY,
                 1.0 - spec_.options.dropout_probability);
  lowering_.finalize(rng);
  const Descriptor &kept = lowering_.keep(std::move(rng));
  // The mask goes into the forward's rng_dump when the caller asked for it.
  const int64_t dump = node_.kind == OpKind::kSdpa ? node_.outputs[Sdpa::kRngDump] : 0;
  cudnnBackendDescriptor_t y =
      dump ? lowering_.tensor(dump) : lowering_.virtual_tensor(scores_, kFloat);
  cudnnBackendDescriptor_t seed = one_element(spec_.dropout_seed);
  cudnnBackendDescriptor_t offset = one_element(spec_.dropout_offset);
  Descriptor op(CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR);
  op.set_descriptors(CUDNN_ATTR_OPERATION_RNG_YDESC, &y, 1);
  op.set_descriptor(CUDNN_ATTR_OPERATION_RNG_DESC, kept);
  op.set_descriptors(CUDNN_ATTR_OPERATION_RNG_SEED, &seed, 1);
  op.set_descriptors(CUDNN_ATTR_OPERATION_RNG_OFFSET_DESC, &offset, 1);
  add_operation_named(lowering_, std::move(op), "RNG (dropout's Bernoulli mask)");
  return dropout_mask_ = y;
}

cudnnBackendDescriptor_t AttentionLowering::dropout_scale() {
  if (dropout_scale_) return dropout_scale_;
  if (spec_.mask_dropout()) return dropout_scale_ = one_element(spec_.dropout_scale);
  const float p = static_cast<float>(spec_.options.dropout_probability);
  return dropout_scale_ = lowering_.scalar(1.0f / (1.0f - p), CUDNNFE_DTYPE_FLOAT, 4);
}

cudnnBackendDescriptor_t AttentionLowering::dropout_scale_inv() {
  if (dropout_scale_inv_) return dropout_scale_inv_;
  if (spec_.mask_dropout()) return dropout_scale_inv_ = one_element(spec_.dropout_scale_inv);
  const float p = static_cast<float>(spec_.options.dropout_probability);
  return dropout_scale_inv_ = lowering_.scalar(1.0f - p, CUDNNFE_DTYPE_FLOAT, 4);
}

cudnnBackendDescriptor_t AttentionLowering::paged_load(int64_t container, int64_t table,
                                                       const std::vector<int64_t> &dims,
                                                       const std::vector<int64_t> &strides,
                                                       cudnnDataType_t io) {
  cudnnBackendDescriptor_t y = lowering_.virtual_tensor(dims, strides, io);
  cudnnBackendDescriptor_t x = lowering_.tensor(container);
  cudnnBackendDescriptor_t t = lowering_.tensor(table);
  add_paged_cache_load(lowering_, x, t, seq_len_kv_, y,
                       cat("PAGED_CACHE_LOAD (", lowering_.graph().tensor(container).name, ")"));
  return y;
}

cudnnBackendDescriptor_t AttentionLowering::keys_transposed(cudnnDataType_t io) {
  const Tensor &k = lowering_.graph().tensor(node_.inputs[Sdpa::kK]);
  const int64_t b = scores_[0], h_kv = k.dims[1], d = k.dims[3], s_kv = scores_[3];
  if (spec_.page_table_k)
    return paged_load(k.uid, spec_.page_table_k, {b, h_kv, d, s_kv},
                      {h_kv * d * s_kv, d * s_kv, 1, d}, io);
  return lowering_.tensor_view(k.uid, {b, h_kv, d, s_kv},
                               {k.strides[0], k.strides[1], k.strides[3], k.strides[2]});
}

cudnnBackendDescriptor_t AttentionLowering::values(cudnnDataType_t io) {
  const Tensor &v = lowering_.graph().tensor(node_.inputs[Sdpa::kV]);
  const int64_t b = scores_[0], h_kv = v.dims[1], s_kv = scores_[3], d_v = v.dims[3];
  if (spec_.page_table_v)
    return paged_load(v.uid, spec_.page_table_v, {b, h_kv, s_kv, d_v},
                      {h_kv * s_kv * d_v, s_kv * d_v, d_v, 1}, io);
  return lowering_.tensor(v.uid);
}

cudnnBackendDescriptor_t AttentionLowering::softmax(cudnnBackendDescriptor_t s,
                                                    const SoftmaxResults &out,
                                                    cudnnDataType_t p_type) {
  const std::vector<int64_t> per_row = {scores_[0], scores_[1], scores_[2], 1};
  auto op = [&](cudnnfe_pointwise_mode_t m, cudnnBackendDescriptor_t lhs,
                cudnnBackendDescriptor_t rhs, cudnnBackendDescriptor_t result) {
    add_pointwise(lowering_, mode(m), compute_, lhs, rhs, nullptr, result);
    return result;
  };
  // A per-row tensor: the caller's `kept` when given, else a virtual one.
  auto row = [&](cudnnBackendDescriptor_t kept) {
    return kept ? kept : lowering_.virtual_tensor(per_row, kFloat);
  };
  const int64_t sink = spec_.sink_token;
  cudnnBackendDescriptor_t max = row(sink ? nullptr : out.max);
  add_reduction(lowering_, CUDNNFE_REDUCTION_MAX, compute_, false, s, max);
  if (sink) max = op(CUDNNFE_POINTWISE_MAX, max, lowering_.tensor(sink), row(out.max));
  cudnnBackendDescriptor_t centered =
      op(CUDNNFE_POINTWISE_SUB, s, max, lowering_.virtual_tensor(scores_, kFloat));
  cudnnBackendDescriptor_t exp =
      op(CUDNNFE_POINTWISE_EXP, centered, nullptr, lowering_.virtual_tensor(scores_, kFloat));
  cudnnBackendDescriptor_t sum = row(sink ? nullptr : out.sum_exp);
  add_reduction(lowering_, CUDNNFE_REDUCTION_ADD, compute_, false, exp, sum);
  if (sink) {
    cudnnBackendDescriptor_t shifted =
        op(CUDNNFE_POINTWISE_SUB, lowering_.tensor(sink), max, row(nullptr));
    sum = op(CUDNNFE_POINTWISE_ADD, sum, op(CUDNNFE_POINTWISE_EXP, shifted, nullptr, row(nullptr)),
             row(out.sum_exp));
  }
  // As cudnn-frontend's softmax: the stats chain is left out only when the
  // caller keeps the max or the sum and not the stats.
  if (out.stats || !(out.max || out.sum_exp)) {
    cudnnBackendDescriptor_t log_sum = op(CUDNNFE_POINTWISE_LOG, sum, nullptr, row(nullptr));
    op(CUDNNFE_POINTWISE_ADD, max, log_sum, row(out.stats));
  }
  return op(CUDNNFE_POINTWISE_DIV, exp, sum, lowering_.virtual_tensor(scores_, p_type));
}

cudnnBackendDescriptor_t AttentionLowering::apply_dropout(cudnnBackendDescriptor_t p,
                                                          cudnnDataType_t out_type) {
  if (!dropout()) return p;
  const bool given = spec_.mask_dropout();
  p = binary(CUDNNFE_POINTWISE_MUL, p, given ? dropout_scale() : dropout_mask(), kFloat);
  return binary(CUDNNFE_POINTWISE_MUL, p, given ? dropout_mask() : dropout_scale(), out_type);
}

}  // namespace cudnnfe::backend
