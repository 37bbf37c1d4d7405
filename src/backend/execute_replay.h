// Execute replay: a plan executed again on the same buffers runs as a CUDA
// graph (docs/plans.md, "Execute replay"). cudnnBackendExecute costs
// several microseconds of host time a call; launching a CUDA graph about
// two. Bound execution (cudnnfe_graph_bind) gives the same to callers who
// hold their buffers; this gives it to every execute without changing what
// callers write.
//
// The graph is cuDNN's own (cudnnBackendPopulateCudaGraph) where the engine
// declares SUPPORTS_CUDA_GRAPH_NATIVE_API, else a stream capture of
// cudnnBackendExecute, as bound execution's AUTO mode records it. Capture is
// not used for graphs known to compute wrong that way
// (known_wrong_under_capture: cuDNN's instance norm backward on 9.19 left
// dscale and dbias unwritten, tests/test_gpu_norms.cpp); the differential
// tester's --repeat runs check every family's replayed result against the
// CPU reference.
//
// The first execute with a set of pointers runs normally; the second fills
// a CUDA graph, instantiates it and launches it; later ones only launch. A
// graph is kept per (candidate, pointer table, workspace) for the last few
// tables. Replay is off where it would differ from an execute: graphs with
// pass-by-value inputs (their host value is read at each call), a caller's
// stream that is itself being captured (its graph must record cuDNN's
// work), and when CUDNNFE_EXECUTE_REPLAY=0 (=native: cuDNN's native graphs
// only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>

#include "backend/nvidia_api.h"
#include "plan/plan.h"

namespace cudnnfe::backend {

struct PlanSet;

// cudnnBackendPopulateCudaGraph's type (cuDNN 9.5 and later).
using PopulateCudaGraphFn = cudnnStatus_t (*)(cudnnHandle_t, cudnnBackendDescriptor_t,
                                              cudnnBackendDescriptor_t, cudaGraph_t);

class ExecuteReplay {
 public:
  ExecuteReplay() = default;
  ExecuteReplay(const ExecuteReplay &) = delete;
  ExecuteReplay &operator=(const ExecuteReplay &) = delete;
  ~ExecuteReplay();

  // Runs candidate `index` of `set` on `stream` from its CUDA graph and
  // returns true, or returns false and leaves the run to the caller
  // (cudnnBackendExecute with `pack`): the first time these pointers are
  // seen, or where replay is off. `populate` is null where the plan or the
  // loaded cuDNN has no native CUDA graph support: stream capture records
  // the execute then. `table` has set.bound_count pointers.
  bool run(const PlanSet &set, size_t index, cudnnHandle_t handle, PopulateCudaGraphFn populate,
           cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t pack, void *const *table,
           void *backend_workspace, void *stream);

  // CUDA graphs kept per plan (a few buffer sets used in turn, as with
  // double buffering, all stay replayed).
  static constexpr size_t kEntries = 4;

 private:
  struct Entry {
    size_t index = 0;
    size_t count = 0;  // 0: unused
    void *workspace = nullptr;
    void *table[kMaxBoundTensors] = {};
    cudaGraphExec_t exec = nullptr;
    bool failed = false;  // making its graph failed once: never try again
  };

  Entry *find(size_t index, size_t count, void *const *table, void *workspace);
  void make_graph(Entry &entry, const PlanSet &set, cudnnHandle_t handle,
                  PopulateCudaGraphFn populate, cudnnBackendDescriptor_t plan,
                  cudnnBackendDescriptor_t pack, void *stream);

  std::mutex mutex_;  // one graph may execute from several threads
  Entry entries_[kEntries];
  size_t next_ = 0;  // the entry to replace next (round robin)
};

// What recording one cudnnBackendExecute by stream capture returned at each
// step (a step not reached keeps its success value).
struct CaptureResult {
  cudaError_t begin = cudaSuccess;
  cudnnStatus_t execute = CUDNN_STATUS_SUCCESS;
  cudaError_t end = cudaSuccess;
};

// Records `plan` run with `pack` on `handle`, which runs on `stream`, into
// *graph by capturing `stream`; capture mode is always left, whatever the
// execute did. Used by execute replay and by bound execution's CAPTURE mode.
CaptureResult capture_one_execute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                                  cudnnBackendDescriptor_t pack, cudaStream_t stream,
                                  cudaGraph_t *graph);

// What CUDNNFE_EXECUTE_REPLAY allows (read once): "0" none, "native"
// cuDNN's native graphs only, anything else (the default) both.
enum class ReplayMode { kOff, kNativeOnly, kNativeOrCapture };
ReplayMode execute_replay_mode();

}  // namespace cudnnfe::backend
