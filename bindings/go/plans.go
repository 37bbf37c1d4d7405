package cudnnfe

import (
	"strconv"
	"strings"
	"unsafe"

	"github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"
)

// Plan control (docs/plans.md): the plans of a built graph, their selection
// and autotuning, how the graph was built, plan blobs, the plan cache, and
// CUDA graphs.

// BuildPolicy says how many engine configurations a GPU build turns into
// plans (cudnnfe_build_policy_t).
type BuildPolicy int32

// Build policies (CUDNNFE_BUILD_POLICY_*).
const (
	// BuildPolicyHeuristicsChoice: the first configuration, in heuristics
	// order, that passes the filters and builds (one plan; the default).
	BuildPolicyHeuristicsChoice BuildPolicy = BuildPolicy(capi.CUDNNFE_BUILD_POLICY_HEURISTICS_CHOICE)
	// BuildPolicyAll: every configuration that passes the filters and
	// builds, in heuristics order (plan 0 is the heuristics' choice).
	BuildPolicyAll BuildPolicy = BuildPolicy(capi.CUDNNFE_BUILD_POLICY_ALL)
)

func (p BuildPolicy) String() string {
	switch p {
	case BuildPolicyHeuristicsChoice:
		return "HEURISTICS_CHOICE"
	case BuildPolicyAll:
		return "ALL"
	}
	return "BuildPolicy(" + strconv.Itoa(int(p)) + ")"
}

// VerifyMode says whether a build's plans check their first execute against
// the CPU reference (cudnnfe_verify_mode_t, docs/verify.md; since 0.4).
type VerifyMode int32

// Verify modes (CUDNNFE_VERIFY_*).
const (
	// VerifyFromEnv (the zero value): on when the environment variable
	// CUDNNFE_VERIFY is 1 at build.
	VerifyFromEnv VerifyMode = VerifyMode(capi.CUDNNFE_VERIFY_FROM_ENV)
	// VerifyOn: on, whatever the environment says.
	VerifyOn VerifyMode = VerifyMode(capi.CUDNNFE_VERIFY_ON)
	// VerifyOff: off, whatever the environment says.
	VerifyOff VerifyMode = VerifyMode(capi.CUDNNFE_VERIFY_OFF)
)

// NumericalNotes are an engine's numerical notes as bit flags
// (CUDNNFE_NUMERICAL_NOTE_*); combine them with |.
type NumericalNotes uint32

// Numerical notes. On FLOAT data cuDNN reports TF32 math as TENSOR_CORE:
// exclude it to keep full FP32 math.
const (
	NumericalNoteTensorCore                NumericalNotes = NumericalNotes(capi.CUDNNFE_NUMERICAL_NOTE_TENSOR_CORE)
	NumericalNoteDownConvertInputs         NumericalNotes = NumericalNotes(capi.CUDNNFE_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS)
	NumericalNoteReducedPrecisionReduction NumericalNotes = NumericalNotes(capi.CUDNNFE_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION)
	NumericalNoteFFT                       NumericalNotes = NumericalNotes(capi.CUDNNFE_NUMERICAL_NOTE_FFT)
	NumericalNoteNondeterministic          NumericalNotes = NumericalNotes(capi.CUDNNFE_NUMERICAL_NOTE_NONDETERMINISTIC)
	NumericalNoteWinograd                  NumericalNotes = NumericalNotes(capi.CUDNNFE_NUMERICAL_NOTE_WINOGRAD) // any tile size
	NumericalNoteStrictNaNProp             NumericalNotes = NumericalNotes(capi.CUDNNFE_NUMERICAL_NOTE_STRICT_NAN_PROP)
	NumericalNotesAll                      NumericalNotes = NumericalNotes(capi.CUDNNFE_NUMERICAL_NOTE_ALL) // every note this library knows
)

var numericalNoteNames = []struct {
	bit  uint32
	name string
}{
	{uint32(NumericalNoteTensorCore), "TENSOR_CORE"},
	{uint32(NumericalNoteDownConvertInputs), "DOWN_CONVERT_INPUTS"},
	{uint32(NumericalNoteReducedPrecisionReduction), "REDUCED_PRECISION_REDUCTION"},
	{uint32(NumericalNoteFFT), "FFT"},
	{uint32(NumericalNoteNondeterministic), "NONDETERMINISTIC"},
	{uint32(NumericalNoteWinograd), "WINOGRAD"},
	{uint32(NumericalNoteStrictNaNProp), "STRICT_NAN_PROP"},
}

