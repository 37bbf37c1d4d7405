// The diagnostics log through its C functions: a host callback receives one
// line per build stage at the level it asked for, and nothing when the level
// is OFF. Library-loading lines are tested by tests/discovery.
#include <string>
#include <vector>

#include "harness.h"

namespace {

struct Lines {
  std::vector<std::string> text;
  std::vector<cudnnfe_log_level_t> levels;
};

void collect(cudnnfe_log_level_t level, const char *message, void *user_data) {
  auto *lines = static_cast<Lines *>(user_data);
  lines->text.push_back(message);
  lines->levels.push_back(level);
}

// Builds y = x + x on the CPU reference; returns false on failure.
bool build_small_graph(const char *name) {
  cudnnfe_graph_t *g = nullptr;
  if (cudnnfe_graph_create(&g) != CUDNNFE_STATUS_OK) return false;
  const int64_t dims[2] = {2, 3};
  int64_t x = 0, y = 0;
  bool ok = cudnnfe_graph_set_name(g, name) == CUDNNFE_STATUS_OK &&
            cudnnfe_graph_add_tensor(g, "x", CUDNNFE_DTYPE_FLOAT, 2, dims, nullptr, &x) ==
                CUDNNFE_STATUS_OK &&
            cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_ADD, x, x, 0, nullptr, &y) ==
                CUDNNFE_STATUS_OK &&
            cudnnfe_tensor_set_output(g, y, 1) == CUDNNFE_STATUS_OK;
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = CUDNNFE_TARGET_CPU_REFERENCE;
  ok = ok && cudnnfe_graph_build(g, nullptr, &options) == CUDNNFE_STATUS_OK;
  cudnnfe_graph_destroy(g);
  return ok;
}

bool has_line(const Lines &lines, const std::string &part) {
  for (const std::string &line : lines.text)
    if (line.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(callback_receives_one_line_per_build) {
  Lines lines;
  REQUIRE_OK(cudnnfe_set_log_callback(collect, &lines, CUDNNFE_LOG_LEVEL_DEBUG));
  REQUIRE(build_small_graph("logged"));
  CHECK_MSG(has_line(lines, "build \"logged\": CPU reference plan; validate "),
            "no build line among %zu line(s)", lines.text.size());
  for (const std::string &line : lines.text) CHECK(line.find('\n') == std::string::npos);
  for (cudnnfe_log_level_t level : lines.levels)
    CHECK(level == CUDNNFE_LOG_LEVEL_INFO || level == CUDNNFE_LOG_LEVEL_DEBUG);
  REQUIRE_OK(cudnnfe_set_log_callback(nullptr, nullptr, CUDNNFE_LOG_LEVEL_OFF));
}

TEST(level_off_sends_nothing) {
  Lines lines;
  REQUIRE_OK(cudnnfe_set_log_callback(collect, &lines, CUDNNFE_LOG_LEVEL_OFF));
  REQUIRE(build_small_graph("quiet"));
  CHECK_MSG(lines.text.empty(), "%zu line(s) at level OFF", lines.text.size());
  REQUIRE_OK(cudnnfe_set_log_callback(nullptr, nullptr, CUDNNFE_LOG_LEVEL_OFF));
}

TEST(bad_level_is_refused_and_keeps_the_sink) {
  Lines lines;
  REQUIRE_OK(cudnnfe_set_log_callback(collect, &lines, CUDNNFE_LOG_LEVEL_INFO));
  CHECK_FAILS(cudnnfe_set_log_callback(nullptr, nullptr, 3), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "log level 3");
  REQUIRE(build_small_graph("still_logged"));
  CHECK(has_line(lines, "build \"still_logged\""));
  REQUIRE_OK(cudnnfe_set_log_callback(nullptr, nullptr, CUDNNFE_LOG_LEVEL_OFF));
}
