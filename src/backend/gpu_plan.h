// Built cuDNN plans. A PlanSet is what one build makes: the lowered
// descriptors, the operation graph and one or more candidate plans (by
// policy), with the variant pack's UID order and the scalars' bytes. It is
// immutable once made and shared: by the graph that built it and, through
// the plan cache, by later graphs of the same structure.
//
// A GpuPlan is one graph's view of a PlanSet: which candidate execute runs
// (selection, autotune) and what autotune measured.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "backend/descriptor.h"
#include "backend/device_constants.h"
#include "backend/device_properties.h"
#include "backend/execute_replay.h"
#include "backend/frontend_workspace.h"
#include "backend/kernel_cache.h"
#include "backend/lowering.h"
#include "plan/plan_blob.h"
#include "plan/recorded_plan.h"

namespace cudnnfe::backend {

// Most pass-by-value scalars one plan may have (execute keeps their
// pointers on the stack beside the bound tensors').
constexpr size_t kMaxScalars = 64;

struct Candidate {
  plan::EngineConfig config;
  std::string name;  // engine_config_name(config)
  Descriptor plan;   // finalized execution plan
  // The whole workspace the caller gives: the frontend's part
  // (PlanSet::frontend) and cuDNN's.
  int64_t workspace_size = 0;
  uint32_t numerical_notes = 0;  // CUDNNFE_NUMERICAL_NOTE_* bits
  uint32_t behavior_notes = 0;   // CUDNNFE_BEHAVIOR_NOTE_* bits
};

// A slice output bound at `byte_offset` into the graph's bound tensor
// `parent` (an index into the graph's bound UIDs).
struct ViewBinding {
  size_t parent = 0;
  int64_t byte_offset = 0;
};

struct PlanSet {
  // Declared first so that they are destroyed last: the plans refer to them.
  std::shared_ptr<KernelCache> kernel_cache;  // null when the build had none
  std::deque<Descriptor> descriptors;
  Descriptor operation_graph;
  std::vector<Candidate> candidates;  // at least one
  // The variant pack's UIDs: the graph's bound UIDs that a backend tensor
  // describes, the frontend's workspace tensors (backend/frontend_workspace.h),
  // the views, the constant tensors (backend/device_constants.h), then the
  // scalars.
  std::vector<int64_t> uids;
  // For each UID before the scalars, its entry in bind()'s pointer table.
  std::vector<size_t> slots;
  size_t graph_bound = 0;  // the graph's bound tensors
  // Entries of bind()'s table: graph_bound + frontend tensors + views +
  // constant tensors.
  size_t bound_count = 0;
  FrontendWorkspace frontend;
  std::vector<ViewBinding> views;
  std::shared_ptr<const DeviceConstants> constants;  // null when there are none
  std::vector<ScalarValue> scalars;
  // Some graph input is pass-by-value: its host value is read at each
  // execute, so the execute is never replayed (backend/execute_replay.h).
  bool has_by_value_inputs = false;
  // Why recording cudnnBackendExecute by stream capture is known to give a
  // wrong result for this graph (backend/known_wrong_configs.h), or empty:
  // then execute replay uses only cuDNN's native CUDA graphs.
  std::string capture_known_wrong;
  int device = 0;
  int sm = 0;
  std::string device_name;
  int64_t cudnn_version = 0;
  // Set for a build without a GPU (device -1): the device properties it was
  // built for. Such a set is only serialized, never run.
  std::shared_ptr<const DeviceProperties> properties;
  // Persistent-cache key ("" when built without the cache) and in-process
  // cache key (adds the device index).
  std::string cache_key;
  std::string memory_key;
  // Unique per set in this process (the execute path's variant pack reuse).
  uint64_t serial = 0;

  // Checks the limits and appends the scalars to `uids`; call once `uids`,
  // `slots`, `graph_bound`, `frontend`, `views` and `constants` are set.
  void seal();
  // The pointer table for the graph's `data` (graph_bound entries) and the
  // caller's `workspace`: writes bound_count pointers (the graph's, the
  // frontend tensors', the views', the constants') to `table` and returns cuDNN's part of
  // the workspace. The variant pack takes table[slots[i]] for uids[i].
  void *bind(void *const *data, void *workspace, void **table) const;
};

class GpuPlan final : public RecordedPlan {
 public:
  GpuPlan(std::shared_ptr<const PlanSet> set, size_t selected);

