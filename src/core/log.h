// Diagnostics log: one line per event (libraries loaded, build stages with
// their times, engine choices and refusals, plan-cache hits and misses), to
// standard error or a host's callback. Errors do not go here: they are
// thrown (core/error.h) and returned as statuses.
#pragma once

#include <string>

#include "core/c_api.h"
#include "core/error.h"

namespace cudnnfe {

// True when lines of `level` are kept: one relaxed atomic read, so a call
// site costs nothing when logging is off. The first call reads CUDNNFE_LOG.
bool log_enabled(cudnnfe_log_level_t level);

// Sends one line (no newline) to the callback or standard error.
void log_write(cudnnfe_log_level_t level, const std::string &line);

// Replaces the sink (callback NULL: standard error) and the level.
void log_set_sink(cudnnfe_log_callback_t callback, void *user_data, cudnnfe_log_level_t level);

template <class... Parts>
void log_info(const Parts &...parts) {
  if (log_enabled(CUDNNFE_LOG_LEVEL_INFO)) log_write(CUDNNFE_LOG_LEVEL_INFO, cat(parts...));
}

template <class... Parts>
void log_debug(const Parts &...parts) {
  if (log_enabled(CUDNNFE_LOG_LEVEL_DEBUG)) log_write(CUDNNFE_LOG_LEVEL_DEBUG, cat(parts...));
}

}  // namespace cudnnfe
