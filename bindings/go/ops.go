package cudnnfe

import (
	"strconv"

	"github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"
)

// Options structs.
//
// Every op takes a pointer to its options struct; nil means the defaults of
// the C init function (cudnnfe_<op>_options_init). A field left at its Go
// zero value also keeps the C default, so &PointwiseOptions{Name: "act"}
// does not turn the default "no upper clip" into "clip at 0". The
// Default*Options functions return the defaults themselves, read from the C
// init functions. (Consequence: two defaults that are not zero cannot be
// set to exactly 0 — PointwiseOptions.EluAlpha and SwishBeta; use
// PointwiseReluFwd for ELU with alpha 0.)
//
// Outputs are new virtual tensors whose shape is inferred at once; mark the
// ones to read with Graph.SetOutput. Name names the node ("" gives
// "<op>_<n>"); outputs are named "<node>::<port>".

// ConvOptions configures ConvFprop, ConvDgrad and ConvWgrad.
type ConvOptions struct {
	Name string
	// SpatialDims is the spatial rank (1 to 3); 0 takes the image's rank
	// minus 2.
	SpatialDims int
	// Per spatial dimension, at most MaxSpatialDims entries; entries not
	// given keep their default. Padding defaults to 0, stride and dilation
	// to 1.
	PrePadding, PostPadding, Stride, Dilation []int64
	// Mode defaults to ConvModeCrossCorrelation, like frameworks.
	Mode         ConvMode
	ComputeDType DType
}

// DefaultConvOptions returns the defaults of cudnnfe_conv_options_init.
func DefaultConvOptions() ConvOptions {
	var c capi.ConvOptions
	capi.ConvOptionsInit(&c)
	return ConvOptions{
		SpatialDims:  int(c.SpatialDims),
		PrePadding:   append([]int64(nil), c.PrePadding[:]...),
		PostPadding:  append([]int64(nil), c.PostPadding[:]...),
		Stride:       append([]int64(nil), c.Stride[:]...),
		Dilation:     append([]int64(nil), c.Dilation[:]...),
		Mode:         ConvMode(c.Mode),
		ComputeDType: DType(c.ComputeDtype),
	}
}

func (o *ConvOptions) toC(op string) (*capi.ConvOptions, error) {
	if o == nil {
		return nil, nil
	}
	if err := checkName(op, "node name", o.Name); err != nil {
		return nil, err
	}
	var c capi.ConvOptions
	capi.ConvOptionsInit(&c)
	c.Name = o.Name
	if o.SpatialDims != 0 {
		if o.SpatialDims < 0 || o.SpatialDims > MaxSpatialDims {
			return nil, argError(op, "conv options: SpatialDims is "+strconv.Itoa(o.SpatialDims)+
				"; expected 0 to "+strconv.Itoa(MaxSpatialDims))
		}
		c.SpatialDims = int32(o.SpatialDims)
	}
	for _, f := range []struct {
		name string
		src  []int64
		dst  *[3]int64
	}{{"PrePadding", o.PrePadding, &c.PrePadding}, {"PostPadding", o.PostPadding, &c.PostPadding},
		{"Stride", o.Stride, &c.Stride}, {"Dilation", o.Dilation, &c.Dilation}} {
		if len(f.src) > MaxSpatialDims {
			return nil, argError(op, "conv options: "+f.name+" has "+strconv.Itoa(len(f.src))+
				" entries; at most "+strconv.Itoa(MaxSpatialDims))
		}
		copy(f.dst[:], f.src)
	}
	if o.Mode != 0 {
		c.Mode = int32(o.Mode)
	}
	if o.ComputeDType != 0 {
		c.ComputeDtype = int32(o.ComputeDType)
	}
	return &c, nil
}

func (g *Graph) conv(op string, kind int, in0, in1 Tensor, opts *ConvOptions) (Tensor, error) {
	c, err := opts.toC(op)
	if err != nil {
		return 0, err
	}
	var out int64
	err = g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddConv(kind, p, int64(in0), int64(in1), c, &out)
	})
	return Tensor(out), err
}

// ConvFprop adds y[N,K,*] = conv(image[N,C,*], weight[K,C,*]). Dims are
// logical NC(D)HW in every layout; strides give the memory layout. y (like
// dx and dw of ConvDgrad and ConvWgrad) is channels-last unless its strides
// are set, as in cudnn-frontend.
func (g *Graph) ConvFprop(image, weight Tensor, opts *ConvOptions) (Tensor, error) {
	return g.conv("Graph.ConvFprop", capi.ConvFprop, image, weight, opts)
}

// ConvDgrad adds dx = dgrad(loss dy[N,K,*], weight[K,C,*]). dx's spatial
// dims are inferred as the smallest consistent size; override with SetDims
// when a stride is > 1.
func (g *Graph) ConvDgrad(loss, weight Tensor, opts *ConvOptions) (Tensor, error) {
	return g.conv("Graph.ConvDgrad", capi.ConvDgrad, loss, weight, opts)
}

// ConvWgrad adds dw = wgrad(image x[N,C,*], loss dy[N,K,*]). dw's filter
// size is inferred as the largest consistent size; override with SetDims
// when a stride is > 1.
func (g *Graph) ConvWgrad(image, loss Tensor, opts *ConvOptions) (Tensor, error) {
	return g.conv("Graph.ConvWgrad", capi.ConvWgrad, image, loss, opts)
}

// MatmulOptions configures Matmul.
type MatmulOptions struct {
	Name         string
	ComputeDType DType
}

// DefaultMatmulOptions returns the defaults of cudnnfe_matmul_options_init.
func DefaultMatmulOptions() MatmulOptions {
	var c capi.MatmulOptions
	capi.MatmulOptionsInit(&c)
	return MatmulOptions{ComputeDType: DType(c.ComputeDtype)}
}

