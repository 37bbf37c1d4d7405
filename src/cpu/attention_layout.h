// Attention's q/k/v/o-like tensors in the layouts beyond plain strides
// (docs/attention.md), read into and written from packed row-major
// [b, h, s, x] vectors:
//  - ragged (packed, "THD"): batch n starts at element offsets[n] of the
//    buffer (the batch stride is not used) and only its `valid[n]` rows
//    exist; the others read as 0 and are never written (they belong to the
//    next sequence);
//  - paged: a container [num_pages, h, page_size, x] and a page table
//    [b, 1, pages, 1]; row j of batch n is row j % page_size of page
//    table[n][j / page_size]. Only rows j < valid[n] are read. A packed
//    (ragged) table places batch n's entries at its offsets[n], as above.
// Bad offsets and page numbers are refused with INVALID_ARGUMENT naming
// the node and the batch.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "cpu/element_mask.h"
#include "cpu/strided_tensor.h"

namespace cudnnfe {
namespace cpu {

// The logical key length s_kv (ops/attention.h, attention_kv_length): k's
// dims[2] without page tables; with them max_seq_len_kv when > 0, else the
// unpaged one of k and v, else k's pages per sequence times its page size.
inline int64_t paged_kv_length(const StridedTensor &k, const StridedTensor &v,
                               const StridedTensor *page_table_k, const StridedTensor *page_table_v,
                               int64_t max_seq_len_kv) {
  if (!page_table_k && !page_table_v) return k.dims[2];
  if (max_seq_len_kv > 0) return max_seq_len_kv;
  if (!page_table_k) return k.dims[2];
  if (!page_table_v) return v.dims[2];
  return page_table_k->dims[2] * k.dims[2];
}

// Element offset of batch n's start: offsets[n] when ragged, else n *
// stride[0].
inline int64_t attention_batch_start(const StridedTensor &t, const StridedTensor *offsets,
                                     int64_t n, const std::string &label, const char *what) {
  if (!offsets) return n * t.strides[0];
  const double value = offsets->load(n * offsets->strides[0]);
  if (!(value >= 0))
    fail(CUDNNFE_STATUS_INVALID_ARGUMENT, label, ": ", what, "[", n, "] = ", value,
         " is negative; ragged offsets are element offsets into the packed buffer");
  return static_cast<int64_t>(value);
}

// t as packed [b, h, s, x] values rounded to `compute`. `rows` (verify
// mode): only the rows (n, h, s) it holds, packed over [b, h, s]; the
// others read as 0.
inline std::vector<double> load_attention_tensor(const StridedTensor &t,
                                                 const StridedTensor *offsets,
                                                 const std::vector<int64_t> &valid,
                                                 cudnnfe_dtype_t compute, const std::string &label,
                                                 const char *what,
                                                 const ElementMask *rows = nullptr) {
  if (!offsets && !rows) return load_dense(t, compute);
  const int64_t b = t.dims[0], h = t.dims[1], s = t.dims[2], x = t.dims[3];
  std::vector<double> out(static_cast<size_t>(b * h * s * x), 0.0);
  for (int64_t n = 0; n < b; ++n) {
    const int64_t start = attention_batch_start(t, offsets, n, label, what);
    const int64_t count = offsets ? valid[static_cast<size_t>(n)] : s;
    for (int64_t hh = 0; hh < h; ++hh)
      for (int64_t i = 0; i < count; ++i)
        if (!rows || rows->test((n * h + hh) * s + i))
          for (int64_t c = 0; c < x; ++c)
            out[static_cast<size_t>(((n * h + hh) * s + i) * x + c)] = round_to_compute(
                t.load(start + hh * t.strides[1] + i * t.strides[2] + c * t.strides[3]), compute);
  }
  return out;
}

// Writes packed [b, h, s, x] `values` (rounded to `compute`) into t; with
// `rows` (verify mode) only those rows.
inline void store_attention_tensor(const StridedTensor &t, const StridedTensor *offsets,
                                   const std::vector<int64_t> &valid,
                                   const std::vector<double> &values, cudnnfe_dtype_t compute,
                                   const std::string &label, const char *what,
                                   const ElementMask *rows = nullptr) {
  if (!offsets && !rows) return store_dense(t, values, compute);
  const int64_t b = t.dims[0], h = t.dims[1], s = t.dims[2], x = t.dims[3];
  for (int64_t n = 0; n < b; ++n) {
    const int64_t start = attention_batch_start(t, offsets, n, label, what);
    const int64_t count = offsets ? valid[static_cast<size_t>(n)] : s;
    for (int64_t hh = 0; hh < h; ++hh)
      for (int64_t i = 0; i < count; ++i)
        if (!rows || rows->test((n * h + hh) * s + i))
          for (int64_t c = 0; c < x; ++c)
            t.store(start + hh * t.strides[1] + i * t.strides[2] + c * t.strides[3],
                    round_to_compute(values[static_cast<size_t>(((n * h + hh) * s + i) * x + c)],
                                     compute));
  }
}

// Stats [b, h, s, 1] as stored (not rounded), packed row-major. Ragged
// stats have only the rows s < valid[n]; the others read as -inf (no row).
inline std::vector<double> load_stats(const StridedTensor &t, const StridedTensor *offsets,
                                      const std::vector<int64_t> &valid, const std::string &label) {
  if (!offsets) return load_dense(t);
  const int64_t b = t.dims[0], h = t.dims[1], s = t.dims[2];
  std::vector<double> out(static_cast<size_t>(b * h * s), -std::numeric_limits<double>::infinity());
  for (int64_t n = 0; n < b; ++n) {
    const int64_t start = attention_batch_start(t, offsets, n, label, "ragged_offset_stats");
    for (int64_t hh = 0; hh < h; ++hh)
      for (int64_t i = 0; i < valid[static_cast<size_t>(n)]; ++i)
        out[static_cast<size_t>((n * h + hh) * s + i)] =
            t.load(start + hh * t.strides[1] + i * t.strides[2]);
  }
  return out;
}

// A paged cache gathered to packed [b, h, s_kv, x] (rows j >= valid[n]
// read as 0). `table_offsets`: a packed table's ragged offsets, or nullptr.
struct PageTable {
  const StridedTensor &table;
  const StridedTensor *offsets;
  const char *what;          // "page_table_k"
  const char *offsets_what;  // "ragged_offset_page_table_k"
};
inline std::vector<double> load_paged_tensor(const StridedTensor &container, const PageTable &pt,
                                             int64_t batch, int64_t s_kv,
                                             const std::vector<int64_t> &valid,
                                             cudnnfe_dtype_t compute, const std::string &label) {
  const StridedTensor &table = pt.table;
  const char *what = pt.what;
  const int64_t pages = container.dims[0], h = container.dims[1], page_size = container.dims[2],
                x = container.dims[3];
  std::vector<double> out(static_cast<size_t>(batch * h * s_kv * x), 0.0);
  for (int64_t n = 0; n < batch; ++n) {
    const int64_t start = attention_batch_start(table, pt.offsets, n, label, pt.offsets_what);
    for (int64_t j = 0; j < valid[static_cast<size_t>(n)]; ++j) {
      const int64_t slot = j / page_size;
      const double page_value = table.load(start + slot * table.strides[2]);
      if (!(page_value >= 0 && page_value < static_cast<double>(pages)))
        fail(CUDNNFE_STATUS_INVALID_ARGUMENT, label, ": ", what, "[", n, "][", slot,
             "] = ", page_value, " is not a page of the container (0..", pages - 1, ")");
      const int64_t page = static_cast<int64_t>(page_value);
      for (int64_t hh = 0; hh < h; ++hh)
        for (int64_t c = 0; c < x; ++c)
          out[static_cast<size_t>(((n * h + hh) * s_kv + j) * x + c)] = round_to_compute(
              container.load(page * container.strides[0] + hh * container.strides[1] +
                             (j % page_size) * container.strides[2] + c * container.strides[3]),
              compute);
    }
  }
  return out;
}

}  // namespace cpu
}  // namespace cudnnfe
