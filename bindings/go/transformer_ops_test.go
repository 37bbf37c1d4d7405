package cudnnfe

import (
	"math"
	"math/rand"
	"testing"
)

// Numerics of the transformer ops (norms, softmax, attention backward) on
// the CPU reference, against plain Go.

func checkClose(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if d := maxAbsDiff(got, want); d > tol {
		t.Errorf("%s: max error %g > %g", what, d, tol)
	}
}

func TestLayerNormAndBackward(t *testing.T) {
	const n, hidden = 3, 8
	const eps = 1e-3
	g := newGraph(t)
	x, _ := g.AddTensor("x", DTypeFloat, []int64{n, hidden}, nil)
	scale, _ := g.AddTensor("scale", DTypeFloat, []int64{1, hidden}, nil)
	bias, _ := g.AddTensor("bias", DTypeFloat, []int64{1, hidden}, nil)
	dy, _ := g.AddTensor("dy", DTypeFloat, []int64{n, hidden}, nil)
	y, mean, inv, err := g.LayerNorm(x, scale, bias, &NormOptions{Name: "ln", Epsilon: eps})
	must(t, err)
	if mean == 0 || inv == 0 {
		t.Fatal("training layernorm gave no statistics")
	}
	dx, dscale, dbias, err := g.LayerNormBackward(dy, x, scale, mean, inv, &NormOptions{Name: "ln_bwd", Epsilon: eps})
	must(t, err)
	for _, o := range []Tensor{y, mean, inv, dx, dscale, dbias} {
		must(t, g.SetOutput(o, true))
	}
	if d, _ := g.Dims(mean); d[0] != n || d[1] != 1 {
		t.Errorf("mean dims %v", d)
	}
	h := newHandle(t)
	must(t, g.Build(h, cpuBuild))
	rng := rand.New(rand.NewSource(21))
	xv, sv, bv, dyv := randFloats(rng, n*hidden, 2), randFloats(rng, hidden, 1), randFloats(rng, hidden, 1), randFloats(rng, n*hidden, 1)
	gy, gm, gi := make([]float32, n*hidden), make([]float32, n), make([]float32, n)
	gdx, gds, gdb := make([]float32, n*hidden), make([]float32, hidden), make([]float32, hidden)
	must(t, g.ExecuteHost(h, Host(x, xv), Host(scale, sv), Host(bias, bv), Host(dy, dyv),
		Host(y, gy), Host(mean, gm), Host(inv, gi), Host(dx, gdx), Host(dscale, gds), Host(dbias, gdb)))

	wy, wm, wi := make([]float32, n*hidden), make([]float32, n), make([]float32, n)
	wdx, wds, wdb := make([]float32, n*hidden), make([]float32, hidden), make([]float32, hidden)
	for r := 0; r < n; r++ {
		row := xv[r*hidden : (r+1)*hidden]
		mu, v := 0.0, 0.0
		for _, e := range row {
			mu += float64(e)
		}
		mu /= hidden
		for _, e := range row {
			v += (float64(e) - mu) * (float64(e) - mu)
		}
		v /= hidden
		iv := 1 / math.Sqrt(v+eps)
		wm[r], wi[r] = float32(mu), float32(iv)
		var sumG, sumGX float64
		xhat := make([]float64, hidden)
		for c := 0; c < hidden; c++ {
			xhat[c] = (float64(row[c]) - mu) * iv
			wy[r*hidden+c] = float32(xhat[c]*float64(sv[c]) + float64(bv[c]))
			gq := float64(dyv[r*hidden+c]) * float64(sv[c])
			sumG += gq
			sumGX += gq * xhat[c]
			wds[c] += float32(float64(dyv[r*hidden+c]) * xhat[c])
			wdb[c] += dyv[r*hidden+c]
		}
		for c := 0; c < hidden; c++ {
			gq := float64(dyv[r*hidden+c]) * float64(sv[c])
			wdx[r*hidden+c] = float32(iv * (gq - sumG/hidden - xhat[c]*sumGX/hidden))
		}
	}
	checkClose(t, "y", gy, wy, 1e-5)
	checkClose(t, "mean", gm, wm, 1e-5)
	checkClose(t, "inv_variance", gi, wi, 1e-4)
	checkClose(t, "dx", gdx, wdx, 1e-4)
	checkClose(t, "dscale", gds, wds, 1e-4)
	checkClose(t, "dbias", gdb, wdb, 1e-5)

	// Inference: no statistics.
	g2 := newGraph(t)
	x2, _ := g2.AddTensor("x", DTypeFloat, []int64{n, hidden}, nil)
	s2, _ := g2.AddTensor("scale", DTypeFloat, []int64{1, hidden}, nil)
	b2, _ := g2.AddTensor("bias", DTypeFloat, []int64{1, hidden}, nil)
	y2, m2, i2, err := g2.LayerNorm(x2, s2, b2, &NormOptions{Phase: NormPhaseInference, Epsilon: eps})
	must(t, err)
	if m2 != 0 || i2 != 0 {
		t.Errorf("inference statistics %v %v", m2, i2)
	}
	must(t, g2.SetOutput(y2, true))
	must(t, g2.Build(h, cpuBuild))
	gy2 := make([]float32, n*hidden)
	must(t, g2.ExecuteHost(h, Host(x2, xv), Host(s2, sv), Host(b2, bv), Host(y2, gy2)))
	checkClose(t, "inference y", gy2, wy, 1e-5)
}

