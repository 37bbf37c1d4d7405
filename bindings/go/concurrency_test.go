package cudnnfe

import (
	"fmt"
	"math/rand"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"
	"github.com/cudnnfe/cudnnfe/bindings/go/internal/cmem"
)

// atLeastProcs raises GOMAXPROCS for the test so that goroutines really run
// on several OS threads and migrate between them.
func atLeastProcs(t *testing.T, n int) {
	old := runtime.GOMAXPROCS(0)
	if old < n {
		runtime.GOMAXPROCS(n)
		t.Cleanup(func() { runtime.GOMAXPROCS(old) })
	}
	t.Logf("GOMAXPROCS=%d, NumCPU=%d", runtime.GOMAXPROCS(0), runtime.NumCPU())
}

// TestConcurrentExecute executes one built graph from many goroutines, each
// with its own Handle and output buffers, sharing the input slices; every
// result must equal the single-threaded one bit for bit.
func TestConcurrentExecute(t *testing.T) {
	atLeastProcs(t, 8)
	const batch, m, k, n = 2, 16, 32, 8
	g, a, b, bias, c := matmulBias(t, batch, m, k, n)
	h0 := newHandle(t)
	must(t, g.Build(h0, cpuBuild))
	rng := rand.New(rand.NewSource(8))
	av, bv, biasv := randFloats(rng, batch*m*k, 1), randFloats(rng, batch*k*n, 1), randFloats(rng, m*n, 1)
	want := make([]float32, batch*m*n)
	must(t, g.ExecuteHost(h0, Host(a, av), Host(b, bv), Host(bias, biasv), Host(c, want)))

	// Raw-address inputs shared by the Execute goroutines.
	ca, cb, cbias := cmem.From(av), cmem.From(bv), cmem.From(biasv)
	defer func() { ca.Free(); cb.Free(); cbias.Free() }()

	const goroutines, iterations = 32, 25
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
			out := make([]float32, len(want))
			cout := cmem.Alloc(len(want) * 4)
			defer cout.Free()
			for it := 0; it < iterations; it++ {
				for j := range out {
					out[j] = -1
				}
				if (i+it)%2 == 0 {
					err = g.ExecuteHost(h, Host(a, av), Host(b, bv), Host(bias, biasv), Host(c, out))
				} else {
					err = g.Execute(h, []Binding{{a, ca.Addr()}, {b, cb.Addr()}, {bias, cbias.Addr()}, {c, cout.Addr()}}, 0, 0, 0)
					copy(out, cmem.View[float32](cout))
				}
				if err != nil {
					errs <- fmt.Errorf("goroutine %d iteration %d: %w", i, it, err)
					return
				}
				if !reflect.DeepEqual(out, want) {
					errs <- fmt.Errorf("goroutine %d iteration %d: wrong result", i, it)
					return
				}
				runtime.Gosched()
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestConcurrentErrorMessages provokes failures from many goroutines at once
// — on their own graphs, through their own handles on a shared built graph,
// and in calls with no object — each with a number only that goroutine
// uses, and checks that every error carries its own message although the
// goroutines move between OS threads between cgo calls.
func TestConcurrentErrorMessages(t *testing.T) {
	atLeastProcs(t, 8)
	shared, _, _, _, _ := matmulBias(t, 1, 2, 2, 2)
	must(t, shared.Build(nil, cpuBuild))

	const goroutines, iterations = 64, 40
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for i := 0; i < goroutines; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			fail := func(format string, args ...any) {
				errs <- fmt.Errorf("goroutine %d: "+format, append([]any{i}, args...)...)
			}
			g, err := NewGraph()
			if err != nil {
				fail("%v", err)
				return
			}
			defer g.Close()
			h, err := NewHandle(-1)
			if err != nil {
				fail("%v", err)
				return
			}
			defer h.Close()
			name := "g" + strconv.Itoa(i)
			if err := g.SetName(name); err != nil {
				fail("%v", err)
				return
			}
			for it := 0; it < iterations; it++ {
				id := int64(100000 + i*1000 + it)
				tag := strconv.FormatInt(id, 10)

				// 1. A graph call: the message is on the graph.
				_, err := g.AddTensor("t"+tag, DTypeFloat, []int64{2, -int64(it) - 1}, nil)
				if e := checkMsg(err, ErrInvalidArgument, `"t`+tag+`"`); e != "" {
					fail("AddTensor: %s", e)
				}
				err = g.SetOutput(Tensor(id), true)
				if e := checkMsg(err, ErrInvalidArgument, `"`+name+`"`, "UID "+tag); e != "" {
					fail("SetOutput: %s", e)
				}
				runtime.Gosched()

				// 2. An execute: the message is on this goroutine's handle.
				err = shared.Execute(h, []Binding{{Tensor(id), 1}}, 0, 0, 0)
				if e := checkMsg(err, ErrInvalidArgument, "UID "+tag); e != "" {
					fail("Execute: %s", e)
				}
				err = shared.ExecuteOrdered(h, make([]uintptr, 5+i), 0, 0, 0)
				if e := checkMsg(err, ErrInvalidArgument, strconv.Itoa(5+i)+" pointers given"); e != "" {
					fail("ExecuteOrdered: %s", e)
				}

				// 3. Calls with no object: thread-local message, read with the
				// goroutine locked to its thread.
				_, err = NewHandle(-2 - i*1000 - it)
				if e := checkMsg(err, ErrInvalidArgument, "device "+strconv.Itoa(-2-i*1000-it)+" "); e != "" {
					fail("NewHandle: %s", e)
				}
				runtime.Gosched()
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 20 {
			t.Error(err)
		}
	}
	if n > 20 {
		t.Errorf("... %d errors in all", n)
	}
}

// checkMsg returns "" when err has the kind and every fragment, else why not.
func checkMsg(err error, kind error, fragments ...string) string {
	if err == nil {
		return "no error"
	}
	e, ok := err.(*Error)
	if !ok || e.Unwrap() != kind {
		return "wrong kind: " + err.Error()
	}
	for _, f := range fragments {
		if !strings.Contains(e.Message, f) {
			return fmt.Sprintf("message %q lacks %q", e.Message, f)
		}
	}
	return ""
}

// TestConcurrentConstruction builds different graphs concurrently and uses
// one Graph and one Handle from several goroutines at once (serialized by
// their mutexes).
func TestConcurrentConstruction(t *testing.T) {
	atLeastProcs(t, 8)
	shared := newGraph(t)
	sharedHandle := newHandle(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 10; j++ {
				if _, err := shared.AddTensor(fmt.Sprintf("s%d_%d", i, j), DTypeFloat, []int64{int64(j + 1)}, nil); err != nil {
					errs <- err
				}
				g, a, b, bias, c := matmulBias(t, 1, 2, 3, 4)
				if err := g.Build(sharedHandle, cpuBuild); err != nil {
					errs <- err
					continue
				}
				out := make([]float32, 8)
				if err := g.ExecuteHost(sharedHandle, Host(a, make([]float32, 6)), Host(b, make([]float32, 12)),
					Host(bias, []float32{1, 2, 3, 4, 5, 6, 7, 8}), Host(c, out)); err != nil {
					errs <- err
				} else if out[7] != 8 {
					errs <- fmt.Errorf("out = %v", out)
				}
				g.Close()
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n, _ := shared.TensorCount(); n != 160 {
		t.Errorf("TensorCount = %d; want 160", n)
	}
}

// TestThreadLocalAloneIsNotEnough shows why the binding never reads
// cudnnfe_last_error() across a possible goroutine switch: doing so (call,
// yield, read) from many goroutines returns other goroutines' messages. It
// only logs what it sees — the count depends on the scheduler — and checks
// that the binding's own path (objectless) never mixes messages up.
func TestThreadLocalAloneIsNotEnough(t *testing.T) {
	atLeastProcs(t, 8)
	const goroutines, iterations = 32, 50
	var wg sync.WaitGroup
	var mu sync.Mutex
	naiveWrong, lockedWrong := 0, 0
	for i := 0; i < goroutines; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for it := 0; it < iterations; it++ {
				dev := -2 - i*1000 - it
				want := "device " + strconv.Itoa(dev) + " "
				// Naive: the failing call and the read are separate cgo calls
				// with a scheduling point between them.
				var p capi.SwigcptrStruct_SS_cudnnfe_handle
				capi.Cudnnfe_handle_create(&p, int32(dev))
				runtime.Gosched()
				naive := capi.Cudnnfe_last_error()
				// The binding's way.
				_, err := NewHandle(dev)
				mu.Lock()
				if !strings.Contains(naive, want) {
					naiveWrong++
				}
				if e := checkMsg(err, ErrInvalidArgument, want); e != "" {
					lockedWrong++
				}
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	t.Logf("thread-local read across a yield: %d of %d messages belonged to another goroutine",
		naiveWrong, goroutines*iterations)
	if lockedWrong != 0 {
		t.Errorf("objectless: %d wrong messages", lockedWrong)
	}
}
