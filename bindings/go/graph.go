package cudnnfe

import (
	"runtime"
	"strconv"
	"sync"

	"github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"
)

// Tensor is a tensor of a Graph, named by its UID (> 0). The zero Tensor
// means "no tensor" in optional operand slots. A Tensor is a plain number:
// the same UID appears in the serialized graph and at execute.
type Tensor int64

// UID returns the tensor's UID.
func (t Tensor) UID() int64 { return int64(t) }

func (t Tensor) String() string { return "Tensor(" + strconv.FormatInt(int64(t), 10) + ")" }

// Graph is a graph of tensors and operations (cudnnfe_graph_t) and, after
// Build, a runnable plan.
//
// Construction and queries belong to one goroutine at a time in C; here they
// are serialized by the Graph's mutex, so any goroutine may call them. Once
// built, a Graph is immutable and Execute may run from many goroutines at
// once, each with its own Handle (Execute takes only a read lock);
// SelectPlan and Autotune, which change the plan executes run, take the
// write lock.
//
// Close releases the graph; a finalizer releases a graph that was never
// closed once it becomes unreachable.
type Graph struct {
	mu sync.RWMutex
	p  capi.Struct_SS_cudnnfe_graph // nil once closed
	// Filled by a successful Build or DeserializePlan; replaced (never
	// modified) by SelectPlan and Autotune under the write lock.
	plan *planInfo
}

// planInfo caches what a built graph's queries return, so that they need
// neither the C library nor the write lock while executes run.
type planInfo struct {
	target    Target
	workspace int64
	name      string
	bound     []boundTensor // in cudnnfe_graph_get_bound_uids order
	index     map[Tensor]int
}

type boundTensor struct {
	uid    Tensor
	name   string
	dtype  DType
	output bool  // a graph output (else an input)
	bytes  int64 // buffer size the dims, strides and type need
}

// NewGraph creates an empty graph.
func NewGraph() (*Graph, error) {
	var p capi.SwigcptrStruct_SS_cudnnfe_graph
	if err := objectless("NewGraph", func() int32 { return capi.Cudnnfe_graph_create(&p) }); err != nil {
		return nil, err
	}
	liveGraphs.Add(1)
	g := &Graph{p: p}
	runtime.SetFinalizer(g, (*Graph).finalize)
	return g, nil
}

// LoadGraph creates a graph from its JSON description (Serialize's output,
// docs/graph-json.md). Corrupt or incompatible data gives
// ErrBadSerializedData with a message saying what is wrong and where.
func LoadGraph(data []byte) (*Graph, error) {
	g, err := NewGraph()
	if err != nil {
		return nil, err
	}
	if err := g.Deserialize(data); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// Close releases the graph. Closing twice is a no-op. Close waits for
// executes in flight.
func (g *Graph) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.p == nil {
		return nil
	}
	runtime.SetFinalizer(g, nil)
	return g.destroy("Graph.Close")
}

func (g *Graph) destroy(op string) error {
	p := g.p
	g.p = nil
	g.plan = nil
	liveGraphs.Add(-1)
	return objectless(op, func() int32 { return capi.Cudnnfe_graph_destroy(p) })
}

func (g *Graph) finalize() {
	if g.p != nil {
		_ = g.destroy("Graph finalizer")
	}
}

const errClosedGraph = "graph is closed"

// call runs one C call on the graph with g.mu held (either mode) and turns a
// failure into an *Error carrying the graph's own message: the message is
// read from the object, not from the thread, so it is right whichever OS
// thread the goroutine runs on.
func (g *Graph) call(op string, fn func(p capi.Struct_SS_cudnnfe_graph) int32) error {
	if g.p == nil {
		return argError(op, errClosedGraph)
	}
	if st := fn(g.p); st != int32(capi.CUDNNFE_STATUS_OK) {
		return newError(op, Status(st), capi.Cudnnfe_graph_last_error(g.p))
	}
	return nil
}

// do is call under the write lock: construction and every query whose
// failure writes the graph's message slot.
func (g *Graph) do(op string, fn func(p capi.Struct_SS_cudnnfe_graph) int32) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.call(op, fn)
}

// checkInt32 refuses an int option that the C int32_t field cannot hold.
func checkInt32(op, what string, v int) error {
	if int(int32(v)) != v {
		return argError(op, what+" "+strconv.Itoa(v)+" does not fit in 32 bits")
	}
	return nil
}

func checkName(op, what, name string) error {
	if hasNUL(name) {
		return argError(op, what+" "+strconv.Quote(name)+" contains a NUL byte")
	}
	return nil
}

