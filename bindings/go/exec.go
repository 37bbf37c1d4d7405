package cudnnfe

import (
	"strconv"
	"unsafe"

	"github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"
)

// Binding gives one bound tensor's buffer for Execute: a device address for
// the GPU target (from cudaMalloc, a CUDA library or the devmem package), or
// a C-heap host address for the CPU reference. It has the layout of
// cudnnfe_binding_t and is passed to C without copying. Go-owned memory
// must never be passed as a uintptr: use ExecuteHost for Go slices.
type Binding struct {
	Tensor Tensor
	Ptr    uintptr
}

func init() {
	var b Binding
	var c capi.Binding
	if unsafe.Sizeof(b) != unsafe.Sizeof(c) || unsafe.Offsetof(b.Ptr) != unsafe.Offsetof(c.Data) ||
		unsafe.Sizeof(b.Tensor) != unsafe.Sizeof(c.UID) {
		panic("cudnnfe: Binding does not match capi.Binding")
	}
}

// lockExec takes the locks an execute needs: the handle's (one execute per
// handle at a time, as the C library requires) then a read lock on the
// graph (executes of one graph run concurrently; Close waits for them). On
// success the caller must call unlockExec.
func lockExec(op string, g *Graph, h *Handle) error {
	if h == nil {
		return argError(op, "handle is nil (create one per goroutine with NewHandle)")
	}
	h.mu.Lock()
	if h.p == nil {
		h.mu.Unlock()
		return argError(op, "handle is closed")
	}
	g.mu.RLock()
	if g.p == nil {
		g.mu.RUnlock()
		h.mu.Unlock()
		return argError(op, errClosedGraph)
	}
	return nil
}

func unlockExec(g *Graph, h *Handle) {
	g.mu.RUnlock()
	h.mu.Unlock()
}

// Execute runs the built graph. Every bound tensor (BoundTensors) needs
// exactly one binding; scalars need none. workspace must hold at least
// WorkspaceSize bytes of device memory (ignored by the CPU reference, where
// 0 is fine). stream is a cudaStream_t (0: the default stream); GPU
// execution is asynchronous on it. Errors are read from h: ErrInvalidArgument
// (missing, unknown or duplicate binding, small workspace), ErrWrongState
// (not built), ErrCUDNNError, ErrCUDAError.
//
// Execute allocates nothing and takes no contended lock.
func (g *Graph) Execute(h *Handle, bindings []Binding, workspace uintptr, workspaceSize int64, stream uintptr) error {
	const op = "Graph.Execute"
	if workspaceSize < 0 {
		return argError(op, "workspaceSize is negative")
	}
	if err := lockExec(op, g, h); err != nil {
		return err
	}
	defer unlockExec(g, h)
	cb := *(*[]capi.Binding)(unsafe.Pointer(&bindings))
	if st := capi.GraphExecute(g.p, h.p, cb, workspace, workspaceSize, stream); st != 0 {
		return newError(op, Status(st), h.lastError())
	}
	return nil
}

// ShapeOverride gives one bound tensor's shape for one ExecuteWithOverrides
// call: as many Dims and Strides (in elements) as the tensor has dims.
type ShapeOverride struct {
	Tensor  Tensor
	Dims    []int64
	Strides []int64
}

