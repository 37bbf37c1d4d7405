// The CPU reference of FP8 attention (cpu/sdpa_fp8_ref.cpp).
#pragma once

#include "cpu/attention_dropout.h"
#include "cpu/strided_tensor.h"
#include "graph/node.h"

namespace cudnnfe {
namespace cpu {

// Forward: `inputs` and `outputs` in the node's port order
// (ops/sdpa_fp8.h); unused outputs (stats without generate_stats) are
// nullptr; `options`: the optional tensors (sequence lengths, dropout, page
// tables) by role.
void run_sdpa_fp8(const Node &node, const StridedTensor *const *inputs,
                  const AttentionInputs &options, const StridedTensor *const *outputs);

// Backward, likewise.
void run_sdpa_fp8_backward(const Node &node, const StridedTensor *const *inputs,
                           const AttentionInputs &options, const StridedTensor *const *outputs);

}  // namespace cpu
}  // namespace cudnnfe
