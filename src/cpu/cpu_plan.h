// The CPU reference executor: runs every node of a graph with plain loops
// on host buffers. It is what CI runs and the oracle for GPU results.
#pragma once

#include <memory>
#include <vector>

#include "cpu/element_mask.h"
#include "cpu/strided_tensor.h"
#include "graph/graph.h"
#include "plan/plan.h"

namespace cudnnfe {

// `graph` must be validated and must outlive the plan (the graph owns it).
std::unique_ptr<Plan> build_cpu_plan(const Graph &graph);

// `t`'s data type, dims and strides as the CPU reference views its buffer
// (data left null).
cpu::StridedTensor tensor_layout(const Tensor &t);

// Verify mode's sampled reference (docs/verify.md): the graph's elements
// that some wanted output elements depend on, and a run that computes those
// only, where the op has a demand rule (cpu/reference_table.h).
struct Demand {
  // Per bound tensor (graph.bound_uids() order): the elements read or
  // written; an empty mask when none.
  std::vector<cpu::ElementMask> bound;
  // Per bound tensor: whether a node that runs reads or writes it (it needs
  // a buffer of its full span; the others may be NULL).
  std::vector<bool> used;
  // The nodes that run in full (no demand rule of their own), in graph order.
  std::vector<const Node *> full_nodes;
  // Internal: per slot of the plan, and whether each node runs.
  std::vector<cpu::ElementMask> slots;
  std::vector<bool> runs;
};

class SampledReference {
 public:
  virtual ~SampledReference() = default;
  // The demand of `wanted` (per bound index; empty masks for tensors whose
  // elements are not wanted).
  virtual Demand demand(const std::vector<cpu::ElementMask> &wanted) const = 0;
  // Runs the nodes `demand` needs on `data` (as Plan::execute): every
  // wanted element of every output is written, and nothing outside the
  // demanded elements of the inputs is read.
  virtual void execute_demanded(void *const *data, const Demand &demand) const = 0;
};

// The same, as a sampled reference (throws as build_cpu_plan).
std::unique_ptr<SampledReference> build_sampled_reference(const Graph &graph);

}  // namespace cudnnfe
