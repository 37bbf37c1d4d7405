// Small helpers for the lowerings of norms, softmax and SDPA backward:
// setting enum-typed attributes the Descriptor wrapper has no setter for,
// and adding an operation whose refusal should name what was asked.
#pragma once

#include <string>

#include "backend/descriptor.h"
#include "backend/loader.h"
#include "backend/lowering.h"
#include "core/error.h"

namespace cudnnfe::backend {

// Sets one attribute of `type` (CUDNN_TYPE_NORM_MODE, ...) from `value`.
// Throws CUDNN_ERROR naming the attribute and cuDNN's reason.
template <class T>
void set_attribute(Descriptor &descriptor, cudnnBackendAttributeName_t name,
                   cudnnBackendAttributeType_t type, const T &value, const char *what) {
  cudnnStatus_t status = cudnn().BackendSetAttribute(descriptor.get(), name, type, 1, &value);
  if (status != CUDNN_STATUS_SUCCESS) {
    std::string reason = last_error();
    fail(CUDNNFE_STATUS_CUDNN_ERROR, "cuDNN refused to set ", what, " (", attribute_name(name),
         "): ", status_text(status), reason.empty() ? "" : cat(": ", reason));
  }
}

// Finalizes and adds `operation`; a refusal (NOT_SUPPORTED) is reported as
// "<what>: <cuDNN's reason>" so that the build's message says which backend
// operation of the lowering cuDNN turned down.
inline void add_operation_named(Lowering &lowering, Descriptor operation, const std::string &what) {
  try {
    lowering.add_operation(std::move(operation));
  } catch (const Error &e) {
    throw Error(e.status(), cat(what, ": ", e.message()));
  }
}

}  // namespace cudnnfe::backend
