// paged_cache_load: shape and type rules. A paged K or V cache, container
// [num_pages, h, page_size, d], is gathered by a page table [b, 1, pages, 1]
// and sequence lengths [b, 1, 1, 1] (integers) into y [b, h, s, d], s
// pages * page_size unless y's dims were set (then ceil(s / page_size) must
// be pages, cudnn-frontend's rule in node/paged_cache_load.h).
#include "core/dtype.h"
#include "core/error.h"
#include "ops/ops.h"

namespace cudnnfe {
namespace {

void require_dims(const Node &node, size_t port, const Tensor &t, const std::vector<int64_t> &dims,
                  const char *rule) {
  if (t.dims != dims)
    fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", t.name, "\" is ",
               dims_string(t.dims), "; expected ", dims_string(dims), " (", rule, ")");
}

// y's dims when set by the caller: [b, h, s, d] with ceil(s / page_size) = pages.
void check_set_output(const Node &node, const Tensor &y, const std::vector<int64_t> &dims,
                      int64_t page_size) {
  const int64_t pages = dims[2] / page_size;
  const bool same_b_h_d =
      y.dims.size() == 4 && y.dims[0] == dims[0] && y.dims[1] == dims[1] && y.dims[3] == dims[3];
  if (!same_b_h_d || y.dims[2] < 1 || (y.dims[2] + page_size - 1) / page_size != pages)
    fail_graph(Graph::label(node), ": y \"", y.name, "\" was set to ", dims_string(y.dims),
               "; expected [b, h, s, d] = [", dims[0], ", ", dims[1], ", s, ", dims[3],
               "] with ceil(s / page_size) = ", pages,
               " (the page table's entries per sequence; page_size = ", page_size, ")");
}

}  // namespace

void infer_paged_cache_load(Graph &graph, Node &node) {
  using namespace PagedCacheLoad;
  const Tensor &container = required_input(graph, node, kContainer);
  require_rank(node, "container", container, 4, "[num_pages, h, page_size, d]");
  const Tensor &table = required_input(graph, node, kPageTable);
  require_rank(node, "page_table", table, 4, "[b, 1, pages, 1]");
  const int64_t b = table.dims[0], pages = table.dims[2];
  require_dims(node, kPageTable, table, {b, 1, pages, 1},
               "one page number per page of each sequence");
  require_dims(node, kSeqLen, required_input(graph, node, kSeqLen), {b, 1, 1, 1},
               "one length per sequence, b from page_table");
  const int64_t page_size = container.dims[2];
  const std::vector<int64_t> dims{
      b, container.dims[1],
      checked_size(node, CheckedInt(pages) * page_size, "s (pages per sequence times page_size)"),
      container.dims[3]};
  Tensor &y = set_output_shape(graph, node, kY, dims, row_major_order(4));
  if (y.dims != dims) check_set_output(node, y, dims, page_size);
  if (y.dtype == CUDNNFE_DTYPE_NOT_SET) y.dtype = container.dtype;
}

void check_types_paged_cache_load(Graph &graph, Node &node) {
  // Page numbers and lengths count rows: an integer type (INT32 in cudnn-frontend's paged
  // attention samples; cuDNN decides the rest). The container's type is the caller's.
  for (size_t port : {size_t{PagedCacheLoad::kSeqLen}, size_t{PagedCacheLoad::kPageTable}}) {
    const Tensor &t = graph.tensor(node.inputs[port]);
    if (!dtype_is_integer(t.dtype))
      fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", t.name, "\" is ",
                 dtype_name(t.dtype), "; expected an integer type (page numbers and lengths)");
  }
}

}  // namespace cudnnfe