  cudnnfe_target_t target() const override { return CUDNNFE_TARGET_GPU; }
  int64_t workspace_size() const override { return current().workspace_size; }
  const std::string &name() const override { return current().name; }
  // Runs the selected candidate, replayed from a CUDA graph when it runs
  // again on the same buffers (backend/execute_replay.h).
  void execute(Handle &handle, void *const *data, void *workspace, void *stream) const override {
    run(selected(), handle, data, workspace, stream, true);
  }

  size_t plan_count() const override { return set_->candidates.size(); }
  size_t selected() const override { return selected_.load(std::memory_order_relaxed); }
  void select(size_t index) override { selected_.store(index, std::memory_order_relaxed); }
  PlanEntry entry(size_t index) const override;

  // Runs the selected candidate with execute-time shapes: a variant pack of
  // its own with cuDNN's override attributes (cuDNN refuses them where it
  // lacks them, and that refusal is reported as NOT_SUPPORTED).
  void execute_overridden(Handle &handle, void *const *data,
                          const std::vector<ShapeOverride> &overrides, void *workspace,
                          void *stream) const override;
  // The selected candidate bound to fixed buffers (backend/gpu_bound.cpp):
  // the variant pack made now, and for a CUDA graph mode the graph
  // recorded now and instantiated.
  std::unique_ptr<BoundRun> bind(Handle &handle, void *const *data, size_t count, void *workspace,
                                 cudnnfe_cuda_graph_mode_t mode) const override;
  // Runs candidate `index` with cudnnBackendExecute (autotune times each
  // this way), or from a recording when `replay`.
  void run(size_t index, Handle &handle, void *const *data, void *workspace, void *stream,
           bool replay = false) const;
  // Fills or updates a CUDA graph with the selected candidate
  // (cudnnBackendPopulateCudaGraph / cudnnBackendUpdateCudaGraph).
  void cuda_graph(bool update, Handle &handle, void *const *data, void *workspace,
                  void *cuda_graph) const;

  // WRONG_STATE for a set built without a GPU (from device properties).
  void require_runnable() const override;

  const PlanSet &set() const { return *set_; }
  const std::shared_ptr<const PlanSet> &shared_set() const { return set_; }
  const Candidate &current() const { return set_->candidates[selected()]; }

  // Autotune's record: per candidate median ms (-1: not timed) and the
  // candidate it chose (-1: none).
  std::vector<double> times;
  int chosen_by_autotune = -1;
  // The autotune table of every plan, as loaded from a plan blob (the
  // loaded set has the chosen plan only); cleared by a new autotune.
  std::vector<plan::AutotuneTiming> loaded_timings;

  // For benchmarks and tests that call cuDNN directly: the selected plan's
  // descriptor and the cuDNN handle `handle` runs on (created if needed).
  void *raw_plan() const { return current().plan.get(); }
  static void *raw_handle(Handle &handle);

 private:
  // The handle's cuDNN handle on the plan's device, on `stream`.
  cudnnHandle_t prepare(Handle &handle, void *stream, bool set_stream) const;

  std::shared_ptr<const PlanSet> set_;
  std::atomic<size_t> selected_;
  mutable ExecuteReplay replay_;
};

// A new serial number for a PlanSet.
uint64_t next_plan_set_serial();

// A finalized variant pack of `set` for bind()'s pointer `table` and cuDNN's
// part of the workspace.
Descriptor make_variant_pack(const PlanSet &set, void *const *table, void *workspace);

// The handle's cuDNN handle, made on its first use, checked to run on
// `device` (made current on this thread), and on `stream` when
// `set_stream` (cudnnSetStream only when the stream changed).
cudnnHandle_t prepare_handle(Handle &handle, int device, void *stream, bool set_stream);

// Whether the loaded cuDNN has cudnnBackendPopulateCudaGraph (9.5 and later).
bool native_cuda_graph_available();

}  // namespace cudnnfe::backend
