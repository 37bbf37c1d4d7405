// A GPU plan bound to fixed buffers (cudnnfe_graph_bind): the variant pack
// made once, and optionally a CUDA graph recorded once (cuDNN's native
// population, or stream capture of cudnnBackendExecute) and launched at
// every run. Which graphs may be bound with a CUDA graph is decided by the
// caller (api/api_bound.cpp), not here.
#include <memory>

#include "backend/device.h"
#include "backend/execute_replay.h"
#include "backend/gpu_plan.h"
#include "backend/loader.h"
#include "core/error.h"
#include "exec/handle.h"

namespace cudnnfe::backend {
namespace {

void check_cuda(cudaError_t error, const char *what) {
  if (error != cudaSuccess)
    fail(CUDNNFE_STATUS_CUDA_ERROR, what, " failed: ", cuda_error_text(error));
}

// The CUDA runtime's graph API, or NOT_SUPPORTED naming what it lacks.
const CudaGraphRuntimeApi &graph_runtime() {
  const CudaGraphRuntimeApi &rt = cuda_graph_runtime();
  if (!rt.missing.empty())
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "a CUDA graph needs the CUDA runtime's graph API; ",
         cudart().path, " lacks ", rt.missing, " (bind with cuda_graph = CUDNNFE_CUDA_GRAPH_OFF)");
  return rt;
}

void raise_cudnn(cudnnStatus_t status, const char *what, const Candidate &c) {
  std::string reason = last_error();
  fail(CUDNNFE_STATUS_CUDNN_ERROR, what, " of plan ", c.name, " failed: ", status_text(status),
       reason.empty() ? "" : cat(": ", reason));
}

// Owns an uninstantiated cudaGraph_t.
struct GraphOwner {
  cudaGraph_t graph = nullptr;
  ~GraphOwner() {
    if (graph) cuda_graph_runtime().GraphDestroy(graph);
  }
};

// Owns a private stream for capture.
struct StreamOwner {
  cudaStream_t stream = nullptr;
  ~StreamOwner() {
    if (stream) cuda_graph_runtime().StreamDestroy(stream);
  }
};

class GpuBoundRun final : public BoundRun {
 public:
  GpuBoundRun(std::shared_ptr<const PlanSet> set, size_t index, Descriptor pack)
      : set_(std::move(set)), index_(index), pack_(std::move(pack)) {}
  ~GpuBoundRun() override {
    if (exec_) cuda_graph_runtime().GraphExecDestroy(exec_);
  }

  void run(Handle &handle, void *stream) override {
    if (exec_) {
      ensure_device(set_->device);
      cudaError_t error = launch_(exec_, static_cast<cudaStream_t>(stream));
      if (error != cudaSuccess)
        fail(CUDNNFE_STATUS_CUDA_ERROR, "cudaGraphLaunch of plan ", candidate().name,
             " failed: ", cuda_error_text(error));
      return;
    }
    cudnnHandle_t h = prepare_handle(handle, set_->device, stream, true);
    cudnnStatus_t status = cudnn().BackendExecute(h, candidate().plan.get(), pack_.get());
    if (status != CUDNN_STATUS_SUCCESS) raise_cudnn(status, "cudnnBackendExecute", candidate());
  }
  cudnnfe_cuda_graph_mode_t mode() const override { return mode_; }