// LastError returns the message of the last failed call on the graph ("" if
// none). Every error this package returns already carries its message; this
// is for messages of calls made through other means.
func (g *Graph) LastError() (string, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.p == nil {
		return "", argError("Graph.LastError", errClosedGraph)
	}
	// cudnnfe_graph_copy_last_error copies under the graph's own lock, so
	// a read lock suffices; retry if a failure in between made it longer.
	for {
		var n int64
		if st := capi.Cudnnfe_graph_copy_last_error(g.p, nil, &n); st != 0 {
			return "", newError("Graph.LastError", Status(st), "cannot read the graph's message")
		}
		buf := make([]byte, n+1)
		if st := capi.Cudnnfe_graph_copy_last_error(g.p, buf, &n); st == 0 {
			return string(buf[:n]), nil
		}
	}
}

// SetName names the graph (used in messages).
func (g *Graph) SetName(name string) error {
	if err := checkName("Graph.SetName", "graph name", name); err != nil {
		return err
	}
	return g.do("Graph.SetName", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_set_name(p, name)
	})
}

// Name returns the graph's name ("graph" unless set).
func (g *Graph) Name() (string, error) {
	var name string
	err := g.do("Graph.Name", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_get_name(p, &name)
	})
	return name, err
}

// SetIODType sets the type given at validation to graph inputs and outputs
// left at DTypeNotSet.
func (g *Graph) SetIODType(d DType) error {
	return g.do("Graph.SetIODType", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_set_io_dtype(p, int32(d))
	})
}

// SetIntermediateDType sets the type of virtual tensors left at DTypeNotSet
// (default DTypeFloat).
func (g *Graph) SetIntermediateDType(d DType) error {
	return g.do("Graph.SetIntermediateDType", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_set_intermediate_dtype(p, int32(d))
	})
}

// SetComputeDType sets the math type of operations left at DTypeNotSet
// (default DTypeFloat).
func (g *Graph) SetComputeDType(d DType) error {
	return g.do("Graph.SetComputeDType", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_set_compute_dtype(p, int32(d))
	})
}

// TensorCount returns the number of tensors in the graph.
func (g *Graph) TensorCount() (int, error) {
	var n int64
	err := g.do("Graph.TensorCount", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_get_tensor_count(p, &n)
	})
	return int(n), err
}

// NodeCount returns the number of operations in the graph.
func (g *Graph) NodeCount() (int, error) {
	var n int64
	err := g.do("Graph.NodeCount", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_get_node_count(p, &n)
	})
	return int(n), err
}

// Tensors returns every tensor of the graph in creation order.
func (g *Graph) Tensors() ([]Tensor, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var n int64
	if err := g.call("Graph.Tensors", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_get_tensor_uids(p, nil, &n)
	}); err != nil {
		return nil, err
	}
	uids := make([]int64, n)
	if n > 0 {
		if err := g.call("Graph.Tensors", func(p capi.Struct_SS_cudnnfe_graph) int32 {
			return capi.Cudnnfe_graph_get_tensor_uids(p, uids, &n)
		}); err != nil {
			return nil, err
		}
	}
	return toTensors(uids[:n]), nil
}

// SetPruneUnreadInputs makes graph inputs that no op reads leave the graph
// when it is validated, as cudnn-frontend's graph holds only the tensors its
// ops use: a binding for one is ignored at execute, and a call naming one
// fails saying that it left (PrunedTensors lists them). Default false: such
// an input stays and takes no buffer (since 0.4).
func (g *Graph) SetPruneUnreadInputs(prune bool) error {
	v := int32(0)
	if prune {
		v = 1
	}
	return g.do("Graph.SetPruneUnreadInputs", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_set_prune_unread_inputs(p, v)
	})
}

// PrunedTensors returns the inputs that left the graph at validation
// (SetPruneUnreadInputs), in ascending UID order (since 0.4).
func (g *Graph) PrunedTensors() ([]Tensor, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var n int64
	if err := g.call("Graph.PrunedTensors", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_get_pruned_uids(p, nil, &n)
	}); err != nil {
		return nil, err
	}
	uids := make([]int64, n)
	if n > 0 {
		if err := g.call("Graph.PrunedTensors", func(p capi.Struct_SS_cudnnfe_graph) int32 {
			return capi.Cudnnfe_graph_get_pruned_uids(p, uids, &n)
		}); err != nil {
			return nil, err
		}
	}
	return toTensors(uids[:n]), nil
}

func toTensors(uids []int64) []Tensor {
	ts := make([]Tensor, len(uids))
	for i, u := range uids {
		ts[i] = Tensor(u)
	}
	return ts
}

