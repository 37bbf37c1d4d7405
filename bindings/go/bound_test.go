package cudnnfe

import (
	"math/rand"
	"testing"

	"github.com/cudnnfe/cudnnfe/bindings/go/internal/cmem"
)

// Bound executions on the CPU reference (Graph.Bind, BoundExecution), as
// tests/test_bound.cpp checks in C: a bound run computes what Execute does
// (here: plain loops), reads the buffers' current contents at each run, and
// every refusal names its tensor or reason.

// boundMatmul is c = matmulBias's (a @ b + bias) built for the CPU
// reference, with C-heap buffers in BoundTensors order.
type boundMatmul struct {
	g              *Graph
	h              *Handle
	a, b, bias, c  Tensor
	ca, cb, cbias  *cmem.Buf
	cc             *cmem.Buf
	ptrs           []uintptr
	batch, m, k, n int
	av, bv, biasv  []float32
}

func newBoundMatmul(t *testing.T, seed int64) *boundMatmul {
	const batch, m, k, n = 2, 3, 4, 5
	x := &boundMatmul{batch: batch, m: m, k: k, n: n}
	x.g, x.a, x.b, x.bias, x.c = matmulBias(t, batch, m, k, n)
	x.h = newHandle(t)
	must(t, x.g.Build(x.h, cpuBuild))
	rng := rand.New(rand.NewSource(seed))
	x.av, x.bv, x.biasv = randFloats(rng, batch*m*k, 1), randFloats(rng, batch*k*n, 1), randFloats(rng, m*n, 1)
	x.ca, x.cb, x.cbias, x.cc = cmem.From(x.av), cmem.From(x.bv), cmem.From(x.biasv), cmem.Alloc(batch*m*n*4)
	t.Cleanup(func() { x.ca.Free(); x.cb.Free(); x.cbias.Free(); x.cc.Free() })
	addr := map[Tensor]uintptr{x.a: x.ca.Addr(), x.b: x.cb.Addr(), x.bias: x.cbias.Addr(), x.c: x.cc.Addr()}
	bound, err := x.g.BoundTensors()
	must(t, err)
	for _, tensor := range bound {
		x.ptrs = append(x.ptrs, addr[tensor])
	}
	return x
}

// want is a @ b + bias over the current contents of the C buffers.
func (x *boundMatmul) want() []float32 {
	out := refMatmul(cmem.View[float32](x.ca), cmem.View[float32](x.cb), x.batch, x.batch, x.m, x.k, x.n)
	bias := cmem.View[float32](x.cbias)
	for i := range out {
		out[i] += bias[i%(x.m*x.n)]
	}
	return out
}

func TestBoundExecutionMatchesLoops(t *testing.T) {
	x := newBoundMatmul(t, 18)
	be, err := x.g.Bind(x.h, x.ptrs, 0, 0, CUDAGraphOff)
	must(t, err)
	defer be.Close()
	if mode, err := be.CUDAGraphMode(); err != nil || mode != CUDAGraphOff {
		t.Fatalf("CUDAGraphMode() = %v, %v; want CUDAGraphOff", mode, err)
	}
	must(t, be.Execute(0))
	if d := maxAbsDiff(cmem.View[float32](x.cc), x.want()); d > 1e-4 {
		t.Fatalf("bound run: max error %g", d)
	}
	// The buffers are read again at each run.
	a := cmem.View[float32](x.ca)
	for i := range a {
		a[i] = -2 * a[i]
	}
	must(t, be.Execute(0))
	if d := maxAbsDiff(cmem.View[float32](x.cc), x.want()); d > 1e-4 {
		t.Fatalf("bound run after new inputs: max error %g", d)
	}
	must(t, be.Close())
	must(t, be.Close()) // closing twice is a no-op
	wantErr(t, be.Execute(0), ErrInvalidArgument, "bound execution is closed")
	_, err = be.CUDAGraphMode()
	wantErr(t, err, ErrInvalidArgument, "bound execution is closed")
}

func TestBindBadInputsNameTheTensorAndReason(t *testing.T) {
	x := newBoundMatmul(t, 19)
	bound, err := x.g.BoundTensors()
	must(t, err)
	missing := append([]uintptr(nil), x.ptrs...)
	missing[1] = 0
	name, err := x.g.TensorName(bound[1])
	must(t, err)
	_, err = x.g.Bind(x.h, missing, 0, 0, CUDAGraphOff)
	wantErr(t, err, ErrInvalidArgument, "data[1] for tensor \""+name+"\"", "is NULL")
	_, err = x.g.Bind(x.h, x.ptrs[:3], 0, 0, CUDAGraphOff)
	wantErr(t, err, ErrInvalidArgument, "3 pointers given for 4 bound tensors")
	_, err = x.g.Bind(x.h, x.ptrs, 0, -1, CUDAGraphOff)
	wantErr(t, err, ErrInvalidArgument, "workspaceSize is negative")
	_, err = x.g.Bind(x.h, x.ptrs, 0, 0, CUDAGraphMode(7))
	wantErr(t, err, ErrInvalidArgument, "cuda_graph is 7")
	for _, mode := range []CUDAGraphMode{CUDAGraphNative, CUDAGraphCapture, CUDAGraphAuto} {
		_, err = x.g.Bind(x.h, x.ptrs, 0, 0, mode)
		wantErr(t, err, ErrNotSupported, "CPU reference", "CUDNNFE_CUDA_GRAPH_OFF")
	}
	_, err = x.g.Bind(nil, x.ptrs, 0, 0, CUDAGraphOff)
	wantErr(t, err, ErrInvalidArgument, "handle is nil")

	unbuilt := newGraph(t)
	in := must1[Tensor](t)(unbuilt.AddTensor("x", DTypeFloat, []int64{4}, nil))
	must1[Tensor](t)(unbuilt.Pointwise(PointwiseReluFwd, in, 0, 0, nil))
	_, err = unbuilt.Bind(x.h, nil, 0, 0, CUDAGraphOff)
	wantErr(t, err, ErrWrongState, "not built")
}

func TestBoundExecutionAfterItsGraphOrHandleIsClosed(t *testing.T) {
	x := newBoundMatmul(t, 20)
	be, err := x.g.Bind(x.h, x.ptrs, 0, 0, CUDAGraphOff)
	must(t, err)
	must(t, x.h.Close())
	wantErr(t, be.Execute(0), ErrInvalidArgument, "handle is closed")
	must(t, be.Close())

	y := newBoundMatmul(t, 21)
	be, err = y.g.Bind(y.h, y.ptrs, 0, 0, CUDAGraphOff)
	must(t, err)
	must(t, y.g.Close())
	wantErr(t, be.Execute(0), ErrInvalidArgument, "graph is closed")
	must(t, be.Close()) // still allowed after its graph
}
