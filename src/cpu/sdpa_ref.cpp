// Scaled dot-product attention forward, one query row at a time:
//   s_j = scale * q . k_j + bias_j + alibi_h * (j - i)   for the columns j
//         the masks leave (cpu/attention_mask.h)
//         and a block mask keeps (-inf where it does not)
//   m   = max(max_j s_j, sink_h),  Z = sum_j exp(s_j - m) + exp(sink_h - m)
//   P   = exp(s - m) / Z,  stats = m + log(Z)   (no sink: sink_h = -inf)
//   score_max = m, score_sum_exp = Z, rng_dump = the drawn dropout mask
//   O   = sum_j P_j * dropout_j * v_j   (cpu/attention_dropout.h)
// Dot products, softmax and the weighted sum run in double. A row that sees
// no column (a padding row, a band or causal mask leaving nothing) writes
// O = 0 and stats = -inf, the log-sum-exp of an empty set; so does a row
// whose bias is -inf on every visible column. With a sink such a row has
// Z = 1: O = 0 and stats = sink_h.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "cpu/attention_layout.h"
#include "cpu/attention_mask.h"
#include "cpu/attention_scores.h"
#include "cpu/reference_ops.h"
#include "cpu/reference_table.h"
#include "graph/graph.h"

namespace cudnnfe {
namespace cpu {

namespace {

// The softmax's row max and sum of exponentials (sink included), in the
// caller's score_max and score_sum_exp [b, h_q, s_q, 1] where asked for;
// ragged ones (their own offsets) only for the valid rows i < `valid_rows`.
void store_row_softmax(const SdpaTensors &t, int64_t b, int64_t h, int64_t i, int64_t valid_rows,
                       double max, double sum, const std::string &label) {
  const AttentionInputs &in = t.options;
  const std::tuple<const StridedTensor *, const StridedTensor *, double, const char *> outs[] = {
      {t.score_max, in.ragged_score_max, max, "ragged_offset_score_max"},
      {t.score_sum_exp, in.ragged_score_sum_exp, sum, "ragged_offset_score_sum_exp"}};
  for (auto [out, offsets, value, what] : outs) {
    if (!out || (offsets && i >= valid_rows)) continue;
    const int64_t start = attention_batch_start(*out, offsets, b, label, what);
    out->store(start + h * out->strides[1] + i * out->strides[2], static_cast<float>(value));
  }
}

}  // namespace

void run_sdpa(const Node &node, double scale, const SdpaTensors &t) {
  const StridedTensor &q = *t.q, &k = *t.k, &v = *t.v, &o = *t.o;
  if (q.rank != 4 || k.rank != 4 || v.rank != 4 || o.rank != 4)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node),
         ": the CPU reference needs 4-D q, k, v and O");
  const AttentionSpec spec = attention_spec(node);
  const int64_t batch = q.dims[0], h_q = q.dims[1], s_q = q.dims[2], d = q.dims[3];
  const AttentionInputs &in = t.options;
  // A paged k or v is a page container: s_kv is the cache's logical length
  // (ops/attention.h, attention_kv_length).
  const int64_t max_seq_len_kv = node.as<SdpaAttrs>().options.max_seq_len_kv;
  const int64_t s_kv = paged_kv_length(k, v, in.page_table_k, in.page_table_v, max_seq_len_kv);
  // k and v may have different head counts, each dividing h_q
  // (cudnn-frontend's GQA: consecutive query heads share a head).
  const int64_t h_kv = k.dims[1], h_v = v.dims[1], d_v = v.dims[3];
  const int64_t k_group = h_q / h_kv, v_group = h_q / h_v;
  const std::string label = Graph::label(node);
  const cudnnfe_dtype_t compute = node.compute_dtype;
  if (compute == CUDNNFE_DTYPE_INT32)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node),
         ": attention needs a floating compute type on the CPU reference, not INT32");
  if (t.options.attn_scale) scale = t.options.attn_scale->load(0);
  scale = round_to_compute(scale, compute);

  const AttentionMask mask(spec, label, batch, s_q, s_kv, in.seq_len_q, in.seq_len_kv);
  std::vector<int64_t> rows, cols;  // valid query rows and keys per batch
  for (int64_t n = 0; n < batch; ++n) {
    rows.push_back(mask.rows(n));
    cols.push_back(mask.cols(n));
  }
  // Verify mode: the wanted query rows, and every row of their kv heads.
  const ElementMask *q_rows = t.rows;
  ElementMask kv_storage;
  const ElementMask *kv_rows = nullptr;
  if (t.rows) {
    kv_storage = ElementMask(batch * h_kv * s_kv);
    t.rows->for_each([&](int64_t r) {
      const int64_t head = (r / (s_q * h_q)) * h_kv + (r / s_q) % h_q / k_group;
      if (!kv_storage.test(head * s_kv)) kv_storage.set_range(head * s_kv, (head + 1) * s_kv);
    });
    kv_rows = &kv_storage;
  }
  const std::vector<double> qd =
      load_attention_tensor(q, in.ragged_q, rows, compute, label, "ragged_offset_q", q_rows);
  const std::vector<double> kd =
      in.page_table_k
          ? load_paged_tensor(k,
                              {*in.page_table_k, in.ragged_page_table_k, "page_table_k",
                               "ragged_offset_page_table_k"},
                              batch, s_kv, cols, compute, label)
          : load_attention_tensor(k, in.ragged_k, cols, compute, label, "ragged_offset_k",
                                  k.dims[2] == s_kv ? kv_rows : nullptr);
  const std::vector<double> vd =
      in.page_table_v
          ? load_paged_tensor(v,
                              {*in.page_table_v, in.ragged_page_table_v, "page_table_v",
                               "ragged_offset_page_table_v"},
                              batch, s_kv, cols, compute, label)
          : load_attention_tensor(v, in.ragged_v, cols, compute, label, "ragged_offset_v",
                                  v.dims[1] == h_kv && v.dims[2] == s_kv ? kv_rows : nullptr);
  const Index score_dims = {batch, h_q, s_q, s_kv};
  const AttentionScores score(spec, scale, compute, qd, kd, t.options.bias, score_dims, h_kv, d,
                              t.score_mod);
  std::vector<double> od(static_cast<size_t>(batch * h_q * s_q * d_v), 0.0);
  const AttentionDropout dropout(spec, t.options, score_dims);
  const StridedTensor *stats = t.stats;
  std::vector<int64_t> stats_start;  // element offset of each batch's stats
  for (int64_t n = 0; stats && n < batch; ++n)
    stats_start.push_back(
        attention_batch_start(*stats, in.ragged_stats, n, label, "ragged_offset_stats"));

  std::vector<double> scores(static_cast<size_t>(s_kv)), out(static_cast<size_t>(d_v));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < h_q; ++h) {
      const double *v_head = &vd[static_cast<size_t>((b * h_v + h / v_group) * s_kv * d_v)];
      const double sink = in.sink_token ? in.sink_token->load(h * in.sink_token->strides[1])
                                        : -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < s_q; ++i) {
        if (t.rows && !t.rows->test((b * h_q + h) * s_q + i)) continue;  // verify mode
        const ColumnRange cols = mask.columns(b, i);
        double max = sink;
        for (int64_t j = cols.first; j <= cols.last; ++j) {
          const bool kept = !in.block_mask || block_mask_keeps(*in.block_mask, b, h, i, j);
          const double s = kept ? score(b, h, i, j) : -std::numeric_limits<double>::infinity();
          scores[static_cast<size_t>(j)] = s;
          max = std::fmax(max, s);
        }
        std::fill(out.begin(), out.end(), 0.0);
        // No visible column nor sink, or a bias of -inf on all of them.
        const bool empty = max == -std::numeric_limits<double>::infinity();
        double sum = 0.0;
        if (!empty) {
          if (in.sink_token) sum += std::exp(sink - max);
          for (int64_t j = cols.first; j <= cols.last; ++j)
            sum += std::exp(scores[static_cast<size_t>(j)] - max);
          for (int64_t j = cols.first; j <= cols.last; ++j) {
            const double p = std::exp(scores[static_cast<size_t>(j)] - max) / sum;
            const double kept =
                dropout.active() ? p * dropout.mask(b, h, i, j) * dropout.scale() : p;
            for (int64_t c = 0; c < d_v; ++c)
              out[static_cast<size_t>(c)] += kept * v_head[j * d_v + c];
          }
        }
        if (!empty)
          for (int64_t c = 0; c < d_v; ++c)
            od[static_cast<size_t>(((b * h_q + h) * s_q + i) * d_v + c)] =
                out[static_cast<size_t>(c)];
        store_row_softmax(t, b, h, i, rows[static_cast<size_t>(b)],
                          empty ? -std::numeric_limits<double>::infinity() : max, empty ? 0.0 : sum,
                          label);
        if (t.rng_dump)
          for (int64_t j = 0; j < s_kv; ++j)
            t.rng_dump->store(b * t.rng_dump->strides[0] + h * t.rng_dump->strides[1] +
                                  i * t.rng_dump->strides[2] + j * t.rng_dump->strides[3],
                              dropout.mask(b, h, i, j));
        // Ragged stats have no rows past seq_len_q (the next sequence's).
        if (stats && (!in.ragged_stats || i < rows[static_cast<size_t>(b)])) {
          const double lse = empty ? -std::numeric_limits<double>::infinity() : max + std::log(sum);
          stats->store(
              stats_start[static_cast<size_t>(b)] + h * stats->strides[1] + i * stats->strides[2],
              round_to_compute(lse, compute));
        }
      }
    }
  }
  store_attention_tensor(o, in.ragged_o, rows, od, compute, label, "ragged_offset_o", t.rows);
}

