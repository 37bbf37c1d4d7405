// A score modifier on the CPU reference: its pointwise nodes compiled at
// build into steps over numbered value slots, run at execute on one score
// element (n, h, i, j) at a time with cpu/pointwise_math.h's formulas, each
// value rounded to its tensor's data type as a stored tensor would be. The
// forward modifier maps the scaled score, the backward one dS' to dS (and may
// read the forward one's values of the same element).
// Not here: where the attention applies them (cpu/attention_scores.h,
// sdpa_backward_ref.cpp), or the rules (ops/score_mod.cpp).
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "cpu/strided_tensor.h"
#include "graph/graph.h"

namespace cudnnfe {
namespace cpu {

class ScoreModProgram {
  struct Part;  // one compiled modifier (below)

 public:
  // The modifiers of attention node `node` (sdpa or sdpa_backward) of `graph`.
  ScoreModProgram(const Graph &graph, const Node &node);

  bool has_forward() const { return forward_.result >= 0; }
  bool has_backward() const { return backward_.result >= 0; }
  int slot_count() const { return slots_; }

  // Evaluation on the node's input views (`inputs`, by port).
  class Run {
   public:
    Run(const ScoreModProgram &program, const std::vector<const StridedTensor *> &inputs);
    bool has_forward() const { return program_.has_forward(); }
    bool has_backward() const { return program_.has_backward(); }
    int slot_count() const { return program_.slot_count(); }
    // The forward modifier of score `s` at (n, h, i, j); `slots` (of
    // slot_count()) keeps every value for backward().
    double forward(int64_t n, int64_t h, int64_t i, int64_t j, double s, double *slots) const;
    // dS from dS' at the element of the last forward() on `slots`.
    double backward(int64_t n, int64_t h, int64_t i, int64_t j, double ds, double *slots) const;

   private:
    struct Bound {
      const StridedTensor *view;
      std::array<int64_t, 4> strides;
      int slot;
    };
    const ScoreModProgram &program_;
    std::vector<Bound> externals_;
    void load(const std::array<int64_t, 4> &at, double *slots) const;
    // Runs `part` with its placeholder set to `value` at (n, h, i, j).
    double evaluate(const Part &part, int64_t n, int64_t h, int64_t i, int64_t j, double value,
                    double *slots) const;
  };

 private:
  struct Step {
    PointwiseAttrs attrs;
    cudnnfe_dtype_t compute, out_dtype;
    int in[3] = {-1, -1, -1};
    int out = -1;
    bool index_broadcast = false;  // GEN_INDEX along a dim of size 1
  };
  struct Part {
    int score = -1, result = -1;
    std::vector<Step> steps;
  };
  struct External {
    size_t port;
    int slot;
  };

  int slot_of(const Graph &graph, const Node &owner, int64_t uid);
  Part compile(const Graph &graph, const Node &owner, const ScoreMod &mod);
  void run(const Part &part, const std::array<int64_t, 4> &at, double *slots) const;

  std::vector<std::pair<int64_t, int>> slot_by_uid_;
  std::vector<External> externals_;
  int slots_ = 0;
  Part forward_, backward_;
};

}  // namespace cpu
}  // namespace cudnnfe
