package cudnnfe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/cudnnfe/cudnnfe/bindings/go/internal/cmem"
)

// Plan control on the CPU reference (one plan, "cpu_reference"): plan
// queries and selection, build information, fingerprints, plan blobs,
// build options read back from the blob, GPU-only calls refused with the
// library's message, the plan cache counters. GPU behaviour: TestGPUPlans.

func fnv1a64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

func splitBlob(t testing.TB, blob []byte) (header []string, payload []byte) {
	t.Helper()
	i := bytes.IndexByte(blob, '\n')
	if i < 0 {
		t.Fatalf("plan blob has no header line: %q", blob)
	}
	return strings.Split(string(blob[:i]), " "), blob[i+1:]
}

func wrapPayload(payload []byte) []byte {
	return append([]byte(fmt.Sprintf("CUDNNFE-PLAN 1 %d %016x\n", len(payload), fnv1a64(payload))), payload...)
}

func blobDoc(t testing.TB, blob []byte) map[string]any {
	t.Helper()
	_, payload := splitBlob(t, blob)
	var doc map[string]any
	must(t, json.Unmarshal(payload, &doc))
	return doc
}

func storedOptions(t testing.TB, g *Graph) map[string]any {
	t.Helper()
	return blobDoc(t, must1[[]byte](t)(g.SerializePlan()))["build_options"].(map[string]any)
}

// runMatmulBias executes a built matmulBias(t, 2, 4, 8, 3) graph on fixed data.
func runMatmulBias(t testing.TB, g *Graph, h *Handle, a, b, bias, c Tensor) (got, want []float32) {
	t.Helper()
	rng := rand.New(rand.NewSource(11))
	av, bv, biasv := randFloats(rng, 64, 1), randFloats(rng, 48, 1), randFloats(rng, 12, 1)
	want = refMatmul(av, bv, 2, 2, 4, 8, 3)
	for i := range want {
		want[i] += biasv[i%12]
	}
	got = make([]float32, 24)
	must(t, g.ExecuteHost(h, Host(a, av), Host(b, bv), Host(bias, biasv), Host(c, got)))
	return got, want
}

func TestPlanQueriesCPU(t *testing.T) {
	g, a, b, bias, c := matmulBias(t, 2, 4, 8, 3)
	h := newHandle(t)
	_, err := g.PlanCount()
	wantErr(t, err, ErrWrongState)
	_, err = g.PlanInfo(0)
	wantErr(t, err, ErrWrongState)
	_, err = g.SerializePlan()
	wantErr(t, err, ErrWrongState)
	_, err = g.BuildInfo()
	wantErr(t, err, ErrWrongState)
	wantErr(t, g.SelectPlan(0), ErrWrongState)

	must(t, g.Build(h, cpuBuild))
	if n := must1[int](t)(g.PlanCount()); n != 1 {
		t.Fatalf("PlanCount = %d", n)
	}
	want := PlanInfo{Index: 0, Name: "cpu_reference", EngineID: -1, AutotuneTimeMs: -1, Selected: true}
	if pi := must1[PlanInfo](t)(g.PlanInfo(0)); pi != want {
		t.Errorf("PlanInfo(0) = %+v, want %+v", pi, want)
	}
	if ps := must1[[]PlanInfo](t)(g.Plans()); !reflect.DeepEqual(ps, []PlanInfo{want}) {
		t.Errorf("Plans = %+v", ps)
	}
	if i := must1[int](t)(g.SelectedPlan()); i != 0 {
		t.Errorf("SelectedPlan = %d", i)
	}
	must(t, g.SelectPlan(0))
	for _, bad := range []int{1, -1, 9} {
		wantErr(t, g.SelectPlan(bad), ErrInvalidArgument,
			fmt.Sprintf("plan index %d is out of range", bad), "it has 1 plan")
		_, err := g.PlanInfo(bad)
		wantErr(t, err, ErrInvalidArgument, "out of range")
	}
	if name, _ := g.PlanName(); name != "cpu_reference" {
		t.Errorf("PlanName = %q", name)
	}
	got, wantOut := runMatmulBias(t, g, h, a, b, bias, c)
	if d := maxAbsDiff(got, wantOut); d > 1e-5 {
		t.Errorf("max |diff| %g after SelectPlan", d)
	}
}

