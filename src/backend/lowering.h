// Lowering a validated graph to cuDNN backend descriptors. A Lowering owns
// every descriptor it makes (the plan keeps them alive), maps graph tensors
// to backend tensors, and hands out UIDs for the intermediates and scalars
// that composite ops (SDPA) add. Each op family lowers in its own file.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/descriptor.h"
#include "backend/nvidia_api.h"
#include "graph/graph.h"

namespace cudnnfe::backend {

// A pass-by-value scalar: the backend reads `bytes` (the value in the
// tensor's data type) through the variant pack at every execute.
struct ScalarValue {
  int64_t uid = 0;
  alignas(8) unsigned char bytes[8] = {};
};

// A non-virtual intermediate that lives in the frontend's part of the
// workspace (composite SDPA backward's softmax_sum and dQ accumulator): the
// plan binds it to workspace + its offset at every execute.
struct WorkspaceTensor {
  int64_t uid = 0;
  int64_t offset = 0;  // bytes from the start of the frontend's part
  int64_t bytes = 0;
};

// A pointer view: a tensor cuDNN sees as its own non-virtual tensor whose
// pointer, at every execute, is its root graph input's plus `byte_offset`.
// Slices are always lowered so (cuDNN 9.19 has no slice operation), and so
// are virtual reshape and transpose outputs of graph inputs (no operation
// needed); docs/layout-ops.md.
struct ViewTensor {
  int64_t uid = 0;
  int64_t root_uid = 0;  // a bound graph input
  int64_t byte_offset = 0;
};

// A non-virtual tensor whose contents the lowering fixes (ALiBi's slopes,
// the sequence lengths of a padding workaround): the plan uploads `bytes`
// once at build to device memory it owns (backend/device_constants.h) and
// binds them at every execute.
struct ConstantTensor {
  int64_t uid = 0;
  std::vector<unsigned char> bytes;
};

class Lowering {
 public:
  // `cudnn_version` is the loaded library's (91400 for 9.14.0): some
  // lowerings differ by version.
  Lowering(const Graph &graph, size_t cudnn_version);

  const Graph &graph() const { return graph_; }
  size_t cudnn_version() const { return cudnn_version_; }

