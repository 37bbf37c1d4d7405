// GPU tests of attention's ragged (packed, THD) layout, forward and
// backward, and of the paged K/V cache (forward), fp16 and bf16, through
// the public C API (docs/attention.md). Each graph runs on the GPU and on
// the CPU reference with the same inputs; the valid rows are compared (O
// and dQ at 2e-2 of max(1, |want|), dK and dV at 2e-2 for fp16 and 7e-2
// for bf16, as test_gpu_attention_options.cpp does), outputs start as NaN
// on the rows the GPU must write and as a sentinel in the gaps between
// packed sequences, which must stay untouched. The workspace starts as NaN.
// A refusal by cuDNN fails the case and prints cuDNN's message. Without a
// GPU every case skips.
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "attention_ragged_support.h"
#include "gpu_test_support.h"
#include "harness.h"

namespace {

using namespace ragged_test;

[[maybe_unused]] const bool kTf32Off = [] {
  setenv("NVIDIA_TF32_OVERRIDE", "0", 0);
  return true;
}();

// CUDNNFE_ATTENTION_TESTS_ON_CPU=1 runs the harness with the CPU reference
// in the GPU's place (a check of the harness, not of cuDNN).
bool on_cpu() {
  const char *e = std::getenv("CUDNNFE_ATTENTION_TESTS_ON_CPU");
  return e && *e == '1';
}
#define REQUIRE_GPU_OR_DRY_RUN()  \
  do {                            \
    if (!on_cpu()) REQUIRE_GPU(); \
  } while (0)
const cudnnfe_target_t kGpu = on_cpu() ? CUDNNFE_TARGET_CPU_REFERENCE : CUDNNFE_TARGET_GPU;

constexpr cudnnfe_dtype_t kIo[] = {CUDNNFE_DTYPE_HALF, CUDNNFE_DTYPE_BFLOAT16};

void report(const char *what, const std::vector<double> &got, const std::vector<double> &want,
            double tol) {
  const Compare r = compare(got, want);
  std::printf("    %-8s max error %.3e (tol %.0e)%s\n", what, r.max_err, tol,
              r.nan_mismatch ? " NaN MISMATCH" : "");
  CHECK_MSG(r.max_err <= tol && r.nan_mismatch == 0, "%s: max error %.3g, %d NaN mismatches", what,
            r.max_err, r.nan_mismatch);
}

std::string version_line() {
  int64_t v = 0;
  cudnnfe_cudnn_version(&v);
  return "cuDNN " + std::to_string(v);
}

std::vector<Case> ragged_cases() {
  std::vector<Case> cases;
  Case c;
  c.name = "ragged b=3 h=2 s=128 d=64, packed tight";
  c.b = 3;
  c.h_q = c.h_kv = 2;
  c.s_q = c.s_kv = 128;
  c.d = c.d_v = 64;
  c.scale = 0.125;
  c.seq_q = {128, 77, 1};
  c.seq_kv = {128, 50, 99};
  cases.push_back(c);
  c.name = "ragged causal, GQA h_q=4 h_kv=2, s_q=96 s_kv=128";
  c.h_q = 4;
  c.s_q = 96;
  c.causal = true;
  c.seq_q = {96, 64, 17};
  c.seq_kv = {128, 64, 30};
  cases.push_back(c);
  c.name = "ragged with 64-element gaps between sequences";
  c.h_q = c.h_kv = 2;
  c.s_q = 128;
  c.causal = false;
  c.gap = 64;
  c.seq_q = {33, 128, 90};
  c.seq_kv = {70, 1, 128};
  cases.push_back(c);
  return cases;
}

TEST(gpu_ragged_forward_and_backward) {
  REQUIRE_GPU_OR_DRY_RUN();
  std::printf("  %s\n", version_line().c_str());
  for (const Case &c : ragged_cases()) {
    for (cudnnfe_dtype_t io : kIo) {
      std::printf("  %s, %s\n", c.name, gpu_test::short_name(io));
      const Data d = make_data(c, io);
      try {
        const ForwardResult want = forward(c, d, io, true, CUDNNFE_TARGET_CPU_REFERENCE);
        const ForwardResult got = forward(c, d, io, true, kGpu);
        report("O", got.o, want.o, 2e-2);
        report("stats", got.stats, want.stats, 2e-2);
        CHECK_MSG(got.o_gaps == 0, "%d gap elements of O were written", got.o_gaps);
      } catch (const Error &e) {
        std::printf("    forward REFUSED or failed: %s\n", e.what());
        CHECK_MSG(false, "forward: %s", e.what());
      }
      try {
        const ForwardResult f = forward(c, d, io, false, CUDNNFE_TARGET_CPU_REFERENCE);
        const BackwardResult want =
            backward(c, d, f.o, f.stats, io, true, CUDNNFE_TARGET_CPU_REFERENCE);
        const BackwardResult got = backward(c, d, f.o, f.stats, io, true, kGpu);
        const double grad_tol = io == CUDNNFE_DTYPE_BFLOAT16 ? 7e-2 : 2e-2;
        report("dQ", got.dq, want.dq, 2e-2);
        report("dK", got.dk, want.dk, grad_tol);
        report("dV", got.dv, want.dv, grad_tol);
        CHECK_MSG(got.gaps == 0, "%d gap elements of dQ, dK, dV were written", got.gaps);
      } catch (const Error &e) {
        std::printf("    backward REFUSED or failed: %s\n", e.what());
        CHECK_MSG(false, "backward: %s", e.what());
      }
    }
  }
}

TEST(gpu_paged_forward) {
  REQUIRE_GPU_OR_DRY_RUN();
  std::printf("  %s\n", version_line().c_str());
  struct Variant {
    const char *name;
    int64_t s_q, page_size;
    std::vector<int32_t> seq_q, seq_kv;
    bool causal;
  };
  const Variant variants[] = {
      {"paged K and V, s_q=64 s_kv=128 page_size=16", 64, 16, {64, 33}, {128, 70}, false},
      {"paged K and V, decode s_q=1 page_size=32", 1, 32, {1, 1}, {100, 128}, false},
      {"paged K and V, bottom-right causal s_q=64", 64, 16, {64, 20}, {128, 90}, true}};
  for (const Variant &var : variants) {
    for (cudnnfe_dtype_t io : kIo) {
      std::printf("  %s, %s\n", var.name, gpu_test::short_name(io));
      Case c;
      c.b = 2;
      c.h_q = c.h_kv = 2;
      c.s_q = var.s_q;
      c.s_kv = 128;
      c.d = c.d_v = 64;
      c.scale = 0.125;
      c.page_size = var.page_size;
      c.seq_q = var.seq_q;
      c.seq_kv = var.seq_kv;
      c.causal_br = var.causal;
      const Data d = make_data(c, io);
      try {
        const ForwardResult want = paged_forward(c, d, io, CUDNNFE_TARGET_CPU_REFERENCE);
        const ForwardResult got = paged_forward(c, d, io, kGpu);
        report("O", got.o, want.o, 2e-2);
        report("stats", got.stats, want.stats, 2e-2);
        // And the same as the contiguous cache.
        const ForwardResult contiguous = forward(c, d, io, false, CUDNNFE_TARGET_CPU_REFERENCE);
        report("O (vs contiguous)", got.o, contiguous.o, 2e-2);
      } catch (const Error &e) {
        std::printf("    REFUSED or failed: %s\n", e.what());
        CHECK_MSG(false, "%s", e.what());
      }
    }
  }
}

// Ragged q, k, v with O padded (sample 52) or packed at offsets of its own
// given after the op (test_sdpa_thd, test_sdpa_chunked_prefill).
TEST(gpu_ragged_inputs_with_padded_or_own_o) {
  REQUIRE_GPU_OR_DRY_RUN();
  std::printf("  %s\n", version_line().c_str());
  for (const Case &c : ragged_cases()) {
    for (cudnnfe_dtype_t io : kIo) {
      for (OLayout layout : {OLayout::kPadded, OLayout::kOwnOffsets}) {
        std::printf("  %s, %s, O %s\n", c.name, gpu_test::short_name(io),
                    layout == OLayout::kPadded ? "padded" : "with its own offsets");
        const Data d = make_data(c, io);
        try {
          const ForwardResult want = mixed_forward(c, d, io, layout, CUDNNFE_TARGET_CPU_REFERENCE);
          const ForwardResult got = mixed_forward(c, d, io, layout, kGpu);
          report("O", got.o, want.o, 2e-2);
          report("stats", got.stats, want.stats, 2e-2);
          CHECK_MSG(got.o_gaps == 0, "%d gap elements of O were written", got.o_gaps);
        } catch (const Error &e) {
          std::printf("    REFUSED or failed: %s\n", e.what());
          CHECK_MSG(false, "%s", e.what());
        }
      }
    }
  }
}

// Stats with offsets of their own (cudnn-frontend's THD training tests):
// the forward writes them packed, the backward reads them packed.
TEST(gpu_ragged_stats) {
  REQUIRE_GPU_OR_DRY_RUN();
  std::printf("  %s\n", version_line().c_str());
  for (const Case &c : ragged_cases()) {
    for (cudnnfe_dtype_t io : kIo) {
      std::printf("  %s, %s\n", c.name, gpu_test::short_name(io));
      const Data d = make_data(c, io);
      try {
        const ForwardResult want =
            mixed_forward(c, d, io, OLayout::kOwnOffsets, CUDNNFE_TARGET_CPU_REFERENCE, true);
        const ForwardResult got = mixed_forward(c, d, io, OLayout::kOwnOffsets, kGpu, true);
        report("O", got.o, want.o, 2e-2);
        report("stats", got.stats, want.stats, 2e-2);
        CHECK_MSG(got.stats_gaps == 0, "%d gap elements of stats were written", got.stats_gaps);
        const ForwardResult f = forward(c, d, io, false, CUDNNFE_TARGET_CPU_REFERENCE);
        const BackwardResult bwant =
            backward(c, d, f.o, f.stats, io, true, CUDNNFE_TARGET_CPU_REFERENCE, true);
        const BackwardResult bgot = backward(c, d, f.o, f.stats, io, true, kGpu, true);
        const double grad_tol = io == CUDNNFE_DTYPE_BFLOAT16 ? 7e-2 : 2e-2;
        report("dQ", bgot.dq, bwant.dq, 2e-2);
        report("dK", bgot.dk, bwant.dk, grad_tol);
        report("dV", bgot.dv, bwant.dv, grad_tol);
      } catch (const Error &e) {
        std::printf("    REFUSED or failed: %s\n", e.what());
        CHECK_MSG(false, "%s", e.what());
      }
    }
  }
}

// Packed page tables (sample 53; cuDNN 9.10.2 and newer), decode and prefill.
TEST(gpu_packed_page_tables) {
  REQUIRE_GPU_OR_DRY_RUN();
  std::printf("  %s\n", version_line().c_str());
  struct Variant {
    const char *name;
    int64_t s_q, page_size;
    std::vector<int32_t> seq_q, seq_kv;
  };
  const Variant variants[] = {
      {"packed tables, decode s_q=1 page_size=16", 1, 16, {1, 1, 1}, {100, 17, 128}},
      {"packed tables, s_q=64 page_size=32", 64, 32, {64, 40, 9}, {128, 65, 30}}};
  for (const Variant &var : variants) {
    for (cudnnfe_dtype_t io : kIo) {
      std::printf("  %s, %s\n", var.name, gpu_test::short_name(io));
      Case c;
      c.b = 3;
      c.h_q = c.h_kv = 2;
      c.s_q = var.s_q;
      c.s_kv = 128;
      c.d = c.d_v = 64;
      c.scale = 0.125;
      c.page_size = var.page_size;
      c.seq_q = var.seq_q;
      c.seq_kv = var.seq_kv;
      const Data d = make_data(c, io);
      try {
        const ForwardResult want = packed_paged_forward(c, d, io, CUDNNFE_TARGET_CPU_REFERENCE);
        const ForwardResult got = packed_paged_forward(c, d, io, kGpu);
        report("O", got.o, want.o, 2e-2);
        report("stats", got.stats, want.stats, 2e-2);
      } catch (const Error &e) {
        std::printf("    REFUSED or failed: %s\n", e.what());
        CHECK_MSG(false, "%s", e.what());
      }
    }
  }
}

}  // namespace
