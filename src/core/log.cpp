// The diagnostics log's level and sink: CUDNNFE_LOG read once, replaced by
// cudnnfe_set_log_callback. Formats nothing but the stderr prefix; callers
// build their lines (core/log.h).
#include "core/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace cudnnfe {
namespace {

// Unset, "", "0" and "off" are off; "1"/"info" and "2"/"debug" are those
// levels. Anything else is INFO with a warning, so a typo still logs.
cudnnfe_log_level_t level_from_environment() {
  const char *env = std::getenv("CUDNNFE_LOG");
  if (!env || !*env || !std::strcmp(env, "0") || !std::strcmp(env, "off"))
    return CUDNNFE_LOG_LEVEL_OFF;
  if (!std::strcmp(env, "1") || !std::strcmp(env, "info")) return CUDNNFE_LOG_LEVEL_INFO;
  if (!std::strcmp(env, "2") || !std::strcmp(env, "debug")) return CUDNNFE_LOG_LEVEL_DEBUG;
  std::fprintf(stderr, "cudnnfe: CUDNNFE_LOG=%s is not off, info or debug; logging at info\n", env);
  return CUDNNFE_LOG_LEVEL_INFO;
}

struct Sink {
  std::mutex mutex;  // serializes lines and guards the callback
  cudnnfe_log_callback_t callback = nullptr;
  void *user_data = nullptr;
};

Sink &sink() {
  static Sink s;
  return s;
}

// -1 until the environment has been read.
std::atomic<int32_t> current_level{-1};

}  // namespace

bool log_enabled(cudnnfe_log_level_t level) {
  int32_t current = current_level.load(std::memory_order_relaxed);
  if (current < 0) {
    int32_t unread = -1;
    current_level.compare_exchange_strong(unread, level_from_environment());
    current = current_level.load();
  }
  return level != CUDNNFE_LOG_LEVEL_OFF && level <= current;
}

void log_write(cudnnfe_log_level_t level, const std::string &line) {
  Sink &s = sink();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.callback) {
    s.callback(level, line.c_str(), s.user_data);
    return;
  }
  std::fprintf(stderr, "cudnnfe [%s] %s\n", level == CUDNNFE_LOG_LEVEL_DEBUG ? "debug" : "info",
               line.c_str());
}

void log_set_sink(cudnnfe_log_callback_t callback, void *user_data, cudnnfe_log_level_t level) {
  Sink &s = sink();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.callback = callback;
  s.user_data = user_data;
  current_level.store(level);
}

}  // namespace cudnnfe
