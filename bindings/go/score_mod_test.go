package cudnnfe

import (
	"math"
	"math/rand"
	"testing"
)

// Score modifiers (BeginScoreMod / EndScoreMod / ScoreMod,
// AttentionOptions.ScoreMod, SDPABackwardOptions.ScoreModBprop) on the CPU
// reference: softcap (tanh(s / c) * c) forward and backward against plain
// loops, as tests/test_cpu_score_mod.cpp checks in C, and the scope rules.

const smH, smSq, smSkv, smD, smCap = 2, 3, 5, 4, 0.7

var smScores = []int64{1, smH, smSq, smSkv}

// softcapRef is attention of one batch with softcap after the scale
// (docs/attention.md: s = mod(scale * q.k)), in float64: o, and for the
// output gradient dO, dq and dv (dS = P (dP - rowsum(P dP)), through
// softcap's slope 1 - tanh^2).
func softcapRef(q, k, v, dO []float32) (o, dq, dv []float64) {
	o, dq, dv = make([]float64, len(q)), make([]float64, len(q)), make([]float64, len(k))
	scale := 1 / math.Sqrt(smD)
	dot := func(a []float32, i int, b []float32, j int) float64 {
		s := 0.0
		for c := 0; c < smD; c++ {
			s += float64(a[i*smD+c]) * float64(b[j*smD+c])
		}
		return s
	}
	for h := 0; h < smH; h++ {
		for i := h * smSq; i < (h+1)*smSq; i++ {
			p, t := make([]float64, smSkv), make([]float64, smSkv)
			m, z := math.Inf(-1), 0.0
			for j := range p {
				t[j] = math.Tanh(scale * dot(q, i, k, h*smSkv+j) / smCap)
				p[j] = t[j] * smCap
				m = math.Max(m, p[j])
			}
			for j := range p {
				p[j] = math.Exp(p[j] - m)
				z += p[j]
			}
			dp, rowsum := make([]float64, smSkv), 0.0
			for j := range p {
				p[j] /= z
				dp[j] = dot(dO, i, v, h*smSkv+j)
				rowsum += p[j] * dp[j]
			}
			for j := range p {
				ds := p[j] * (dp[j] - rowsum) * (1 - t[j]*t[j])
				for c := 0; c < smD; c++ {
					o[i*smD+c] += p[j] * float64(v[(h*smSkv+j)*smD+c])
					dv[(h*smSkv+j)*smD+c] += p[j] * float64(dO[i*smD+c])
					dq[i*smD+c] += scale * ds * float64(k[(h*smSkv+j)*smD+c])
				}
			}
		}
	}
	return o, dq, dv
}

// softcap adds the softcap modifier; it returns its placeholder and its tanh.
func softcap(t *testing.T, g *Graph) (score, tanh Tensor) {
	capT := must1[Tensor](t)(g.AddScalar("cap", DTypeFloat, smCap))
	score, err := g.ScoreMod("score", smScores, func(s Tensor) (Tensor, error) {
		div, err := g.Pointwise(PointwiseDiv, s, capT, 0, nil)
		if err != nil {
			return 0, err
		}
		if tanh, err = g.Pointwise(PointwiseTanhFwd, div, 0, 0, nil); err != nil {
			return 0, err
		}
		return g.Pointwise(PointwiseMul, tanh, capT, 0, nil)
	})
	must(t, err)
	return score, tanh
}

