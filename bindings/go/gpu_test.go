package cudnnfe

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/cudnnfe/cudnnfe/bindings/go/devmem"
	"github.com/cudnnfe/cudnnfe/bindings/go/internal/cmem"
)

// GPU tests run when cudnnfe_device_count() > 0 and skip with the reason
// otherwise. To run them on a GPU machine without Go, build the test binary
// here (see README.md, "GPU tests"):
//
//	go test -c -o cudnnfe_go.test .
//	./cudnnfe_go.test -test.run 'GPU' -test.v

func requireGPU(t testing.TB) {
	t.Helper()
	n, err := DeviceCount()
	if err != nil {
		t.Fatalf("DeviceCount: %v", err)
	}
	if n == 0 {
		v, verr := CUDNNVersion()
		t.Skipf("no GPU: cudnnfe_device_count() = 0 (cuDNN: %d, %v); GPU tests need a CUDA device", v, verr)
	}
	if err := devmem.Load(); err != nil {
		t.Fatalf("%d GPU(s) but no CUDA runtime for test buffers: %v", n, err)
	}
}

// devBuf is device memory freed at cleanup.
func devBuf(t testing.TB, bytes int64) uintptr {
	t.Helper()
	p, err := devmem.Malloc(bytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { devmem.Free(p) })
	return p
}

func devFrom[T devmem.Element](t testing.TB, src []T) uintptr {
	t.Helper()
	p, err := devmem.Alloc(src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { devmem.Free(p) })
	return p
}

// halfMatmulBias builds C = A@B + bias with HALF io and FLOAT compute.
func halfMatmulBias(t testing.TB, batch, m, k, n int64) (g *Graph, a, b, bias, c Tensor) {
	g = newGraph(t)
	must(t, g.SetName("gpu_matmul_bias"))
	must(t, g.SetIODType(DTypeHalf))
	must(t, g.SetComputeDType(DTypeFloat))
	must(t, g.SetIntermediateDType(DTypeFloat))
	var err error
	a, err = g.AddTensor("A", DTypeNotSet, []int64{batch, m, k}, nil)
	must(t, err)
	b, err = g.AddTensor("B", DTypeNotSet, []int64{batch, k, n}, nil)
	must(t, err)
	bias, err = g.AddTensor("bias", DTypeNotSet, []int64{1, m, n}, nil)
	must(t, err)
	mm, err := g.Matmul(a, b, &MatmulOptions{Name: "mm"})
	must(t, err)
	c, err = g.Binary(PointwiseAdd, mm, bias, &PointwiseOptions{Name: "add_bias"})
	must(t, err)
	must(t, g.SetOutput(c, true))
	return
}

// cpuTwin loads g's JSON description into a new graph built for the CPU
// reference: the GPU result's oracle.
func cpuTwin(t testing.TB, g *Graph) *Graph {
	t.Helper()
	data, err := g.Serialize()
	must(t, err)
	twin, err := LoadGraph(data)
	must(t, err)
	t.Cleanup(func() { twin.Close() })
	must(t, twin.Build(nil, cpuBuild))
	return twin
}

func closeEnough(got, want []float32, atol, rtol float64) (worst float64, ok bool) {
	ok = len(got) == len(want)
	for i := range want {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if math.IsNaN(d) || d > atol+rtol*math.Abs(float64(want[i])) {
			ok = false
		}
		if d > worst || math.IsNaN(d) {
			worst = d
		}
	}
	return
}

