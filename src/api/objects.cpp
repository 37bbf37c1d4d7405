// Token registries for graphs, handles, kernel caches and bound executions
// (see objects.h): a token maps to
// its record while the object lives; a destroyed token maps to nothing.
#include "api/objects.h"

#include <sys/mman.h>

#include <memory>
#include <shared_mutex>
#include <unordered_map>

#include "core/error.h"

namespace cudnnfe {
namespace {

// Tokens are 16 bytes apart (any alignment a binding might assume) in a
// range reserved with PROT_NONE: it costs address space, not memory.
constexpr uintptr_t kTokenStep = 16;
constexpr size_t kTokenRangeBytes = size_t{1} << 36;  // 2^32 tokens

class TokenRange {
 public:
  TokenRange() {
    // Smaller ranges if the address space is limited (ulimit -v).
    for (size_t bytes = kTokenRangeBytes; bytes >= (size_t{1} << 16); bytes /= 2) {
      void *base =
          ::mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (base == MAP_FAILED) continue;
      base_ = reinterpret_cast<uintptr_t>(base);
      count_ = bytes / kTokenStep;
      return;
    }
  }
  // The n-th token of the range, for n in [0, count()).
  uintptr_t token(uint64_t n) const { return base_ + n * kTokenStep; }
  uint64_t count() const { return count_; }

 private:
  uintptr_t base_ = 0;
  uint64_t count_ = 0;
};

// One range for every kind of object, so that no token of one kind is ever
// a token of another (a graph passed as a handle is refused).
class TokenSource {
 public:
  // A token that `taken` does not hold; throws bad_alloc if none is left.
  template <class Taken>
  uintptr_t next(const Taken &taken) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (uint64_t tries = 0; tries < range_.count(); ++tries) {
      const uintptr_t token = range_.token(next_++ % range_.count());
      if (!taken(token)) return token;
    }
    throw std::bad_alloc();
  }

 private:
  const TokenRange range_;  // never unmapped
  std::mutex mutex_;
  uint64_t next_ = 0;
};

TokenSource &token_source() {
  static auto *source = new TokenSource();  // outlives static destructors
  return *source;
}

template <class Record>
class Registry {
 public:
  Record *insert(std::unique_ptr<Record> record) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    // After the range wraps, skip tokens still live in this registry.
    const uintptr_t token =
        token_source().next([&](uintptr_t t) { return records_.count(t) != 0; });
    records_[token] = std::move(record);
    return reinterpret_cast<Record *>(token);
  }
  Record *find(const Record *token) const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto it = records_.find(reinterpret_cast<uintptr_t>(token));
    return it == records_.end() ? nullptr : it->second.get();
  }
  std::unique_ptr<Record> erase(const Record *token) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    auto it = records_.find(reinterpret_cast<uintptr_t>(token));
    if (it == records_.end()) return nullptr;
    std::unique_ptr<Record> record = std::move(it->second);
    records_.erase(it);
    return record;
  }

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<uintptr_t, std::unique_ptr<Record>> records_;
};

Registry<cudnnfe_graph> &graphs() {
  static auto *registry = new Registry<cudnnfe_graph>();  // outlives static destructors
  return *registry;
}
Registry<cudnnfe_handle> &handles() {
  static auto *registry = new Registry<cudnnfe_handle>();
  return *registry;
}
Registry<cudnnfe_kernel_cache> &kernel_caches() {
  static auto *registry = new Registry<cudnnfe_kernel_cache>();
  return *registry;
}

Registry<cudnnfe_device_properties> &device_properties_records() {
  static auto *registry = new Registry<cudnnfe_device_properties>();
  return *registry;
}

Registry<cudnnfe_bound> &bounds() {
  static auto *registry = new Registry<cudnnfe_bound>();
  return *registry;
}

[[noreturn]] void fail_stale(const char *what, const void *token, const char *creator) {
  fail_argument(what, " pointer ", token, " is not a live cudnnfe ", what,
                " (destroyed, or not from ", creator, ")");
}

}  // namespace

