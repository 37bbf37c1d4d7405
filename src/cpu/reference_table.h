// The CPU reference's row of each op kind: what it refuses at build and how
// it runs one node (reference_table.cpp adapts each row to the op's loop in
// cpu/<op>_ref.cpp). The plan (cpu_plan.cpp) never names an op kind.
#pragma once

#include <vector>

#include "cpu/element_mask.h"
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
  // Verify mode (docs/verify.md): per output port, the elements wanted; the
  // op then computes at least those (others may stay as they were). Empty
  // (or nullptr at a port): every element. Set only for ops with a demand rule.
  std::vector<const ElementMask *> want = {};

  const StridedTensor *in(size_t port) const {
    return port < inputs.size() ? inputs[port] : nullptr;
  }
  const StridedTensor *out(size_t port) const {
    return port < outputs.size() ? outputs[port] : nullptr;
  }
  const ElementMask *wanted(size_t port) const { return port < want.size() ? want[port] : nullptr; }
};

// One node's demand in verify mode: the wanted elements of its outputs and
// the masks of its inputs, where the rule marks what those elements read.
// Tensors give layouts only (no data). nullptr: the port is unused (or,
// for `want`, nothing of that output is wanted).
struct DemandStep {
  const Node &node;
  std::vector<const StridedTensor *> inputs, outputs;
  std::vector<const ElementMask *> want;
  std::vector<ElementMask *> need;

  const StridedTensor *in(size_t port) const {
    return port < inputs.size() ? inputs[port] : nullptr;
  }
  const StridedTensor *out(size_t port) const {
    return port < outputs.size() ? outputs[port] : nullptr;
  }
  const ElementMask *wanted(size_t port) const { return port < want.size() ? want[port] : nullptr; }
  // The mask of input `port`, or nullptr when unused.
  ElementMask *needed(size_t port) const { return port < need.size() ? need[port] : nullptr; }
  // Marks every element of every input from `first_port` on.
  void need_all_from(size_t first_port) const {
    for (size_t p = first_port; p < need.size(); ++p)
      if (need[p]) need[p]->set_all();
  }
};

struct ReferenceOp {
  OpKind kind;
  // Throws NOT_SUPPORTED at build for what run would refuse (the CPU
  // reference's own limits, docs/refusals.md); nullptr: none.
  void (*check)(const Graph &graph, const Node &node);
  // nullptr: the op needs no work (slice: its output is a view of x).
  void (*run)(const StepTensors &t);
  // Verify mode's sampled reference (docs/verify.md): marks the input
  // elements that the wanted output elements read. Ops with a rule compute
  // at least the wanted elements when StepTensors::want is set (run skips
  // the rest where it can). nullptr: the op reads every input element and
  // computes every output element.
  void (*demand)(const DemandStep &t);
};

// The row of `kind`; every OpKind has one.
const ReferenceOp &reference_op(OpKind kind);

}  // namespace cudnnfe::cpu
