// The kernel cache object (backend/kernel_cache.h): create, destroy,
// serialize, deserialize. Builds take it through cudnnfe_build_options_t.
#include <cstring>
#include <memory>

#include "api/guard.h"
#include "backend/kernel_cache.h"

using namespace cudnnfe;

cudnnfe_status_t cudnnfe_kernel_cache_create(cudnnfe_kernel_cache_t **cache) {
  return guard([&] {
    require_out(cache, "cache");
    *cache = register_kernel_cache(std::make_shared<backend::KernelCache>());
  });
}

cudnnfe_status_t cudnnfe_kernel_cache_destroy(cudnnfe_kernel_cache_t *cache) {
  if (!cache) return CUDNNFE_STATUS_OK;
  return guard([&] {
    // Plans built with it hold their own reference to the cache.
    unregister_kernel_cache(cache);
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
