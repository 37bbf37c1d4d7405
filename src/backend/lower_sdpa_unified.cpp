// Attention forward as cuDNN's single SDPA_FWD operation (the "unified"
// implementation, cuDNN 9.13.1 and newer), and the choice between it and
// the composite graph (lower_sdpa.cpp) that cudnn-frontend's AUTO makes. It
// does not build the score subgraph (bias, masks, ALiBi, sink) that cuDNN
// 9.21 adds to the unified operation: nodes using those run COMPOSITE.
// Ragged (packed) q, k, v, O and stats are the tensors' own ragged offsets,
// as in the composite graph (cudnn-frontend 1.32 runs them unified on 9.19).
#include <string>

#include "backend/attention_masks.h"
#include "backend/attribute_util.h"
#include "backend/lowering.h"
#include "backend/newer_backend_names.h"
#include "plan/notes.h"

namespace cudnnfe::backend {
namespace {

// cuDNN versions that gave the unified operation each input (cuDNN's
// cudnn_graph.h marks each attribute's "@since").
constexpr size_t kUnified = 91301, kBlockMask = 91400, kPadding = 91500, kUnfuseFma = 92100;

std::string version_text(size_t version) {
  return plan::cudnn_version_string(static_cast<int64_t>(version));
}

// Why the unified operation cannot run `node` (what it lacks and what is
// needed), or "" when it can.
std::string unified_refusal(const Lowering &lowering, const Node &node) {
  const size_t v = lowering.cudnn_version();
  const Graph &graph = lowering.graph();
  const AttentionSpec s = attention_spec(node);
  const std::string have = cat(" (loaded cuDNN ", version_text(v), ")");
  if (v < kUnified) return cat("the unified SDPA_FWD operation needs cuDNN 9.13.1", have);
  if (s.block_mask && v < kBlockMask) return cat("block_mask needs cuDNN 9.14.0", have);
  if ((s.options.padding_mask || s.paged()) && v < kPadding)
    return cat("padding_mask and a paged K/V cache need cuDNN 9.15.0 in the unified operation",
               have);
  const cudnnfe_dtype_t q = graph.tensor(node.inputs[Sdpa::kQ]).dtype;
  if (q != CUDNNFE_DTYPE_HALF && q != CUDNNFE_DTYPE_BFLOAT16)
    return "the unified operation takes HALF or BFLOAT16 q, k and v";
  if (node.compute_dtype != CUDNNFE_DTYPE_FLOAT && node.compute_dtype != CUDNNFE_DTYPE_NOT_SET)
    return "the unified operation computes in FLOAT only";
  const SdpaAttrs &a = node.as<SdpaAttrs>();
  const char *score_option = s.bias                             ? "bias"
                             : s.options.alibi_mask             ? "alibi_mask"
                             : s.has_band()                     ? "a causal mask or diagonal band"
                             : s.dropout_seed || s.dropout_mask ? "dropout"
                             : s.sink_token                     ? "sink_token"
                             : s.score_mod                      ? "score_mod"
                             : a.generate_score_max || a.generate_score_sum_exp
                                 ? "score_max or score_sum_exp"
                                 : nullptr;
  if (score_option)
    return cat(score_option,
               " is lowered through the composite graph only (the unified operation takes it "
               "through a score subgraph from cuDNN 9.21, which cudnnfe does not build)");
  return "";
}

void set(Descriptor &op, cudnnBackendAttributeName_t name, cudnnBackendDescriptor_t d) {
  op.set_descriptors(name, &d, 1);
}

}  // namespace

bool sdpa_runs_unified(const Lowering &lowering, const Node &node) {
  const cudnnfe_attention_implementation_t impl = node.as<SdpaAttrs>().implementation;
  if (impl == CUDNNFE_ATTENTION_IMPLEMENTATION_COMPOSITE) return false;
  const std::string why = unified_refusal(lowering, node);
  if (why.empty()) return true;
  // AUTO falls back to the composite graph, as cudnn-frontend does, except
  // for what only the unified operation has.
  if (impl == CUDNNFE_ATTENTION_IMPLEMENTATION_AUTO && !attention_spec(node).block_mask)
    return false;
  fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": implementation ",
       impl == CUDNNFE_ATTENTION_IMPLEMENTATION_UNIFIED ? "UNIFIED" : "AUTO with block_mask",
       " is refused: ", why);
}

void lower_sdpa_unified(Lowering &lowering, const Node &node) {
  AttentionLowering attention(lowering, node);
  const AttentionSpec &s = attention.spec();
  Descriptor op(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR);
  set(op, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, lowering.tensor(node.inputs[Sdpa::kQ]));
  set(op, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, lowering.tensor(node.inputs[Sdpa::kK]));
  set(op, CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, lowering.tensor(node.inputs[Sdpa::kV]));
  set(op, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, lowering.tensor(node.outputs[Sdpa::kO]));
  if (node.outputs[Sdpa::kStats] != 0)
    set(op, CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, lowering.tensor(node.outputs[Sdpa::kStats]));
  set(op, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, attention.attn_scale());
  if (s.block_mask)
    set(op, CUDNN_ATTR_OPERATION_SDPA_FWD_BLOCK_MASK_DESC, lowering.tensor(s.block_mask));
  if (s.page_table_k) set(op, newer::kSdpaFwdPageTableK, lowering.tensor(s.page_table_k));
  if (s.page_table_v) set(op, newer::kSdpaFwdPageTableV, lowering.tensor(s.page_table_v));
  // The operation applies the padding mask when both lengths are given;
  // max_seq_len_kv needs no attribute (s_kv is the node's).
  if (attention.padded()) {
    set(op, newer::kSdpaFwdSeqLenQ, attention.seq_len_q());
    set(op, newer::kSdpaFwdSeqLenKv, attention.seq_len_kv());
  }
  // cudnn-frontend asks unfuse_fma of the unified operation only, from 9.21.
  if (node.as<SdpaAttrs>().unfuse_fma) {
    if (lowering.cudnn_version() < kUnfuseFma)
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node),
           ": unfuse_fma needs cuDNN 9.21 in the unified operation", " (loaded cuDNN ",
           version_text(lowering.cudnn_version()), ")");
    op.set_bool(newer::kSdpaFwdUnfuseFma, true);
  }
  add_operation_named(lowering, std::move(op), "SDPA_FWD (unified)");
}

}  // namespace cudnnfe::backend