// FindTensor returns the tensor with this name; ErrInvalidArgument if none.
func (g *Graph) FindTensor(name string) (Tensor, error) {
	if err := checkName("Graph.FindTensor", "name", name); err != nil {
		return 0, err
	}
	var uid int64
	err := g.do("Graph.FindTensor", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_find_tensor(p, name, &uid)
	})
	return Tensor(uid), err
}

func checkDims(op, what string, dims []int64) error {
	if len(dims) == 0 || len(dims) > MaxDims {
		return argError(op, what+" has "+strconv.Itoa(len(dims))+" entries; expected 1 to "+strconv.Itoa(MaxDims))
	}
	return nil
}

// AddTensor adds a graph input. dims has 1 to MaxDims entries; strides (in
// elements) has as many, or is nil for packed row-major. Any layout works
// (NHWC, transposed, broadcast with stride 0). name may be "" (an automatic
// name is given); dtype DTypeNotSet takes the graph's io type.
func (g *Graph) AddTensor(name string, dtype DType, dims, strides []int64) (Tensor, error) {
	const op = "Graph.AddTensor"
	if err := checkName(op, "tensor name", name); err != nil {
		return 0, err
	}
	if err := checkDims(op, "dims of tensor "+strconv.Quote(name), dims); err != nil {
		return 0, err
	}
	var ps *int64
	if strides != nil {
		if len(strides) != len(dims) {
			return 0, argError(op, "tensor "+strconv.Quote(name)+": "+strconv.Itoa(len(strides))+
				" strides for "+strconv.Itoa(len(dims))+" dims")
		}
		ps = &strides[0]
	}
	var uid int64
	err := g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_add_tensor(p, name, int32(dtype), dims, ps, &uid)
	})
	return Tensor(uid), err
}

// AddScalar adds a pass-by-value scalar (shape [1]) holding value, fed to
// the backend at execute: it takes no buffer.
func (g *Graph) AddScalar(name string, dtype DType, value float64) (Tensor, error) {
	const op = "Graph.AddScalar"
	if err := checkName(op, "scalar name", name); err != nil {
		return 0, err
	}
	var uid int64
	err := g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_add_scalar(p, name, int32(dtype), value, &uid)
	})
	return Tensor(uid), err
}

// SetOutput marks an operation's output as a graph output (bound at
// execute), or back to virtual. On a graph input, true does nothing (an
// input is never virtual; an op may take it as its output later, as
// SDPAOptions.ScoreMax) and false is ErrInvalidArgument.
func (g *Graph) SetOutput(t Tensor, isOutput bool) error {
	v := int32(0)
	if isOutput {
		v = 1
	}
	return g.do("Graph.SetOutput", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_tensor_set_output(p, int64(t), v)
	})
}

// SetNextOutput makes the next op added write its output port (its name in
// docs/graph-json.md, e.g. "dBias") into t, a tensor made with AddTensor
// that no op reads yet; t becomes a graph output keeping its UID, name, dims
// and strides. The next Add call consumes the request, added or refused
// (since 0.4).
func (g *Graph) SetNextOutput(port string, t Tensor) error {
	if err := checkName("Graph.SetNextOutput", "output port name", port); err != nil {
		return err
	}
	return g.do("Graph.SetNextOutput", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_set_next_output(p, port, int64(t))
	})
}

// SetTensorDType overrides a tensor's data type (inferred outputs included).
func (g *Graph) SetTensorDType(t Tensor, d DType) error {
	return g.do("Graph.SetTensorDType", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_tensor_set_dtype(p, int64(t), int32(d))
	})
}

// SetDims overrides a tensor's dims (inferred outputs included); strides are
// re-derived as packed in the same dimension order unless set explicitly.
func (g *Graph) SetDims(t Tensor, dims []int64) error {
	const op = "Graph.SetDims"
	if err := checkDims(op, "dims", dims); err != nil {
		return err
	}
	return g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_tensor_set_dims(p, int64(t), dims)
	})
}

// SetStrides overrides a tensor's strides; len(strides) must equal its rank.
func (g *Graph) SetStrides(t Tensor, strides []int64) error {
	const op = "Graph.SetStrides"
	if err := checkDims(op, "strides", strides); err != nil {
		return err
	}
	return g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_tensor_set_strides(p, int64(t), strides)
	})
}

// SetTensorName renames a tensor; names are unique within a graph.
func (g *Graph) SetTensorName(t Tensor, name string) error {
	const op = "Graph.SetTensorName"
	if err := checkName(op, "tensor name", name); err != nil {
		return err
	}
	return g.do(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_tensor_set_name(p, int64(t), name)
	})
}

// SetUID changes a tensor's UID (> 0 and unused) and returns the renamed
// Tensor; t itself no longer names a tensor afterwards.
func (g *Graph) SetUID(t Tensor, uid int64) (Tensor, error) {
	err := g.do("Graph.SetUID", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_tensor_set_uid(p, int64(t), uid)
	})
	if err != nil {
		return t, err
	}
	return Tensor(uid), nil
}

