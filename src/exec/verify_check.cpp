// One check of verify mode (exec/verify_check.h).
#include "exec/verify_check.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "backend/device_copy.h"
#include "backend/gpu_plan.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/log.h"
#include "cpu/dtype_convert.h"
#include "exec/verify_attention.h"
#include "exec/verify_copy.h"
#include "exec/verify_sample.h"
#include "ops/attention.h"
#include "plan/notes.h"
#include "plan/recorded_plan.h"

namespace cudnnfe::verify {
namespace {

using Clock = std::chrono::steady_clock;

// A node without a sampled form runs in full on the CPU; past this many
// multiply-adds (seconds of CPU time) the check gives up on the graph.
constexpr double kMaxFullNodeWork = 4e9;
// Host memory for the copies of the tensors a check touches.
constexpr size_t kMaxHostBytes = size_t{8} << 30;

// ---------------------------------------------------------------------------
// The plan a check is about, for messages, and where its buffers live.

struct PlanLabel {
  std::string name;         // "eng9_k2=3" or "cpu_reference"
  std::string description;  // engine, cuDNN version and GPU, or the CPU
  verify::Source source;
};

PlanLabel plan_label(const Graph &graph, size_t candidate) {
  const RecordedPlan &plan = recorded_plan(graph);
  const PlanEntry entry = plan.entry(candidate);
  PlanLabel label;
  label.name = *entry.name;
  if (const auto *gpu = dynamic_cast<const backend::GpuPlan *>(&plan)) {
    const backend::PlanSet &set = gpu->set();
    label.description =
        cat("engine ", entry.engine_id, ", cuDNN ", plan::cudnn_version_string(set.cudnn_version),
            ", GPU ", set.device_name.empty() ? std::string("(unnamed)") : set.device_name,
            " (device ", set.device, ")");
    label.source = {true, set.device};
  } else {
    label.description = "the CPU reference executor";
  }
  return label;
}

// ---------------------------------------------------------------------------
// What a check can look at

struct CheckedOutput {
  size_t bound = 0;  // index in graph.bound_uids()
  const Tensor *tensor = nullptr;
  verify::Tolerance tolerance;
};

struct Scope {
  std::vector<CheckedOutput> outputs;
  std::vector<std::string> skipped;  // "output \"y\": <why>"
};

bool overlaps(const void *a, size_t a_bytes, const void *b, size_t b_bytes) {
  const auto *pa = static_cast<const unsigned char *>(a),
             *pb = static_cast<const unsigned char *>(b);
  return pa < pb + b_bytes && pb < pa + a_bytes;
}

// The input that `output`'s buffer overlaps (an in-place op: the input's
// values before the run are gone), or nullptr.
const Tensor *overwritten_input(const Graph &graph, const Tensor &output, void *const *data) {
  const auto &uids = graph.bound_uids();
  const void *out = data[graph.bound_index(output.uid)];
  const size_t out_bytes = verify::span_bytes(output);
  for (size_t i = 0; i < uids.size(); ++i) {
    const Tensor &t = graph.tensor(uids[i]);
    if (t.producer >= 0 || t.pass_by_value) continue;
    if (overlaps(out, out_bytes, data[i], verify::span_bytes(t))) return &t;
  }
  return nullptr;
}

Scope check_scope(const Graph &graph, void *const *data, double rtol) {
  Scope scope;
  const auto &uids = graph.bound_uids();
  for (size_t i = 0; i < uids.size(); ++i) {
    const Tensor &t = graph.tensor(uids[i]);
    if (t.producer < 0) continue;
    const std::string what = cat("output \"", t.name, "\"");
    const verify::Cone cone = verify::output_cone(graph, t.uid);
    if (!cone.random.empty()) {
      scope.skipped.push_back(cat(what, ": it depends on random numbers of ", cone.random,
                                  ", which the CPU reference draws differently"));
      continue;
    }
    if (const Tensor *input = overwritten_input(graph, t, data)) {
      scope.skipped.push_back(cat(what, ": its buffer overlaps input \"", input->name,
                                  "\"'s, whose values before the run are gone"));
      continue;
    }
    scope.outputs.push_back({i, &t, verify::output_tolerance(t, cone, rtol)});
  }
  return scope;
}

int64_t elements(const Graph &graph, int64_t uid) {
  return uid == 0 ? 0 : graph.tensor(uid).element_count();
}

// Rough multiply-adds of running `node` in full on the CPU reference.
double full_work(const Graph &graph, const Node &node) {
  if (verify::attention_kind(node.kind)) {
    const Tensor &q = graph.tensor(node.inputs[Sdpa::kQ]), &k = graph.tensor(node.inputs[Sdpa::kK]);
    const bool backward =
        node.kind == OpKind::kSdpaBackward || node.kind == OpKind::kSdpaFp8Backward;
    return 2.0 * (backward ? 3.0 : 1.0) * static_cast<double>(q.element_count()) *
           static_cast<double>(k.dims.size() == 4 ? k.dims[2] : 1);
  }
  double work = 0.0;
  for (int64_t uid : node.inputs) work += static_cast<double>(elements(graph, uid));
  for (int64_t uid : node.outputs) work += static_cast<double>(elements(graph, uid));
  // Times the row length of the first input: token, or the backward's doutput.
  static_assert(same_port(MoeGroupedMatmul::kToken, MoeGroupedMatmulBackward::kDoutput));
  if (node.kind == OpKind::kMoeGroupedMatmul || node.kind == OpKind::kMoeGroupedMatmulBackward)
    work *= static_cast<double>(graph.tensor(node.inputs[MoeGroupedMatmul::kToken]).dims.back());
  return work;
}

// ---------------------------------------------------------------------------
// The test hook (CUDNNFE_VERIFY_TEST_CORRUPT=1): spoils element 0 of the
// first checked output in the plan's own result, after the reference is
// computed, so that tests see a planted wrong result caught.

bool corrupt_requested() {
  const char *env = std::getenv("CUDNNFE_VERIFY_TEST_CORRUPT");
  return env && !std::strcmp(env, "1");
}

// A value of `dtype` far from `want`, whatever rounding or saturation does.
double spoiled(cudnnfe_dtype_t dtype, double want, double scale) {
  if (dtype == CUDNNFE_DTYPE_BOOLEAN || dtype == CUDNNFE_DTYPE_BOOLEAN_PACKED)
    return want != 0 ? 0 : 1;
  if (dtype == CUDNNFE_DTYPE_UINT8) return want > 127 ? 0 : 255;
  if (std::isnan(want)) return 1000.0;
  const double far = 100.0 * (std::fabs(want) + scale + 1.0);
  return want >= 0 ? -far : far;
}

std::string index_text(const Tensor &t, int64_t linear) {
  cpu::Index dims{};
  for (size_t i = 0; i < t.dims.size(); ++i) dims[i] = t.dims[i];
  const cpu::Index index = cpu::unravel(linear, static_cast<int>(t.dims.size()), dims);
  std::string s = "[";
  for (size_t i = 0; i < t.dims.size(); ++i) s += cat(i ? "," : "", index[i]);
  return s + "]";
}

// Spoils element `linear` (a sampled one) of `out` in the plan's result.
void corrupt_output(const PlanLabel &label, const Graph &graph, const CheckedOutput &out,
                    void *buffer, const cpu::StridedTensor &want, int64_t linear) {
  const Tensor &t = *out.tensor;
  const int64_t offset = want.offset(cpu::unravel(linear, want.rank, want.dims).data());
  const double w = want.load(offset);
  const double bad = spoiled(t.dtype, w, std::isfinite(w) ? std::fabs(w) : 0.0);
  unsigned char bytes[8] = {};
  size_t at = 0, size = 1;
  if (t.dtype == CUDNNFE_DTYPE_BOOLEAN_PACKED) {
    // The element's byte, with its bit changed and the other seven kept.
    at = static_cast<size_t>(offset / 8);
    verify::gather(label.source, static_cast<unsigned char *>(buffer) + at, {{0, 1}}, bytes);
    cpu::store_packed_bit(bytes, offset % 8, bad);
  } else {
    size = dtype_size(t.dtype);
    at = static_cast<size_t>(offset) * size;
    cpu::store_element(bytes, t.dtype, bad);
  }
  unsigned char *target = static_cast<unsigned char *>(buffer) + at;
  if (label.source.on_device)
    backend::copy_to_buffer(label.source.device, target, bytes, size);
  else
    std::memcpy(target, bytes, size);
  log_info("verify \"", graph.name, "\": test hook CUDNNFE_VERIFY_TEST_CORRUPT=1 spoiled element ",
           index_text(t, linear), " of output \"", t.name, "\"");
}

// ---------------------------------------------------------------------------
// One check

std::string producer_label(const Graph &graph, const Tensor &t) {
  return Graph::label(graph.nodes()[static_cast<size_t>(t.producer)]);
}

std::string tolerance_text(const verify::Tolerance &tol) {
  if (tol.floating)
    return cat("rtol ", tol.rtol, " of |expected| + ", tol.floor, " * max|expected|");
  return tol.integer_slack > 0 ? cat("integers within ", tol.integer_slack) : "exact";
}

class Check {
 public:
  Check(const Graph &graph, const SampledReference &reference, const PlanLabel &label,
        const VerifySettings &settings)
      : graph_(graph), reference_(reference), label_(label), settings_(settings) {}

