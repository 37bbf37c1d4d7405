// Score modifiers on the GPU: a modifier's pointwise nodes lowered in place
// inside the composite attention graph, its placeholder bound to the virtual
// score tensor there (as cudnn-frontend inlines its score_mod callback).
// Not here: where the attention graphs call it (lower_sdpa.cpp,
// lower_sdpa_backward.cpp).
#include "backend/lower_score_mod.h"

#include "core/error.h"
#include "graph/score_mod.h"

namespace cudnnfe::backend {

cudnnBackendDescriptor_t lower_score_mod(Lowering &lowering, const ScoreMod &mod,
                                         cudnnBackendDescriptor_t s) {
  if (mod.empty()) return s;
  const Graph &graph = lowering.graph();
  auto operand = [&](int64_t uid) -> cudnnBackendDescriptor_t {
    if (uid == 0) return nullptr;
    return uid == mod.score ? s : lowering.operand(uid, 4);
  };
  for (const Node &sub : mod.nodes) {
    using namespace Pointwise;
    cudnnBackendDescriptor_t in[kInputCount] = {};
    for (size_t port = 0; port < kInputCount; ++port) in[port] = operand(sub.inputs[port]);
    add_pointwise(lowering, sub.as<PointwiseAttrs>(), to_cudnn(sub.compute_dtype), in[kIn0],
                  in[kIn1], in[kIn2],
                  lowering.tensor(graph.tensor(sub.outputs[Pointwise::kOut]).uid));
  }
  return mod.result == mod.score ? s : lowering.tensor(mod.result);
}

}  // namespace cudnnfe::backend
