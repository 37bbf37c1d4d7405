// The CPU reference's row of each op kind: what it refuses at build and how
// it runs one node (reference_table.cpp adapts each row to the op's loop in
// cpu/<op>_ref.cpp). The plan (cpu_plan.cpp) never names an op kind.
#pragma once

#include <vector>

#include "cpu/strided_tensor.h"
#include "graph/node.h"

namespace cudnnfe {
class Graph;
}

namespace cudnnfe::cpu {

class ScoreModProgram;

// One node's tensors at execute, by port (nullptr: port unused).
struct StepTensors {
  const Node &node;
  double attn_scale;                 // attention: the effective softmax scale
  const ScoreModProgram *score_mod;  // attention: its score modifiers, or nullptr
  std::vector<const StridedTensor *> inputs, outputs;

  const StridedTensor *in(size_t port) const {
    return port < inputs.size() ? inputs[port] : nullptr;
  }
  const StridedTensor *out(size_t port) const {
    return port < outputs.size() ? outputs[port] : nullptr;
  }
};

struct ReferenceOp {
  OpKind kind;
  // Throws NOT_SUPPORTED at build for what run would refuse (the CPU
  // reference's own limits, docs/refusals.md); nullptr: none.
  void (*check)(const Graph &graph, const Node &node);
  // nullptr: the op needs no work (slice: its output is a view of x).
  void (*run)(const StepTensors &t);
};

// The row of `kind`; every OpKind has one.
const ReferenceOp &reference_op(OpKind kind);

}  // namespace cudnnfe::cpu