func TestBuildInfoCPU(t *testing.T) {
	g, _, _, _, _ := matmulBias(t, 2, 4, 8, 3)
	must(t, g.Build(nil, cpuBuild))
	bi := must1[BuildInfo](t)(g.BuildInfo())
	if bi.Source != PlanSourceBuilt || bi.TotalMs < bi.ValidateMs || bi.ValidateMs < 0 {
		t.Errorf("BuildInfo = %+v", bi)
	}
	if bi.CacheMs != 0 || bi.LowerMs != 0 || bi.HeuristicsMs != 0 || bi.PlanBuildMs != 0 {
		t.Errorf("the CPU reference ran GPU stages: %+v", bi)
	}
}

func TestFingerprint(t *testing.T) {
	g1, _, _, _, _ := matmulBias(t, 2, 4, 8, 3)
	g2, _, _, _, _ := matmulBias(t, 2, 4, 8, 3)
	g3, _, _, _, _ := matmulBias(t, 2, 4, 8, 5)
	must(t, g2.SetName("another_name"))
	f1 := must1[string](t)(g1.Fingerprint())
	if len(f1) != 32 || strings.Trim(f1, "0123456789abcdef") != "" {
		t.Fatalf("fingerprint %q is not 32 lowercase hex digits", f1)
	}
	if f2 := must1[string](t)(g2.Fingerprint()); f2 != f1 {
		t.Errorf("names changed the fingerprint: %s vs %s", f1, f2)
	}
	if f3 := must1[string](t)(g3.Fingerprint()); f3 == f1 {
		t.Error("a different shape has the same fingerprint")
	}
	must(t, g1.Build(nil, cpuBuild))
	built := must1[string](t)(g1.Fingerprint())
	if doc := blobDoc(t, must1[[]byte](t)(g1.SerializePlan())); doc["fingerprint"] != built {
		t.Errorf("blob fingerprint %v, graph %s", doc["fingerprint"], built)
	}
	g1.Close()
	_, err := g1.Fingerprint()
	wantErr(t, err, ErrInvalidArgument, "closed")
}

func TestPlanBlobRoundTrip(t *testing.T) {
	g, a, b, bias, c := matmulBias(t, 2, 4, 8, 3)
	h := newHandle(t)
	must(t, g.Build(h, cpuBuild))
	blob := must1[[]byte](t)(g.SerializePlan())
	header, payload := splitBlob(t, blob)
	if len(header) != 4 || header[0] != "CUDNNFE-PLAN" || header[1] != "1" ||
		header[2] != fmt.Sprint(len(payload)) || header[3] != fmt.Sprintf("%016x", fnv1a64(payload)) {
		t.Fatalf("header %q (payload %d bytes, checksum %016x)", header, len(payload), fnv1a64(payload))
	}
	doc := blobDoc(t, blob)
	if doc["target"] != "CPU_REFERENCE" || doc["format"] != "cudnnfe.plan" {
		t.Errorf("payload target %v format %v", doc["target"], doc["format"])
	}
	if _, ok := doc["plan"]; ok {
		t.Error("a CPU blob has an engine configuration")
	}
	if desc := must1[[]byte](t)(g.Serialize()); bytes.HasPrefix(desc, []byte("CUDNNFE-PLAN")) {
		t.Error("Serialize wrote a plan blob; it writes the graph description")
	}
	want, _ := runMatmulBias(t, g, h, a, b, bias, c)

	for _, hh := range []*Handle{nil, h} {
		loaded, err := LoadPlan(hh, blob, nil)
		must(t, err)
		defer loaded.Close()
		if bi := must1[BuildInfo](t)(loaded.BuildInfo()); bi.Source != PlanSourceSerialized {
			t.Errorf("loaded source %v", bi.Source)
		}
		if tg, _ := loaded.Target(); tg != TargetCPUReference {
			t.Errorf("loaded target %v", tg)
		}
		if again := must1[[]byte](t)(loaded.SerializePlan()); !bytes.Equal(again, blob) {
			t.Error("a loaded plan serializes differently")
		}
		if f, _ := loaded.Fingerprint(); f != must1[string](t)(g.Fingerprint()) {
			t.Error("fingerprint changed through the blob")
		}
		got, _ := runMatmulBias(t, loaded, h, a, b, bias, c)
		if !reflect.DeepEqual(got, want) {
			t.Error("a loaded plan computes something else")
		}
		// The loaded graph knows its bound tensors and which one it writes.
		bound := must1[[]Tensor](t)(loaded.BoundTensors())
		if !reflect.DeepEqual(bound, must1[[]Tensor](t)(g.BoundTensors())) {
			t.Errorf("bound tensors %v", bound)
		}
	}
}

