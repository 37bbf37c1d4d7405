package cudnnfe

import "github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"

// FP8 attention, as cudnn-frontend's sdpa_fp8 defines it (cuDNN runs it on
// Hopper and newer). Every descale and scale is a one-element FLOAT tensor
// (a graph input bound at execute, or a Scalar); a value x stored in FP8 as
// x * scale is read back as stored * descale. Every amax output (largest
// magnitude before its scale, [1,1,1,1] FLOAT) must be marked with
// SetOutput: validation refuses a virtual one.

// SDPAFP8Scales are the per-tensor descales and scales of SDPAFP8.
type SDPAFP8Scales struct {
	DescaleQ, DescaleK, DescaleV Tensor
	// DescaleS and ScaleS: the FP8 softmax output P is stored as P *
	// ScaleS and read back times DescaleS.
	DescaleS, ScaleS Tensor
	// ScaleO scales the output.
	ScaleO Tensor
}

// SDPAFP8Options configures SDPAFP8.
type SDPAFP8Options struct {
	Name string
	// AttnScale is the softmax scale applied to Q·Kᵀ after the descales; 0
	// means 1/sqrt(d).
	AttnScale float64
	// GenerateStats also returns stats [b, h_q, s_q, 1] FLOAT for backward.
	GenerateStats bool
	// CausalMask aligns a causal mask at the top-left corner.
	CausalMask bool
	// FP8Band: the diagonal band (sliding window).
	FP8Band
	// FP8PaddingDropout: padding and dropout (since 0.3).
	FP8PaddingDropout
	// AlibiMask, PageTableK, PageTableV and MaxSeqLenKV: ALiBi and a paged
	// K/V cache, as AttentionOptions' and SDPAOptions' fields of the same
	// names (since 0.3).
	AlibiMask              bool
	PageTableK, PageTableV Tensor
	MaxSeqLenKV            int64
	// SinkToken: a sink logit per query head, as SDPAOptions' (since 0.3).
	SinkToken Tensor
}

// FP8PaddingDropout is FP8 attention's padding and dropout, as
// AttentionOptions' fields of the same names (the backward must be given
// the forward's). P is dropped before ScaleS; AmaxS is taken after.
type FP8PaddingDropout struct {
	PaddingMask                bool
	SeqLenQ, SeqLenKV          Tensor
	DropoutProbability         float64
	DropoutSeed, DropoutOffset Tensor
	DropoutMask, DropoutScale  Tensor
}

// fp8PaddingDropoutC points at the C fields FP8PaddingDropout fills.
type fp8PaddingDropoutC struct {
	padding                                   *int32
	seqQ, seqKV, seed, offset, mask, scaleUID *int64
	probability                               *float64
}

// setTensorField overlays a non-zero tensor on a C field.
func setTensorField(dst *int64, t Tensor) {
	if t != 0 {
		*dst = int64(t)
	}
}

// toC overlays the non-zero fields on the C fields (filled with the C
// defaults).
func (p *FP8PaddingDropout) toC(c fp8PaddingDropoutC) {
	*c.padding |= b2i(p.PaddingMask)
	setTensorField(c.seqQ, p.SeqLenQ)
	setTensorField(c.seqKV, p.SeqLenKV)
	if p.DropoutProbability != 0 {
		*c.probability = p.DropoutProbability
	}
	setTensorField(c.seed, p.DropoutSeed)
	setTensorField(c.offset, p.DropoutOffset)
	setTensorField(c.mask, p.DropoutMask)
	setTensorField(c.scaleUID, p.DropoutScale)
}

// FP8Band is FP8 attention's diagonal band, as AttentionOptions' fields of
// the same names (0 keeps the default, -1: that side open; a right bound of
// 0 is CausalMask, or CausalMaskBottomRight).
type FP8Band struct {
	WindowLeft, WindowRight int64
	DiagonalAlignment       DiagonalAlignment
	// CausalMaskBottomRight is WindowRight 0 with DiagonalBottomRight (the
	// C ABI's FP8 attention has no flag for it).
	CausalMaskBottomRight bool
}

// toC overlays the non-zero fields on the C fields (filled with the C
// defaults).
func (b *FP8Band) toC(left, right *int64, alignment *int32) {
	if b.WindowLeft != 0 {
		*left = b.WindowLeft
	}
	if b.WindowRight != 0 {
		*right = b.WindowRight
	}
	if b.DiagonalAlignment != 0 {
		*alignment = int32(b.DiagonalAlignment)
	}
	if b.CausalMaskBottomRight {
		*right = 0
		*alignment = int32(DiagonalBottomRight)
	}
}