// Matmul adds c[..., M, N] = a[..., M, K] @ b[..., K, N]. Ranks must match
// (2 to MaxDims); batch dims of size 1 broadcast.
func (g *Graph) Matmul(a, b Tensor, opts *MatmulOptions) (Tensor, error) {
	const op = "Graph.Matmul"
	var c *capi.MatmulOptions
	if opts != nil {
		if err := checkName(op, "node name", opts.Name); err != nil {
			return 0, err
		}
		c = &capi.MatmulOptions{}
		capi.MatmulOptionsInit(c)
		c.Name = opts.Name
		if opts.ComputeDType != 0 {
			c.ComputeDtype = int32(opts.ComputeDType)
		}
	}
	var out int64
	err := g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddMatmul(p, int64(a), int64(b), c, &out)
	})
	return Tensor(out), err
}

// PointwiseOptions configures Pointwise. Zero fields keep the C defaults
// (see DefaultPointwiseOptions).
type PointwiseOptions struct {
	Name               string
	ComputeDType       DType
	ReluLowerClip      float64 // default 0
	ReluUpperClip      float64 // default 3.4e38 (no clip)
	ReluLowerClipSlope float64 // default 0 (leaky ReLU when > 0)
	EluAlpha           float64 // default 1
	SoftplusBeta       float64 // default 1
	SwishBeta          float64 // default 1
	Axis               int     // PointwiseGenIndex: the dimension to index; default 0
}

// DefaultPointwiseOptions returns the defaults of
// cudnnfe_pointwise_options_init.
func DefaultPointwiseOptions() PointwiseOptions {
	var c capi.PointwiseOptions
	capi.PointwiseOptionsInit(&c)
	return PointwiseOptions{
		ComputeDType:       DType(c.ComputeDtype),
		ReluLowerClip:      c.ReluLowerClip,
		ReluUpperClip:      c.ReluUpperClip,
		ReluLowerClipSlope: c.ReluLowerClipSlope,
		EluAlpha:           c.EluAlpha,
		SoftplusBeta:       c.SoftplusBeta,
		SwishBeta:          c.SwishBeta,
		Axis:               int(c.Axis),
	}
}

// Pointwise adds an elementwise op (see PointwiseMode for the operands'
// roles); unused operands are 0. Operands broadcast: each dim equals the
// output's or is 1. The output takes in0's shape broadcast against the
// others.
func (g *Graph) Pointwise(mode PointwiseMode, in0, in1, in2 Tensor, opts *PointwiseOptions) (Tensor, error) {
	const op = "Graph.Pointwise"
	var c *capi.PointwiseOptions
	if opts != nil {
		if err := checkName(op, "node name", opts.Name); err != nil {
			return 0, err
		}
		if int64(opts.Axis) != int64(int32(opts.Axis)) {
			return 0, argError(op, "pointwise options: Axis "+strconv.Itoa(opts.Axis)+" is out of range")
		}
		c = &capi.PointwiseOptions{}
		capi.PointwiseOptionsInit(c)
		c.Name = opts.Name
		if opts.ComputeDType != 0 {
			c.ComputeDtype = int32(opts.ComputeDType)
		}
		overlay := func(dst *float64, v float64) {
			if v != 0 {
				*dst = v
			}
		}
		overlay(&c.ReluLowerClip, opts.ReluLowerClip)
		overlay(&c.ReluUpperClip, opts.ReluUpperClip)
		overlay(&c.ReluLowerClipSlope, opts.ReluLowerClipSlope)
		overlay(&c.EluAlpha, opts.EluAlpha)
		overlay(&c.SoftplusBeta, opts.SoftplusBeta)
		overlay(&c.SwishBeta, opts.SwishBeta)
		if opts.Axis != 0 {
			c.Axis = int32(opts.Axis)
		}
	}
	var out int64
	err := g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddPointwise(p, int32(mode), int64(in0), int64(in1), int64(in2), c, &out)
	})
	return Tensor(out), err
}

// Unary adds a one-operand pointwise op: Pointwise(mode, x, 0, 0, opts).
func (g *Graph) Unary(mode PointwiseMode, x Tensor, opts *PointwiseOptions) (Tensor, error) {
	return g.Pointwise(mode, x, 0, 0, opts)
}

// Binary adds a two-operand pointwise op: Pointwise(mode, a, b, 0, opts).
func (g *Graph) Binary(mode PointwiseMode, a, b Tensor, opts *PointwiseOptions) (Tensor, error) {
	return g.Pointwise(mode, a, b, 0, opts)
}

// ReductionOptions configures Reduction.
type ReductionOptions struct {
	Name         string
	ComputeDType DType
	// Axes lists the dimensions reduced to 1; empty reduces every dimension.
	// (The output's dims may instead be set with Graph.SetDims.)
	Axes          []int
	Deterministic bool
}

// DefaultReductionOptions returns the defaults of
// cudnnfe_reduction_options_init.
func DefaultReductionOptions() ReductionOptions {
	var c capi.ReductionOptions
	capi.ReductionOptionsInit(&c)
	o := ReductionOptions{ComputeDType: DType(c.ComputeDtype), Deterministic: c.Deterministic != 0}
	for i := 0; i < 32; i++ {
		if c.AxesMask&(1<<i) != 0 {
			o.Axes = append(o.Axes, i)
		}
	}
	return o
}

// Reduction adds y = reduce(x) over opts.Axes (every dimension by default).
// y is channels-last (N, spatial..., C; row-major for 2 dims) unless its
// strides are set, as in cudnn-frontend.
func (g *Graph) Reduction(mode ReductionMode, x Tensor, opts *ReductionOptions) (Tensor, error) {
	const op = "Graph.Reduction"
	var c *capi.ReductionOptions
	if opts != nil {
		if err := checkName(op, "node name", opts.Name); err != nil {
			return 0, err
		}
		c = &capi.ReductionOptions{}
		capi.ReductionOptionsInit(c)
		c.Name = opts.Name
		if opts.ComputeDType != 0 {
			c.ComputeDtype = int32(opts.ComputeDType)
		}
		if len(opts.Axes) > 0 {
			var mask uint32
			for _, a := range opts.Axes {
				if a < 0 || a >= MaxDims {
					return 0, argError(op, "reduction options: axis "+strconv.Itoa(a)+
						" is out of range; expected 0 to "+strconv.Itoa(MaxDims-1))
				}
				mask |= 1 << a
			}
			c.AxesMask = mask
		}
		if opts.Deterministic {
			c.Deterministic = 1
		}
	}
	var out int64
	err := g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddReduction(p, int32(mode), int64(x), c, &out)
	})
	return Tensor(out), err
}

