// The search for a run-time library file: the four rules of
// include/cudnnfe/cudnnfe.h in order, each attempt recorded for the error
// message. Symbols and versions are checked by backend/loader.cpp.
#include "backend/library_search.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <mutex>

#include "core/error.h"

namespace cudnnfe::backend {
namespace {

struct SearchDirs {
  std::mutex mutex;
  std::vector<std::string> dirs[2];  // by cudnnfe_library_t
  bool searched[2] = {false, false};
};

SearchDirs &search_dirs() {
  static SearchDirs s;
  return s;
}

bool is_known(cudnnfe_library_t library) {
  return library == CUDNNFE_LIBRARY_CUDNN || library == CUDNNFE_LIBRARY_CUDART;
}

// The file behind a handle: the loader's link map names it even when it was
// opened by soname.
std::string path_of(void *handle, const std::string &fallback) {
  struct link_map *map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
    return map->l_name;
  return fallback;
}

// One dlopen; on failure appends "name: dlerror" to `tried`.
void *try_open(const std::string &name, int flags, std::string *tried) {
  dlerror();
  void *handle = dlopen(name.c_str(), flags);
  if (handle) return handle;
  const char *why = dlerror();
  *tried += cat(tried->empty() ? "" : "; ", name, ": ", why ? why : "unknown dlopen error");
  return nullptr;
}

FoundLibrary found(void *handle, const std::string &name, cudnnfe_library_origin_t origin,
                   std::string reason) {
  return FoundLibrary{handle, path_of(handle, name), origin, std::move(reason)};
}

// Rule 2: a copy some other library of the process already loaded, found by
// soname without loading anything (RTLD_NOLOAD).
FoundLibrary already_loaded(const LibrarySpec &spec) {
  for (const std::string &soname : spec.sonames) {
    void *handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (handle)
      return found(handle, soname, CUDNNFE_LIBRARY_ORIGIN_ALREADY_LOADED,
                   cat(soname, " was already loaded in the process"));
  }
  dlerror();  // RTLD_NOLOAD misses set an error nobody reads
  return {};
}

std::vector<std::string> take_search_dirs(cudnnfe_library_t library) {
  SearchDirs &s = search_dirs();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.searched[library] = true;
  return s.dirs[library];
}

}  // namespace

FoundLibrary find_library(const LibrarySpec &spec) {
  const std::vector<std::string> dirs = take_search_dirs(spec.library);
  const int flags = RTLD_NOW | RTLD_LOCAL;
  std::string tried;
  const char *env = std::getenv(spec.env_var);
  if (env && *env) {
    // Only the named file: a wrong override must fail, not fall back.
    if (void *handle = try_open(env, flags, &tried))
      return found(handle, env, CUDNNFE_LIBRARY_ORIGIN_ENVIRONMENT, cat(spec.env_var, " is set"));
    return FoundLibrary{nullptr, "", CUDNNFE_LIBRARY_ORIGIN_NOT_LOADED,
                        cat(spec.env_var, " names a file that does not load (", tried, ")")};
  }
  FoundLibrary loaded = already_loaded(spec);
  if (loaded.handle) return loaded;
  for (const std::string &dir : dirs)
    for (const std::string &soname : spec.sonames) {
      const std::string path = cat(dir, "/", soname);
      if (void *handle = try_open(path, flags, &tried))
        return found(handle, path, CUDNNFE_LIBRARY_ORIGIN_SEARCH_DIR,
                     cat("found in search directory ", dir));
    }
  for (const std::string &soname : spec.sonames)
    if (void *handle = try_open(soname, flags, &tried))
      return found(handle, soname, CUDNNFE_LIBRARY_ORIGIN_SYSTEM,
                   cat("the system loader found ", soname));
  return FoundLibrary{
      nullptr, "", CUDNNFE_LIBRARY_ORIGIN_NOT_LOADED,
      cat(spec.title, " could not be loaded (not loaded in the process; tried ", tried, ")")};
}

void add_search_dir(cudnnfe_library_t library, const std::string &directory) {
  if (!is_known(library))
    fail_argument("library ", library, " is not CUDNNFE_LIBRARY_CUDNN (0) or _CUDART (1)");
  if (directory.empty()) fail_argument("the search directory is empty");
  SearchDirs &s = search_dirs();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.searched[library])
    fail(CUDNNFE_STATUS_WRONG_STATE, "cannot add search directory ", directory, ": ",
         library == CUDNNFE_LIBRARY_CUDNN ? "cuDNN" : "the CUDA runtime",
         " has already been looked for (directories must be added before first use)");
  s.dirs[library].push_back(directory);
}

}  // namespace cudnnfe::backend
