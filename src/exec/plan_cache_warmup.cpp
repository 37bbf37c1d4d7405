#include "exec/plan_cache_warmup.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "backend/gpu_plan_cache.h"
#include "core/error.h"
#include "core/log.h"
#include "exec/build_graph.h"
#include "plan/disk_cache.h"

namespace cudnnfe {
namespace {

namespace fs = std::filesystem;

constexpr const char *kPlanFileSuffix = ".cudnnfe-plan";

// The directory's plan files, newest first (a program's recent graphs).
std::vector<fs::path> newest_plan_files(const std::string &dir) {
  std::vector<std::pair<fs::file_time_type, fs::path>> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path &path = it->path();
    const std::string name = path.filename().string();
    if (name.size() <= std::strlen(kPlanFileSuffix) ||
        name.compare(name.size() - std::strlen(kPlanFileSuffix), std::string::npos,
                     kPlanFileSuffix) != 0)
      continue;
    std::error_code time_ec;
    const fs::file_time_type when = fs::last_write_time(path, time_ec);
    if (!time_ec) found.emplace_back(when, path);
  }
  std::sort(found.begin(), found.end(),
            [](const auto &a, const auto &b) { return a.first > b.first; });
  std::vector<fs::path> paths;
  for (const auto &entry : found) paths.push_back(entry.second);
  if (paths.size() > static_cast<size_t>(kWarmupMaxPlans)) paths.resize(kWarmupMaxPlans);
  return paths;
}

// "<dir>/<key>.cudnnfe-plan" -> "<key>" (plan/disk_cache.h).
std::string key_of(const fs::path &path) {
  const std::string name = path.filename().string();
  return name.substr(0, name.size() - std::strlen(kPlanFileSuffix));
}

}  // namespace

void warm_plan_cache_from_environment(int device, const std::atomic<bool> &stop) {
  const char *dir = std::getenv("CUDNNFE_PLAN_CACHE_DIR");
  if (!dir || !*dir) return;
  // The thread's own handle: cuDNN handles are not shared between threads.
  // It stays alive, as the plans it finalized may be cached for the process.
  static Handle *warmup_handle = new Handle();
  warmup_handle->device = device < 0 ? 0 : device;
  const std::vector<fs::path> files = newest_plan_files(dir);
  std::vector<std::string> keys;
  for (const fs::path &path : files) keys.push_back(key_of(path));
  backend::warmup_announce(keys);
  int loaded = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const fs::path &path = files[i];
    if (stop.load()) break;
    if (!backend::warmup_begin(keys[i])) continue;  // a build took it over
    struct EndClaim {
      ~EndClaim() { backend::warmup_end(); }
    } end_claim;
    std::string blob;
    if (!plan::read_file(path.string(), 64u << 20, &blob)) continue;
    try {
      Graph graph;
      // The blob's own options, with the directory: the build misses in
      // memory, finds this file and caches its plan in memory, as any build
      // with the directory would.
      loaded += load_plan_into_cache(graph, warmup_handle, blob.data(), blob.size(), dir);
    } catch (const Error &e) {
      log_debug("plan cache warm-up: skipped ", path.string(), ": ", e.message());
    }
  }
  backend::warmup_cancel();
  log_info("plan cache warm-up: ", loaded, " plan(s) from ", dir, " in memory");
}

}  // namespace cudnnfe