// AttentionOptions are the attention options SDPAOptions and
// SDPABackwardOptions share beyond scale, causal flags and bias;
// docs/attention.md defines each exactly. The backward must be given the
// forward's: copy the embedded value (bwd.AttentionOptions =
// fwd.AttentionOptions). As everywhere, a zero field keeps the C default.
type AttentionOptions struct {
	// AttnScaleTensor takes the softmax scale from a FLOAT tensor of one
	// element: a graph input (read at every execute, so one plan serves any
	// scale) or a Scalar. AttnScale must then be 0.
	AttnScaleTensor Tensor
	// PaddingMask: variable sequence lengths. SeqLenQ and SeqLenKV are INT32
	// graph inputs of dims [b, 1, 1, 1]: row i of batch n sees column j only
	// if i < SeqLenQ[n] and j < SeqLenKV[n]. Padding rows of o and stats
	// (and of dq, dk, dv) are unspecified on the GPU, 0 (stats -inf) on the
	// CPU reference.
	PaddingMask       bool
	SeqLenQ, SeqLenKV Tensor
	// WindowLeft and WindowRight bound the diagonal band (sliding window)
	// around row i's diagonal d(i): row i sees column j only if j > d(i) -
	// WindowLeft (when WindowLeft >= 1) and j <= d(i) + WindowRight (when
	// WindowRight >= 0). 0 keeps the default, -1: that side open. A right
	// bound of 0 is CausalMask (with DiagonalTopLeft) or
	// CausalMaskBottomRight (DiagonalBottomRight).
	WindowLeft, WindowRight int64
	// DiagonalAlignment: d(i) = i (DiagonalTopLeft, the default) or i +
	// s_kv - s_q (DiagonalBottomRight; with padding, i + SeqLenKV[n] -
	// SeqLenQ[n]). A causal flag fixes it.
	DiagonalAlignment DiagonalAlignment
	// AlibiMask adds ALiBi's slope(h) * (j - i) to the scores, with
	// cudnn-frontend's slopes. On a GPU it needs a right bound of 0 without
	// bottom-right alignment (CausalMask), as cudnn-frontend checks
	// (ErrNotSupported at validation); the CPU reference takes any mask.
	AlibiMask bool
	// Dropout of the softmax output P, drawn: each element dropped with
	// DropoutProbability p (0 <= p < 1), kept ones scaled by 1/(1-p), from
	// DropoutSeed and DropoutOffset (INT64 tensors of one element; the CPU
	// reference draws other bits than cuDNN). Or given: P multiplied by
	// DropoutScale * DropoutMask (mask broadcastable to [b, h_q, s_q,
	// s_kv], scale a FLOAT tensor of one element).
	DropoutProbability         float64
	DropoutSeed, DropoutOffset Tensor
	DropoutMask, DropoutScale  Tensor
	// RaggedOffsetQ, K, V, O: packed ("THD") storage of q, k, v and o
	// (in the backward also of dq, dk, dv and dO): an INT32 or INT64 graph
	// input of dims [b+1, 1, 1, 1] holding, per batch n, the element offset
	// where sequence n starts in the tensor's buffer (cudnn-frontend's
	// set_ragged_offset). Needs PaddingMask with SeqLenQ and SeqLenKV; only
	// valid rows are read or written. 0: that tensor is not ragged.
	RaggedOffsetQ, RaggedOffsetK Tensor
	RaggedOffsetV, RaggedOffsetO Tensor
	// RaggedOffsetStats: the same for the stats (the forward's output with
	// GenerateStats, the backward's input). 0: padded. Since 0.3.
	RaggedOffsetStats Tensor
	// ScoreMod: a score modifier applied to every element of the scores,
	// the placeholder BeginScoreMod returned (closed by EndScoreMod; see
	// ScoreMod in score_mod.go). The backward must build the forward's
	// modifier again and name it here too. 0: none. Since 0.3.
	ScoreMod Tensor
}

func defaultAttentionOptions(c *capi.AttentionOptions) AttentionOptions {
	return AttentionOptions{AttnScaleTensor: Tensor(c.AttnScaleTensor), PaddingMask: c.PaddingMask != 0,
		SeqLenQ: Tensor(c.SeqLenQ), SeqLenKV: Tensor(c.SeqLenKV), WindowLeft: c.WindowLeft,
		WindowRight: c.WindowRight, DiagonalAlignment: DiagonalAlignment(c.DiagonalAlignment),
		AlibiMask: c.AlibiMask != 0, DropoutProbability: c.DropoutProbability,
		DropoutSeed: Tensor(c.DropoutSeed), DropoutOffset: Tensor(c.DropoutOffset),
		DropoutMask: Tensor(c.DropoutMask), DropoutScale: Tensor(c.DropoutScale),
		RaggedOffsetQ: Tensor(c.RaggedOffsetQ), RaggedOffsetK: Tensor(c.RaggedOffsetK),
		RaggedOffsetV: Tensor(c.RaggedOffsetV), RaggedOffsetO: Tensor(c.RaggedOffsetO),
		RaggedOffsetStats: Tensor(c.RaggedOffsetStats), ScoreMod: Tensor(c.ScoreMod)}
}

// toC overlays the non-zero fields on c (filled with the C defaults).
func (a *AttentionOptions) toC(c *capi.AttentionOptions) {
	setTensor := func(dst *int64, t Tensor) {
		if t != 0 {
			*dst = int64(t)
		}
	}
	setTensor(&c.AttnScaleTensor, a.AttnScaleTensor)
	c.PaddingMask |= b2i(a.PaddingMask)
	setTensor(&c.SeqLenQ, a.SeqLenQ)
	setTensor(&c.SeqLenKV, a.SeqLenKV)
	if a.WindowLeft != 0 {
		c.WindowLeft = a.WindowLeft
	}
	if a.WindowRight != 0 {
		c.WindowRight = a.WindowRight
	}
	if a.DiagonalAlignment != 0 {
		c.DiagonalAlignment = int32(a.DiagonalAlignment)
	}
	c.AlibiMask |= b2i(a.AlibiMask)
	if a.DropoutProbability != 0 {
		c.DropoutProbability = a.DropoutProbability
	}
	setTensor(&c.DropoutSeed, a.DropoutSeed)
	setTensor(&c.DropoutOffset, a.DropoutOffset)
	setTensor(&c.DropoutMask, a.DropoutMask)
	setTensor(&c.DropoutScale, a.DropoutScale)
	setTensor(&c.RaggedOffsetQ, a.RaggedOffsetQ)
	setTensor(&c.RaggedOffsetK, a.RaggedOffsetK)
	setTensor(&c.RaggedOffsetV, a.RaggedOffsetV)
	setTensor(&c.RaggedOffsetO, a.RaggedOffsetO)
	setTensor(&c.RaggedOffsetStats, a.RaggedOffsetStats)
	setTensor(&c.ScoreMod, a.ScoreMod)
}

