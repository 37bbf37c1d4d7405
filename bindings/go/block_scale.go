// Block-scale quantization (microscaling, MXFP8): BlockScaleQuantize and
// BlockScaleDequantize. It does not hold the per-tensor FP8 scaling of
// attention (fp8.go).

package cudnnfe

import "github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"

// BlockScaleOptions configures BlockScaleQuantize and BlockScaleDequantize;
// zero fields keep the C defaults (docs/layout-ops.md, "Block scaling").
type BlockScaleOptions struct {
	Name string
	// BlockSize is the elements per block along Axis (0: 32, the MX block);
	// x's dim Axis must be a multiple of it.
	BlockSize int
	// Axis is the blocked dim; negative counts from the end. 0 keeps the C
	// default -1 (the last dim): block the first dim of a rank-r x with -r.
	Axis int
	// Transpose (quantize only) makes Axis the innermost (packed) dim of y
	// and the scale, whatever x's layout.
	Transpose bool
	// YDType (quantize only) is y's type when y's type is not set:
	// DTypeFP8E4M3 (0: the default) or DTypeFP8E5M2.
	YDType DType
}

// DefaultBlockScaleOptions returns the defaults of cudnnfe_block_scale_options_init.
func DefaultBlockScaleOptions() BlockScaleOptions {
	var c capi.BlockScaleOptions
	capi.BlockScaleOptionsInit(&c)
	return BlockScaleOptions{BlockSize: int(c.BlockSize), Axis: int(c.Axis), Transpose: c.Transpose != 0,
		YDType: DType(c.YDtype)}
}

func (o *BlockScaleOptions) toC(op string) (*capi.BlockScaleOptions, error) {
	if o == nil {
		return nil, nil
	}
	if err := checkName(op, "node name", o.Name); err != nil {
		return nil, err
	}
	if err := checkInt32(op, "BlockSize", o.BlockSize); err != nil {
		return nil, err
	}
	if err := checkInt32(op, "Axis", o.Axis); err != nil {
		return nil, err
	}
	c := &capi.BlockScaleOptions{}
	capi.BlockScaleOptionsInit(c)
	c.Name = o.Name
	if o.BlockSize != 0 {
		c.BlockSize = int32(o.BlockSize)
	}
	if o.Axis != 0 {
		c.Axis = int32(o.Axis)
	}
	c.Transpose |= b2i(o.Transpose)
	if o.YDType != 0 {
		c.YDtype = int32(o.YDType)
	}
	return c, nil
}

// BlockScaleQuantize adds the block-scale quantize of x (FLOAT, HALF or
// BFLOAT16): per block, scale = amax / max_finite(y type) rounded up to a
// power of two (FP8_E8M0), y = x / scale rounded to nearest even,
// saturating. y has x's dims; scale has them with dim Axis divided by
// BlockSize. cuDNN runs it on Blackwell GPUs only.
func (g *Graph) BlockScaleQuantize(x Tensor, opts *BlockScaleOptions) (y, scale Tensor, err error) {
	const op = "Graph.BlockScaleQuantize"
	c, err := opts.toC(op)
	if err != nil {
		return 0, 0, err
	}
	var yy, s int64
	err = g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddBlockScale(false, p, int64(x), 0, c, &yy, &s)
	})
	if err != nil {
		return 0, 0, err
	}
	return Tensor(yy), Tensor(s), nil
}

// BlockScaleDequantize adds y = x * scale[block] for FP8 x and its
// FP8_E8M0 scale. It reads Name, BlockSize and Axis; y's type is the
// graph's io type unless set (else FLOAT).
func (g *Graph) BlockScaleDequantize(x, scale Tensor, opts *BlockScaleOptions) (Tensor, error) {
	const op = "Graph.BlockScaleDequantize"
	c, err := opts.toC(op)
	if err != nil {
		return 0, err
	}
	var y int64
	err = g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddBlockScale(true, p, int64(x), int64(scale), c, &y, nil)
	})
	return Tensor(y), err
}
