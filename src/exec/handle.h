// An execution context: one thread's GPU state and its last error message.
#pragma once

#include <string>

namespace cudnnfe {

struct Handle {
  // CUDA device this handle runs on; -1 until the first GPU use fixes it.
  int device = -1;
  // cudnnHandle_t, created by the backend at first GPU use.
  void *cudnn = nullptr;
  // Stream last given to cudnnSetStream, to skip redundant calls.
  void *stream = nullptr;
  bool stream_set = false;
  std::string last_error;
};

}  // namespace cudnnfe
