// The GPU plan caches: the in-process cache (key: canonical graph, options,
// device, cuDNN version) and the cache directory, in front of the heuristics
// and the plan search; and GPU plans from plan blobs. Choosing the target is
// exec/build_graph.cpp's.
#include "backend/gpu_plan_cache.h"

#include <chrono>
#include <condition_variable>
#include <list>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "backend/backend.h"
#include "backend/compiled_plan_memo.h"
#include "backend/gpu_plan.h"
#include "backend/gpu_plan_build.h"
#include "backend/refusal_probe.h"
#include "core/error.h"
#include "core/log.h"
#include "plan/disk_cache.h"
#include "plan/fingerprint.h"
#include "plan/notes.h"
#include "plan/plan_blob.h"
#include "serialize/graph_json.h"

namespace cudnnfe::backend {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Plan sets kept in memory; least recently used ones go first.
constexpr size_t kMemoryCacheCapacity = 1024;

struct Entry {
  std::shared_ptr<const PlanSet> set;
  size_t selected = 0;
  std::vector<double> times;
  int chosen = -1;
};

class MemoryCache {
 public:
  bool lookup(const std::string &key, Entry *out) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = map_.find(key);
    if (it == map_.end()) {
      ++stats_.misses;
      return false;
    }
    ++stats_.hits;
    lru_.splice(lru_.begin(), lru_, it->second.second);
    *out = it->second.first;
    return true;
  }

  void insert(const std::string &key, Entry entry) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = map_.find(key);
    if (it != map_.end()) {
      it->second.first = std::move(entry);
      lru_.splice(lru_.begin(), lru_, it->second.second);
      return;
    }
    lru_.push_front(key);
    map_.emplace(key, std::make_pair(std::move(entry), lru_.begin()));
    while (map_.size() > kMemoryCacheCapacity) {
      map_.erase(lru_.back());
      lru_.pop_back();
    }
  }

  // Records a new selection for the entry of `set` (if it is still cached).
  void update(const std::string &key, const PlanSet *set, const Entry &entry) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = map_.find(key);
    if (it == map_.end() || it->second.first.set.get() != set) return;
    it->second.first.selected = entry.selected;
    it->second.first.times = entry.times;
    it->second.first.chosen = entry.chosen;
  }

  void count_disk(bool hit, bool write, bool error) {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.disk_hits += hit;
    stats_.disk_writes += write;
    stats_.disk_errors += error;
  }

  CacheStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    CacheStats s = stats_;
    s.entries = static_cast<int64_t>(map_.size());
    return s;
  }

  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    map_.clear();
    lru_.clear();
    stats_ = CacheStats{};
  }

 private:
  std::mutex mutex_;
  std::list<std::string> lru_;
  std::unordered_map<std::string, std::pair<Entry, std::list<std::string>::iterator>> map_;
  CacheStats stats_;
};

// Never destroyed: cached plans hold cuDNN descriptors, which must not be
// freed by static destructors racing cuDNN's own teardown at exit.
MemoryCache &memory_cache() {
  static MemoryCache *cache = new MemoryCache();
  return *cache;
}

// The keys the preload thread's warm-up will read from the cache directory
// (exec/plan_cache_warmup.cpp). A build of one it has not reached takes the
// key over; a build of the one it is loading waits for it instead of loading
// the same plan a second time.
class WarmupClaims {
 public:
  void announce(const std::vector<std::string> &keys) {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.insert(keys.begin(), keys.end());
  }

  bool begin(const std::string &key) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pending_.erase(key) == 0) return false;
    loading_ = key;
    loader_ = std::this_thread::get_id();
    return true;
  }

  void end() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      loading_.clear();
      loader_ = std::thread::id();
    }
    loaded_.notify_all();
  }

  void cancel() {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.clear();
  }

  // True when the warm-up has just loaded `key` (look in memory again).
  bool claim_or_wait(const std::string &key) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (pending_.erase(key) > 0) return false;
    if (loading_ != key || loader_ == std::this_thread::get_id()) return false;
    loaded_.wait(lock, [&] { return loading_ != key; });
    return true;
  }

 private:
  std::mutex mutex_;
  std::condition_variable loaded_;
  std::unordered_set<std::string> pending_;
  std::string loading_;
  std::thread::id loader_;
};

WarmupClaims &warmup_claims() {
  static WarmupClaims *claims = new WarmupClaims();
  return *claims;
}

}  // namespace

void warmup_announce(const std::vector<std::string> &keys) {
  warmup_claims().announce(keys);
}

bool warmup_begin(const std::string &key) {
  return warmup_claims().begin(key);
}

void warmup_end() {
  warmup_claims().end();
}

void warmup_cancel() {
  warmup_claims().cancel();
}

