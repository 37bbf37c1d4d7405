// Device memory a plan set owns: the contents of a lowering's constant
// tensors (Lowering::constant_tensor; ALiBi's slopes, say), uploaded once
// when the plan set is built, on its device, and freed with it. Execute only
// binds the pointers, so it stays allocation-free and capture-safe.
#pragma once

#include <cstddef>
#include <vector>

#include "backend/lowering.h"

namespace cudnnfe::backend {

class DeviceConstants {
 public:
  // Allocates one block on `device` and copies every tensor's bytes into
  // it (256-byte aligned slices). Throws CUDA_ERROR naming `what` failed.
  DeviceConstants(const std::vector<ConstantTensor> &tensors, int device);
  ~DeviceConstants();
  DeviceConstants(const DeviceConstants &) = delete;
  DeviceConstants &operator=(const DeviceConstants &) = delete;

  size_t size() const { return offsets_.size(); }
  // The device address of tensor `i` (the order given).
  void *pointer(size_t i) const { return static_cast<char *>(base_) + offsets_[i]; }

 private:
  void *base_ = nullptr;
  std::vector<size_t> offsets_;
};

}  // namespace cudnnfe::backend
