// Attention's support rules on a GPU (ops/attention_support.h). Each rule
// states, in cudnnfe's words, a refusal of cudnn-frontend 1.32 (its
// sdpa_support_surface.h, the backward's pre-validation in
// scaled_dot_product_flash_attention.h, and its Python validator
// cudnn/_sdpa_validate.py), or a cuDNN defect a GPU test of this repository
// shows; docs/refusals.md lists them with that evidence. The graph-semantic
// rules hold for every GPU; the others wait until the cuDNN version and the
// architecture are known.
#include "ops/attention_support.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "ops/attention.h"
#include "plan/notes.h"

namespace cudnnfe {
namespace {

constexpr const char *kFrontend = "cudnn-frontend refuses it";

// What the rules look at, read once from the node.
struct Facts {
  AttentionSpec spec;
  bool backward = false, fp8 = false;
  int64_t h_q = 0, h_k = 0, h_v = 0, s_q = 0, s_kv = 0, d_qk = 0, d_v = 0;
  bool padding = false, ragged = false, bias = false, dropout = false, alibi = false;
  bool score_mod = false, paged = false, left = false, right = false;
  // cudnn-frontend's "bottom right causal mask": any right bound with the
  // diagonal aligned at the bottom-right corner.
  bool bottom_right_band = false;
};

Facts read_facts(const Graph &graph, const Node &node) {
  Facts f;
  f.spec = attention_spec(node);
  const AttentionSpec &s = f.spec;
  f.backward = node.kind == OpKind::kSdpaBackward || node.kind == OpKind::kSdpaFp8Backward;
  f.fp8 = node.kind == OpKind::kSdpaFp8 || node.kind == OpKind::kSdpaFp8Backward;
  const Tensor &q = graph.tensor(node.inputs[Sdpa::kQ]);
  const Tensor &k = graph.tensor(node.inputs[Sdpa::kK]);
  const Tensor &v = graph.tensor(node.inputs[Sdpa::kV]);
  f.h_q = q.dims[1];
  f.h_k = k.dims[1];
  f.h_v = v.dims[1];
  f.s_q = q.dims[2];
  f.s_kv = attention_kv_length(graph, node);
  f.d_qk = q.dims[3];
  f.d_v = v.dims[3];
  f.padding = s.options.padding_mask;
  f.ragged = s.ragged();
  f.bias = s.bias != 0;
  f.dropout = s.seeded_dropout() || s.mask_dropout();
  f.alibi = s.options.alibi_mask;
  f.score_mod = s.score_mod || s.score_mod_bprop;
  f.paged = s.paged();
  f.left = s.left_bound() >= 1;
  f.right = s.right_bound() >= 0;
  f.bottom_right_band = f.right && s.bottom_right();
  return f;
}

[[noreturn]] void refuse(const Node &node, const std::string &rule, const char *evidence) {
  fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": ", rule, " (", evidence, ")");
}

// A [b, h, s, 1] tensor laid out as packed BHSD (dims of size 1 may have any
// stride: they address nothing).
bool packed_bhsd(const Tensor &t) {
  int64_t expected = 1;
  for (int i = 3; i >= 0; --i) {
    if (t.dims[i] > 1 && t.strides[i] != expected) return false;
    expected *= t.dims[i];
  }
  return true;
}

// Rules about the graph itself, the same on every GPU and cuDNN
// (cudnn-frontend's _sdpa_validate.py and the C++ checks it mirrors).
void check_graph_rules(const Graph &graph, const Node &node, const Facts &f) {
  if (node.kind == OpKind::kSdpaBackward) {
    const SdpaBackwardAttrs &a = node.as<SdpaBackwardAttrs>();
    if ((a.max_total_seq_len_q > 0 || a.max_total_seq_len_kv > 0) && !f.ragged)
      refuse(node,
             "max_total_seq_len_q / _kv bound a ragged (packed) layout, and no tensor here has "
             "ragged offsets",
             kFrontend);
  }
  if (f.alibi && f.spec.right_bound() != 0)
    refuse(node, "alibi_mask needs a right bound of 0 (a causal mask)", kFrontend);
  if (f.bias && graph.tensor(f.spec.bias).dtype == CUDNNFE_DTYPE_BOOLEAN)
    refuse(node, "a BOOLEAN bias is not an additive bias", kFrontend);
  if (f.bottom_right_band && !f.padding && f.s_q > f.s_kv)
    refuse(node,
           cat("a bottom-right diagonal with a right bound needs s_q <= s_kv without "
               "padding_mask (s_q = ",
               f.s_q, ", s_kv = ", f.s_kv, ")"),
           kFrontend);
  if (f.bottom_right_band && (f.bias || f.alibi || f.dropout || (f.ragged && !f.padding)))
    refuse(node,
           cat("a bottom-right diagonal with a right bound does not combine with ",
               f.bias      ? "bias"
               : f.alibi   ? "alibi_mask"
               : f.dropout ? "dropout"
                           : "a ragged layout without padding_mask"),
           kFrontend);
  if (f.left && !f.padding && f.s_q > f.s_kv)
    refuse(node,
           cat("a left bound (sliding window) needs s_q <= s_kv without padding_mask (s_q = ",
               f.s_q, ", s_kv = ", f.s_kv, ")"),
           kFrontend);
  if ((f.left || f.right) && f.ragged && !f.padding)
    refuse(node, "a diagonal band with a ragged layout needs padding_mask", kFrontend);
  if (f.score_mod && (f.alibi || f.right || f.left || f.padding))
    refuse(node,
           "a score modifier does not combine with alibi_mask, padding_mask or a diagonal band "
           "(the modifier builds its own masks)",
           kFrontend);
  if (!f.fp8 && (f.d_qk % 8 != 0 || f.d_v % 8 != 0))
    refuse(node,
           cat("the head dims must be multiples of 8 (d_qk = ", f.d_qk, ", d_v = ", f.d_v, ")"),
           kFrontend);
  if (f.fp8 && f.bias) refuse(node, "FP8 attention takes no bias", kFrontend);
  if (f.fp8 && !f.backward && (f.d_qk % 16 != 0 || f.d_v % 16 != 0))
    refuse(node,
           cat("FP8 attention needs head dims that are multiples of 16 (d_qk = ", f.d_qk,
               ", d_v = ", f.d_v, ")"),
           kFrontend);
  if (f.backward) {
    if (f.s_q == 1 && f.s_kv == 1) refuse(node, "s_q = s_kv = 1 has no backward engine", kFrontend);
    return;
  }
  if (f.paged && (f.spec.seq_len_q == 0 || f.spec.seq_len_kv == 0))
    refuse(node, "a paged K/V cache needs seq_len_q and seq_len_kv", kFrontend);
  const int64_t max_seq_len_kv = f.spec.options.max_seq_len_kv;
  if (max_seq_len_kv > 0 && f.bias && graph.tensor(f.spec.bias).dims[3] != max_seq_len_kv)
    refuse(node,
           cat("bias has s_kv = ", graph.tensor(f.spec.bias).dims[3], " but max_seq_len_kv is ",
               max_seq_len_kv),
           kFrontend);
  if (node.kind == OpKind::kSdpa) {
    const int64_t rng_dump = node.outputs[Sdpa::kRngDump];
    if (max_seq_len_kv > 0 && rng_dump != 0 && graph.tensor(rng_dump).dims[3] != max_seq_len_kv)
      refuse(node,
             cat("rng_dump has s_kv = ", graph.tensor(rng_dump).dims[3], " but max_seq_len_kv is ",
                 max_seq_len_kv),
             kFrontend);
  }
  if (f.s_q == 1 && f.spec.sink_token != 0)
    refuse(node, "sink_token with s_q = 1 (decode) has no engine", kFrontend);
}

// Head-dim limits of the FP16/BF16 backward by architecture.
void check_backward_head_dims(const Node &node, const Facts &f, size_t v, int major) {
  const int64_t dq = f.d_qk, dv = f.d_v;
  const bool multiple_of_8 = dq % 8 == 0 && dv % 8 == 0;
  const std::string dims = cat(" (d_qk = ", dq, ", d_v = ", dv, ", sm ", major, "x, cuDNN ",
                               plan::cudnn_version_string(v), ")");
  if (major == 9) {
    if (v >= 91100 && v < 91300 && dq > 128 && dq <= 192 && dv > 64 && dv <= 128 && dv != 128 &&
        dq != 192)
      refuse(node, "the backward needs d_v = 128 with d_qk = 192 here" + dims, kFrontend);
    if (dq > 256 || dv > 256 || !multiple_of_8)
      refuse(node, "the backward needs head dims <= 256 and multiples of 8" + dims, kFrontend);
    return;
  }
  if (major == 10 && v >= 91100) {
    if (dq == 192) {
      if (dv != 128) refuse(node, "the backward needs d_v = 128 with d_qk = 192" + dims, kFrontend);
      return;
    }
    if (v >= 92300 && dq == 256 && dv == 256) return;
    const bool d512 = dq > 256 && dq <= 512 && dv > 256 && dv <= 512 && multiple_of_8;
    if ((dq > 128 || dv > 128 || !multiple_of_8) && !d512)
      refuse(node,
             "the backward needs head dims <= 128 (or both in (256, 512]), multiples of 8" + dims,
             kFrontend);
    return;
  }
  if (dq > 128 || dv > 128 || !multiple_of_8)
    refuse(node, "the backward needs head dims <= 128 and multiples of 8" + dims, kFrontend);
}

// cudnn-frontend's sdpa_fp8_bwd.h.
void check_fp8_backward_rules(const Node &node, const Facts &f, size_t v, int sm) {
  const int major = sm / 10;
  if (v < 90100 || v == 91000)
    refuse(node, "the FP8 attention backward needs cuDNN 9.1 (not 9.10.0)", kFrontend);
  if (f.bottom_right_band) {
    if (v < 90700 || (sm > 0 && major < 10))
      refuse(node, "the FP8 backward with a bottom-right diagonal needs sm 100 and cuDNN 9.7",
             kFrontend);
    if (f.s_q > f.s_kv || f.bias || f.dropout || f.s_q % 64 != 0 || f.s_kv % 64 != 0)
      refuse(node,
             "the FP8 backward's bottom-right diagonal needs s_q <= s_kv, both multiples of 64, "
             "and no bias or dropout",
             kFrontend);
  }
  if (sm == 0) return;
  if (major < 9) refuse(node, "FP8 attention needs sm 90 or newer", kFrontend);
  if (major == 9 && f.ragged)
    refuse(node, "the FP8 backward takes no ragged layout on sm 90", kFrontend);
  const std::string dims = cat(" (d_qk = ", f.d_qk, ", d_v = ", f.d_v, ", sm ", sm, ")");
  if (major == 9 && (f.d_qk != 128 || f.d_v != 128))
    refuse(node, "the FP8 backward needs d_qk = d_v = 128 on sm 90" + dims, kFrontend);
  const bool d192 = f.d_qk == 192 && f.d_v == 128;
  if (major >= 10 && !d192 && (f.d_qk > 128 || f.d_v > 128 || f.d_qk % 16 != 0 || f.d_v % 16 != 0))
    refuse(node, "the FP8 backward needs head dims <= 128 and multiples of 16" + dims, kFrontend);
}

void check_backward_version_rules(const Graph &graph, const Node &node, const Facts &f, size_t v,
                                  int sm) {
  const int major = sm / 10;
  if (v == 91000 || v == 91001)
    refuse(node, "cuDNN 9.10.0 and 9.10.1 compute the attention backward wrongly", kFrontend);
  if (v == 91400 && f.s_kv > 1024 && f.left && !f.right)
    refuse(node, "cuDNN 9.14.0 computes a left bound without a right bound wrongly for s_kv > 1024",
           kFrontend);
  if (f.fp8) return check_fp8_backward_rules(node, f, v, sm);
  if (sm > 0) check_backward_head_dims(node, f, v, major);
  const SdpaBackwardAttrs &a = node.as<SdpaBackwardAttrs>();
  if (a.deterministic && major == 10) {
    if (v < 91800) refuse(node, "a deterministic backward on sm 10x needs cuDNN 9.18", kFrontend);
    if (a.generate_dbias || f.dropout || f.alibi)
      refuse(node, "a deterministic backward on sm 10x takes no dBias, dropout or alibi_mask",
             kFrontend);
  }
  if (v >= 91801 && f.ragged && (major == 8 || major == 12) &&
      (a.deterministic || f.spec.ragged_stats != 0))
    refuse(node,
           "a ragged backward on sm 8x and 12x is neither deterministic nor reads ragged stats",
           kFrontend);
  const Tensor &stats = graph.tensor(node.inputs[SdpaBackward::kStats]);
  if (v < 92600 && f.spec.ragged_stats == 0 && !packed_bhsd(stats))
    refuse(node,
           cat("before cuDNN 9.26 the backward reads stats \"", stats.name,
               "\" at packed BHSD offsets whatever its strides, so they must be packed BHSD"),
           kFrontend);
  if (v < 90500 && a.generate_dbias && (f.padding || f.s_q % 64 != 0 || f.s_kv % 64 != 0))
    refuse(node, "before cuDNN 9.5, dBias needs s_q and s_kv multiples of 64 and no padding_mask",
           kFrontend);
  if (major == 10 && f.ragged && a.generate_dbias)
    refuse(node, "dBias with a ragged layout has no engine on sm 10x", kFrontend);
}

void check_forward_version_rules(const Graph &graph, const Node &node, const Facts &f, size_t v,
                                 int sm) {
  const int major = sm / 10;
  const int64_t d_max = std::max(f.d_qk, f.d_v);
  if (f.fp8) {
    if (v < 90100 || v == 91000)
      refuse(node, "FP8 attention needs cuDNN 9.1 (not 9.10.0)", kFrontend);
    if (sm > 0 && major < 9) refuse(node, "FP8 attention needs sm 90 or newer", kFrontend);
    if (sm > 0 && major < 10 && d_max > 256)
      refuse(node, cat("FP8 attention needs head dims <= 256 on sm ", sm), kFrontend);
    if (f.bottom_right_band && (v < 90700 || (sm > 0 && major < 10)))
      refuse(node, "FP8 attention with a bottom-right diagonal needs sm 100 and cuDNN 9.7",
             kFrontend);
    return;
  }
  if (v == 91000 || v == 91001)
    refuse(node, "cuDNN 9.10.0 and 9.10.1 compute the attention forward wrongly", kFrontend);
  if (v == 91400 && f.s_kv > 1024 && f.left && !f.right)
    refuse(node, "cuDNN 9.14.0 computes a left bound without a right bound wrongly for s_kv > 1024",
           kFrontend);
  if (v < 91002 && f.left && (!f.right || f.dropout || f.bias))
    refuse(node,
           "before cuDNN 9.10.2 a left bound needs a right bound and neither dropout nor bias",
           kFrontend);
  if (f.s_q == 1 && v <= 90900 && f.right)
    refuse(node, "before cuDNN 9.10, s_q = 1 takes no right bound", kFrontend);
  if (f.paged && v < 90500) refuse(node, "a paged K/V cache needs cuDNN 9.5", kFrontend);
  if (f.paged && d_max > 128 && v <= 90900)
    refuse(node, "before cuDNN 9.10 a paged K/V cache needs head dims <= 128", kFrontend);
  if (f.paged && f.ragged && v < 90700)
    refuse(node, "before cuDNN 9.7 a paged K/V cache takes no ragged layout", kFrontend);
  if ((f.spec.ragged_page_table_k || f.spec.ragged_page_table_v) && v < 91002)
    refuse(node, "a packed (ragged) page table needs cuDNN 9.10.2", kFrontend);
  if (f.bottom_right_band && v < 90600 && (f.s_q % 64 != 0 || f.s_kv % 64 != 0))
    refuse(node, "before cuDNN 9.6 a bottom-right diagonal needs s_q and s_kv multiples of 64",
           kFrontend);
  if (f.bottom_right_band && f.left && v < 90600 && f.s_q != f.s_kv)
    refuse(node, "before cuDNN 9.6 a bottom-right band with a left bound needs s_q = s_kv",
           kFrontend);
  if (sm > 0) {
    if (major < 8) refuse(node, "FP16/BF16 attention needs sm 80 or newer", kFrontend);
    if (major == 9 && v <= 90900 && f.bottom_right_band && f.left && f.s_q == f.s_kv)
      refuse(node, "before cuDNN 9.10 this bottom-right band has no engine on sm 90", kFrontend);
    const int64_t limit = major == 9 ? 256 : 128;
    const bool old = major == 10 ? v < 90900 : v <= 90900;
    if ((major == 8 || major == 9 || major == 10) && old && d_max > limit)
      refuse(node, cat("before cuDNN 9.10 the head dims must be <= ", limit, " on sm ", major, "x"),
             kFrontend);
    if (f.ragged && major < 9 && v < 91801)
      refuse(node, "a ragged layout needs sm 90 before cuDNN 9.18.1", kFrontend);
  }
  const int64_t stats = node.kind == OpKind::kSdpa ? node.outputs[Sdpa::kStats] : 0;
  if (stats != 0 && f.spec.ragged_stats == 0 && v < 91200 && !packed_bhsd(graph.tensor(stats)))
    refuse(node,
           "before cuDNN 9.12 stats are written at packed BHSD offsets, so they must be "
           "packed BHSD",
           kFrontend);
}

// Rules found by this repository's GPU tests (docs/refusals.md).
void check_observed_defects(const Graph &graph, const Node &node, const Facts &f, size_t v) {
  // With a caller's mask, cuDNN's backward leaves dropout_scale_inv out of
  // sum(dO * O) (H100, cuDNN 9.14 and 9.19: the gradients matched exactly
  // those computed without it), so only scale_inv = 1 gives right results.
  if (f.backward && f.spec.mask_dropout()) {
    const Tensor &inv = graph.tensor(f.spec.dropout_scale_inv);
    if (!inv.is_scalar || inv.scalar_value != 1.0)
      refuse(node,
             cat("with dropout_mask, cuDNN's backward ignores dropout_scale_inv \"", inv.name,
                 "\" (", inv.is_scalar ? cat("the scalar ", inv.scalar_value) : "a device tensor",
                 "), so the gradients are right only when it is a scalar of 1: fold the scale "
                 "into the mask (values 0 and 1/(1-p)) and give dropout_scale 1 and "
                 "dropout_scale_inv 1"),
             "tests/test_gpu_attention_options.cpp, cuDNN 9.14 and 9.19");
  }
  if (f.spec.sink_token != 0 && v > 0 && v < 91300)
    refuse(node,
           cat("sink_token needs cuDNN 9.13 (loaded cuDNN ", plan::cudnn_version_string(v), ")"),
           "cuDNN's sink attributes are 9.13's");
  if (f.ragged && v > 0 && v < 90600 && (f.h_q != f.h_k || f.h_q != f.h_v))
    refuse(node, "before cuDNN 9.6 a ragged layout needs h_q = h_k = h_v", kFrontend);
}

}  // namespace

void check_attention_support(const Graph &graph, const Node &node, const SupportTarget &target) {
  if (!target.gpu) return;
  const Facts f = read_facts(graph, node);
  check_graph_rules(graph, node, f);
  check_observed_defects(graph, node, f, target.cudnn_version);
  if (target.cudnn_version == 0) return;
  if (f.backward)
    check_backward_version_rules(graph, node, f, target.cudnn_version, target.sm);
  else
    check_forward_version_rules(graph, node, f, target.cudnn_version, target.sm);
}

}  // namespace cudnnfe