func TestGPUMatmulBias(t *testing.T) {
	requireGPU(t)
	const batch, m, k, n = 4, 128, 256, 64
	g, a, b, bias, c := halfMatmulBias(t, batch, m, k, n)
	twin := cpuTwin(t, g)
	h := newHandle(t)
	must(t, g.Build(h, &BuildOptions{Target: TargetGPU}))
	target, _ := g.Target()
	ws, _ := g.WorkspaceSize()
	plan, _ := g.PlanName()
	if target != TargetGPU {
		t.Fatalf("target %v", target)
	}
	t.Logf("plan %q, workspace %d bytes", plan, ws)

	rng := rand.New(rand.NewSource(11))
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
	bindings := []Binding{{a, da}, {b, db}, {bias, dbias}, {c, dc}}
	must(t, g.Execute(h, bindings, dws, ws, 0))
	must(t, devmem.Synchronize())
	got := make([]uint16, len(want))
	must(t, devmem.CopyFromDevice(got, dc))
	if worst, ok := closeEnough(Float32sFromHalfs(got), Float32sFromHalfs(want), 1e-2, 1e-2); !ok {
		t.Fatalf("GPU vs CPU reference: max abs error %g", worst)
	} else {
		t.Logf("GPU vs CPU reference: max abs error %g", worst)
	}

	// ExecuteOrdered gives the same result.
	bound, _ := g.BoundTensors()
	addr := map[Tensor]uintptr{a: da, b: db, bias: dbias, c: dc}
	ptrs := make([]uintptr, len(bound))
	for i, tensor := range bound {
		ptrs[i] = addr[tensor]
	}
	must(t, devmem.Memset(dc, 0, int64(2*len(want))))
	must(t, g.ExecuteOrdered(h, ptrs, dws, ws, 0))
	must(t, devmem.Synchronize())
	got2 := make([]uint16, len(want))
	must(t, devmem.CopyFromDevice(got2, dc))
	for i := range got {
		if got[i] != got2[i] {
			t.Fatalf("ExecuteOrdered differs at %d", i)
		}
	}

	// Host slices are refused for a GPU plan.
	err := g.ExecuteHost(h, Host(a, ah), Host(b, bh), Host(bias, biash), Host(c, got))
	wantErr(t, err, ErrInvalidArgument, "TargetCPUReference")

	// Launch overhead through the binding: Execute calls per second.
	const runs = 200
	start := time.Now()
	for i := 0; i < runs; i++ {
		if err := g.Execute(h, bindings, dws, ws, 0); err != nil {
			t.Fatal(err)
		}
	}
	must(t, devmem.Synchronize())
	t.Logf("%d executes of [%d,%d,%d]x[%d,%d,%d]: %.1f us each (GPU time included)",
		runs, batch, m, k, batch, k, n, float64(time.Since(start).Microseconds())/runs)
}

func TestGPUSDPACausal(t *testing.T) {
	requireGPU(t)
	const b, hq, hkv, s, d = 2, 8, 2, 256, 64
	for _, dt := range []DType{DTypeBFloat16, DTypeHalf} {
		dt := dt
		t.Run(dt.String(), func(t *testing.T) {
			g := newGraph(t)
			must(t, g.SetIODType(dt))
			must(t, g.SetComputeDType(DTypeFloat))
			must(t, g.SetIntermediateDType(DTypeFloat))
			q, _ := g.AddTensor("q", DTypeNotSet, []int64{b, hq, s, d}, nil)
			// K and V stored BSHD (interleaved heads), logically BHSD.
			bshd := []int64{s * hkv * d, d, hkv * d, 1}
			k, _ := g.AddTensor("k", DTypeNotSet, []int64{b, hkv, s, d}, bshd)
			v, _ := g.AddTensor("v", DTypeNotSet, []int64{b, hkv, s, d}, bshd)
			o, stats, err := g.SDPA(q, k, v, &SDPAOptions{Name: "attn", CausalMask: true, GenerateStats: true})
			must(t, err)
			must(t, g.SetOutput(o, true))
			must(t, g.SetOutput(stats, true))
			twin := cpuTwin(t, g)
			h := newHandle(t)
			if err := g.Build(h, &BuildOptions{Target: TargetGPU}); err != nil {
				t.Fatalf("build: %v", err)
			}
			ws, _ := g.WorkspaceSize()
			plan, _ := g.PlanName()
			t.Logf("plan %q, workspace %d bytes", plan, ws)

			enc := HalfsFromFloat32s
			dec := Float32sFromHalfs
			if dt == DTypeBFloat16 {
				enc, dec = BFloat16sFromFloat32s, Float32sFromBFloat16s
			}
			rng := rand.New(rand.NewSource(12))
			qh, kh, vh := enc(randFloats(rng, b*hq*s*d, 1)), enc(randFloats(rng, b*hkv*s*d, 1)), enc(randFloats(rng, b*hkv*s*d, 1))
			wantO, wantS := make([]uint16, b*hq*s*d), make([]float32, b*hq*s)
			must(t, twin.ExecuteHost(h, Host(q, qh), Host(k, kh), Host(v, vh), Host(o, wantO), Host(stats, wantS)))

			dq, dk, dv := devFrom(t, qh), devFrom(t, kh), devFrom(t, vh)
			do, ds := devBuf(t, int64(2*len(wantO))), devBuf(t, int64(4*len(wantS)))
			var dws uintptr
			if ws > 0 {
				dws = devBuf(t, ws)
			}
			must(t, g.Execute(h, []Binding{{q, dq}, {k, dk}, {v, dv}, {o, do}, {stats, ds}}, dws, ws, 0))
			must(t, devmem.Synchronize())
			gotO, gotS := make([]uint16, len(wantO)), make([]float32, len(wantS))
			must(t, devmem.CopyFromDevice(gotO, do))
			must(t, devmem.CopyFromDevice(gotS, ds))
			if worst, ok := closeEnough(dec(gotO), dec(wantO), 2e-2, 2e-2); !ok {
				t.Errorf("O: max abs error %g", worst)
			} else {
				t.Logf("O: max abs error %g", worst)
			}
			if worst, ok := closeEnough(gotS, wantS, 1e-2, 1e-3); !ok {
				t.Errorf("stats: max abs error %g", worst)
			} else {
				t.Logf("stats: max abs error %g", worst)
			}
		})
	}
}