func TestRMSNormAndBackward(t *testing.T) {
	const n, hidden = 4, 6
	for _, withBias := range []bool{false, true} {
		withBias := withBias
		name := "no_bias"
		if withBias {
			name = "bias"
		}
		t.Run(name, func(t *testing.T) {
			g := newGraph(t)
			x, _ := g.AddTensor("x", DTypeFloat, []int64{n, hidden}, nil)
			scale, _ := g.AddTensor("scale", DTypeFloat, []int64{1, hidden}, nil)
			dy, _ := g.AddTensor("dy", DTypeFloat, []int64{n, hidden}, nil)
			var bias Tensor
			if withBias {
				bias, _ = g.AddTensor("bias", DTypeFloat, []int64{1, hidden}, nil)
			}
			y, inv, err := g.RMSNorm(x, scale, bias, &NormOptions{ZeroCenteredGamma: true})
			must(t, err)
			dx, dscale, dbias, err := g.RMSNormBackward(dy, x, scale, inv, withBias, &NormOptions{ZeroCenteredGamma: true})
			must(t, err)
			if (dbias != 0) != withBias {
				t.Fatalf("dbias %v with bias %v", dbias, withBias)
			}
			outs := []Tensor{y, inv, dx, dscale}
			if withBias {
				outs = append(outs, dbias)
			}
			for _, o := range outs {
				must(t, g.SetOutput(o, true))
			}
			h := newHandle(t)
			must(t, g.Build(h, cpuBuild))
			rng := rand.New(rand.NewSource(22))
			xv, sv, bv, dyv := randFloats(rng, n*hidden, 2), randFloats(rng, hidden, 1), randFloats(rng, hidden, 1), randFloats(rng, n*hidden, 1)
			gy, gi, gdx, gds, gdb := make([]float32, n*hidden), make([]float32, n), make([]float32, n*hidden), make([]float32, hidden), make([]float32, hidden)
			bufs := []HostBuffer{Host(x, xv), Host(scale, sv), Host(dy, dyv), Host(y, gy), Host(inv, gi), Host(dx, gdx), Host(dscale, gds)}
			if withBias {
				bufs = append(bufs, Host(bias, bv), Host(dbias, gdb))
			}
			must(t, g.ExecuteHost(h, bufs...))

			const eps = 1e-5
			wy, wi, wdx, wds, wdb := make([]float32, n*hidden), make([]float32, n), make([]float32, n*hidden), make([]float32, hidden), make([]float32, hidden)
			for r := 0; r < n; r++ {
				ms := 0.0
				for c := 0; c < hidden; c++ {
					ms += float64(xv[r*hidden+c]) * float64(xv[r*hidden+c])
				}
				iv := 1 / math.Sqrt(ms/hidden+eps)
				wi[r] = float32(iv)
				var dot float64
				for c := 0; c < hidden; c++ {
					gamma := 1 + float64(sv[c])
					xhat := float64(xv[r*hidden+c]) * iv
					y := xhat * gamma
					if withBias {
						y += float64(bv[c])
					}
					wy[r*hidden+c] = float32(y)
					dot += float64(dyv[r*hidden+c]) * gamma * xhat
					wds[c] += float32(float64(dyv[r*hidden+c]) * xhat)
					wdb[c] += dyv[r*hidden+c]
				}
				for c := 0; c < hidden; c++ {
					gamma := 1 + float64(sv[c])
					xhat := float64(xv[r*hidden+c]) * iv
					wdx[r*hidden+c] = float32(iv * (float64(dyv[r*hidden+c])*gamma - xhat*dot/hidden))
				}
			}
			checkClose(t, "y", gy, wy, 1e-5)
			checkClose(t, "inv_rms", gi, wi, 1e-4)
			checkClose(t, "dx", gdx, wdx, 1e-4)
			checkClose(t, "dscale", gds, wds, 1e-4)
			if withBias {
				checkClose(t, "dbias", gdb, wdb, 1e-5)
			}
		})
	}
}

