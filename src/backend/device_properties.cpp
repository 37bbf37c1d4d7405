// Device properties (backend/device_properties.h). Whether the loaded cuDNN
// has them is learnt by asking it for the descriptor: no version table.
#include "backend/device_properties.h"

#include <algorithm>

#include "backend/device.h"
#include "backend/loader.h"
#include "core/error.h"
#include "plan/notes.h"
#include "serialize/json.h"

namespace cudnnfe::backend {
namespace {

std::string loaded_version() {
  return plan::cudnn_version_string(static_cast<int64_t>(cudnn().GetVersion()));
}

// A new device properties descriptor, or NOT_SUPPORTED naming the feature,
// the loaded cuDNN and what is needed.
Descriptor create_descriptor() {
  try {
    return Descriptor(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR);
  } catch (const Error &e) {
    fail(CUDNNFE_STATUS_NOT_SUPPORTED,
         "device properties (building without a GPU) need cuDNN's "
         "CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, which its headers document since cuDNN 9.8.0; "
         "the loaded cuDNN ",
         loaded_version(), " refused to create one: ", e.message());
  }
}

std::string read_json(const Descriptor &d) {
  std::string json(static_cast<size_t>(d.get(CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION,
                                             CUDNN_TYPE_CHAR, 0, nullptr)),
                   '\0');
  const int64_t n = d.get(CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR,
                          static_cast<int64_t>(json.size()), &json[0]);
  json.resize(static_cast<size_t>(std::max<int64_t>(0, std::min<int64_t>(n, json.size()))));
  while (!json.empty() && json.back() == '\0') json.pop_back();
  return json;
}

// JSON text as an object, else BAD_SERIALIZED_DATA; checked before cuDNN is
// loaded so that bad text is reported as such on any machine.
json::Value parse_object(const char *data, size_t size) {
  if (!data || size == 0)
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "device properties: no JSON was given");
  json::Value v;
  try {
    v = json::parse(data, size);
  } catch (const Error &e) {
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA,
         "device properties: not JSON written by cudnnfe_device_properties_serialize: ",
         e.message());
  }
  if (v.type() != json::Value::Type::kObject)
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA,
         "device properties: the JSON is not an object; expected what "
         "cudnnfe_device_properties_serialize wrote");
  return v;
}

}  // namespace

void DeviceProperties::finish(const char *source) {
  const cudnnStatus_t status = descriptor_.try_finalize();
  if (status != CUDNN_STATUS_SUCCESS) {
    const std::string reason = last_error();
    fail(status == CUDNN_STATUS_BAD_PARAM ? CUDNNFE_STATUS_BAD_SERIALIZED_DATA
                                          : CUDNNFE_STATUS_NOT_SUPPORTED,
         "device properties: cuDNN ", loaded_version(), " refused ", source, ": ",
         status_text(status), reason.empty() ? "" : cat(": ", reason));
  }
  json_ = read_json(descriptor_);
  read_device();
}

void DeviceProperties::read_device() {
  // cuDNN's own field names (deviceVer is major * 100 + minor * 10); text
  // cuDNN wrote that we cannot read only leaves them unknown.
  json::Value v;
  try {
    v = json::parse(json_.data(), json_.size());
  } catch (const Error &) {
    return;
  }
  const json::Value *ver = v.find("deviceVer");
  if (ver && ver->type() == json::Value::Type::kInt) sm_ = static_cast<int>(ver->as_int("") / 10);
  const json::Value *name = v.find("deviceName");
  if (name && name->type() == json::Value::Type::kString) name_ = name->as_string("");
}

std::shared_ptr<const DeviceProperties> DeviceProperties::of_device(int device) {
  cudnn();
  const int count = device_count();
  if (count == 0)
    fail(CUDNNFE_STATUS_CUDNN_UNAVAILABLE,
         "device properties: this process has no usable CUDA device to describe; make them "
         "where the GPU is (cudnnfe_device_properties_create, then _serialize) and load that "
         "JSON here with cudnnfe_device_properties_create_from_json");
  if (device < 0 || device >= count)
    fail_argument("device properties: CUDA device ", device, " does not exist (this process has ",
                  count, count == 1 ? " device)" : " devices)");
  ensure_device(device);
  std::shared_ptr<DeviceProperties> p(new DeviceProperties());
  p->descriptor_ = create_descriptor();
  const int32_t id = device;
  const cudnnStatus_t status = cudnn().BackendSetAttribute(
      p->descriptor_.get(), CUDNN_ATTR_DEVICEPROP_DEVICE_ID, CUDNN_TYPE_INT32, 1, &id);
  if (status != CUDNN_STATUS_SUCCESS)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "device properties: cuDNN ", loaded_version(),
         " refused CUDNN_ATTR_DEVICEPROP_DEVICE_ID: ", status_text(status));
  p->finish(cat("CUDA device ", device, " (", describe_device(device), ")").c_str());
  return p;
}

std::shared_ptr<const DeviceProperties> DeviceProperties::from_json(const char *data, size_t size) {
  parse_object(data, size);
  std::shared_ptr<DeviceProperties> p(new DeviceProperties());
  p->descriptor_ = create_descriptor();
  const cudnnStatus_t status =
      cudnn().BackendSetAttribute(p->descriptor_.get(), CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION,
                                  CUDNN_TYPE_CHAR, static_cast<int64_t>(size), data);
  if (status != CUDNN_STATUS_SUCCESS)
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "device properties: cuDNN ", loaded_version(),
         " refused the JSON (CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION): ", status_text(status));
  p->finish("the JSON");
  return p;
}

}  // namespace cudnnfe::backend
