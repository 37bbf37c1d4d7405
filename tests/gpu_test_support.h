// Helpers shared by the GPU test binaries: failures as exceptions, graph
// and handle ownership, short dtype names, and the GPU gate every GPU case
// starts with (skip without a GPU, fail when a GPU is there but unusable).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudnnfe/cudnnfe.h"
#include "gpu_util.h"
#include "harness.h"

namespace gpu_test {

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void ok(cudnnfe_status_t status, const char *what) {
  if (status != CUDNNFE_STATUS_OK)
    throw Failure(std::string(what) + " returned " + cudnnfe_status_name(status) + ": " +
                  cudnnfe_last_error());
}

struct GraphDeleter {
  void operator()(cudnnfe_graph_t *g) const { cudnnfe_graph_destroy(g); }
};
using GraphPtr = std::unique_ptr<cudnnfe_graph_t, GraphDeleter>;

inline GraphPtr new_graph(const std::string &name, cudnnfe_dtype_t io) {
  cudnnfe_graph_t *g = nullptr;
  ok(cudnnfe_graph_create(&g), "cudnnfe_graph_create");
  GraphPtr graph(g);
  ok(cudnnfe_graph_set_name(g, name.c_str()), "cudnnfe_graph_set_name");
  ok(cudnnfe_graph_set_io_dtype(g, io), "cudnnfe_graph_set_io_dtype");
  return graph;
}

// One handle for the whole test thread (GPU and CPU reference alike).
inline cudnnfe_handle_t *test_handle() {
  static cudnnfe_handle_t *handle = [] {
    cudnnfe_handle_t *h = nullptr;
    ok(cudnnfe_handle_create(&h, -1), "cudnnfe_handle_create");
    return h;
  }();
  return handle;
}

inline const char *short_name(cudnnfe_dtype_t dtype) {
  switch (dtype) {
    case CUDNNFE_DTYPE_FLOAT: return "fp32";
    case CUDNNFE_DTYPE_HALF: return "fp16";
    case CUDNNFE_DTYPE_BFLOAT16: return "bf16";
    default: return cudnnfe_dtype_name(dtype);
  }
}

inline bool gpu_ready(std::string *skip) {
  int32_t count = 0;
  if (cudnnfe_device_count(&count) != CUDNNFE_STATUS_OK || count == 0) {
    *skip = "no CUDA device (cudnnfe_device_count is 0)";
    return false;
  }
  int64_t version = 0;
  if (cudnnfe_cudnn_version(&version) != CUDNNFE_STATUS_OK) {
    std::printf("  a GPU is present but cuDNN is unavailable: %s\n", cudnnfe_last_error());
    ++testing::state().failures;
    return false;
  }
  if (!gpu::runtime().error.empty()) {
    std::printf("  a GPU is present but the tests cannot load libcudart: %s\n",
                gpu::runtime().error.c_str());
    ++testing::state().failures;
    return false;
  }
  return true;
}

// Builds `g` for `target` with default options on the test handle.
inline cudnnfe_status_t build_for(cudnnfe_graph_t *g, cudnnfe_target_t target) {
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = target;
  return cudnnfe_graph_build(g, test_handle(), &options);
}

// Executes `g` with pointers `p[i]` bound to `uids[i]`; a failure throws,
// naming `what`.
inline void execute_bound(cudnnfe_graph_t *g, const std::vector<int64_t> &uids,
                          const std::vector<void *> &p, void *workspace, size_t size,
                          const char *what) {
  std::vector<cudnnfe_binding_t> bindings;
  for (size_t i = 0; i < uids.size(); ++i) bindings.push_back({uids[i], p[i]});
  const cudnnfe_status_t s = cudnnfe_graph_execute(g, test_handle(), bindings.data(),
                                                   bindings.size(), workspace, size, nullptr);
  if (s != CUDNNFE_STATUS_OK)
    throw Failure(std::string(what) + " execute returned " + cudnnfe_status_name(s) + ": " +
                  cudnnfe_handle_last_error(test_handle()));
}

}  // namespace gpu_test

#define REQUIRE_GPU()                                \
  do {                                               \
    std::string skip_reason_;                        \
    if (!gpu_test::gpu_ready(&skip_reason_)) {       \
      if (!skip_reason_.empty()) SKIP(skip_reason_); \
      return;                                        \
    }                                                \
  } while (0)
