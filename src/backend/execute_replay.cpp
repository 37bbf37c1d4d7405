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

// Records the execute into `graph` by stream capture on a private stream:
// the cuDNN handle runs on it while capturing and on `stream` again after.
// The first execute on these buffers already ran normally, so one-time setup
// (loading kernels) is done before the capture, as stream capture needs.
// Returns what failed, or null.
const char *capture_execute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                            cudnnBackendDescriptor_t pack, void *stream, cudaGraph_t *graph) {
  const CudaGraphRuntimeApi &rt = cuda_graph_runtime();
  cudaStream_t capture_stream = nullptr;
  if (rt.StreamCreateWithFlags(&capture_stream, cudaStreamNonBlocking) != cudaSuccess)
    return "cudaStreamCreateWithFlags";
  const char *failed = nullptr;
  if (cudnn().SetStream(handle, capture_stream) != CUDNN_STATUS_SUCCESS) {
    failed = "cudnnSetStream";
  } else {
    const CaptureResult r = capture_one_execute(handle, plan, pack, capture_stream, graph);
    if (r.begin != cudaSuccess)
      failed = "cudaStreamBeginCapture";
    else if (r.execute != CUDNN_STATUS_SUCCESS)
      failed = "cudnnBackendExecute under stream capture";
    else if (r.end != cudaSuccess || !*graph)
      failed = "cudaStreamEndCapture";
  }
  if (cudnn().SetStream(handle, static_cast<cudaStream_t>(stream)) != CUDNN_STATUS_SUCCESS &&
      !failed)
    failed = "cudnnSetStream";
  rt.StreamDestroy(capture_stream);
  return failed;
}

}  // namespace

CaptureResult capture_one_execute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                                  cudnnBackendDescriptor_t pack, cudaStream_t stream,
                                  cudaGraph_t *graph) {
  const CudaGraphRuntimeApi &rt = cuda_graph_runtime();
  CaptureResult r;
  r.begin = rt.StreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  if (r.begin != cudaSuccess) return r;
  r.execute = cudnn().BackendExecute(handle, plan, pack);
  r.end = rt.StreamEndCapture(stream, graph);
  return r;
}

ReplayMode execute_replay_mode() {
  static const ReplayMode mode = [] {
    const char *env = std::getenv("CUDNNFE_EXECUTE_REPLAY");
    if (env && std::strcmp(env, "0") == 0) return ReplayMode::kOff;
    if (env && std::strcmp(env, "native") == 0) return ReplayMode::kNativeOnly;
    return ReplayMode::kNativeOrCapture;
  }();
  return mode;
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
  const ReplayMode mode = execute_replay_mode();
  if (mode == ReplayMode::kOff || set.has_by_value_inputs) return false;
  // Without cuDNN's native graph, stream capture records the execute.
  if (!populate && (mode == ReplayMode::kNativeOnly || !set.capture_known_wrong.empty()))
    return false;
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
    make_graph(*entry, set, handle, populate, plan, pack, stream);
    if (!entry->exec) return false;
  }
  const cudaError_t error = rt.GraphLaunch(entry->exec, static_cast<cudaStream_t>(stream));
  if (error != cudaSuccess)
    fail(CUDNNFE_STATUS_CUDA_ERROR, "cudaGraphLaunch of the CUDA graph of plan ",
         set.candidates[index].name, " failed: ", cuda_error_text(error));
  return true;
}

// Fills and instantiates the entry's graph: cuDNN's native population where
// `populate` is given, else stream capture. A failure is not an error of the
// execute: the entry is marked and runs with cudnnBackendExecute as before.
void ExecuteReplay::make_graph(Entry &entry, const PlanSet &set, cudnnHandle_t handle,
                               PopulateCudaGraphFn populate, cudnnBackendDescriptor_t plan,
                               cudnnBackendDescriptor_t pack, void *stream) {
  const CudaGraphRuntimeApi &rt = cuda_graph_runtime();
  OwnedGraph graph;
  const char *failed = nullptr;
  if (populate) {
    if (rt.GraphCreate(&graph.graph, 0) != cudaSuccess)
      failed = "cudaGraphCreate";
    else if (populate(handle, plan, pack, graph.graph) != CUDNN_STATUS_SUCCESS)
      failed = "cudnnBackendPopulateCudaGraph";
  } else {
    failed = capture_execute(handle, plan, pack, stream, &graph.graph);
  }
  if (!failed && rt.GraphInstantiateWithFlags(&entry.exec, graph.graph, 0) != cudaSuccess)
    failed = "cudaGraphInstantiateWithFlags";
  if (failed) {
    entry.exec = nullptr;
    entry.failed = true;
    last_error();  // a failed capture's cuDNN message is not this execute's
    log_info("execute replay: plan ", set.candidates[entry.index].name,
             " runs without a CUDA graph (", failed, " failed)");
  } else {
    log_info("execute replay: plan ", set.candidates[entry.index].name, " runs from a CUDA graph (",
             populate ? "cuDNN's native population" : "stream capture",
             ") on these buffers from now on");
  }
}

}  // namespace cudnnfe::backend
