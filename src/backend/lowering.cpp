#include "backend/lowering.h"

#include <algorithm>

#include "backend/scalar_bytes.h"
#include "core/dtype.h"
#include "core/error.h"

namespace cudnnfe::backend {
namespace {

// Pointers the caller gives are promised to this alignment (cudaMalloc
// gives 256); 16 lets engines use vector loads.
constexpr int64_t kByteAlignment = 16;

// cuDNN wants at least 3 dims for matmul and most engines; lower-rank
// tensors get leading dims of 1. Every operand of an op has the same rank
// (the graph's rules; scalars are shaped to their op), so all of them are
// padded alike.
constexpr size_t kMinRank = 3;

void pad_rank(std::vector<int64_t> &dims, std::vector<int64_t> &strides) {
  if (dims.size() >= kMinRank) return;
  int64_t outer = 1;
  for (size_t i = 0; i < dims.size(); ++i) outer = std::max(outer, dims[i] * strides[i]);
  while (dims.size() < kMinRank) {
    dims.insert(dims.begin(), 1);
    strides.insert(strides.begin(), outer);
  }
}

}  // namespace

cudnnDataType_t to_cudnn(cudnnfe_dtype_t dtype) {
  switch (dtype) {
    case CUDNNFE_DTYPE_FLOAT: return CUDNN_DATA_FLOAT;
    case CUDNNFE_DTYPE_HALF: return CUDNN_DATA_HALF;
    case CUDNNFE_DTYPE_BFLOAT16: return CUDNN_DATA_BFLOAT16;
    case CUDNNFE_DTYPE_FP8_E4M3: return CUDNN_DATA_FP8_E4M3;
    case CUDNNFE_DTYPE_FP8_E5M2: return CUDNN_DATA_FP8_E5M2;
    case CUDNNFE_DTYPE_FP8_E8M0: return CUDNN_DATA_FP8_E8M0;
    case CUDNNFE_DTYPE_INT8: return CUDNN_DATA_INT8;
    case CUDNNFE_DTYPE_INT32: return CUDNN_DATA_INT32;
    case CUDNNFE_DTYPE_INT64: return CUDNN_DATA_INT64;
    case CUDNNFE_DTYPE_BOOLEAN: return CUDNN_DATA_BOOLEAN;
    case CUDNNFE_DTYPE_BOOLEAN_PACKED: return CUDNN_DATA_BOOLEAN;  // cuDNN's own layout
    case CUDNNFE_DTYPE_UINT8: return CUDNN_DATA_UINT8;
    case CUDNNFE_DTYPE_DOUBLE: return CUDNN_DATA_DOUBLE;
    default:
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, "data type ", dtype_name(dtype),
           " has no cuDNN equivalent");
  }
}

Lowering::Lowering(const Graph &graph, size_t cudnn_version)
    : graph_(graph), cudnn_version_(cudnn_version) {
  // Intermediates get UIDs above every graph UID so they never collide.
  for (const Tensor &t : graph.tensors()) next_uid_ = std::max(next_uid_, t.uid + 1);
}

cudnnBackendDescriptor_t Lowering::make_tensor(int64_t uid, std::vector<int64_t> dims,
                                               std::vector<int64_t> strides, cudnnDataType_t type,
                                               bool is_virtual, bool by_value, int64_t alignment) {
  pad_rank(dims, strides);
  described_.insert(uid);
  Descriptor t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  t.set_data_type(CUDNN_ATTR_TENSOR_DATA_TYPE, type);
  t.set_int64s(CUDNN_ATTR_TENSOR_DIMENSIONS, dims);
  t.set_int64s(CUDNN_ATTR_TENSOR_STRIDES, strides);
  t.set_int64(CUDNN_ATTR_TENSOR_UNIQUE_ID, uid);
  t.set_int64(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, alignment > 0 ? alignment : kByteAlignment);
  if (is_virtual) t.set_bool(CUDNN_ATTR_TENSOR_IS_VIRTUAL, true);
  if (by_value) t.set_bool(CUDNN_ATTR_TENSOR_IS_BY_VALUE, true);
  auto ragged = ragged_offsets_.find(uid);
  if (ragged != ragged_offsets_.end()) {
    cudnnBackendDescriptor_t offsets = tensor(ragged->second);
    t.set_descriptors(CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC, &offsets, 1);
  }
  finalize(t);
  descriptors_.push_back(std::move(t));
  return descriptors_.back().get();
}