// DefaultSDPAFP8Options returns the defaults of
// cudnnfe_sdpa_fp8_options_init.
func DefaultSDPAFP8Options() SDPAFP8Options {
	var c capi.SDPAFP8Options
	capi.SDPAFP8OptionsInit(&c)
	return SDPAFP8Options{AttnScale: c.AttnScale, GenerateStats: c.GenerateStats != 0,
		CausalMask: c.CausalMask != 0, FP8Band: FP8Band{WindowLeft: c.WindowLeft,
			WindowRight: c.WindowRight, DiagonalAlignment: DiagonalAlignment(c.DiagonalAlignment)}}
}

// SDPAFP8Outputs are the outputs of SDPAFP8.
type SDPAFP8Outputs struct {
	// O [b, h_q, s_q, d_v] has q's dimension order and, by default, q's
	// type (set it with SetDType: FP8, HALF or BFLOAT16).
	O Tensor
	// Stats when GenerateStats was set, else 0.
	Stats Tensor
	// AmaxS = max|P|, AmaxO = max|O| before ScaleO.
	AmaxS, AmaxO Tensor
}

// SDPAFP8 adds FP8 attention forward: q [b, h_q, s_q, d], k [b, h_kv, s_kv,
// d], v [b, h_kv, s_kv, d_v] of one FP8 type, any strides. With S = Q·Kᵀ *
// AttnScale * DescaleQ * DescaleK and P = softmax(S): P8 = fp8(P * ScaleS),
// O' = P8·V * DescaleS * DescaleV, o = O' * ScaleO.
func (g *Graph) SDPAFP8(q, k, v Tensor, scales SDPAFP8Scales, opts *SDPAFP8Options) (SDPAFP8Outputs, error) {
	const op = "Graph.SDPAFP8"
	var c *capi.SDPAFP8Options
	if opts != nil {
		if err := checkName(op, "node name", opts.Name); err != nil {
			return SDPAFP8Outputs{}, err
		}
		c = &capi.SDPAFP8Options{}
		capi.SDPAFP8OptionsInit(c)
		c.Name = opts.Name
		if opts.AttnScale != 0 {
			c.AttnScale = opts.AttnScale
		}
		c.GenerateStats |= b2i(opts.GenerateStats)
		c.CausalMask |= b2i(opts.CausalMask)
		opts.FP8Band.toC(&c.WindowLeft, &c.WindowRight, &c.DiagonalAlignment)
		opts.FP8PaddingDropout.toC(fp8PaddingDropoutC{&c.PaddingMask, &c.SeqLenQ, &c.SeqLenKV,
			&c.DropoutSeed, &c.DropoutOffset, &c.DropoutMask, &c.DropoutScale,
			&c.DropoutProbability})
		c.AlibiMask |= b2i(opts.AlibiMask)
		setTensorField(&c.PageTableK, opts.PageTableK)
		setTensorField(&c.PageTableV, opts.PageTableV)
		if opts.MaxSeqLenKV != 0 {
			c.MaxSeqLenKV = opts.MaxSeqLenKV
		}
		setTensorField(&c.SinkToken, opts.SinkToken)
	}
	s := scales
	t := [9]int64{int64(q), int64(k), int64(v), int64(s.DescaleQ), int64(s.DescaleK),
		int64(s.DescaleV), int64(s.DescaleS), int64(s.ScaleS), int64(s.ScaleO)}
	var out [4]int64
	err := g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddSDPAFP8(p, t, c, &out)
	})
	if err != nil {
		return SDPAFP8Outputs{}, err
	}
	return SDPAFP8Outputs{O: Tensor(out[0]), Stats: Tensor(out[1]), AmaxS: Tensor(out[2]),
		AmaxO: Tensor(out[3])}, nil
}

