// Attention score modifiers (cudnnfe_graph_begin_score_mod /
// _end_score_mod): a sub-graph of pointwise ops that an attention node
// applies to every element of its scores, named by AttentionOptions.ScoreMod
// and SDPABackwardOptions.ScoreModBprop. The attention ops are ops.go's.

package cudnnfe

import (
	"math"
	"strconv"

	"github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"
)

// BeginScoreMod opens a score modifier (cudnn-frontend's score_mod;
// docs/attention.md) and returns its placeholder score, a virtual FLOAT
// tensor of dims [b, h_q, s_q, s_kv] (the scores'; s_kv a paged cache's
// logical length); name names it ("": automatic). Add its nodes with
// Pointwise (any mode, GenIndex included), reading score, their own
// outputs, graph inputs and scalars; any other op while it is open is
// ErrInvalidGraph. Close it with EndScoreMod, then give score to the
// attention options. Errors: ErrWrongState (one is open already),
// ErrInvalidArgument (bad dims or name). Since 0.3.
func (g *Graph) BeginScoreMod(name string, dims []int64) (score Tensor, err error) {
	const op = "Graph.BeginScoreMod"
	if err := checkName(op, "placeholder name", name); err != nil {
		return 0, err
	}
	if len(dims) > math.MaxInt32 {
		return 0, argError(op, strconv.Itoa(len(dims))+" dims; expected 4")
	}
	var out int64
	err = g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_begin_score_mod(p, name, dims, &out)
	})
	return Tensor(out), err
}

// EndScoreMod closes the open score modifier of placeholder score with
// result (a node output of the modifier that depends on score, of a
// floating type). Errors: ErrInvalidGraph naming the rule (result is not
// the modifier's, does not depend on score, or a node reads an output of a
// node outside it); the modifier then stays open. Since 0.3.
func (g *Graph) EndScoreMod(score, result Tensor) error {
	return g.do("Graph.EndScoreMod", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_end_score_mod(p, int64(score), int64(result))
	})
}

// ScoreMod builds a whole score modifier: BeginScoreMod(name, dims), then
// body(score) adds its nodes and returns the result, then EndScoreMod. It
// returns the placeholder to give to AttentionOptions.ScoreMod (or
// SDPABackwardOptions.ScoreModBprop). An error from body is returned as it
// is; the modifier then stays open, and the graph does not validate.
func (g *Graph) ScoreMod(name string, dims []int64, body func(score Tensor) (Tensor, error)) (Tensor, error) {
	score, err := g.BeginScoreMod(name, dims)
	if err != nil {
		return 0, err
	}
	result, err := body(score)
	if err != nil {
		return 0, err
	}
	if err := g.EndScoreMod(score, result); err != nil {
		return 0, err
	}
	return score, nil
}