plan::PlanRecord plan_record(const Graph &graph, const RecordedPlan &recorded) {
  plan::PlanRecord r;
  r.library_version = CUDNNFE_VERSION;
  r.fingerprint = plan::graph_fingerprint(graph);
  r.options = recorded.options;
  r.graph_json = serialize_graph(graph);
  const GpuPlan *gpu = dynamic_cast<const GpuPlan *>(&recorded);
  if (!gpu) {
    r.target = CUDNNFE_TARGET_CPU_REFERENCE;
    return r;
  }
  const PlanSet &set = gpu->set();
  const size_t selected = gpu->selected();
  const Candidate &c = set.candidates[selected];
  r.target = CUDNNFE_TARGET_GPU;
  r.cudnn_version = set.cudnn_version;
  r.sm = set.sm;
  r.device_name = set.device_name;
  r.cache_key = set.cache_key;
  r.config = c.config;
  r.plan_name = c.name;
  r.workspace_size = c.workspace_size;
  r.numerical_notes = c.numerical_notes;
  r.behavior_notes = c.behavior_notes;
  r.execution_plan_json = execution_plan_json(c);
  r.chosen_by_autotune = gpu->chosen_by_autotune == static_cast<int>(selected);
  r.time_ms = gpu->times[selected];
  if (!gpu->loaded_timings.empty()) {
    r.timings = gpu->loaded_timings;
    return r;
  }
  for (size_t i = 0; i < set.candidates.size(); ++i)
    if (gpu->times[i] >= 0) r.timings.push_back({set.candidates[i].name, gpu->times[i]});
  return r;
}

namespace {

void write_disk(const Graph &graph, const GpuPlan &plan) {
  const std::string &dir = plan.options.plan_cache_dir;
  const std::string &key = plan.set().cache_key;
  if (dir.empty() || key.empty()) return;
  bool ok = false;
  try {
    const std::string blob = plan::encode_plan_blob(plan_record(graph, plan));
    ok = plan::write_file_atomically(dir, plan::cache_file_path(dir, key), blob).empty();
  } catch (const Error &) {
    ok = false;
  }
  memory_cache().count_disk(false, ok, !ok);
}

// The persistent cache's plan for `key`, or null (missing, stale, corrupt:
// all treated as a miss).
std::unique_ptr<GpuPlan> load_from_disk(const Graph &graph, const BuildTarget &target,
                                        const BuildOptions &options, const std::string &key,
                                        const std::string &memory_key, BuildRecord &record) {
  const Clock::time_point start = Clock::now();
  std::string data;
  const bool found = plan::read_file(plan::cache_file_path(options.plan_cache_dir, key),
                                     plan::kMaxBlobPayload + 256, &data);
  record.cache_ms += ms_since(start);
  log_info("plan cache: disk ", found ? "hit" : "miss", " for graph \"", graph.name, "\"");
  if (!found) return nullptr;
  try {
    const plan::PlanRecord r = plan::decode_plan_blob(data.data(), data.size());
    if (r.target != CUDNNFE_TARGET_GPU || r.cache_key != key ||
        r.cudnn_version != target.cudnn_version || r.sm != target.sm) {
      memory_cache().count_disk(false, false, true);
      return nullptr;
    }
    std::shared_ptr<PlanSet> set = build_plan_set_from_config(graph, target, r, record);
    set->cache_key = key;
    set->memory_key = memory_key;
    auto plan = std::make_unique<GpuPlan>(set, 0);
    plan->times[0] = r.time_ms;
    plan->chosen_by_autotune = r.chosen_by_autotune ? 0 : -1;
    plan->loaded_timings = r.timings;
    memory_cache().insert(memory_key, {set, 0, plan->times, plan->chosen_by_autotune});
    memory_cache().count_disk(true, false, false);
    record.source = CUDNNFE_PLAN_SOURCE_DISK_CACHE;
    return plan;
  } catch (const Error &) {
    memory_cache().count_disk(false, false, true);
    return nullptr;
  }
}

}  // namespace

namespace {

// A new plan set; a NOT_SUPPORTED refusal ends with what the refusal probe
// found (which option to drop).
std::shared_ptr<PlanSet> build_or_explain(const Graph &graph, const BuildTarget &target,
                                          const BuildOptions &options, BuildRecord &record) {
  try {
    return build_plan_set(graph, target, options, record);
  } catch (const Error &e) {
    if (e.status() != CUDNNFE_STATUS_NOT_SUPPORTED) throw;
    const std::string why = probe_refusal(graph, target, options);
    if (why.empty()) throw;
    throw Error(e.status(), cat(e.message(), ". ", why));
  }
}

// A build without a GPU, for the device the options' properties describe:
// no plan caches (their keys name a device of this process).
std::unique_ptr<GpuPlan> build_without_gpu(const Graph &graph, const BuildOptions &options,
                                           BuildRecord &record) {
  const BuildTarget target = build_target(options.device_properties);
  std::shared_ptr<PlanSet> set = build_or_explain(graph, target, options, record);
  return std::make_unique<GpuPlan>(set, 0);
}

}  // namespace

