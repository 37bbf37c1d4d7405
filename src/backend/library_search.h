// Finding a run-time library file (cuDNN, the CUDA runtime) in the order of
// include/cudnnfe/cudnnfe.h: explicit variable, copy already loaded in the
// process, search directories, system loader. Resolves no symbols and checks
// no versions (backend/loader.cpp does).
#pragma once

#include <string>
#include <vector>

#include "core/c_api.h"

namespace cudnnfe::backend {

// What to look for.
struct LibrarySpec {
  cudnnfe_library_t library;
  const char *title;                 // "cuDNN", for messages
  const char *env_var;               // "CUDNNFE_CUDNN_LIBRARY"
  std::vector<std::string> sonames;  // preferred first
};

// The dlopen handle (null when nothing loaded), the file's path, the rule
// that chose it and a one-line reason; on failure `reason` lists every path
// tried with the loader's error.
struct FoundLibrary {
  void *handle = nullptr;
  std::string path;
  cudnnfe_library_origin_t origin = CUDNNFE_LIBRARY_ORIGIN_NOT_LOADED;
  std::string reason;
};

// Looks for the library once (callers hold their own once-flag); from then
// on add_search_dir refuses that library.
FoundLibrary find_library(const LibrarySpec &spec);

// Adds a search directory for `library` (rule 3). Throws WRONG_STATE after
// find_library ran for it, INVALID_ARGUMENT for bad arguments.
void add_search_dir(cudnnfe_library_t library, const std::string &directory);

}  // namespace cudnnfe::backend
