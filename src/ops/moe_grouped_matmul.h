// The expert groups of moe_grouped_matmul and its backward: how
// first_token_offset's dim 0 splits into G groups (starts or boundaries).
// Shared by the shape rules and the CPU reference; no shape checks here.
#pragma once

#include <cstdint>

namespace cudnnfe {

struct MoeGroups {
  int64_t count = 0;           // G: groups; group g uses expert g % E
  bool has_end_bound = false;  // first_token_offset holds G + 1 boundaries
};

// The groups of a first_token_offset with `offsets` entries for `experts`
// experts: G starts when E > 1 and E divides it (cuDNN's original form, the
// last group ending at the routed row count), else G + 1 boundaries when E
// divides offsets - 1. count 0: neither.
inline MoeGroups moe_groups(int64_t offsets, int64_t experts) {
  MoeGroups g;
  if (experts < 1 || offsets < 1) return g;
  if (experts > 1 && offsets % experts == 0) {
    g.count = offsets;
  } else if (offsets >= 2 && (offsets - 1) % experts == 0) {
    g.count = offsets - 1;
    g.has_end_bound = true;
  }
  return g;
}

}  // namespace cudnnfe
