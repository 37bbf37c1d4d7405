package cudnnfe

import (
	"math"
	"strconv"

	"github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"
)

// Layout, resampling and random numbers (docs/layout-ops.md describes each
// op's semantics and what the GPU accepts of it).

// LayoutOptions configures Reshape, Transpose, Slice and Concatenate.
type LayoutOptions struct {
	Name string
}

func (o *LayoutOptions) name(op string) (string, error) {
	if o == nil {
		return "", nil
	}
	return o.Name, checkName(op, "node name", o.Name)
}

// Reshape adds y = x with dims dims (same element count), keeping the
// row-major order of the logical elements (numpy's reshape). y is packed
// row-major unless its strides are set. On the GPU a reshape is a view of
// x's memory, which x's layout must allow.
func (g *Graph) Reshape(x Tensor, dims []int64, opts *LayoutOptions) (Tensor, error) {
	const op = "Graph.Reshape"
	name, err := opts.name(op)
	if err != nil {
		return 0, err
	}
	var y int64
	err = g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddReshape(p, int64(x), dims, name, &y)
	})
	return Tensor(y), err
}

// Transpose adds y whose dim i is x's dim permutation[i] (a permutation of
// 0..rank-1). y's strides default to x's strides permuted: a view of x's
// memory in another dimension order (no data moves on the GPU).
func (g *Graph) Transpose(x Tensor, permutation []int, opts *LayoutOptions) (Tensor, error) {
	const op = "Graph.Transpose"
	name, err := opts.name(op)
	if err != nil {
		return 0, err
	}
	perm := make([]int32, len(permutation))
	for i, p := range permutation {
		if p < math.MinInt32 || p > math.MaxInt32 {
			return 0, argError(op, "permutation entry "+strconv.Itoa(p)+" is out of range")
		}
		perm[i] = int32(p)
	}
	var y int64
	err = g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddTranspose(p, int64(x), perm, name, &y)
	})
	return Tensor(y), err
}

// Slice adds y = x[start:end:step] per dimension: one entry per dim of x,
// 0 <= start[i] < end[i] <= x's dim i; step nil means 1 everywhere (else
// each step >= 1). y is a view of x's buffer: it has no buffer of its own
// and cannot be a graph output (feed it to an op, e.g. PointwiseIdentity,
// and mark that op's output); on the GPU x must be a graph input.
func (g *Graph) Slice(x Tensor, start, end, step []int64, opts *LayoutOptions) (Tensor, error) {
	const op = "Graph.Slice"
	name, err := opts.name(op)
	if err != nil {
		return 0, err
	}
	if len(end) != len(start) || (step != nil && len(step) != len(start)) {
		msg := "start has " + strconv.Itoa(len(start)) + " entries, end " + strconv.Itoa(len(end))
		if step != nil {
			msg += ", step " + strconv.Itoa(len(step))
		}
		return 0, argError(op, msg+": give one of each per dimension")
	}
	var y int64
	err = g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddSlice(p, int64(x), start, end, step, name, &y)
	})
	return Tensor(y), err
}

// Concatenate adds y = inputs (2 to 16, equal ranks and dims except axis,
// one data type) joined along axis; y keeps inputs[0]'s dimension order.
// On the GPU it needs cuDNN 9.7 or newer and a fused pattern cuDNN knows.
func (g *Graph) Concatenate(inputs []Tensor, axis int, opts *LayoutOptions) (Tensor, error) {
	const op = "Graph.Concatenate"
	name, err := opts.name(op)
	if err != nil {
		return 0, err
	}
	if axis < math.MinInt32 || axis > math.MaxInt32 {
		return 0, argError(op, "axis "+strconv.Itoa(axis)+" is out of range")
	}
	uids := make([]int64, len(inputs))
	for i, t := range inputs {
		uids[i] = int64(t)
	}
	var y int64
	err = g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddConcatenate(p, uids, int32(axis), name, &y)
	})
	return Tensor(y), err
}

