// A built, runnable form of a graph: the CPU reference or a cuDNN plan.
// Plans are immutable after build so that many threads may execute one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/c_api.h"

namespace cudnnfe {

namespace backend {
class KernelCache;
class DeviceProperties;
}  // namespace backend
struct Handle;
class Verifier;  // exec/verify.h

// One bound tensor's shape and strides for one execute.
struct ShapeOverride {
  int64_t uid = 0;
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;
};

// Largest number of bound tensors a graph may have: execute keeps its
// pointer table on the stack (no heap allocation on the hot path).
constexpr size_t kMaxBoundTensors = 128;

// A plan fixed to one set of buffers, a workspace and a handle
// (cudnnfe_graph_bind): each run does no lookup and no check. Made by
// Plan::bind; used by one thread at a time.
class BoundRun {
 public:
  virtual ~BoundRun() = default;
  virtual void run(Handle &handle, void *stream) = 0;
  // CUDNNFE_CUDA_GRAPH_OFF, _NATIVE or _CAPTURE.
  virtual cudnnfe_cuda_graph_mode_t mode() const { return CUDNNFE_CUDA_GRAPH_OFF; }
};

class Plan {
 public:
  virtual ~Plan() = default;
  virtual cudnnfe_target_t target() const = 0;
  virtual int64_t workspace_size() const = 0;
  virtual const std::string &name() const = 0;
  // Throws WRONG_STATE when this process cannot run the plan at all (one
  // built from device properties without a GPU); checked before bindings.
  virtual void require_runnable() const {}
  // data[i] is the buffer of graph.bound_uids()[i]; the caller checked the
  // count and the workspace size. Throws Error on failure.
  virtual void execute(Handle &handle, void *const *data, void *workspace, void *stream) const = 0;
  // execute with some bound tensors' shapes replaced for this call (the
  // caller checked them against the graph: exec/shape_override.h). Plans
  // that cannot take overrides refuse with NOT_SUPPORTED.
  virtual void execute_overridden(Handle &handle, void *const *data,
                                  const std::vector<ShapeOverride> &overrides, void *workspace,
                                  void *stream) const;
  // The plan bound to `data` (every bound tensor's buffer, checked by the
  // caller) and `workspace`, run as `mode` says (AUTO is resolved by the
  // plan). The default runs execute() on a copy of the pointers and
  // refuses any CUDA graph mode with NOT_SUPPORTED (exec/bound.cpp).
  virtual std::unique_ptr<BoundRun> bind(Handle &handle, void *const *data, size_t count,
                                         void *workspace, cudnnfe_cuda_graph_mode_t mode) const;

  // Verify mode's check of first executions (exec/verify.h, docs/verify.md):
  // null when off. Set once, at build, before the plan is shared.
  Verifier *verifier() const { return verifier_.get(); }
  void set_verifier(std::shared_ptr<Verifier> verifier) { verifier_ = std::move(verifier); }
  const std::shared_ptr<Verifier> &shared_verifier() const { return verifier_; }

 private:
  std::shared_ptr<Verifier> verifier_;
};

// Verify mode (docs/verify.md), as a build resolved it from its options and
// the environment (exec/verify.h).
// An engine configuration a check of support found (cudnnfe_graph_check_support):
// what a POLICY_ALL build would try to build, before any plan is built.
struct OfferedConfig {
  std::string name;  // plan::engine_config_name
  int64_t engine_id = -1;
  uint32_t numerical_notes = 0;
  uint32_t behavior_notes = 0;
};

struct VerifySettings {
  bool enabled = false;
  int32_t samples = 64;  // output elements sampled per output tensor
  double rtol = 0.0;     // 0: by data type
};

struct BuildOptions {
  cudnnfe_target_t target = CUDNNFE_TARGET_AUTO;
  std::vector<cudnnfe_heur_mode_t> heur_modes{CUDNNFE_HEUR_MODE_A, CUDNNFE_HEUR_MODE_FALLBACK};
  // Plan control (src/backend/gpu_plan_build.cpp, src/backend/gpu_plan_cache.cpp).
  cudnnfe_build_policy_t policy = CUDNNFE_BUILD_POLICY_HEURISTICS_CHOICE;
  int64_t max_workspace_size = -1;  // -1: no limit
  uint32_t exclude_numerical_notes = 0;
  uint32_t exclude_behavior_notes = 0;
  uint32_t require_behavior_notes = 0;
  std::vector<int64_t> exclude_engines;
  int32_t max_plans = 0;  // 0: no limit
  bool use_plan_cache = true;
  std::string plan_cache_dir;  // "" : no directory cache
  // Execute-time shapes (cudnnfe_graph_execute_with_overrides); the build
  // records it on the graph (Graph::override_shape_enabled).
  bool override_shape_enabled = false;
  // Dynamic shapes and the kernel cache (backend/kernel_cache.h); a cache
  // implies dynamic shapes. Recorded on the graph as override_shape_enabled.
  bool dynamic_shape_enabled = false;
  std::shared_ptr<backend::KernelCache> kernel_cache;
  // Building without a GPU for the device these describe
  // (backend/device_properties.h); null for a build on this process's GPU.
  std::shared_ptr<const backend::DeviceProperties> device_properties;
  // The target the caller asked for (target is resolved from AUTO).
  cudnnfe_target_t requested_target = CUDNNFE_TARGET_AUTO;
  // cudnn-frontend's sm_count (heuristics' SM count target; 0: the GPU's)
  // and sm_version (the architecture validation's support rules assume;
  // 0: the GPU's).
  int32_t sm_count = 0;
  int32_t sm_version = 0;
  // Verify mode; not part of plan blobs or cache keys (it changes no plan).
  VerifySettings verify;
};

}  // namespace cudnnfe
