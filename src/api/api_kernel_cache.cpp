// The kernel cache object (backend/kernel_cache.h): create, destroy,
// serialize, deserialize. Builds take it through cudnnfe_build_options_t.
#include <cstring>
#include <memory>

#include "api/guard.h"
#include "backend/kernel_cache.h"

using namespace cudnnfe;

namespace cudnnfe {

std::shared_ptr<backend::KernelCache> kernel_cache_of(const cudnnfe_kernel_cache *c) {
  if (!c) fail_argument("kernel cache is NULL");
  if (c->tag != kLiveKernelCacheTag || !c->impl)
    fail_argument("kernel cache pointer ", static_cast<const void *>(c),
                  " is not a live cudnnfe kernel cache (destroyed, or not from "
                  "cudnnfe_kernel_cache_create)");
  return c->impl;
}

}  // namespace cudnnfe

cudnnfe_status_t cudnnfe_kernel_cache_create(cudnnfe_kernel_cache_t **cache) {
  return guard([&] {
    require_out(cache, "cache");
    auto c = std::make_unique<cudnnfe_kernel_cache>();
    c->impl = std::make_shared<backend::KernelCache>();
    c->tag = kLiveKernelCacheTag;
    *cache = c.release();
  });
}

cudnnfe_status_t cudnnfe_kernel_cache_destroy(cudnnfe_kernel_cache_t *cache) {
  if (!cache) return CUDNNFE_STATUS_OK;
  return guard([&] {
    kernel_cache_of(cache);
    cache->tag = kDeadTag;
    delete cache;  // plans built with it hold their own reference
  });
}

cudnnfe_status_t cudnnfe_kernel_cache_serialize(cudnnfe_kernel_cache_t *cache, char *buffer,
                                                size_t capacity, size_t *size) {
  return guard([&] {
    require_out(size, "size");
    const std::string json = kernel_cache_of(cache)->serialize();
    if (buffer) {
      if (capacity < json.size())
        fail_argument("capacity ", capacity, " is too small; the kernel cache's JSON has ",
                      json.size(), " bytes");
      std::memcpy(buffer, json.data(), json.size());
    }
    *size = json.size();
  });
}

cudnnfe_status_t cudnnfe_kernel_cache_deserialize(cudnnfe_kernel_cache_t *cache, const char *data,
                                                  size_t size) {
  return guard([&] { kernel_cache_of(cache)->deserialize(data, size); });
}