cudnnBackendDescriptor_t Lowering::tensor(int64_t uid) {
  const Tensor &t = graph_.tensor(uid);
  if (t.is_scalar) return operand(uid, t.dims.size());
  auto it = tensors_.find(uid);
  if (it != tensors_.end()) return it->second;
  // cuDNN keeps BOOLEAN tensors bit-packed; our ABI promises one byte per
  // element, so only virtual (in-graph) booleans can be honoured.
  if (!t.is_virtual && t.dtype == CUDNNFE_DTYPE_BOOLEAN)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "tensor \"", t.name,
         "\" is a BOOLEAN graph input or output, but cuDNN stores booleans bit-packed (8 per "
         "byte, least significant bit first) while cudnnfe's BOOLEAN is one byte per element; "
         "give this tensor the type BOOLEAN_PACKED (cuDNN's bit-packed layout), keep booleans "
         "inside the graph (e.g. a comparison feeding BINARY_SELECT) or give it a numeric type");
  if (t.view_of != 0) return pointer_view(uid, t.view_of, t.view_offset, t.strides);
  // A pass-by-value input's binding is a host pointer that cuDNN reads by value.
  if (t.pass_by_value && t.element_count() != 1)
    fail(CUDNNFE_STATUS_INVALID_GRAPH, "tensor \"", t.name, "\" is pass-by-value but has ",
         t.element_count(), " elements ", dims_string(t.dims), "; expected 1");
  cudnnBackendDescriptor_t desc =
      make_tensor(uid, t.dims, t.strides, to_cudnn(t.dtype), t.is_virtual, t.pass_by_value);
  tensors_.emplace(uid, desc);
  return desc;
}

cudnnBackendDescriptor_t Lowering::pointer_view(int64_t uid, int64_t root_uid,
                                                int64_t element_offset,
                                                const std::vector<int64_t> &strides) {
  const Tensor &t = graph_.tensor(uid);
  const Tensor &root = graph_.tensor(root_uid);
  if (tensors_.count(uid))
    fail(CUDNNFE_STATUS_INTERNAL, "tensor \"", t.name, "\" is described twice");
  // The view's bytes must be in memory before the plan runs.
  if (root.producer >= 0 || !root.is_bound())
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "tensor \"", t.name, "\" is a slice of \"", root.name,
         "\", which is not a graph input; cuDNN 9.19 has no slice operation, so cudnnfe ",
         "passes a slice as a pointer into its input's buffer, which needs the input to be in ",
         "memory before the plan runs (slice graph inputs, or use the CPU reference)");
  if (t.dtype == CUDNNFE_DTYPE_BOOLEAN || t.dtype == CUDNNFE_DTYPE_BOOLEAN_PACKED)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "tensor \"", t.name,
         "\" views BOOLEAN data, which cuDNN stores bit-packed");
  // Measured on an H100 with cuDNN 9.14 and 9.19: a pointwise engine read a
  // slice stepped along its innermost dimension (strides [512,32,4]) as if
  // that dimension were contiguous, giving wrong values. Views with no
  // unit-stride dimension are therefore refused rather than risked.
  bool unit = true;
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (t.dims[i] <= 1) continue;
    unit = false;
    break;
  }
  for (size_t i = 0; i < t.dims.size() && !unit; ++i)
    if (t.dims[i] > 1 && strides[i] == 1) unit = true;
  if (!unit)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "tensor \"", t.name, "\" ", dims_string(t.dims),
         " views its input with strides ", dims_string(strides),
         ", none of them 1 (a slice stepped along the innermost dimension); cuDNN 9.14 and 9.19 ",
         "read such a view as if its innermost dimension were contiguous (wrong values, measured ",
         "on an H100), so cudnnfe refuses it: use step 1 on the innermost dimension, or the CPU "
         "reference");
  ViewTensor v;
  v.uid = uid;
  v.root_uid = root_uid;
  v.byte_offset = element_offset * static_cast<int64_t>(dtype_size(t.dtype));
  views_.push_back(v);
  // The root's pointer is promised kByteAlignment; the offset may lower it.
  int64_t alignment = kByteAlignment;
  while (alignment > 1 && v.byte_offset % alignment != 0) alignment /= 2;
  cudnnBackendDescriptor_t desc =
      make_tensor(uid, t.dims, strides, to_cudnn(t.dtype), false, false, alignment);
  tensors_.emplace(uid, desc);
  return desc;
}

