// Graph construction scales linearly: 100,000 nodes are added and
// validated within a bound on user-space instructions (a hardware counter,
// not a wall clock), which the old quadratic name checks exceeded by far.
// Skips where the kernel gives no instruction counter (some containers).
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include "harness.h"

namespace {

// User-space instructions retired by this thread; -1 when unavailable.
class InstructionCounter {
 public:
  InstructionCounter() {
    perf_event_attr attr;
    std::memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = PERF_COUNT_HW_INSTRUCTIONS;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    fd_ = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
    if (fd_ >= 0) {
      ioctl(fd_, PERF_EVENT_IOC_RESET, 0);
      ioctl(fd_, PERF_EVENT_IOC_ENABLE, 0);
    }
  }
  ~InstructionCounter() {
    if (fd_ >= 0) close(fd_);
  }
  bool available() const { return fd_ >= 0; }
  int64_t read_count() const {
    int64_t count = -1;
    if (fd_ < 0 || ::read(fd_, &count, sizeof(count)) != sizeof(count)) return -1;
    return count;
  }

 private:
  int fd_ = -1;
};

// The old add_node compared each new name with every node's: about 5e9
// string comparisons for 100,000 nodes (31 s). Linear construction takes
// about 2e9 instructions here in Release; the bound leaves room for
// sanitizer builds (3-5x) and other compilers.
constexpr int kNodes = 100000;
constexpr int64_t kInstructionBound = 40'000'000'000;

// Builds and validates a chain of `nodes` relu nodes with automatic names
// (the path that searched for a free name per node).
void build_chain(int nodes) {
  cudnnfe_graph_t *g;
  REQUIRE_OK(cudnnfe_graph_create(&g));
  const int64_t dims[] = {1};
  int64_t x = 0, y = 0;
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "x", CUDNNFE_DTYPE_FLOAT, 1, dims, nullptr, &x));
  for (int i = 0; i < nodes; ++i) {
    REQUIRE_OK(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_RELU_FWD, x, 0, 0, nullptr, &y));
    x = y;
  }
  REQUIRE_OK(cudnnfe_tensor_set_output(g, y, 1));
  REQUIRE_OK(cudnnfe_graph_validate(g));
  size_t count = 0;
  REQUIRE_OK(cudnnfe_graph_get_node_count(g, &count));
  CHECK(count == static_cast<size_t>(nodes));
  int64_t found = 0;
  REQUIRE_OK(cudnnfe_graph_find_tensor(
      g, ("pointwise_" + std::to_string(nodes - 1) + "::out").c_str(), &found));
  CHECK(found == y);
  REQUIRE_OK(cudnnfe_graph_destroy(g));
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace

TEST(hundred_thousand_nodes_build_in_linear_work) {
  InstructionCounter counter;
  if (!counter.available() || counter.read_count() < 0)
    SKIP("no hardware instruction counter (perf_event_open refused); see the CPU-time ratio case");
  const int64_t start = counter.read_count();
  build_chain(kNodes);
  const int64_t used = counter.read_count() - start;
  std::printf("  %d nodes: %.2e user instructions (bound %.0e)\n", kNodes,
              static_cast<double>(used), static_cast<double>(kInstructionBound));
  CHECK(used < kInstructionBound);
}

// Where no counter exists: ten times the nodes must cost well under a
// hundred times the CPU time (quadratic growth). A ratio of this thread's
// CPU time, so machine speed and other processes cancel out.
TEST(ten_times_the_nodes_costs_about_ten_times_the_cpu_time) {
  const double t0 = thread_cpu_seconds();
  build_chain(kNodes / 10);
  const double t1 = thread_cpu_seconds();
  build_chain(kNodes);
  const double t2 = thread_cpu_seconds();
  const double ratio = (t2 - t1) / std::max(t1 - t0, 1e-6);
  std::printf("  %d nodes: %.3f s CPU; %d nodes: %.3f s CPU; ratio %.1f (quadratic: ~100)\n",
              kNodes / 10, t1 - t0, kNodes, t2 - t1, ratio);
  CHECK(ratio < 40.0);
}
