// paged_cache_load: cuDNN's CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR
// (cuDNN 9.5+), with the four tensors cudnn-frontend sets. Attention's paged
// K/V (attention_masks.cpp) adds the same operation through
// add_paged_cache_load.
#include "backend/attribute_util.h"
#include "backend/descriptor.h"
#include "backend/lowering.h"
#include "core/error.h"
#include "graph/graph.h"
#include "plan/notes.h"

namespace cudnnfe::backend {

// The release that added the operation (cudnn-frontend's check).
constexpr size_t kPagedCacheLoadSince = 90500;

void add_paged_cache_load(Lowering &lowering, cudnnBackendDescriptor_t container,
                          cudnnBackendDescriptor_t page_table, cudnnBackendDescriptor_t seq_len,
                          cudnnBackendDescriptor_t y, const std::string &what) {
  Descriptor op(CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR);
  op.set_descriptors(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_CONTAINER_DESC, &container, 1);
  op.set_descriptors(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_PAGE_TABLE_DESC, &page_table, 1);
  op.set_descriptors(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_SEQUENCE_DESC, &seq_len, 1);
  op.set_descriptors(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_YDESC, &y, 1);
  add_operation_named(lowering, std::move(op), what);
}

void lower_paged_cache_load(Lowering &lowering, const Node &node) {
  using namespace PagedCacheLoad;
  if (lowering.cudnn_version() < kPagedCacheLoadSince)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": the loaded cuDNN ",
         plan::cudnn_version_string(static_cast<int64_t>(lowering.cudnn_version())),
         " has no PAGED_CACHE_LOAD operation; it needs cuDNN 9.5.0 or newer");
  // cuDNN tells a transposed (K^T) output by its strides: with s the
  // contiguous dim it reads the descriptor as [b, h, d, s], as
  // cudnn-frontend's paged attention describes K^T.
  const Tensor &y = lowering.graph().tensor(node.outputs[kY]);
  const bool keys_transposed = y.strides[2] == 1 && y.strides[3] != 1;
  cudnnBackendDescriptor_t y_desc =
      keys_transposed ? lowering.tensor_view(y.uid, {y.dims[0], y.dims[1], y.dims[3], y.dims[2]},
                                             {y.strides[0], y.strides[1], y.strides[3], 1})
                      : lowering.tensor(y.uid);
  add_paged_cache_load(lowering, lowering.tensor(node.inputs[kContainer]),
                       lowering.tensor(node.inputs[kPageTable]),
                       lowering.tensor(node.inputs[kSeqLen]), y_desc,
                       cat("cuDNN's paged_cache_load operation (", Graph::label(node), ")"));
}

}  // namespace cudnnfe::backend