  // Records the run with stream capture on a private stream: the handle's
  // cuDNN handle runs on it during the capture and on its former stream
  // after. The work runs once before the capture, as docs/plans.md asks of
  // stream capture: a plan's first run may do one-time setup (loading
  // kernels, say) that capture forbids.
  void capture(Handle &handle) {
    const CudaGraphRuntimeApi &rt = graph_runtime();
    cudnnHandle_t h = prepare_handle(handle, set_->device, nullptr, false);
    StreamOwner owner;
    check_cuda(rt.StreamCreateWithFlags(&owner.stream, cudaStreamNonBlocking),
               "cudaStreamCreateWithFlags");
    void *former = handle.stream_set ? handle.stream : nullptr;
    prepare_handle(handle, set_->device, owner.stream, true);
    cudnnStatus_t warm = cudnn().BackendExecute(h, candidate().plan.get(), pack_.get());
    cudaError_t synced = cudart().StreamSynchronize(owner.stream);
    if (warm != CUDNN_STATUS_SUCCESS || synced != cudaSuccess) {
      prepare_handle(handle, set_->device, former, true);
      if (warm != CUDNN_STATUS_SUCCESS) raise_cudnn(warm, "cudnnBackendExecute", candidate());
      check_cuda(synced, "cudaStreamSynchronize");
    }
    GraphOwner graph;
    const CaptureResult r =
        capture_one_execute(h, candidate().plan.get(), pack_.get(), owner.stream, &graph.graph);
    prepare_handle(handle, set_->device, former, true);
    check_cuda(r.begin, "cudaStreamBeginCapture");
    if (r.execute != CUDNN_STATUS_SUCCESS)
      raise_cudnn(r.execute, "cudnnBackendExecute under stream capture", candidate());
    check_cuda(r.end, "cudaStreamEndCapture");
    instantiate(graph.graph, CUDNNFE_CUDA_GRAPH_CAPTURE);
  }

  // Instantiates a graph recorded for this run and launches it from now on.
  void instantiate(cudaGraph_t graph, cudnnfe_cuda_graph_mode_t mode) {
    const CudaGraphRuntimeApi &rt = graph_runtime();
    if (!graph)
      fail(CUDNNFE_STATUS_CUDA_ERROR, "recording plan ", candidate().name,
           " as a CUDA graph gave no graph");
    check_cuda(rt.GraphInstantiateWithFlags(&exec_, graph, 0), "cudaGraphInstantiateWithFlags");
    launch_ = rt.GraphLaunch;
    mode_ = mode;
  }

 private:
  const Candidate &candidate() const { return set_->candidates[index_]; }

  std::shared_ptr<const PlanSet> set_;  // keeps the plan, its kernels and constants
  size_t index_;
  Descriptor pack_;
  cudaGraphExec_t exec_ = nullptr;
  cudaError_t (*launch_)(cudaGraphExec_t, cudaStream_t) = nullptr;
  cudnnfe_cuda_graph_mode_t mode_ = CUDNNFE_CUDA_GRAPH_OFF;
};

}  // namespace

std::unique_ptr<BoundRun> GpuPlan::bind(Handle &handle, void *const *data, size_t count,
                                        void *workspace, cudnnfe_cuda_graph_mode_t mode) const {
  (void)count;  // the caller checked it against the graph's bound tensors
  const size_t index = selected();
  prepare(handle, nullptr, false);  // refuses a plan built without a GPU
  void *table[kMaxBoundTensors];
  void *backend_workspace = set_->bind(data, workspace, table);
  auto run = std::make_unique<GpuBoundRun>(set_, index,
                                           make_variant_pack(*set_, table, backend_workspace));
  if (mode == CUDNNFE_CUDA_GRAPH_AUTO) {
    const bool native =
        (current().behavior_notes & CUDNNFE_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API) != 0 &&
        native_cuda_graph_available();
    mode = native ? CUDNNFE_CUDA_GRAPH_NATIVE : CUDNNFE_CUDA_GRAPH_CAPTURE;
  }
  if (mode == CUDNNFE_CUDA_GRAPH_CAPTURE) {
    run->capture(handle);
  } else if (mode == CUDNNFE_CUDA_GRAPH_NATIVE) {
    const CudaGraphRuntimeApi &rt = graph_runtime();
    GraphOwner graph;
    check_cuda(rt.GraphCreate(&graph.graph, 0), "cudaGraphCreate");
    cuda_graph(false, handle, data, workspace, graph.graph);  // checks the plan's note
    run->instantiate(graph.graph, CUDNNFE_CUDA_GRAPH_NATIVE);
  }
  return run;
}

}  // namespace cudnnfe::backend
