// What validation checks a graph against beyond its shapes and types: the
// GPU it is meant for. A graph for the CPU reference (gpu false) is refused
// only when malformed: the reference computes every well-formed graph. A
// graph for a GPU is also held to the support rules of cudnn-frontend and
// cuDNN for that architecture and cuDNN version (docs/refusals.md), which
// fail with NOT_SUPPORTED at validation, where cudnn-frontend refuses them.
#pragma once

#include <cstddef>

namespace cudnnfe {

struct SupportTarget {
  bool gpu = false;
  // The loaded cuDNN's version (91900 for 9.19.0); 0: unknown, and the rules
  // gated on a version wait for the build, which knows it.
  size_t cudnn_version = 0;
  // The architecture (90 for compute capability 9.0); 0: unknown, and the
  // rules gated on an architecture wait for the build.
  int sm = 0;
};

}  // namespace cudnnfe
