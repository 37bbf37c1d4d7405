#include "backend/execute_replay.h"

#include <cstdlib>
#include <cstring>

#include "backend/gpu_plan.h"
#include "backend/loader.h"
#include "core/error.h"
#include "core/log.h"

namespace cudnnfe::backend {
namespace {

// Owns an uninstantiated cudaGraph_t.
struct OwnedGraph {
  cudaGraph_t graph = nullptr;
  ~OwnedGraph() {
    if (graph) cuda_graph_runtime().GraphDestroy(graph);
  }
};

// Whether `stream` is being captured by the caller (or cannot be asked):
// then cuDNN's own work must go into the caller's graph.
bool stream_is_capturing(const CudaGraphRuntimeApi &rt, void *stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (rt.StreamIsCapturing(static_cast<cudaStream_t>(stream), &status) != cudaSuccess) return true;
  return status != cudaStreamCaptureStatusNone;
}

}  // namespace

bool execute_replay_enabled() {
  static const bool enabled = [] {
    const char *env = std::getenv("CUDNNFE_EXECUTE_REPLAY");
    return !(env && std::strcmp(env, "0") == 0);
  }();
  return enabled;
}

ExecuteReplay::~ExecuteReplay() {
  for (Entry &e : entries_)
    if (e.exec) cuda_graph_runtime().GraphExecDestroy(e.exec);
}

ExecuteReplay::Entry *ExecuteReplay::find(size_t index, size_t count, void *const *table,
                                          void *workspace) {
  for (Entry &e : entries_)
    if (e.count == count && e.index == index && e.workspace == workspace &&
        std::memcmp(e.table, table, count * sizeof(void *)) == 0)
      return &e;
  return nullptr;
}

bool ExecuteReplay::run(const PlanSet &set, size_t index, cudnnHandle_t handle,
                        PopulateCudaGraphFn populate, cudnnBackendDescriptor_t plan,
                        cudnnBackendDescriptor_t pack, void *const *table, void *backend_workspace,
                        void *stream) {
  if (!populate || set.has_by_value_inputs || !execute_replay_enabled()) return false;
  const CudaGraphRuntimeApi &rt = cuda_graph_runtime();
  if (!rt.missing.empty() || !rt.StreamIsCapturing || stream_is_capturing(rt, stream)) return false;
  const size_t count = set.bound_count;
  std::lock_guard<std::mutex> lock(mutex_);
  Entry *entry = find(index, count, table, backend_workspace);
  if (!entry) {
    // First sight of these buffers: remember them; the caller runs the work.
    Entry &e = entries_[next_];
    next_ = (next_ + 1) % kEntries;
    if (e.exec) rt.GraphExecDestroy(e.exec);  // freed when a launch in flight ends
    e = Entry{};
    e.index = index;
    e.count = count;
    e.workspace = backend_workspace;
    std::memcpy(e.table, table, count * sizeof(void *));
    return false;
  }
  if (entry->failed) return false;
  if (!entry->exec) {
    make_graph(*entry, set, handle, populate, plan, pack);
    if (!entry->exec) return false;
  }
  const cudaError_t error = rt.GraphLaunch(entry->exec, static_cast<cudaStream_t>(stream));
  if (error != cudaSuccess)
    fail(CUDNNFE_STATUS_CUDA_ERROR, "cudaGraphLaunch of the CUDA graph of plan ",
         set.candidates[index].name, " failed: ", cuda_error_text(error));
  return true;
}

// Fills and instantiates the entry's graph. A failure is not an error of the
// execute: the entry is marked and runs with cudnnBackendExecute as before.
void ExecuteReplay::make_graph(Entry &entry, const PlanSet &set, cudnnHandle_t handle,
                               PopulateCudaGraphFn populate, cudnnBackendDescriptor_t plan,
                               cudnnBackendDescriptor_t pack) {
  const CudaGraphRuntimeApi &rt = cuda_graph_runtime();
  OwnedGraph graph;
  const char *failed = nullptr;
  if (rt.GraphCreate(&graph.graph, 0) != cudaSuccess)
    failed = "cudaGraphCreate";
  else if (populate(handle, plan, pack, graph.graph) != CUDNN_STATUS_SUCCESS)
    failed = "cudnnBackendPopulateCudaGraph";
  else if (rt.GraphInstantiateWithFlags(&entry.exec, graph.graph, 0) != cudaSuccess)
    failed = "cudaGraphInstantiateWithFlags";
  if (failed) {
    entry.exec = nullptr;
    entry.failed = true;
    log_info("execute replay: plan ", set.candidates[entry.index].name,
             " runs without a CUDA graph (", failed, " failed)");
  } else {
    log_info("execute replay: plan ", set.candidates[entry.index].name,
             " runs from a CUDA graph on these buffers from now on");
  }
}

}  // namespace cudnnfe::backend
