// Making PlanSets: lowering a validated graph and finalizing its operation
// graph, then either asking the heuristics for engine configurations
// (policy, filters) or building one stored configuration directly (plan
// blobs and the persistent cache: no heuristics, no plan search).
#pragma once

#include <memory>
#include <string>

#include "backend/device_properties.h"
#include "backend/gpu_plan.h"
#include "backend/nvidia_api.h"
#include "exec/handle.h"
#include "graph/graph.h"
#include "plan/plan_blob.h"
#include "plan/recorded_plan.h"

namespace cudnnfe::backend {

// Where a GPU build runs: the device (the handle's, else the current one),
// the cuDNN handle used for building and the loaded cuDNN's version; or,
// for a build without a GPU, the device properties it builds for (device
// -1, no handle).
struct BuildTarget {
  int device = 0;
  int sm = 0;
  std::string device_name;
  cudnnHandle_t handle = nullptr;
  int64_t cudnn_version = 0;
  std::shared_ptr<const DeviceProperties> properties;
};

// Loads cuDNN, resolves the device and creates the build's cuDNN handle.
// Throws CUDNN_UNAVAILABLE, CUDA_ERROR, CUDNN_ERROR.
BuildTarget build_target(Handle *handle);

// The target of a build without a GPU, for the device `properties`
// describe. Throws CUDNN_UNAVAILABLE.
BuildTarget build_target(std::shared_ptr<const DeviceProperties> properties);

// "NVIDIA H100 80GB HBM3 (sm_90)", or "device properties of ..." for a
// build without a GPU, for messages.
std::string describe_target(const BuildTarget &target);

// Heuristics, filters and policy. Throws NOT_SUPPORTED naming the ops, the
// cuDNN version, the GPU, cuDNN's reasons and what each filter removed.
// Adds the stage times to `record`.
std::shared_ptr<PlanSet> build_plan_set(const Graph &graph, const BuildTarget &target,
                                        const BuildOptions &options, BuildRecord &record);

// cudnn-frontend's check_support: the engine configurations the heuristics
// modes offer for `graph` that pass the options' filters, in order, without
// building any plan (no kernel compiled). NOT_SUPPORTED, saying why, when
// none does.
std::vector<OfferedConfig> supported_configurations(const Graph &graph, const BuildTarget &target,
                                                    const BuildOptions &options);

// A stored plan (blob or persistent cache), built directly: from cuDNN's own
// serialized execution plan when the record has one and cuDNN takes it back,
// else from the engine configuration. Throws NOT_SUPPORTED when it does not
// build on this GPU and cuDNN.
std::shared_ptr<PlanSet> build_plan_set_from_config(const Graph &graph, const BuildTarget &target,
                                                    const plan::PlanRecord &stored,
                                                    BuildRecord &record);

// Largest serialized execution plan kept in a plan blob.
constexpr uint64_t kMaxExecutionPlanJson = 32u << 20;

// cuDNN's JSON serialization of a built candidate, or "" where cuDNN offers
// none (it serializes runtime-compiled engines, with their compiled kernels).
std::string execution_plan_json(const Candidate &candidate);

// "graph "g" [matmul "mm" (HALF)]", for messages.
std::string describe_graph(const Graph &graph);

}  // namespace cudnnfe::backend
