// Lowering of attention score modifiers (lower_score_mod.cpp): inlined
// pointwise ops on the composite graph's virtual score tensor.
#pragma once

#include "backend/lowering.h"

namespace cudnnfe::backend {

// NOT_SUPPORTED when `node` combines a score modifier with the options
// cudnn-frontend refuses beside one (ALiBi, padding mask, causal or band).
void check_score_mod_support(const Node &node);

// Lowers `mod`'s nodes with its placeholder bound to `s` (the scores, or dS'
// in the backward); returns the result's descriptor (`s` when `mod` is empty
// or the identity).
cudnnBackendDescriptor_t lower_score_mod(Lowering &lowering, const ScoreMod &mod,
                                         cudnnBackendDescriptor_t s);

}  // namespace cudnnfe::backend
