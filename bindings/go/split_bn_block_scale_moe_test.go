package cudnnfe

// The ops of issue 16 on the CPU reference against plain Go loops: the split
// batch norm, block-scale quantize / dequantize, the MoE grouped matmul and
// its backward, ExecuteWithOverrides against a fresh graph of the smaller
// shape, and the kernel cache; and bad input giving the library's messages.

import (
	"math"
	"math/rand"
	"reflect"
	"testing"

	"github.com/cudnnfe/cudnnfe/bindings/go/internal/cmem"
)

// channelSums returns (sum, sum of squares) per channel of x [n, c, s].
func channelSums(x []float32, n, c, s int) (sum, sq []float64) {
	sum, sq = make([]float64, c), make([]float64, c)
	for ni := 0; ni < n; ni++ {
		for ch := 0; ch < c; ch++ {
			for si := 0; si < s; si++ {
				v := float64(x[(ni*c+ch)*s+si])
				sum[ch] += v
				sq[ch] += v * v
			}
		}
	}
	return sum, sq
}

func closeTo(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); d > tol*(1+math.Abs(want[i])) || math.IsNaN(float64(got[i])) {
			t.Fatalf("%s[%d] = %g, want %g", what, i, got[i], want[i])
		}
	}
}

func TestGenstatsBnFinalizeWithRunningStatistics(t *testing.T) {
	const n, c, s = 3, 4, 5
	const eps, momentum, m = 1e-3, 0.25, float64(n * s)
	rng := rand.New(rand.NewSource(16))
	x, scale, bias := randFloats(rng, n*c*s, 1), randFloats(rng, c, 1), randFloats(rng, c, 1)
	prevMean, prevVar := randFloats(rng, c, 1), randFloats(rng, c, 1)
	for i := range prevVar {
		prevVar[i] += 2
	}
	g, h := newGraph(t), newHandle(t)
	perC := []int64{1, c, 1}
	xt := must1[Tensor](t)(g.AddTensor("x", DTypeFloat, []int64{n, c, s}, nil))
	in := BnFinalizeInputs{
		Scale:           must1[Tensor](t)(g.AddTensor("scale", DTypeFloat, perC, nil)),
		Bias:            must1[Tensor](t)(g.AddTensor("bias", DTypeFloat, perC, nil)),
		PrevRunningMean: must1[Tensor](t)(g.AddTensor("prev_mean", DTypeFloat, perC, nil)),
		PrevRunningVar:  must1[Tensor](t)(g.AddTensor("prev_var", DTypeFloat, perC, nil)),
		Epsilon:         must1[Tensor](t)(g.AddScalar("epsilon", DTypeFloat, eps)),
		AccumCount:      must1[Tensor](t)(g.AddScalar("accum_count", DTypeInt64, m)),
		Momentum:        must1[Tensor](t)(g.AddScalar("momentum", DTypeFloat, momentum)),
	}
	var err error
	in.Sum, in.SqSum, err = g.Genstats(xt, &GenstatsOptions{Name: "gs"})
	must(t, err)
	o, err := g.BnFinalize(in, &BnFinalizeOptions{Name: "fin"})
	must(t, err)
	outs := []Tensor{in.Sum, in.SqSum, o.EqScale, o.EqBias, o.Mean, o.InvVariance, o.NextRunningMean, o.NextRunningVar}
	got := make([][]float32, len(outs))
	bufs := []HostBuffer{Host(xt, x), Host(in.Scale, scale), Host(in.Bias, bias), Host(in.PrevRunningMean, prevMean),
		Host(in.PrevRunningVar, prevVar)}
	for i, o := range outs {
		must(t, g.SetOutput(o, true))
		got[i] = make([]float32, c)
		bufs = append(bufs, Host(o, got[i]))
	}
	must(t, g.Build(h, cpuBuild))
	must(t, g.ExecuteHost(h, bufs...))

	sum, sq := channelSums(x, n, c, s)
	want := make([][]float64, 8)
	for i := range want {
		want[i] = make([]float64, c)
	}
	for ch := 0; ch < c; ch++ {
		mean := sum[ch] / m
		v := sq[ch]/m - mean*mean
		inv := 1 / math.Sqrt(v+eps)
		eqScale := float64(scale[ch]) * inv
		want[0][ch], want[1][ch], want[2][ch] = sum[ch], sq[ch], eqScale
		want[3][ch], want[4][ch], want[5][ch] = float64(bias[ch])-mean*eqScale, mean, inv
		want[6][ch] = (1-momentum)*float64(prevMean[ch]) + momentum*mean
		want[7][ch] = (1-momentum)*float64(prevVar[ch]) + momentum*v*m/(m-1)
	}
	names := []string{"sum", "sq_sum", "eq_scale", "eq_bias", "mean", "inv_variance", "next_mean", "next_var"}
	for i := range outs {
		closeTo(t, names[i], got[i], want[i], 1e-5)
	}
}