// SDPAOptions configures SDPA.
type SDPAOptions struct {
	Name string
	// AttnScale is the softmax scale applied to Q·Kᵀ; 0 means 1/sqrt(d_qk).
	AttnScale float64
	// GenerateStats also writes stats [b, h_q, s_q, 1] FLOAT (log-sum-exp).
	GenerateStats bool
	// CausalMask aligns a causal mask at the top-left corner (row i sees
	// columns <= i); CausalMaskBottomRight at the bottom-right corner (row i
	// sees columns <= i + s_kv - s_q). At most one of the two.
	CausalMask            bool
	CausalMaskBottomRight bool
	// Bias is an optional additive bias tensor, broadcastable to
	// [b, h_q, s_q, s_kv].
	Bias         Tensor
	ComputeDType DType
	// Padding, diagonal band, ALiBi, scale tensor, dropout and ragged offsets.
	AttentionOptions
	// PageTableK and PageTableV: a paged K/V cache. k (or v) is then a page
	// container [num_pages, h_kv, page_size, d] and its table an INT32 graph
	// input [b, 1, pages, 1]: key j of batch n is row j % page_size of page
	// table[n][j / page_size]. Needs PaddingMask with SeqLenKV. MaxSeqLenKV
	// sets s_kv (0: the other tensor's s_kv, else the pages' capacity).
	PageTableK, PageTableV Tensor
	MaxSeqLenKV            int64
	// Implementation: composite graph or unified operation (0: AttentionAuto).
	// Since 0.3.
	Implementation AttentionImplementation
	// SinkToken: a FLOAT [1, h_q, 1, 1] sink logit per query head, added to
	// each row's softmax denominator. Since 0.3.
	SinkToken Tensor
	// BlockMask: a UINT8 bit-packed mask of 128x128 score tiles, [b, h_q,
	// ceil(s_q/128), ceil(ceil(s_kv/128)/8)] (unified only). Since 0.3.
	BlockMask Tensor
	// RaggedOffsetPageTableK and RaggedOffsetPageTableV make a page table
	// packed: INT32 or INT64 [b+1, 1, 1, 1] offsets, batch n's entries
	// starting at element offset[n] of the table (cuDNN 9.10.2 and newer).
	// Since 0.3.
	RaggedOffsetPageTableK, RaggedOffsetPageTableV Tensor
	// ScoreMax and ScoreSumExp: FLOAT [b, h_q, s_q, 1] tensors made with
	// AddTensor that no op reads, which the node takes as its outputs
	// (cudnn-frontend's score_max, score_sum_exp): the softmax's row max m
	// and its sum of exponentials Z (a sink included), so stats = m +
	// log(Z). A row that sees no column has m = -inf, Z = 0. RNGDump: a
	// FLOAT [b, h_q, s_q, s_kv] tensor made the same way that receives the
	// dropout mask drawn from DropoutSeed and DropoutOffset (0 or 1). Bind
	// them at execute as outputs. 0: not written. Since 0.4.
	ScoreMax, ScoreSumExp, RNGDump Tensor
	// RaggedOffsetScoreMax, RaggedOffsetScoreSumExp: ragged offsets of
	// ScoreMax and ScoreSumExp, as RaggedOffsetStats for the stats (or set
	// later with SetRaggedOffset on the output). 0: padded. Since 0.4.
	RaggedOffsetScoreMax, RaggedOffsetScoreSumExp Tensor
	// UnfuseFMA: the unified operation computes its softmax with unfused
	// multiply-adds (cudnn-frontend's unfuse_fma; cuDNN 9.21 and newer,
	// else ErrNotSupported for a node that runs unified); the composite
	// graph and the CPU reference ignore it. Since 0.4.
	UnfuseFMA bool
}

// DefaultSDPAOptions returns the defaults of cudnnfe_sdpa_options_init.
func DefaultSDPAOptions() SDPAOptions {
	var c capi.SDPAOptions
	capi.SDPAOptionsInit(&c)
	return SDPAOptions{
		AttnScale:               c.AttnScale,
		GenerateStats:           c.GenerateStats != 0,
		CausalMask:              c.CausalMask != 0,
		CausalMaskBottomRight:   c.CausalMaskBottomRight != 0,
		Bias:                    Tensor(c.Bias),
		ComputeDType:            DType(c.ComputeDtype),
		AttentionOptions:        defaultAttentionOptions(&c.AttentionOptions),
		PageTableK:              Tensor(c.PageTableK),
		PageTableV:              Tensor(c.PageTableV),
		MaxSeqLenKV:             c.MaxSeqLenKV,
		Implementation:          AttentionImplementation(c.Implementation),
		SinkToken:               Tensor(c.SinkToken),
		BlockMask:               Tensor(c.BlockMask),
		RaggedOffsetPageTableK:  Tensor(c.RaggedOffsetPageTableK),
		RaggedOffsetPageTableV:  Tensor(c.RaggedOffsetPageTableV),
		ScoreMax:                Tensor(c.ScoreMax),
		ScoreSumExp:             Tensor(c.ScoreSumExp),
		RNGDump:                 Tensor(c.RNGDump),
		RaggedOffsetScoreMax:    Tensor(c.RaggedOffsetScoreMax),
		RaggedOffsetScoreSumExp: Tensor(c.RaggedOffsetScoreSumExp),
		UnfuseFMA:               c.UnfuseFma != 0,
	}
}