func TestDamagedPlanBlobs(t *testing.T) {
	g, _, _, _, _ := matmulBias(t, 2, 4, 8, 3)
	must(t, g.Build(nil, cpuBuild))
	blob := must1[[]byte](t)(g.SerializePlan())
	flipped := append([]byte(nil), blob...)
	flipped[len(flipped)-20] ^= 1
	desc := must1[[]byte](t)(g.Serialize())
	for name, bad := range map[string][]byte{
		"checksum": flipped, "plan blob": blob[:len(blob)/2], "": nil, "header": []byte("CUDNNFE-PLAN x"),
	} {
		fresh := newGraph(t)
		err := fresh.DeserializePlan(nil, bad, nil)
		wantErr(t, err, ErrBadSerializedData, "plan blob", name)
		if n, _ := fresh.TensorCount(); n != 0 {
			t.Errorf("%s: a failed load left %d tensors", name, n)
		}
		if built, _ := fresh.IsBuilt(); built {
			t.Errorf("%s: a failed load left the graph built", name)
		}
		must(t, fresh.DeserializePlan(nil, blob, nil)) // still usable
	}
	_, err := LoadPlan(nil, desc, nil)
	wantErr(t, err, ErrBadSerializedData, "plan blob")
	notEmpty, _, _, _, _ := matmulBias(t, 2, 4, 8, 3)
	wantErr(t, notEmpty.DeserializePlan(nil, blob, nil), ErrInvalidArgument, "not empty")
}

func TestPlanForAnotherGPU(t *testing.T) {
	g, a, b, bias, c := matmulBias(t, 2, 4, 8, 3)
	h := newHandle(t)
	must(t, g.Build(h, cpuBuild))
	want, _ := runMatmulBias(t, g, h, a, b, bias, c)
	doc := blobDoc(t, must1[[]byte](t)(g.SerializePlan()))
	doc["target"] = "GPU"
	doc["cudnn_version"] = 90100
	doc["device"] = map[string]any{"name": "Faked GPU", "sm": 75}
	doc["plan"] = map[string]any{"name": "eng0", "engine_id": 0, "knobs": []any{}, "workspace_size": 0,
		"numerical_notes": []any{}, "behavior_notes": []any{}}
	payload, err := json.Marshal(doc)
	must(t, err)
	blob := wrapPayload(payload)

	_, err = LoadPlan(h, blob, nil)
	wantErr(t, err, ErrBadSerializedData, "Faked GPU (sm_75)", "cuDNN 9.1.0", "rebuild_on_mismatch")
	_, err = LoadPlan(h, blob, &PlanLoadOptions{})
	wantErr(t, err, ErrBadSerializedData, "rebuild_on_mismatch")
	rebuilt, err := LoadPlan(h, blob, &PlanLoadOptions{RebuildOnMismatch: true})
	must(t, err)
	defer rebuilt.Close()
	if bi := must1[BuildInfo](t)(rebuilt.BuildInfo()); bi.Source != PlanSourceRebuilt {
		t.Errorf("source %v, want REBUILT", bi.Source)
	}
	if got, _ := runMatmulBias(t, rebuilt, h, a, b, bias, c); !reflect.DeepEqual(got, want) {
		t.Error("the rebuilt graph computes something else")
	}
}

func TestBuildOptionsReachTheLibrary(t *testing.T) {
	g, _, _, _, _ := matmulBias(t, 2, 4, 8, 3)
	must(t, g.Build(nil, cpuBuild))
	o := storedOptions(t, g)
	if o["policy"] != "HEURISTICS_CHOICE" || o["max_workspace_size"] != -1.0 || o["max_plans"] != 0.0 ||
		len(o["exclude_engines"].([]any)) != 0 {
		t.Errorf("defaults stored as %v", o)
	}

	g, _, _, _, _ = matmulBias(t, 2, 4, 8, 3)
	must(t, g.Build(nil, &BuildOptions{
		Target: TargetCPUReference, HeurModes: []HeurMode{HeurModeB},
		Policy: BuildPolicyAll, MaxWorkspaceSize: 1 << 20,
		ExcludeNumericalNotes: NumericalNoteTensorCore | NumericalNoteNondeterministic,
		ExcludeBehaviorNotes:  BehaviorNoteRuntimeCompilation,
		RequireBehaviorNotes:  BehaviorNoteSupportsCUDAGraphNativeAPI,
		ExcludeEngines:        []int64{3, 7}, MaxPlans: 4, DisablePlanCache: true, NoPlanCacheDir: true,
	}))
	o = storedOptions(t, g)
	want := map[string]any{
		"policy": "ALL", "max_workspace_size": float64(1 << 20), "max_plans": 4.0,
		"heur_modes":              []any{"B"},
		"exclude_numerical_notes": []any{"TENSOR_CORE", "NONDETERMINISTIC"},
		"exclude_behavior_notes":  []any{"RUNTIME_COMPILATION"},
		"require_behavior_notes":  []any{"SUPPORTS_CUDA_GRAPH_NATIVE_API"},
		"exclude_engines":         []any{3.0, 7.0},
		"target":                  "CPU_REFERENCE",
	}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("stored options\n%v\nwant\n%v", o, want)
	}

	g, _, _, _, _ = matmulBias(t, 2, 4, 8, 3)
	must(t, g.Build(nil, &BuildOptions{Target: TargetCPUReference, MaxWorkspaceSize: MaxWorkspaceNone}))
	if v := storedOptions(t, g)["max_workspace_size"]; v != 0.0 {
		t.Errorf("MaxWorkspaceNone stored as %v", v)
	}
	d := DefaultBuildOptions()
	if d.Policy != BuildPolicyHeuristicsChoice || d.MaxWorkspaceSize != 0 || d.MaxPlans != 0 ||
		d.ExcludeEngines != nil || d.DisablePlanCache || d.ExcludeNumericalNotes != 0 {
		t.Errorf("DefaultBuildOptions = %+v", d)
	}
}

