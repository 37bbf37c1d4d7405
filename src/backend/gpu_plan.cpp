#include "backend/gpu_plan.h"

#include "backend/device.h"
#include "backend/loader.h"
#include "core/error.h"
#include "exec/handle.h"

namespace cudnnfe::backend {

GpuPlan::GpuPlan(std::deque<Descriptor> descriptors, Descriptor operation_graph, Descriptor plan,
                 const std::vector<int64_t> &bound_uids, std::vector<ScalarValue> scalars,
                 int64_t workspace_size, std::string name, int device)
    : descriptors_(std::move(descriptors)),
      operation_graph_(std::move(operation_graph)),
      plan_(std::move(plan)),
      uids_(bound_uids),
      bound_count_(bound_uids.size()),
      scalars_(std::move(scalars)),
      workspace_size_(workspace_size),
      name_(std::move(name)),
      device_(device) {
  if (bound_count_ > kMaxBoundTensors || scalars_.size() > kMaxScalars)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "the plan has ", bound_count_, " bound tensors and ",
         scalars_.size(), " scalars; at most ", kMaxBoundTensors, " and ", kMaxScalars,
         " are supported");
  for (const ScalarValue &s : scalars_) uids_.push_back(s.uid);
}

// The hot path: no allocation of ours (the pointer table is on the stack)
// except creating the cuDNN handle on a handle's first use.
void GpuPlan::execute(Handle &handle, void *const *data, void *workspace, void *stream) const {
  if (!handle.cudnn) {
    if (handle.device < 0) handle.device = device_;
    init_handle(handle);
  }
  if (handle.device != device_)
    fail(CUDNNFE_STATUS_INVALID_ARGUMENT, "the plan was built for CUDA device ", device_,
         " but the handle runs on device ", handle.device, "; use a handle of device ", device_);
  ensure_device(device_);
  const CudnnApi &dnn = cudnn();
  cudnnHandle_t cudnn_handle = static_cast<cudnnHandle_t>(handle.cudnn);
  if (!handle.stream_set || handle.stream != stream) {
    cudnnStatus_t status = dnn.SetStream(cudnn_handle, static_cast<cudaStream_t>(stream));
    if (status != CUDNN_STATUS_SUCCESS)
      fail(CUDNNFE_STATUS_CUDNN_ERROR, "cudnnSetStream failed: ", status_text(status), ": ",
           last_error());
    handle.stream = stream;
    handle.stream_set = true;
  }

  void *pointers[kMaxBoundTensors + kMaxScalars];
  for (size_t i = 0; i < bound_count_; ++i) pointers[i] = data[i];
  for (size_t i = 0; i < scalars_.size(); ++i)
    pointers[bound_count_ + i] = const_cast<unsigned char *>(scalars_[i].bytes);
  const int64_t count = static_cast<int64_t>(uids_.size());

  Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set_int64s(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, uids_.data(), count);
  pack.set_pointers(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, pointers, count);
  pack.set_pointers(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, &workspace, 1);
  pack.finalize();
  cudnnStatus_t status = dnn.BackendExecute(cudnn_handle, plan_.get(), pack.get());
  if (status != CUDNN_STATUS_SUCCESS) {
    std::string reason = last_error();
    fail(CUDNNFE_STATUS_CUDNN_ERROR, "cudnnBackendExecute of plan ", name_,
         " failed: ", status_text(status), reason.empty() ? "" : cat(": ", reason));
  }
}

}  // namespace cudnnfe::backend
