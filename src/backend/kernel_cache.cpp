// The kernel cache (backend/kernel_cache.h).
#include "backend/kernel_cache.h"

#include "backend/loader.h"
#include "core/error.h"
#include "serialize/json.h"

namespace cudnnfe::backend {
namespace {

[[noreturn]] void refuse(const std::string &what, const Error &e) {
  fail(CUDNNFE_STATUS_NOT_SUPPORTED, "kernel cache: cuDNN ", cudnn().GetVersion(), " refused ",
       what, ": ", e.message());
}

}  // namespace

cudnnBackendDescriptor_t KernelCache::attach(const Descriptor &operation_graph) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finalized_) return descriptor_.get();
  try {
    descriptor_ = Descriptor(CUDNN_BACKEND_KERNEL_CACHE_DESCRIPTOR);
  } catch (const Error &e) {
    refuse("CUDNN_BACKEND_KERNEL_CACHE_DESCRIPTOR (its header documents it since cuDNN 9.4.0)", e);
  }
  try {
    if (!loaded_json_.empty())
      descriptor_.set_chars(CUDNN_ATTR_KERNEL_CACHE_JSON_REPRESENTATION, loaded_json_);
  } catch (const Error &e) {
    refuse(
        "the serialized cache (CUDNN_ATTR_KERNEL_CACHE_JSON_REPRESENTATION, documented "
        "since cuDNN 9.10.0)",
        e);
  }
  try {
    const cudnnBackendDescriptor_t graph = operation_graph.get();
    descriptor_.set_descriptors(CUDNN_ATTR_KERNEL_CACHE_OPERATION_GRAPH, &graph, 1);
    descriptor_.finalize();
  } catch (const Error &e) {
    refuse("binding the cache to the operation graph (CUDNN_ATTR_KERNEL_CACHE_OPERATION_GRAPH)", e);
  }
  finalized_ = true;
  return descriptor_.get();
}

std::string KernelCache::serialize() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!finalized_) {
    if (loaded_json_.empty())
      fail(CUDNNFE_STATUS_WRONG_STATE,
           "kernel cache: it is empty (no GPU build has used it yet), so there is nothing to "
           "serialize");
    return loaded_json_;
  }
  std::string json;
  try {
    json.resize(static_cast<size_t>(
        descriptor_.get(CUDNN_ATTR_KERNEL_CACHE_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, 0, nullptr)));
    const int64_t n = descriptor_.get(CUDNN_ATTR_KERNEL_CACHE_JSON_REPRESENTATION, CUDNN_TYPE_CHAR,
                                      static_cast<int64_t>(json.size()), &json[0]);
    json.resize(static_cast<size_t>(n));
  } catch (const Error &e) {
    refuse(
        "serializing the cache (CUDNN_ATTR_KERNEL_CACHE_JSON_REPRESENTATION, documented since "
        "cuDNN 9.10.0)",
        e);
  }
  while (!json.empty() && json.back() == '\0') json.pop_back();
  return json;
}

void KernelCache::deserialize(const char *data, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finalized_ || !loaded_json_.empty())
    fail(CUDNNFE_STATUS_WRONG_STATE,
         "kernel cache: it already holds kernels or loaded JSON; deserialize into a freshly "
         "created cache");
  if (!data || size == 0) fail_argument("kernel cache: no data to deserialize");
  try {
    json::parse(data, size);
  } catch (const Error &e) {
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA,
         "kernel cache: not JSON written by serialize: ", e.message());
  }
  loaded_json_.assign(data, size);
}

}  // namespace cudnnfe::backend