func TestSoftmax(t *testing.T) {
	g := newGraph(t)
	x, _ := g.AddTensor("x", DTypeFloat, []int64{2, 3, 5}, nil)
	y, stats, err := g.Softmax(x, &SoftmaxOptions{Name: "sm", GenerateStats: true})
	must(t, err)
	must(t, g.SetOutput(y, true))
	must(t, g.SetOutput(stats, true))
	if d, _ := g.Dims(stats); d[2] != 1 {
		t.Errorf("stats dims %v", d)
	}
	h := newHandle(t)
	must(t, g.Build(h, cpuBuild))
	xv := randFloats(rand.New(rand.NewSource(23)), 30, 4)
	gy, gs := make([]float32, 30), make([]float32, 6)
	must(t, g.ExecuteHost(h, Host(x, xv), Host(y, gy), Host(stats, gs)))
	wy, ws := make([]float32, 30), make([]float32, 6)
	for r := 0; r < 6; r++ {
		mx := math.Inf(-1)
		for c := 0; c < 5; c++ {
			mx = math.Max(mx, float64(xv[r*5+c]))
		}
		sum := 0.0
		for c := 0; c < 5; c++ {
			sum += math.Exp(float64(xv[r*5+c]) - mx)
		}
		for c := 0; c < 5; c++ {
			wy[r*5+c] = float32(math.Exp(float64(xv[r*5+c])-mx) / sum)
		}
		ws[r] = float32(mx + math.Log(sum))
	}
	checkClose(t, "y", gy, wy, 1e-6)
	checkClose(t, "stats", gs, ws, 1e-5)

	// Without stats the second output is 0.
	g2 := newGraph(t)
	x2, _ := g2.AddTensor("x", DTypeFloat, []int64{2, 5}, nil)
	_, st2, err := g2.Softmax(x2, nil)
	must(t, err)
	if st2 != 0 {
		t.Errorf("stats %v without GenerateStats", st2)
	}
}

