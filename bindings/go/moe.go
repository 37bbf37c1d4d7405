// Mixture-of-experts grouped matmul and its weight gradient
// (docs/moe.md; since 0.3). It does not hold the plain Matmul (ops.go).

package cudnnfe

import "github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"

// MoeGroupedMatmulOptions configures MoeGroupedMatmul and
// MoeGroupedMatmulBackward; zero fields keep the C defaults.
type MoeGroupedMatmulOptions struct {
	Name string
	// Mode is the routing (0: MoeModeNone; the backward takes only that).
	Mode MoeGroupedMatmulMode
	// TopK (scatter) is the experts per token (0: the default 1).
	TopK int
	// ComputeDType is cuDNN's math precision (0: the graph's compute type).
	ComputeDType DType
}

// DefaultMoeGroupedMatmulOptions returns the defaults of
// cudnnfe_moe_grouped_matmul_options_init.
func DefaultMoeGroupedMatmulOptions() MoeGroupedMatmulOptions {
	var c capi.MoeGroupedMatmulOptions
	capi.MoeGroupedMatmulOptionsInit(&c)
	return MoeGroupedMatmulOptions{Mode: MoeGroupedMatmulMode(c.Mode), TopK: int(c.TopK),
		ComputeDType: DType(c.ComputeDtype)}
}

func (o *MoeGroupedMatmulOptions) toC(op string) (*capi.MoeGroupedMatmulOptions, error) {
	if o == nil {
		return nil, nil
	}
	if err := checkName(op, "node name", o.Name); err != nil {
		return nil, err
	}
	if err := checkInt32(op, "TopK", o.TopK); err != nil {
		return nil, err
	}
	c := &capi.MoeGroupedMatmulOptions{}
	capi.MoeGroupedMatmulOptionsInit(c)
	c.Name = o.Name
	if o.Mode != 0 {
		c.Mode = int32(o.Mode)
	}
	if o.TopK != 0 {
		c.TopK = int32(o.TopK)
	}
	if o.ComputeDType != 0 {
		c.ComputeDtype = int32(o.ComputeDType)
	}
	return c, nil
}

// MoeGroupedMatmul adds output [1, R, N] from token [1, T, K], weight [E,
// K, N] and firstTokenOffset (INT32 [G, 1, 1] group starts, or [G + 1, 1,
// 1] boundaries): the routed rows of group g times weight[g % E].
// tokenIndex ([1, R, 1] INT32) is read by MoeModeGather and MoeModeScatter,
// tokenKs by MoeModeScatter; pass 0 for what the mode does not read. Rows
// no group writes are unspecified (the CPU reference writes 0).
func (g *Graph) MoeGroupedMatmul(token, weight, firstTokenOffset, tokenIndex, tokenKs Tensor, opts *MoeGroupedMatmulOptions) (Tensor, error) {
	in := [5]int64{int64(token), int64(weight), int64(firstTokenOffset), int64(tokenIndex), int64(tokenKs)}
	return g.moe("Graph.MoeGroupedMatmul", false, in, opts)
}

// MoeGroupedMatmulBackward adds the weight gradient of a MoeModeNone
// grouped matmul: dweight[e] = the sum over the groups of expert e of
// token[rows]ᵀ @ doutput[rows], [E, K, N] column-major in K and N (strides
// [K*N, 1, K]). E is firstTokenOffset's dim 0 unless dweight's dims are set.
func (g *Graph) MoeGroupedMatmulBackward(doutput, token, firstTokenOffset Tensor, opts *MoeGroupedMatmulOptions) (Tensor, error) {
	in := [5]int64{int64(doutput), int64(token), int64(firstTokenOffset)}
	return g.moe("Graph.MoeGroupedMatmulBackward", true, in, opts)
}

func (g *Graph) moe(op string, backward bool, in [5]int64, opts *MoeGroupedMatmulOptions) (Tensor, error) {
	c, err := opts.toC(op)
	if err != nil {
		return 0, err
	}
	var out int64
	err = g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddMoeGroupedMatmul(backward, p, in, c, &out)
	})
	return Tensor(out), err
}