// ExecuteWithOverrides runs a graph built with
// BuildOptions.OverrideShapeEnabled as Execute does, with the tensors of
// overrides (bound tensors, each at most once) taking the given shapes and
// strides for this call; every other bound tensor keeps its own, and no
// tensor changes rank. The CPU reference infers the graph's shapes again
// from the overridden ones: a bound tensor whose shape would change must be
// overridden too. Errors: those of Execute, ErrInvalidArgument naming the
// tensor and the rule for a bad override, ErrWrongState for a graph built
// without OverrideShapeEnabled (since 0.3).
func (g *Graph) ExecuteWithOverrides(h *Handle, bindings []Binding, overrides []ShapeOverride, workspace uintptr, workspaceSize int64, stream uintptr) error {
	const op = "Graph.ExecuteWithOverrides"
	if workspaceSize < 0 {
		return argError(op, "workspaceSize is negative")
	}
	ov := capi.ShapeOverrides{UIDs: make([]int64, len(overrides)), NDims: make([]int32, len(overrides))}
	for i, o := range overrides {
		if len(o.Dims) != len(o.Strides) || len(o.Dims) > MaxDims {
			return argError(op, "overrides["+strconv.Itoa(i)+"] (tensor UID "+strconv.FormatInt(int64(o.Tensor), 10)+
				"): "+strconv.Itoa(len(o.Dims))+" dims and "+strconv.Itoa(len(o.Strides))+
				" strides; expected as many of each, at most "+strconv.Itoa(MaxDims))
		}
		ov.UIDs[i], ov.NDims[i] = int64(o.Tensor), int32(len(o.Dims))
		ov.Dims = append(ov.Dims, o.Dims...)
		ov.Strides = append(ov.Strides, o.Strides...)
	}
	if err := lockExec(op, g, h); err != nil {
		return err
	}
	defer unlockExec(g, h)
	cb := *(*[]capi.Binding)(unsafe.Pointer(&bindings))
	if st, msg := capi.GraphExecuteWithOverrides(g.p, h.p, cb, &ov, workspace, workspaceSize, stream); st != 0 {
		if msg == "" {
			msg = h.lastError()
		}
		return newError(op, Status(st), msg)
	}
	return nil
}

// ExecuteOrdered is the faster form of Execute: ptrs[i] is the buffer of the
// i-th tensor of BoundTensors, and len(ptrs) must equal their number.
func (g *Graph) ExecuteOrdered(h *Handle, ptrs []uintptr, workspace uintptr, workspaceSize int64, stream uintptr) error {
	const op = "Graph.ExecuteOrdered"
	if workspaceSize < 0 {
		return argError(op, "workspaceSize is negative")
	}
	if err := lockExec(op, g, h); err != nil {
		return err
	}
	defer unlockExec(g, h)
	if st := capi.GraphExecuteOrdered(g.p, h.p, ptrs, workspace, workspaceSize, stream); st != 0 {
		return newError(op, Status(st), h.lastError())
	}
	return nil
}

// HostElement lists the Go element types a host buffer may have, and the
// tensor data types each binds to:
//
//	float32 FLOAT        float64 DOUBLE
//	uint16  HALF, BFLOAT16 (raw bits; see Float32ToHalf, Float32ToBFloat16)
//	int8    INT8         int32 INT32       int64 INT64
//	uint8   UINT8, BOOLEAN, FP8_E4M3, FP8_E5M2, FP8_E8M0 (raw bytes)
//	bool    BOOLEAN
//
// HostBytes binds raw bytes to a tensor of any type.
type HostElement interface {
	float32 | float64 | uint16 | int8 | int32 | int64 | uint8 | bool
}

// HostBuffer is a Go slice bound to a tensor for ExecuteHost. Make one with
// Host or HostBytes.
type HostBuffer struct {
	tensor Tensor
	data   []byte
	elem   string  // Go element type, for messages
	dtypes []DType // tensor types it may bind to; nil: any (HostBytes)
}