// sdpaBackwardRef: gradients of attention for packed BHSD float data.
func sdpaBackwardRef(q, k, v, dO []float32, b, hq, hkv, sq, skv, d int, scale float64, causal bool) (dq, dk, dv []float32) {
	dq, dk, dv = make([]float32, len(q)), make([]float32, len(k)), make([]float32, len(v))
	group := hq / hkv
	for bi := 0; bi < b; bi++ {
		for h := 0; h < hq; h++ {
			hk := h / group
			qa := func(i, c int) int { return ((bi*hq+h)*sq+i)*d + c }
			ka := func(j, c int) int { return ((bi*hkv+hk)*skv+j)*d + c }
			for i := 0; i < sq; i++ {
				last := skv - 1
				if causal && i < last {
					last = i
				}
				p := make([]float64, last+1)
				mx := math.Inf(-1)
				for j := 0; j <= last; j++ {
					s := 0.0
					for c := 0; c < d; c++ {
						s += float64(q[qa(i, c)]) * float64(k[ka(j, c)])
					}
					p[j] = s * scale
					mx = math.Max(mx, p[j])
				}
				sum := 0.0
				for j := range p {
					p[j] = math.Exp(p[j] - mx)
					sum += p[j]
				}
				for j := range p {
					p[j] /= sum
				}
				// dP_j = dO . v_j; D = sum_j P_j dP_j
				dp := make([]float64, len(p))
				D := 0.0
				for j := range p {
					for c := 0; c < d; c++ {
						dp[j] += float64(dO[qa(i, c)]) * float64(v[ka(j, c)])
					}
					D += p[j] * dp[j]
				}
				for j := range p {
					ds := p[j] * (dp[j] - D)
					for c := 0; c < d; c++ {
						dv[ka(j, c)] += float32(p[j] * float64(dO[qa(i, c)]))
						dq[qa(i, c)] += float32(scale * ds * float64(k[ka(j, c)]))
						dk[ka(j, c)] += float32(scale * ds * float64(q[qa(i, c)]))
					}
				}
			}
		}
	}
	return
}

func TestSDPABackward(t *testing.T) {
	const b, hq, hkv, s, d = 1, 4, 2, 6, 8
	g := newGraph(t)
	dims := func(h int) []int64 { return []int64{b, int64(h), s, d} }
	q, _ := g.AddTensor("q", DTypeFloat, dims(hq), nil)
	k, _ := g.AddTensor("k", DTypeFloat, dims(hkv), nil)
	v, _ := g.AddTensor("v", DTypeFloat, dims(hkv), nil)
	dO, _ := g.AddTensor("dO", DTypeFloat, dims(hq), nil)
	o, stats, err := g.SDPA(q, k, v, &SDPAOptions{Name: "fwd", CausalMask: true, GenerateStats: true})
	must(t, err)
	dq, dk, dv, err := g.SDPABackward(q, k, v, o, dO, stats, &SDPABackwardOptions{Name: "bwd", CausalMask: true, Deterministic: true})
	must(t, err)
	for _, out := range []Tensor{o, dq, dk, dv} {
		must(t, g.SetOutput(out, true))
	}
	for tensor, want := range map[Tensor]int64{dq: hq, dk: hkv, dv: hkv} {
		if got, _ := g.Dims(tensor); got[1] != want {
			t.Errorf("gradient dims %v", got)
		}
	}
	h := newHandle(t)
	must(t, g.Build(h, cpuBuild))
	rng := rand.New(rand.NewSource(24))
	qv, kv, vv, dov := randFloats(rng, b*hq*s*d, 1), randFloats(rng, b*hkv*s*d, 1), randFloats(rng, b*hkv*s*d, 1), randFloats(rng, b*hq*s*d, 1)
	gdq, gdk, gdv, gO := make([]float32, len(qv)), make([]float32, len(kv)), make([]float32, len(vv)), make([]float32, len(qv))
	must(t, g.ExecuteHost(h, Host(q, qv), Host(k, kv), Host(v, vv), Host(dO, dov), Host(o, gO), Host(dq, gdq), Host(dk, gdk), Host(dv, gdv)))
	wdq, wdk, wdv := sdpaBackwardRef(qv, kv, vv, dov, b, hq, hkv, s, s, d, 1/math.Sqrt(d), true)
	checkClose(t, "dq", gdq, wdq, 1e-4)
	checkClose(t, "dk", gdk, wdk, 1e-4)
	checkClose(t, "dv", gdv, wdv, 1e-4)
}
