#include "backend/autotune.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/device.h"
#include "backend/gpu_plan.h"
#include "backend/gpu_plan_cache.h"
#include "backend/loader.h"
#include "core/dtype.h"
#include "core/error.h"

namespace cudnnfe::backend {
namespace {

void check_cuda(cudaError_t error, const char *what) {
  if (error != cudaSuccess)
    fail(CUDNNFE_STATUS_CUDA_ERROR, "autotune: ", what, " failed: ", cuda_error_text(error));
}

// Device memory owned for the duration of the call.
class DeviceAllocation {
 public:
  DeviceAllocation() = default;
  DeviceAllocation(const DeviceAllocation &) = delete;
  DeviceAllocation &operator=(const DeviceAllocation &) = delete;
  ~DeviceAllocation() {
    if (ptr_) cudart().Free(ptr_);
  }
  void allocate(size_t bytes, const std::string &what) {
    cudaError_t error = cudart().Malloc(&ptr_, std::max<size_t>(bytes, 256));
    if (error != cudaSuccess) {
      ptr_ = nullptr;
      cudart().GetLastError();
      fail(CUDNNFE_STATUS_CUDA_ERROR, "autotune: cudaMalloc of ", bytes, " bytes for ", what,
           " failed: ", cuda_error_text(error));
    }
  }
  void *get() const { return ptr_; }

 private:
  void *ptr_ = nullptr;
};

class Event {
 public:
  Event() { check_cuda(cudart().EventCreate(&event_), "cudaEventCreate"); }
  ~Event() {
    if (event_) cudart().EventDestroy(event_);
  }
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Milliseconds of `batch` back-to-back runs of candidate `index`, per run.
double time_batch(const GpuPlan &plan, size_t index, Handle &handle, void *const *data,
                  void *workspace, void *stream, int batch, const Event &start, const Event &stop) {
  const CudartApi &rt = cudart();
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  check_cuda(rt.EventRecord(start.get(), s), "cudaEventRecord");
  for (int i = 0; i < batch; ++i) plan.run(index, handle, data, workspace, stream);
  check_cuda(rt.EventRecord(stop.get(), s), "cudaEventRecord");
  check_cuda(rt.EventSynchronize(stop.get()), "cudaEventSynchronize");
  float ms = 0;
  check_cuda(rt.EventElapsedTime(&ms, start.get(), stop.get()), "cudaEventElapsedTime");
  return static_cast<double>(ms) / batch;
}

}  // namespace

void autotune(Graph &graph, Handle &handle, void *const *data, void *workspace,
              size_t workspace_size, void *stream, const AutotuneOptions &options) {
  RecordedPlan &recorded = recorded_plan(graph);
  GpuPlan *plan = dynamic_cast<GpuPlan *>(&recorded);
  if (!plan)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "graph \"", graph.name,
         "\" was built for the CPU reference: it has one plan and nothing to autotune");
  plan->require_runnable();
  const PlanSet &set = plan->set();
  const CudartApi &rt = cudart();
  ensure_device(set.device);

  // Scratch buffers for every bound tensor, filled with a finite pattern
  // (0x3c bytes: about 1.06 in HALF, 0.0115 in FLOAT and BFLOAT16).
  std::vector<DeviceAllocation> scratch(data ? 0 : graph.bound_uids().size());
  std::vector<void *> pointers;
  if (!data) {
    for (size_t i = 0; i < graph.bound_uids().size(); ++i) {
      const Tensor &t = graph.tensor(graph.bound_uids()[i]);
      const size_t bytes = static_cast<size_t>(t.element_span()) * dtype_size(t.dtype);
      scratch[i].allocate(bytes, cat("tensor \"", t.name, "\""));
      check_cuda(rt.Memset(scratch[i].get(), 0x3c, std::max<size_t>(bytes, 1)), "cudaMemset");
      pointers.push_back(scratch[i].get());
    }
    data = pointers.data();
  }
  DeviceAllocation own_workspace;
  if (!workspace) {
    int64_t largest = 0;
    for (const Candidate &c : set.candidates) largest = std::max(largest, c.workspace_size);
    if (largest > 0) own_workspace.allocate(static_cast<size_t>(largest), "the workspace");
    workspace = own_workspace.get();
    workspace_size = static_cast<size_t>(largest);
  }

  Event start, stop;
  std::vector<double> times(set.candidates.size(), -1.0);
  std::string skipped;
  for (size_t i = 0; i < set.candidates.size(); ++i) {
    const Candidate &c = set.candidates[i];
    if (c.workspace_size > static_cast<int64_t>(workspace_size)) {
      skipped += cat(skipped.empty() ? "" : "; ", c.name, ": needs ", c.workspace_size,
                     " bytes of workspace, ", workspace_size, " given");
      continue;
    }
    try {
      for (int w = 0; w < options.warmup; ++w) plan->run(i, handle, data, workspace, stream);
      // One run sizes the batch: long enough for the events to resolve.
      const double once = time_batch(*plan, i, handle, data, workspace, stream, 1, start, stop);
      const int batch =
          once > 0 ? static_cast<int>(std::clamp(std::ceil(0.05 / once), 1.0, 64.0)) : 64;
      std::vector<double> samples;
      double previous = -1, spent = once;
      for (int s = 0; s < options.max_samples; ++s) {
        const double t = time_batch(*plan, i, handle, data, workspace, stream, batch, start, stop);
        samples.push_back(t);
        spent += t * batch;
        const double m = median(samples);
        if (static_cast<int>(samples.size()) >= options.min_samples &&
            (std::fabs(m - previous) <= options.tolerance * m || spent >= options.max_ms_per_plan))
          break;
        previous = m;
      }
      times[i] = median(samples);
    } catch (const Error &e) {
      if (e.status() == CUDNNFE_STATUS_CUDA_ERROR) throw;
      rt.StreamSynchronize(static_cast<cudaStream_t>(stream));
      rt.GetLastError();
      skipped += cat(skipped.empty() ? "" : "; ", c.name, ": ", e.message());
    }
  }
  size_t best = set.candidates.size();
  for (size_t i = 0; i < times.size(); ++i)
    if (times[i] >= 0 && (best == times.size() || times[i] < times[best])) best = i;
  if (best == times.size())
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "autotune of graph \"", graph.name,
         "\": no plan could be timed (", skipped, ")");
  plan->times = std::move(times);
  plan->loaded_timings.clear();
  plan->chosen_by_autotune = static_cast<int>(best);
  plan->select(best);
  remember_selection(graph, *plan);
}

}  // namespace cudnnfe::backend