func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// SDPA adds scaled dot-product attention (forward). q [b, h_q, s_q, d],
// k [b, h_k, s_kv, d], v [b, h_v, s_kv, d_v] in logical BHSD order with any
// strides (BSHD storage included); h_k and h_v (which may differ) must each
// divide h_q (GQA, MQA; ErrNotSupported otherwise).
// It returns o [b, h_q, s_q, d_v] (with q's dimension order) and, when
// opts.GenerateStats is set, stats (else 0).
func (g *Graph) SDPA(q, k, v Tensor, opts *SDPAOptions) (o, stats Tensor, err error) {
	const op = "Graph.SDPA"
	var c *capi.SDPAOptions
	wantStats := false
	if opts != nil {
		if err := checkName(op, "node name", opts.Name); err != nil {
			return 0, 0, err
		}
		c = &capi.SDPAOptions{}
		capi.SDPAOptionsInit(c)
		c.Name = opts.Name
		if opts.AttnScale != 0 {
			c.AttnScale = opts.AttnScale
		}
		if opts.GenerateStats {
			c.GenerateStats = 1
		}
		c.CausalMask |= b2i(opts.CausalMask)
		c.CausalMaskBottomRight |= b2i(opts.CausalMaskBottomRight)
		if opts.Bias != 0 {
			c.Bias = int64(opts.Bias)
		}
		if opts.ComputeDType != 0 {
			c.ComputeDtype = int32(opts.ComputeDType)
		}
		opts.AttentionOptions.toC(&c.AttentionOptions)
		if opts.PageTableK != 0 {
			c.PageTableK = int64(opts.PageTableK)
		}
		if opts.PageTableV != 0 {
			c.PageTableV = int64(opts.PageTableV)
		}
		if opts.MaxSeqLenKV != 0 {
			c.MaxSeqLenKV = opts.MaxSeqLenKV
		}
		if opts.Implementation != 0 {
			c.Implementation = int32(opts.Implementation)
		}
		if opts.SinkToken != 0 {
			c.SinkToken = int64(opts.SinkToken)
		}
		if opts.BlockMask != 0 {
			c.BlockMask = int64(opts.BlockMask)
		}
		if opts.RaggedOffsetPageTableK != 0 {
			c.RaggedOffsetPageTableK = int64(opts.RaggedOffsetPageTableK)
		}
		if opts.RaggedOffsetPageTableV != 0 {
			c.RaggedOffsetPageTableV = int64(opts.RaggedOffsetPageTableV)
		}
		if opts.ScoreMax != 0 {
			c.ScoreMax = int64(opts.ScoreMax)
		}
		if opts.ScoreSumExp != 0 {
			c.ScoreSumExp = int64(opts.ScoreSumExp)
		}
		if opts.RNGDump != 0 {
			c.RNGDump = int64(opts.RNGDump)
		}
		if opts.RaggedOffsetScoreMax != 0 {
			c.RaggedOffsetScoreMax = int64(opts.RaggedOffsetScoreMax)
		}
		if opts.RaggedOffsetScoreSumExp != 0 {
			c.RaggedOffsetScoreSumExp = int64(opts.RaggedOffsetScoreSumExp)
		}
		c.UnfuseFma |= b2i(opts.UnfuseFMA)
		wantStats = c.GenerateStats != 0
	}
	var out, st int64
	err = g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddSDPA(p, int64(q), int64(k), int64(v), c, &out, &st)
	})
	if err != nil {
		return 0, 0, err
	}
	if !wantStats {
		st = 0
	}
	return Tensor(out), Tensor(st), nil
}

// SetRaggedOffset gives tensor the ragged (packed) offsets offset (as
// AttentionOptions.RaggedOffset*) after the attention nodes that read or
// write it were added, as cudnn-frontend's set_ragged_offset does on an
// op's output (e.g. the o SDPA returned); offset 0 makes it padded. It
// sets the offsets of that operand in every attention node using tensor:
// q, k, v, o, stats and the page tables of SDPA; q, k, v, o (which also
// describe dq, dk, dv, dO) and stats of SDPABackward. Errors:
// ErrInvalidArgument (no attention node uses tensor at such a port),
// ErrNotSupported (a gradient given offsets other than its operand's).
// The offsets' dims and type are checked at validation. Since 0.3.
func (g *Graph) SetRaggedOffset(tensor, offset Tensor) error {
	return g.do("Graph.SetRaggedOffset", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_set_ragged_offset(p, int64(tensor), int64(offset))
	})
}

// SDPABackwardOptions configures SDPABackward. The attention parameters
// must match the forward pass.
type SDPABackwardOptions struct {
	Name                  string
	AttnScale             float64 // 0: 1/sqrt(d_qk)
	CausalMask            bool
	CausalMaskBottomRight bool
	Bias                  Tensor
	// Deterministic asks for bitwise-reproducible gradients (may be slower).
	Deterministic bool
	ComputeDType  DType
	// The forward's padding, diagonal band, ALiBi, scale tensor and dropout
	// (the same seed and offset, or the same mask and scale).
	AttentionOptions
	// DropoutScaleInv: with DropoutMask, a FLOAT tensor of one element
	// holding 1 / DropoutScale, required. On the GPU it must be a Scalar of
	// 1: fold the scale into the mask (docs/attention.md).
	DropoutScaleInv Tensor
	// ScoreModBprop: the modifier of the gradient (a BeginScoreMod
	// placeholder): its placeholder is dS' (the gradient at ScoreMod's
	// output) and its result dS (the gradient at its input); its nodes may
	// read ScoreMod's tensors (softcap: dS = dS' * (1 - tanh^2)). 0: dS =
	// dS' (right for masks). Since 0.3.
	ScoreModBprop Tensor
	// SinkToken: the forward's FLOAT [1, h_q, 1, 1] sink logits, read only
	// for DSinkToken. Since 0.3.
	SinkToken Tensor
	// DSinkToken: the sink's gradient, a FLOAT [1, h_q, 1, 1] tensor made
	// with AddTensor that no op reads; the node writes it and it becomes a
	// graph output (docs/attention.md). Needs SinkToken. Since 0.3.
	DSinkToken Tensor
	// MaxTotalSeqLenQ and MaxTotalSeqLenKV: cudnn-frontend's bounds on the
	// total tokens of a ragged (packed) layout. Only checked: a GPU
	// refuses them (ErrNotSupported at validation) when no tensor of the
	// node has ragged offsets. 0: not given; negative: ErrInvalidArgument.
	// Since 0.4.
	MaxTotalSeqLenQ, MaxTotalSeqLenKV int64
}

