// Score modifiers on the CPU reference (cpu/score_mod_eval.h).
#include "cpu/score_mod_eval.h"

#include <algorithm>

#include "core/error.h"
#include "cpu/dtype_convert.h"
#include "cpu/pointwise_math.h"
#include "graph/score_mod.h"

namespace cudnnfe {
namespace cpu {
namespace {

// Pointwise's inputs in0, in1 and in2 (graph/op_list.def).
constexpr int kOperands = Pointwise::kInputCount;

// `value` as a tensor of `dtype` holds it (INT32 truncates, BOOLEAN is 0/1).
double as_stored(double value, cudnnfe_dtype_t dtype) {
  alignas(8) unsigned char bytes[8] = {};
  store_element(bytes, dtype, value);
  return load_element(bytes, dtype);
}

}  // namespace

ScoreModProgram::ScoreModProgram(const Graph &graph, const Node &node) {
  const bool is_forward = node.kind == OpKind::kSdpa;
  const ScoreMod &forward =
      is_forward ? node.as<SdpaAttrs>().score_mod : node.as<SdpaBackwardAttrs>().score_mod;
  if (!forward.empty()) forward_ = compile(graph, node, forward);
  if (is_forward) return;
  const ScoreMod &backward = node.as<SdpaBackwardAttrs>().score_mod_bprop;
  if (!backward.empty()) backward_ = compile(graph, node, backward);
}

int ScoreModProgram::slot_of(const Graph &graph, const Node &owner, int64_t uid) {
  for (auto [known, slot] : slot_by_uid_)
    if (known == uid) return slot;
  const int slot = slots_++;
  slot_by_uid_.emplace_back(uid, slot);
  if (is_score_mod_tensor(graph, uid)) return slot;
  // A graph input or scalar: the attention node reads it after its ports.
  auto port = std::find(owner.inputs.begin(), owner.inputs.end(), uid);
  if (port == owner.inputs.end())
    fail(CUDNNFE_STATUS_INTERNAL, Graph::label(owner), ": score modifier input \"",
         graph.tensor(uid).name, "\" is not an input of the node");
  externals_.push_back({static_cast<size_t>(port - owner.inputs.begin()), slot});
  return slot;
}

ScoreModProgram::Part ScoreModProgram::compile(const Graph &graph, const Node &owner,
                                               const ScoreMod &mod) {
  Part part;
  part.score = slot_of(graph, owner, mod.score);
  for (const Node &sub : mod.nodes) {
    Step step;
    step.attrs = sub.as<PointwiseAttrs>();
    if (step.attrs.mode != CUDNNFE_POINTWISE_GEN_INDEX) {
      double ignored;
      if (!pointwise_apply<double>(step.attrs, 0.0, 0.0, 0.0, &ignored))
        fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(sub), ": pointwise mode ",
             pointwise_mode_name(step.attrs.mode), " is not supported by the CPU reference");
    }
    step.compute = sub.compute_dtype;
    for (int port = 0; port < kOperands; ++port)
      if (sub.inputs[static_cast<size_t>(port)] != 0)
        step.in[port] = slot_of(graph, owner, sub.inputs[static_cast<size_t>(port)]);
    const Tensor &out = graph.tensor(sub.outputs[Pointwise::kOut]);
    step.out_dtype = out.dtype;
    if (step.attrs.mode == CUDNNFE_POINTWISE_GEN_INDEX)
      step.index_broadcast = out.dims.at(static_cast<size_t>(step.attrs.axis)) == 1;
    step.out = slot_of(graph, owner, out.uid);
    part.steps.push_back(step);
  }
  part.result = slot_of(graph, owner, mod.result);
  return part;
}

void ScoreModProgram::run(const Part &part, const std::array<int64_t, 4> &at, double *slots) const {
  for (const Step &step : part.steps) {
    double y;
    if (step.attrs.mode == CUDNNFE_POINTWISE_GEN_INDEX) {
      y = step.index_broadcast ? 0.0
                               : static_cast<double>(at[static_cast<size_t>(step.attrs.axis)]);
    } else {
      auto operand = [&](int port) {
        return step.in[port] < 0 ? 0.0 : round_to_compute(slots[step.in[port]], step.compute);
      };
      // Float math for FLOAT and HALF, as the pointwise reference does.
      if (step.compute == CUDNNFE_DTYPE_DOUBLE || step.compute == CUDNNFE_DTYPE_INT32) {
        pointwise_apply<double>(step.attrs, operand(0), operand(1), operand(2), &y);
      } else {
        float f = 0.0f;
        pointwise_apply<float>(step.attrs, static_cast<float>(operand(0)),
                               static_cast<float>(operand(1)), static_cast<float>(operand(2)), &f);
        y = f;
      }
      y = round_to_compute(y, step.compute);
    }
    slots[step.out] = as_stored(y, step.out_dtype);
  }
}

ScoreModProgram::Run::Run(const ScoreModProgram &program,
                          const std::vector<const StridedTensor *> &inputs)
    : program_(program) {
  for (const External &e : program.externals_) {
    const StridedTensor *view = e.port < inputs.size() ? inputs[e.port] : nullptr;
    if (!view) fail(CUDNNFE_STATUS_INTERNAL, "score modifier: an input has no data at execute");
    Bound b{view, {0, 0, 0, 0}, e.slot};
    // Dims align to the right; a dim of 1 (or a missing one) broadcasts.
    for (int d = 0; d < view->rank && d < 4; ++d) {
      const int at = 4 - view->rank + d;
      if (at >= 0 && view->dims[d] != 1) b.strides[static_cast<size_t>(at)] = view->strides[d];
    }
    externals_.push_back(b);
  }
}

void ScoreModProgram::Run::load(const std::array<int64_t, 4> &at, double *slots) const {
  for (const Bound &b : externals_) {
    int64_t offset = 0;
    for (size_t d = 0; d < 4; ++d) offset += at[d] * b.strides[d];
    slots[b.slot] = b.view->load(offset);
  }
}

double ScoreModProgram::Run::evaluate(const Part &part, int64_t n, int64_t h, int64_t i, int64_t j,
                                      double value, double *slots) const {
  const std::array<int64_t, 4> at = {n, h, i, j};
  load(at, slots);
  slots[part.score] = as_stored(value, CUDNNFE_DTYPE_FLOAT);
  program_.run(part, at, slots);
  return slots[part.result];
}

double ScoreModProgram::Run::forward(int64_t n, int64_t h, int64_t i, int64_t j, double s,
                                     double *slots) const {
  return evaluate(program_.forward_, n, h, i, j, s, slots);
}

double ScoreModProgram::Run::backward(int64_t n, int64_t h, int64_t i, int64_t j, double ds,
                                      double *slots) const {
  return evaluate(program_.backward_, n, h, i, j, ds, slots);
}

}  // namespace cpu
}  // namespace cudnnfe
