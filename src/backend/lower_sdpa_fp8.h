// Lowering of FP8 attention (forward and backward) and the pieces the two
// lowerings share (backend/lower_sdpa_fp8.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "backend/lowering.h"

namespace cudnnfe::backend {

void lower_sdpa_fp8(Lowering &lowering, const Node &node);
void lower_sdpa_fp8_backward(Lowering &lowering, const Node &node);

namespace fp8 {

constexpr cudnnDataType_t kFloat = CUDNN_DATA_FLOAT;

// Hands out the backend tensors of one node's descales and scales as
// [1,1,1,1] operands of its rank-4 pointwise ops: a bound one-element tensor
// of another rank is viewed at rank 4 (same UID and buffer), a scalar is
// fed by value. One descriptor per tensor and node.
class Scales {
 public:
  Scales(Lowering &lowering, const Node &node) : lowering_(lowering), node_(node) {}
  cudnnBackendDescriptor_t operator()(size_t port);

 private:
  Lowering &lowering_;
  const Node &node_;
  std::map<int64_t, cudnnBackendDescriptor_t> made_;
};

// out = a * b (FLOAT math) into a new virtual tensor of `dims` and `type`,
// or into `into` when given.
cudnnBackendDescriptor_t mul(Lowering &lowering, cudnnBackendDescriptor_t a,
                             cudnnBackendDescriptor_t b, const std::vector<int64_t> &dims,
                             cudnnDataType_t type = kFloat,
                             cudnnBackendDescriptor_t into = nullptr);

// cudnn-frontend's FP8 matmul block: c' = a·b in FLOAT (of `full` dims;
// summed into c's head count by a REDUCTION ADD when c has fewer heads:
// GQA), c' *= descale_a, c' *= descale_b, amax = AMAX(c'), c = c' * scale_c
// in c's type.
// `overrides`: the GEMM M/N/K overrides (sequence lengths with padding).
void scaled_matmul(Lowering &lowering, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b,
                   cudnnBackendDescriptor_t descale_a, cudnnBackendDescriptor_t descale_b,
                   cudnnBackendDescriptor_t scale_c, const std::vector<int64_t> &full,
                   int64_t c_uid, int64_t amax_uid, const MatmulOverrides &overrides = {});

// Refuses, on the GPU, the FP8 attention options that cuDNN's FP8 engines
// accept but compute differently from the reference: ALiBi and sink logits
// (forward) and dropout (forward and backward). The CPU reference runs them.
void refuse_unmatched_options(const Node &node);

}  // namespace fp8
}  // namespace cudnnfe::backend