// DefaultSDPABackwardOptions returns the defaults of
// cudnnfe_sdpa_backward_options_init.
func DefaultSDPABackwardOptions() SDPABackwardOptions {
	var c capi.SDPABackwardOptions
	capi.SDPABackwardOptionsInit(&c)
	return SDPABackwardOptions{
		AttnScale:             c.AttnScale,
		CausalMask:            c.CausalMask != 0,
		CausalMaskBottomRight: c.CausalMaskBottomRight != 0,
		Bias:                  Tensor(c.Bias),
		Deterministic:         c.Deterministic != 0,
		ComputeDType:          DType(c.ComputeDtype),
		AttentionOptions:      defaultAttentionOptions(&c.AttentionOptions),
		DropoutScaleInv:       Tensor(c.DropoutScaleInv),
		ScoreModBprop:         Tensor(c.ScoreModBprop),
		SinkToken:             Tensor(c.SinkToken),
		DSinkToken:            Tensor(c.DsinkToken),
		MaxTotalSeqLenQ:       c.MaxTotalSeqLenQ,
		MaxTotalSeqLenKV:      c.MaxTotalSeqLenKV,
	}
}

// SDPABackward adds attention backward: from q, k, v, o, dO (shapes as the
// forward) and stats (the forward's stats, [b, h_q, s_q, 1] FLOAT) it
// writes dq, dk, dv with the shapes and dimension orders of q, k, v.
func (g *Graph) SDPABackward(q, k, v, o, dO, stats Tensor, opts *SDPABackwardOptions) (dq, dk, dv Tensor, err error) {
	dq, dk, dv, _, err = g.sdpaBackward("Graph.SDPABackward", q, k, v, o, dO, stats, opts, false)
	return
}

// SDPABackwardWithDBias is SDPABackward that also returns the gradient of
// the bias: opts.Bias must be set with dims [1, h_q, s_q, s_kv] (the one
// dBias shape cuDNN's attention engines produce); dbias has the bias's dims
// and holds the sum over the batch of the gradient of the biased scores.
func (g *Graph) SDPABackwardWithDBias(q, k, v, o, dO, stats Tensor, opts *SDPABackwardOptions) (dq, dk, dv, dbias Tensor, err error) {
	return g.sdpaBackward("Graph.SDPABackwardWithDBias", q, k, v, o, dO, stats, opts, true)
}

func (g *Graph) sdpaBackward(op string, q, k, v, o, dO, stats Tensor, opts *SDPABackwardOptions, withDBias bool) (dq, dk, dv, dbias Tensor, err error) {
	var c *capi.SDPABackwardOptions
	if opts != nil {
		if err := checkName(op, "node name", opts.Name); err != nil {
			return 0, 0, 0, 0, err
		}
		c = &capi.SDPABackwardOptions{}
		capi.SDPABackwardOptionsInit(c)
		c.Name = opts.Name
		if opts.AttnScale != 0 {
			c.AttnScale = opts.AttnScale
		}
		c.CausalMask |= b2i(opts.CausalMask)
		c.CausalMaskBottomRight |= b2i(opts.CausalMaskBottomRight)
		if opts.Bias != 0 {
			c.Bias = int64(opts.Bias)
		}
		c.Deterministic |= b2i(opts.Deterministic)
		if opts.ComputeDType != 0 {
			c.ComputeDtype = int32(opts.ComputeDType)
		}
		opts.AttentionOptions.toC(&c.AttentionOptions)
		if opts.DropoutScaleInv != 0 {
			c.DropoutScaleInv = int64(opts.DropoutScaleInv)
		}
		if opts.ScoreModBprop != 0 {
			c.ScoreModBprop = int64(opts.ScoreModBprop)
		}
		if opts.SinkToken != 0 {
			c.SinkToken = int64(opts.SinkToken)
		}
		if opts.DSinkToken != 0 {
			c.DsinkToken = int64(opts.DSinkToken)
		}
		if opts.MaxTotalSeqLenQ != 0 {
			c.MaxTotalSeqLenQ = opts.MaxTotalSeqLenQ
		}
		if opts.MaxTotalSeqLenKV != 0 {
			c.MaxTotalSeqLenKV = opts.MaxTotalSeqLenKV
		}
	}
	var a, b, d, e int64
	pe := &e
	if !withDBias {
		pe = nil
	}
	err = g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddSDPABackward(p, int64(q), int64(k), int64(v), int64(o), int64(dO), int64(stats), c, &a, &b, &d, pe)
	})
	if err != nil {
		return 0, 0, 0, 0, err
	}
	return Tensor(a), Tensor(b), Tensor(d), Tensor(e), nil
}

// NormPhase says whether a normalization also writes its statistics
// (cudnnfe_norm_phase_t).
type NormPhase int32

// Normalization phases (CUDNNFE_NORM_PHASE_*).
const (
	NormPhaseTraining  NormPhase = NormPhase(capi.CUDNNFE_NORM_PHASE_TRAINING)  // also writes the statistics
	NormPhaseInference NormPhase = NormPhase(capi.CUDNNFE_NORM_PHASE_INFERENCE) // statistics outputs are 0
)

func (p NormPhase) String() string {
	switch p {
	case NormPhaseTraining:
		return "TRAINING"
	case NormPhaseInference:
		return "INFERENCE"
	}
	return "NormPhase(" + strconv.Itoa(int(p)) + ")"
}