// Host binds a Go slice to tensor t for ExecuteHost. The slice must hold at
// least the tensor's buffer (Graph.BufferSize) and its element type must
// match the tensor's data type (see HostElement).
func Host[T HostElement](t Tensor, data []T) HostBuffer {
	var zero T
	hb := HostBuffer{tensor: t}
	if len(data) > 0 {
		hb.data = unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), uintptr(len(data))*unsafe.Sizeof(zero))
	}
	switch any(zero).(type) {
	case float32:
		hb.elem, hb.dtypes = "float32", []DType{DTypeFloat}
	case float64:
		hb.elem, hb.dtypes = "float64", []DType{DTypeDouble}
	case uint16:
		hb.elem, hb.dtypes = "uint16", []DType{DTypeHalf, DTypeBFloat16}
	case int8:
		hb.elem, hb.dtypes = "int8", []DType{DTypeInt8}
	case int32:
		hb.elem, hb.dtypes = "int32", []DType{DTypeInt32}
	case int64:
		hb.elem, hb.dtypes = "int64", []DType{DTypeInt64}
	case uint8:
		hb.elem, hb.dtypes = "uint8", []DType{DTypeUint8, DTypeBoolean, DTypeFP8E4M3, DTypeFP8E5M2, DTypeFP8E8M0}
	case bool:
		hb.elem, hb.dtypes = "bool", []DType{DTypeBoolean}
	}
	return hb
}

// HostBytes binds raw bytes to tensor t of any data type for ExecuteHost.
func HostBytes(t Tensor, data []byte) HostBuffer {
	return HostBuffer{tensor: t, data: data, elem: "byte"}
}

// ExecuteHost runs a graph built for TargetCPUReference on Go slices, one
// per bound tensor (see Host). Sizes and element types are checked against
// the tensors before C is called. The slices are passed to C in place when
// the graph has at most 16 bound tensors, else through one C staging copy
// from which only outputs are copied back: input slices are never written.
// Errors from the library are read from h.
func (g *Graph) ExecuteHost(h *Handle, bufs ...HostBuffer) error {
	const op = "Graph.ExecuteHost"
	if err := lockExec(op, g, h); err != nil {
		return err
	}
	defer unlockExec(g, h)
	pi, err := g.built(op)
	if err != nil {
		return err
	}
	if pi.target != TargetCPUReference {
		return argError(op, "graph runs on "+pi.target.String()+
			"; ExecuteHost needs a graph built with Target: TargetCPUReference (use Execute with device pointers)")
	}
	ordered := make([][]byte, len(pi.bound))
	outputs := make([]bool, len(pi.bound))
	given := make([]bool, len(pi.bound))
	for i, b := range bufs {
		idx, ok := pi.index[b.tensor]
		if !ok {
			return argError(op, "buffer "+strconv.Itoa(i)+": tensor UID "+strconv.FormatInt(int64(b.tensor), 10)+
				" is not bound (not a graph input or output of this graph)")
		}
		bt := pi.bound[idx]
		if given[idx] {
			return argError(op, "buffer "+strconv.Itoa(i)+": tensor \""+bt.name+"\" (UID "+
				strconv.FormatInt(int64(bt.uid), 10)+") is bound twice")
		}
		if b.dtypes != nil && !containsDType(b.dtypes, bt.dtype) {
			return argError(op, "buffer "+strconv.Itoa(i)+": tensor \""+bt.name+"\" is "+bt.dtype.String()+
				" but the slice holds "+b.elem)
		}
		if int64(len(b.data)) < bt.bytes {
			return argError(op, "buffer "+strconv.Itoa(i)+": tensor \""+bt.name+"\" needs "+
				strconv.FormatInt(bt.bytes, 10)+" bytes but the "+b.elem+" slice holds "+
				strconv.Itoa(len(b.data)))
		}
		given[idx] = true
		ordered[idx] = b.data
		outputs[idx] = bt.output
	}
	for i, ok := range given {
		if !ok {
			return argError(op, "tensor \""+pi.bound[i].name+"\" (UID "+
				strconv.FormatInt(int64(pi.bound[i].uid), 10)+") has no buffer")
		}
	}
	st, msg := capi.GraphExecuteHost(g.p, h.p, ordered, outputs)
	if st != 0 {
		if msg == "" {
			msg = h.lastError()
		}
		return newError(op, Status(st), msg)
	}
	return nil
}

func containsDType(ds []DType, d DType) bool {
	for _, x := range ds {
		if x == d {
			return true
		}
	}
	return false
}