// Shape returns a tensor's dims and strides (in elements). Inferred shapes
// are known as soon as the op is added.
func (g *Graph) Shape(t Tensor) (dims, strides []int64, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.shapeLocked("Graph.Shape", t)
}

func (g *Graph) shapeLocked(op string, t Tensor) (dims, strides []int64, err error) {
	var d, s [MaxDims]int64
	var n int32
	err = g.call(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_tensor_get_shape(p, int64(t), &d[0], &s[0], int32(MaxDims), &n)
	})
	if err != nil {
		return nil, nil, err
	}
	return append([]int64(nil), d[:n]...), append([]int64(nil), s[:n]...), nil
}

// Dims returns a tensor's dims.
func (g *Graph) Dims(t Tensor) ([]int64, error) {
	d, _, err := g.Shape(t)
	return d, err
}

// TensorDType returns a tensor's data type as set (DTypeNotSet until
// validation resolves it).
func (g *Graph) TensorDType(t Tensor) (DType, error) {
	var d int32
	err := g.do("Graph.TensorDType", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_tensor_get_dtype(p, int64(t), &d)
	})
	return DType(d), err
}

// TensorName returns a tensor's name.
func (g *Graph) TensorName(t Tensor) (string, error) {
	var name string
	err := g.do("Graph.TensorName", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_tensor_get_name(p, int64(t), &name)
	})
	return name, err
}

// TensorKind says whether a tensor is a graph input, a scalar, a virtual
// tensor or a graph output.
func (g *Graph) TensorKind(t Tensor) (TensorKind, error) {
	var k int32
	err := g.do("Graph.TensorKind", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_tensor_get_kind(p, int64(t), &k)
	})
	return TensorKind(k), err
}

// IsBound reports whether a tensor needs a buffer at execute (a graph input
// or output), not a virtual tensor or a pass-by-value scalar.
func (g *Graph) IsBound(t Tensor) (bool, error) {
	var b int32
	err := g.do("Graph.IsBound", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_tensor_is_bound(p, int64(t), &b)
	})
	return b != 0, err
}

// IsPassByValue reports whether a tensor is a pass-by-value graph input: its
// binding at execute is host memory whose one element cuDNN reads by value
// (since 0.3).
func (g *Graph) IsPassByValue(t Tensor) (bool, error) {
	var b int32
	err := g.do("Graph.IsPassByValue", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_tensor_get_pass_by_value(p, int64(t), &b)
	})
	return b != 0, err
}

// ScalarValue returns the value of a scalar made with AddScalar
// (ErrInvalidArgument for any other tensor; since 0.4).
func (g *Graph) ScalarValue(t Tensor) (float64, error) {
	var v float64
	err := g.do("Graph.ScalarValue", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_tensor_get_scalar_value(p, int64(t), &v)
	})
	return v, err
}

// SetPassByValue marks a one-element graph input as pass-by-value (or not):
// its binding at execute is then a pointer to host memory, read when Execute
// is called (cudnn-frontend's is_pass_by_value; since 0.3).
func (g *Graph) SetPassByValue(t Tensor, passByValue bool) error {
	v := int32(0)
	if passByValue {
		v = 1
	}
	return g.do("Graph.SetPassByValue", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_tensor_set_pass_by_value(p, int64(t), v)
	})
}

// Validate resolves data types and checks every node's shapes and types,
// and, where a GPU is usable, the support rules of that GPU (as
// ValidateForBuild(nil, nil)). Errors: ErrInvalidGraph with a message
// naming the node, tensor and rule; ErrNotSupported for a graph
// cudnn-frontend or cuDNN refuses on that GPU.
func (g *Graph) Validate() error {
	return g.do("Graph.Validate", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_validate(p)
	})
}

// Serialize returns the graph's JSON description (docs/graph-json.md), which
// rebuilds on any GPU, any cuDNN version and the CPU reference.
func (g *Graph) Serialize() ([]byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	const op = "Graph.Serialize"
	var n int64
	if err := g.call(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_serialize(p, nil, &n)
	}); err != nil {
		return nil, err
	}
	buf := make([]byte, n)
	if n > 0 {
		if err := g.call(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
			return capi.Cudnnfe_graph_serialize(p, buf, &n)
		}); err != nil {
			return nil, err
		}
	}
	return buf[:n], nil
}

// Deserialize loads a JSON description into g, which must be empty (just
// created). See LoadGraph.
func (g *Graph) Deserialize(data []byte) error {
	return g.do("Graph.Deserialize", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_deserialize(p, string(data))
	})
}
