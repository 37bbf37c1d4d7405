// build_gpu_plan: lower every node, finalize the operation graph on a
// handle, ask cuDNN's heuristics for engine configurations in the modes the
// caller chose, and keep the first configuration whose plan builds. When
// nothing builds, the NOT_SUPPORTED message says what was asked (the ops),
// of what (cuDNN version, GPU and architecture) and cuDNN's own reason.
#include <sstream>

#include "backend/backend.h"
#include "backend/descriptor.h"
#include "backend/device.h"
#include "backend/gpu_plan.h"
#include "backend/loader.h"
#include "backend/lowering.h"
#include "core/dtype.h"
#include "core/error.h"

namespace cudnnfe::backend {
namespace {

std::string version_string(size_t version) {
  return cat(version / 10000, ".", (version % 10000) / 100, ".", version % 100);
}

// `conv_fprop "c1" (HALF)`, `pointwise "act" (RELU_FWD, FLOAT)`.
std::string describe_node(const Graph &graph, const Node &node) {
  std::string detail;
  if (node.kind == OpKind::kPointwise)
    detail = cat(pointwise_mode_name(node.as<PointwiseAttrs>().mode), ", ");
  if (node.kind == OpKind::kReduction)
    detail = cat(reduction_mode_name(node.as<ReductionAttrs>().mode), ", ");
  if (node.kind == OpKind::kSdpa) {
    const SdpaAttrs &a = node.as<SdpaAttrs>();
    if (a.causal_mask) detail += "causal, ";
    if (a.causal_mask_bottom_right) detail += "causal bottom-right, ";
    if (node.inputs[3] != 0) detail += "bias, ";
    if (a.generate_stats) detail += "stats, ";
  }
  const int64_t first = node.inputs[0];
  const char *dtype = first ? dtype_name(graph.tensor(first).dtype) : "?";
  return cat(Graph::label(node), " (", detail, dtype, ")");
}

std::string describe_ops(const Graph &graph) {
  std::string ops;
  for (const Node &node : graph.nodes())
    ops += cat(ops.empty() ? "" : ", ", describe_node(graph, node));
  return ops;
}

[[noreturn]] void fail_not_supported(const Graph &graph, size_t version, int device,
                                     const std::string &why) {
  fail(CUDNNFE_STATUS_NOT_SUPPORTED, "graph \"", graph.name, "\" [", describe_ops(graph),
       "] is not supported by cuDNN ", version_string(version), " on ", describe_device(device),
       ": ", why);
}

void lower_node(Lowering &lowering, const Node &node) {
  switch (node.kind) {
    case OpKind::kConvFprop:
    case OpKind::kConvDgrad:
    case OpKind::kConvWgrad: return lower_conv(lowering, node);
    case OpKind::kMatmul: return lower_matmul(lowering, node);
    case OpKind::kPointwise: return lower_pointwise(lowering, node);
    case OpKind::kReduction: return lower_reduction(lowering, node);
    case OpKind::kSdpa: return lower_sdpa(lowering, node);
    default:
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, op_kind_name(node.kind),
           " has no cuDNN lowering yet (it runs on the CPU reference)");
  }
}

cudnnBackendHeurMode_t to_cudnn_heur(cudnnfe_heur_mode_t mode) {
  switch (mode) {
    case CUDNNFE_HEUR_MODE_B: return CUDNN_HEUR_MODE_B;
    case CUDNNFE_HEUR_MODE_FALLBACK: return CUDNN_HEUR_MODE_FALLBACK;
    default: return CUDNN_HEUR_MODE_A;
  }
}

const char *heur_mode_name(cudnnfe_heur_mode_t mode) {
  switch (mode) {
    case CUDNNFE_HEUR_MODE_B: return "B";
    case CUDNNFE_HEUR_MODE_FALLBACK: return "FALLBACK";
    default: return "A";
  }
}

// "eng9_k2=3_k13=1": the engine's global index and its knob choices.
std::string plan_name(const Descriptor &config) {
  Descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t raw_engine = engine.get();
  config.get_descriptors(CUDNN_ATTR_ENGINECFG_ENGINE, &raw_engine, 1);
  std::ostringstream name;
  name << "eng" << engine.get_int64(CUDNN_ATTR_ENGINE_GLOBAL_INDEX);
  std::vector<Descriptor> knobs;
  std::vector<cudnnBackendDescriptor_t> raw_knobs;
  for (int i = 0; i < CUDNN_KNOB_TYPE_COUNTS; ++i) {
    knobs.emplace_back(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
    raw_knobs.push_back(knobs.back().get());
  }
  const int64_t count =
      std::min<int64_t>(config.get_descriptors(CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, raw_knobs.data(),
                                               static_cast<int64_t>(raw_knobs.size())),
                        static_cast<int64_t>(raw_knobs.size()));
  for (int64_t i = 0; i < count; ++i) {
    cudnnBackendKnobType_t type = CUDNN_KNOB_TYPE_COUNTS;
    int64_t value = 0;
    knobs[i].get(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &type);
    knobs[i].get(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &value);
    name << "_k" << static_cast<int>(type) << "=" << value;
  }
  return name.str();
}

}  // namespace

std::unique_ptr<Plan> build_gpu_plan(const Graph &graph, Handle *handle,
                                     const BuildOptions &options) {
  const CudnnApi &dnn = cudnn();
  const size_t version = dnn.GetVersion();
  int device;
  cudnnHandle_t cudnn_handle;
  if (handle) {
    init_handle(*handle);
    device = handle->device;
    ensure_device(device);
    cudnn_handle = static_cast<cudnnHandle_t>(handle->cudnn);
  } else {
    device = current_device();
    cudnn_handle = shared_handle(device);
  }

  Lowering lowering(graph, version);
  for (const Node &node : graph.nodes()) {
    try {
      lower_node(lowering, node);
    } catch (const Error &e) {
      if (e.status() == CUDNNFE_STATUS_NOT_SUPPORTED)
        fail_not_supported(graph, version, device, cat(Graph::label(node), ": ", e.message()));
      throw Error(e.status(),
                  cat("graph \"", graph.name, "\": ", Graph::label(node), ": ", e.message()));
    }
  }

  Descriptor operation_graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  operation_graph.set_descriptors(CUDNN_ATTR_OPERATIONGRAPH_OPS, lowering.operations().data(),
                                  static_cast<int64_t>(lowering.operations().size()));
  operation_graph.set_handle(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, cudnn_handle);
  cudnnStatus_t status = operation_graph.try_finalize();
  if (status != CUDNN_STATUS_SUCCESS) {
    std::string reason = last_error();
    fail_not_supported(graph, version, device,
                       cat("cuDNN refused the operation graph: ", status_text(status),
                           reason.empty() ? "" : cat(": ", reason)));
  }

  // Why each heuristics mode gave no plan; modes failing alike are merged.
  std::vector<std::pair<std::string, std::string>> attempts;
  auto record = [&attempts](cudnnfe_heur_mode_t mode, std::string why) {
    for (auto &a : attempts) {
      if (a.second == why) {
        a.first += cat(", ", heur_mode_name(mode));
        return;
      }
    }
    attempts.emplace_back(heur_mode_name(mode), std::move(why));
  };
  for (cudnnfe_heur_mode_t mode : options.heur_modes) {
    Descriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    heuristics.set_descriptor(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, operation_graph);
    heuristics.set_heur_mode(CUDNN_ATTR_ENGINEHEUR_MODE, to_cudnn_heur(mode));
    status = heuristics.try_finalize();
    if (status != CUDNN_STATUS_SUCCESS) {
      std::string reason = last_error();
      record(mode, cat("failed: ", status_text(status), reason.empty() ? "" : cat(": ", reason)));
      continue;
    }
    const int64_t available = heuristics.count_descriptors(CUDNN_ATTR_ENGINEHEUR_RESULTS);
    std::vector<Descriptor> configs;
    std::vector<cudnnBackendDescriptor_t> raw_configs;
    for (int64_t i = 0; i < available; ++i) {
      configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
      raw_configs.push_back(configs.back().get());
    }
    const int64_t count =
        std::min<int64_t>(available ? heuristics.get_descriptors(CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                                 raw_configs.data(), available)
                                    : 0,
                          available);
    if (count == 0) {
      std::string reason = last_error();
      record(mode, cat("offered no engine", reason.empty() ? "" : cat(" (", reason, ")")));
      continue;
    }
    std::string first_reason;
    for (int64_t i = 0; i < count; ++i) {
      Descriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      plan.set_descriptor(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, configs[i]);
      status = plan.try_finalize();
      if (status == CUDNN_STATUS_SUCCESS) {
        const int64_t workspace = plan.get_int64(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE);
        std::string name = plan_name(configs[i]);
        return std::make_unique<GpuPlan>(lowering.take_descriptors(), std::move(operation_graph),
                                         std::move(plan), graph.bound_uids(), lowering.scalars(),
                                         workspace, std::move(name), device);
      }
      if (first_reason.empty()) {
        std::string reason = last_error();
        first_reason = cat(status_text(status), reason.empty() ? "" : cat(": ", reason));
      }
    }
    record(mode, cat("offered ", count,
                     " engine configs and none built (first failure: ", first_reason, ")"));
  }
  std::string why;
  for (const auto &a : attempts)
    why += cat(why.empty() ? "" : "; ", "heuristics ", a.first, " ", a.second);
  fail_not_supported(graph, version, device, why.empty() ? "no heuristics mode was given" : why);
}

}  // namespace cudnnfe::backend
