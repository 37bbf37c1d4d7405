// GPU tests of paged_cache_load through the C API: each graph is built for
// the GPU and for the CPU reference, run on the same inputs (a random HALF
// or BF16 container, a shuffled page table, fixed lengths) and compared
// exactly (a gather copies values) over the rows j < seq_len[n]; later rows
// are unspecified on the GPU. GPU outputs start as NaN, so an unwritten
// valid row fails. Shapes follow cudnn-frontend's paged attention samples
// (container [num_pages, h, page_size, d], page table [b, 1, pages, 1]).
//
// cuDNN runs PAGED_CACHE_LOAD only fused into attention (cudnn-frontend
// adds it inside sdpa only): on an H200 with cuDNN 9.19 all three cases are
// refused with NOT_SUPPORTED ("heuristics A offered no engine ...
// (mmaNodeCount == 0) && !is_pointwise_fusion", 2026-11-28), which the test
// checks names the op and cuDNN and prints; a cuDNN that runs it alone gets
// its values compared. Without a GPU every case skips.
// Uses the experimental part of the header (include/cudnnfe/cudnnfe.h).
#define CUDNNFE_EXPERIMENTAL
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_tensor_data.h"
#include "gpu_test_support.h"
#include "gpu_util.h"
#include "harness.h"

