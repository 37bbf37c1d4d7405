// The split batch norm of cudnn-frontend (Genstats, BnFinalize, DbnWeight;
// since 0.3): per-channel sums, the statistics and affine coefficients made
// from them, and the weight part of the backward. It does not hold the fused
// BatchNorm (ops.go).

package cudnnfe

import "github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"

// GenstatsOptions configures Genstats; zero fields keep the C defaults.
type GenstatsOptions struct {
	Name         string
	ComputeDType DType
}

// DefaultGenstatsOptions returns the defaults of cudnnfe_genstats_options_init.
func DefaultGenstatsOptions() GenstatsOptions {
	var c capi.GenstatsOptions
	capi.GenstatsOptionsInit(&c)
	return GenstatsOptions{ComputeDType: DType(c.ComputeDtype)}
}

// Genstats adds the per-channel statistics of x [N, C, ...]: sum[c] and
// sqSum[c] (of x * x) over every dim but C, [1, C, 1, ...] FLOAT unless
// set. cuDNN runs it fused after a convolution.
func (g *Graph) Genstats(x Tensor, opts *GenstatsOptions) (sum, sqSum Tensor, err error) {
	const op = "Graph.Genstats"
	var c *capi.GenstatsOptions
	if opts != nil {
		if err := checkName(op, "node name", opts.Name); err != nil {
			return 0, 0, err
		}
		c = &capi.GenstatsOptions{}
		capi.GenstatsOptionsInit(c)
		c.Name = opts.Name
		if opts.ComputeDType != 0 {
			c.ComputeDtype = int32(opts.ComputeDType)
		}
	}
	var s, sq int64
	err = g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddGenstats(p, int64(x), c, &s, &sq)
	})
	if err != nil {
		return 0, 0, err
	}
	return Tensor(s), Tensor(sq), nil
}

// BnFinalizeOptions configures BnFinalize; zero fields keep the C defaults.
type BnFinalizeOptions struct {
	Name         string
	ComputeDType DType
}

// DefaultBnFinalizeOptions returns the defaults of cudnnfe_bn_finalize_options_init.
func DefaultBnFinalizeOptions() BnFinalizeOptions {
	var c capi.BnFinalizeOptions
	capi.BnFinalizeOptionsInit(&c)
	return BnFinalizeOptions{ComputeDType: DType(c.ComputeDtype)}
}

// BnFinalizeInputs are the operands of BnFinalize. Sum, SqSum, Scale and
// Bias are [1, C, 1, ...]; Epsilon and AccumCount (M, the elements summed
// per channel, an integer type) one-element tensors (scalars do). The
// running statistics PrevRunningMean, PrevRunningVar ([1, C, 1, ...]) and
// Momentum (one element) are all given or all 0.
type BnFinalizeInputs struct {
	Sum, SqSum, Scale, Bias, Epsilon, AccumCount Tensor
	PrevRunningMean, PrevRunningVar, Momentum    Tensor
}

// BnFinalizeOutputs are the outputs of BnFinalize, each [1, C, 1, ...].
type BnFinalizeOutputs struct {
	// EqScale = Scale * InvVariance and EqBias = Bias - Mean * EqScale make
	// y = x * EqScale + EqBias the batch norm of x.
	EqScale, EqBias Tensor
	// Mean = Sum / M; InvVariance = 1/sqrt(var + epsilon), var = SqSum / M -
	// Mean² (biased).
	Mean, InvVariance Tensor
	// NextRunningMean and NextRunningVar are the updated running statistics
	// (as BatchNorm's), when running statistics were given (else 0).
	NextRunningMean, NextRunningVar Tensor
}

// BnFinalize adds cudnn-frontend's bn_finalize: the batch-norm statistics
// and affine coefficients from Genstats' sums (with running statistics, M
// must be above 1).
func (g *Graph) BnFinalize(in BnFinalizeInputs, opts *BnFinalizeOptions) (BnFinalizeOutputs, error) {
	const op = "Graph.BnFinalize"
	var c *capi.BnFinalizeOptions
	if opts != nil {
		if err := checkName(op, "node name", opts.Name); err != nil {
			return BnFinalizeOutputs{}, err
		}
		c = &capi.BnFinalizeOptions{}
		capi.BnFinalizeOptionsInit(c)
		c.Name = opts.Name
		if opts.ComputeDType != 0 {
			c.ComputeDtype = int32(opts.ComputeDType)
		}
	}
	t := [9]int64{int64(in.Sum), int64(in.SqSum), int64(in.Scale), int64(in.Bias), int64(in.Epsilon),
		int64(in.AccumCount), int64(in.PrevRunningMean), int64(in.PrevRunningVar), int64(in.Momentum)}
	var out [6]int64
	if err := g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddBnFinalize(p, t, c, &out)
	}); err != nil {
		return BnFinalizeOutputs{}, err
	}
	return BnFinalizeOutputs{EqScale: Tensor(out[0]), EqBias: Tensor(out[1]), Mean: Tensor(out[2]),
		InvVariance: Tensor(out[3]), NextRunningMean: Tensor(out[4]), NextRunningVar: Tensor(out[5])}, nil
}

// DbnWeightOptions configures DbnWeight; zero fields keep the C defaults.
type DbnWeightOptions struct {
	Name         string
	ComputeDType DType
}

// DefaultDbnWeightOptions returns the defaults of cudnnfe_dbn_weight_options_init.
func DefaultDbnWeightOptions() DbnWeightOptions {
	var c capi.DbnWeightOptions
	capi.DbnWeightOptionsInit(&c)
	return DbnWeightOptions{ComputeDType: DType(c.ComputeDtype)}
}

// DbnWeightOutputs are the outputs of DbnWeight, each [1, C, 1, ...]. With
// xhat = (x - mean) * invVariance and M = N * (spatial size): DScale = sum
// of dy * xhat, DBias = sum of dy (per channel), and dx = EqScaleDy * dy +
// EqScaleX * x + EqBias is the data gradient.
type DbnWeightOutputs struct {
	DScale, DBias, EqScaleDy, EqScaleX, EqBias Tensor
}

// DbnWeight adds cudnn-frontend's dbn_weight, the weights part of the
// batch-norm backward: from dy and x [N, C, ...] (same dims) and the
// forward's mean, invVariance and scale ([1, C, 1, ...]).
func (g *Graph) DbnWeight(dy, x, mean, invVariance, scale Tensor, opts *DbnWeightOptions) (DbnWeightOutputs, error) {
	const op = "Graph.DbnWeight"
	var c *capi.DbnWeightOptions
	if opts != nil {
		if err := checkName(op, "node name", opts.Name); err != nil {
			return DbnWeightOutputs{}, err
		}
		c = &capi.DbnWeightOptions{}
		capi.DbnWeightOptionsInit(c)
		c.Name = opts.Name
		if opts.ComputeDType != 0 {
			c.ComputeDtype = int32(opts.ComputeDType)
		}
	}
	t := [5]int64{int64(dy), int64(x), int64(mean), int64(invVariance), int64(scale)}
	var out [5]int64
	if err := g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddDbnWeight(p, t, c, &out)
	}); err != nil {
		return DbnWeightOutputs{}, err
	}
	return DbnWeightOutputs{DScale: Tensor(out[0]), DBias: Tensor(out[1]), EqScaleDy: Tensor(out[2]),
		EqScaleX: Tensor(out[3]), EqBias: Tensor(out[4])}, nil
}
