package cudnnfe

import (
	"math"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"
)

// Handle is an execution context (cudnnfe_handle_t): a cuDNN handle for one
// GPU, created on first GPU use, plus the message of the last failed
// execute. It is cheap to create and is also what the CPU reference needs.
//
// The C library wants one handle per thread at a time; in Go, give each
// goroutine that executes its own Handle. A Handle shared by goroutines is
// still safe: its calls are serialized by a mutex.
//
// Close releases the handle; a finalizer releases a handle that was never
// closed once it becomes unreachable.
type Handle struct {
	mu     sync.Mutex
	p      capi.Struct_SS_cudnnfe_handle // nil once closed
	device int
}

// Number of live C handles and graphs created by this package (tests check
// that finalizers release them).
var liveHandles, liveGraphs atomic.Int64

// NewHandle creates an execution context for CUDA device `device`, or for the
// device that is current at first GPU use when device is -1. It never loads
// cuDNN: a missing GPU or cuDNN is reported by the first GPU build or
// execute. Errors: ErrInvalidArgument (device < -1), ErrOutOfMemory.
func NewHandle(device int) (*Handle, error) {
	if device < math.MinInt32 || device > math.MaxInt32 {
		return nil, argError("NewHandle", "device "+strconv.Itoa(device)+" is out of range")
	}
	var p capi.SwigcptrStruct_SS_cudnnfe_handle
	if err := objectless("NewHandle", func() int32 { return capi.Cudnnfe_handle_create(&p, int32(device)) }); err != nil {
		return nil, err
	}
	liveHandles.Add(1)
	h := &Handle{p: p, device: device}
	runtime.SetFinalizer(h, (*Handle).finalize)
	return h, nil
}

// Device returns the device index the handle was created for (-1: current).
func (h *Handle) Device() int { return h.device }

// Close releases the handle and its cuDNN handle. Closing twice is a no-op.
// It must not run while an Execute using h is in flight on another goroutine
// (it waits for it).
func (h *Handle) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.p == nil {
		return nil
	}
	runtime.SetFinalizer(h, nil)
	return h.destroy("Handle.Close")
}

func (h *Handle) destroy(op string) error {
	p := h.p
	h.p = nil
	liveHandles.Add(-1)
	return objectless(op, func() int32 { return capi.Cudnnfe_handle_destroy(p) })
}

func (h *Handle) finalize() {
	if h.p != nil {
		_ = h.destroy("Handle finalizer")
	}
}

// lastError reads the message of the last failed call with this handle;
// h.mu is held.
func (h *Handle) lastError() string { return capi.Cudnnfe_handle_last_error(h.p) }
