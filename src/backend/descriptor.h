// An owning wrapper for one cuDNN backend descriptor with typed attribute
// setters. A rejected attribute throws CUDNN_ERROR naming the attribute, the
// descriptor kind, cuDNN's status and its own message, so that lowering code
// reads as a list of settings with no error plumbing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend/nvidia_api.h"

namespace cudnnfe::backend {

class Descriptor {
 public:
  Descriptor() = default;
  // Creates a descriptor of `type`; throws CUDNN_ERROR.
  explicit Descriptor(cudnnBackendDescriptorType_t type);
  ~Descriptor();
  Descriptor(Descriptor &&other) noexcept;
  Descriptor &operator=(Descriptor &&other) noexcept;
  Descriptor(const Descriptor &) = delete;
  Descriptor &operator=(const Descriptor &) = delete;

  cudnnBackendDescriptor_t get() const { return desc_; }
  cudnnBackendDescriptorType_t type() const { return type_; }

  void set_int64(cudnnBackendAttributeName_t name, int64_t value);
  void set_int64s(cudnnBackendAttributeName_t name, const int64_t *values, int64_t count);
  void set_int64s(cudnnBackendAttributeName_t name, const std::vector<int64_t> &values) {
    set_int64s(name, values.data(), static_cast<int64_t>(values.size()));
  }
  void set_float(cudnnBackendAttributeName_t name, float value);
  void set_double(cudnnBackendAttributeName_t name, double value);
  void set_bool(cudnnBackendAttributeName_t name, bool value);
  void set_data_type(cudnnBackendAttributeName_t name, cudnnDataType_t value);
  void set_pointwise_mode(cudnnBackendAttributeName_t name, cudnnPointwiseMode_t value);
  void set_conv_mode(cudnnBackendAttributeName_t name, cudnnConvolutionMode_t value);
  void set_reduction_op(cudnnBackendAttributeName_t name, cudnnReduceTensorOp_t value);
  void set_heur_mode(cudnnBackendAttributeName_t name, cudnnBackendHeurMode_t value);
  void set_handle(cudnnBackendAttributeName_t name, cudnnHandle_t handle);
  void set_descriptor(cudnnBackendAttributeName_t name, const Descriptor &value);
  void set_descriptors(cudnnBackendAttributeName_t name, const cudnnBackendDescriptor_t *values,
                       int64_t count);
  void set_pointers(cudnnBackendAttributeName_t name, void *const *values, int64_t count);
  void set_chars(cudnnBackendAttributeName_t name, const std::string &text);

  // Finalizes; returns cuDNN's status so that callers can tell "not
  // supported" from errors. Use last_error() right after for the reason.
  cudnnStatus_t try_finalize();
  // Finalizes or throws CUDNN_ERROR.
  void finalize();

  // Reads up to `capacity` elements of `type`; returns how many there are.
  // Throws CUDNN_ERROR.
  int64_t get(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t capacity,
              void *out) const;
  // Reads one INT64 attribute; throws CUDNN_ERROR.
  int64_t get_int64(cudnnBackendAttributeName_t name) const;
  // Reads descriptor-valued attributes into `out`, whose descriptors must
  // already be created with the right type; returns how many were written.
  int64_t get_descriptors(cudnnBackendAttributeName_t name, cudnnBackendDescriptor_t *out,
                          int64_t capacity) const;
  // Number of elements of a descriptor-valued attribute.
  int64_t count_descriptors(cudnnBackendAttributeName_t name) const;

 private:
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
           const void *values);

  cudnnBackendDescriptor_t desc_ = nullptr;
  cudnnBackendDescriptorType_t type_ = CUDNN_BACKEND_TENSOR_DESCRIPTOR;
};

// "CUDNN_ATTR_TENSOR_DIMENSIONS"; the number for attributes not listed.
std::string attribute_name(cudnnBackendAttributeName_t name);
// "CUDNN_BACKEND_TENSOR_DESCRIPTOR"; the number for others.
std::string descriptor_type_name(cudnnBackendDescriptorType_t type);
// cuDNN's message for the last failure on this thread (may be empty),
// condensed to one line: the innermost failed check and the engine.
std::string last_error();
// The condensing step alone (exposed for tests).
std::string condense_reason(const std::string &text);
// "CUDNN_STATUS_NOT_SUPPORTED (3000)".
std::string status_text(cudnnStatus_t status);

}  // namespace cudnnfe::backend
