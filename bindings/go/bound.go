// Bound executions (cudnnfe_bound_t): a built graph fixed to its buffers,
// workspace and handle once (Graph.Bind), then run with one call each time,
// optionally as a replayed CUDA graph. Plain executes are exec.go's.

package cudnnfe

import (
	"runtime"
	"strconv"
	"sync"

	"github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"
)

// CUDAGraphMode says how a BoundExecution runs (cudnnfe_cuda_graph_mode_t;
// docs/plans.md, "Bound execution").
type CUDAGraphMode int32

// The CUDA graph modes.
const (
	// CUDAGraphOff: cudnnBackendExecute with the variant pack made at bind
	// (CPU reference: the reference executor on the bound buffers). The
	// default, and the only mode the CPU reference takes.
	CUDAGraphOff CUDAGraphMode = CUDAGraphMode(capi.CUDNNFE_CUDA_GRAPH_OFF)
	// CUDAGraphNative: a CUDA graph cuDNN fills (cudnnBackendPopulateCudaGraph).
	CUDAGraphNative CUDAGraphMode = CUDAGraphMode(capi.CUDNNFE_CUDA_GRAPH_NATIVE)
	// CUDAGraphCapture: a CUDA graph recorded by stream capture at bind
	// (which runs the work once, so bind writes the outputs).
	CUDAGraphCapture CUDAGraphMode = CUDAGraphMode(capi.CUDNNFE_CUDA_GRAPH_CAPTURE)
	// CUDAGraphAuto: Native where the plan supports it, else Capture.
	CUDAGraphAuto CUDAGraphMode = CUDAGraphMode(capi.CUDNNFE_CUDA_GRAPH_AUTO)
)

func (m CUDAGraphMode) String() string {
	switch m {
	case CUDAGraphOff:
		return "CUDAGraphOff"
	case CUDAGraphNative:
		return "CUDAGraphNative"
	case CUDAGraphCapture:
		return "CUDAGraphCapture"
	case CUDAGraphAuto:
		return "CUDAGraphAuto"
	}
	return "CUDAGraphMode(" + strconv.Itoa(int(m)) + ")"
}

// BoundExecution is a built graph bound to fixed buffers, a workspace and a
// handle (cudnnfe_bound_t): every check is made at bind, and Execute is one
// C call. It keeps its Graph and Handle reachable; Close them only after
// it (a run after either is closed fails with ErrInvalidArgument). Its runs
// are serialized on its handle. Close releases it; a finalizer releases
// one never closed.
type BoundExecution struct {
	mu sync.Mutex
	p  capi.Struct_SS_cudnnfe_bound // nil once closed
	g  *Graph
	h  *Handle
}

// Bind binds the built graph's selected plan to ptrs (ptrs[i] is the
// buffer of the i-th tensor of BoundTensors, as for ExecuteOrdered), a
// workspace (as for Execute) and h (cudnnfe_graph_bind). The buffers are
// device addresses, or C-heap host addresses for the CPU reference (never
// Go memory: the bound execution keeps them), and must stay allocated
// until it is closed; their contents may change between runs. With a CUDA
// graph mode the work is recorded now and replayed by each Execute; it is
// refused (ErrNotSupported, naming the reason) on the CPU reference and for
// graphs with pass-by-value inputs. Errors, read from h: ErrInvalidArgument
// (a wrong count, a zero pointer naming its tensor, a small workspace),
// ErrWrongState (not built, or built from DeviceProperties),
// ErrNotSupported, ErrCUDNNError, ErrCUDAError.
func (g *Graph) Bind(h *Handle, ptrs []uintptr, workspace uintptr, workspaceSize int64, mode CUDAGraphMode) (*BoundExecution, error) {
	const op = "Graph.Bind"
	if workspaceSize < 0 {
		return nil, argError(op, "workspaceSize is negative")
	}
	if err := lockExec(op, g, h); err != nil {
		return nil, err
	}
	defer unlockExec(g, h)
	var p capi.Struct_SS_cudnnfe_bound
	if st := capi.GraphBind(g.p, h.p, ptrs, workspace, workspaceSize, int32(mode), &p); st != 0 {
		return nil, newError(op, Status(st), h.lastError())
	}
	b := &BoundExecution{p: p, g: g, h: h}
	runtime.SetFinalizer(b, (*BoundExecution).finalize)
	return b, nil
}

// Execute runs the bound work on stream (a cudaStream_t; 0: the default
// stream; ignored by the CPU reference), asynchronously on the GPU
// (cudnnfe_bound_execute). Errors, read from its handle: ErrInvalidArgument
// (it, its graph or its handle is closed), ErrWrongState (its graph holds
// another plan than at bind), ErrCUDNNError, ErrCUDAError.
func (b *BoundExecution) Execute(stream uintptr) error {
	const op = "BoundExecution.Execute"
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.p == nil {
		return argError(op, "bound execution is closed")
	}
	if err := lockExec(op, b.g, b.h); err != nil {
		return err
	}
	defer unlockExec(b.g, b.h)
	if st := capi.Cudnnfe_bound_execute(b.p, stream); st != 0 {
		return newError(op, Status(st), b.h.lastError())
	}
	return nil
}

// CUDAGraphMode says how it runs: CUDAGraphOff, CUDAGraphNative or
// CUDAGraphCapture (CUDAGraphAuto is resolved at bind).
func (b *BoundExecution) CUDAGraphMode() (CUDAGraphMode, error) {
	const op = "BoundExecution.CUDAGraphMode"
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.p == nil {
		return 0, argError(op, "bound execution is closed")
	}
	var m int32
	err := objectless(op, func() int32 { return capi.Cudnnfe_bound_get_cuda_graph_mode(b.p, &m) })
	return CUDAGraphMode(m), err
}

// Close releases the bound execution (its variant pack and CUDA graph).
// Closing twice is a no-op; Close waits for a run in flight.
func (b *BoundExecution) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.p == nil {
		return nil
	}
	runtime.SetFinalizer(b, nil)
	return b.destroy("BoundExecution.Close")
}

func (b *BoundExecution) destroy(op string) error {
	p := b.p
	b.p, b.g, b.h = nil, nil, nil
	return objectless(op, func() int32 { return capi.Cudnnfe_bound_destroy(p) })
}

func (b *BoundExecution) finalize() {
	if b.p != nil {
		_ = b.destroy("BoundExecution finalizer")
	}
}
