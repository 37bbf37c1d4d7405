// Execution contexts.
#include "api/guard.h"
#include "backend/backend.h"
#include "backend/engine_preload.h"
#include "exec/plan_cache_warmup.h"

using namespace cudnnfe;

cudnnfe_status_t cudnnfe_handle_create(cudnnfe_handle_t **out, int32_t device) {
  return guard([&] {
    require_out(out, "out");
    if (device < -1) fail_argument("device ", device, " is invalid; use -1 or a device index");
    auto handle = std::make_unique<Handle>();
    handle->device = device;
    // cuDNN loads its engines on first use; start that now (docs/plans.md).
    backend::start_engine_preload([device](const std::atomic<bool> &stop) {
      warm_plan_cache_from_environment(device, stop);
    });
    *out = register_handle(handle.get());
    handle.release();  // owned by the registered record now
  });
}

cudnnfe_status_t cudnnfe_handle_destroy(cudnnfe_handle_t *h) {
  if (!h) return CUDNNFE_STATUS_OK;
  return guard([&] {
    Handle &handle = handle_of(h);
    backend::release_handle(handle);
    unregister_handle(h);
    delete &handle;
  });
}

const char *cudnnfe_handle_last_error(const cudnnfe_handle_t *h) {
  const cudnnfe_handle *record = find_handle(h);
  if (!record) return "handle is NULL, destroyed or not from cudnnfe_handle_create";
  return record->impl->last_error.c_str();
}