  CheckResult run(void *const *data, void *stream) {
    const Scope scope = check_scope(graph_, data, settings_.rtol);
    skipped_ = scope.skipped;
    if (scope.outputs.empty())
      return not_verified(skipped_.empty() ? std::string("the graph has no output")
                                           : join(skipped_));
    const auto &uids = graph_.bound_uids();
    Clock::time_point stage = Clock::now();
    std::vector<cpu::ElementMask> wanted(uids.size());
    for (const CheckedOutput &out : scope.outputs)
      wanted[out.bound] = verify::sample_elements(*out.tensor, settings_.samples);
    const Demand demand = reference_.demand(wanted);
    times_ += cat("sample and demand ", lap(stage), " ms");
    for (const Node *node : demand.full_nodes)
      full_nodes_ += cat(full_nodes_.empty() ? "" : ", ", Graph::label(*node));
    std::string obstacle = cost_obstacle(demand);
    if (!obstacle.empty()) return not_verified(obstacle);
    if (label_.source.on_device)
      backend::wait_for_stream(label_.source.device, stream, "cudaStreamSynchronize");
    std::vector<verify::Mirror> mirrors(uids.size());
    std::vector<void *> host(uids.size(), nullptr);
    for (size_t i = 0; i < uids.size(); ++i) {
      const Tensor &t = graph_.tensor(uids[i]);
      if (!demand.used[i]) continue;
      mirrors[i] = verify::Mirror(verify::span_bytes(t));
      host[i] = mirrors[i].data();
      if (t.producer >= 0 || !demand.bound[i].any()) continue;
      const verify::Source source = t.pass_by_value ? verify::Source{} : label_.source;
      const auto ranges = verify::element_ranges(t, demand.bound[i]);
      for (const auto &r : ranges) bytes_read_ += r.end - r.first;
      verify::gather(source, data[i], ranges, mirrors[i].data());
    }
    times_ += cat(", copy inputs ", lap(stage), " ms");
    try {
      reference_.execute_demanded(host.data(), demand);
    } catch (const Error &e) {
      return not_verified(cat("the CPU reference did not run on these inputs: ", e.message()));
    }
    times_ += cat(", reference ", lap(stage), " ms");
    CheckResult outcome = compare(scope, wanted, data, host);
    times_ += cat(", compare ", lap(stage), " ms");
    return outcome;
  }