cudnnfe_graph *register_graph(Graph *impl) {
  auto record = std::make_unique<cudnnfe_graph>();
  record->impl = impl;
  return graphs().insert(std::move(record));
}

cudnnfe_handle *register_handle(Handle *impl) {
  auto record = std::make_unique<cudnnfe_handle>();
  record->impl = impl;
  return handles().insert(std::move(record));
}

std::unique_ptr<cudnnfe_graph> unregister_graph(const cudnnfe_graph *token) {
  auto record = graphs().erase(token);
  if (!record) fail_stale("graph", token, "cudnnfe_graph_create");
  return record;
}

std::unique_ptr<cudnnfe_handle> unregister_handle(const cudnnfe_handle *token) {
  auto record = handles().erase(token);
  if (!record) fail_stale("handle", token, "cudnnfe_handle_create");
  return record;
}

const cudnnfe_graph *find_graph(const cudnnfe_graph *token) {
  return token ? graphs().find(token) : nullptr;
}

cudnnfe_handle *find_handle(const cudnnfe_handle *token) {
  return token ? handles().find(token) : nullptr;
}

const cudnnfe_graph &graph_record(const cudnnfe_graph *token) {
  if (!token) fail_argument("graph is NULL");
  const cudnnfe_graph *record = find_graph(token);
  if (!record) fail_stale("graph", token, "cudnnfe_graph_create");
  return *record;
}

Graph &graph_of(const cudnnfe_graph *token) {
  return *graph_record(token).impl;
}

Handle &handle_of(const cudnnfe_handle *token) {
  if (!token) fail_argument("handle is NULL");
  cudnnfe_handle *record = find_handle(token);
  if (!record) fail_stale("handle", token, "cudnnfe_handle_create");
  return *record->impl;
}

cudnnfe_kernel_cache *register_kernel_cache(std::shared_ptr<backend::KernelCache> impl) {
  auto record = std::make_unique<cudnnfe_kernel_cache>();
  record->impl = std::move(impl);
  return kernel_caches().insert(std::move(record));
}

std::unique_ptr<cudnnfe_kernel_cache> unregister_kernel_cache(const cudnnfe_kernel_cache *token) {
  auto record = kernel_caches().erase(token);
  if (!record) fail_stale("kernel cache", token, "cudnnfe_kernel_cache_create");
  return record;
}

std::shared_ptr<backend::KernelCache> kernel_cache_of(const cudnnfe_kernel_cache *token) {
  if (!token) fail_argument("kernel cache is NULL");
  const cudnnfe_kernel_cache *record = kernel_caches().find(token);
  if (!record) fail_stale("kernel cache", token, "cudnnfe_kernel_cache_create");
  return record->impl;
}

cudnnfe_device_properties *register_device_properties(
    std::shared_ptr<const backend::DeviceProperties> impl) {
  auto record = std::make_unique<cudnnfe_device_properties>();
  record->impl = std::move(impl);
  return device_properties_records().insert(std::move(record));
}

std::unique_ptr<cudnnfe_device_properties> unregister_device_properties(
    const cudnnfe_device_properties *token) {
  auto record = device_properties_records().erase(token);
  if (!record) fail_stale("device properties", token, "cudnnfe_device_properties_create");
  return record;
}

std::shared_ptr<const backend::DeviceProperties> device_properties_of(
    const cudnnfe_device_properties *token) {
  if (!token) fail_argument("device properties is NULL");
  const cudnnfe_device_properties *record = device_properties_records().find(token);
  if (!record) fail_stale("device properties", token, "cudnnfe_device_properties_create");
  return record->impl;
}

cudnnfe_bound *register_bound(std::unique_ptr<cudnnfe_bound> record) {
  return bounds().insert(std::move(record));
}

std::unique_ptr<cudnnfe_bound> unregister_bound(const cudnnfe_bound *token) {
  auto record = bounds().erase(token);
  if (!record) fail_stale("bound execution", token, "cudnnfe_graph_bind");
  return record;
}

cudnnfe_bound *find_bound(const cudnnfe_bound *token) {
  return token ? bounds().find(token) : nullptr;
}

}  // namespace cudnnfe