// TestGPUConcurrentExecute: one built GPU graph, many goroutines, each with
// its own Handle, workspace and output.
func TestGPUConcurrentExecute(t *testing.T) {
	requireGPU(t)
	atLeastProcs(t, 8)
	const batch, m, k, n = 2, 64, 128, 64
	g, a, b, bias, c := halfMatmulBias(t, batch, m, k, n)
	must(t, g.Build(nil, &BuildOptions{Target: TargetGPU}))
	ws, _ := g.WorkspaceSize()
	rng := rand.New(rand.NewSource(13))
	ah := HalfsFromFloat32s(randFloats(rng, batch*m*k, 1))
	bh := HalfsFromFloat32s(randFloats(rng, batch*k*n, 0.1))
	biash := HalfsFromFloat32s(randFloats(rng, m*n, 1))
	da, db, dbias := devFrom(t, ah), devFrom(t, bh), devFrom(t, biash)
	want := make([]uint16, batch*m*n)
	must(t, cpuTwin(t, g).ExecuteHost(newHandle(t), Host(a, ah), Host(b, bh), Host(bias, biash), Host(c, want)))

	const goroutines, iterations = 8, 20
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for i := 0; i < goroutines; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			h, err := NewHandle(-1)
			if err != nil {
				errs <- err
				return
			}
			defer h.Close()
			dc, err := devmem.Malloc(int64(2 * len(want)))
			if err != nil {
				errs <- err
				return
			}
			defer devmem.Free(dc)
			var dws uintptr
			if ws > 0 {
				if dws, err = devmem.Malloc(ws); err != nil {
					errs <- err
					return
				}
				defer devmem.Free(dws)
			}
			got := make([]uint16, len(want))
			for it := 0; it < iterations; it++ {
				if err := devmem.Memset(dc, 0, int64(2*len(want))); err != nil {
					errs <- err
					return
				}
				if err := g.Execute(h, []Binding{{a, da}, {b, db}, {bias, dbias}, {c, dc}}, dws, ws, 0); err != nil {
					errs <- fmt.Errorf("goroutine %d: %w", i, err)
					return
				}
				if err := devmem.Synchronize(); err != nil {
					errs <- err
					return
				}
				if err := devmem.CopyFromDevice(got, dc); err != nil {
					errs <- err
					return
				}
				if worst, ok := closeEnough(Float32sFromHalfs(got), Float32sFromHalfs(want), 1e-2, 1e-2); !ok {
					errs <- fmt.Errorf("goroutine %d iteration %d: max error %g", i, it, worst)
					return
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestGPUExecuteFromFreshThreads executes with handles whose cuDNN handle
// was created on one OS thread, from other threads that have made no CUDA
// call — what happens whenever the Go scheduler moves a goroutine to a new
// thread between two executes. More goroutines than the process has threads
// lock distinct threads (all locked at once, so at least eight are new),
// then each executes with a handle first used on the test's thread. The library must make the device's context current on the
// calling thread itself; the second subtest does that in the test
// (cudaSetDevice first), which shows the workaround and tells a library
// problem from a graph problem.
func TestGPUExecuteFromFreshThreads(t *testing.T) {
	requireGPU(t)
	atLeastProcs(t, 8)
	g, a, b, bias, c := halfMatmulBias(t, 1, 64, 64, 64)
	h0 := newHandle(t)
	must(t, g.Build(h0, &BuildOptions{Target: TargetGPU}))
	ws, _ := g.WorkspaceSize()
	p := devFrom(t, make([]uint16, 64*64))
	var dws uintptr
	if ws > 0 {
		dws = devBuf(t, ws)
	}
	for _, setDeviceFirst := range []bool{false, true} {
		setDeviceFirst := setDeviceFirst
		name := "as_is"
		if setDeviceFirst {
			name = "cudaSetDevice_first"
		}
		t.Run(name, func(t *testing.T) {
			threads := 8
			if tasks, err := os.ReadDir("/proc/self/task"); err == nil {
				threads += len(tasks)
			}
			// Handles and buffers are set up here, on a thread where CUDA is
			// initialised: one execute each creates the cuDNN handles.
			handles := make([]*Handle, threads)
			outs := make([]uintptr, threads)
			runtime.LockOSThread()
			for i := range handles {
				handles[i] = newHandle(t)
				outs[i] = devBuf(t, 64*64*2)
				must(t, g.Execute(handles[i], []Binding{{a, p}, {b, p}, {bias, p}, {c, outs[i]}}, dws, ws, 0))
			}
			must(t, devmem.Synchronize())
			runtime.UnlockOSThread()

			var locked, done sync.WaitGroup
			locked.Add(threads)
			errs := make(chan error, threads)
			for i := 0; i < threads; i++ {
				done.Add(1)
				go func(i int) {
					defer done.Done()
					// Never unlocked: the thread exits with the goroutine, so
					// the next subtest gets fresh threads again.
					runtime.LockOSThread()
					locked.Done()
					locked.Wait()
					if setDeviceFirst {
						if err := devmem.SetDevice(0); err != nil {
							errs <- err
							return
						}
					}
					if err := g.Execute(handles[i], []Binding{{a, p}, {b, p}, {bias, p}, {c, outs[i]}}, dws, ws, 0); err != nil {
						errs <- fmt.Errorf("thread %d: %w", i, err)
					}
				}(i)
			}
			done.Wait()
			close(errs)
			failed := 0
			for err := range errs {
				if failed++; failed <= 2 {
					t.Error(err)
				}
			}
			if failed > 0 {
				t.Errorf("%d of %d threads failed", failed, threads)
			}
			must(t, devmem.Synchronize())
		})
	}
}

func TestGPUErrors(t *testing.T) {
	requireGPU(t)
	g, a, b, bias, c := halfMatmulBias(t, 1, 64, 64, 64)
	h := newHandle(t)
	must(t, g.Build(h, &BuildOptions{Target: TargetGPU}))
	ws, _ := g.WorkspaceSize()
	p := devBuf(t, 64*64*2)
	err := g.Execute(h, []Binding{{a, p}, {b, p}, {bias, p}}, 0, ws, 0)
	wantErr(t, err, ErrInvalidArgument, `"add_bias::out"`, "has no binding")
	if ws > 0 {
		err = g.Execute(h, []Binding{{a, p}, {b, p}, {bias, p}, {c, p}}, 0, ws-1, 0)
		wantErr(t, err, ErrInvalidArgument, "workspace")
	}
	// A handle for a device that does not exist fails at first GPU use.
	bad, err := NewHandle(1000)
	must(t, err)
	defer bad.Close()
	g2, _, _, _, _ := halfMatmulBias(t, 1, 64, 64, 64)
	err = g2.Build(bad, &BuildOptions{Target: TargetGPU})
	wantErr(t, err, ErrInvalidArgument, "device 1000")
}

// BenchmarkExecuteHostCPU measures the binding's overhead around a tiny CPU
// reference graph (ExecuteHost: checks, zero-copy pass, cgo call).
func BenchmarkExecuteHostCPU(b *testing.B) {
	g, x, y, bias, c := matmulBias(b, 1, 2, 2, 2)
	h := newHandle(b)
	must(b, g.Build(h, cpuBuild))
	xv, yv, bv, cv := make([]float32, 4), make([]float32, 4), make([]float32, 4), make([]float32, 4)
	bufs := []HostBuffer{Host(x, xv), Host(y, yv), Host(bias, bv), Host(c, cv)}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := g.ExecuteHost(h, bufs...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecuteCPU measures Graph.Execute (raw addresses) on a tiny CPU
// reference graph: the binding's overhead, which allocates nothing.
func BenchmarkExecuteCPU(b *testing.B) {
	g, x, y, bias, c := matmulBias(b, 1, 2, 2, 2)
	h := newHandle(b)
	must(b, g.Build(h, cpuBuild))
	m := cmem.Alloc(64)
	defer m.Free()
	bindings := []Binding{{x, m.Addr()}, {y, m.Addr()}, {bias, m.Addr()}, {c, m.Addr()}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := g.Execute(h, bindings, 0, 0, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGPUExecute measures Graph.Execute on the GPU (launch only; the
// stream is synchronized once at the end).
func BenchmarkGPUExecute(b *testing.B) {
	requireGPU(b)
	g, x, y, bias, c := halfMatmulBias(b, 1, 64, 64, 64)
	h := newHandle(b)
	must(b, g.Build(h, &BuildOptions{Target: TargetGPU}))
	ws, _ := g.WorkspaceSize()
	p := devBuf(b, 64*64*2)
	out := devBuf(b, 64*64*2)
	var dws uintptr
	if ws > 0 {
		dws = devBuf(b, ws)
	}
	bindings := []Binding{{x, p}, {y, p}, {bias, p}, {c, out}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := g.Execute(h, bindings, dws, ws, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	must(b, devmem.Synchronize())
}
