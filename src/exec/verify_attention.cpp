// Attention's unspecified outputs in verify mode (exec/verify_attention.h).
#include "exec/verify_attention.h"

#include <string>

#include "cpu/attention_layout.h"
#include "cpu/attention_mask.h"
#include "exec/verify_copy.h"
#include "exec/verify_sample.h"
#include "ops/attention.h"

namespace cudnnfe::verify {
namespace {

// The host copy of graph tensor `uid` as a view, or nullptr (0, or not a
// bound tensor the check copied).
const cpu::StridedTensor *host_view(const Graph &graph, int64_t uid,
                                    const std::vector<void *> &host, cpu::StridedTensor &view) {
  if (uid == 0) return nullptr;
  const int index = graph.bound_index(uid);
  if (index < 0 || !host[static_cast<size_t>(index)]) return nullptr;
  view = strided_view(graph.tensor(uid), host[static_cast<size_t>(index)]);
  return &view;
}

// Which output of `node` `uid` is (its port), or -1.
int output_port(const Node &node, int64_t uid) {
  for (size_t p = 0; p < node.outputs.size(); ++p)
    if (node.outputs[p] == uid) return static_cast<int>(p);
  return -1;
}

bool is_forward(OpKind kind) {
  return kind == OpKind::kSdpa || kind == OpKind::kSdpaFp8;
}

// The logical key length (cpu/attention_layout.h, paged_kv_length).
int64_t key_length(const Graph &graph, const Node &node, const AttentionSpec &spec) {
  const Tensor &k = graph.tensor(node.inputs[Sdpa::kK]), &v = graph.tensor(node.inputs[Sdpa::kV]);
  cpu::StridedTensor kv = strided_view(k, nullptr), vv = strided_view(v, nullptr), pk, pv;
  const cpu::StridedTensor *page_k =
      spec.page_table_k ? &(pk = strided_view(graph.tensor(spec.page_table_k), nullptr)) : nullptr;
  const cpu::StridedTensor *page_v =
      spec.page_table_v ? &(pv = strided_view(graph.tensor(spec.page_table_v), nullptr)) : nullptr;
  return cpu::paged_kv_length(kv, vv, page_k, page_v, spec.options.max_seq_len_kv);
}

}  // namespace

int64_t drop_unspecified(const Graph &graph, const Tensor &output, const std::vector<void *> &host,
                         cpu::ElementMask &wanted) {
  if (output.producer < 0) return 0;
  const Node &node = graph.nodes()[static_cast<size_t>(output.producer)];
  if (!attention_kind(node.kind)) return 0;
  const AttentionSpec spec = attention_spec(node);
  const int port = output_port(node, output.uid);
  if (port < 0 || output.dims.size() != 4) return 0;
  const bool forward = is_forward(node.kind);
  // The forward's O and stats, the backward's dQ (by query row), dK and dV
  // (by key row); the other outputs (amax, dBias, dSink) are compared whole.
  // FP8 attention's are at the same ports.
  static_assert(same_port(Sdpa::kO, SdpaFp8::kO) && same_port(Sdpa::kStats, SdpaFp8::kStats) &&
                same_port(SdpaBackward::kDQ, SdpaFp8Backward::kDQ) &&
                same_port(SdpaBackward::kDK, SdpaFp8Backward::kDK) &&
                same_port(SdpaBackward::kDV, SdpaFp8Backward::kDV));
  const size_t out = static_cast<size_t>(port);
  if (forward ? out != Sdpa::kO && out != Sdpa::kStats
              : out != SdpaBackward::kDQ && out != SdpaBackward::kDK && out != SdpaBackward::kDV)
    return 0;
  if (!forward && !spec.options.padding_mask) return 0;
  const bool by_key = !forward && out != SdpaBackward::kDQ;
  cpu::StridedTensor lq, lkv, bm;
  const cpu::StridedTensor *seq_q = host_view(graph, spec.seq_len_q, host, lq);
  const cpu::StridedTensor *seq_kv = host_view(graph, spec.seq_len_kv, host, lkv);
  if (spec.options.padding_mask && (!seq_q || !seq_kv)) return 0;
  const Tensor &q = graph.tensor(node.inputs[Sdpa::kQ]);
  const cpu::AttentionMask mask(spec, Graph::label(node), q.dims[0], q.dims[2],
                                key_length(graph, node, spec), seq_q, seq_kv);
  const cpu::StridedTensor *blocks = host_view(graph, spec.block_mask, host, bm);
  cpu::Index dims{};
  for (size_t i = 0; i < 4; ++i) dims[i] = output.dims[i];
  auto unspecified = [&](const cpu::Index &at) {
    const int64_t b = at[0], h = at[1], row = at[2];
    if (by_key) return row >= mask.cols(b);
    if (!forward) return row >= mask.rows(b);
    const cpu::ColumnRange cols = mask.columns(b, row);
    if (cols.empty()) return true;
    if (!blocks) return false;
    for (int64_t j = cols.first; j <= cols.last; j += kBlockMaskTile - j % kBlockMaskTile)
      if (cpu::block_mask_keeps(*blocks, b, h, row, j)) return false;
    return true;
  };
  int64_t dropped = 0;
  cpu::ElementMask kept(wanted.size());
  wanted.for_each([&](int64_t linear) {
    if (unspecified(cpu::unravel(linear, 4, dims)))
      ++dropped;
    else
      kept.set(linear);
  });
  if (dropped) wanted = std::move(kept);
  return dropped;
}

}  // namespace cudnnfe::verify