  // The result with what the check saw on the way: the outputs it
  // skipped, the nodes run in full, the bytes read back, the stage times.
  CheckResult run_and_report(void *const *data, void *stream) {
    CheckResult r = run(data, stream);
    r.skipped = skipped_;
    r.full_nodes = full_nodes_;
    r.times = times_;
    r.bytes_read = bytes_read_;
    return r;
  }

 private:
  static std::string join(const std::vector<std::string> &parts) {
    std::string s;
    for (const std::string &p : parts) s += (s.empty() ? "" : "; ") + p;
    return s;
  }

  static CheckResult not_verified(std::string why) {
    CheckResult r;
    r.kind = CheckResult::kNotVerified;
    r.text = std::move(why);
    return r;
  }

  std::string cost_obstacle(const Demand &demand) const {
    for (const Node *node : demand.full_nodes) {
      const double work = full_work(graph_, *node);
      if (work > kMaxFullNodeWork)
        return cat(Graph::label(*node),
                   " has no sampled CPU reference and running it in full would take about ", work,
                   " multiply-adds (the limit is ", kMaxFullNodeWork, ")");
    }
    size_t bytes = 0;
    for (size_t i = 0; i < demand.used.size(); ++i)
      if (demand.used[i]) bytes += verify::span_bytes(graph_.tensor(graph_.bound_uids()[i]));
    if (bytes > kMaxHostBytes)
      return cat("its tensors need ", bytes, " bytes of host memory (the limit is ", kMaxHostBytes,
                 ")");
    return "";
  }