// NormOptions configures the normalizations (LayerNorm, RMSNorm,
// BatchNorm, BatchNormInference, InstanceNorm, AdaLayerNorm) and their
// backward ops.
type NormOptions struct {
	Name  string
	Phase NormPhase // default NormPhaseTraining
	// Epsilon is added to the variance (mean square); 0 keeps the default,
	// 1e-5.
	Epsilon float64
	// ZeroCenteredGamma: y uses (1 + scale) instead of scale (LayerNorm,
	// RMSNorm, AdaLayerNorm).
	ZeroCenteredGamma bool
	ComputeDType      DType
	// Momentum: BatchNorm with running statistics, the weight of this
	// batch's statistics in the update, in (0, 1]; 0 keeps the default,
	// 0.1. Use 1/(1 + n) at the n-th call (n from 0) for a cumulative
	// average.
	Momentum float64
	// EpsilonTensor, when not zero, is a one-element FLOAT graph input
	// holding epsilon, read at execute instead of Epsilon (forward norms;
	// pass-by-value for the GPU). MomentumTensor likewise for Momentum.
	EpsilonTensor  Tensor
	MomentumTensor Tensor
}

// DefaultNormOptions returns the defaults of cudnnfe_norm_options_init.
func DefaultNormOptions() NormOptions {
	var c capi.NormOptions
	capi.NormOptionsInit(&c)
	return NormOptions{Phase: NormPhase(c.Phase), Epsilon: c.Epsilon,
		ZeroCenteredGamma: c.ZeroCenteredGamma != 0, ComputeDType: DType(c.ComputeDtype),
		Momentum: c.Momentum}
}

func (o *NormOptions) toC(op string) (*capi.NormOptions, error) {
	if o == nil {
		return nil, nil
	}
	if err := checkName(op, "node name", o.Name); err != nil {
		return nil, err
	}
	c := &capi.NormOptions{}
	capi.NormOptionsInit(c)
	c.Name = o.Name
	if o.Phase != 0 {
		c.Phase = int32(o.Phase)
	}
	if o.Epsilon != 0 {
		c.Epsilon = o.Epsilon
	}
	c.ZeroCenteredGamma |= b2i(o.ZeroCenteredGamma)
	if o.ComputeDType != 0 {
		c.ComputeDtype = int32(o.ComputeDType)
	}
	if o.Momentum != 0 {
		c.Momentum = o.Momentum
	}
	c.EpsilonTensor = int64(o.EpsilonTensor) // zero: none, the C default
	c.MomentumTensor = int64(o.MomentumTensor)
	return c, nil
}

// normN adds a normalization with up to five outputs; nouts says how many
// out-pointers are passed (the rest are NULL).
func (g *Graph) normN(op string, kind int, in [5]int64, opts *NormOptions, nouts int) (out [5]Tensor, err error) {
	co, err := opts.toC(op)
	if err != nil {
		return out, err
	}
	var o0, o1, o2, o3, o4 int64
	ptrs := [5]*int64{&o0, &o1, &o2, &o3, &o4}
	for i := nouts; i < len(ptrs); i++ {
		ptrs[i] = nil
	}
	err = g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddNorm(kind, p, in, co, ptrs)
	})
	if err != nil {
		return out, err
	}
	return [5]Tensor{Tensor(o0), Tensor(o1), Tensor(o2), Tensor(o3), Tensor(o4)}, nil
}

func (g *Graph) norm(op string, kind int, in [5]int64, opts *NormOptions, want3 bool) (a, b, c Tensor, err error) {
	n := 3
	if !want3 {
		n = 2
	}
	out, err := g.normN(op, kind, in, opts, n)
	return out[0], out[1], out[2], err
}

// Layer and RMS norm: scale and bias have x's rank, each dim x's or 1; the
// statistics are taken over the dims where the scale is not 1, per index of
// the others (an LLM's [tokens, hidden] with [1, hidden], or [b, s, d] with
// [1, 1, d]: per token), and are x's dims with 1 there, FLOAT.

// LayerNorm adds y = (x - mean) * inv_variance * scale + bias. In
// NormPhaseTraining it also returns mean and inv_variance =
// 1/sqrt(var + epsilon); in NormPhaseInference those are 0.
func (g *Graph) LayerNorm(x, scale, bias Tensor, opts *NormOptions) (y, mean, invVariance Tensor, err error) {
	return g.norm("Graph.LayerNorm", capi.Layernorm, [5]int64{int64(x), int64(scale), int64(bias)}, opts, true)
}

// RMSNorm adds y = x * inv_rms * scale (+ bias when bias != 0), with
// inv_rms = 1/sqrt(mean(x²) + epsilon), returned in NormPhaseTraining (else
// 0).
func (g *Graph) RMSNorm(x, scale, bias Tensor, opts *NormOptions) (y, invRMS Tensor, err error) {
	y, invRMS, _, err = g.norm("Graph.RMSNorm", capi.RMSNorm, [5]int64{int64(x), int64(scale), int64(bias)}, opts, false)
	return
}

// LayerNormBackward adds the layer norm gradients dx, dscale, dbias from dy,
// x, scale and the forward's mean and inv_variance.
func (g *Graph) LayerNormBackward(dy, x, scale, mean, invVariance Tensor, opts *NormOptions) (dx, dscale, dbias Tensor, err error) {
	return g.norm("Graph.LayerNormBackward", capi.LayernormBackward,
		[5]int64{int64(dy), int64(x), int64(scale), int64(mean), int64(invVariance)}, opts, true)
}

// RMSNormBackward adds the RMS norm gradients dx and dscale from dy, x, scale
// and the forward's inv_rms; with withBias (the forward had a bias) it also
// returns dbias, else 0.
func (g *Graph) RMSNormBackward(dy, x, scale, invRMS Tensor, withBias bool, opts *NormOptions) (dx, dscale, dbias Tensor, err error) {
	return g.norm("Graph.RMSNormBackward", capi.RMSNormBackward,
		[5]int64{int64(dy), int64(x), int64(scale), int64(invRMS)}, opts, withBias)
}

// SoftmaxOptions configures Softmax.
type SoftmaxOptions struct {
	Name string
	// GenerateStats also writes stats = log-sum-exp over the last dim
	// ([..., 1] FLOAT).
	GenerateStats bool
	ComputeDType  DType
}

// DefaultSoftmaxOptions returns the defaults of cudnnfe_softmax_options_init.
func DefaultSoftmaxOptions() SoftmaxOptions {
	var c capi.SoftmaxOptions
	capi.SoftmaxOptionsInit(&c)
	return SoftmaxOptions{GenerateStats: c.GenerateStats != 0, ComputeDType: DType(c.ComputeDtype)}
}