namespace {

using namespace gpu_test;
using Ints = std::vector<int32_t>;

struct Case {
  std::string label;
  cudnnfe_dtype_t io = CUDNNFE_DTYPE_HALF;
  int64_t b = 3, h = 4, page_size = 16, pages = 4, d = 64;
  Ints lengths;
  bool keys_transposed = false;  // y strides [h*d*s, d*s, 1, s]: K^T's layout
};

struct Built {
  GraphPtr graph;
  std::vector<int64_t> uids;  // container, seq_len, page_table, y
};

Built make_graph(const Case &c) {
  Built g{new_graph(c.label, c.io), {}};
  auto add = [&](const char *name, cudnnfe_dtype_t t, const Dims &dims) {
    int64_t uid = 0;
    ok(cudnnfe_graph_add_tensor(g.graph.get(), name, t, 4, dims.data(), nullptr, &uid), name);
    g.uids.push_back(uid);
    return uid;
  };
  const int64_t container = add("container", c.io, {c.b * c.pages, c.h, c.page_size, c.d});
  const int64_t seq_len = add("seq_len", CUDNNFE_DTYPE_INT32, {c.b, 1, 1, 1});
  const int64_t table = add("page_table", CUDNNFE_DTYPE_INT32, {c.b, 1, c.pages, 1});
  cudnnfe_paged_cache_load_options_t o;
  cudnnfe_paged_cache_load_options_init(&o);
  o.name = "load";
  int64_t y = 0;
  ok(cudnnfe_graph_add_paged_cache_load(g.graph.get(), container, seq_len, table, &o, &y), "add");
  if (c.keys_transposed) {
    const int64_t s = c.pages * c.page_size;
    const int64_t strides[] = {c.h * c.d * s, c.d * s, 1, s};
    ok(cudnnfe_tensor_set_strides(g.graph.get(), y, 4, strides), "set_strides");
  }
  ok(cudnnfe_tensor_set_output(g.graph.get(), y, 1), "set_output");
  g.uids.push_back(y);
  return g;
}

Bytes ints_bytes(const TensorInfo &t, const Ints &v) {
  Bytes b(t.bytes);
  std::memcpy(b.data(), v.data(), v.size() * sizeof(int32_t));
  return b;
}

// The inputs: a random container, the case's lengths and every page once, shuffled.
std::vector<Bytes> inputs(const Case &c, const std::vector<TensorInfo> &t) {
  std::mt19937 rng(seed_of(c.label));
  Ints pages(static_cast<size_t>(c.b * c.pages));
  for (size_t i = 0; i < pages.size(); ++i) pages[i] = static_cast<int32_t>(i);
  std::shuffle(pages.begin(), pages.end(), rng);
  return {random_bytes(t[0], Fill{}, rng), ints_bytes(t[1], c.lengths), ints_bytes(t[2], pages)};
}

Bytes download(const gpu::DeviceBuffer &d, size_t bytes) {
  Bytes b(bytes);
  const std::string err = gpu::cuda_check(
      gpu::runtime().Memcpy(b.data(), d.get(), bytes, gpu::kDeviceToHost), "cudaMemcpy");
  if (!err.empty()) throw Failure(err);
  return b;
}

void run_case(const Case &c) {
  Built gpu_graph = make_graph(c);
  const cudnnfe_status_t s = build_for(gpu_graph.graph.get(), CUDNNFE_TARGET_GPU);
  const std::string message = cudnnfe_graph_last_error(gpu_graph.graph.get());
  if (s == CUDNNFE_STATUS_NOT_SUPPORTED) {
    std::printf("  %-28s refused (allowed): %s\n", c.label.c_str(), message.c_str());
    CHECK_MSG(message.find("paged_cache_load") != std::string::npos &&
                  message.find("cuDNN") != std::string::npos,
              "the refusal does not name both paged_cache_load and cuDNN");
    return;
  }
  if (s != CUDNNFE_STATUS_OK)
    throw Failure("GPU build returned " + std::string(cudnnfe_status_name(s)) + ": " + message);
  Built cpu_graph = make_graph(c);
  ok(build_for(cpu_graph.graph.get(), CUDNNFE_TARGET_CPU_REFERENCE), "CPU build");

  std::vector<TensorInfo> t;
  for (int64_t uid : gpu_graph.uids) t.push_back(describe(gpu_graph.graph.get(), uid));
  std::vector<Bytes> host = inputs(c, t);
  const TensorInfo &out = t.back();
  Bytes want(out.bytes, 0);
  std::vector<void *> host_ptrs, device_ptrs;
  for (Bytes &b : host) host_ptrs.push_back(b.data());
  host_ptrs.push_back(want.data());
  execute_bound(cpu_graph.graph.get(), cpu_graph.uids, host_ptrs, nullptr, 0, "CPU reference");

  std::vector<gpu::DeviceBuffer> device;
  const Bytes nan(out.bytes, 0xff);
  for (size_t i = 0; i < t.size(); ++i) {
    device.emplace_back(t[i].bytes);
    if (!device[i].ok()) throw Failure("cudaMalloc failed");
    const void *src = i + 1 < t.size() ? host[i].data() : nan.data();
    const std::string err = gpu::cuda_check(
        gpu::runtime().Memcpy(device[i].get(), src, t[i].bytes, gpu::kHostToDevice), "cudaMemcpy");
    if (!err.empty()) throw Failure(err);
    device_ptrs.push_back(device[i].get());
  }
  int64_t ws = 0;
  ok(cudnnfe_graph_get_workspace_size(gpu_graph.graph.get(), &ws), "get_workspace_size");
  gpu::DeviceBuffer workspace(static_cast<size_t>(ws));
  execute_bound(gpu_graph.graph.get(), gpu_graph.uids, device_ptrs, workspace.get(),
                static_cast<size_t>(ws), "GPU");
  const std::string err =
      gpu::cuda_check(gpu::runtime().DeviceSynchronize(), "cudaDeviceSynchronize");
  if (!err.empty()) throw Failure(err);
  const Region valid = [&](const Dims &i) { return i[2] < c.lengths[static_cast<size_t>(i[0])]; };
  const Errors e =
      compare(out, download(device.back(), out.bytes), want, 0.0, NonFinite::kAlwaysBad, valid);
  std::printf("  %-28s %s max_abs %.2e over %lld elements%s\n", c.label.c_str(),
              dims_text(out.dims).c_str(), e.max_abs, static_cast<long long>(e.compared),
              e.bad ? "  MISMATCH" : "");
  if (e.bad) {
    std::printf("    %lld differ; first at %s\n", static_cast<long long>(e.bad),
                e.first_bad.c_str());
    ++testing::state().failures;
  }
}

void check_case(const Case &c) {
  std::string skip;
  if (!gpu_ready(&skip)) SKIP(skip);
  try {
    run_case(c);
  } catch (const Failure &f) {
    std::printf("  %s FAILED: %s\n", c.label.c_str(), f.what());
    ++testing::state().failures;
  }
}

}  // namespace

TEST(paged_cache_load_values_half) {
  Case c;
  c.label = "paged values half";
  c.lengths = {64, 17, 1};
  check_case(c);
}

TEST(paged_cache_load_values_bf16_partial_pages) {
  Case c;
  c.label = "paged values bf16";
  c.io = CUDNNFE_DTYPE_BFLOAT16;
  c.b = 2, c.h = 2, c.page_size = 32, c.pages = 3, c.d = 128;
  c.lengths = {96, 33};
  check_case(c);
}

TEST(paged_cache_load_keys_transposed) {
  Case c;
  c.label = "paged keys (K^T layout)";
  c.lengths = {64, 64, 40};
  c.keys_transposed = true;
  check_case(c);
}