func TestBadBuildOptions(t *testing.T) {
	cases := []struct {
		name  string
		opts  BuildOptions
		parts []string
	}{
		{"negative MaxPlans", BuildOptions{MaxPlans: -1}, []string{"MaxPlans -1"}},
		{"NUL in dir", BuildOptions{PlanCacheDir: "a\x00b"}, []string{"NUL"}},
		{"dir and no dir", BuildOptions{PlanCacheDir: "/tmp/x", NoPlanCacheDir: true}, []string{"NoPlanCacheDir"}},
		{"bad workspace", BuildOptions{MaxWorkspaceSize: -5}, []string{"max_workspace_size is -5"}},
		{"bad policy", BuildOptions{Policy: 7}, []string{"policy"}},
		{"both excluded and required", BuildOptions{ExcludeBehaviorNotes: BehaviorNoteRuntimeCompilation,
			RequireBehaviorNotes: BehaviorNoteRuntimeCompilation}, []string{"both excluded and required"}},
		{"too many engines", BuildOptions{ExcludeEngines: make([]int64, 300)}, []string{"exclude_engines"}},
		{"negative engine", BuildOptions{ExcludeEngines: []int64{-3}}, []string{"exclude_engines"}},
		{"unknown note", BuildOptions{ExcludeNumericalNotes: 1 << 20}, []string{"exclude_numerical_notes"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, _, _, _, _ := matmulBias(t, 2, 4, 8, 3)
			o := tc.opts
			o.Target = TargetCPUReference
			wantErr(t, g.Build(nil, &o), ErrInvalidArgument, tc.parts...)
			if built, _ := g.IsBuilt(); built {
				t.Fatal("built with bad options")
			}
			must(t, g.Build(nil, cpuBuild))
		})
	}
}

func TestGPUOnlyCallsOnCPU(t *testing.T) {
	g, a, b, bias, c := matmulBias(t, 2, 4, 8, 3)
	h := newHandle(t)
	_, err := g.Autotune(h, nil)
	wantErr(t, err, ErrWrongState)
	must(t, g.Build(h, cpuBuild))
	_, err = g.Autotune(h, nil)
	wantErr(t, err, ErrNotSupported, `graph "matmul_bias" was built for the CPU reference; autotune needs a GPU plan`)
	// The options reach the library, which checks them first.
	_, err = g.Autotune(h, &AutotuneOptions{MinIterations: 10, MaxIterations: 5})
	wantErr(t, err, ErrInvalidArgument, "min_iterations 10 and max_iterations 5")
	_, err = g.Autotune(h, &AutotuneOptions{Tolerance: 2})
	wantErr(t, err, ErrInvalidArgument, "tolerance")
	_, err = g.Autotune(h, &AutotuneOptions{WarmupIterations: 1 << 40})
	wantErr(t, err, ErrInvalidArgument, "WarmupIterations")
	_, err = g.Autotune(nil, nil)
	wantErr(t, err, ErrInvalidArgument, "handle is nil")
	if i, _ := g.SelectedPlan(); i != 0 {
		t.Errorf("SelectedPlan = %d after failed autotunes", i)
	}

	rng := rand.New(rand.NewSource(3))
	ca, cb, cbias := cmem.From(randFloats(rng, 64, 1)), cmem.From(randFloats(rng, 48, 1)), cmem.From(randFloats(rng, 12, 1))
	cc := cmem.Alloc(24 * 4)
	defer func() { ca.Free(); cb.Free(); cbias.Free(); cc.Free() }()
	bindings := []Binding{{a, ca.Addr()}, {b, cb.Addr()}, {bias, cbias.Addr()}, {c, cc.Addr()}}
	_, err = g.AutotuneWith(h, bindings, 0, 0, 0, nil)
	wantErr(t, err, ErrNotSupported, "autotune")
	const fakeCUDAGraph = 0x1000
	wantErr(t, g.PopulateCUDAGraph(h, bindings, 0, 0, fakeCUDAGraph), ErrNotSupported,
		"built for the CPU reference; a CUDA graph needs a GPU plan")
	if !strings.Contains(h.lastError(), "CUDA graph") {
		t.Errorf("the message is not on the handle: %q", h.lastError())
	}
	wantErr(t, g.UpdateCUDAGraph(h, bindings, 0, 0, fakeCUDAGraph), ErrNotSupported, "CUDA graph")
	wantErr(t, g.PopulateCUDAGraph(nil, bindings, 0, 0, fakeCUDAGraph), ErrInvalidArgument, "handle is nil")
	wantErr(t, g.UpdateCUDAGraph(h, bindings, 0, -1, fakeCUDAGraph), ErrInvalidArgument, "negative")
}

