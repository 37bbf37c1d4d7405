#include "backend/plan_finalize.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "core/error.h"

namespace cudnnfe::backend {

void finalize_plan(PlanToFinalize &p, cudnnBackendDescriptor_t kernel_cache) {
  const auto start = std::chrono::steady_clock::now();
  try {
    Descriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    plan.set_descriptors(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, &p.config, 1);
    if (kernel_cache)
      plan.set_descriptors(CUDNN_ATTR_EXECUTION_PLAN_KERNEL_CACHE, &kernel_cache, 1);
    p.status = plan.try_finalize();
    if (p.status == CUDNN_STATUS_SUCCESS)
      p.plan = std::move(plan);
    else
      p.error = last_error();
  } catch (const Error &e) {
    p.status = CUDNN_STATUS_INTERNAL_ERROR;
    p.error = e.message();
  }
  p.ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

size_t plan_finalize_threads() {
  static const size_t threads = [] {
    if (const char *env = std::getenv("CUDNNFE_BUILD_THREADS")) {
      const long n = std::strtol(env, nullptr, 10);
      if (n >= 1) return static_cast<size_t>(n);
    }
    const unsigned hw = std::thread::hardware_concurrency();
    return static_cast<size_t>(std::clamp(hw, 1u, 8u));
  }();
  return threads;
}

void finalize_plans(std::vector<PlanToFinalize> &plans, cudnnBackendDescriptor_t kernel_cache) {
  const size_t workers = std::min(plans.size(), plan_finalize_threads());
  if (workers <= 1) {
    for (PlanToFinalize &p : plans) finalize_plan(p, kernel_cache);
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < plans.size();) finalize_plan(plans[i], kernel_cache);
  };
  std::vector<std::thread> threads;
  threads.reserve(workers - 1);
  for (size_t i = 1; i < workers; ++i) threads.emplace_back(work);
  work();
  for (std::thread &t : threads) t.join();
}

}  // namespace cudnnfe::backend
