package cudnnfe

import (
	"math"
	"strconv"

	"github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"
)

// BuildOptions says where and how Build builds (cudnnfe_build_options_t),
// plan control included (docs/plans.md). The zero value, like a nil
// *BuildOptions, means the C defaults: target AUTO, heuristic modes {A,
// FALLBACK}, one plan (the heuristics' choice), no filters, the plan cache
// on, the cache directory from CUDNNFE_PLAN_CACHE_DIR. As for the op
// options, a field left at its zero value keeps the C default.
type BuildOptions struct {
	// Target: TargetAuto (GPU when cuDNN and a GPU load, else the CPU
	// reference), TargetGPU or TargetCPUReference.
	Target Target
	// HeurModes are tried in order (1 to 4 of them); empty: {A, FALLBACK}.
	HeurModes []HeurMode
	// Policy: BuildPolicyHeuristicsChoice (one plan) or BuildPolicyAll
	// (every engine configuration that passes the filters and builds, for
	// SelectPlan and Autotune).
	Policy BuildPolicy
	// MaxWorkspaceSize skips plans needing more workspace, in bytes; 0: no
	// limit; MaxWorkspaceNone: only plans that need no workspace.
	MaxWorkspaceSize int64
	// ExcludeNumericalNotes skips engines with any of these notes (e.g.
	// NumericalNoteTensorCore to keep full FP32 math on FLOAT data).
	ExcludeNumericalNotes NumericalNotes
	// ExcludeBehaviorNotes skips engines with any of these notes (e.g.
	// BehaviorNoteRuntimeCompilation).
	ExcludeBehaviorNotes BehaviorNotes
	// RequireBehaviorNotes keeps only engines with all of these notes (e.g.
	// BehaviorNoteSupportsCUDAGraphNativeAPI for PopulateCUDAGraph).
	RequireBehaviorNotes BehaviorNotes
	// ExcludeEngines lists engines (the N of a plan name "engN_...") never
	// to use; at most 256.
	ExcludeEngines []int64
	// MaxPlans: with BuildPolicyAll, build at most this many; 0: no limit.
	MaxPlans int
	// DisablePlanCache: this build neither reuses nor stores cached plans.
	DisablePlanCache bool
	// PlanCacheDir is the persistent plan cache directory, shared safely by
	// processes; "": the environment variable CUDNNFE_PLAN_CACHE_DIR when
	// set. NoPlanCacheDir: no directory, whatever the environment says.
	PlanCacheDir   string
	NoPlanCacheDir bool
	// OverrideShapeEnabled builds the graph to take execute-time shapes
	// (cudnnfe_build_options_t.override_shape_enabled; since 0.3).
	OverrideShapeEnabled bool
	// DynamicShapeEnabled builds a dynamic-shape graph
	// (cudnn_build_options_t.dynamic_shape_enabled; since 0.3).
	DynamicShapeEnabled bool
	// KernelCache (nil: none) lets GPU builds of graphs of one topology and
	// different shapes share compiled kernels; it implies
	// DynamicShapeEnabled. The built plans keep it alive; the CPU reference
	// ignores it (since 0.3).
	KernelCache *KernelCache
	// DeviceProperties (nil: none; LoadDeviceProperties) build the GPU plan
	// for the device they describe without using a GPU, on any machine
	// with cuDNN. The handle must be nil and Target TargetAuto or
	// TargetGPU; the plan caches are not used. The built graph cannot
	// execute (ErrWrongState): write its plan with SerializePlan and load it
	// with DeserializePlan on such a GPU. Experimental (since 0.3).
	DeviceProperties *DeviceProperties
	// SmCount is the number of SMs a GPU plan may use (cuDNN's heuristics
	// SM count target, cudnn-frontend's sm_count); 0: all of the GPU's. A
	// negative value is ErrInvalidArgument from the library (since 0.4).
	SmCount int
	// SmVersion is the architecture whose support rules validation applies
	// (90 for compute capability 9.0; cudnn-frontend's sm_version); plans
	// are still built for the GPU in use. 0: that GPU's. Negative:
	// ErrInvalidArgument (since 0.4).
	SmVersion int
	// Verify (zero value VerifyFromEnv: on when CUDNNFE_VERIFY=1): with
	// VerifyOn the first execute of each plan (and the first run of each
	// bound execution) copies back the inputs a sample of output elements
	// depends on, computes that sample with the CPU reference and fails
	// with ErrVerifyFailed, naming the graph, node, plan, cuDNN, GPU and the
	// worst element, when one is off by more than the tolerance. What it
	// cannot check passes and is logged as "not verified" (docs/verify.md;
	// since 0.4).
	Verify VerifyMode
	// VerifySamples: output elements sampled per output tensor; 0: 64 (or
	// CUDNNFE_VERIFY_SAMPLES). Since 0.4.
	VerifySamples int
	// VerifyRtol: relative tolerance of floating outputs; 0: by data type
	// (docs/verify.md). Since 0.4.
	VerifyRtol float64
}