func TestDbnWeightMatchesTheFormulas(t *testing.T) {
	const n, c, s = 2, 3, 4
	const m = float64(n * s)
	rng := rand.New(rand.NewSource(17))
	x, dy := randFloats(rng, n*c*s, 1), randFloats(rng, n*c*s, 1)
	mean, inv, scale := randFloats(rng, c, 1), randFloats(rng, c, 1), randFloats(rng, c, 1)
	for i := range inv {
		inv[i] += 1.5
	}
	g, h := newGraph(t), newHandle(t)
	dims, perC := []int64{n, c, s}, []int64{1, c, 1}
	in := make([]Tensor, 5)
	for i, name := range []string{"dy", "x", "mean", "inv_variance", "scale"} {
		d := perC
		if i < 2 {
			d = dims
		}
		in[i] = must1[Tensor](t)(g.AddTensor(name, DTypeFloat, d, nil))
	}
	o, err := g.DbnWeight(in[0], in[1], in[2], in[3], in[4], nil)
	must(t, err)
	outs := []Tensor{o.DScale, o.DBias, o.EqScaleDy, o.EqScaleX, o.EqBias}
	got := make([][]float32, len(outs))
	bufs := []HostBuffer{Host(in[0], dy), Host(in[1], x), Host(in[2], mean), Host(in[3], inv), Host(in[4], scale)}
	for i, o := range outs {
		must(t, g.SetOutput(o, true))
		got[i] = make([]float32, c)
		bufs = append(bufs, Host(o, got[i]))
	}
	must(t, g.Build(h, cpuBuild))
	must(t, g.ExecuteHost(h, bufs...))

	want := make([][]float64, 5)
	for i := range want {
		want[i] = make([]float64, c)
	}
	for ch := 0; ch < c; ch++ {
		mu, iv := float64(mean[ch]), float64(inv[ch])
		for ni := 0; ni < n; ni++ {
			for si := 0; si < s; si++ {
				i := (ni*c+ch)*s + si
				want[0][ch] += float64(dy[i]) * (float64(x[i]) - mu) * iv
				want[1][ch] += float64(dy[i])
			}
		}
		want[2][ch] = float64(scale[ch]) * iv
		want[3][ch] = -want[2][ch] * iv * want[0][ch] / m
		want[4][ch] = want[2][ch] * (mu*iv*want[0][ch] - want[1][ch]) / m
	}
	for i, name := range []string{"dscale", "dbias", "eq_scale_dy", "eq_scale_x", "eq_bias"} {
		closeTo(t, name, got[i], want[i], 1e-4)
	}
}

func TestSplitBatchNormBadInput(t *testing.T) {
	g := newGraph(t)
	x := must1[Tensor](t)(g.AddTensor("x1d", DTypeFloat, []int64{6}, nil))
	_, _, err := g.Genstats(x, &GenstatsOptions{Name: "gs"})
	if err == nil {
		err = g.Validate()
	}
	wantErr(t, err, ErrInvalidGraph, "gs", "x1d")

	g = newGraph(t)
	perC := []int64{1, 3, 1}
	in := BnFinalizeInputs{
		Sum:        must1[Tensor](t)(g.AddTensor("sum", DTypeFloat, perC, nil)),
		SqSum:      must1[Tensor](t)(g.AddTensor("sq_sum", DTypeFloat, perC, nil)),
		Scale:      must1[Tensor](t)(g.AddTensor("scale_wide", DTypeFloat, []int64{1, 4, 1}, nil)),
		Bias:       must1[Tensor](t)(g.AddTensor("bias", DTypeFloat, perC, nil)),
		Epsilon:    must1[Tensor](t)(g.AddScalar("epsilon", DTypeFloat, 1e-5)),
		AccumCount: must1[Tensor](t)(g.AddScalar("accum_count", DTypeInt64, 8)),
	}
	_, err = g.BnFinalize(in, &BnFinalizeOptions{Name: "fin"})
	if err == nil {
		err = g.Validate()
	}
	wantErr(t, err, ErrInvalidGraph, "fin", "scale_wide")

	g = newGraph(t)
	dy := must1[Tensor](t)(g.AddTensor("dy", DTypeFloat, []int64{2, 3, 4}, nil))
	xo := must1[Tensor](t)(g.AddTensor("x_other", DTypeFloat, []int64{2, 3, 5}, nil))
	st := make([]Tensor, 3)
	for i := range st {
		st[i] = must1[Tensor](t)(g.AddTensor("", DTypeFloat, perC, nil))
	}
	_, err = g.DbnWeight(dy, xo, st[0], st[1], st[2], &DbnWeightOptions{Name: "dbw"})
	if err == nil {
		err = g.Validate()
	}
	wantErr(t, err, ErrInvalidGraph, "dbw", "x_other")
}

