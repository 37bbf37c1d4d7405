// Error type thrown inside the library and turned into a status at the C
// boundary (src/api/guard.h). Nothing else crosses the ABI.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/c_api.h"

namespace cudnnfe {

class Error : public std::exception {
 public:
  Error(cudnnfe_status_t status, std::string message)
      : status_(status), message_(std::move(message)) {}
  cudnnfe_status_t status() const { return status_; }
  const std::string &message() const { return message_; }
  const char *what() const noexcept override { return message_.c_str(); }

 private:
  cudnnfe_status_t status_;
  std::string message_;
};

// Concatenates anything streamable; used to build messages.
template <class... Parts>
std::string cat(const Parts &...parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

template <class... Parts>
[[noreturn]] void fail(cudnnfe_status_t status, const Parts &...parts) {
  throw Error(status, cat(parts...));
}

// Shorthands for the most common kinds.
template <class... Parts>
[[noreturn]] void fail_argument(const Parts &...parts) {
  fail(CUDNNFE_STATUS_INVALID_ARGUMENT, parts...);
}
template <class... Parts>
[[noreturn]] void fail_graph(const Parts &...parts) {
  fail(CUDNNFE_STATUS_INVALID_GRAPH, parts...);
}

const char *status_name(cudnnfe_status_t status);

}  // namespace cudnnfe