// BehaviorNotes are an engine's behaviour notes as bit flags
// (CUDNNFE_BEHAVIOR_NOTE_*); combine them with |.
type BehaviorNotes uint32

// Behaviour notes.
const (
	BehaviorNoteRuntimeCompilation           BehaviorNotes = BehaviorNotes(capi.CUDNNFE_BEHAVIOR_NOTE_RUNTIME_COMPILATION) // compiles a kernel at build (NVRTC)
	BehaviorNoteRequiresFilterInt8x32Reorder BehaviorNotes = BehaviorNotes(capi.CUDNNFE_BEHAVIOR_NOTE_REQUIRES_FILTER_INT8X32_REORDER)
	BehaviorNoteRequiresBiasInt8x32Reorder   BehaviorNotes = BehaviorNotes(capi.CUDNNFE_BEHAVIOR_NOTE_REQUIRES_BIAS_INT8X32_REORDER)
	BehaviorNoteSupportsCUDAGraphNativeAPI   BehaviorNotes = BehaviorNotes(capi.CUDNNFE_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API) // PopulateCUDAGraph works
	BehaviorNoteCublasLtDependency           BehaviorNotes = BehaviorNotes(capi.CUDNNFE_BEHAVIOR_NOTE_CUBLASLT_DEPENDENCY)
	BehaviorNotesAll                         BehaviorNotes = BehaviorNotes(capi.CUDNNFE_BEHAVIOR_NOTE_ALL) // every note this library knows
)

var behaviorNoteNames = []struct {
	bit  uint32
	name string
}{
	{uint32(BehaviorNoteRuntimeCompilation), "RUNTIME_COMPILATION"},
	{uint32(BehaviorNoteRequiresFilterInt8x32Reorder), "REQUIRES_FILTER_INT8X32_REORDER"},
	{uint32(BehaviorNoteRequiresBiasInt8x32Reorder), "REQUIRES_BIAS_INT8X32_REORDER"},
	{uint32(BehaviorNoteSupportsCUDAGraphNativeAPI), "SUPPORTS_CUDA_GRAPH_NATIVE_API"},
	{uint32(BehaviorNoteCublasLtDependency), "CUBLASLT_DEPENDENCY"},
}

func noteString(bits uint32, names []struct {
	bit  uint32
	name string
}) string {
	if bits == 0 {
		return "0"
	}
	var parts []string
	for _, n := range names {
		if bits&n.bit != 0 {
			parts = append(parts, n.name)
			bits &^= n.bit
		}
	}
	if bits != 0 {
		parts = append(parts, "0x"+strconv.FormatUint(uint64(bits), 16))
	}
	return strings.Join(parts, "|")
}

// String returns the notes' C names joined by "|" ("TENSOR_CORE|FFT"); "0"
// for none.
func (n NumericalNotes) String() string { return noteString(uint32(n), numericalNoteNames) }

// String returns the notes' C names joined by "|"; "0" for none.
func (n BehaviorNotes) String() string { return noteString(uint32(n), behaviorNoteNames) }

// PlanSource says where a built graph's plan came from (cudnnfe_plan_source_t).
type PlanSource int32

// Plan sources (CUDNNFE_PLAN_SOURCE_*).
const (
	PlanSourceBuilt       PlanSource = PlanSource(capi.CUDNNFE_PLAN_SOURCE_BUILT)        // heuristics and plan build; the CPU reference
	PlanSourceMemoryCache PlanSource = PlanSource(capi.CUDNNFE_PLAN_SOURCE_MEMORY_CACHE) // this process's plan cache
	PlanSourceDiskCache   PlanSource = PlanSource(capi.CUDNNFE_PLAN_SOURCE_DISK_CACHE)   // the plan cache directory
	PlanSourceSerialized  PlanSource = PlanSource(capi.CUDNNFE_PLAN_SOURCE_SERIALIZED)   // a plan blob's engine configuration
	PlanSourceRebuilt     PlanSource = PlanSource(capi.CUDNNFE_PLAN_SOURCE_REBUILT)      // a plan blob rebuilt from its graph
)

