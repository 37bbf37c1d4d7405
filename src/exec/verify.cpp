// Verify mode (exec/verify.h, docs/verify.md): its settings, which plan runs
// are checked (once per plan, and each bound execution's first run), and
// what a check's result becomes (a log line or VERIFY_FAILED). The check
// itself is exec/verify_check.cpp.
#include "exec/verify.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "core/log.h"
#include "exec/verify_check.h"
#include "plan/recorded_plan.h"

namespace cudnnfe {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int32_t kDefaultSamples = 64;
constexpr int32_t kMaxSamples = 1 << 20;

// ---------------------------------------------------------------------------
// Settings

int32_t env_samples() {
  const char *env = std::getenv("CUDNNFE_VERIFY_SAMPLES");
  if (!env || !*env) return kDefaultSamples;
  char *end = nullptr;
  const long value = std::strtol(env, &end, 10);
  if (*end != '\0' || value < 1 || value > kMaxSamples)
    fail_argument("environment variable CUDNNFE_VERIFY_SAMPLES is \"", env,
                  "\"; expected a whole number from 1 to ", kMaxSamples);
  return static_cast<int32_t>(value);
}

bool env_verify() {
  const char *env = std::getenv("CUDNNFE_VERIFY");
  if (!env || !*env || !std::strcmp(env, "0")) return false;
  if (!std::strcmp(env, "1")) return true;
  fail_argument("environment variable CUDNNFE_VERIFY is \"", env,
                "\"; expected 1 (verify mode on) or 0 (off)");
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// A bound execution whose first run is checked.
class VerifiedBoundRun final : public BoundRun {
 public:
  VerifiedBoundRun(std::unique_ptr<BoundRun> inner, const Graph &graph,
                   std::shared_ptr<Verifier> verifier, size_t candidate, void *const *data,
                   size_t count)
      : inner_(std::move(inner)),
        graph_(graph),
        verifier_(std::move(verifier)),
        candidate_(candidate),
        data_(data, data + count) {}

  void run(Handle &handle, void *stream) override {
    inner_->run(handle, stream);
    if (!failure_.empty()) fail(CUDNNFE_STATUS_VERIFY_FAILED, failure_, " (reported again)");
    if (checked_) return;
    try {
      verifier_->check(graph_, candidate_, handle, data_.data(), stream);
      checked_ = true;
    } catch (const Error &e) {
      if (e.status() == CUDNNFE_STATUS_VERIFY_FAILED) {
        checked_ = true;
        failure_ = e.message();
      }
      throw;
    }
  }
  cudnnfe_cuda_graph_mode_t mode() const override { return inner_->mode(); }

 private:
  std::unique_ptr<BoundRun> inner_;
  const Graph &graph_;  // the bound execution checks it is alive before each run
  std::shared_ptr<Verifier> verifier_;
  size_t candidate_;
  std::vector<void *> data_;
  bool checked_ = false;
  std::string failure_;
};

}  // namespace

VerifySettings resolve_verify_settings(cudnnfe_verify_mode_t mode, int32_t samples, double rtol) {
  if (mode != CUDNNFE_VERIFY_FROM_ENV && mode != CUDNNFE_VERIFY_ON && mode != CUDNNFE_VERIFY_OFF)
    fail_argument("build options: verify is ", mode,
                  "; expected CUDNNFE_VERIFY_FROM_ENV (0), CUDNNFE_VERIFY_ON (1) or "
                  "CUDNNFE_VERIFY_OFF (2)");
  if (samples < 0 || samples > kMaxSamples)
    fail_argument("build options: verify_samples is ", samples, "; expected 0 (the default) to ",
                  kMaxSamples);
  if (!(rtol >= 0) || !std::isfinite(rtol))
    fail_argument("build options: verify_rtol is ", rtol,
                  "; expected 0 (by data type) or a finite tolerance > 0");
  VerifySettings s;
  s.enabled = mode == CUDNNFE_VERIFY_ON || (mode == CUDNNFE_VERIFY_FROM_ENV && env_verify());
  s.samples = samples > 0 ? samples : (s.enabled ? env_samples() : kDefaultSamples);
  s.rtol = rtol;
  return s;
}

Verifier::Verifier(VerifySettings settings, size_t plan_count)
    : settings_(settings),
      plan_count_(plan_count),
      state_(new std::atomic<int>[plan_count]),
      failures_(plan_count) {
  for (size_t i = 0; i < plan_count; ++i) state_[i].store(kUnchecked);
}

const SampledReference &Verifier::reference(const Graph &graph) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!reference_tried_) {
    reference_tried_ = true;
    try {
      reference_ = build_sampled_reference(graph);
    } catch (const Error &e) {
      reference_error_ = e.message();
    }
  }
  if (!reference_)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED,
         "the CPU reference cannot run the graph: ", reference_error_);
  return *reference_;
}