func TestPlanCacheCounters(t *testing.T) {
	must(t, ClearPlanCache())
	s := must1[PlanCacheStats](t)(GetPlanCacheStats())
	if s != (PlanCacheStats{}) {
		t.Fatalf("stats after ClearPlanCache: %+v", s)
	}
	g, _, _, _, _ := matmulBias(t, 2, 4, 8, 3)
	must(t, g.Build(nil, cpuBuild)) // the CPU reference uses no cache
	if s2 := must1[PlanCacheStats](t)(GetPlanCacheStats()); s2 != s {
		t.Errorf("a CPU build changed the cache counters: %+v", s2)
	}
}

func TestNoteAndPolicyNames(t *testing.T) {
	if s := (NumericalNoteTensorCore | NumericalNoteFFT).String(); s != "TENSOR_CORE|FFT" {
		t.Errorf("NumericalNotes.String = %q", s)
	}
	if s := BehaviorNotes(8 | 64).String(); s != "SUPPORTS_CUDA_GRAPH_NATIVE_API|0x40" {
		t.Errorf("BehaviorNotes.String = %q", s)
	}
	if s := NumericalNotes(0).String(); s != "0" {
		t.Errorf("no notes = %q", s)
	}
	var all NumericalNotes
	for _, n := range numericalNoteNames {
		all |= NumericalNotes(n.bit)
	}
	var allB BehaviorNotes
	for _, n := range behaviorNoteNames {
		allB |= BehaviorNotes(n.bit)
	}
	if all != NumericalNotesAll || allB != BehaviorNotesAll {
		t.Errorf("named notes %v / %v differ from the header's ALL %v / %v", all, allB, NumericalNotesAll, BehaviorNotesAll)
	}
	for _, p := range []fmt.Stringer{BuildPolicyAll, BuildPolicyHeuristicsChoice, PlanSourceBuilt,
		PlanSourceMemoryCache, PlanSourceDiskCache, PlanSourceSerialized, PlanSourceRebuilt} {
		if strings.Contains(p.String(), "(") {
			t.Errorf("%v has no name", p)
		}
	}
	d := DefaultAutotuneOptions()
	if d.WarmupIterations != 2 || d.MinIterations != 5 || d.MaxIterations != 50 || d.Tolerance <= 0 || d.MaxMsPerPlan <= 0 {
		t.Errorf("DefaultAutotuneOptions = %+v", d)
	}
}

// TestSelectPlanWhileExecuting: SelectPlan and plan queries from one
// goroutine while others execute the graph; the race detector checks the
// cached plan description is never written while read.
func TestSelectPlanWhileExecuting(t *testing.T) {
	g, a, b, bias, c := matmulBias(t, 2, 4, 8, 3)
	must(t, g.Build(nil, cpuBuild))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := NewHandle(-1)
			if err != nil {
				errs <- err
				return
			}
			defer h.Close()
			for i := 0; i < 50; i++ {
				out := make([]float32, 24)
				if err := g.ExecuteHost(h, Host(a, make([]float32, 64)), Host(b, make([]float32, 48)),
					Host(bias, make([]float32, 12)), Host(c, out)); err != nil {
					errs <- err
					return
				}
				if _, err := g.WorkspaceSize(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := 0; i < 50; i++ {
		must(t, g.SelectPlan(0))
		if _, err := g.Plans(); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