func (s PlanSource) String() string {
	switch s {
	case PlanSourceBuilt:
		return "BUILT"
	case PlanSourceMemoryCache:
		return "MEMORY_CACHE"
	case PlanSourceDiskCache:
		return "DISK_CACHE"
	case PlanSourceSerialized:
		return "SERIALIZED"
	case PlanSourceRebuilt:
		return "REBUILT"
	}
	return "PlanSource(" + strconv.Itoa(int(s)) + ")"
}

// PlanInfo describes one plan of a built graph (cudnnfe_plan_info_t).
type PlanInfo struct {
	Index int
	// Name: engine and knob choices ("eng9_k2=3_k13=1"); "cpu_reference".
	Name string
	// EngineID is cuDNN's global engine index (the N of "engN"); -1 for the
	// CPU reference.
	EngineID       int64
	WorkspaceSize  int64 // bytes
	NumericalNotes NumericalNotes
	BehaviorNotes  BehaviorNotes
	// AutotuneTimeMs is the median time of one execute measured by the last
	// Autotune, in milliseconds; -1 when not timed.
	AutotuneTimeMs   float64
	Selected         bool // the plan Execute runs
	ChosenByAutotune bool // kept in plan blobs and caches
}

// BuildInfo says how a graph was built (cudnnfe_build_info_t): where its
// plan came from and the host wall-clock time of each stage in
// milliseconds (0 for a stage that did not run).
type BuildInfo struct {
	Source       PlanSource
	TotalMs      float64 // the whole build (or plan load) call
	ValidateMs   float64 // validation and type resolution
	CacheMs      float64 // fingerprint and plan cache lookups
	LowerMs      float64 // lowering and finalizing the operation graph
	HeuristicsMs float64 // heuristics queries, engine notes and filters
	PlanBuildMs  float64 // support check and plan finalization
}

// PlanCacheStats are the counters of this process's plan caches
// (cudnnfe_plan_cache_stats_t).
type PlanCacheStats struct {
	Entries    int64 // plan sets held in memory
	Hits       int64 // builds served from memory
	Misses     int64 // cache-enabled GPU builds not served from memory
	DiskHits   int64 // builds served from the cache directory
	DiskWrites int64 // plan files written to the cache directory
	DiskErrors int64 // unreadable, stale or unwritable cache files (ignored)
}

// GetPlanCacheStats reads the counters of this process's plan caches. Only
// GPU builds use the caches.
func GetPlanCacheStats() (PlanCacheStats, error) {
	var c capi.PlanCacheStats
	err := objectless("GetPlanCacheStats", func() int32 { return capi.PlanCacheGetStats(&c) })
	return PlanCacheStats(c), err
}

// ClearPlanCache empties this process's plan cache and zeroes its counters.
// Graphs built from it keep their plans; the cache directory is not touched.
func ClearPlanCache() error {
	return objectless("ClearPlanCache", func() int32 { return capi.Cudnnfe_plan_cache_clear() })
}

// AutotuneOptions says how Autotune times each plan
// (cudnnfe_autotune_options_t). Zero fields keep the C defaults
// (DefaultAutotuneOptions).
type AutotuneOptions struct {
	WarmupIterations int     // untimed executes per plan (default 2)
	MinIterations    int     // at least this many timed samples per plan (default 5)
	MaxIterations    int     // at most this many (default 50)
	Tolerance        float64 // stop once the median moved by less than this fraction (default 0.01)
	MaxMsPerPlan     float64 // stop after this much measured GPU time per plan (default 200)
}

// DefaultAutotuneOptions returns the defaults of cudnnfe_autotune_options_init.
func DefaultAutotuneOptions() AutotuneOptions {
	var c capi.AutotuneOptions
	capi.AutotuneOptionsInit(&c)
	return AutotuneOptions{WarmupIterations: int(c.WarmupIterations), MinIterations: int(c.MinIterations),
		MaxIterations: int(c.MaxIterations), Tolerance: c.Tolerance, MaxMsPerPlan: c.MaxMsPerPlan}
}