// e8m0Of is the FP8_E8M0 scale byte of a block whose largest magnitude is
// amax under FP8_E4M3: amax / 448 rounded up to a power of two, + 127.
func e8m0Of(amax float32) uint8 {
	return uint8(int(math.Ceil(math.Log2(float64(amax)/448))) + 127)
}

func TestBlockScaleQuantizeDequantizeRoundTrip(t *testing.T) {
	const rows, cols, block = 3, 64, 32
	rng := rand.New(rand.NewSource(18))
	x := randFloats(rng, rows*cols, 1)
	for i := range x {
		x[i] *= float32(1 + i%7)
	}
	g, h := newGraph(t), newHandle(t)
	xt := must1[Tensor](t)(g.AddTensor("x", DTypeFloat, []int64{rows, cols}, nil))
	y, scale, err := g.BlockScaleQuantize(xt, &BlockScaleOptions{Name: "q"})
	must(t, err)
	z, err := g.BlockScaleDequantize(y, scale, &BlockScaleOptions{Name: "dq"})
	must(t, err)
	must(t, g.SetTensorDType(z, DTypeFloat))
	for _, o := range []Tensor{y, scale, z} {
		must(t, g.SetOutput(o, true))
	}
	if d := must1[[]int64](t)(g.Dims(scale)); !reflect.DeepEqual(d, []int64{rows, cols / block}) {
		t.Fatalf("scale dims %v", d)
	}
	must(t, g.Build(h, cpuBuild))
	yb, sb, back := make([]uint8, rows*cols), make([]uint8, rows*cols/block), make([]float32, rows*cols)
	must(t, g.ExecuteHost(h, Host(xt, x), Host(y, yb), Host(scale, sb), Host(z, back)))
	for b := 0; b < rows*cols/block; b++ {
		chunk := x[b*block : (b+1)*block]
		amax := float32(0)
		for _, v := range chunk {
			amax = float32(math.Max(float64(amax), math.Abs(float64(v))))
		}
		if sb[b] != e8m0Of(amax) {
			t.Fatalf("block %d (amax %g): scale byte %d, want %d", b, amax, sb[b], e8m0Of(amax))
		}
		step := math.Ldexp(1, int(sb[b])-127)
		for i, v := range chunk {
			// E4M3 keeps 3 mantissa bits: half an ulp is 1/16 of the value,
			// or half the smallest subnormal (2^-9) times the scale.
			tol := math.Max(math.Abs(float64(v))/16, step*math.Ldexp(1, -10)) * 1.0001
			if d := math.Abs(float64(back[b*block+i] - v)); d > tol {
				t.Fatalf("element %d: %g came back as %g", b*block+i, v, back[b*block+i])
			}
		}
	}
}

// Axis 0 keeps the C default (the last dim); -rank blocks the first dim.
func TestBlockScaleAxis(t *testing.T) {
	g := newGraph(t)
	x := must1[Tensor](t)(g.AddTensor("x", DTypeFloat, []int64{64, 96}, nil))
	_, last, err := g.BlockScaleQuantize(x, &BlockScaleOptions{})
	must(t, err)
	_, first, err := g.BlockScaleQuantize(x, &BlockScaleOptions{Axis: -2})
	must(t, err)
	if d := must1[[]int64](t)(g.Dims(last)); !reflect.DeepEqual(d, []int64{64, 3}) {
		t.Fatalf("default axis: scale dims %v", d)
	}
	if d := must1[[]int64](t)(g.Dims(first)); !reflect.DeepEqual(d, []int64{2, 96}) {
		t.Fatalf("Axis -2: scale dims %v", d)
	}
	if o := DefaultBlockScaleOptions(); o.BlockSize != 32 || o.Axis != -1 || o.YDType != DTypeFP8E4M3 {
		t.Fatalf("defaults %+v", o)
	}
}