  CheckResult compare(const Scope &scope, const std::vector<cpu::ElementMask> &wanted,
                      void *const *data, const std::vector<void *> &host) {
    bool corrupt = corrupt_requested();
    std::string failures, summary;
    for (const CheckedOutput &out : scope.outputs) {
      const Tensor &t = *out.tensor;
      const cpu::StridedTensor want = verify::strided_view(t, host[out.bound]);
      cpu::ElementMask mask = wanted[out.bound];
      const int64_t unspecified = verify::drop_unspecified(graph_, t, host, mask);
      if (corrupt && mask.any()) {
        int64_t first = -1;
        mask.for_each([&](int64_t i) { first = first < 0 ? i : first; });
        corrupt_output(label_, graph_, out, data[out.bound], want, first);
        corrupt = false;
      }
      const verify::Mirror got_bytes(verify::span_bytes(t));
      const auto ranges = verify::element_ranges(t, mask);
      for (const auto &r : ranges) bytes_read_ += r.end - r.first;
      verify::gather(label_.source, data[out.bound], ranges, got_bytes.data());
      const cpu::StridedTensor got = verify::strided_view(t, got_bytes.data());
      const verify::Comparison c = verify::compare(got, want, mask, out.tolerance);
      summary += cat(summary.empty() ? "" : ", ", "\"", t.name, "\" ", c.compared,
                     " elements (worst error ", c.error, " of ", c.allowed, " allowed)",
                     unspecified ? cat(", ", unspecified,
                                       " in rows the op leaves unspecified "
                                       "not compared")
                                 : std::string());
      if (c.bad == 0) continue;
      failures += cat(failures.empty() ? "" : "; also ", "output \"", t.name, "\" (UID ", t.uid,
                      ") of ", producer_label(graph_, t), " differs from the CPU reference at ",
                      c.bad, " of ", c.compared, " sampled elements; worst at index ",
                      index_text(t, c.worst), ": got ", c.got, ", expected ", c.want, ", |error| ",
                      c.error, " > tolerance ", c.allowed, " (", tolerance_text(out.tolerance),
                      ", max|expected| ", c.scale, ", ", dtype_name(t.dtype), ")");
    }
    CheckResult r;
    r.kind = failures.empty() ? CheckResult::kPassed : CheckResult::kFailed;
    r.text = failures.empty() ? summary
                              : cat("verify: graph \"", graph_.name, "\": ", failures, "; plan ",
                                    label_.name, " (", label_.description, ")");
    return r;
  }

  const Graph &graph_;
  const SampledReference &reference_;
  const PlanLabel &label_;
  const VerifySettings &settings_;
  // Milliseconds since `since`, which moves to now.
  static double lap(Clock::time_point &since) {
    const Clock::time_point now = Clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - since).count();
    since = now;
    return ms;
  }

  std::vector<std::string> skipped_;
  std::string full_nodes_;
  std::string times_;
  size_t bytes_read_ = 0;
};

}  // namespace

std::string graph_obstacle(const Graph &graph) {
  for (const Node &node : graph.nodes())
    if (attention_kind(node.kind) && attention_spec(node).ragged())
      return cat(Graph::label(node),
                 " has ragged (packed) tensors: their rows sit at offsets that the check's copies "
                 "do not follow");
  return "";
}

std::string plan_text(const Graph &graph, size_t candidate) {
  const PlanLabel label = plan_label(graph, candidate);
  return cat(label.name, " (", label.description, ")");
}

CheckResult check_run(const Graph &graph, const SampledReference &reference, size_t candidate,
                      void *const *data, void *stream, const VerifySettings &settings) {
  const PlanLabel label = plan_label(graph, candidate);
  Check check(graph, reference, label, settings);
  return check.run_and_report(data, stream);
}

}  // namespace cudnnfe::verify