func (o *AutotuneOptions) toC(op string) (*capi.AutotuneOptions, error) {
	if o == nil {
		return nil, nil
	}
	var c capi.AutotuneOptions
	capi.AutotuneOptionsInit(&c)
	for _, f := range []struct {
		v   int
		dst *int32
		n   string
	}{{o.WarmupIterations, &c.WarmupIterations, "WarmupIterations"},
		{o.MinIterations, &c.MinIterations, "MinIterations"},
		{o.MaxIterations, &c.MaxIterations, "MaxIterations"}} {
		if f.v == 0 {
			continue
		}
		if int64(f.v) != int64(int32(f.v)) {
			return nil, argError(op, "autotune options: "+f.n+" "+strconv.Itoa(f.v)+" is out of range")
		}
		*f.dst = int32(f.v)
	}
	if o.Tolerance != 0 {
		c.Tolerance = o.Tolerance
	}
	if o.MaxMsPerPlan != 0 {
		c.MaxMsPerPlan = o.MaxMsPerPlan
	}
	return &c, nil
}

// PlanLoadOptions says how LoadPlan loads a plan blob
// (cudnnfe_plan_load_options_t); nil means the defaults.
type PlanLoadOptions struct {
	// RebuildOnMismatch: when the plan was made for another GPU
	// architecture or cuDNN version (or this machine has neither), or its
	// engine configuration no longer builds, build the graph again from its
	// description with the stored build options (PlanSourceRebuilt) instead
	// of failing.
	RebuildOnMismatch bool
}

// PlanCount returns the number of plans of the built graph: 1 for a
// BuildPolicyHeuristicsChoice build and for the CPU reference; with
// BuildPolicyAll, every configuration that passed the filters and built.
// ErrWrongState before Build.
func (g *Graph) PlanCount() (int, error) {
	var n int64
	err := g.do("Graph.PlanCount", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_get_plan_count(p, &n)
	})
	return int(n), err
}

// PlanInfo describes plan index of the built graph; ErrInvalidArgument
// (naming the plan count) when out of range, ErrWrongState before Build.
func (g *Graph) PlanInfo(index int) (PlanInfo, error) {
	var c capi.PlanInfo
	err := g.do("Graph.PlanInfo", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphGetPlanInfo(p, int64(index), &c)
	})
	if err != nil {
		return PlanInfo{}, err
	}
	return PlanInfo{Index: index, Name: c.Name, EngineID: c.EngineID, WorkspaceSize: c.WorkspaceSize,
		NumericalNotes: NumericalNotes(c.NumericalNotes), BehaviorNotes: BehaviorNotes(c.BehaviorNotes),
		AutotuneTimeMs: c.AutotuneTimeMs, Selected: c.Selected != 0,
		ChosenByAutotune: c.ChosenByAutotune != 0}, nil
}

// Plans describes every plan of the built graph.
func (g *Graph) Plans() ([]PlanInfo, error) {
	n, err := g.PlanCount()
	if err != nil {
		return nil, err
	}
	out := make([]PlanInfo, 0, n)
	for i := 0; i < n; i++ {
		pi, err := g.PlanInfo(i)
		if err != nil {
			return nil, err
		}
		out = append(out, pi)
	}
	return out, nil
}

// SelectedPlan returns the index of the plan Execute runs.
func (g *Graph) SelectedPlan() (int, error) {
	var i int64
	err := g.do("Graph.SelectedPlan", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_get_selected_plan(p, &i)
	})
	return int(i), err
}

// SelectPlan makes plan index the one Execute runs and SerializePlan
// writes; WorkspaceSize and PlanName follow it. It takes the graph's write
// lock, so it waits for executes in flight and they never see a half-made
// change; executes that start later run the new plan (give them a
// workspace that fits it).
func (g *Graph) SelectPlan(index int) error {
	const op = "Graph.SelectPlan"
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_select_plan(p, int64(index))
	}); err != nil {
		return err
	}
	return g.refreshPlan(op)
}

