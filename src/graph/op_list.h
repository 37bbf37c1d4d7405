// What graph/op_list.def expands to for every layer: the OpKind enum and,
// per kind, its port enums (Sdpa::kQ, Sdpa::kStats, ...), so that code
// names ports instead of numbering them.
#pragma once

#include <cstddef>

namespace cudnnfe {

#define IN(port, name) port,
#define OPT_IN(port, name) port,
#define OUT(port, name) port,
#define OPT_OUT(port, name) port,

enum class OpKind {
#define CUDNNFE_OP(id, name, attrs, fields, family, inputs, outputs) k##id,
#include "graph/op_list.def"
#undef CUDNNFE_OP
};

// Number of op kinds: the rows of each per-layer op table (graph/op_schema.h).
constexpr size_t kOpKindCount = 0
#define CUDNNFE_OP(id, name, attrs, fields, family, inputs, outputs) +1
#include "graph/op_list.def"
#undef CUDNNFE_OP
    ;

// Each kind's ports in port order: <Id>::Input and <Id>::Output, whose
// values index Node::inputs and Node::outputs.
#define CUDNNFE_OP(id, name, attrs, fields, family, inputs, outputs) \
  namespace id {                                                     \
  enum Input : size_t { inputs kInputCount };                        \
  enum Output : size_t { outputs kOutputCount };                     \
  }
#include "graph/op_list.def"
#undef CUDNNFE_OP

#undef IN
#undef OPT_IN
#undef OUT
#undef OPT_OUT

// Whether ports of several kinds (or several ports) are at one position:
// code shared by kinds static_asserts what it relies on, e.g.
// same_port(LayerNorm::kBias, RmsNorm::kBias).
template <class P, class... Q>
constexpr bool same_port(P first, Q... others) {
  return ((static_cast<size_t>(first) == static_cast<size_t>(others)) && ...);
}

}  // namespace cudnnfe