// MaxWorkspaceNone as BuildOptions.MaxWorkspaceSize keeps only plans that
// need no workspace (a limit of 0 bytes; 0 itself means no limit).
const MaxWorkspaceNone int64 = math.MinInt64

// DefaultBuildOptions returns the defaults of cudnnfe_build_options_init.
func DefaultBuildOptions() BuildOptions {
	var c capi.BuildOptions
	capi.BuildOptionsInit(&c)
	o := BuildOptions{Target: Target(c.Target), Policy: BuildPolicy(c.Policy),
		ExcludeNumericalNotes: NumericalNotes(c.ExcludeNumericalNotes),
		ExcludeBehaviorNotes:  BehaviorNotes(c.ExcludeBehaviorNotes),
		RequireBehaviorNotes:  BehaviorNotes(c.RequireBehaviorNotes),
		MaxPlans:              int(c.MaxPlans), DisablePlanCache: c.DisablePlanCache != 0,
		OverrideShapeEnabled: c.OverrideShapeEnabled != 0,
		DynamicShapeEnabled:  c.DynamicShapeEnabled != 0,
		SmCount:              int(c.SmCount), SmVersion: int(c.SmVersion),
		Verify: VerifyMode(c.Verify), VerifySamples: int(c.VerifySamples),
		VerifyRtol: c.VerifyRtol}
	if c.MaxWorkspaceSize >= 0 {
		o.MaxWorkspaceSize = c.MaxWorkspaceSize
	}
	for i := int32(0); i < c.NumHeurModes && i < int32(len(c.HeurModes)); i++ {
		o.HeurModes = append(o.HeurModes, HeurMode(c.HeurModes[i]))
	}
	return o
}

func (o *BuildOptions) check(op string) error {
	if o == nil {
		return nil
	}
	if o.MaxPlans < 0 || o.MaxPlans > math.MaxInt32 {
		return argError(op, "build options: MaxPlans "+strconv.Itoa(o.MaxPlans)+" is out of range (0: no limit)")
	}
	if err := checkInt32(op, "build options: SmCount", o.SmCount); err != nil {
		return err
	}
	if err := checkInt32(op, "build options: SmVersion", o.SmVersion); err != nil {
		return err
	}
	if o.VerifySamples < 0 || o.VerifySamples > math.MaxInt32 {
		return argError(op, "build options: VerifySamples "+strconv.Itoa(o.VerifySamples)+" is out of range (0: the default)")
	}
	if o.NoPlanCacheDir && o.PlanCacheDir != "" {
		return argError(op, "build options: PlanCacheDir "+strconv.Quote(o.PlanCacheDir)+" given with NoPlanCacheDir")
	}
	return checkName(op, "build options: PlanCacheDir", o.PlanCacheDir)
}

