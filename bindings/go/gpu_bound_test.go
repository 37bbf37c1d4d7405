package cudnnfe

import (
	"math/rand"
	"testing"

	"github.com/cudnnfe/cudnnfe/bindings/go/devmem"
)

// Bound executions on the GPU (skipped without one), as
// tests/test_gpu_bound.cpp checks in C: each CUDA graph mode gives what the
// CPU reference computes, and AUTO resolves to NATIVE or CAPTURE.
func TestGPUBoundExecution(t *testing.T) {
	requireGPU(t)
	const batch, m, k, n = 2, 64, 128, 32
	g, a, b, bias, c := halfMatmulBias(t, batch, m, k, n)
	twin := cpuTwin(t, g)
	h := newHandle(t)
	must(t, g.Build(h, &BuildOptions{Target: TargetGPU}))
	ws, err := g.WorkspaceSize()
	must(t, err)

	rng := rand.New(rand.NewSource(18))
	ah := HalfsFromFloat32s(randFloats(rng, batch*m*k, 1))
	bh := HalfsFromFloat32s(randFloats(rng, batch*k*n, 0.1))
	biash := HalfsFromFloat32s(randFloats(rng, m*n, 1))
	want := make([]uint16, batch*m*n)
	must(t, twin.ExecuteHost(h, Host(a, ah), Host(b, bh), Host(bias, biash), Host(c, want)))

	da, db, dbias := devFrom(t, ah), devFrom(t, bh), devFrom(t, biash)
	dc := devBuf(t, int64(2*len(want)))
	var dws uintptr
	if ws > 0 {
		dws = devBuf(t, ws)
	}
	bound, err := g.BoundTensors()
	must(t, err)
	addr := map[Tensor]uintptr{a: da, b: db, bias: dbias, c: dc}
	ptrs := make([]uintptr, len(bound))
	for i, tensor := range bound {
		ptrs[i] = addr[tensor]
	}
	for _, mode := range []CUDAGraphMode{CUDAGraphOff, CUDAGraphAuto} {
		be, err := g.Bind(h, ptrs, dws, ws, mode)
		must(t, err)
		got, err := be.CUDAGraphMode()
		must(t, err)
		if mode == CUDAGraphOff && got != CUDAGraphOff ||
			mode == CUDAGraphAuto && got != CUDAGraphNative && got != CUDAGraphCapture {
			t.Fatalf("bound with %v runs as %v", mode, got)
		}
		must(t, devmem.Memset(dc, 0, int64(2*len(want))))
		must(t, be.Execute(0))
		must(t, devmem.Synchronize())
		out := make([]uint16, len(want))
		must(t, devmem.CopyFromDevice(out, dc))
		if worst, ok := closeEnough(Float32sFromHalfs(out), Float32sFromHalfs(want), 1e-2, 1e-2); !ok {
			t.Fatalf("%v (runs as %v) vs CPU reference: max abs error %g", mode, got, worst)
		}
		must(t, be.Close())
	}
}
