// The epsilon_tensor / momentum_tensor fields of cudnnfe_norm_options_t:
// the ops that read them (forward norms) and a refusal for the others, so a
// tensor passed where it would be ignored is an error, not a silent no-op.
#pragma once

#include "api/guard.h"

namespace cudnnfe {

// INVALID_ARGUMENT naming `op` when the options carry an epsilon or momentum
// tensor that `op` does not read (backward ops, batchnorm_inference; the
// momentum of a norm other than batchnorm).
inline void refuse_norm_tensors(const cudnnfe_norm_options_t &o, const char *op,
                                bool reads_epsilon) {
  if (!reads_epsilon && o.epsilon_tensor != 0)
    fail_argument(op, ": epsilon_tensor is set, but ", op, " reads no epsilon");
  if (o.momentum_tensor != 0)
    fail_argument(op, ": momentum_tensor is set, but only batchnorm reads a momentum");
}

}  // namespace cudnnfe
