// Helpers shared by the GPU test binaries: failures as exceptions, graph
// and handle ownership, short dtype names, and the GPU gate every GPU case
// starts with (skip without a GPU, fail when a GPU is there but unusable).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

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

}  // namespace gpu_test

#define REQUIRE_GPU()                                \
  do {                                               \
    std::string skip_reason_;                        \
    if (!gpu_test::gpu_ready(&skip_reason_)) {       \
      if (!skip_reason_.empty()) SKIP(skip_reason_); \
      return;                                        \
    }                                                \
  } while (0)
