// Device properties for building without a GPU (cuDNN's
// CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, cuDNN 9.8 and later; cudnn-frontend's
// create_device_properties): made from a CUDA device, or from the JSON that
// one wrote, on any machine with cuDNN. A build given them lowers, queries
// the heuristics and finalizes plans for that device with no handle. They
// are immutable once made; builds share them. Using them in a build is
// gpu_plan_build.cpp's; this file does not build anything.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "backend/descriptor.h"
#include "backend/nvidia_api.h"

namespace cudnnfe::backend {

class DeviceProperties {
 public:
  // The properties of CUDA device `device` (needs cuDNN and that GPU).
  // Throws CUDNN_UNAVAILABLE, INVALID_ARGUMENT for a device that does not
  // exist, NOT_SUPPORTED where the loaded cuDNN lacks device properties.
  static std::shared_ptr<const DeviceProperties> of_device(int device);
  // Properties loaded from what json() wrote (needs cuDNN, no GPU). Throws
  // BAD_SERIALIZED_DATA for text that is not a JSON object or that cuDNN
  // refuses, CUDNN_UNAVAILABLE, NOT_SUPPORTED as above.
  static std::shared_ptr<const DeviceProperties> from_json(const char *data, size_t size);

  // The finalized descriptor, for the attributes that take it.
  cudnnBackendDescriptor_t descriptor() const { return descriptor_.get(); }
  // cuDNN's JSON of the properties (what from_json takes back).
  const std::string &json() const { return json_; }
  // The device's architecture (90 for compute capability 9.0) and name, read
  // from cuDNN's JSON for messages and plan blobs; 0 and "" where the JSON
  // does not say.
  int sm() const { return sm_; }
  const std::string &name() const { return name_; }

 private:
  DeviceProperties() = default;
  // Finalizes descriptor_ and reads json_, sm_ and name_ back from cuDNN.
  void finish(const char *source);
  // Sets sm_ and name_ from json_ where it names them.
  void read_device();

  Descriptor descriptor_;
  std::string json_;
  int sm_ = 0;
  std::string name_;
};

}  // namespace cudnnfe::backend