cudnnBackendDescriptor_t Lowering::tensor_with_strides(int64_t uid,
                                                       const std::vector<int64_t> &strides) {
  const Tensor &t = graph_.tensor(uid);
  if (tensors_.count(uid) || t.is_scalar || t.view_of != 0)
    fail(CUDNNFE_STATUS_INTERNAL, "tensor \"", t.name, "\" cannot be re-described as a view");
  cudnnBackendDescriptor_t desc =
      make_tensor(uid, t.dims, strides, to_cudnn(t.dtype), t.is_virtual, t.pass_by_value);
  tensors_.emplace(uid, desc);
  return desc;
}

cudnnBackendDescriptor_t Lowering::operand(int64_t uid, size_t rank) {
  const Tensor &t = graph_.tensor(uid);
  if (!t.is_scalar) return tensor(uid);
  rank = std::max(rank, kMinRank);
  auto it = scalars_by_rank_.find({uid, rank});
  if (it != scalars_by_rank_.end()) return it->second;
  // The first rank keeps the graph's UID; others get fresh UIDs holding the
  // same value.
  ScalarValue value;
  value.uid = uid;
  for (const auto &entry : scalars_by_rank_)
    if (entry.first.first == uid) value.uid = next_uid_++;
  encode_scalar(t.scalar_value, t.dtype, value.bytes);
  scalars_.push_back(value);
  cudnnBackendDescriptor_t desc =
      make_tensor(value.uid, std::vector<int64_t>(rank, 1), std::vector<int64_t>(rank, 1),
                  to_cudnn(t.dtype), false, true);
  scalars_by_rank_.emplace(std::make_pair(uid, rank), desc);
  return desc;
}

cudnnBackendDescriptor_t Lowering::tensor_view(int64_t uid, const std::vector<int64_t> &dims,
                                               const std::vector<int64_t> &strides) {
  const Tensor &t = graph_.tensor(uid);
  return make_tensor(uid, dims, strides, to_cudnn(t.dtype), t.is_virtual, t.pass_by_value);
}

cudnnBackendDescriptor_t Lowering::virtual_tensor(const std::vector<int64_t> &dims,
                                                  cudnnDataType_t type) {
  return make_tensor(next_uid_++, dims, packed_strides(dims), type, true, false);
}

cudnnBackendDescriptor_t Lowering::virtual_tensor(const std::vector<int64_t> &dims,
                                                  const std::vector<int64_t> &strides,
                                                  cudnnDataType_t type, int64_t ragged_offset) {
  const int64_t uid = next_uid_++;
  if (ragged_offset != 0) ragged_offsets_[uid] = ragged_offset;
  return make_tensor(uid, dims, strides, type, true, false);
}