func TestBlockScaleBadInput(t *testing.T) {
	g := newGraph(t)
	x := must1[Tensor](t)(g.AddTensor("x_odd", DTypeFloat, []int64{2, 48}, nil))
	_, _, err := g.BlockScaleQuantize(x, &BlockScaleOptions{Name: "q"})
	if err == nil {
		err = g.Validate()
	}
	wantErr(t, err, ErrInvalidGraph, "q", "x_odd", "48")

	g = newGraph(t)
	x8 := must1[Tensor](t)(g.AddTensor("x8", DTypeFP8E4M3, []int64{2, 64}, nil))
	sc := must1[Tensor](t)(g.AddTensor("scale_bad", DTypeFP8E8M0, []int64{2, 3}, nil))
	_, err = g.BlockScaleDequantize(x8, sc, &BlockScaleOptions{Name: "dq"})
	if err == nil {
		err = g.Validate()
	}
	wantErr(t, err, ErrInvalidGraph, "dq", "scale_bad")

	_, err = g.BlockScaleDequantize(x8, sc, &BlockScaleOptions{BlockSize: 1 << 40})
	wantErr(t, err, ErrInvalidArgument, "BlockSize")
}

// moeInputs adds token [1, t, k], weight [e, k, n] (strides [k*n, 1, k],
// cudnn-frontend's layout) and groups group starts.
func moeInputs(t *testing.T, g *Graph, tk, k, e, n, groups int64) (token, weight, offsets Tensor) {
	token = must1[Tensor](t)(g.AddTensor("token", DTypeFloat, []int64{1, tk, k}, nil))
	weight = must1[Tensor](t)(g.AddTensor("weight", DTypeFloat, []int64{e, k, n}, []int64{k * n, 1, k}))
	offsets = must1[Tensor](t)(g.AddTensor("first_token_offset", DTypeInt32, []int64{groups, 1, 1}, nil))
	return token, weight, offsets
}

// smallInts returns integers in [-3, 3] (exact in float32 sums).
func smallInts(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.Intn(7) - 3)
	}
	return v
}

