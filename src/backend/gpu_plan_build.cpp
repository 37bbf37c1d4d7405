// Building plan sets: lower every node, finalize the operation graph on a
// handle, then either ask cuDNN's heuristics for engine configurations in
// the modes the caller chose (keeping the first that passes the filters and
// builds, or all of them, by policy) or build one stored configuration. When
// nothing builds, the NOT_SUPPORTED message says what was asked (the ops),
// of what (cuDNN version, GPU and architecture), cuDNN's own reason and
// which filter removed which engine configuration.
#include "backend/gpu_plan_build.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>

#include "backend/attribute_util.h"
#include "backend/backend.h"
#include "backend/compiled_plan_memo.h"
#include "backend/descriptor.h"
#include "backend/device.h"
#include "backend/frontend_workspace.h"
#include "backend/gpu_plan.h"
#include "backend/kernel_cache.h"
#include "backend/known_wrong_configs.h"
#include "backend/loader.h"
#include "backend/lowering.h"
#include "backend/lowering_table.h"
#include "backend/plan_finalize.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/log.h"
#include "plan/fingerprint.h"
#include "plan/notes.h"

namespace cudnnfe::backend {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string describe_ops(const Graph &graph) {
  std::string ops;
  for (const Node &node : graph.nodes())
    ops += cat(ops.empty() ? "" : ", ", describe_node(graph, node));
  return ops;
}

[[noreturn]] void fail_not_supported(const Graph &graph, const BuildTarget &target,
                                     const std::string &why) {
  fail(CUDNNFE_STATUS_NOT_SUPPORTED, describe_graph(graph), " is not supported by cuDNN ",
       plan::cudnn_version_string(target.cudnn_version), " on ", describe_target(target), ": ",
       why);
}

// CUDNN_ATTR_OPERATIONGRAPH_IS_OVERRIDE_SHAPE_ENABLED by number, so that
// headers older than the cuDNN 9.21 ones compile.
constexpr auto kIsOverrideShapeEnabled = static_cast<cudnnBackendAttributeName_t>(805);

// Sets a boolean operation-graph attribute for `feature`: the loaded cuDNN
// either takes it or refuses it (cuDNN 9.14 and 9.19 refuse an attribute
// they do not know), and the refusal is the answer: no version table here.
void enable_graph_flag(const Graph &graph, const BuildTarget &target, Descriptor &op_graph,
                       cudnnBackendAttributeName_t attribute, const char *feature,
                       const char *attribute_name, const char *documented_since) {
  try {
    op_graph.set_bool(attribute, true);
  } catch (const Error &e) {
    fail_not_supported(graph, target,
                       cat(feature, " need a cuDNN that accepts ", attribute_name,
                           " (its header documents it since cuDNN ", documented_since,
                           "); this one refused it: ", e.message()));
  }
}

// Binds the build's kernel cache (if any) to the set; its descriptor for the
// execution plans, or null.
cudnnBackendDescriptor_t attach_kernel_cache(const Graph &graph, const BuildTarget &target,
                                             const BuildOptions &options, PlanSet &set) {
  if (!options.kernel_cache) return nullptr;
  try {
    cudnnBackendDescriptor_t cache = options.kernel_cache->attach(set.operation_graph);
    set.kernel_cache = options.kernel_cache;
    return cache;
  } catch (const Error &e) {
    fail_not_supported(graph, target, e.message());
  }
}

cudnnBackendHeurMode_t to_cudnn_heur(cudnnfe_heur_mode_t mode) {
  switch (mode) {
    case CUDNNFE_HEUR_MODE_B: return CUDNN_HEUR_MODE_B;
    case CUDNNFE_HEUR_MODE_FALLBACK: return CUDNN_HEUR_MODE_FALLBACK;
    default: return CUDNN_HEUR_MODE_A;
  }
}

// A PlanSet with the graph lowered and its operation graph finalized.
std::shared_ptr<PlanSet> lower_graph(const Graph &graph, const BuildTarget &target,
                                     BuildRecord &record) {
  const Clock::time_point start = Clock::now();
  auto set = std::make_shared<PlanSet>();
  Lowering lowering(graph, static_cast<size_t>(target.cudnn_version));
  // PlanSet binds the frontend's workspace tensors (backend/frontend_workspace.h).
  lowering.allow_workspace_tensors();
  // And uploads its constant tensors (backend/device_constants.h).
  lowering.allow_constant_tensors();
  for (const Node &node : graph.nodes()) {
    try {
      lower_node(lowering, node);
    } catch (const Error &e) {
      if (e.status() == CUDNNFE_STATUS_NOT_SUPPORTED)
        fail_not_supported(graph, target, cat(Graph::label(node), ": ", e.message()));
      throw Error(e.status(),
                  cat("graph \"", graph.name, "\": ", Graph::label(node), ": ", e.message()));
    }
  }
  Descriptor operation_graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  operation_graph.set_descriptors(CUDNN_ATTR_OPERATIONGRAPH_OPS, lowering.operations().data(),
                                  static_cast<int64_t>(lowering.operations().size()));
  // A build from device properties has no handle: cuDNN 9.8 and later
  // finalize an operation graph without one, and the heuristics and engines
  // take the properties instead.
  if (target.handle) operation_graph.set_handle(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, target.handle);
  if (graph.override_shape_enabled)
    enable_graph_flag(graph, target, operation_graph, kIsOverrideShapeEnabled,
                      "execute-time shapes (override_shape_enabled)",
                      "CUDNN_ATTR_OPERATIONGRAPH_IS_OVERRIDE_SHAPE_ENABLED", "9.21.0");
  if (graph.dynamic_shape_enabled)
    enable_graph_flag(graph, target, operation_graph,
                      CUDNN_ATTR_OPERATIONGRAPH_IS_DYNAMIC_SHAPE_ENABLED,
                      "dynamic shapes (dynamic_shape_enabled or a kernel cache)",
                      "CUDNN_ATTR_OPERATIONGRAPH_IS_DYNAMIC_SHAPE_ENABLED", "9.4.0");
  cudnnStatus_t status = operation_graph.try_finalize();
  if (status != CUDNN_STATUS_SUCCESS) {
    std::string reason = last_error();
    fail_not_supported(graph, target,
                       cat("cuDNN refused the operation graph: ", status_text(status),
                           reason.empty() ? "" : cat(": ", reason)));
  }
  set->descriptors = lowering.take_descriptors();
  set->operation_graph = std::move(operation_graph);
  // The variant pack holds the graph's bound tensors that some backend
  // tensor describes (a graph input read only through views is absent: some
  // engines refuse extra UIDs), then the frontend's workspace tensors, the
  // views and the constant tensors (PlanSet::bind makes the table these
  // slots index).
  const std::vector<int64_t> &bound = graph.bound_uids();
  set->graph_bound = bound.size();
  for (size_t i = 0; i < bound.size(); ++i) {
    if (!lowering.describes(bound[i])) continue;
    set->uids.push_back(bound[i]);
    set->slots.push_back(i);
  }
  size_t slot = bound.size();
  for (const WorkspaceTensor &t : lowering.workspace_tensors()) {
    set->uids.push_back(t.uid);
    set->slots.push_back(slot++);
  }
  for (const ViewTensor &v : lowering.view_tensors()) {
    const int parent = graph.bound_index(v.root_uid);
    if (parent < 0) fail(CUDNNFE_STATUS_INTERNAL, "view ", v.uid, " has no bound root tensor");
    set->uids.push_back(v.uid);
    set->slots.push_back(slot++);
    set->views.push_back({static_cast<size_t>(parent), v.byte_offset});
  }
  set->frontend = FrontendWorkspace::of(lowering);
  if (!lowering.constant_tensors().empty()) {
    for (const ConstantTensor &c : lowering.constant_tensors()) {
      set->uids.push_back(c.uid);
      set->slots.push_back(slot++);
    }
    // Uploaded to the GPU that runs the set; a set built without a GPU never
    // runs (GpuPlan refuses it) and loading its plan blob lowers again.
    if (!target.properties)
      set->constants =
          std::make_shared<DeviceConstants>(lowering.constant_tensors(), target.device);
  }
  set->scalars = lowering.scalars();
  for (int64_t uid : bound)
    if (graph.tensor(uid).pass_by_value) set->has_by_value_inputs = true;
  set->capture_known_wrong = known_wrong_under_capture(graph);
  set->device = target.device;
  set->sm = target.sm;
  set->device_name = target.device_name;
  set->cudnn_version = target.cudnn_version;
  set->properties = target.properties;
  set->seal();
  record.lower_ms += ms_since(start);
  log_info("build \"", graph.name, "\": lowered ", graph.nodes().size(), " node(s) in ",
           ms_since(start), " ms");
  return set;
}

// Reads an attribute without throwing; returns the element count or -1.
int64_t try_get(cudnnBackendDescriptor_t desc, cudnnBackendAttributeName_t name,
                cudnnBackendAttributeType_t type, int64_t capacity, void *out) {
  int64_t count = 0;
  if (cudnn().BackendGetAttribute(desc, name, type, capacity, &count, out) != CUDNN_STATUS_SUCCESS)
    return -1;
  return count;
}

uint32_t numerical_bit(cudnnBackendNumericalNote_t note) {
  // By value, like behavior_bit (cudnn_graph.h's cudnnBackendNumericalNote_t).
  switch (static_cast<int>(note)) {
    case 0: return CUDNNFE_NUMERICAL_NOTE_TENSOR_CORE;
    case 1: return CUDNNFE_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
    case 2: return CUDNNFE_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION;
    case 3: return CUDNNFE_NUMERICAL_NOTE_FFT;
    case 4: return CUDNNFE_NUMERICAL_NOTE_NONDETERMINISTIC;
    case 5:                                          // WINOGRAD
    case 6:                                          // WINOGRAD_TILE_4x4
    case 7:                                          // WINOGRAD_TILE_6x6
    case 8: return CUDNNFE_NUMERICAL_NOTE_WINOGRAD;  // WINOGRAD_TILE_13x13
    case 9: return CUDNNFE_NUMERICAL_NOTE_STRICT_NAN_PROP;
    default: return 0;
  }
}

uint32_t behavior_bit(cudnnBackendBehaviorNote_t note) {
  // By value: older cuDNN headers lack the later names (CUBLASLT_DEPENDENCY
  // is 4 from cuDNN 9.15 on), and the loaded library may be newer.
  switch (static_cast<int>(note)) {
    case 0: return CUDNNFE_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
    case 1: return CUDNNFE_BEHAVIOR_NOTE_REQUIRES_FILTER_INT8X32_REORDER;
    case 2: return CUDNNFE_BEHAVIOR_NOTE_REQUIRES_BIAS_INT8X32_REORDER;
    case 3: return CUDNNFE_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API;
    case 4: return CUDNNFE_BEHAVIOR_NOTE_CUBLASLT_DEPENDENCY;
    default: return 0;
  }
}

// The notes of a finalized engine descriptor, as our bits.
void read_notes(cudnnBackendDescriptor_t engine, uint32_t *numerical, uint32_t *behavior) {
  cudnnBackendNumericalNote_t notes[32];
  int64_t n =
      try_get(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE, 32, notes);
  *numerical = 0;
  for (int64_t i = 0; i < std::min<int64_t>(n, 32); ++i) *numerical |= numerical_bit(notes[i]);
  cudnnBackendBehaviorNote_t behaviors[32];
  n = try_get(engine, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE, 32, behaviors);
  *behavior = 0;
  for (int64_t i = 0; i < std::min<int64_t>(n, 32); ++i) *behavior |= behavior_bit(behaviors[i]);
}

// The knob choices of an engine configuration. cuDNN fills only descriptors
// made beforehand and answers a count query with 0, so room for more knob
// types than these headers know is made first (cudnn-frontend does the same).
std::vector<plan::KnobChoice> read_knobs(const Descriptor &config) {
  // cuDNN has 30-odd knob types; room for twice that.
  constexpr int64_t kRoom = 64;
  std::vector<Descriptor> knobs;
  std::vector<cudnnBackendDescriptor_t> raw_knobs;
  for (int64_t i = 0; i < kRoom; ++i) {
    knobs.emplace_back(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
    raw_knobs.push_back(knobs.back().get());
  }
  const int64_t count = try_get(config.get(), CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                CUDNN_TYPE_BACKEND_DESCRIPTOR, kRoom, raw_knobs.data());
  std::vector<plan::KnobChoice> out;
  for (int64_t i = 0; i < std::min(count, kRoom); ++i) {
    cudnnBackendKnobType_t type = static_cast<cudnnBackendKnobType_t>(-1);  // if unread
    int64_t value = 0;
    knobs[i].get(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &type);
    knobs[i].get(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &value);
    out.push_back({static_cast<int64_t>(type), value});
  }
  return out;
}

// An engine configuration from the heuristics: engine, knobs and notes.
struct Offered {
  plan::EngineConfig config;
  std::string name;
  uint32_t numerical_notes = 0;
  uint32_t behavior_notes = 0;
  int64_t workspace_size = -1;  // -1: unknown until the plan is built
};

Offered read_config(const Descriptor &config, const FrontendWorkspace &frontend) {
  Offered o;
  Descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t raw_engine = engine.get();
  config.get_descriptors(CUDNN_ATTR_ENGINECFG_ENGINE, &raw_engine, 1);
  o.config.engine_id = engine.get_int64(CUDNN_ATTR_ENGINE_GLOBAL_INDEX);
  read_notes(engine.get(), &o.numerical_notes, &o.behavior_notes);
  o.config.knobs = read_knobs(config);
  o.name = plan::engine_config_name(o.config);
  int64_t workspace = 0;
  if (try_get(config.get(), CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &workspace) ==
      1)
    o.workspace_size = frontend.total(workspace);
  return o;
}

// What the filters removed: filter description -> plan names (bounded).
class FilterLog {
 public:
  void add(const std::string &filter, const std::string &what) {
    Entry &e = entries_[filter];
    if (e.items.size() < kListed) e.items.push_back(what);
    ++e.count;
  }
  bool empty() const { return entries_.empty(); }
  std::string text() const {
    std::string out;
    for (const auto &entry : entries_) {
      std::string items;
      for (const std::string &i : entry.second.items) items += cat(items.empty() ? "" : ", ", i);
      if (entry.second.count > entry.second.items.size())
        items += cat(" and ", entry.second.count - entry.second.items.size(), " more");
      out += cat(out.empty() ? "" : "; ", entry.first, " removed ", items);
    }
    return out;
  }

 private:
  static constexpr size_t kListed = 8;
  struct Entry {
    std::vector<std::string> items;
    size_t count = 0;
  };
  std::map<std::string, Entry> entries_;
};

// Why the filters reject `o` ("" if they keep it); workspace is checked
// here only when known.
std::string filter_reason(const Offered &o, const BuildOptions &options, FilterLog &log) {
  if (std::find(options.exclude_engines.begin(), options.exclude_engines.end(),
                o.config.engine_id) != options.exclude_engines.end()) {
    log.add("exclude_engines", o.name);
    return "excluded";
  }
  if (uint32_t hit = o.numerical_notes & options.exclude_numerical_notes) {
    log.add("exclude_numerical_notes",
            cat(o.name, " (", plan::notes_string(plan::NoteKind::kNumerical, hit), ")"));
    return "excluded";
  }
  if (uint32_t hit = o.behavior_notes & options.exclude_behavior_notes) {
    log.add("exclude_behavior_notes",
            cat(o.name, " (", plan::notes_string(plan::NoteKind::kBehavior, hit), ")"));
    return "excluded";
  }
  if (uint32_t missing = options.require_behavior_notes & ~o.behavior_notes) {
    log.add("require_behavior_notes",
            cat(o.name, " (lacks ", plan::notes_string(plan::NoteKind::kBehavior, missing), ")"));
    return "excluded";
  }
  if (options.max_workspace_size >= 0 && o.workspace_size > options.max_workspace_size) {
    log.add(cat("max_workspace_size ", options.max_workspace_size),
            cat(o.name, " (needs ", o.workspace_size, " bytes)"));
    return "excluded";
  }
  return "";
}

// False (and logged) when the configuration is one cuDNN computes this graph
// wrongly with (backend/known_wrong_configs.h). The knobs are read from the
// built plan, when there is one (`plan` not null), if the heuristics'
// configuration showed none.
bool keep_unless_known_wrong(const Graph &graph, const Descriptor *plan, Offered &offered,
                             FilterLog &log) {
  if (offered.config.knobs.empty() && plan) {
    Descriptor built(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    cudnnBackendDescriptor_t raw = built.get();
    if (try_get(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                1, &raw) == 1) {
      offered.config.knobs = read_knobs(built);
      offered.name = plan::engine_config_name(offered.config);
    }
  }
  const std::string why = known_wrong_config(graph, offered.config);
  if (why.empty()) return true;
  log.add("known wrong results (docs/refusals.md)", cat(offered.name, " (", why, ")"));
  log_debug("engine ", offered.name, ": skipped, cuDNN computes it wrongly: ", why);
  return false;
}

// Why each heuristics mode gave no configuration; modes failing alike are
// merged ("heuristics A, FALLBACK offered no engine").
class ModeFailures {
 public:
  void note(cudnnfe_heur_mode_t mode, std::string why) {
    for (auto &[modes, reason] : failures_) {
      if (reason == why) {
        modes += cat(", ", plan::heur_mode_name(mode));
        return;
      }
    }
    failures_.emplace_back(plan::heur_mode_name(mode), std::move(why));
  }
  // "heuristics A failed: ...; heuristics FALLBACK offered no engine", after `before`.
  std::string append_to(std::string before) const {
    for (const auto &[modes, reason] : failures_)
      before += cat(before.empty() ? "" : "; ", "heuristics ", modes, " ", reason);
    return before;
  }

 private:
  std::vector<std::pair<std::string, std::string>> failures_;
};

// What the filters removed, as the start of a refusal's reason ("" if nothing).
std::string filtered_reason(const FilterLog &filtered) {
  if (filtered.empty()) return "";
  return cat(
      "the filters (build options, known wrong results) removed every engine configuration "
      "they saw: ",
      filtered.text());
}

// The refusal of a build or check that ends with no configuration.
[[noreturn]] void fail_no_configuration(const Graph &graph, const BuildTarget &target,
                                        const std::string &why) {
  fail_not_supported(graph, target, why.empty() ? "no heuristics mode was given" : why);
}

}  // namespace

std::string describe_graph(const Graph &graph) {
  return cat("graph \"", graph.name, "\" [", describe_ops(graph), "]");
}

std::string describe_target(const BuildTarget &target) {
  if (!target.properties) return describe_device(target.device);
  return cat("the device properties of ",
             target.device_name.empty() ? std::string("an unnamed GPU") : target.device_name,
             target.sm ? cat(" (sm_", target.sm, ")") : std::string(), " (built without a GPU)");
}

BuildTarget build_target(std::shared_ptr<const DeviceProperties> properties) {
  BuildTarget t;
  t.cudnn_version = static_cast<int64_t>(cudnn().GetVersion());
  t.device = -1;
  t.sm = properties->sm();
  t.device_name = properties->name();
  t.properties = std::move(properties);
  return t;
}

BuildTarget build_target(Handle *handle) {
  const CudnnApi &dnn = cudnn();
  BuildTarget t;
  t.cudnn_version = static_cast<int64_t>(dnn.GetVersion());
  if (handle) {
    init_handle(*handle);
    t.device = handle->device;
    ensure_device(t.device);
    t.handle = static_cast<cudnnHandle_t>(handle->cudnn);
  } else {
    t.device = current_device();
    t.handle = shared_handle(t.device);
  }
  const DeviceInfo &info = device_info(t.device);
  t.sm = info.sm_version;
  t.device_name = info.name;
  return t;
}

namespace {

// A plan restored from cuDNN's own serialization of it: no engine search and,
// for runtime-compiled engines, no kernel compilation. Empty when cuDNN does
// not take the text back, or when the text names another engine than
// `engine_id` (a blob whose engine id was edited must not run a different
// plan than it names).
std::optional<Descriptor> restore_plan(const BuildTarget &target, int64_t engine_id,
                                       const std::string &plan_json) {
  Descriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  if (cudnn().BackendSetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE,
                                  1, &target.handle) != CUDNN_STATUS_SUCCESS)
    return std::nullopt;
  if (cudnn().BackendSetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION,
                                  CUDNN_TYPE_CHAR, static_cast<int64_t>(plan_json.size()),
                                  plan_json.data()) != CUDNN_STATUS_SUCCESS)
    return std::nullopt;
  if (plan.try_finalize() != CUDNN_STATUS_SUCCESS) return std::nullopt;
  Descriptor engine_config(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  Descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t raw_config = engine_config.get(), raw_engine = engine.get();
  int64_t restored_id = -1;
  if (try_get(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
              &raw_config) == 1 &&
      try_get(raw_config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
              &raw_engine) == 1 &&
      try_get(raw_engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &restored_id) == 1 &&
      restored_id != engine_id)
    return std::nullopt;
  int64_t workspace = 0;
  if (try_get(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
              &workspace) != 1)
    return std::nullopt;
  return plan;
}

// The engine configurations heuristics `mode` offers for `set`'s operation
// graph, in its order; none (and `why_none` says why) when it fails or
// offers nothing.
std::vector<Descriptor> heuristics_configs(const PlanSet &set, const BuildTarget &target,
                                           const BuildOptions &options, cudnnfe_heur_mode_t mode,
                                           std::string *why_none) {
  Descriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  heuristics.set_descriptor(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, set.operation_graph);
  heuristics.set_heur_mode(CUDNN_ATTR_ENGINEHEUR_MODE, to_cudnn_heur(mode));
  if (target.properties) {
    const cudnnBackendDescriptor_t properties = target.properties->descriptor();
    heuristics.set_descriptors(CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, &properties, 1);
  }
  // cudnn-frontend's sm_count: the engines are chosen for that many SMs.
  if (options.sm_count > 0)
    set_attribute(heuristics, CUDNN_ATTR_ENGINEHEUR_SM_COUNT_TARGET, CUDNN_TYPE_INT32,
                  options.sm_count, "the heuristics' SM count target (sm_count)");
  std::vector<Descriptor> configs;
  cudnnStatus_t status = heuristics.try_finalize();
  if (status != CUDNN_STATUS_SUCCESS) {
    std::string reason = last_error();
    log_debug("heuristics ", plan::heur_mode_name(mode), " failed: ", status_text(status), " ",
              reason);
    *why_none = cat("failed: ", status_text(status), reason.empty() ? "" : cat(": ", reason));
    return configs;
  }
  const int64_t available = heuristics.count_descriptors(CUDNN_ATTR_ENGINEHEUR_RESULTS);
  std::vector<cudnnBackendDescriptor_t> raw_configs;
  for (int64_t i = 0; i < available; ++i) {
    configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    raw_configs.push_back(configs.back().get());
  }
  const int64_t count = std::min<int64_t>(
      available
          ? heuristics.get_descriptors(CUDNN_ATTR_ENGINEHEUR_RESULTS, raw_configs.data(), available)
          : 0,
      available);
  configs.resize(static_cast<size_t>(std::max<int64_t>(count, 0)));
  log_debug("heuristics ", plan::heur_mode_name(mode), " offered ", count,
            " engine configuration(s)");
  if (configs.empty()) {
    std::string reason = last_error();
    *why_none = cat("offered no engine", reason.empty() ? "" : cat(" (", reason, ")"));
  }
  return configs;
}

}  // namespace

std::shared_ptr<PlanSet> build_plan_set(const Graph &graph, const BuildTarget &target,
                                        const BuildOptions &options, BuildRecord &record) {
  std::shared_ptr<PlanSet> set = lower_graph(graph, target, record);
  const cudnnBackendDescriptor_t kernel_cache = attach_kernel_cache(graph, target, options, *set);

  ModeFailures mode_failures;
  // Runtime-compiled plans of this graph built earlier in the process are
  // restored, not compiled again (backend/compiled_plan_memo.h).
  const bool use_memo = options.use_plan_cache && !kernel_cache && !target.properties;
  std::string memo_prefix;  // the graph, GPU and cuDNN part of the key, made on first use
  auto memo_key = [&](const Offered &o) {
    if (memo_prefix.empty())
      memo_prefix = cat(plan::graph_fingerprint(graph), "|", target.sm, "|", target.device_name,
                        "|", target.cudnn_version, "|");
    return memo_prefix + o.name;
  };
  auto compiles = [&](const Offered &o) {
    return use_memo && (o.behavior_notes & CUDNNFE_BEHAVIOR_NOTE_RUNTIME_COMPILATION) != 0;
  };
  // `built` restored from the memo; false when it has no plan for `o`.
  auto restore_remembered = [&](const Offered &o, PlanToFinalize &built) {
    if (!compiles(o)) return false;
    std::optional<std::string> json = remembered_compiled_plan(memo_key(o));
    if (!json) return false;
    const Clock::time_point restore_start = Clock::now();
    std::optional<Descriptor> plan = restore_plan(target, o.config.engine_id, *json);
    if (!plan) return false;
    built.plan = std::move(*plan);
    built.status = CUDNN_STATUS_SUCCESS;
    built.ms = ms_since(restore_start);
    log_debug("engine ", o.name, ": restored in ", built.ms,
              " ms from the plan compiled for this graph earlier in the process");
    return true;
  };
  FilterLog filtered;
  std::set<std::string> seen;
  size_t failed_builds = 0;
  std::string first_failure;
  const bool all = options.policy == CUDNNFE_BUILD_POLICY_ALL;
  const size_t limit =
      all && options.max_plans > 0 ? static_cast<size_t>(options.max_plans) : (all ? SIZE_MAX : 1);
  for (cudnnfe_heur_mode_t mode : options.heur_modes) {
    if (set->candidates.size() >= limit) break;
    Clock::time_point start = Clock::now();
    std::string why_none;
    std::vector<Descriptor> configs = heuristics_configs(*set, target, options, mode, &why_none);
    record.heuristics_ms += ms_since(start);
    if (configs.empty()) {
      mode_failures.note(mode, why_none);
      continue;
    }
    const int64_t count = static_cast<int64_t>(configs.size());
    // Configuration i read and passed through the filters: the one to build, or none.
    auto wanted = [&](int64_t i) -> std::optional<Offered> {
      const Clock::time_point read_start = Clock::now();
      Offered offered = read_config(configs[i], set->frontend);
      const bool fresh = seen.insert(offered.name).second;
      const bool keep = fresh && filter_reason(offered, options, filtered).empty();
      record.heuristics_ms += ms_since(read_start);
      log_debug("engine ", offered.name,
                keep    ? ": to build"
                : fresh ? ": removed by the build options' filters"
                        : ": offered again, skipped");
      if (!keep) return std::nullopt;
      return offered;
    };
    // A finalized plan becomes a candidate unless it failed, is known to
    // compute the graph wrongly, or needs more workspace than allowed.
    auto take = [&](Offered &offered, PlanToFinalize &built, bool restored) {
      if (built.status != CUDNN_STATUS_SUCCESS) {
        log_debug("engine ", offered.name, ": refused: ", status_text(built.status));
        ++failed_builds;
        if (first_failure.empty())
          first_failure = cat(offered.name, ": ", status_text(built.status),
                              built.error.empty() ? "" : cat(": ", built.error));
        return;
      }
      log_debug("engine ", offered.name, ": built in ", built.ms, " ms");
      const int64_t workspace =
          set->frontend.total(built.plan.get_int64(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE));
      if (!keep_unless_known_wrong(graph, &built.plan, offered, filtered)) return;
      if (options.max_workspace_size >= 0 && workspace > options.max_workspace_size) {
        offered.workspace_size = workspace;
        filter_reason(offered, options, filtered);
        return;
      }
      const bool remember = !restored && compiles(offered);
      const std::string key = remember ? memo_key(offered) : "";
      Candidate c;
      c.config = std::move(offered.config);
      c.name = std::move(offered.name);
      c.plan = std::move(built.plan);
      c.workspace_size = workspace;
      c.numerical_notes = offered.numerical_notes;
      c.behavior_notes = offered.behavior_notes;
      set->candidates.push_back(std::move(c));
      if (remember) remember_compiled_plan(key, execution_plan_json(set->candidates.back()));
    };
    if (limit == SIZE_MAX) {
      // ALL without a plan limit: every configuration finalized at once, on
      // threads (backend/plan_finalize.h), then taken in heuristics order.
      std::vector<Offered> offered;
      std::vector<PlanToFinalize> restored, to_finalize;
      std::vector<bool> was_restored;
      for (int64_t i = 0; i < count; ++i) {
        std::optional<Offered> o = wanted(i);
        if (!o) continue;
        PlanToFinalize p;
        p.config = configs[i].get();
        was_restored.push_back(restore_remembered(*o, p));
        (was_restored.back() ? restored : to_finalize).push_back(std::move(p));
        offered.push_back(std::move(*o));
      }
      start = Clock::now();
      finalize_plans(to_finalize, kernel_cache);
      record.plan_build_ms += ms_since(start);
      log_info("build \"", graph.name, "\": finalized ", to_finalize.size(), " plan(s) on ",
               std::min(to_finalize.size(), plan_finalize_threads()), " thread(s) in ",
               ms_since(start), " ms", restored.empty() ? "" : cat(", restored ", restored.size()));
      for (size_t j = 0, r = 0, f = 0; j < offered.size(); ++j)
        take(offered[j], was_restored[j] ? restored[r++] : to_finalize[f++], was_restored[j]);
    } else {
      // One at a time, reading no further configuration once the limit is met.
      for (int64_t i = 0; i < count && set->candidates.size() < limit; ++i) {
        std::optional<Offered> o = wanted(i);
        if (!o) continue;
        PlanToFinalize built;
        built.config = configs[i].get();
        const bool restored = restore_remembered(*o, built);
        if (!restored) finalize_plan(built, kernel_cache);
        record.plan_build_ms += built.ms;
        take(*o, built, restored);
      }
    }
  }
  log_info("build \"", graph.name, "\": ", set->candidates.size(), " plan(s); heuristics ",
           record.heuristics_ms, " ms, plan build ", record.plan_build_ms, " ms");
  if (!set->candidates.empty()) return set;

  std::string why = filtered_reason(filtered);
  if (failed_builds)
    why += cat(why.empty() ? "" : "; ", failed_builds,
               " engine configuration(s) failed to build (first: ", first_failure, ")");
  fail_no_configuration(graph, target, mode_failures.append_to(why));
}

std::vector<OfferedConfig> supported_configurations(const Graph &graph, const BuildTarget &target,
                                                    const BuildOptions &options) {
  BuildRecord record;
  std::shared_ptr<PlanSet> set = lower_graph(graph, target, record);
  std::vector<OfferedConfig> out;
  std::set<std::string> seen;
  FilterLog filtered;
  ModeFailures mode_failures;
  for (cudnnfe_heur_mode_t mode : options.heur_modes) {
    std::string why;
    std::vector<Descriptor> configs = heuristics_configs(*set, target, options, mode, &why);
    if (configs.empty()) mode_failures.note(mode, why);
    for (const Descriptor &config : configs) {
      Offered o = read_config(config, set->frontend);
      // Known-wrong configurations are those whose knobs the heuristics
      // showed; the others are checked when their plan is built.
      if (!seen.insert(o.name).second || !filter_reason(o, options, filtered).empty() ||
          !keep_unless_known_wrong(graph, nullptr, o, filtered))
        continue;
      out.push_back({o.name, o.config.engine_id, o.numerical_notes, o.behavior_notes});
    }
  }
  log_info("check support \"", graph.name, "\": ", out.size(),
           " engine configuration(s) pass the filters; no plan built");
  if (!out.empty()) return out;
  fail_no_configuration(graph, target, mode_failures.append_to(filtered_reason(filtered)));
}

std::string execution_plan_json(const Candidate &candidate) {
  int64_t size = 0;
  if (cudnn().BackendGetAttribute(candidate.plan.get(),
                                  CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, 0,
                                  &size, nullptr) != CUDNN_STATUS_SUCCESS ||
      size <= 0 || static_cast<uint64_t>(size) > kMaxExecutionPlanJson)
    return "";
  std::string json(static_cast<size_t>(size), '\0');
  int64_t written = 0;
  if (cudnn().BackendGetAttribute(candidate.plan.get(),
                                  CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR,
                                  size, &written, json.data()) != CUDNN_STATUS_SUCCESS ||
      written <= 0 || written > size)
    return "";
  json.resize(static_cast<size_t>(written));
  while (!json.empty() && json.back() == '\0') json.pop_back();
  return json;
}

namespace {

// restore_plan's plan as `set`'s one candidate. Returns false (and leaves
// `set` alone) when cuDNN does not take the text back, so that the caller
// builds from the engine configuration instead.
bool restore_from_execution_plan_json(PlanSet &set, const BuildTarget &target,
                                      const plan::EngineConfig &config,
                                      const std::string &plan_json, uint32_t numerical_notes,
                                      uint32_t behavior_notes) {
  std::optional<Descriptor> plan = restore_plan(target, config.engine_id, plan_json);
  if (!plan) return false;
  Candidate c;
  c.config = config;
  c.name = plan::engine_config_name(config);
  c.workspace_size = set.frontend.total(plan->get_int64(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE));
  c.numerical_notes = numerical_notes;
  c.behavior_notes = behavior_notes;
  c.plan = std::move(*plan);
  set.candidates.push_back(std::move(c));
  return true;
}

}  // namespace

std::shared_ptr<PlanSet> build_plan_set_from_config(const Graph &graph, const BuildTarget &target,
                                                    const plan::PlanRecord &stored,
                                                    BuildRecord &record) {
  std::shared_ptr<PlanSet> set = lower_graph(graph, target, record);
  const Clock::time_point start = Clock::now();
  const plan::EngineConfig &config = stored.config;
  if (!stored.execution_plan_json.empty() &&
      restore_from_execution_plan_json(*set, target, config, stored.execution_plan_json,
                                       stored.numerical_notes, stored.behavior_notes)) {
    record.plan_build_ms += ms_since(start);
    return set;
  }
  const std::string name = plan::engine_config_name(config);
  auto refuse = [&](const char *step, cudnnStatus_t status) {
    std::string reason = last_error();
    fail_not_supported(graph, target,
                       cat("the stored engine configuration ", name, " does not build (", step,
                           "): ", status_text(status), reason.empty() ? "" : cat(": ", reason)));
  };
  // Values from a blob are set without the throwing setters: cuDNN
  // refusing one means this configuration does not build here.
  auto set_raw = [&](Descriptor &d, cudnnBackendAttributeName_t name,
                     cudnnBackendAttributeType_t type, const void *value, const char *step) {
    const cudnnStatus_t s = cudnn().BackendSetAttribute(d.get(), name, type, 1, value);
    if (s != CUDNN_STATUS_SUCCESS) refuse(step, s);
  };
  Descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  engine.set_descriptor(CUDNN_ATTR_ENGINE_OPERATION_GRAPH, set->operation_graph);
  set_raw(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, &config.engine_id, "engine");
  cudnnStatus_t status = engine.try_finalize();
  if (status != CUDNN_STATUS_SUCCESS) refuse("engine", status);
  std::vector<Descriptor> knobs;
  std::vector<cudnnBackendDescriptor_t> raw_knobs;
  for (const plan::KnobChoice &k : config.knobs) {
    knobs.emplace_back(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
    Descriptor &choice = knobs.back();
    const cudnnBackendKnobType_t type = static_cast<cudnnBackendKnobType_t>(k.type);
    set_raw(choice, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, &type, "knob type");
    set_raw(choice, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, &k.value, "knob value");
    status = choice.try_finalize();
    if (status != CUDNN_STATUS_SUCCESS) refuse("knob choice", status);
    raw_knobs.push_back(choice.get());
  }
  Descriptor engine_config(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  engine_config.set_descriptor(CUDNN_ATTR_ENGINECFG_ENGINE, engine);
  if (!raw_knobs.empty())
    engine_config.set_descriptors(CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, raw_knobs.data(),
                                  static_cast<int64_t>(raw_knobs.size()));
  status = engine_config.try_finalize();
  if (status != CUDNN_STATUS_SUCCESS) refuse("engine configuration", status);
  Descriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  plan.set_descriptor(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, engine_config);
  status = plan.try_finalize();
  if (status != CUDNN_STATUS_SUCCESS) refuse("execution plan", status);
  Candidate c;
  c.config = config;
  c.name = name;
  c.workspace_size = set->frontend.total(plan.get_int64(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE));
  read_notes(engine.get(), &c.numerical_notes, &c.behavior_notes);
  c.plan = std::move(plan);
  set->candidates.push_back(std::move(c));
  record.plan_build_ms += ms_since(start);
  return set;
}

// The build without caches (kept for callers of backend.h).
std::unique_ptr<Plan> build_gpu_plan(const Graph &graph, Handle *handle,
                                     const BuildOptions &options) {
  BuildRecord record;
  const BuildTarget target = build_target(handle);
  auto plan = std::make_unique<GpuPlan>(build_plan_set(graph, target, options, record), 0);
  plan->record = record;
  plan->options = options;
  return plan;
}

}  // namespace cudnnfe::backend
