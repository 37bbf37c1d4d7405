// Autotuning: every candidate plan of a graph timed on the GPU with CUDA
// events, the fastest selected and remembered by the caches.
#pragma once

#include <cstddef>

#include "exec/handle.h"
#include "graph/graph.h"

namespace cudnnfe::backend {

struct AutotuneOptions {
  int warmup = 2;
  int min_samples = 5;
  int max_samples = 50;
  double tolerance = 0.01;
  double max_ms_per_plan = 200;
};

// `data` in bound-UID order, or null for library-allocated scratch buffers;
// `workspace` null for a library-allocated workspace of the largest plan's
// size, else plans needing more than `workspace_size` are not timed.
// Throws NOT_SUPPORTED when the graph is not a GPU graph or nothing could be
// timed, CUDA_ERROR when the runtime fails.
void autotune(Graph &graph, Handle &handle, void *const *data, void *workspace,
              size_t workspace_size, void *stream, const AutotuneOptions &options);

}  // namespace cudnnfe::backend
