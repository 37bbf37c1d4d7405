// One GPU test case as GPU test binaries made of many small cases run it:
// the graph a builder makes is built for the GPU and for the CPU reference,
// both run on the same random inputs, and every output is compared element
// by element (gpu_tensor_data.h's compare) and printed with its largest
// errors. A case cuDNN refuses (NOT_SUPPORTED at build) is counted and
// listed as refused, never passed; any other error fails the case. An
// output may also carry the strides its caller allocates (a torch
// channels_last Y): the graph's must address the same memory, or the case
// fails (a layout the caller did not mean is a wrong answer even where GPU
// and CPU agree). case_tally() keeps the counts for a summary.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gpu_tensor_data.h"
#include "gpu_test_support.h"
#include "gpu_util.h"
#include "harness.h"
#include "test_layouts.h"

namespace gpu_test {

// cuDNN may run FLOAT math on TF32 tensor cores, whose 10-bit mantissa would
// make an fp32 tolerance of 1e-4 meaningless; a binary that includes this
// header asks for full fp32 (set before cuDNN loads).
[[maybe_unused]] inline const bool kCaseRunnerTf32Off = [] {
  setenv("NVIDIA_TF32_OVERRIDE", "0", 0);
  return true;
}();

// Relative tolerance per I/O type, with gpu_tensor_data.h's absolute floor
// of the same fraction of the output's largest magnitude.
inline double case_rtol(cudnnfe_dtype_t dtype) {
  switch (dtype) {
    case CUDNNFE_DTYPE_HALF: return 1e-2;
    case CUDNNFE_DTYPE_BFLOAT16: return 2e-2;
    default: return 1e-4;
  }
}

// What a builder declares besides the graph: its outputs (with the layout a
// caller would allocate for each, where the case checks it) and fills.
struct CaseSpec {
  std::vector<int64_t> outputs;
  std::map<int64_t, Dims> caller_strides;
  std::map<int64_t, Fill> fills;
  void output(cudnnfe_graph_t *g, int64_t uid, const Dims &strides = {}) {
    ok(cudnnfe_tensor_set_output(g, uid, 1), "cudnnfe_tensor_set_output");
    outputs.push_back(uid);
    if (!strides.empty()) caller_strides[uid] = strides;
  }
};

using CaseBuilder = std::function<void(cudnnfe_graph_t *, CaseSpec &)>;

struct CaseTally {
  int passed = 0, failed = 0, refused = 0;
  std::vector<std::string> refusals, failures;
  double worst_rel = 0;
  std::string worst_where;
};

inline CaseTally &case_tally() {
  static CaseTally tally;
  return tally;
}

inline void execute_case(cudnnfe_graph_t *g, const std::vector<TensorInfo> &tensors,
                         const std::vector<void *> &buffers, void *workspace, size_t workspace_size,
                         const char *what) {
  std::vector<cudnnfe_binding_t> bindings;
  for (size_t i = 0; i < tensors.size(); ++i) bindings.push_back({tensors[i].uid, buffers[i]});
  const cudnnfe_status_t s = cudnnfe_graph_execute(
      g, test_handle(), bindings.data(), bindings.size(), workspace, workspace_size, nullptr);
  if (s != CUDNNFE_STATUS_OK)
    throw Failure(std::string(what) + " execute returned " + cudnnfe_status_name(s) + ": " +
                  cudnnfe_handle_last_error(test_handle()));
}

// Builds with `build` for `target`; NOT_SUPPORTED is returned, any other
// failure thrown.
inline cudnnfe_status_t build_case(cudnnfe_graph_t *g, int32_t target) {
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = target;
  const cudnnfe_status_t s = cudnnfe_graph_build(g, test_handle(), &options);
  if (s != CUDNNFE_STATUS_OK &&
      !(s == CUDNNFE_STATUS_NOT_SUPPORTED && target == CUDNNFE_TARGET_GPU))
    throw Failure(std::string(target == CUDNNFE_TARGET_GPU ? "GPU" : "CPU reference") +
                  " build returned " + cudnnfe_status_name(s) + ": " + cudnnfe_graph_last_error(g));
  return s;
}

// A case's bound tensors after both targets ran it on the same inputs.
struct CaseRun {
  std::vector<TensorInfo> tensors;  // is_output set from the case's outputs
  std::vector<Bytes> reference;     // the CPU reference's buffers: inputs and its outputs
  std::vector<Bytes> gpu;           // the GPU's outputs read back (empty for inputs)
  std::string plan;                 // the GPU plan's name
  int64_t workspace_size = 0;       // the GPU plan's
};

// Runs two built graphs of one case, for the GPU and for the CPU reference,
// on the same random inputs (`fills` by UID, seeded by `seed`). GPU outputs
// start as 0xff bytes, so an element the plan never writes shows.
inline CaseRun run_on_both(cudnnfe_graph_t *gpu_graph, cudnnfe_graph_t *cpu_graph,
                           const std::vector<int64_t> &outputs,
                           const std::map<int64_t, Fill> &fills, uint32_t seed) {
  size_t count = 0;
  ok(cudnnfe_graph_get_bound_uids(gpu_graph, nullptr, 0, &count), "get_bound_uids");
  std::vector<int64_t> uids(count);
  ok(cudnnfe_graph_get_bound_uids(gpu_graph, uids.data(), count, &count), "get_bound_uids");
  std::mt19937 rng(seed);
  CaseRun run;
  std::vector<gpu::DeviceBuffer> device;
  for (int64_t uid : uids) {
    TensorInfo t = describe(gpu_graph, uid);
    const TensorInfo on_cpu = describe(cpu_graph, uid);
    if (on_cpu.dims != t.dims || on_cpu.strides != t.strides)
      throw Failure("tensor " + t.name + " has another shape on the CPU reference");
    t.is_output = std::count(outputs.begin(), outputs.end(), uid) > 0;
    const auto fill = fills.find(uid);
    run.reference.push_back(
        t.is_output ? Bytes(t.bytes, 0)
                    : random_bytes(t, fill == fills.end() ? Fill{} : fill->second, rng));
    device.emplace_back(t.bytes);
    if (!device.back().ok()) throw Failure("cudaMalloc of " + std::to_string(t.bytes) + " failed");
    const std::string err =
        t.is_output ? gpu::cuda_check(gpu::runtime().Memset(device.back().get(), 0xff, t.bytes),
                                      "cudaMemset")
                    : gpu::cuda_check(
                          gpu::runtime().Memcpy(device.back().get(), run.reference.back().data(),
                                                t.bytes, gpu::kHostToDevice),
                          "cudaMemcpy");
    if (!err.empty()) throw Failure(err);
    run.tensors.push_back(std::move(t));
  }
  std::vector<void *> host_ptrs, device_ptrs;
  for (size_t i = 0; i < run.tensors.size(); ++i) {
    int32_t by_value = 0;  // a pass-by-value input is read from host memory
    ok(cudnnfe_tensor_get_pass_by_value(gpu_graph, run.tensors[i].uid, &by_value),
       "cudnnfe_tensor_get_pass_by_value");
    host_ptrs.push_back(run.reference[i].data());
    device_ptrs.push_back(by_value ? run.reference[i].data() : device[i].get());
  }
  execute_case(cpu_graph, run.tensors, host_ptrs, nullptr, 0, "CPU reference");
  ok(cudnnfe_graph_get_workspace_size(gpu_graph, &run.workspace_size), "get_workspace_size");
  gpu::DeviceBuffer workspace(static_cast<size_t>(run.workspace_size));
  if (!workspace.ok()) throw Failure("cudaMalloc of the workspace failed");
  execute_case(gpu_graph, run.tensors, device_ptrs, workspace.get(),
               static_cast<size_t>(run.workspace_size), "GPU");
  std::string err = gpu::cuda_check(gpu::runtime().DeviceSynchronize(), "cudaDeviceSynchronize");
  if (!err.empty()) throw Failure(err);
  const char *plan = "";
  cudnnfe_graph_get_plan_name(gpu_graph, &plan);
  run.plan = plan;
  run.gpu.resize(run.tensors.size());
  for (size_t i = 0; i < run.tensors.size(); ++i) {
    if (!run.tensors[i].is_output) continue;
    run.gpu[i].resize(run.tensors[i].bytes);
    err = gpu::cuda_check(gpu::runtime().Memcpy(run.gpu[i].data(), device[i].get(),
                                                run.tensors[i].bytes, gpu::kDeviceToHost),
                          "cudaMemcpy");
    if (!err.empty()) throw Failure(err);
  }
  return run;
}

// Runs one case (see the top of the file); returns false when it failed.
inline bool run_case_body(const std::string &full, cudnnfe_dtype_t io, const CaseBuilder &build,
                          double rtol) {
  GraphPtr gpu_graph = new_graph(full, io);
  CaseSpec spec;
  build(gpu_graph.get(), spec);
  if (build_case(gpu_graph.get(), CUDNNFE_TARGET_GPU) == CUDNNFE_STATUS_NOT_SUPPORTED) {
    const std::string why = cudnnfe_graph_last_error(gpu_graph.get());
    std::printf("  %-48s REFUSED (NOT_SUPPORTED): %s\n", full.c_str(), why.c_str());
    ++case_tally().refused;
    case_tally().refusals.push_back(full + ": " + why);
    return true;
  }
  GraphPtr cpu_graph = new_graph(full, io);
  CaseSpec cpu_spec;
  build(cpu_graph.get(), cpu_spec);
  build_case(cpu_graph.get(), CUDNNFE_TARGET_CPU_REFERENCE);

  const CaseRun run =
      run_on_both(gpu_graph.get(), cpu_graph.get(), spec.outputs, spec.fills, seed_of(full));
  bool good = true;
  for (size_t i = 0; i < run.tensors.size(); ++i) {
    const TensorInfo &t = run.tensors[i];
    if (!t.is_output) continue;
    const auto caller = spec.caller_strides.find(t.uid);
    const bool layout_ok = caller == spec.caller_strides.end() ||
                           test_layouts::same_memory(t.dims, t.strides, caller->second);
    const Errors e =
        compare(t, run.gpu[i], run.reference[i], rtol, NonFinite::kAlwaysBad, {}, true);
    std::printf("  %-48s %-24s max_abs %.2e max_rel %.2e (rtol %.0e) strides %s plan %s%s%s\n",
                full.c_str(), (t.port() + dims_text(t.dims)).c_str(), e.max_abs, e.max_rel, rtol,
                dims_text(t.strides).c_str(), run.plan.c_str(), e.bad ? "  MISMATCH" : "",
                layout_ok ? "" : "  WRONG LAYOUT");
    if (!layout_ok)
      std::printf("    the caller allocates strides %s; the graph gives %s\n",
                  dims_text(caller->second).c_str(), dims_text(t.strides).c_str());
    if (e.bad)
      std::printf("    %lld of %lld elements out of tolerance; first at %s\n",
                  static_cast<long long>(e.bad), static_cast<long long>(e.compared),
                  e.first_bad.c_str());
    good = good && layout_ok && e.bad == 0;
    if (e.max_rel >= case_tally().worst_rel) {
      case_tally().worst_rel = e.max_rel;
      case_tally().worst_where = full + " " + t.port();
    }
  }
  return good;
}

// Runs a case and counts it as passed, failed or refused; a failure (a
// mismatch, a wrong layout, or an error other than a refusal) fails the
// calling test.
inline void run_gpu_case(const std::string &label, cudnnfe_dtype_t io, const CaseBuilder &build,
                         double rtol) {
  const std::string full = label + " " + short_name(io);
  const int refused_before = case_tally().refused;
  bool good = false;
  std::string why = "values or layout";
  try {
    good = run_case_body(full, io, build, rtol);
  } catch (const Failure &f) {
    why = f.what();
    std::printf("  %-48s FAILED: %s\n", full.c_str(), f.what());
  }
  if (case_tally().refused != refused_before) {
    // Counted by run_case_body.
  } else if (good) {
    ++case_tally().passed;
  } else {
    ++case_tally().failed;
    case_tally().failures.push_back(full + ": " + why);
    ++testing::state().failures;
  }
  std::fflush(stdout);
}

// Prints the counts and every refused and failed case.
inline void print_case_summary(const char *title) {
  const CaseTally &t = case_tally();
  std::printf("  %s: %d cases: %d passed, %d failed, %d refused (NOT_SUPPORTED)\n", title,
              t.passed + t.failed + t.refused, t.passed, t.failed, t.refused);
  if (!t.worst_where.empty())
    std::printf("  largest relative error %.2e at %s\n", t.worst_rel, t.worst_where.c_str());
  for (const std::string &r : t.refusals) std::printf("  refused: %s\n", r.c_str());
  for (const std::string &f : t.failures) std::printf("  failed: %s\n", f.c_str());
}

}  // namespace gpu_test