ElementMask sdpa_rows(const StridedTensor &o, const ElementMask *want_o,
                      const ElementMask *want_stats) {
  const int64_t rows = o.dims[0] * o.dims[1] * o.dims[2];
  ElementMask wanted = want_o ? rows_of(*want_o, o.dims[3]) : ElementMask(rows);
  if (want_stats) wanted.merge(*want_stats);  // stats [b, h, s_q, 1]: one element per row
  return wanted;
}

// Query row (b, h, i) reads row i of q, all of k and v of its kv head, and
// the bias and dropout mask row (b, h, i) (broadcast). Ragged and paged
// layouts, and every other input (lengths, scale, sink, seeds, block mask,
// page tables, score modifier inputs), are read whole.
void demand_sdpa(const DemandStep &t) {
  const AttentionSpec spec = attention_spec(t.node);
  const AttentionPorts &ports = attention_ports(t.node.kind);
  constexpr size_t kQ = 0, kK = 1, kV = 2, kO = 0, kStats = 1;
  const StridedTensor &q = *t.in(kQ), &k = *t.in(kK), &o = *t.out(kO);
  std::vector<bool> done(t.need.size(), false);
  auto whole = [&](size_t port) {
    if (port < t.need.size() && t.need[port]) t.need[port]->set_all();
    if (port < done.size()) done[port] = true;
  };
  if (spec.ragged() || spec.paged() || q.rank != 4 || k.rank != 4) {
    t.need_all_from(0);
    return;
  }
  const ElementMask rows = sdpa_rows(o, t.wanted(kO), t.wanted(kStats));
  const int64_t h_q = q.dims[1], s_q = q.dims[2], d = q.dims[3], h_kv = k.dims[1];
  const int64_t group = h_q / h_kv;
  ElementMask heads(q.dims[0] * h_kv);  // (b, kv head)
  auto row_major = [](const StridedTensor &t4, int64_t b, int64_t h, int64_t i, int64_t j) {
    auto at = [&](int dim, int64_t v) { return t4.dims[dim] == 1 ? 0 : v; };
    return ((at(0, b) * t4.dims[1] + at(1, h)) * t4.dims[2] + at(2, i)) * t4.dims[3] + at(3, j);
  };
  rows.for_each([&](int64_t r) {
    const int64_t i = r % s_q, h = (r / s_q) % h_q, b = r / (s_q * h_q);
    t.needed(kQ)->set_range(r * d, (r + 1) * d);
    heads.set(b * h_kv + h / group);
    for (size_t port : {ports.bias, ports.dropout_mask}) {
      if (port == AttentionPorts::kNone || !t.needed(port)) continue;
      const StridedTensor &m = *t.in(port);
      if (m.rank != 4) continue;  // read whole below
      const int64_t first = row_major(m, b, h, i, 0);
      if (m.dims[3] == 1)
        t.needed(port)->set(first);
      else
        t.needed(port)->set_range(first, first + m.dims[3]);
      done[port] = true;
    }
  });
  for (size_t port : {kK, kV}) {
    const StridedTensor &kv = *t.in(port);
    if (kv.dims[1] != h_kv) {  // v with its own head count: all of it
      whole(port);
      continue;
    }
    const int64_t head = kv.dims[2] * kv.dims[3];
    heads.for_each([&](int64_t bh) { t.needed(port)->set_range(bh * head, (bh + 1) * head); });
    done[port] = true;
  }
  done[kQ] = true;
  for (size_t port = 0; port < t.need.size(); ++port)
    if (!done[port]) whole(port);
}

}  // namespace cpu
}  // namespace cudnnfe
