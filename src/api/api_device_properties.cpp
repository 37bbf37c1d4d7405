// The device properties object (backend/device_properties.h): create from a
// CUDA device or from JSON, serialize, destroy. Builds take it through
// cudnnfe_build_options_t.device_properties.
#include <cstring>
#include <memory>

#include "api/guard.h"
#include "backend/device_properties.h"

using namespace cudnnfe;

cudnnfe_status_t cudnnfe_device_properties_create(cudnnfe_device_properties_t **properties,
                                                  int32_t device) {
  return guard([&] {
    require_out(properties, "properties");
    *properties = register_device_properties(backend::DeviceProperties::of_device(device));
  });
}

cudnnfe_status_t cudnnfe_device_properties_create_from_json(
    cudnnfe_device_properties_t **properties, const char *data, size_t size) {
  return guard([&] {
    require_out(properties, "properties");
    if (!data && size > 0) fail_argument("data is NULL but size is ", size);
    *properties = register_device_properties(backend::DeviceProperties::from_json(data, size));
  });
}

cudnnfe_status_t cudnnfe_device_properties_serialize(const cudnnfe_device_properties_t *properties,
                                                     char *buffer, size_t capacity, size_t *size) {
  return guard([&] {
    require_out(size, "size");
    const std::string &json = device_properties_of(properties)->json();
    if (buffer) {
      if (capacity < json.size())
        fail_argument("capacity ", capacity, " is too small; the device properties' JSON has ",
                      json.size(), " bytes");
      std::memcpy(buffer, json.data(), json.size());
    }
    *size = json.size();
  });
}

cudnnfe_status_t cudnnfe_device_properties_destroy(cudnnfe_device_properties_t *properties) {
  if (!properties) return CUDNNFE_STATUS_OK;
  // Builds hold their own reference while they run.
  return guard([&] { unregister_device_properties(properties); });
}
