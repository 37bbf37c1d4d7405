// bench_host_overhead: the library's own host time per execute, on any
// machine. It runs against the stub cuDNN and CUDA runtime of tests/stub,
// whose calls return at once, so what it measures is cudnnfe's work around
// cuDNN: argument checks, the binding lookup, the variant-pack cache, the
// stream check, the bound execution's checks, and the replay call. It does
// not measure cuDNN (bench_plans does that on a GPU).
//
// A graph (c = a * b, [8] FLOAT, or a chain with more bound tensors) is
// built for the CPU and given a one-candidate GPU plan from the stub.
//
// usage (one command line):
//   CUDNNFE_CUDNN_LIBRARY=<build>/tests/stub/lib/libcudnn.so.9
//   CUDNNFE_CUDART_LIBRARY=<build>/tests/stub/lib/libcudart.so.12
//   bench_host_overhead [calls]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api/objects.h"
#include "backend/descriptor.h"
#include "backend/gpu_plan.h"
#include "cudnnfe/cudnnfe.h"
#include "stub_plan.h"

using namespace cudnnfe;
using Clock = std::chrono::steady_clock;

namespace {

void ok(cudnnfe_status_t status, const char *what) {
  if (status == CUDNNFE_STATUS_OK) return;
  std::fprintf(stderr, "bench_host_overhead: %s: %s: %s\n", what, cudnnfe_status_name(status),
               cudnnfe_last_error());
  std::exit(1);
}

// `inputs` inputs of [8] FLOAT summed pairwise into one output; built for
// the CPU, then given a stub GPU plan.
struct StubGraph {
  cudnnfe_graph_t *g = nullptr;
  std::vector<int64_t> order;
  explicit StubGraph(int inputs) {
    ok(cudnnfe_graph_create(&g), "graph_create");
    const int64_t d[1] = {8};
    int64_t acc = 0;
    for (int i = 0; i < inputs; ++i) {
      int64_t x = 0;
      ok(cudnnfe_graph_add_tensor(g, ("x" + std::to_string(i)).c_str(), CUDNNFE_DTYPE_FLOAT, 1, d,
                                  nullptr, &x),
         "add_tensor");
      if (acc == 0) {
        acc = x;
        continue;
      }
      ok(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_ADD, acc, x, 0, nullptr, &acc), "add");
    }
    ok(cudnnfe_tensor_set_output(g, acc, 1), "set_output");
    cudnnfe_build_options_t o;
    cudnnfe_build_options_init(&o);
    o.target = CUDNNFE_TARGET_CPU_REFERENCE;
    ok(cudnnfe_graph_build(g, nullptr, &o), "build");
    stub::give_gpu_plan(g);
    order = graph_of(g).bound_uids();
  }
  ~StubGraph() { cudnnfe_graph_destroy(g); }
};

// Median nanoseconds per call over batches of 1000 calls.
double ns_per_call(int calls, const std::function<void()> &call) {
  for (int i = 0; i < 1000; ++i) call();
  std::vector<double> batches;
  for (int done = 0; done < calls; done += 1000) {
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < 1000; ++i) call();
    batches.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count() /
                      1000);
  }
  std::sort(batches.begin(), batches.end());
  return batches[batches.size() / 2];
}

void bench_graph(int inputs, int calls, cudnnfe_handle_t *h) {
  StubGraph sg(inputs);
  std::vector<float> storage(8 * sg.order.size());
  std::vector<void *> ordered;
  std::vector<cudnnfe_binding_t> bindings;
  for (size_t i = 0; i < sg.order.size(); ++i) {
    ordered.push_back(&storage[8 * i]);
    bindings.push_back({sg.order[i], &storage[8 * i]});
  }
  std::reverse(bindings.begin(), bindings.end());  // not the bound order
  void *stream = &storage[0];
  cudnnfe_bound_t *plain = nullptr, *replay = nullptr;
  cudnnfe_bind_options_t o;
  cudnnfe_bind_options_init(&o);
  ok(cudnnfe_graph_bind(&plain, sg.g, h, ordered.data(), ordered.size(), nullptr, 0, &o), "bind");
  o.cuda_graph = CUDNNFE_CUDA_GRAPH_CAPTURE;
  ok(cudnnfe_graph_bind(&replay, sg.g, h, ordered.data(), ordered.size(), nullptr, 0, &o), "bind");
  struct Row {
    const char *what;
    std::function<void()> call;
  };
  const Row rows[] = {
      {"cudnnfe_graph_execute",
       [&] {
         ok(cudnnfe_graph_execute(sg.g, h, bindings.data(), bindings.size(), nullptr, 0, stream),
            "execute");
       }},
      {"cudnnfe_graph_execute_ordered",
       [&] {
         ok(cudnnfe_graph_execute_ordered(sg.g, h, ordered.data(), ordered.size(), nullptr, 0,
                                          stream),
            "execute_ordered");
       }},
      {"cudnnfe_bound_execute", [&] { ok(cudnnfe_bound_execute(plain, stream), "bound"); }},
      {"cudnnfe_bound_execute (CUDA graph)",
       [&] { ok(cudnnfe_bound_execute(replay, stream), "bound replay"); }},
  };
  for (const Row &r : rows)
    std::printf("| %2zu bound tensors | %-36s | %8.1f |\n", sg.order.size(), r.what,
                ns_per_call(calls, r.call));
  cudnnfe_bound_destroy(plain);
  cudnnfe_bound_destroy(replay);
}

}  // namespace

int main(int argc, char **argv) {
  const int calls = argc > 1 ? std::max(1000, std::atoi(argv[1])) : 200000;
  if (!std::getenv("CUDNNFE_CUDNN_LIBRARY") || !std::getenv("CUDNNFE_CUDART_LIBRARY")) {
    std::fprintf(stderr,
                 "bench_host_overhead: set CUDNNFE_CUDNN_LIBRARY and CUDNNFE_CUDART_LIBRARY to "
                 "the stub libraries of tests/stub (see the top of bench_host_overhead.cpp)\n");
    return 2;
  }
  cudnnfe_handle_t *h = nullptr;
  ok(cudnnfe_handle_create(&h, -1), "handle_create");
  std::printf("Host ns per call against a stub cuDNN that returns at once (median of batches)\n");
  std::printf("| %-16s | %-36s | %8s |\n", "graph", "call", "ns");
  for (int inputs : {2, 8}) bench_graph(inputs, calls, h);
  cudnnfe_handle_destroy(h);
  return 0;
}