// refreshPlan reads the selected plan's workspace size and name again into
// a new planInfo (readers may hold the old one); g.mu is held exclusively.
func (g *Graph) refreshPlan(op string) error {
	if g.plan == nil {
		return nil
	}
	var workspace int64
	var name string
	if err := g.call(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		if st := capi.Cudnnfe_graph_get_workspace_size(p, &workspace); st != 0 {
			return st
		}
		return capi.Cudnnfe_graph_get_plan_name(p, &name)
	}); err != nil {
		return err
	}
	pi := *g.plan
	pi.workspace = workspace
	pi.name = name
	g.plan = &pi
	return nil
}

// Autotune times every plan of the built GPU graph with the library's own
// scratch buffers and workspace on the default stream, selects the fastest,
// and returns its index (opts nil: defaults). Build with BuildPolicyAll to
// have a choice. The timings are recorded in the plan infos, the plan blob
// and the plan caches. Like SelectPlan it takes the graph's write lock.
// ErrNotSupported for a CPU reference graph or when no plan could be timed
// (the message says why for each).
func (g *Graph) Autotune(h *Handle, opts *AutotuneOptions) (int, error) {
	return g.AutotuneWith(h, nil, 0, 0, 0, opts)
}

// AutotuneWith is Autotune on your device buffers: one binding per bound
// tensor (outputs are overwritten; nil: the library's scratch buffers), a
// workspace (plans needing more than workspaceSize are not timed; 0 and 0:
// the library allocates the largest plan's), and stream (0: the default
// stream), which the call synchronizes.
func (g *Graph) AutotuneWith(h *Handle, bindings []Binding, workspace uintptr, workspaceSize int64, stream uintptr, opts *AutotuneOptions) (int, error) {
	const op = "Graph.Autotune"
	if workspaceSize < 0 {
		return 0, argError(op, "workspaceSize is negative")
	}
	c, err := opts.toC(op)
	if err != nil {
		return 0, err
	}
	if h == nil {
		return 0, argError(op, "handle is nil (create one with NewHandle)")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.p == nil {
		return 0, argError(op, "handle is closed")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	cb := *(*[]capi.Binding)(unsafe.Pointer(&bindings))
	if err := g.call(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphAutotune(p, h.p, cb, workspace, workspaceSize, stream, c)
	}); err != nil {
		return 0, err
	}
	if err := g.refreshPlan(op); err != nil {
		return 0, err
	}
	var i int64
	err = g.call(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_get_selected_plan(p, &i)
	})
	return int(i), err
}

// BuildInfo says where the built graph's plan came from and how long each
// build stage took; ErrWrongState before Build.
func (g *Graph) BuildInfo() (BuildInfo, error) {
	var c capi.BuildInfo
	err := g.do("Graph.BuildInfo", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphGetBuildInfo(p, &c)
	})
	return BuildInfo{Source: PlanSource(c.Source), TotalMs: c.TotalMs, ValidateMs: c.ValidateMs,
		CacheMs: c.CacheMs, LowerMs: c.LowerMs, HeuristicsMs: c.HeuristicsMs,
		PlanBuildMs: c.PlanBuildMs}, err
}

// Fingerprint returns the graph's structural fingerprint, 32 lowercase hex
// digits: a hash of its description without graph, node and tensor names.
// Graphs with equal fingerprints share plans. Types left unset are hashed as
// such: fingerprint a validated or built graph to get the plan cache's key.
func (g *Graph) Fingerprint() (string, error) {
	buf := make([]byte, capi.CUDNNFE_FINGERPRINT_SIZE)
	err := g.do("Graph.Fingerprint", func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_get_fingerprint(p, buf)
	})
	if err != nil {
		return "", err
	}
	if i := strings.IndexByte(string(buf), 0); i >= 0 {
		buf = buf[:i]
	}
	return string(buf), nil
}

