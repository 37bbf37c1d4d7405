// Runs cuDNN / CUDA runtime discovery once in a fresh process and checks
// what cudnnfe_library_info reports: one CTest case per rule of the search
// order (tests/discovery/CMakeLists.txt sets the environment and the fake
// libraries). Does not test the real cuDNN: tests/test_gpu_* do.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cudnnfe/cudnnfe.h"

namespace {

int failures = 0;

void check(bool ok, const std::string &what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
  if (!ok) ++failures;
}

std::vector<std::string> log_lines;

void collect(cudnnfe_log_level_t level, const char *message, void *user_data) {
  static_cast<std::vector<std::string> *>(user_data)->push_back(message);
}

cudnnfe_library_t library_of(const char *name) {
  return std::strcmp(name, "cudart") == 0 ? CUDNNFE_LIBRARY_CUDART : CUDNNFE_LIBRARY_CUDNN;
}

bool ends_with(const std::string &s, const std::string &tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// --expect LIB ORIGIN PATH_TAIL VERSION [REASON_PART]
void expect(const cudnnfe_library_info_t &info, char **a) {
  const bool cudnn = library_of(a[0]) == CUDNNFE_LIBRARY_CUDNN;
  const std::string path = cudnn ? info.cudnn_path : info.cudart_path;
  const std::string reason = cudnn ? info.cudnn_reason : info.cudart_reason;
  const int origin = cudnn ? info.cudnn_origin : info.cudart_origin;
  const long long version = cudnn ? info.cudnn_version : info.cudart_version;
  check(origin == std::atoi(a[1]), std::string(a[0]) + " origin " + std::to_string(origin) +
                                       " (expected " + a[1] + "), reason: " + reason);
  check(ends_with(path, a[2]), std::string(a[0]) + " path '" + path + "' ends with '" + a[2] + "'");
  check(version == std::atoll(a[3]), std::string(a[0]) + " version " + std::to_string(version));
}

}  // namespace

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--preload") && i + 1 < argc) {
      ++i;
      check(dlopen(argv[i], RTLD_NOW | RTLD_LOCAL) != nullptr, std::string("preloaded ") + argv[i]);
    } else if (!std::strcmp(argv[i], "--search-dir") && i + 2 < argc) {
      check(
          cudnnfe_library_add_search_dir(library_of(argv[i + 1]), argv[i + 2]) == CUDNNFE_STATUS_OK,
          std::string("added search dir ") + argv[i + 2]);
      i += 2;
    } else if (!std::strcmp(argv[i], "--log-callback")) {
      check(cudnnfe_set_log_callback(collect, &log_lines, CUDNNFE_LOG_LEVEL_INFO) ==
                CUDNNFE_STATUS_OK,
            "log callback set");
    }
  }
  cudnnfe_library_info_t info;
  cudnnfe_library_info_init(&info);
  check(cudnnfe_library_info(&info) == CUDNNFE_STATUS_OK, "cudnnfe_library_info");
  std::printf("cudnnfe: %s\ncudnn: %s v%lld origin %d (%s)\ncudart: %s v%lld origin %d (%s)\n",
              info.cudnnfe_path, info.cudnn_path, static_cast<long long>(info.cudnn_version),
              info.cudnn_origin, info.cudnn_reason, info.cudart_path,
              static_cast<long long>(info.cudart_version), info.cudart_origin, info.cudart_reason);
  check(std::strstr(info.cudnnfe_path, "libcudnnfe"), "cudnnfe_path names libcudnnfe");
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--expect") && i + 4 < argc) {
      expect(info, argv + i + 1);
      i += 4;
    } else if (!std::strcmp(argv[i], "--reason-has") && i + 1 < argc) {
      ++i;
      check(std::strstr(info.cudnn_reason, argv[i]) != nullptr,
            std::string("cuDNN reason has '") + argv[i] + "'");
    } else if (!std::strcmp(argv[i], "--log-has") && i + 1 < argc) {
      ++i;
      bool seen = false;
      for (const std::string &line : log_lines) seen = seen || line.find(argv[i]) != line.npos;
      check(seen, std::string("a log line has '") + argv[i] + "'");
    }
  }
  // Directories added after the search are refused, not silently ignored.
  check(
      cudnnfe_library_add_search_dir(CUDNNFE_LIBRARY_CUDNN, "/late") == CUDNNFE_STATUS_WRONG_STATE,
      "a search dir added after loading is refused (WRONG_STATE)");
  check(cudnnfe_library_add_search_dir(7, "/x") == CUDNNFE_STATUS_INVALID_ARGUMENT,
        "an unknown library is refused");
  check(cudnnfe_set_log_callback(nullptr, nullptr, 9) == CUDNNFE_STATUS_INVALID_ARGUMENT,
        "an unknown log level is refused");
  std::printf("%d failure(s)\n", failures);
  return failures ? 1 : 0;
}