// toC returns the C options and their pointer fields (the engines to
// exclude, and the plan cache directory: nil keeps the environment's).
func (o *BuildOptions) toC() (*capi.BuildOptions, []int64, *string) {
	if o == nil {
		return nil, nil, nil
	}
	var c capi.BuildOptions
	capi.BuildOptionsInit(&c)
	c.Target = int32(o.Target)
	c.Policy = int32(o.Policy)
	switch o.MaxWorkspaceSize {
	case 0:
	case MaxWorkspaceNone:
		c.MaxWorkspaceSize = 0
	default:
		c.MaxWorkspaceSize = o.MaxWorkspaceSize
	}
	c.ExcludeNumericalNotes = uint32(o.ExcludeNumericalNotes)
	c.ExcludeBehaviorNotes = uint32(o.ExcludeBehaviorNotes)
	c.RequireBehaviorNotes = uint32(o.RequireBehaviorNotes)
	if o.MaxPlans != 0 {
		c.MaxPlans = int32(o.MaxPlans)
	}
	if o.DisablePlanCache {
		c.DisablePlanCache = 1
	}
	if o.OverrideShapeEnabled {
		c.OverrideShapeEnabled = 1
	}
	if o.DynamicShapeEnabled {
		c.DynamicShapeEnabled = 1
	}
	if o.SmCount != 0 {
		c.SmCount = int32(o.SmCount)
	}
	if o.SmVersion != 0 {
		c.SmVersion = int32(o.SmVersion)
	}
	c.Verify = int32(o.Verify)
	c.VerifySamples = int32(o.VerifySamples)
	c.VerifyRtol = o.VerifyRtol
	var dir *string
	if o.NoPlanCacheDir || o.PlanCacheDir != "" {
		dir = &o.PlanCacheDir
	}
	if len(o.HeurModes) > 0 {
		// More than the C struct holds: pass the true count so that the
		// library refuses it with its message; copy what fits.
		c.NumHeurModes = int32(len(o.HeurModes))
		for i := range c.HeurModes {
			if i < len(o.HeurModes) {
				c.HeurModes[i] = int32(o.HeurModes[i])
			} else {
				c.HeurModes[i] = 0
			}
		}
	}
	return &c, o.ExcludeEngines, dir
}

// Build validates, lowers and builds the graph for opts.Target (nil opts:
// defaults). For the GPU it builds the first engine configuration of the
// heuristic modes that passes the filters and builds (BuildPolicyAll: every
// one; see Plans, SelectPlan, Autotune). h may be nil (the library uses its
// own per-device handle). After success the graph can no longer be
// modified. Errors: ErrInvalidGraph, ErrNotSupported (the message names the
// ops, cuDNN version, GPU architecture and cuDNN's reason, or which filter
// removed which engine configurations), ErrCUDNNUnavailable, ErrCUDAError,
// ErrCUDNNError, ErrWrongState (already built), ErrInvalidArgument (bad
// options).
func (g *Graph) Build(h *Handle, opts *BuildOptions) error {
	const op = "Graph.Build"
	a, unlock, err := g.lockForBuild(op, h, opts)
	if err != nil {
		return err
	}
	defer unlock()
	if err := g.call(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphBuild(p, a.h, a.c, a.engines, a.dir, a.kc, a.dp)
	}); err != nil {
		return err
	}
	plan, err := g.describePlan(op)
	if err != nil {
		return err
	}
	g.plan = plan
	return nil
}

// ValidateForBuild validates the graph as Build(h, opts) would before
// building, without building it: shapes and types for every target; for a
// GPU target (TargetGPU, TargetAuto with a usable GPU, or
// DeviceProperties) also the support rules of cudnn-frontend and cuDNN for
// that GPU's architecture, or opts.SmVersion when set, which fail with
// ErrNotSupported (docs/refusals.md). The CPU reference checks shapes and
// types only. h and opts may be nil. With TargetGPU and SmVersion the GPU
// rules apply without a GPU:
//
//	err := g.ValidateForBuild(nil, &cudnnfe.BuildOptions{Target: cudnnfe.TargetGPU, SmVersion: 90})
//	if errors.Is(err, cudnnfe.ErrNotSupported) { /* build for the CPU reference instead */ }
//
// Errors: ErrInvalidGraph, ErrNotSupported, ErrInvalidArgument (bad
// options), ErrWrongState (already built). Since 0.4.
func (g *Graph) ValidateForBuild(h *Handle, opts *BuildOptions) error {
	const op = "Graph.ValidateForBuild"
	a, unlock, err := g.lockForBuild(op, h, opts)
	if err != nil {
		return err
	}
	defer unlock()
	return g.call(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphValidateForBuild(p, a.h, a.c, a.engines, a.dir, a.kc, a.dp)
	})
}

