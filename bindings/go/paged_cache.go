// PagedCacheLoad: the gather of a paged K or V cache into a contiguous
// tensor (cudnn-frontend's paged_cache_load; since 0.4, experimental: cuDNN
// 9.5 or newer on the GPU).

package cudnnfe

import "github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"

// PagedCacheLoadOptions configures PagedCacheLoad; zero fields keep the C defaults.
type PagedCacheLoadOptions struct {
	Name         string
	ComputeDType DType
}

// DefaultPagedCacheLoadOptions returns the defaults of
// cudnnfe_paged_cache_load_options_init.
func DefaultPagedCacheLoadOptions() PagedCacheLoadOptions {
	var c capi.PagedCacheLoadOptions
	capi.PagedCacheLoadOptionsInit(&c)
	return PagedCacheLoadOptions{ComputeDType: DType(c.ComputeDtype)}
}

// PagedCacheLoad gathers container [numPages, h, pageSize, d] into y [b, h,
// s, d]: row j of sequence n is row j % pageSize of page pageTable[n][j /
// pageSize], for j < seqLen[n] (later rows are unspecified; 0 on the CPU
// reference). pageTable is [b, 1, pages, 1] and seqLen [b, 1, 1, 1], of an
// integer type (Int32 as in cudnn-frontend). s is pages * pageSize unless
// y's dims are set (SetDims) with
// ceil(s / pageSize) == pages.
func (g *Graph) PagedCacheLoad(container, seqLen, pageTable Tensor, opts *PagedCacheLoadOptions) (Tensor, error) {
	const op = "Graph.PagedCacheLoad"
	var c *capi.PagedCacheLoadOptions
	if opts != nil {
		if err := checkName(op, "node name", opts.Name); err != nil {
			return 0, err
		}
		c = &capi.PagedCacheLoadOptions{}
		capi.PagedCacheLoadOptionsInit(c)
		c.Name = opts.Name
		if opts.ComputeDType != 0 {
			c.ComputeDtype = int32(opts.ComputeDType)
		}
	}
	in := [3]int64{int64(container), int64(seqLen), int64(pageTable)}
	var y int64
	err := g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAddPagedCacheLoad(p, in, c, &y)
	})
	if err != nil {
		return 0, err
	}
	return Tensor(y), nil
}
