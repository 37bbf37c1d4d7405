// The cuDNN side of the library: loading cuDNN and the CUDA runtime at run
// time, lowering a validated graph to backend descriptors, building and
// running execution plans. Nothing here is needed for the CPU reference.
#pragma once

#include <cstdint>
#include <memory>

#include "exec/handle.h"
#include "graph/graph.h"
#include "plan/plan.h"

namespace cudnnfe::backend {

// Number of CUDA devices; 0 when the runtime or driver is missing.
int device_count();

// Loads cuDNN if needed and returns its version (91900 for 9.19.0). Throws
// CUDNN_UNAVAILABLE naming the paths tried.
int64_t cudnn_version();

// True when cuDNN, the CUDA runtime and at least one GPU are usable.
bool gpu_available();

// Lowers and builds a validated graph; `handle` may be null (a library-owned
// handle for the current device is used). Throws NOT_SUPPORTED with the ops,
// cuDNN version, GPU architecture and cuDNN's reason when nothing builds.
std::unique_ptr<Plan> build_gpu_plan(const Graph &graph, Handle *handle,
                                     const BuildOptions &options);

// Frees the handle's cuDNN handle, if any.
void release_handle(Handle &handle);

}  // namespace cudnnfe::backend
