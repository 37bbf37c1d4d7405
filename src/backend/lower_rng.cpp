// Random numbers: an RNG descriptor (distribution and its parameters) and
// the operation writing y. The seed is the seed tensor with the offset
// tensor beside it, or, when the node has none, the node's seed value
// (cuDNN then uses offset 0).
#include "backend/attribute_util.h"
#include "backend/lowering.h"
#include "core/error.h"

namespace cudnnfe::backend {
namespace {

cudnnRngDistribution_t to_cudnn_distribution(cudnnfe_rng_distribution_t d) {
  switch (d) {
    case CUDNNFE_RNG_BERNOULLI: return CUDNN_RNG_DISTRIBUTION_BERNOULLI;
    case CUDNNFE_RNG_UNIFORM: return CUDNN_RNG_DISTRIBUTION_UNIFORM;
    case CUDNNFE_RNG_NORMAL: return CUDNN_RNG_DISTRIBUTION_NORMAL;
    default: fail(CUDNNFE_STATUS_NOT_SUPPORTED, "distribution ", d, " has no cuDNN equivalent");
  }
}

}  // namespace

void lower_rng(Lowering &lowering, const Node &node) {
  const RngAttrs &a = node.as<RngAttrs>();
  Descriptor desc(CUDNN_BACKEND_RNG_DESCRIPTOR);
  set_attribute(desc, CUDNN_ATTR_RNG_DISTRIBUTION, CUDNN_TYPE_RNG_DISTRIBUTION,
                to_cudnn_distribution(a.distribution), "the distribution");
  switch (a.distribution) {
    case CUDNNFE_RNG_BERNOULLI:
      desc.set_double(CUDNN_ATTR_RNG_BERNOULLI_DIST_PROBABILITY, a.bernoulli_probability);
      break;
    case CUDNNFE_RNG_UNIFORM:
      desc.set_double(CUDNN_ATTR_RNG_UNIFORM_DIST_MINIMUM, a.uniform_min);
      desc.set_double(CUDNN_ATTR_RNG_UNIFORM_DIST_MAXIMUM, a.uniform_max);
      break;
    default:
      desc.set_double(CUDNN_ATTR_RNG_NORMAL_DIST_MEAN, a.normal_mean);
      desc.set_double(CUDNN_ATTR_RNG_NORMAL_DIST_STANDARD_DEVIATION, a.normal_stddev);
      break;
  }
  lowering.finalize(desc);
  const Descriptor &kept = lowering.keep(std::move(desc));

  cudnnBackendDescriptor_t y = lowering.tensor(node.outputs[Rng::kY]);
  Descriptor op(CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR);
  op.set_descriptors(CUDNN_ATTR_OPERATION_RNG_YDESC, &y, 1);
  op.set_descriptor(CUDNN_ATTR_OPERATION_RNG_DESC, kept);
  if (node.inputs[Rng::kSeed] != 0) {
    cudnnBackendDescriptor_t seed = lowering.tensor(node.inputs[Rng::kSeed]);
    cudnnBackendDescriptor_t offset = lowering.tensor(node.inputs[Rng::kOffset]);
    op.set_descriptors(CUDNN_ATTR_OPERATION_RNG_SEED, &seed, 1);
    op.set_descriptors(CUDNN_ATTR_OPERATION_RNG_OFFSET_DESC, &offset, 1);
  } else {
    op.set_int64(CUDNN_ATTR_OPERATION_RNG_SEED, a.seed);
  }
  add_operation_named(lowering, std::move(op), "cuDNN's rng operation");
}

}  // namespace cudnnfe::backend
