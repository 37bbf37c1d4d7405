// The kernel cache of dynamic-shape graphs (cuDNN's
// CUDNN_BACKEND_KERNEL_CACHE_DESCRIPTOR; cudnn-frontend's create_kernel_cache):
// graphs of one topology and different shapes share compiled kernels through
// it. Bound to the operation graph of the first GPU build that uses it, then
// set on every execution plan of the builds that use it. Its JSON (cuDNN's
// own) is read and written here; a CPU reference build does not touch it.
#pragma once

#include <mutex>
#include <string>

#include "backend/descriptor.h"
#include "backend/nvidia_api.h"

namespace cudnnfe::backend {

class KernelCache {
 public:
  // The finalized cuDNN descriptor, bound to `operation_graph` (and filled
  // from deserialized JSON) on first use. Throws NOT_SUPPORTED naming what
  // the loaded cuDNN refused.
  cudnnBackendDescriptor_t attach(const Descriptor &operation_graph);
  // cuDNN's JSON of the cache; before a GPU build used it, the JSON it was
  // loaded from. WRONG_STATE when it holds nothing yet.
  std::string serialize();
  // Loads JSON written by serialize (checked as JSON here, by cuDNN when a
  // build binds it). WRONG_STATE when the cache already holds something.
  void deserialize(const char *data, size_t size);

 private:
  std::mutex mutex_;
  Descriptor descriptor_;
  bool finalized_ = false;
  std::string loaded_json_;
};

}  // namespace cudnnfe::backend