// SDPAFP8BackwardScales are the per-tensor descales and scales of
// SDPAFP8Backward.
type SDPAFP8BackwardScales struct {
	DescaleQ, DescaleK, DescaleV Tensor
	// DescaleO and DescaleDO: the forward's output and the output gradient.
	DescaleO, DescaleDO Tensor
	// DescaleS, ScaleS: the FP8 P; DescaleDP, ScaleDP: the FP8 dS.
	DescaleS, DescaleDP Tensor
	ScaleS              Tensor
	// ScaleDQ, ScaleDK, ScaleDV scale the gradients.
	ScaleDQ, ScaleDK, ScaleDV Tensor
	ScaleDP                   Tensor
}

// SDPAFP8BackwardOptions configures SDPAFP8Backward (must match the
// forward).
type SDPAFP8BackwardOptions struct {
	Name       string
	AttnScale  float64 // 0: 1/sqrt(d)
	CausalMask bool
	FP8Band
	FP8PaddingDropout
	// DropoutScaleInv: with DropoutMask, 1 / DropoutScale (a FLOAT tensor
	// of one element), as SDPABackwardOptions' (since 0.3).
	DropoutScaleInv Tensor
}

// DefaultSDPAFP8BackwardOptions returns the defaults of
// cudnnfe_sdpa_fp8_backward_options_init.
func DefaultSDPAFP8BackwardOptions() SDPAFP8BackwardOptions {
	var c capi.SDPAFP8BackwardOptions
	capi.SDPAFP8BackwardOptionsInit(&c)
	return SDPAFP8BackwardOptions{AttnScale: c.AttnScale, CausalMask: c.CausalMask != 0,
		FP8Band: FP8Band{WindowLeft: c.WindowLeft, WindowRight: c.WindowRight,
			DiagonalAlignment: DiagonalAlignment(c.DiagonalAlignment)}}
}

// SDPAFP8Gradients are the outputs of SDPAFP8Backward: gradients with the
// shapes and dimension orders of q, k, v (by default q's type) and their
// amax outputs, plus that of dS.
type SDPAFP8Gradients struct {
	DQ, DK, DV                     Tensor
	AmaxDQ, AmaxDK, AmaxDV, AmaxDP Tensor
}

// SDPAFP8Backward adds FP8 attention backward from q, k, v, the forward's
// o, the FP8 output gradient dO and the forward's stats (the C header gives
// the formulas).
func (g *Graph) SDPAFP8Backward(q, k, v, o, dO, stats Tensor, scales SDPAFP8BackwardScales, opts *SDPAFP8BackwardOptions) (SDPAFP8Gradients, error) {
	const op = "Graph.SDPAFP8Backward"
	var c *capi.SDPAFP8BackwardOptions
	if opts != nil {
		if err := checkName(op, "node name", opts.Name); err != nil {
			return SDPAFP8Gradients{}, err
		}
		c = &capi.SDPAFP8BackwardOptions{}
		capi.SDPAFP8BackwardOptionsInit(c)
		c.Name = opts.Name
		if opts.AttnScale != 0 {
			c.AttnScale = opts.AttnScale
		}
		c.CausalMask |= b2i(opts.CausalMask)
		opts.FP8Band.toC(&c.WindowLeft, &c.WindowRight, &c.DiagonalAlignment)
		opts.FP8PaddingDropout.toC(fp8PaddingDropoutC{&c.PaddingMask, &c.SeqLenQ, &c.SeqLenKV,
			&c.DropoutSeed, &c.DropoutOffset, &c.DropoutMask, &c.DropoutScale,
			&c.DropoutProbability})
		setTensorField(&c.DropoutScaleInv, opts.DropoutScaleInv)
	}
	s := scales
	t := [18]int64{int64(q), int64(k), int64(v), int64(o), int64(dO), int64(stats),
		int64(s.DescaleQ), int64(s.DescaleK), int64(s.DescaleV), int64(s.DescaleO),
		int64(s.DescaleDO), int64(s.DescaleS), int64(s.DescaleDP), int64(s.ScaleS),
		int64(s.ScaleDQ), int64(s.ScaleDK), int64(s.ScaleDV), int64(s.ScaleDP)}
	var out [7]int64
	err := g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddSDPAFP8Backward(p, t, c, &out)
	})
	if err != nil {
		return SDPAFP8Gradients{}, err
	}
	return SDPAFP8Gradients{DQ: Tensor(out[0]), DK: Tensor(out[1]), DV: Tensor(out[2]),
		AmaxDQ: Tensor(out[3]), AmaxDK: Tensor(out[4]), AmaxDV: Tensor(out[5]), AmaxDP: Tensor(out[6])}, nil
}