// SerializePlan returns the built graph's selected plan as a plan blob: a
// header line, then JSON holding the graph description, the build options,
// the engine configuration, the GPU architecture and cuDNN version it was
// built for, and the autotune record. LoadPlan builds it without heuristics
// or plan search. Serialize, by contrast, writes only the graph description,
// which rebuilds anywhere. ErrWrongState before Build.
func (g *Graph) SerializePlan() ([]byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	const op = "Graph.SerializePlan"
	var n int64
	if err := g.call(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_serialize_plan(p, nil, &n)
	}); err != nil {
		return nil, err
	}
	buf := make([]byte, n)
	if err := g.call(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.Cudnnfe_graph_serialize_plan(p, buf, &n)
	}); err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// LoadPlan creates a built graph from a plan blob (SerializePlan's output).
// h may be nil (the library's own handle builds the plan); opts nil means
// the defaults.
func LoadPlan(h *Handle, data []byte, opts *PlanLoadOptions) (*Graph, error) {
	g, err := NewGraph()
	if err != nil {
		return nil, err
	}
	if err := g.DeserializePlan(h, data, opts); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// DeserializePlan loads a plan blob into g, which must be empty (just
// created), and builds the stored engine configuration: no heuristics, no
// plan search (PlanSourceSerialized). Errors: ErrBadSerializedData for
// truncated, corrupt or hostile bytes, and for a plan made for another GPU
// architecture or cuDNN version (the message names both) unless
// opts.RebuildOnMismatch; ErrNotSupported when the engine configuration no
// longer builds. On failure g stays empty.
func (g *Graph) DeserializePlan(h *Handle, data []byte, opts *PlanLoadOptions) error {
	const op = "Graph.DeserializePlan"
	var c capi.PlanLoadOptions
	capi.PlanLoadOptionsInit(&c)
	if opts != nil && opts.RebuildOnMismatch {
		c.RebuildOnMismatch = 1
	}
	var hp capi.Struct_SS_cudnnfe_handle
	if h != nil {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.p == nil {
			return argError(op, "handle is closed")
		}
		hp = h.p
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call(op, func(p capi.Struct_SS_cudnnfe_graph) int32 {
		return capi.GraphDeserializePlan(p, hp, data, &c)
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

// PopulateCUDAGraph adds the selected plan's work on these buffers (as for
// Execute) to cudaGraph, a cudaGraph_t the caller created empty
// (cudaGraphCreate) and owns; instantiate and launch it with the CUDA
// runtime. It needs a plan with BehaviorNoteSupportsCUDAGraphNativeAPI (ask
// for one with BuildOptions.RequireBehaviorNotes) and cuDNN 9.5 or later:
// ErrNotSupported otherwise and for the CPU reference (stream capture of
// Execute works for every GPU plan). Errors are read from h.
func (g *Graph) PopulateCUDAGraph(h *Handle, bindings []Binding, workspace uintptr, workspaceSize int64, cudaGraph uintptr) error {
	return g.cudaGraphCall("Graph.PopulateCUDAGraph", false, h, bindings, workspace, workspaceSize, cudaGraph)
}

// UpdateCUDAGraph points the nodes PopulateCUDAGraph added to cudaGraph
// (same graph and plan) at new buffers; then update the instantiated graph
// (cudaGraphExecUpdate) or instantiate it again.
func (g *Graph) UpdateCUDAGraph(h *Handle, bindings []Binding, workspace uintptr, workspaceSize int64, cudaGraph uintptr) error {
	return g.cudaGraphCall("Graph.UpdateCUDAGraph", true, h, bindings, workspace, workspaceSize, cudaGraph)
}

func (g *Graph) cudaGraphCall(op string, update bool, h *Handle, bindings []Binding, workspace uintptr, workspaceSize int64, cudaGraph uintptr) error {
	if workspaceSize < 0 {
		return argError(op, "workspaceSize is negative")
	}
	if err := lockExec(op, g, h); err != nil {
		return err
	}
	defer unlockExec(g, h)
	cb := *(*[]capi.Binding)(unsafe.Pointer(&bindings))
	var st int32
	if update {
		st = capi.Cudnnfe_graph_update_cuda_graph(g.p, h.p, cb, workspace, workspaceSize, cudaGraph)
	} else {
		st = capi.Cudnnfe_graph_populate_cuda_graph(g.p, h.p, cb, workspace, workspaceSize, cudaGraph)
	}
	if st != 0 {
		return newError(op, Status(st), h.lastError())
	}
	return nil
}
