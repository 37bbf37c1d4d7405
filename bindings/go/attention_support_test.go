package cudnnfe

import (
	"math"
	"math/rand"
	"testing"
)

// The 0.4 additions on the CPU, no GPU needed: ValidateForBuild applies a
// GPU's support rules for BuildOptions.SmVersion, SmCount and SmVersion are
// checked, sdpa writes ScoreMax and ScoreSumExp into tensors the caller
// made, and sdpa_backward takes MaxTotalSeqLenQ/KV.

// halfSDPA adds a HALF sdpa [2, 4, 16, 64] node named "attn" with opts
// (Name set here) and marks o as an output.
func halfSDPA(t *testing.T, opts SDPAOptions) *Graph {
	t.Helper()
	g := newGraph(t)
	q := must1[Tensor](t)(g.AddTensor("q", DTypeHalf, []int64{2, 4, 16, 64}, nil))
	k := must1[Tensor](t)(g.AddTensor("k", DTypeHalf, []int64{2, 2, 32, 64}, nil))
	v := must1[Tensor](t)(g.AddTensor("v", DTypeHalf, []int64{2, 2, 32, 64}, nil))
	opts.Name = "attn"
	o, _, err := g.SDPA(q, k, v, &opts)
	must(t, err)
	must(t, g.SetOutput(o, true))
	return g
}

var gpuSM90 = &BuildOptions{Target: TargetGPU, SmVersion: 90}

func TestValidateForBuildAppliesTheGPURulesOfAnSMVersion(t *testing.T) {
	// ALiBi without a causal mask: refused for a GPU, computed by the CPU
	// reference.
	alibi := SDPAOptions{AttentionOptions: AttentionOptions{AlibiMask: true}}
	g := halfSDPA(t, alibi)
	e := wantErr(t, g.ValidateForBuild(nil, gpuSM90), ErrNotSupported,
		`sdpa "attn"`, "alibi_mask needs a right bound of 0")
	if e.Op != "Graph.ValidateForBuild" {
		t.Errorf("Op %q", e.Op)
	}
	must(t, g.ValidateForBuild(nil, cpuBuild))
	h := newHandle(t)
	must(t, g.ValidateForBuild(h, cpuBuild))
	wantErr(t, g.ValidateForBuild(h, gpuSM90), ErrNotSupported, "alibi_mask")
	// Validation left the graph buildable for the CPU reference.
	must(t, g.Build(h, cpuBuild))
	if tgt, _ := g.Target(); tgt != TargetCPUReference {
		t.Errorf("target %v", tgt)
	}
	// A built graph cannot be validated again.
	wantErr(t, g.ValidateForBuild(nil, cpuBuild), ErrWrongState)

	// With the causal mask cuDNN needs, the GPU rules accept it.
	causal := alibi
	causal.CausalMask = true
	must(t, halfSDPA(t, causal).ValidateForBuild(nil, gpuSM90))
	// Bottom-right alignment does not combine with ALiBi on a GPU.
	bottomRight := alibi
	bottomRight.CausalMaskBottomRight = true
	g = halfSDPA(t, bottomRight)
	wantErr(t, g.ValidateForBuild(nil, gpuSM90), ErrNotSupported, "alibi_mask")
	must(t, g.ValidateForBuild(nil, cpuBuild))
	// A closed handle is refused before C is called.
	closed, err := NewHandle(-1)
	must(t, err)
	closed.Close()
	wantErr(t, g.ValidateForBuild(closed, cpuBuild), ErrInvalidArgument, "handle is closed")
}

func TestSmCountAndSmVersionAreChecked(t *testing.T) {
	if d := DefaultBuildOptions(); d.SmCount != 0 || d.SmVersion != 0 {
		t.Errorf("defaults SmCount %d, SmVersion %d; want 0 (the GPU's)", d.SmCount, d.SmVersion)
	}
	g := halfSDPA(t, SDPAOptions{})
	must(t, g.ValidateForBuild(nil, &BuildOptions{Target: TargetCPUReference, SmCount: 8, SmVersion: 90}))
	wantErr(t, g.ValidateForBuild(nil, &BuildOptions{Target: TargetCPUReference, SmCount: -1}),
		ErrInvalidArgument, "sm_count is -1")
	wantErr(t, g.ValidateForBuild(nil, &BuildOptions{Target: TargetGPU, SmVersion: -90}),
		ErrInvalidArgument, "sm_version is -90")
	wantErr(t, g.ValidateForBuild(nil, &BuildOptions{SmCount: math.MaxInt32 + 1}),
		ErrInvalidArgument, "SmCount 2147483648 does not fit in 32 bits")
	wantErr(t, g.Build(nil, &BuildOptions{Target: TargetCPUReference, SmCount: -4}),
		ErrInvalidArgument, "sm_count is -4")
	must(t, g.Build(nil, &BuildOptions{Target: TargetCPUReference, SmCount: 4}))
}