std::vector<OfferedConfig> check_gpu_support(const Graph &graph, Handle *handle,
                                             const BuildOptions &options) {
  const BuildTarget target =
      options.device_properties ? build_target(options.device_properties) : build_target(handle);
  try {
    return supported_configurations(graph, target, options);
  } catch (const Error &e) {
    if (e.status() != CUDNNFE_STATUS_NOT_SUPPORTED) throw;
    const std::string why = probe_refusal(graph, target, options);
    if (why.empty()) throw;
    throw Error(e.status(), cat(e.message(), ". ", why));
  }
}

std::unique_ptr<GpuPlan> build_gpu_graph_plan(const Graph &graph, Handle *handle,
                                              const BuildOptions &options, BuildRecord &record) {
  if (options.device_properties) return build_without_gpu(graph, options, record);
  const BuildTarget target = build_target(handle);
  std::string key, memory_key;
  if (options.use_plan_cache) {
    const Clock::time_point start = Clock::now();
    key = plan::plan_key(plan::canonical_graph(graph), options, target.sm, target.device_name,
                         target.cudnn_version);
    memory_key = cat(key, "@", target.device);
    Entry hit;
    bool found = memory_cache().lookup(memory_key, &hit);
    // The preload's warm-up may be loading this very plan: wait for it
    // rather than load it a second time.
    if (!found && !options.plan_cache_dir.empty() && warmup_claims().claim_or_wait(key))
      found = memory_cache().lookup(memory_key, &hit);
    record.cache_ms += ms_since(start);
    log_info("plan cache: memory ", found ? "hit" : "miss", " for graph \"", graph.name, "\"");
    if (found) {
      auto plan = std::make_unique<GpuPlan>(hit.set, hit.selected);
      plan->times = hit.times;
      plan->chosen_by_autotune = hit.chosen;
      record.source = CUDNNFE_PLAN_SOURCE_MEMORY_CACHE;
      return plan;
    }
    if (!options.plan_cache_dir.empty()) {
      std::unique_ptr<GpuPlan> plan =
          load_from_disk(graph, target, options, key, memory_key, record);
      if (plan) return plan;
    }
  }
  std::shared_ptr<PlanSet> set = build_or_explain(graph, target, options, record);
  set->cache_key = key;
  set->memory_key = memory_key;
  auto plan = std::make_unique<GpuPlan>(set, 0);
  if (options.use_plan_cache) {
    const Clock::time_point start = Clock::now();
    memory_cache().insert(memory_key, {set, 0, plan->times, -1});
    plan->options = options;
    write_disk(graph, *plan);
    record.cache_ms += ms_since(start);
  }
  return plan;
}

std::unique_ptr<GpuPlan> load_gpu_plan(const Graph &graph, Handle *handle,
                                       const plan::PlanRecord &r, bool rebuild_on_mismatch,
                                       BuildRecord &record) {
  BuildTarget target;
  std::string unavailable;
  try {
    target = build_target(handle);
  } catch (const Error &e) {
    unavailable = e.message();
  }
  // sm 0: built from device properties whose JSON named no architecture;
  // cuDNN then checks the plan against the GPU itself.
  if (!unavailable.empty() || target.cudnn_version != r.cudnn_version ||
      (r.sm != 0 && target.sm != r.sm)) {
    if (rebuild_on_mismatch) return nullptr;
    const std::string made = cat(r.device_name, " (sm_", r.sm, ") with cuDNN ",
                                 plan::cudnn_version_string(r.cudnn_version));
    const std::string here = unavailable.empty()
                                 ? cat(target.device_name, " (sm_", target.sm, ") with cuDNN ",
                                       plan::cudnn_version_string(target.cudnn_version))
                                 : cat("no usable GPU and cuDNN (", unavailable, ")");
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "plan blob: the plan was made for ", made,
         " but this process has ", here,
         "; load it with rebuild_on_mismatch = 1 to build the graph again from its "
         "description");
  }
  std::shared_ptr<PlanSet> set;
  try {
    set = build_plan_set_from_config(graph, target, r, record);
  } catch (const Error &e) {
    if (rebuild_on_mismatch && e.status() == CUDNNFE_STATUS_NOT_SUPPORTED) return nullptr;
    throw;
  }
  auto gpu = std::make_unique<GpuPlan>(set, 0);
  gpu->times[0] = r.time_ms;
  gpu->chosen_by_autotune = r.chosen_by_autotune ? 0 : -1;
  gpu->loaded_timings = r.timings;
  return gpu;
}

void remember_selection(const Graph &graph, const GpuPlan &plan) {
  const PlanSet &set = plan.set();
  if (set.memory_key.empty()) return;
  memory_cache().update(set.memory_key, &set,
                        {nullptr, plan.selected(), plan.times, plan.chosen_by_autotune});
  if (plan.options.use_plan_cache) write_disk(graph, plan);
}

CacheStats cache_stats() {
  return memory_cache().stats();
}

void clear_cache() {
  memory_cache().clear();
  forget_compiled_plans();
}

}  // namespace cudnnfe::backend
