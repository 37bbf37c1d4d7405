// Building a graph for its target and plan blobs (exec/build_graph.h).
#include "exec/build_graph.h"

#include <chrono>
#include <utility>

#include "backend/backend.h"
#include "backend/device.h"
#include "backend/device_properties.h"
#include "backend/gpu_plan.h"
#include "backend/gpu_plan_build.h"
#include "backend/gpu_plan_cache.h"
#include "backend/loader.h"
#include "core/error.h"
#include "core/log.h"
#include "exec/verify.h"
#include "plan/fingerprint.h"
#include "plan/plan_blob.h"
#include "serialize/graph_json.h"

namespace cudnnfe {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The graph a blob describes, validated and matching its fingerprint.
void load_blob_graph(const plan::PlanRecord &r, Graph &graph) {
  try {
    deserialize_graph(r.graph_json.data(), r.graph_json.size(), graph);
  } catch (const Error &e) {
    if (e.status() != CUDNNFE_STATUS_BAD_SERIALIZED_DATA) throw;
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "plan blob: payload.graph: ", e.message());
  }
}

void check_blob_graph(const plan::PlanRecord &r, Graph &graph) {
  try {
    graph.validate();
  } catch (const Error &e) {
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA,
         "plan blob: its graph does not validate: ", e.message());
  }
  if (plan::graph_fingerprint(graph) != r.fingerprint)
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA,
         "plan blob: the graph does not match the recorded fingerprint ", r.fingerprint);
}

}  // namespace

SupportTarget support_target(Handle *handle, const BuildOptions &options) {
  cudnnfe_target_t target = options.target;
  if (target == CUDNNFE_TARGET_AUTO)
    target = backend::gpu_available() ? CUDNNFE_TARGET_GPU : CUDNNFE_TARGET_CPU_REFERENCE;
  if (target != CUDNNFE_TARGET_GPU) return {};
  SupportTarget t;
  t.gpu = true;
  if (options.device_properties) {
    t.sm = options.device_properties->sm();
  } else if (backend::gpu_available()) {
    // A handle's device is fixed at its first GPU use (-1 until then: the current one).
    const int device = handle && handle->device >= 0 ? handle->device : backend::current_device();
    t.sm = backend::device_info(device).sm_version;
  }
  if (backend::gpu_available() || options.device_properties)
    t.cudnn_version = static_cast<size_t>(backend::cudnn().GetVersion());
  if (options.sm_version > 0) t.sm = options.sm_version;
  return t;
}

namespace {

// What build and check_support do first: the graph's shape flags from the
// options, validation for the target, and the target resolved from AUTO.
void validate_for_target(Graph &graph, Handle *handle, BuildOptions &options) {
  // A graph loaded from JSON may carry the flag already (as cudnn-frontend's
  // serialized context does); the build option only turns it on.
  if (options.override_shape_enabled) graph.override_shape_enabled = true;
  options.override_shape_enabled = graph.override_shape_enabled;
  if (options.dynamic_shape_enabled || options.kernel_cache) graph.dynamic_shape_enabled = true;
  options.dynamic_shape_enabled = graph.dynamic_shape_enabled;
  graph.validate(support_target(handle, options));
  if (options.target == CUDNNFE_TARGET_AUTO)
    options.target = backend::gpu_available() ? CUDNNFE_TARGET_GPU : CUDNNFE_TARGET_CPU_REFERENCE;
}

}  // namespace

std::vector<OfferedConfig> check_graph_support(Graph &graph, Handle *handle, BuildOptions options) {
  validate_for_target(graph, handle, options);
  if (options.target != CUDNNFE_TARGET_GPU) return {{"cpu_reference", -1, 0, 0}};
  return backend::check_gpu_support(graph, handle, options);
}

