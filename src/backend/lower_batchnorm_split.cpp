// genstats: cuDNN's CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR in mode
// SUM_SQSUM, with x's data type as its math precision; bn_finalize:
// CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR in TRAINING
// mode with FLOAT math; dbn_weight: CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_
// DESCRIPTOR with FLOAT math. Both set the attributes cudnn-frontend sets.
#include <iterator>

#include "backend/attribute_util.h"
#include "backend/descriptor.h"
#include "backend/lowering.h"
#include "graph/graph.h"

namespace cudnnfe::backend {

void lower_genstats(Lowering &lowering, const Node &node) {
  cudnnBackendDescriptor_t x = lowering.tensor(node.inputs[GenStats::kX]);
  cudnnBackendDescriptor_t sum = lowering.tensor(node.outputs[GenStats::kSum]);
  cudnnBackendDescriptor_t sq_sum = lowering.tensor(node.outputs[GenStats::kSqSum]);
  Descriptor op(CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR);
  op.set_descriptors(CUDNN_ATTR_OPERATION_GENSTATS_XDESC, &x, 1);
  set_attribute(op, CUDNN_ATTR_OPERATION_GENSTATS_MODE, CUDNN_TYPE_GENSTATS_MODE,
                CUDNN_GENSTATS_SUM_SQSUM, "the statistics mode");
  op.set_data_type(CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC,
                   to_cudnn(lowering.graph().tensor(node.inputs[GenStats::kX]).dtype));
  op.set_descriptors(CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, &sum, 1);
  op.set_descriptors(CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, &sq_sum, 1);
  add_operation_named(lowering, std::move(op), "cuDNN's genstats operation");
}

namespace {

// The backend attribute of each bn_finalize port, inputs then outputs.
constexpr cudnnBackendAttributeName_t kBnFinalizeInputs[] = {
    CUDNN_ATTR_OPERATION_BN_FINALIZE_Y_SUM_DESC,
    CUDNN_ATTR_OPERATION_BN_FINALIZE_Y_SQ_SUM_DESC,
    CUDNN_ATTR_OPERATION_BN_FINALIZE_SCALE_DESC,
    CUDNN_ATTR_OPERATION_BN_FINALIZE_BIAS_DESC,
    CUDNN_ATTR_OPERATION_BN_FINALIZE_EPSILON_DESC,
    CUDNN_ATTR_OPERATION_BN_FINALIZE_ACCUM_COUNT_DESC,
    CUDNN_ATTR_OPERATION_BN_FINALIZE_PREV_RUNNING_MEAN_DESC,
    CUDNN_ATTR_OPERATION_BN_FINALIZE_PREV_RUNNING_VAR_DESC,
    CUDNN_ATTR_OPERATION_BN_FINALIZE_EXP_AVERATE_FACTOR_DESC,
};
constexpr cudnnBackendAttributeName_t kBnFinalizeOutputs[] = {
    CUDNN_ATTR_OPERATION_BN_FINALIZE_EQ_SCALE_DESC,
    CUDNN_ATTR_OPERATION_BN_FINALIZE_EQ_BIAS_DESC,
    CUDNN_ATTR_OPERATION_BN_FINALIZE_SAVED_MEAN_DESC,
    CUDNN_ATTR_OPERATION_BN_FINALIZE_SAVED_INV_STD_DESC,
    CUDNN_ATTR_OPERATION_BN_FINALIZE_UPDATED_RUNNING_MEAN_DESC,
    CUDNN_ATTR_OPERATION_BN_FINALIZE_UPDATED_RUNNING_VAR_DESC,
};
static_assert(std::size(kBnFinalizeInputs) == BnFinalize::kInputCount &&
              std::size(kBnFinalizeOutputs) == BnFinalize::kOutputCount);

}  // namespace

void lower_bn_finalize(Lowering &lowering, const Node &node) {
  Descriptor op(CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR);
  set_attribute(op, CUDNN_ATTR_OPERATION_BN_FINALIZE_STATS_MODE, CUDNN_TYPE_BN_FINALIZE_STATS_MODE,
                CUDNN_BN_FINALIZE_STATISTICS_TRAINING, "the finalize mode");
  op.set_data_type(CUDNN_ATTR_OPERATION_BN_FINALIZE_MATH_PREC, CUDNN_DATA_FLOAT);
  // Unused ports (no running statistics) are left unset; a scalar input
  // (epsilon, accum_count, momentum) takes the sums' rank, all ones.
  const size_t rank = lowering.graph().tensor(node.inputs[BnFinalize::kSum]).dims.size();
  for (size_t port = 0; port < node.inputs.size() && port < std::size(kBnFinalizeInputs); ++port)
    if (node.inputs[port]) {
      cudnnBackendDescriptor_t t = lowering.operand(node.inputs[port], rank);
      op.set_descriptors(kBnFinalizeInputs[port], &t, 1);
    }
  for (size_t port = 0; port < node.outputs.size() && port < std::size(kBnFinalizeOutputs); ++port)
    if (node.outputs[port]) {
      cudnnBackendDescriptor_t t = lowering.tensor(node.outputs[port]);
      op.set_descriptors(kBnFinalizeOutputs[port], &t, 1);
    }
  add_operation_named(lowering, std::move(op), "cuDNN's batch-norm finalize operation");
}

void lower_dbn_weight(Lowering &lowering, const Node &node) {
  static constexpr cudnnBackendAttributeName_t kInputs[] = {
      CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DY_DESC, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_X_DESC,
      CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MEAN_DESC,
      CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_INVSTD_DESC,
      CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_BN_SCALE_DESC};
  static constexpr cudnnBackendAttributeName_t kOutputs[] = {
      CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_SCALE_DESC,
      CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_BIAS_DESC,
      CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_DY_SCALE_DESC,
      CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_X_SCALE_DESC,
      CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_BIAS};
  static_assert(std::size(kInputs) == DbnWeight::kInputCount &&
                std::size(kOutputs) == DbnWeight::kOutputCount);
  Descriptor op(CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR);
  op.set_data_type(CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MATH_PREC, CUDNN_DATA_FLOAT);
  for (size_t port = 0; port < std::size(kInputs); ++port) {
    cudnnBackendDescriptor_t t = lowering.tensor(node.inputs[port]);
    op.set_descriptors(kInputs[port], &t, 1);
  }
  for (size_t port = 0; port < std::size(kOutputs); ++port) {
    cudnnBackendDescriptor_t t = lowering.tensor(node.outputs[port]);
    op.set_descriptors(kOutputs[port], &t, 1);
  }
  add_operation_named(lowering, std::move(op), "cuDNN's batch-norm backward weights operation");
}

}  // namespace cudnnfe::backend