// buildArgs are the C arguments of a build: the handle, the options and
// their pointer fields.
type buildArgs struct {
	h       capi.Struct_SS_cudnnfe_handle
	c       *capi.BuildOptions
	engines []int64
	dir     *string
	kc      capi.Struct_SS_cudnnfe_kernel_cache
	dp      capi.Struct_SS_cudnnfe_device_properties
}

// lockForBuild checks opts and takes the locks a build holds, in the order
// used everywhere: the handle, the graph, then the kernel cache and the
// device properties (read-locked), so that Close of any of them waits for
// the call. unlock releases them.
func (g *Graph) lockForBuild(op string, h *Handle, opts *BuildOptions) (a buildArgs, unlock func(), err error) {
	if err := opts.check(op); err != nil {
		return a, nil, err
	}
	a.c, a.engines, a.dir = opts.toC()
	var unlocks []func()
	unlock = func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
	fail := func(msg string) (buildArgs, func(), error) {
		unlock()
		return buildArgs{}, nil, argError(op, msg)
	}
	if h != nil {
		h.mu.Lock()
		unlocks = append(unlocks, h.mu.Unlock)
		if h.p == nil {
			return fail("handle is closed")
		}
		a.h = h.p
	}
	g.mu.Lock()
	unlocks = append(unlocks, g.mu.Unlock)
	if opts != nil && opts.KernelCache != nil {
		opts.KernelCache.mu.Lock()
		unlocks = append(unlocks, opts.KernelCache.mu.Unlock)
		if opts.KernelCache.p == nil {
			return fail("build options: KernelCache is closed")
		}
		a.kc = opts.KernelCache.p
	}
	if opts != nil && opts.DeviceProperties != nil {
		opts.DeviceProperties.mu.RLock()
		unlocks = append(unlocks, opts.DeviceProperties.mu.RUnlock)
		if opts.DeviceProperties.p == nil {
			return fail("build options: DeviceProperties are closed")
		}
		a.dp = opts.DeviceProperties.p
	}
	return a, unlock, nil
}

// describePlan reads what the built graph's queries return; g.mu is held.
func (g *Graph) describePlan(op string) (*planInfo, error) {
	pi := &planInfo{index: map[Tensor]int{}}
	var target int32
	var n, workspace int64
	var planName string
	// Out-parameters are locals: cgo refuses a pointer into an object that
	// holds Go pointers (such as planInfo).
	err := g.call(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		if st := capi.Cudnnfe_graph_get_target(p, &target); st != 0 {
			return st
		}
		if st := capi.Cudnnfe_graph_get_workspace_size(p, &workspace); st != 0 {
			return st
		}
		if st := capi.Cudnnfe_graph_get_plan_name(p, &planName); st != 0 {
			return st
		}
		return capi.Cudnnfe_graph_get_bound_uids(p, nil, &n)
	})
	if err != nil {
		return nil, err
	}
	pi.target = Target(target)
	pi.workspace = workspace
	pi.name = planName
	uids := make([]int64, n)
	if n > 0 {
		if err := g.call(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
			return capi.Cudnnfe_graph_get_bound_uids(p, uids, &n)
		}); err != nil {
			return nil, err
		}
	}
	for i, u := range uids[:n] {
		t := Tensor(u)
		dims, strides, err := g.shapeLocked(op, t)
		if err != nil {
			return nil, err
		}
		var d, kind int32
		var name string
		if err := g.call(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
			if st := capi.Cudnnfe_tensor_get_dtype(p, u, &d); st != 0 {
				return st
			}
			if st := capi.Cudnnfe_tensor_get_kind(p, u, &kind); st != 0 {
				return st
			}
			return capi.Cudnnfe_tensor_get_name(p, u, &name)
		}); err != nil {
			return nil, err
		}
		pi.bound = append(pi.bound, boundTensor{uid: t, name: name, dtype: DType(d),
			output: TensorKind(kind) == TensorKindOutput,
			bytes:  extent(dims, strides) * int64(DType(d).Size())})
		pi.index[t] = i
	}
	return pi, nil
}

