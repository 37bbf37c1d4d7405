// The backend's row of each op kind: how it lowers to cuDNN descriptors and
// what its description in NOT_SUPPORTED messages adds beyond the attribute
// fields marked `describe` (graph/op_schema.h). One row per OpKind
// (lowering_table.cpp); gpu_plan_build.cpp never names an op kind.
#pragma once

#include <string>

#include "backend/lowering.h"

namespace cudnnfe::backend {

struct LoweringOp {
  OpKind kind;
  // nullptr: the kind runs only on the CPU reference (NOT_SUPPORTED).
  void (*lower)(Lowering &lowering, const Node &node);
  // Appends "causal, bias, " and the like; nullptr: nothing to add.
  void (*describe)(const Node &node, std::string &detail);
};

// The row of `kind`; every OpKind has one.
const LoweringOp &lowering_op(OpKind kind);

// Lowers one node through its row.
void lower_node(Lowering &lowering, const Node &node);

// `conv_fprop "c1" (HALF)`, `pointwise "act" (RELU_FWD, FLOAT)`.
std::string describe_node(const Graph &graph, const Node &node);

}  // namespace cudnnfe::backend
