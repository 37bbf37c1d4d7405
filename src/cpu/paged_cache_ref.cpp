// paged_cache_load in double: y[n, h, j, :] = container[page_table[n][j /
// page_size], h, j % page_size, :] for rows j < seq_len[n]; later rows are
// written as 0 (cuDNN leaves them unspecified). Values are copied, not
// rounded. The gather is attention's (cpu/attention_layout.h), so a page
// number outside the container is refused the same way.
#include <vector>

#include "core/error.h"
#include "cpu/attention_layout.h"
#include "cpu/reference_ops.h"
#include "graph/graph.h"

namespace cudnnfe {
namespace cpu {

void run_paged_cache_load(const Node &node, const StridedTensor &container,
                          const StridedTensor &seq_len, const StridedTensor &page_table,
                          const StridedTensor &y) {
  const std::string label = Graph::label(node);
  const int64_t batch = y.dims[0], s = y.dims[2];
  std::vector<int64_t> valid(static_cast<size_t>(batch));
  for (int64_t n = 0; n < batch; ++n) {
    const double length = seq_len.load(n * seq_len.strides[0]);
    if (!(length >= 0 && length <= static_cast<double>(s)))
      fail(CUDNNFE_STATUS_INVALID_ARGUMENT, label, ": seq_len[", n, "] = ", length,
           " is outside 0..", s, " (y's sequence length)");
    valid[static_cast<size_t>(n)] = static_cast<int64_t>(length);
  }
  const PageTable pt{page_table, nullptr, "page_table", "ragged offsets"};
  store_dense(y, load_paged_tensor(container, pt, batch, s, valid, CUDNNFE_DTYPE_DOUBLE, label));
}

}  // namespace cpu
}  // namespace cudnnfe