// extent is the number of elements from the first to the last one a tensor
// with these dims and strides touches, inclusive.
func extent(dims, strides []int64) int64 {
	n := int64(1)
	for i, d := range dims {
		s := strides[i]
		if s < 0 {
			s = -s
		}
		n += (d - 1) * s
	}
	return n
}

// built returns the plan of a built graph, or an error: the library's
// WRONG_STATE message when not built (g.mu held in either mode).
func (g *Graph) built(op string) (*planInfo, error) {
	if g.p == nil {
		return nil, argError(op, errClosedGraph)
	}
	if g.plan == nil {
		return nil, newError(op, StatusWrongState, "graph is not built yet (call Build first)")
	}
	return g.plan, nil
}

// builtQuery returns the cached plan, or the library's own error for an
// unbuilt graph (asking it with probe).
func (g *Graph) builtQuery(op string, probe func(p capi.Struct_SS_cudnnfe_graph) int32) (*planInfo, error) {
	g.mu.RLock()
	pi := g.plan
	closed := g.p == nil
	g.mu.RUnlock()
	if pi != nil {
		return pi, nil
	}
	if closed {
		return nil, argError(op, errClosedGraph)
	}
	if err := g.do(op, probe); err != nil {
		return nil, err
	}
	// Built meanwhile by another goroutine.
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.built(op)
}

// IsBuilt reports whether Build has succeeded.
func (g *Graph) IsBuilt() (bool, error) {
	var b int32
	err := g.do("Graph.IsBuilt", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_is_built(p, &b)
	})
	return b != 0, err
}

// Target returns where the built graph runs (TargetGPU or
// TargetCPUReference); ErrWrongState before Build.
func (g *Graph) Target() (Target, error) {
	pi, err := g.builtQuery("Graph.Target", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		var t int32
		return capi.Cudnnfe_graph_get_target(p, &t)
	})
	if err != nil {
		return 0, err
	}
	return pi.target, nil
}

// WorkspaceSize returns the device workspace, in bytes, Execute needs: the
// selected plan's (0 for the CPU reference); ErrWrongState before Build.
func (g *Graph) WorkspaceSize() (int64, error) {
	pi, err := g.builtQuery("Graph.WorkspaceSize", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		var n int64
		return capi.Cudnnfe_graph_get_workspace_size(p, &n)
	})
	if err != nil {
		return 0, err
	}
	return pi.workspace, nil
}

// PlanName returns the name of the engine configuration the selected plan
// uses ("eng9_k2=3"), "cpu_reference" for the CPU target; ErrWrongState
// before Build.
func (g *Graph) PlanName() (string, error) {
	pi, err := g.builtQuery("Graph.PlanName", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		var s string
		return capi.Cudnnfe_graph_get_plan_name(p, &s)
	})
	if err != nil {
		return "", err
	}
	return pi.name, nil
}

// BoundTensors returns the tensors that need a buffer at execute, in the
// order ExecuteOrdered takes their pointers; ErrWrongState before Build.
func (g *Graph) BoundTensors() ([]Tensor, error) {
	pi, err := g.builtQuery("Graph.BoundTensors", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		var n int64
		return capi.Cudnnfe_graph_get_bound_uids(p, nil, &n)
	})
	if err != nil {
		return nil, err
	}
	ts := make([]Tensor, len(pi.bound))
	for i, b := range pi.bound {
		ts[i] = b.uid
	}
	return ts, nil
}

// BufferSize returns the size in bytes of the buffer a bound tensor of the
// built graph needs (its dims, strides and data type); ErrWrongState before
// Build, ErrInvalidArgument for a tensor that is not bound.
func (g *Graph) BufferSize(t Tensor) (int64, error) {
	const op = "Graph.BufferSize"
	pi, err := g.builtQuery(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		var n int64
		return capi.Cudnnfe_graph_get_bound_uids(p, nil, &n)
	})
	if err != nil {
		return 0, err
	}
	i, ok := pi.index[t]
	if !ok {
		return 0, argError(op, "tensor UID "+strconv.FormatInt(int64(t), 10)+
			" is not bound (not a graph input or output of this graph)")
	}
	return pi.bound[i].bytes, nil
}