  // The backend tensor of graph tensor `uid`, made on first use.
  cudnnBackendDescriptor_t tensor(int64_t uid);
  // The backend tensor of `uid` as an operand of a pointwise op of `rank`
  // dims: cuDNN wants equal ranks, so a scalar becomes [1,...,1] of that
  // rank (one by-value tensor per rank it is used at).
  cudnnBackendDescriptor_t operand(int64_t uid, size_t rank);
  // Graph tensor `uid` seen with other dims and strides (SDPA's Kᵀ): same
  // UID and buffer, separate descriptor.
  cudnnBackendDescriptor_t tensor_view(int64_t uid, const std::vector<int64_t> &dims,
                                       const std::vector<int64_t> &strides);
  // The backend tensor of graph tensor `uid` described with `strides`
  // instead of its own (a reshape or transpose output seen as a view of its
  // input's memory). Later uses of `uid` get this descriptor; INTERNAL if
  // `uid` already has one.
  cudnnBackendDescriptor_t tensor_with_strides(int64_t uid, const std::vector<int64_t> &strides);
  // Describes graph tensor `uid` as a pointer view of bound graph input
  // `root_uid`, `element_offset` elements in, with `strides` (the dims are
  // `uid`'s). NOT_SUPPORTED when the root is not a graph input.
  cudnnBackendDescriptor_t pointer_view(int64_t uid, int64_t root_uid, int64_t element_offset,
                                        const std::vector<int64_t> &strides);
  // The pointer views made so far (slices and views of graph inputs).
  const std::vector<ViewTensor> &view_tensors() const { return views_; }
  // Whether some backend tensor has UID `uid` (the variant pack needs it).
  bool describes(int64_t uid) const { return described_.count(uid) != 0; }
  // A new virtual intermediate with packed strides.
  cudnnBackendDescriptor_t virtual_tensor(const std::vector<int64_t> &dims, cudnnDataType_t type);
  // A new virtual intermediate with the given strides (a transposed view);
  // `ragged_offset`: the UID of a graph tensor of ragged offsets it carries
  // (0: none).
  cudnnBackendDescriptor_t virtual_tensor(const std::vector<int64_t> &dims,
                                          const std::vector<int64_t> &strides, cudnnDataType_t type,
                                          int64_t ragged_offset = 0);
  // Makes every descriptor of graph tensor `uid` (views included) carry the
  // ragged offsets of graph tensor `offset_uid`
  // (CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC: element offsets of each batch's
  // start, the packed "THD" layout). Must come before `uid`'s first
  // descriptor; NOT_SUPPORTED when it does not (another node used `uid`
  // first) or when `uid` already carries other offsets.
  void set_ragged_offset(int64_t uid, int64_t offset_uid);
  // A new non-virtual packed tensor in the frontend's part of the workspace
  // (backend/frontend_workspace.h). NOT_SUPPORTED unless the plan builder said
  // it binds such tensors (allow_workspace_tensors).
  cudnnBackendDescriptor_t workspace_tensor(const std::vector<int64_t> &dims, cudnnfe_dtype_t dtype,
                                            const char *what);
  void allow_workspace_tensors() { workspace_tensors_allowed_ = true; }
  const std::vector<WorkspaceTensor> &workspace_tensors() const { return workspace_tensors_; }
  // Bytes of the frontend's part of the workspace (0 when there is none).
  int64_t frontend_workspace_bytes() const { return frontend_workspace_bytes_; }
  // A new pass-by-value scalar of shape [1,...,1] (`rank` dims) holding
  // `value` as `dtype`.
  cudnnBackendDescriptor_t scalar(double value, cudnnfe_dtype_t dtype, size_t rank);
  // A new non-virtual packed tensor holding `bytes` (dims' elements of
  // `dtype`), owned by the plan. NOT_SUPPORTED unless the plan builder said
  // it uploads such tensors (allow_constant_tensors).
  cudnnBackendDescriptor_t constant_tensor(const std::vector<int64_t> &dims, cudnnfe_dtype_t dtype,
                                           std::vector<unsigned char> bytes, const char *what);
  void allow_constant_tensors() { constant_tensors_allowed_ = true; }
  const std::vector<ConstantTensor> &constant_tensors() const { return constant_tensors_; }

  // Keeps a finalized helper descriptor (convolution, matmul...) alive.
  const Descriptor &keep(Descriptor descriptor);
  // Finalizes an operation and adds it to the graph's list. cuDNN refusing
  // it throws NOT_SUPPORTED with cuDNN's reason.
  void add_operation(Descriptor operation);
  // Finalizes a helper descriptor; refusal throws NOT_SUPPORTED.
  void finalize(Descriptor &descriptor);

  const std::vector<cudnnBackendDescriptor_t> &operations() const { return operations_; }
  const std::vector<ScalarValue> &scalars() const { return scalars_; }
  // Moves the descriptors out (to the plan), in creation order.
  std::deque<Descriptor> take_descriptors() { return std::move(descriptors_); }

 private:
  // `alignment`: the byte alignment promised for the tensor's pointer (0:
  // the default for caller buffers).
  cudnnBackendDescriptor_t make_tensor(int64_t uid, std::vector<int64_t> dims,
                                       std::vector<int64_t> strides, cudnnDataType_t type,
                                       bool is_virtual, bool by_value, int64_t alignment = 0);

