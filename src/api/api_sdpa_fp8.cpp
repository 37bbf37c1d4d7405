// The FP8 attention ops of the C API (forward and backward).
#include "api/guard.h"
#include "graph/op_schema.h"
#include "ops/sdpa_fp8.h"

using namespace cudnnfe;

void cudnnfe_sdpa_fp8_options_init_sized(cudnnfe_sdpa_fp8_options_t *o, size_t struct_size) {
  init_sized(o, struct_size,
             [](cudnnfe_sdpa_fp8_options_t *o) { write_c_defaults(OpKind::kSdpaFp8, o); });
}

void cudnnfe_sdpa_fp8_backward_options_init_sized(cudnnfe_sdpa_fp8_backward_options_t *o,
                                                  size_t struct_size) {
  init_sized(o, struct_size, [](cudnnfe_sdpa_fp8_backward_options_t *o) {
    write_c_defaults(OpKind::kSdpaFp8Backward, o);
  });
}

cudnnfe_status_t cudnnfe_graph_add_sdpa_fp8(cudnnfe_graph_t *g, int64_t q, int64_t k, int64_t v,
                                            int64_t descale_q, int64_t descale_k, int64_t descale_v,
                                            int64_t descale_s, int64_t scale_s, int64_t scale_o,
                                            const cudnnfe_sdpa_fp8_options_t *options, int64_t *o,
                                            int64_t *stats, int64_t *amax_s, int64_t *amax_o) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(o, "o");
    require_out(amax_s, "amax_s");
    require_out(amax_o, "amax_o");
    auto opts = read_options(options, cudnnfe_sdpa_fp8_options_init_sized, "sdpa_fp8 options");
    if (opts.generate_stats) require_out(stats, "stats (generate_stats is set)");
    SdpaFp8Attrs a;
    read_c_options(OpKind::kSdpaFp8, &opts, &a);
    // FP8 attention computes in FLOAT whatever the graph's default.
    const Node &node = graph.add_node(
        OpKind::kSdpaFp8, string_or_empty(opts.name),
        {q, k, v, descale_q, descale_k, descale_v, descale_s, scale_s, scale_o, opts.seq_len_q,
         opts.seq_len_kv, opts.dropout_seed, opts.dropout_offset, opts.dropout_mask,
         opts.dropout_scale, opts.page_table_k, opts.page_table_v, opts.sink_token},
        a, CUDNNFE_DTYPE_FLOAT);
    *o = node.outputs[SdpaFp8::kO];
    if (stats) *stats = node.outputs[SdpaFp8::kStats];
    *amax_s = node.outputs[SdpaFp8::kAmaxS];
    *amax_o = node.outputs[SdpaFp8::kAmaxO];
  });
}

cudnnfe_status_t cudnnfe_graph_add_sdpa_fp8_backward(
    cudnnfe_graph_t *g, int64_t q, int64_t k, int64_t v, int64_t o, int64_t d_o, int64_t stats,
    int64_t descale_q, int64_t descale_k, int64_t descale_v, int64_t descale_o, int64_t descale_do,
    int64_t descale_s, int64_t descale_dp, int64_t scale_s, int64_t scale_dq, int64_t scale_dk,
    int64_t scale_dv, int64_t scale_dp, const cudnnfe_sdpa_fp8_backward_options_t *options,
    int64_t *dq, int64_t *dk, int64_t *dv, int64_t *amax_dq, int64_t *amax_dk, int64_t *amax_dv,
    int64_t *amax_dp) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(dq, "dq");
    require_out(dk, "dk");
    require_out(dv, "dv");
    require_out(amax_dq, "amax_dq");
    require_out(amax_dk, "amax_dk");
    require_out(amax_dv, "amax_dv");
    require_out(amax_dp, "amax_dp");
    auto opts = read_options(options, cudnnfe_sdpa_fp8_backward_options_init_sized,
                             "sdpa_fp8_backward options");
    SdpaFp8BackwardAttrs a;
    read_c_options(OpKind::kSdpaFp8Backward, &opts, &a);
    const Node &node = graph.add_node(OpKind::kSdpaFp8Backward, string_or_empty(opts.name),
                                      {q,
                                       k,
                                       v,
                                       o,
                                       d_o,
                                       stats,
                                       descale_q,
                                       descale_k,
                                       descale_v,
                                       descale_o,
                                       descale_do,
                                       descale_s,
                                       descale_dp,
                                       scale_s,
                                       scale_dq,
                                       scale_dk,
                                       scale_dv,
                                       scale_dp,
                                       opts.seq_len_q,
                                       opts.seq_len_kv,
                                       opts.dropout_seed,
                                       opts.dropout_offset,
                                       opts.dropout_mask,
                                       opts.dropout_scale,
                                       opts.dropout_scale_inv},
                                      a, CUDNNFE_DTYPE_FLOAT);
    using namespace SdpaFp8Backward;
    *dq = node.outputs[kDQ];
    *dk = node.outputs[kDK];
    *dv = node.outputs[kDV];
    *amax_dq = node.outputs[kAmaxDQ];
    *amax_dk = node.outputs[kAmaxDK];
    *amax_dv = node.outputs[kAmaxDV];
    *amax_dp = node.outputs[kAmaxDP];
  });
}
