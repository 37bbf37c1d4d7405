// Lowering of attention score modifiers (lower_score_mod.cpp): inlined
// pointwise ops on the composite graph's virtual score tensor.
#pragma once

#include "backend/lowering.h"

namespace cudnnfe::backend {

// Lowers `mod`'s nodes with its placeholder bound to `s` (the scores, or dS'
// in the backward); returns the result's descriptor (`s` when `mod` is empty
// or the identity).
cudnnBackendDescriptor_t lower_score_mod(Lowering &lowering, const ScoreMod &mod,
                                         cudnnBackendDescriptor_t s);

}  // namespace cudnnfe::backend