// Softmax adds y = softmax(x) over the last dimension, and stats when
// opts.GenerateStats is set (else 0).
func (g *Graph) Softmax(x Tensor, opts *SoftmaxOptions) (y, stats Tensor, err error) {
	const op = "Graph.Softmax"
	var c *capi.SoftmaxOptions
	if opts != nil {
		if err := checkName(op, "node name", opts.Name); err != nil {
			return 0, 0, err
		}
		c = &capi.SoftmaxOptions{}
		capi.SoftmaxOptionsInit(c)
		c.Name = opts.Name
		c.GenerateStats |= b2i(opts.GenerateStats)
		if opts.ComputeDType != 0 {
			c.ComputeDtype = int32(opts.ComputeDType)
		}
	}
	var out, st int64
	err = g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddSoftmax(p, int64(x), c, &out, &st)
	})
	if err != nil {
		return 0, 0, err
	}
	return Tensor(out), Tensor(st), nil
}

// BatchNormOutputs are the outputs of BatchNorm.
type BatchNormOutputs struct {
	// Y is the normalized x; Mean and InvVariance the per-channel
	// statistics [1, C, 1, ...] FLOAT (InvVariance = 1/sqrt(var + epsilon),
	// biased variance).
	Y, Mean, InvVariance Tensor
	// NextRunningMean and NextRunningVar are the updated running
	// statistics, when running statistics were given (else 0).
	NextRunningMean, NextRunningVar Tensor
}

// BatchNorm adds batch normalization, training: x is [N, C, spatial...] in
// any layout; statistics are per channel over N and the spatial dims (M
// values each); scale and bias are [1, C, 1, ...]. With prevRunningMean and
// prevRunningVar ([1, C, 1, ...], both or neither; 0: none) it also returns
// the updated running statistics, (1 - Momentum) * prev + Momentum * batch
// statistic, the variance Bessel-corrected (var * M / (M - 1)). Binding a
// next output to its prev input's buffer updates it in place.
// opts.Phase must be training (see BatchNormInference).
func (g *Graph) BatchNorm(x, scale, bias, prevRunningMean, prevRunningVar Tensor, opts *NormOptions) (BatchNormOutputs, error) {
	out, err := g.normN("Graph.BatchNorm", capi.Batchnorm,
		[5]int64{int64(x), int64(scale), int64(bias), int64(prevRunningMean), int64(prevRunningVar)}, opts, 5)
	return BatchNormOutputs{Y: out[0], Mean: out[1], InvVariance: out[2], NextRunningMean: out[3],
		NextRunningVar: out[4]}, err
}

// BatchNormInference adds y = (x - mean[c]) * invVariance[c] * scale[c] +
// bias[c] with the given per-channel statistics ([1, C, 1, ...]; from
// running statistics, invVariance = 1/sqrt(running_var + epsilon)). It
// reads only opts.Name and opts.ComputeDType. On the GPU cuDNN runs it only
// inside its fused batch norm patterns (see the C header).
func (g *Graph) BatchNormInference(x, scale, bias, mean, invVariance Tensor, opts *NormOptions) (Tensor, error) {
	out, err := g.normN("Graph.BatchNormInference", capi.BatchnormInference,
		[5]int64{int64(x), int64(scale), int64(bias), int64(mean), int64(invVariance)}, opts, 1)
	return out[0], err
}

// BatchNormBackward adds the batch norm gradients dx, dscale and dbias
// ([1, C, 1, ...], in scale's type) from dy, x, scale and the forward's
// mean and inv_variance.
func (g *Graph) BatchNormBackward(dy, x, scale, mean, invVariance Tensor, opts *NormOptions) (dx, dscale, dbias Tensor, err error) {
	return g.norm("Graph.BatchNormBackward", capi.BatchnormBackward,
		[5]int64{int64(dy), int64(x), int64(scale), int64(mean), int64(invVariance)}, opts, true)
}

// InstanceNorm adds instance normalization: x is [N, C, spatial...] (rank
// >= 3); statistics are per (n, c) over the spatial dims, returned ([N, C,
// 1, ...] FLOAT) in NormPhaseTraining (else 0); scale and bias are [1, C,
// 1, ...].
func (g *Graph) InstanceNorm(x, scale, bias Tensor, opts *NormOptions) (y, mean, invVariance Tensor, err error) {
	return g.norm("Graph.InstanceNorm", capi.Instancenorm, [5]int64{int64(x), int64(scale), int64(bias)}, opts, true)
}

// InstanceNormBackward adds the instance norm gradients dx, dscale and
// dbias ([1, C, 1, ...]) from dy, x, scale and the forward's statistics.
func (g *Graph) InstanceNormBackward(dy, x, scale, mean, invVariance Tensor, opts *NormOptions) (dx, dscale, dbias Tensor, err error) {
	return g.norm("Graph.InstanceNormBackward", capi.InstancenormBackward,
		[5]int64{int64(dy), int64(x), int64(scale), int64(mean), int64(invVariance)}, opts, true)
}

// AdaLayerNorm adds adaptive layer normalization (DiT's): x is [B, S,
// features...]; statistics are per (b, s) over the features ([B, S, 1,
// ...] FLOAT, returned in NormPhaseTraining); scale and bias are per
// sample, [B, 1, features...]. With ZeroCenteredGamma the gain is 1 +
// scale.
func (g *Graph) AdaLayerNorm(x, scale, bias Tensor, opts *NormOptions) (y, mean, invVariance Tensor, err error) {
	return g.norm("Graph.AdaLayerNorm", capi.Adalayernorm, [5]int64{int64(x), int64(scale), int64(bias)}, opts, true)
}

// AdaLayerNormBackward adds the adaptive layer norm gradients: dx, and
// dscale and dbias per sample ([B, 1, features...]) from dy, x, scale and
// the forward's statistics.
func (g *Graph) AdaLayerNormBackward(dy, x, scale, mean, invVariance Tensor, opts *NormOptions) (dx, dscale, dbias Tensor, err error) {
	return g.norm("Graph.AdaLayerNormBackward", capi.AdalayernormBackward,
		[5]int64{int64(dy), int64(x), int64(scale), int64(mean), int64(invVariance)}, opts, true)
}