// ResampleOptions configures Resample: pooling (window, stride, padding) or
// upsampling (scale). Spatial values are per spatial dimension in logical
// order (H, W for NCHW), at most MaxSpatialDims entries; entries not given,
// and zero fields, keep the C defaults (see DefaultResampleOptions).
type ResampleOptions struct {
	Name string
	// Mode defaults to ResampleMaxPool.
	Mode ResampleMode
	// SpatialDims is the spatial rank (1 to 3); 0 takes x's rank minus 2.
	SpatialDims int
	// Window and Stride default to 2; PrePadding and PostPadding to 0 (each
	// smaller than the window). Pooling only.
	Window, Stride, PrePadding, PostPadding []int64
	// PaddingMode: what pooling reads outside the image (default
	// PaddingAuto: NEG_INF for max pooling, ZERO for average pooling).
	PaddingMode PaddingMode
	// Scale is the upsampling factor (ResampleNearest, ResampleBilinear);
	// default 2.
	Scale []int64
	// GenerateIndex: max pooling also returns the position of each maximum
	// inside its window (row-major over the window, first maximum on
	// ties), INT8 unless its type is set.
	GenerateIndex bool
	ComputeDType  DType
}

// DefaultResampleOptions returns the defaults of
// cudnnfe_resample_options_init.
func DefaultResampleOptions() ResampleOptions {
	var c capi.ResampleOptions
	capi.ResampleOptionsInit(&c)
	return ResampleOptions{
		Mode:          ResampleMode(c.Mode),
		SpatialDims:   int(c.SpatialDims),
		Window:        append([]int64(nil), c.Window[:]...),
		Stride:        append([]int64(nil), c.Stride[:]...),
		PrePadding:    append([]int64(nil), c.PrePadding[:]...),
		PostPadding:   append([]int64(nil), c.PostPadding[:]...),
		PaddingMode:   PaddingMode(c.PaddingMode),
		Scale:         append([]int64(nil), c.Scale[:]...),
		GenerateIndex: c.GenerateIndex != 0,
		ComputeDType:  DType(c.ComputeDtype),
	}
}

func (o *ResampleOptions) toC(op string) (*capi.ResampleOptions, error) {
	if o == nil {
		return nil, nil
	}
	if err := checkName(op, "node name", o.Name); err != nil {
		return nil, err
	}
	c := &capi.ResampleOptions{}
	capi.ResampleOptionsInit(c)
	c.Name = o.Name
	if o.Mode != 0 {
		c.Mode = int32(o.Mode)
	}
	if o.SpatialDims != 0 {
		if o.SpatialDims < 0 || o.SpatialDims > MaxSpatialDims {
			return nil, argError(op, "resample options: SpatialDims is "+strconv.Itoa(o.SpatialDims)+
				"; expected 0 to "+strconv.Itoa(MaxSpatialDims))
		}
		c.SpatialDims = int32(o.SpatialDims)
	}
	for _, f := range []struct {
		name string
		src  []int64
		dst  *[3]int64
	}{{"Window", o.Window, &c.Window}, {"Stride", o.Stride, &c.Stride},
		{"PrePadding", o.PrePadding, &c.PrePadding}, {"PostPadding", o.PostPadding, &c.PostPadding},
		{"Scale", o.Scale, &c.Scale}} {
		if len(f.src) > MaxSpatialDims {
			return nil, argError(op, "resample options: "+f.name+" has "+strconv.Itoa(len(f.src))+
				" entries; at most "+strconv.Itoa(MaxSpatialDims))
		}
		copy(f.dst[:], f.src)
	}
	if o.PaddingMode != 0 {
		c.PaddingMode = int32(o.PaddingMode)
	}
	c.GenerateIndex |= b2i(o.GenerateIndex)
	if o.ComputeDType != 0 {
		c.ComputeDtype = int32(o.ComputeDType)
	}
	return c, nil
}