void Verifier::after_execute(const Graph &graph, Handle &handle, void *const *data, void *stream) {
  const size_t candidate = recorded_plan(graph).selected();
  if (candidate >= plan_count_) return;
  std::atomic<int> &state = state_[candidate];
  int current = state.load(std::memory_order_acquire);
  if (current == kDone || current == kChecking) return;
  if (current == kFailed) {
    std::lock_guard<std::mutex> lock(mutex_);
    fail(CUDNNFE_STATUS_VERIFY_FAILED, failures_[candidate],
         " (reported again: this plan failed the check of its first execute)");
  }
  if (!state.compare_exchange_strong(current, kChecking, std::memory_order_acq_rel)) return;
  try {
    check(graph, candidate, handle, data, stream);
    state.store(kDone, std::memory_order_release);
  } catch (const Error &e) {
    if (e.status() == CUDNNFE_STATUS_VERIFY_FAILED) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        failures_[candidate] = e.message();
      }
      state.store(kFailed, std::memory_order_release);
    } else {
      state.store(kUnchecked, std::memory_order_release);  // check again next time
    }
    throw;
  } catch (...) {
    state.store(kUnchecked, std::memory_order_release);
    throw;
  }
}

void Verifier::check(const Graph &graph, size_t candidate, Handle &handle, void *const *data,
                     void *stream) {
  (void)handle;
  const Clock::time_point start = Clock::now();
  const std::string head =
      cat("verify \"", graph.name, "\": plan ", verify::plan_text(graph, candidate), ": ");
  verify::CheckResult result;
  result.kind = verify::CheckResult::kNotVerified;
  result.text = verify::graph_obstacle(graph);
  if (result.text.empty()) {
    const SampledReference *reference = nullptr;
    try {
      reference = &this->reference(graph);
    } catch (const Error &e) {
      result.text = e.message();
    }
    if (reference) {
      result = verify::check_run(graph, *reference, candidate, data, stream, settings_);
      log_debug(head, result.times);
    }
  }
  for (const std::string &s : result.skipped) log_info(head, "not verified: ", s);
  switch (result.kind) {
    case verify::CheckResult::kNotVerified: log_info(head, "not verified: ", result.text); return;
    case verify::CheckResult::kPassed:
      log_info(head, "passed: ", result.text,
               result.full_nodes.empty() ? "" : "; run in full: ", result.full_nodes,
               "; read back ", result.bytes_read, " bytes; ", ms_since(start), " ms");
      return;
    case verify::CheckResult::kFailed:
      log_info(head, "failed; read back ", result.bytes_read, " bytes; ", ms_since(start), " ms");
      fail(CUDNNFE_STATUS_VERIFY_FAILED, result.text);
  }
}

void Verifier::skip_overridden(const Graph &graph) {
  if (!overridden_logged_.exchange(true))
    log_info("verify \"", graph.name,
             "\": not verified: execute-time shapes (cudnnfe_graph_execute_with_overrides); the "
             "first execute with the built shapes is checked");
}

void attach_verifier(Graph &graph, const VerifySettings &settings) {
  if (!settings.enabled) return;
  RecordedPlan &plan = recorded_plan(graph);
  plan.set_verifier(std::make_shared<Verifier>(settings, plan.plan_count()));
  log_info("verify \"", graph.name, "\": verify mode on (", settings.samples,
           " sampled elements per output", settings.rtol > 0 ? cat(", rtol ", settings.rtol) : "",
           ")");
}

std::unique_ptr<BoundRun> verified_bound_run(std::unique_ptr<BoundRun> run, const Graph &graph,
                                             void *const *data, size_t count) {
  const Plan &plan = graph.plan();
  if (!plan.verifier()) return run;
  return std::make_unique<VerifiedBoundRun>(std::move(run), graph, plan.shared_verifier(),
                                            recorded_plan(graph).selected(), data, count);
}

}  // namespace cudnnfe
