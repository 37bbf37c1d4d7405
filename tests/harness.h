// A minimal test harness (no third-party dependency, so CI and the GPU
// machine need nothing installed): TEST() registers a case, CHECK* record
// failures, SKIP() marks a case skipped with a reason. main() is provided by
// defining CUDNNFE_TEST_MAIN in exactly one file of each test binary, and it
// ends with the line "N passed, N failed, N skipped".
#pragma once

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "cudnnfe/cudnnfe.h"

namespace testing {

struct Case {
  const char *name;
  std::function<void()> body;
};

inline std::vector<Case> &registry() {
  static std::vector<Case> cases;
  return cases;
}

struct Registrar {
  Registrar(const char *name, std::function<void()> body) {
    registry().push_back({name, std::move(body)});
  }
};

struct State {
  int failures = 0;
  bool skipped = false;
  std::string skip_reason;
};

inline State &state() {
  static State s;
  return s;
}

struct SkipCase {};

}  // namespace testing

#define TEST_CONCAT2(a, b) a##b
#define TEST_CONCAT(a, b) TEST_CONCAT2(a, b)
#define TEST(name)                                                             \
  static void test_##name();                                                   \
  static testing::Registrar TEST_CONCAT(registrar_, name)(#name, test_##name); \
  static void test_##name()

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      std::printf("  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
      ++testing::state().failures;                                           \
    }                                                                        \
  } while (0)

#define CHECK_MSG(cond, ...)                                                 \
  do {                                                                       \
    if (!(cond)) {                                                           \
      std::printf("  %s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      std::printf(__VA_ARGS__);                                              \
      std::printf("\n");                                                     \
      ++testing::state().failures;                                           \
    }                                                                        \
  } while (0)

// Stops the case at the first failure (for setup that later steps need).
#define REQUIRE(cond)                                                          \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::printf("  %s:%d: REQUIRE(%s) failed\n", __FILE__, __LINE__, #cond); \
      ++testing::state().failures;                                             \
      return;                                                                  \
    }                                                                          \
  } while (0)

// A status check that prints the library's message when it fails.
#define CHECK_OK(expr)                                                         \
  do {                                                                         \
    cudnnfe_status_t check_ok_status = (expr);                                 \
    if (check_ok_status != CUDNNFE_STATUS_OK) {                                \
      std::printf("  %s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #expr,  \
                  cudnnfe_status_name(check_ok_status), cudnnfe_last_error()); \
      ++testing::state().failures;                                             \
    }                                                                          \
  } while (0)

#define REQUIRE_OK(expr)                                                         \
  do {                                                                           \
    cudnnfe_status_t require_ok_status = (expr);                                 \
    if (require_ok_status != CUDNNFE_STATUS_OK) {                                \
      std::printf("  %s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #expr,    \
                  cudnnfe_status_name(require_ok_status), cudnnfe_last_error()); \
      ++testing::state().failures;                                               \
      return;                                                                    \
    }                                                                            \
  } while (0)

// Expects `expr` to fail with `status` and a message containing each of the
// given substrings (the message of the calling thread).
#define CHECK_FAILS(expr, status, ...)                                                         \
  do {                                                                                         \
    cudnnfe_status_t check_fails_status = (expr);                                              \
    const char *check_fails_msg = cudnnfe_last_error();                                        \
    if (check_fails_status != (status)) {                                                      \
      std::printf("  %s:%d: %s returned %s, expected %s (message: %s)\n", __FILE__, __LINE__,  \
                  #expr, cudnnfe_status_name(check_fails_status), cudnnfe_status_name(status), \
                  check_fails_msg);                                                            \
      ++testing::state().failures;                                                             \
    } else {                                                                                   \
      for (const char *part : std::initializer_list<const char *>{__VA_ARGS__}) {              \
        if (!std::strstr(check_fails_msg, part)) {                                             \
          std::printf("  %s:%d: message of %s lacks \"%s\": %s\n", __FILE__, __LINE__, #expr,  \
                      part, check_fails_msg);                                                  \
          ++testing::state().failures;                                                         \
        }                                                                                      \
      }                                                                                        \
    }                                                                                          \
  } while (0)

#define SKIP(reason)                         \
  do {                                       \
    testing::state().skipped = true;         \
    testing::state().skip_reason = (reason); \
    return;                                  \
  } while (0)

#ifdef CUDNNFE_TEST_MAIN
int main(int argc, char **argv) {
  const char *filter = argc > 1 ? argv[1] : nullptr;
  int passed = 0, failed = 0, skipped = 0;
  for (const testing::Case &c : testing::registry()) {
    if (filter && !std::strstr(c.name, filter)) continue;
    testing::state() = testing::State{};
    std::printf("[ RUN  ] %s\n", c.name);
    std::fflush(stdout);
    c.body();
    if (testing::state().failures) {
      ++failed;
      std::printf("[ FAIL ] %s\n", c.name);
    } else if (testing::state().skipped) {
      ++skipped;
      std::printf("[ SKIP ] %s: %s\n", c.name, testing::state().skip_reason.c_str());
    } else {
      ++passed;
      std::printf("[  OK  ] %s\n", c.name);
    }
    std::fflush(stdout);
  }
  std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed ? 1 : 0;
}
#endif