func TestSoftcapScoreModMatchesLoops(t *testing.T) {
	rng := rand.New(rand.NewSource(16))
	nq, nk := smH*smSq*smD, smH*smSkv*smD
	qv, kv, vv, dOv := randFloats(rng, nq, 1), randFloats(rng, nk, 1), randFloats(rng, nk, 1), randFloats(rng, nq, 1)
	wantO, wantDQ, wantDV := softcapRef(qv, kv, vv, dOv)
	qDims, kDims := []int64{1, smH, smSq, smD}, []int64{1, smH, smSkv, smD}

	// Forward: o and the stats the backward needs.
	g := newGraph(t)
	add := func(g *Graph, name string, dims []int64) Tensor {
		return must1[Tensor](t)(g.AddTensor(name, DTypeFloat, dims, nil))
	}
	q, k, v := add(g, "q", qDims), add(g, "k", kDims), add(g, "v", kDims)
	score, _ := softcap(t, g)
	fo := DefaultSDPAOptions()
	fo.GenerateStats, fo.ScoreMod = true, score
	o, stats, err := g.SDPA(q, k, v, &fo)
	must(t, err)
	must(t, g.SetOutput(o, true))
	must(t, g.SetOutput(stats, true))
	h := newHandle(t)
	must(t, g.Build(h, cpuBuild))
	gotO, gotStats := nans(nq), nans(smH*smSq)
	must(t, g.ExecuteHost(h, Host(q, qv), Host(k, kv), Host(v, vv), Host(o, gotO), Host(stats, gotStats)))
	closeInf(t, "softcap o", gotO, f32s(wantO), 1e-5)

	// Backward: the forward's modifier again, and its gradient dS' * (1 - t^2).
	gb := newGraph(t)
	q, k, v = add(gb, "q", qDims), add(gb, "k", kDims), add(gb, "v", kDims)
	ob, dO, st := add(gb, "o", qDims), add(gb, "dO", qDims), add(gb, "stats", []int64{1, smH, smSq, 1})
	score, tanh := softcap(t, gb)
	one := must1[Tensor](t)(gb.AddScalar("one", DTypeFloat, 1))
	dsp := must1[Tensor](t)(gb.BeginScoreMod("dS'", smScores))
	sq := must1[Tensor](t)(gb.Pointwise(PointwiseMul, tanh, tanh, 0, nil))
	slope := must1[Tensor](t)(gb.Pointwise(PointwiseSub, one, sq, 0, nil))
	must(t, gb.EndScoreMod(dsp, must1[Tensor](t)(gb.Pointwise(PointwiseMul, dsp, slope, 0, nil))))
	bo := DefaultSDPABackwardOptions()
	bo.ScoreMod, bo.ScoreModBprop = score, dsp
	dq, dk, dv, err := gb.SDPABackward(q, k, v, ob, dO, st, &bo)
	must(t, err)
	for _, out := range []Tensor{dq, dk, dv} {
		must(t, gb.SetOutput(out, true))
	}
	must(t, gb.Build(h, cpuBuild))
	gotDQ, gotDK, gotDV := nans(nq), nans(nk), nans(nk)
	must(t, gb.ExecuteHost(h, Host(q, qv), Host(k, kv), Host(v, vv), Host(ob, gotO), Host(dO, dOv),
		Host(st, gotStats), Host(dq, gotDQ), Host(dk, gotDK), Host(dv, gotDV)))
	closeInf(t, "softcap dq", gotDQ, f32s(wantDQ), 1e-4)
	closeInf(t, "softcap dv", gotDV, f32s(wantDV), 1e-5)
}

func TestScoreModScopeRules(t *testing.T) {
	g := newGraph(t)
	x := must1[Tensor](t)(g.AddTensor("x", DTypeFloat, smScores, nil))
	_, err := g.BeginScoreMod("bad", []int64{1, smH, smSq})
	wantErr(t, err, ErrInvalidArgument, "4 dims")
	score := must1[Tensor](t)(g.BeginScoreMod("score", smScores))
	_, err = g.BeginScoreMod("again", smScores)
	wantErr(t, err, ErrWrongState)
	// A result that does not depend on the placeholder is refused; the
	// modifier stays open.
	neg := must1[Tensor](t)(g.Pointwise(PointwiseNeg, x, 0, 0, nil))
	wantErr(t, g.EndScoreMod(score, neg), ErrInvalidGraph)
	must(t, g.EndScoreMod(score, must1[Tensor](t)(g.Pointwise(PointwiseNeg, score, 0, 0, nil))))
	_, err = g.ScoreMod("failing", smScores, func(Tensor) (Tensor, error) { return 0, ErrInvalidArgument })
	if err != ErrInvalidArgument {
		t.Fatalf("ScoreMod returned %v; want the body's error", err)
	}
}