func TestSDPAWritesScoreMaxAndScoreSumExp(t *testing.T) {
	const b, h, sq, skv, d = 1, 2, 3, 5, 4
	g := newGraph(t)
	q := must1[Tensor](t)(g.AddTensor("q", DTypeFloat, []int64{b, h, sq, d}, nil))
	k := must1[Tensor](t)(g.AddTensor("k", DTypeFloat, []int64{b, h, skv, d}, nil))
	v := must1[Tensor](t)(g.AddTensor("v", DTypeFloat, []int64{b, h, skv, d}, nil))
	perRow := []int64{b, h, sq, 1}
	mx := must1[Tensor](t)(g.AddTensor("score_max", DTypeFloat, perRow, nil))
	sum := must1[Tensor](t)(g.AddTensor("score_sum_exp", DTypeFloat, perRow, nil))
	// cudnn-frontend's order: mark them as outputs before sdpa takes them.
	must(t, g.SetOutput(mx, true))
	must(t, g.SetOutput(sum, true))
	o, stats, err := g.SDPA(q, k, v, &SDPAOptions{GenerateStats: true, ScoreMax: mx, ScoreSumExp: sum})
	must(t, err)
	must(t, g.SetOutput(o, true))
	must(t, g.SetOutput(stats, true))
	for _, x := range []Tensor{mx, sum} {
		if kind, _ := g.TensorKind(x); kind != TensorKindOutput {
			t.Errorf("tensor %d is %v; want OUTPUT (the node writes it)", x, kind)
		}
	}
	hd := newHandle(t)
	must(t, g.Build(hd, cpuBuild))

	rng := rand.New(rand.NewSource(40))
	qv, kv, vv := randFloats(rng, b*h*sq*d, 1), randFloats(rng, b*h*skv*d, 1), randFloats(rng, b*h*skv*d, 1)
	rows := b * h * sq
	gotO, gotStats := make([]float32, rows*d), make([]float32, rows)
	gotMax, gotSum := make([]float32, rows), make([]float32, rows)
	for i := range gotMax {
		gotMax[i], gotSum[i] = float32(math.NaN()), float32(math.NaN())
	}
	must(t, g.ExecuteHost(hd, Host(q, qv), Host(k, kv), Host(v, vv), Host(o, gotO), Host(stats, gotStats),
		Host(mx, gotMax), Host(sum, gotSum)))

	scale := 1 / math.Sqrt(d)
	wantMax, wantSum, lse := make([]float32, rows), make([]float32, rows), make([]float32, rows)
	for r := 0; r < rows; r++ { // r = (batch*h + head)*sq + i; k rows of the same (batch, head)
		bh := r / sq
		scores := make([]float64, skv)
		m := math.Inf(-1)
		for j := range scores {
			for c := 0; c < d; c++ {
				scores[j] += float64(qv[r*d+c]) * float64(kv[(bh*skv+j)*d+c])
			}
			scores[j] *= scale
			m = math.Max(m, scores[j])
		}
		z := 0.0
		for _, s := range scores {
			z += math.Exp(s - m)
		}
		wantMax[r], wantSum[r] = float32(m), float32(z)
		lse[r] = gotMax[r] + float32(math.Log(float64(gotSum[r])))
	}
	checkClose(t, "score_max", gotMax, wantMax, 1e-5)
	checkClose(t, "score_sum_exp", gotSum, wantSum, 1e-5)
	checkClose(t, "stats = max + log(sum)", gotStats, lse, 1e-5)
	_, wantStats := sdpaRef(qv, kv, vv, nil, b, h, h, sq, skv, d, d, scale, 0)
	checkClose(t, "stats", gotStats, wantStats, 1e-5)
}

func TestSDPABackwardTakesMaxTotalSeqLens(t *testing.T) {
	if d := DefaultSDPABackwardOptions(); d.MaxTotalSeqLenQ != 0 || d.MaxTotalSeqLenKV != 0 {
		t.Errorf("defaults %d, %d", d.MaxTotalSeqLenQ, d.MaxTotalSeqLenKV)
	}
	g := newGraph(t)
	x := must1[Tensor](t)(g.AddTensor("x", DTypeHalf, []int64{1, 2, 8, 64}, nil))
	stats := must1[Tensor](t)(g.AddTensor("stats", DTypeFloat, []int64{1, 2, 8, 1}, nil))
	_, _, _, err := g.SDPABackward(x, x, x, x, x, stats, &SDPABackwardOptions{MaxTotalSeqLenKV: -1})
	wantErr(t, err, ErrInvalidArgument, "max_total_seq_len_kv is -1")
	dq, dk, dv, err := g.SDPABackward(x, x, x, x, x, stats,
		&SDPABackwardOptions{Name: "bwd", MaxTotalSeqLenQ: 64, MaxTotalSeqLenKV: 96})
	must(t, err)
	for _, out := range []Tensor{dq, dk, dv} {
		must(t, g.SetOutput(out, true))
	}
	// Without ragged offsets cudnn-frontend refuses them for a GPU.
	wantErr(t, g.ValidateForBuild(nil, gpuSM90), ErrNotSupported, `"bwd"`, "max_total_seq_len")
	must(t, g.ValidateForBuild(nil, cpuBuild))
}