func TestMoeGroupedMatmulNoneModeAndBackward(t *testing.T) {
	const tk, k, e, n = 10, 5, 3, 4
	offsets := []int32{0, 2, 2} // the second group is empty
	bounds := []int{0, 2, 2, tk}
	rng := rand.New(rand.NewSource(19))
	token, weight, dout := smallInts(rng, tk*k), smallInts(rng, e*k*n), smallInts(rng, tk*n)
	w := func(ei, kk, nn int) float32 { return weight[ei*k*n+nn*k+kk] }

	g, h := newGraph(t), newHandle(t)
	tt, wt, ot := moeInputs(t, g, tk, k, e, n, 3)
	out, err := g.MoeGroupedMatmul(tt, wt, ot, 0, 0, &MoeGroupedMatmulOptions{Name: "moe", ComputeDType: DTypeFloat})
	must(t, err)
	must(t, g.SetOutput(out, true))
	must(t, g.SetTensorDType(out, DTypeFloat))
	must(t, g.Build(h, cpuBuild))
	got := make([]float32, tk*n)
	must(t, g.ExecuteHost(h, Host(tt, token), Host(wt, weight), Host(ot, offsets), Host(out, got)))
	want := make([]float32, tk*n)
	for grp := 0; grp < e; grp++ {
		for r := bounds[grp]; r < bounds[grp+1]; r++ {
			for nn := 0; nn < n; nn++ {
				for kk := 0; kk < k; kk++ {
					want[r*n+nn] += token[r*k+kk] * w(grp, kk, nn)
				}
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("output %v, want %v", got, want)
	}

	g = newGraph(t)
	dt := must1[Tensor](t)(g.AddTensor("doutput", DTypeFloat, []int64{1, tk, n}, nil))
	tt = must1[Tensor](t)(g.AddTensor("token", DTypeFloat, []int64{1, tk, k}, nil))
	ot = must1[Tensor](t)(g.AddTensor("first_token_offset", DTypeInt32, []int64{3, 1, 1}, nil))
	dw, err := g.MoeGroupedMatmulBackward(dt, tt, ot, &MoeGroupedMatmulOptions{Name: "moe_bwd"})
	must(t, err)
	must(t, g.SetOutput(dw, true))
	must(t, g.SetTensorDType(dw, DTypeFloat))
	if _, st, _ := g.Shape(dw); !reflect.DeepEqual(st, []int64{k * n, 1, k}) {
		t.Fatalf("dweight strides %v", st)
	}
	must(t, g.Build(h, cpuBuild))
	gotW := make([]float32, e*k*n)
	must(t, g.ExecuteHost(h, Host(dt, dout), Host(tt, token), Host(ot, offsets), Host(dw, gotW)))
	wantW := make([]float32, e*k*n)
	for grp := 0; grp < e; grp++ {
		for r := bounds[grp]; r < bounds[grp+1]; r++ {
			for kk := 0; kk < k; kk++ {
				for nn := 0; nn < n; nn++ {
					wantW[grp*k*n+nn*k+kk] += token[r*k+kk] * dout[r*n+nn]
				}
			}
		}
	}
	if !reflect.DeepEqual(gotW, wantW) {
		t.Fatalf("dweight %v, want %v", gotW, wantW)
	}
}

func TestMoeGroupedMatmulGather(t *testing.T) {
	const tk, k, e, n, r = 4, 3, 2, 5, 6
	rng := rand.New(rand.NewSource(21))
	token, weight := smallInts(rng, tk*k), smallInts(rng, e*k*n)
	index := []int32{3, 0, 1, 3, 2, 0}
	offsets := []int32{0, 2}
	g, h := newGraph(t), newHandle(t)
	tt, wt, ot := moeInputs(t, g, tk, k, e, n, 2)
	it := must1[Tensor](t)(g.AddTensor("token_index", DTypeInt32, []int64{1, r, 1}, nil))
	out, err := g.MoeGroupedMatmul(tt, wt, ot, it, 0, &MoeGroupedMatmulOptions{Mode: MoeModeGather})
	must(t, err)
	must(t, g.SetOutput(out, true))
	must(t, g.SetTensorDType(out, DTypeFloat))
	must(t, g.Build(h, cpuBuild))
	got := make([]float32, r*n)
	must(t, g.ExecuteHost(h, Host(tt, token), Host(wt, weight), Host(ot, offsets), Host(it, index), Host(out, got)))
	want := make([]float32, r*n)
	for row := 0; row < r; row++ {
		ex := 0
		if row >= 2 {
			ex = 1
		}
		for nn := 0; nn < n; nn++ {
			for kk := 0; kk < k; kk++ {
				want[row*n+nn] += token[int(index[row])*k+kk] * weight[ex*k*n+nn*k+kk]
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("gather %v, want %v", got, want)
	}
}

func TestMoeGroupedMatmulBadInput(t *testing.T) {
	g := newGraph(t)
	tt, wt, ot := moeInputs(t, g, 4, 5, 2, 3, 2)
	_, err := g.MoeGroupedMatmul(tt, wt, ot, 0, 0, &MoeGroupedMatmulOptions{Name: "moe_g", Mode: MoeModeGather})
	if err == nil {
		err = g.Validate()
	}
	wantErr(t, err, ErrInvalidGraph, "moe_g", "token_index")

	g = newGraph(t)
	dt := must1[Tensor](t)(g.AddTensor("doutput", DTypeFloat, []int64{1, 4, 3}, nil))
	tt = must1[Tensor](t)(g.AddTensor("token_short", DTypeFloat, []int64{1, 5, 2}, nil))
	ot = must1[Tensor](t)(g.AddTensor("first_token_offset", DTypeInt32, []int64{2, 1, 1}, nil))
	_, err = g.MoeGroupedMatmulBackward(dt, tt, ot, &MoeGroupedMatmulOptions{Name: "moe_b"})
	if err == nil {
		err = g.Validate()
	}
	wantErr(t, err, ErrInvalidGraph, "moe_b", "token_short")
}

// matmulGraph builds c = a @ b for a [1, m, k] and b [1, k, n] on the CPU
// reference, with OverrideShapeEnabled when asked.
func matmulGraph(t *testing.T, h *Handle, m, k, n int64, overrides bool) (g *Graph, a, b, c Tensor) {
	g = newGraph(t)
	a = must1[Tensor](t)(g.AddTensor("a", DTypeFloat, []int64{1, m, k}, nil))
	b = must1[Tensor](t)(g.AddTensor("b", DTypeFloat, []int64{1, k, n}, nil))
	c = must1[Tensor](t)(g.Matmul(a, b, nil))
	must(t, g.SetOutput(c, true))
	must(t, g.Build(h, &BuildOptions{Target: TargetCPUReference, OverrideShapeEnabled: overrides}))
	return g, a, b, c
}

func TestExecuteWithOverridesMatchesAFreshGraph(t *testing.T) {
	const m, k, n, m2 = 6, 4, 3, 2
	rng := rand.New(rand.NewSource(20))
	av, bv := randFloats(rng, m2*k, 1), randFloats(rng, k*n, 1)
	h := newHandle(t)
	g, a, b, c := matmulGraph(t, h, m, k, n, true)
	ca, cb, cc := cmem.From(av), cmem.From(bv), cmem.Alloc(m2*n*4)
	defer func() { ca.Free(); cb.Free(); cc.Free() }()
	bindings := []Binding{{a, ca.Addr()}, {b, cb.Addr()}, {c, cc.Addr()}}
	overrides := []ShapeOverride{
		{Tensor: a, Dims: []int64{1, m2, k}, Strides: []int64{m2 * k, k, 1}},
		{Tensor: c, Dims: []int64{1, m2, n}, Strides: []int64{m2 * n, n, 1}},
	}
	must(t, g.ExecuteWithOverrides(h, bindings, overrides, 0, 0, 0))

	small, a2, b2, c2 := matmulGraph(t, h, m2, k, n, false)
	want := make([]float32, m2*n)
	must(t, small.ExecuteHost(h, Host(a2, av), Host(b2, bv), Host(c2, want)))
	if got := cmem.View[float32](cc); !reflect.DeepEqual(got, want) {
		t.Fatalf("with overrides %v, fresh graph %v", got, want)
	}

	// Bad overrides: c left at its built shape, and mismatched lengths.
	err := g.ExecuteWithOverrides(h, bindings, overrides[:1], 0, 0, 0)
	wantErr(t, err, ErrInvalidArgument, "give it an override too")
	err = g.ExecuteWithOverrides(h, bindings, []ShapeOverride{{Tensor: a, Dims: []int64{1, 2, 4}}}, 0, 0, 0)
	wantErr(t, err, ErrInvalidArgument, "overrides[0]", "3 dims and 0 strides")
	// A graph built without OverrideShapeEnabled refuses.
	plain, pa, pb, pc := matmulGraph(t, h, m2, k, n, false)
	err = plain.ExecuteWithOverrides(h, []Binding{{pa, ca.Addr()}, {pb, cb.Addr()}, {pc, cc.Addr()}}, nil, 0, 0, 0)
	wantErr(t, err, ErrWrongState)
}

func TestKernelCacheRoundTripAndErrors(t *testing.T) {
	k, err := NewKernelCache()
	must(t, err)
	defer k.Close()
	_, err = k.Serialize()
	wantErr(t, err, ErrWrongState)
	wantErr(t, k.Deserialize([]byte("not json")), ErrBadSerializedData)
	const text = `{"kernels": []}`
	must(t, k.Deserialize([]byte(text)))
	got, err := k.Serialize()
	must(t, err)
	if string(got) != text {
		t.Fatalf("serialized %q, loaded %q", got, text)
	}
	wantErr(t, k.Deserialize([]byte("{}")), ErrWrongState)

	// A CPU reference build takes the cache; a closed one is refused.
	h := newHandle(t)
	g := newGraph(t)
	x := must1[Tensor](t)(g.AddTensor("x", DTypeFloat, []int64{2}, nil))
	y := must1[Tensor](t)(g.Unary(PointwiseNeg, x, nil))
	must(t, g.SetOutput(y, true))
	must(t, g.Build(h, &BuildOptions{Target: TargetCPUReference, KernelCache: k}))
	out := make([]float32, 2)
	must(t, g.ExecuteHost(h, Host(x, []float32{1, -2}), Host(y, out)))
	if !reflect.DeepEqual(out, []float32{-1, 2}) {
		t.Fatalf("neg: %v", out)
	}
	must(t, k.Close())
	must(t, k.Close())
	_, err = k.Serialize()
	wantErr(t, err, ErrInvalidArgument, "closed")
	g2 := newGraph(t)
	x2 := must1[Tensor](t)(g2.AddTensor("x", DTypeFloat, []int64{2}, nil))
	y2 := must1[Tensor](t)(g2.Unary(PointwiseNeg, x2, nil))
	must(t, g2.SetOutput(y2, true))
	wantErr(t, g2.Build(h, &BuildOptions{Target: TargetCPUReference, KernelCache: k}), ErrInvalidArgument, "KernelCache is closed")
}