  const Graph &graph_;
  size_t cudnn_version_;
  std::deque<Descriptor> descriptors_;
  std::vector<cudnnBackendDescriptor_t> operations_;
  std::vector<ScalarValue> scalars_;
  std::vector<WorkspaceTensor> workspace_tensors_;
  std::vector<ViewTensor> views_;
  std::set<int64_t> described_;
  int64_t frontend_workspace_bytes_ = 0;
  bool workspace_tensors_allowed_ = false;
  std::vector<ConstantTensor> constant_tensors_;
  bool constant_tensors_allowed_ = false;
  std::unordered_map<int64_t, cudnnBackendDescriptor_t> tensors_;
  std::unordered_map<int64_t, int64_t> ragged_offsets_;  // tensor UID -> offsets' UID
  std::map<std::pair<int64_t, size_t>, cudnnBackendDescriptor_t> scalars_by_rank_;
  int64_t next_uid_ = 1;
};

// cuDNN's data type for ours; NOT_SUPPORTED for types it lacks.
cudnnDataType_t to_cudnn(cudnnfe_dtype_t dtype);

// Shared op builders, used by the op files and by composite lowerings.
// A matmul's optional GEMM size overrides: INT32 [b,1,1,1] tensors of
// per-batch M, N or K (attention's sequence lengths); null: none.
struct MatmulOverrides {
  cudnnBackendDescriptor_t m = nullptr, n = nullptr, k = nullptr;
};
void add_matmul(Lowering &lowering, cudnnDataType_t compute, cudnnBackendDescriptor_t a,
                cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t c,
                const MatmulOverrides &overrides = {});
// `in1`/`in2` may be null for modes that read fewer operands.
void add_pointwise(Lowering &lowering, const PointwiseAttrs &attrs, cudnnDataType_t compute,
                   cudnnBackendDescriptor_t in0, cudnnBackendDescriptor_t in1,
                   cudnnBackendDescriptor_t in2, cudnnBackendDescriptor_t out);
void add_reduction(Lowering &lowering, cudnnfe_reduction_mode_t mode, cudnnDataType_t compute,
                   bool deterministic, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y);

// Per-kind lowering of one node (one file each).
void lower_conv(Lowering &lowering, const Node &node);
void lower_matmul(Lowering &lowering, const Node &node);
void lower_pointwise(Lowering &lowering, const Node &node);
void lower_reduction(Lowering &lowering, const Node &node);
void lower_sdpa(Lowering &lowering, const Node &node);
// Whether an sdpa node runs as the unified SDPA_FWD operation: its
// implementation choice against what the loaded cuDNN's operation takes
// (AUTO: cudnn-frontend's rule). NOT_SUPPORTED, naming what is needed, when
// UNIFIED (or a block mask) is asked for and cannot run.
bool sdpa_runs_unified(const Lowering &lowering, const Node &node);
void lower_sdpa_unified(Lowering &lowering, const Node &node);
void lower_sdpa_backward(Lowering &lowering, const Node &node);
void lower_norm(Lowering &lowering, const Node &node);
void lower_grouped_norm(Lowering &lowering, const Node &node);
void lower_softmax(Lowering &lowering, const Node &node);
// reshape, transpose, slice, concatenate (lower_layout.cpp).
void lower_layout(Lowering &lowering, const Node &node);
void lower_resample(Lowering &lowering, const Node &node);
void lower_rng(Lowering &lowering, const Node &node);
// block_scale_quantize, block_scale_dequantize (lower_block_scale.cpp).
void lower_block_scale(Lowering &lowering, const Node &node);
// genstats, bn_finalize and dbn_weight (lower_batchnorm_split.cpp).
void lower_genstats(Lowering &lowering, const Node &node);
void lower_bn_finalize(Lowering &lowering, const Node &node);
void lower_dbn_weight(Lowering &lowering, const Node &node);
// moe_grouped_matmul, moe_grouped_matmul_backward (lower_moe_grouped_matmul.cpp).
void lower_moe_grouped_matmul(Lowering &lowering, const Node &node);
// paged_cache_load (lower_paged_cache.cpp); add_paged_cache_load is the
// operation itself, which attention's paged K/V adds too.
void lower_paged_cache_load(Lowering &lowering, const Node &node);
void add_paged_cache_load(Lowering &lowering, cudnnBackendDescriptor_t container,
                          cudnnBackendDescriptor_t page_table, cudnnBackendDescriptor_t seq_len,
                          cudnnBackendDescriptor_t y, const std::string &what);

}  // namespace cudnnfe::backend
