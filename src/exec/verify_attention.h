// Attention outputs that cuDNN leaves unspecified, which verify mode does
// not compare (docs/verify.md, docs/attention.md): rows past a sequence's
// length with padding, and forward rows that see no key column (a band or
// causal mask leaving none, a block mask clearing every visible tile). The
// CPU reference writes O = 0 and stats = -inf there; cuDNN writes anything.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu/element_mask.h"
#include "graph/graph.h"

namespace cudnnfe::verify {

// Removes from `wanted` the elements of `output` that its producer leaves
// unspecified, when that producer is an attention node; returns how many.
// `host`: the check's host copies by bound index, holding the sequence
// lengths and block mask in full.
int64_t drop_unspecified(const Graph &graph, const Tensor &output, const std::vector<void *> &host,
                         cpu::ElementMask &wanted);

}  // namespace cudnnfe::verify
