// cudnnfe_attention_common_t: the options the attention option sets share,
// filled once and copied into each set (include/cudnnfe/cudnnfe.h, after
// cudnnfe_graph_add_sdpa_backward_ex). The sets keep their own fields: the
// copy is the only link, so no released struct layout changes.
#include <cstddef>

#include "api/guard.h"
#include "ops/attention.h"

using namespace cudnnfe;

void cudnnfe_attention_common_init_sized(cudnnfe_attention_common_t *c, size_t struct_size) {
  init_sized(c, struct_size, [](cudnnfe_attention_common_t *c) {
    c->window_left = AttentionOptions{}.window_left;
    c->window_right = AttentionOptions{}.window_right;
    c->diagonal_alignment = CUDNNFE_DIAGONAL_TOP_LEFT;
  });
}

namespace {

// Copies the shared fields into `o` (initialized by its init function),
// refusing a struct that does not reach them; `alibi` writes alibi_mask for
// the sets that have it.
template <class Options, class Alibi>
cudnnfe_status_t set_common(Options *o, const cudnnfe_attention_common_t *given, const char *what,
                            Alibi alibi) {
  return guard([&] {
    if (!o) fail_argument(what, " is NULL");
    const cudnnfe_attention_common_t c =
        read_options(given, cudnnfe_attention_common_init_sized, "attention common options");
    const size_t end = offsetof(Options, dropout_scale) + sizeof(o->dropout_scale);
    if (o->struct_size < end || o->struct_size > sizeof(Options))
      fail_argument(what, ": struct_size is ", o->struct_size, "; the shared attention fields ",
                    "need ", end, " to ", sizeof(Options), " (call its init function first)");
    alibi(*o, c.alibi_mask);
    o->attn_scale = c.attn_scale;
    o->causal_mask = c.causal_mask;
    o->window_left = c.window_left;
    o->window_right = c.window_right;
    o->diagonal_alignment = c.diagonal_alignment;
    o->padding_mask = c.padding_mask;
    o->seq_len_q = c.seq_len_q;
    o->seq_len_kv = c.seq_len_kv;
    o->dropout_probability = c.dropout_probability;
    o->dropout_seed = c.dropout_seed;
    o->dropout_offset = c.dropout_offset;
    o->dropout_mask = c.dropout_mask;
    o->dropout_scale = c.dropout_scale;
  });
}

template <class Options>
void copy_alibi(Options &o, int32_t alibi_mask) {
  o.alibi_mask = alibi_mask;
}

}  // namespace

cudnnfe_status_t cudnnfe_sdpa_options_set_common(cudnnfe_sdpa_options_t *options,
                                                 const cudnnfe_attention_common_t *common) {
  return set_common(options, common, "sdpa options", copy_alibi<cudnnfe_sdpa_options_t>);
}

cudnnfe_status_t cudnnfe_sdpa_backward_options_set_common(
    cudnnfe_sdpa_backward_options_t *options, const cudnnfe_attention_common_t *common) {
  return set_common(options, common, "sdpa_backward options",
                    copy_alibi<cudnnfe_sdpa_backward_options_t>);
}

cudnnfe_status_t cudnnfe_sdpa_fp8_options_set_common(cudnnfe_sdpa_fp8_options_t *options,
                                                     const cudnnfe_attention_common_t *common) {
  return set_common(options, common, "sdpa_fp8 options", copy_alibi<cudnnfe_sdpa_fp8_options_t>);
}

cudnnfe_status_t cudnnfe_sdpa_fp8_backward_options_set_common(
    cudnnfe_sdpa_fp8_backward_options_t *options, const cudnnfe_attention_common_t *common) {
  return set_common(options, common, "sdpa_fp8_backward options",
                    [](cudnnfe_sdpa_fp8_backward_options_t &, int32_t alibi_mask) {
                      if (alibi_mask != 0)
                        fail_argument("sdpa_fp8_backward options: alibi_mask is ", alibi_mask,
                                      "; the FP8 backward has no ALiBi (cudnn-frontend's "
                                      "sdpa_fp8_backward has none)");
                    });
}