// Resample adds pooling or upsampling of x [N, C, spatial...] (1 to 3
// spatial dims, any layout; y and index are channels-last unless their
// strides are set, as in cudnn-frontend). Pooling gives
// floor((in + pre + post - window) / stride) + 1 outputs per spatial dim;
// upsampling multiplies each by Scale (half-pixel centres). index is the
// max pooling index when opts.GenerateIndex is set, else 0.
func (g *Graph) Resample(x Tensor, opts *ResampleOptions) (y, index Tensor, err error) {
	const op = "Graph.Resample"
	c, err := opts.toC(op)
	if err != nil {
		return 0, 0, err
	}
	var out, idx int64
	err = g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddResample(p, int64(x), c, &out, &idx)
	})
	if err != nil {
		return 0, 0, err
	}
	return Tensor(out), Tensor(idx), nil
}

// RNGOptions configures RNG. Zero fields keep the C defaults (see
// DefaultRNGOptions); consequently BernoulliProbability, UniformMax and
// NormalStddev cannot be set to exactly 0.
type RNGOptions struct {
	Name string
	// Distribution defaults to RNGBernoulli.
	Distribution RNGDistribution
	// RNGBernoulli: the probability of a 1 (default 0.5).
	BernoulliProbability float64
	// RNGUniform: [UniformMin, UniformMax) (default [0, 1)).
	UniformMin, UniformMax float64
	// RNGNormal: mean and standard deviation (default 0 and 1).
	NormalMean, NormalStddev float64
	// Seed is used, with offset 0, when no seed tensor is given (default 0).
	Seed         int64
	ComputeDType DType
}

// DefaultRNGOptions returns the defaults of cudnnfe_rng_options_init.
func DefaultRNGOptions() RNGOptions {
	var c capi.RNGOptions
	capi.RNGOptionsInit(&c)
	return RNGOptions{Distribution: RNGDistribution(c.Distribution),
		BernoulliProbability: c.BernoulliProbability, UniformMin: c.UniformMin,
		UniformMax: c.UniformMax, NormalMean: c.NormalMean, NormalStddev: c.NormalStddev,
		Seed: c.Seed, ComputeDType: DType(c.ComputeDtype)}
}

// RNG adds a tensor of dims dims (packed row-major unless its strides are
// set, FLOAT unless its type is set) filled with random numbers of
// opts.Distribution. seed and offset are one-element INT64 (or INT32)
// tensors, graph inputs or Scalars, given together; both 0 use opts.Seed
// and offset 0. The same seed and offset give the same numbers; the CPU
// reference's generator is not cuDNN's (docs/layout-ops.md).
func (g *Graph) RNG(dims []int64, seed, offset Tensor, opts *RNGOptions) (Tensor, error) {
	const op = "Graph.RNG"
	var c *capi.RNGOptions
	if opts != nil {
		if err := checkName(op, "node name", opts.Name); err != nil {
			return 0, err
		}
		c = &capi.RNGOptions{}
		capi.RNGOptionsInit(c)
		c.Name = opts.Name
		if opts.Distribution != 0 {
			c.Distribution = int32(opts.Distribution)
		}
		overlay := func(dst *float64, v float64) {
			if v != 0 {
				*dst = v
			}
		}
		overlay(&c.BernoulliProbability, opts.BernoulliProbability)
		overlay(&c.UniformMin, opts.UniformMin)
		overlay(&c.UniformMax, opts.UniformMax)
		overlay(&c.NormalMean, opts.NormalMean)
		overlay(&c.NormalStddev, opts.NormalStddev)
		if opts.Seed != 0 {
			c.Seed = opts.Seed
		}
		if opts.ComputeDType != 0 {
			c.ComputeDtype = int32(opts.ComputeDType)
		}
	}
	var y int64
	err := g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddRNG(p, dims, int64(seed), int64(offset), c, &y)
	})
	return Tensor(y), err
}