void Lowering::set_ragged_offset(int64_t uid, int64_t offset_uid) {
  const Tensor &t = graph_.tensor(uid);
  auto it = ragged_offsets_.find(uid);
  if (it != ragged_offsets_.end()) {
    if (it->second == offset_uid) return;
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "tensor \"", t.name, "\" is given two ragged offsets (\"",
         graph_.tensor(it->second).name, "\" and \"", graph_.tensor(offset_uid).name,
         "\"); a tensor has one packed layout");
  }
  if (described_.count(uid))
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "tensor \"", t.name,
         "\" is ragged (packed) for one node but an earlier node uses it unpacked; give every "
         "node that reads it the same ragged offsets, or copy it");
  ragged_offsets_[uid] = offset_uid;
}

cudnnBackendDescriptor_t Lowering::workspace_tensor(const std::vector<int64_t> &dims,
                                                    cudnnfe_dtype_t dtype, const char *what) {
  if (!workspace_tensors_allowed_)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "the lowering keeps ", what,
         " in the frontend's part of the workspace, which this plan builder does not bind yet "
         "(src/backend/frontend_workspace.h)");
  // 256-byte aligned slices, like cudaMalloc's.
  constexpr int64_t kAlign = 256;
  WorkspaceTensor w;
  w.uid = next_uid_++;
  w.offset = (frontend_workspace_bytes_ + kAlign - 1) / kAlign * kAlign;
  w.bytes = static_cast<int64_t>(dtype_size(dtype));
  for (int64_t d : dims) w.bytes *= d;
  frontend_workspace_bytes_ = w.offset + w.bytes;
  workspace_tensors_.push_back(w);
  return make_tensor(w.uid, dims, packed_strides(dims), to_cudnn(dtype), false, false);
}

cudnnBackendDescriptor_t Lowering::scalar(double value, cudnnfe_dtype_t dtype, size_t rank) {
  ScalarValue s;
  s.uid = next_uid_++;
  encode_scalar(value, dtype, s.bytes);
  scalars_.push_back(s);
  rank = std::max<size_t>(rank, 1);
  return make_tensor(s.uid, std::vector<int64_t>(rank, 1), std::vector<int64_t>(rank, 1),
                     to_cudnn(dtype), false, true);
}

cudnnBackendDescriptor_t Lowering::constant_tensor(const std::vector<int64_t> &dims,
                                                   cudnnfe_dtype_t dtype,
                                                   std::vector<unsigned char> bytes,
                                                   const char *what) {
  if (!constant_tensors_allowed_)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "the lowering needs ", what,
         " as a constant tensor owned by the plan, which this plan builder does not upload "
         "(src/backend/device_constants.h)");
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  if (static_cast<size_t>(count) * dtype_size(dtype) != bytes.size())
    fail(CUDNNFE_STATUS_INTERNAL, "constant tensor ", what, ": ", bytes.size(), " bytes for dims ",
         dims_string(dims));
  ConstantTensor c;
  c.uid = next_uid_++;
  c.bytes = std::move(bytes);
  constant_tensors_.push_back(std::move(c));
  return make_tensor(constant_tensors_.back().uid, dims, packed_strides(dims), to_cudnn(dtype),
                     false, false);
}

const Descriptor &Lowering::keep(Descriptor descriptor) {
  descriptors_.push_back(std::move(descriptor));
  return descriptors_.back();
}

void Lowering::finalize(Descriptor &descriptor) {
  cudnnStatus_t status = descriptor.try_finalize();
  if (status == CUDNN_STATUS_SUCCESS) return;
  std::string reason = last_error();
  fail(CUDNNFE_STATUS_NOT_SUPPORTED, "cuDNN refused the ", descriptor_type_name(descriptor.type()),
       ": ", status_text(status), reason.empty() ? "" : cat(": ", reason));
}

void Lowering::add_operation(Descriptor operation) {
  finalize(operation);
  operations_.push_back(operation.get());
  descriptors_.push_back(std::move(operation));
}

}  // namespace cudnnfe::backend