void build_graph(Graph &graph, Handle *handle, BuildOptions options) {
  const Clock::time_point start = Clock::now();
  BuildRecord record;
  validate_for_target(graph, handle, options);
  record.validate_ms = ms_since(start);
  std::unique_ptr<RecordedPlan> plan;
  if (options.target == CUDNNFE_TARGET_GPU)
    plan = backend::build_gpu_graph_plan(graph, handle, options, record);
  else
    plan = make_cpu_reference_plan(graph);
  record.total_ms = ms_since(start);
  log_info("build \"", graph.name,
           "\": ", options.target == CUDNNFE_TARGET_GPU ? "GPU" : "CPU reference",
           " plan; validate ", record.validate_ms, " ms, total ", record.total_ms, " ms");
  plan->record = record;
  const VerifySettings verify = options.verify;
  plan->options = std::move(options);
  graph.set_plan(std::move(plan));
  attach_verifier(graph, verify);
}

std::string serialize_plan(const Graph &graph) {
  return plan::encode_plan_blob(backend::plan_record(graph, recorded_plan(graph)));
}

void load_plan(Graph &graph, Handle *handle, const char *data, size_t size,
               bool rebuild_on_mismatch) {
  const Clock::time_point start = Clock::now();
  const plan::PlanRecord r = plan::decode_plan_blob(data, size);
  Graph loaded;
  load_blob_graph(r, loaded);
  const std::string old_name = graph.name;
  graph = std::move(loaded);
  try {
    BuildRecord record;
    check_blob_graph(r, graph);
    record.validate_ms = ms_since(start);
    BuildOptions options = r.options;
    // Plan blobs do not carry verify mode: the environment decides.
    options.verify = resolve_verify_settings(CUDNNFE_VERIFY_FROM_ENV, 0, 0.0);
    std::unique_ptr<RecordedPlan> plan;
    if (r.target == CUDNNFE_TARGET_CPU_REFERENCE) {
      options.target = CUDNNFE_TARGET_CPU_REFERENCE;
      plan = make_cpu_reference_plan(graph);
    } else {
      options.target = CUDNNFE_TARGET_GPU;
      plan = backend::load_gpu_plan(graph, handle, r, rebuild_on_mismatch, record);
    }
    if (!plan) {  // made for another GPU or cuDNN: build the description again
      BuildOptions again = r.options;
      again.verify = options.verify;
      build_graph(graph, handle, std::move(again));
      RecordedPlan &rebuilt = recorded_plan(graph);
      rebuilt.record.source = CUDNNFE_PLAN_SOURCE_REBUILT;
      rebuilt.record.total_ms = ms_since(start);
      return;
    }
    record.source = CUDNNFE_PLAN_SOURCE_SERIALIZED;
    record.total_ms = ms_since(start);
    plan->record = record;
    const VerifySettings verify = options.verify;
    plan->options = std::move(options);
    graph.set_plan(std::move(plan));
    attach_verifier(graph, verify);
  } catch (...) {
    Graph empty;
    empty.name = old_name;
    graph = std::move(empty);
    throw;
  }
}

bool load_plan_into_cache(Graph &graph, Handle *handle, const char *data, size_t size,
                          const std::string &cache_dir) {
  const plan::PlanRecord r = plan::decode_plan_blob(data, size);
  if (r.target != CUDNNFE_TARGET_GPU) return false;
  const backend::BuildTarget target = backend::build_target(handle);
  // A plan for another GPU or cuDNN would make the build below a cold one.
  if (r.cudnn_version != target.cudnn_version || r.sm != target.sm) return false;
  load_blob_graph(r, graph);
  check_blob_graph(r, graph);
  BuildOptions options = r.options;
  options.target = CUDNNFE_TARGET_GPU;
  options.use_plan_cache = true;
  options.plan_cache_dir = cache_dir;
  build_graph(graph, handle, options);
  return recorded_plan(graph).record.source == CUDNNFE_PLAN_SOURCE_DISK_CACHE;
}

}  // namespace cudnnfe
