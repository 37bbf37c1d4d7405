package cudnnfe

import (
	"strings"
	"testing"
)

// TestGPUPlans: plan control on the GPU (skipped without one): several
// plans, selection following the workspace and name, autotune on the
// library's scratch buffers, a GPU plan blob loaded without heuristics, a
// plan cache hit, and a filter that leaves no engine.
func TestGPUPlans(t *testing.T) {
	requireGPU(t)
	h := newHandle(t)
	g, _, _, _, _ := halfMatmulBias(t, 4, 128, 64, 96)
	must(t, g.Build(h, &BuildOptions{Target: TargetGPU, Policy: BuildPolicyAll, DisablePlanCache: true}))
	plans := must1[[]PlanInfo](t)(g.Plans())
	if len(plans) == 0 {
		t.Fatal("no plans")
	}
	for i, p := range plans {
		if p.EngineID < 0 || !strings.HasPrefix(p.Name, "eng") {
			t.Errorf("plan %d: %+v", i, p)
		}
		must(t, g.SelectPlan(i))
		if ws, _ := g.WorkspaceSize(); ws != p.WorkspaceSize {
			t.Errorf("plan %d: WorkspaceSize %d, plan info %d", i, ws, p.WorkspaceSize)
		}
		if name, _ := g.PlanName(); name != p.Name {
			t.Errorf("plan %d: PlanName %q, plan info %q", i, name, p.Name)
		}
	}
	chosen, err := g.Autotune(h, &AutotuneOptions{MaxMsPerPlan: 20})
	must(t, err)
	pi := must1[PlanInfo](t)(g.PlanInfo(chosen))
	if !pi.ChosenByAutotune || !pi.Selected || pi.AutotuneTimeMs <= 0 {
		t.Errorf("autotuned plan %+v", pi)
	}
	t.Logf("%d plans; autotune chose %s (%.4f ms)", len(plans), pi.Name, pi.AutotuneTimeMs)

	blob := must1[[]byte](t)(g.SerializePlan())
	loaded, err := LoadPlan(h, blob, nil)
	must(t, err)
	defer loaded.Close()
	if bi := must1[BuildInfo](t)(loaded.BuildInfo()); bi.Source != PlanSourceSerialized {
		t.Errorf("loaded source %v", bi.Source)
	}
	if name, _ := loaded.PlanName(); name != pi.Name {
		t.Errorf("loaded plan %q, want %q", name, pi.Name)
	}

	must(t, ClearPlanCache())
	g1, _, _, _, _ := halfMatmulBias(t, 4, 128, 64, 96)
	must(t, g1.Build(h, &BuildOptions{Target: TargetGPU}))
	g2, _, _, _, _ := halfMatmulBias(t, 4, 128, 64, 96)
	must(t, g2.Build(h, &BuildOptions{Target: TargetGPU}))
	if bi := must1[BuildInfo](t)(g2.BuildInfo()); bi.Source != PlanSourceMemoryCache {
		t.Errorf("second build source %v, want MEMORY_CACHE", bi.Source)
	}
	if s := must1[PlanCacheStats](t)(GetPlanCacheStats()); s.Hits < 1 || s.Misses < 1 || s.Entries < 1 {
		t.Errorf("cache stats %+v", s)
	}

	// No matmul engine has every behaviour note at once.
	g3, _, _, _, _ := halfMatmulBias(t, 4, 128, 64, 96)
	wantErr(t, g3.Build(h, &BuildOptions{Target: TargetGPU, RequireBehaviorNotes: BehaviorNotesAll}),
		ErrNotSupported, "filters removed", "require_behavior_notes")
}
