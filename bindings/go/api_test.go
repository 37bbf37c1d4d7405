package cudnnfe

import (
	"bytes"
	"math"
	"math/rand"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/cudnnfe/cudnnfe/bindings/go/internal/cmem"
)

func TestVersions(t *testing.T) {
	if v := Version(); v < HeaderVersion {
		t.Errorf("Version() = %d, older than the header (%d)", v, HeaderVersion)
	}
	must(t, CheckVersion())
	n, err := DeviceCount()
	must(t, err)
	if n < 0 {
		t.Errorf("DeviceCount() = %d", n)
	}
	if v, err := CUDNNVersion(); err != nil {
		wantErr(t, err, ErrCUDNNUnavailable)
		t.Logf("cuDNN not available here: %v", err)
	} else if v < 90000 {
		t.Errorf("CUDNNVersion() = %d; cudnnfe needs cuDNN 9", v)
	} else {
		t.Logf("cuDNN %d, %d device(s)", v, n)
	}
}

func TestNames(t *testing.T) {
	for _, c := range []struct {
		d    DType
		name string
		size int
	}{
		{DTypeNotSet, "NOT_SET", 0}, {DTypeFloat, "FLOAT", 4}, {DTypeHalf, "HALF", 2},
		{DTypeBFloat16, "BFLOAT16", 2}, {DTypeFP8E4M3, "FP8_E4M3", 1}, {DTypeFP8E5M2, "FP8_E5M2", 1},
		{DTypeInt8, "INT8", 1}, {DTypeInt32, "INT32", 4}, {DTypeInt64, "INT64", 8},
		{DTypeBoolean, "BOOLEAN", 1}, {DTypeUint8, "UINT8", 1}, {DTypeDouble, "DOUBLE", 8},
		{DType(99), "UNKNOWN", 0},
	} {
		if c.d.String() != c.name || c.d.Size() != c.size {
			t.Errorf("DType %d: got %q size %d; want %q size %d", int(c.d), c.d.String(), c.d.Size(), c.name, c.size)
		}
	}
	statuses := map[Status]string{
		StatusOK: "OK", StatusInvalidArgument: "INVALID_ARGUMENT", StatusInvalidGraph: "INVALID_GRAPH",
		StatusNotSupported: "NOT_SUPPORTED", StatusCUDNNUnavailable: "CUDNN_UNAVAILABLE",
		StatusCUDAError: "CUDA_ERROR", StatusCUDNNError: "CUDNN_ERROR", StatusOutOfMemory: "OUT_OF_MEMORY",
		StatusBadSerializedData: "BAD_SERIALIZED_DATA", StatusWrongState: "WRONG_STATE",
		StatusInternal: "INTERNAL", StatusVerifyFailed: "VERIFY_FAILED", Status(1234): "UNKNOWN",
	}
	for s, name := range statuses {
		if s.String() != "CUDNNFE_STATUS_"+name {
			t.Errorf("Status(%d).String() = %q", int(s), s.String())
		}
	}
	if PointwiseGeluApproxTanhBwd.String() != "GELU_APPROX_TANH_BWD" || PointwiseMode(7777).String() != "PointwiseMode(7777)" {
		t.Errorf("pointwise names: %v %v", PointwiseGeluApproxTanhBwd, PointwiseMode(7777))
	}
	if len(pointwiseNames) != 51 {
		t.Errorf("%d pointwise modes named; the C ABI has 51", len(pointwiseNames))
	}
	if ReductionMulNoZeros.String() != "MUL_NO_ZEROS" || TargetCPUReference.String() != "CPU_REFERENCE" ||
		HeurModeFallback.String() != "FALLBACK" || ConvModeConvolution.String() != "CONVOLUTION" {
		t.Error("enum String methods")
	}
}

// TestGraphConstruction covers every graph and tensor setter and getter.
func TestGraphConstruction(t *testing.T) {
	g := newGraph(t)
	if name, err := g.Name(); err != nil || name != "graph" {
		t.Errorf("default name %q, %v", name, err)
	}
	must(t, g.SetName("construction"))
	if name, _ := g.Name(); name != "construction" {
		t.Errorf("Name() = %q", name)
	}
	must(t, g.SetIODType(DTypeHalf))
	must(t, g.SetIntermediateDType(DTypeFloat))
	must(t, g.SetComputeDType(DTypeFloat))

	// NHWC strides on logical NCHW dims.
	x, err := g.AddTensor("x", DTypeNotSet, []int64{2, 3, 4, 5}, []int64{60, 1, 15, 3})
	must(t, err)
	dims, strides, err := g.Shape(x)
	must(t, err)
	if !reflect.DeepEqual(dims, []int64{2, 3, 4, 5}) || !reflect.DeepEqual(strides, []int64{60, 1, 15, 3}) {
		t.Errorf("Shape(x) = %v %v", dims, strides)
	}
	y, err := g.AddTensor("", DTypeFloat, []int64{1, 3, 1, 1}, nil) // packed, automatic name
	must(t, err)
	if _, s, _ := g.Shape(y); !reflect.DeepEqual(s, []int64{3, 1, 1, 1}) {
		t.Errorf("packed strides = %v", s)
	}
	if name, err := g.TensorName(y); err != nil || name == "" {
		t.Errorf("automatic name %q, %v", name, err)
	}
	s, err := g.AddScalar("two", DTypeFloat, 2)
	must(t, err)
	if d, _ := g.TensorDType(x); d != DTypeNotSet {
		t.Errorf("x dtype before validation = %v", d)
	}
	if d, _ := g.TensorDType(y); d != DTypeFloat {
		t.Errorf("y dtype = %v", d)
	}

	sum, err := g.Binary(PointwiseAdd, x, y, &PointwiseOptions{Name: "add"})
	must(t, err)
	if name, _ := g.TensorName(sum); name != "add::out" {
		t.Errorf("output name %q", name)
	}
	if d, _ := g.Dims(sum); !reflect.DeepEqual(d, []int64{2, 3, 4, 5}) {
		t.Errorf("inferred dims %v", d)
	}
	// A scalar takes its consumers' rank: one per rank.
	v, err := g.AddTensor("v", DTypeFloat, []int64{4}, nil)
	must(t, err)
	vs, err := g.Binary(PointwiseMul, v, s, nil)
	must(t, err)
	must(t, g.SetOutput(vs, true))
	must(t, g.SetTensorDType(vs, DTypeFloat)) // else it takes the io type, HALF
	three, err := g.AddScalar("three", DTypeFloat, 3)
	must(t, err)
	scaled, err := g.Binary(PointwiseMul, sum, three, nil)
	must(t, err)
	must(t, g.SetOutput(scaled, true))
	must(t, g.SetTensorName(scaled, "result"))
	if got, err := g.FindTensor("result"); err != nil || got != scaled {
		t.Errorf("FindTensor = %v, %v", got, err)
	}
	must(t, g.SetTensorDType(scaled, DTypeFloat))
	must(t, g.SetStrides(scaled, []int64{60, 20, 5, 1}))
	if _, s, _ := g.Shape(scaled); !reflect.DeepEqual(s, []int64{60, 20, 5, 1}) {
		t.Errorf("SetStrides: %v", s)
	}
	must(t, g.SetDims(scaled, []int64{2, 3, 4, 5}))
	renamed, err := g.SetUID(scaled, 1000)
	must(t, err)
	if renamed != Tensor(1000) || renamed.UID() != 1000 {
		t.Errorf("SetUID returned %v", renamed)
	}
	for tensor, want := range map[Tensor]bool{x: true, y: true, s: false, sum: false, v: true, vs: true, three: false, renamed: true} {
		if b, err := g.IsBound(tensor); err != nil || b != want {
			t.Errorf("IsBound(%v) = %v, %v; want %v", tensor, b, err, want)
		}
	}
	for tensor, want := range map[Tensor]TensorKind{x: TensorKindInput, three: TensorKindScalar, sum: TensorKindVirtual, renamed: TensorKindOutput} {
		if k, err := g.TensorKind(tensor); err != nil || k != want {
			t.Errorf("TensorKind(%v) = %v, %v; want %v", tensor, k, err, want)
		}
	}
	if msg, err := g.LastError(); err != nil || msg != "" {
		t.Errorf("LastError before any failure = %q, %v", msg, err)
	}
	ferr := g.SetOutput(777, true)
	if msg, _ := g.LastError(); ferr == nil || msg != ferr.(*Error).Message {
		t.Errorf("LastError = %q; the error said %v", msg, ferr)
	}
	if n, _ := g.TensorCount(); n != 8 {
		t.Errorf("TensorCount = %d", n)
	}
	if n, _ := g.NodeCount(); n != 3 {
		t.Errorf("NodeCount = %d", n)
	}
	ts, err := g.Tensors()
	must(t, err)
	if !reflect.DeepEqual(ts, []Tensor{x, y, s, sum, v, vs, three, renamed}) {
		t.Errorf("Tensors = %v", ts)
	}
	if built, _ := g.IsBuilt(); built {
		t.Error("IsBuilt before Build")
	}
	must(t, g.Validate())
	if d, _ := g.TensorDType(x); d != DTypeHalf {
		t.Errorf("x dtype after validation = %v; want the io type HALF", d)
	}

	h := newHandle(t)
	if h.Device() != -1 {
		t.Errorf("Device() = %d", h.Device())
	}
	must(t, g.Build(h, cpuBuild))
	if built, _ := g.IsBuilt(); !built {
		t.Error("IsBuilt after Build")
	}
	if tg, err := g.Target(); err != nil || tg != TargetCPUReference {
		t.Errorf("Target = %v, %v", tg, err)
	}
	if ws, err := g.WorkspaceSize(); err != nil || ws != 0 {
		t.Errorf("WorkspaceSize = %d, %v", ws, err)
	}
	if name, err := g.PlanName(); err != nil || name != "cpu_reference" {
		t.Errorf("PlanName = %q, %v", name, err)
	}
	bound, err := g.BoundTensors()
	must(t, err)
	if !reflect.DeepEqual(bound, []Tensor{x, y, v, vs, renamed}) {
		t.Errorf("BoundTensors = %v", bound)
	}
	for tensor, want := range map[Tensor]int64{x: 120 * 2, y: 3 * 4, v: 16, vs: 16, renamed: 120 * 4} {
		if n, err := g.BufferSize(tensor); err != nil || n != want {
			t.Errorf("BufferSize(%v) = %d, %v; want %d", tensor, n, err, want)
		}
	}

	// Run it: x is NHWC HALF, y FLOAT broadcast over channels.
	rng := rand.New(rand.NewSource(1))
	xs := randFloats(rng, 120, 1)
	xh := HalfsFromFloat32s(xs)
	ys := []float32{1, -2, 0.5}
	out := make([]float32, 120)
	vv, vsv := []float32{1, 2, 3, 4}, make([]float32, 4)
	must(t, g.ExecuteHost(h, Host(x, xh), Host(y, ys), Host(renamed, out), Host(v, vv), Host(vs, vsv)))
	if !reflect.DeepEqual(vsv, []float32{2, 4, 6, 8}) {
		t.Errorf("v * scalar = %v", vsv)
	}
	for n := 0; n < 2; n++ {
		for c := 0; c < 3; c++ {
			for hh := 0; hh < 4; hh++ {
				for w := 0; w < 5; w++ {
					xv := HalfToFloat32(xh[n*60+hh*15+w*3+c])
					want := (xv + ys[c]) * 3
					if got := out[n*60+c*20+hh*5+w]; math.Abs(float64(got-want)) > 1e-6 {
						t.Fatalf("out[%d,%d,%d,%d] = %v; want %v", n, c, hh, w, got, want)
					}
				}
			}
		}
	}
}

// matmulBias builds C = A @ B + bias in FLOAT for the CPU reference.
func matmulBias(t testing.TB, batch, m, k, n int64) (g *Graph, a, b, bias, c Tensor) {
	g = newGraph(t)
	must(t, g.SetName("matmul_bias"))
	var err error
	a, err = g.AddTensor("A", DTypeFloat, []int64{batch, m, k}, nil)
	must(t, err)
	b, err = g.AddTensor("B", DTypeFloat, []int64{batch, k, n}, nil)
	must(t, err)
	bias, err = g.AddTensor("bias", DTypeFloat, []int64{1, m, n}, nil)
	must(t, err)
	mm, err := g.Matmul(a, b, &MatmulOptions{Name: "mm"})
	must(t, err)
	c, err = g.Binary(PointwiseAdd, mm, bias, &PointwiseOptions{Name: "add_bias"})
	must(t, err)
	must(t, g.SetOutput(c, true))
	return
}

func TestPassByValue(t *testing.T) {
	g, err := NewGraph()
	must(t, err)
	defer g.Close()
	// A one-element input can be passed by value (host memory read at execute).
	one, err := g.AddTensor("one", DTypeFloat, []int64{1}, nil)
	must(t, err)
	four, err := g.AddTensor("four", DTypeFloat, []int64{4}, nil)
	must(t, err)
	if b, err := g.IsPassByValue(one); err != nil || b {
		t.Errorf("IsPassByValue before SetPassByValue = %v, %v", b, err)
	}
	must(t, g.SetPassByValue(one, true))
	if b, err := g.IsPassByValue(one); err != nil || !b {
		t.Errorf("IsPassByValue = %v, %v; want true", b, err)
	}
	if e := checkMsg(g.SetPassByValue(four, true), ErrInvalidArgument, "4 elements"); e != "" {
		t.Errorf("SetPassByValue of a 4-element input: %s", e)
	}
	half, err := g.AddScalar("half", DTypeFloat, 0.5)
	must(t, err)
	if v, err := g.ScalarValue(half); err != nil || v != 0.5 {
		t.Errorf("ScalarValue = %v, %v; want 0.5", v, err)
	}
	_, err = g.ScalarValue(four)
	if e := checkMsg(err, ErrInvalidArgument, "not a scalar"); e != "" {
		t.Errorf("ScalarValue of an input: %s", e)
	}
}

func TestSetNextOutput(t *testing.T) {
	g, err := NewGraph()
	must(t, err)
	defer g.Close()
	a, err := g.AddTensor("a", DTypeFloat, []int64{4}, nil)
	must(t, err)
	b, err := g.AddTensor("b", DTypeFloat, []int64{4}, nil)
	must(t, err)
	sum, err := g.AddTensor("sum", DTypeFloat, []int64{4}, nil)
	must(t, err)
	// A port the op lacks is refused, naming it; the request is used up.
	must(t, g.SetNextOutput("y", sum))
	_, err = g.Binary(PointwiseAdd, a, b, nil)
	if e := checkMsg(err, ErrInvalidArgument, `has no output "y"`); e != "" {
		t.Errorf("Binary after SetNextOutput(\"y\"): %s", e)
	}
	must(t, g.SetNextOutput("out", sum))
	y, err := g.Binary(PointwiseAdd, a, b, nil)
	must(t, err)
	if y != sum {
		t.Fatalf("the op's output is tensor %d; want the caller's %d", y, sum)
	}
	h := newHandle(t)
	must(t, g.Build(h, cpuBuild))
	av, bv, got := []float32{1, 2, 3, 4}, []float32{10, 20, 30, 40}, make([]float32, 4)
	must(t, g.ExecuteHost(h, Host(a, av), Host(b, bv), Host(sum, got)))
	for i := range got {
		if got[i] != av[i]+bv[i] {
			t.Fatalf("sum[%d] = %g; want %g", i, got[i], av[i]+bv[i])
		}
	}
}

func TestPruneUnreadInputs(t *testing.T) {
	g, err := NewGraph()
	must(t, err)
	defer g.Close()
	x, err := g.AddTensor("x", DTypeFloat, []int64{4}, nil)
	must(t, err)
	unused, err := g.AddTensor("epsilon_bwd", DTypeFloat, []int64{1}, nil)
	must(t, err)
	y, err := g.Unary(PointwiseNeg, x, nil)
	must(t, err)
	must(t, g.SetOutput(y, true))
	must(t, g.SetPruneUnreadInputs(true))
	must(t, g.Validate())
	pruned, err := g.PrunedTensors()
	must(t, err)
	if len(pruned) != 1 || pruned[0] != unused {
		t.Fatalf("pruned %v; want [%d]", pruned, unused)
	}
	_, err = g.Binary(PointwiseAdd, x, unused, nil)
	if e := checkMsg(err, ErrInvalidArgument, "left the graph"); e != "" {
		t.Errorf("Binary reading a pruned input: %s", e)
	}
	h := newHandle(t)
	must(t, g.Build(h, cpuBuild))
	xv, got := []float32{1, -2, 3, -4}, make([]float32, 4)
	// The pruned input needs no buffer (ExecuteHost refuses a buffer for a
	// tensor that is not bound, as it does for an unread input).
	must(t, g.ExecuteHost(h, Host(x, xv), Host(y, got)))
	for i := range got {
		if got[i] != -xv[i] {
			t.Fatalf("y[%d] = %g; want %g", i, got[i], -xv[i])
		}
	}
}

func TestMatmulBiasAllExecuteForms(t *testing.T) {
	const batch, m, k, n = 3, 8, 16, 5
	g, a, b, bias, c := matmulBias(t, batch, m, k, n)
	h := newHandle(t)
	must(t, g.Build(h, cpuBuild))

	rng := rand.New(rand.NewSource(2))
	av, bv, biasv := randFloats(rng, batch*m*k, 1), randFloats(rng, batch*k*n, 1), randFloats(rng, m*n, 1)
	want := refMatmul(av, bv, batch, batch, m, k, n)
	for i := range want {
		want[i] += biasv[i%(m*n)]
	}

	// Go slices.
	got := make([]float32, batch*m*n)
	must(t, g.ExecuteHost(h, Host(a, av), Host(b, bv), Host(bias, biasv), Host(c, got)))
	if d := maxAbsDiff(got, want); d > 1e-4 {
		t.Fatalf("ExecuteHost: max error %g", d)
	}

	// Raw addresses (C heap): Execute with (tensor, address) pairs, and
	// ExecuteOrdered in BoundTensors order.
	ca, cb, cbias, cc := cmem.From(av), cmem.From(bv), cmem.From(biasv), cmem.Alloc(len(got)*4)
	defer func() { ca.Free(); cb.Free(); cbias.Free(); cc.Free() }()
	must(t, g.Execute(h, []Binding{{c, cc.Addr()}, {a, ca.Addr()}, {b, cb.Addr()}, {bias, cbias.Addr()}}, 0, 0, 0))
	if !reflect.DeepEqual(cmem.View[float32](cc), got) {
		t.Fatal("Execute differs from ExecuteHost")
	}
	bound, err := g.BoundTensors()
	must(t, err)
	addr := map[Tensor]uintptr{a: ca.Addr(), b: cb.Addr(), bias: cbias.Addr(), c: cc.Addr()}
	ptrs := make([]uintptr, len(bound))
	for i, tensor := range bound {
		ptrs[i] = addr[tensor]
	}
	copy(cmem.View[float32](cc), make([]float32, len(got)))
	must(t, g.ExecuteOrdered(h, ptrs, 0, 0, 0))
	if !reflect.DeepEqual(cmem.View[float32](cc), got) {
		t.Fatal("ExecuteOrdered differs from ExecuteHost")
	}

	// HostBytes takes raw bytes of any type.
	raw := make([]byte, len(got)*4)
	cbytes := func(f []float32) []byte { return bytesOfFloats(f) }
	must(t, g.ExecuteHost(h, HostBytes(a, cbytes(av)), HostBytes(b, cbytes(bv)), HostBytes(bias, cbytes(biasv)), HostBytes(c, raw)))
	if !bytes.Equal(raw, cbytes(got)) {
		t.Fatal("HostBytes differs")
	}
}

func bytesOfFloats(f []float32) []byte {
	b := make([]byte, 4*len(f))
	for i, v := range f {
		u := math.Float32bits(v)
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	return b
}

// TestReducedPrecisionIO runs a matmul with HALF and BFLOAT16 inputs and
// outputs held in []uint16.
func TestReducedPrecisionIO(t *testing.T) {
	for _, c := range []struct {
		dtype  DType
		encode func([]float32) []uint16
		decode func([]uint16) []float32
		tol    float64
	}{
		{DTypeHalf, HalfsFromFloat32s, Float32sFromHalfs, 1e-2},
		{DTypeBFloat16, BFloat16sFromFloat32s, Float32sFromBFloat16s, 6e-2},
	} {
		t.Run(c.dtype.String(), func(t *testing.T) {
			g := newGraph(t)
			must(t, g.SetIODType(c.dtype))
			a, err := g.AddTensor("a", DTypeNotSet, []int64{4, 32}, nil)
			must(t, err)
			b, err := g.AddTensor("b", DTypeNotSet, []int64{32, 6}, nil)
			must(t, err)
			out, err := g.Matmul(a, b, nil)
			must(t, err)
			must(t, g.SetOutput(out, true))
			h := newHandle(t)
			must(t, g.Build(h, cpuBuild))
			rng := rand.New(rand.NewSource(3))
			ah, bh := c.encode(randFloats(rng, 128, 1)), c.encode(randFloats(rng, 192, 1))
			oh := make([]uint16, 24)
			must(t, g.ExecuteHost(h, Host(a, ah), Host(b, bh), Host(out, oh)))
			want := refMatmul(c.decode(ah), c.decode(bh), 1, 1, 4, 32, 6)
			if d := maxAbsDiff(c.decode(oh), want); d > c.tol {
				t.Errorf("max error %g > %g", d, c.tol)
			}
		})
	}
}

func TestPointwiseModes(t *testing.T) {
	x := []float32{-2, -0.5, 0, 0.25, 1, 3}
	y := []float32{1, 2, -1, 0.5, 1, -4}
	sig := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	unary := []struct {
		mode PointwiseMode
		opts *PointwiseOptions
		f    func(float64) float64
	}{
		{PointwiseNeg, nil, func(v float64) float64 { return -v }},
		{PointwiseAbs, nil, math.Abs},
		{PointwiseExp, nil, math.Exp},
		{PointwiseCeil, nil, math.Ceil},
		{PointwiseFloor, nil, math.Floor},
		{PointwiseSin, nil, math.Sin},
		{PointwiseTanhFwd, nil, math.Tanh},
		{PointwiseSigmoidFwd, nil, sig},
		{PointwiseErf, nil, math.Erf},
		{PointwiseIdentity, nil, func(v float64) float64 { return v }},
		// Default options: no upper clip, so relu(3) = 3.
		{PointwiseReluFwd, nil, func(v float64) float64 { return math.Max(v, 0) }},
		// A zero field keeps its default: only Name set, relu(3) is still 3.
		{PointwiseReluFwd, &PointwiseOptions{Name: "relu_named"}, func(v float64) float64 { return math.Max(v, 0) }},
		{PointwiseReluFwd, &PointwiseOptions{ReluUpperClip: 1}, func(v float64) float64 { return math.Min(math.Max(v, 0), 1) }},
		{PointwiseReluFwd, &PointwiseOptions{ReluLowerClipSlope: 0.1}, func(v float64) float64 {
			if v < 0 {
				return 0.1 * v
			}
			return v
		}},
		{PointwiseEluFwd, &PointwiseOptions{EluAlpha: 0.5}, func(v float64) float64 {
			if v < 0 {
				return 0.5 * (math.Exp(v) - 1)
			}
			return v
		}},
		{PointwiseSwishFwd, nil, func(v float64) float64 { return v * sig(v) }},
		{PointwiseSoftplusFwd, &PointwiseOptions{SoftplusBeta: 2}, func(v float64) float64 { return math.Log1p(math.Exp(2*v)) / 2 }},
	}
	binary := []struct {
		mode PointwiseMode
		f    func(a, b float64) float64
	}{
		{PointwiseAdd, func(a, b float64) float64 { return a + b }},
		{PointwiseSub, func(a, b float64) float64 { return a - b }},
		{PointwiseMul, func(a, b float64) float64 { return a * b }},
		{PointwiseDiv, func(a, b float64) float64 { return a / b }},
		{PointwiseMax, math.Max},
		{PointwiseMin, math.Min},
		{PointwiseAddSquare, func(a, b float64) float64 { return a + b*b }},
		{PointwiseAtan2, math.Atan2},
	}
	run := func(t *testing.T, binary bool, build func(g *Graph, a, b Tensor) (Tensor, error), want func(i int) float64) {
		g := newGraph(t)
		a, err := g.AddTensor("a", DTypeFloat, []int64{2, 3}, nil)
		must(t, err)
		bufs := []HostBuffer{Host(a, x)}
		var b Tensor
		if binary {
			b, err = g.AddTensor("b", DTypeFloat, []int64{2, 3}, nil)
			must(t, err)
			bufs = append(bufs, Host(b, y))
		}
		out, err := build(g, a, b)
		must(t, err)
		must(t, g.SetOutput(out, true))
		h := newHandle(t)
		must(t, g.Build(h, cpuBuild))
		got := make([]float32, 6)
		must(t, g.ExecuteHost(h, append(bufs, Host(out, got))...))
		for i := range got {
			w := want(i)
			if math.Abs(float64(got[i])-w) > 1e-5*math.Max(1, math.Abs(w)) {
				t.Errorf("element %d: got %v want %v", i, got[i], w)
			}
		}
	}
	for _, c := range unary {
		c := c
		t.Run(c.mode.String(), func(t *testing.T) {
			run(t, false, func(g *Graph, a, b Tensor) (Tensor, error) { return g.Unary(c.mode, a, c.opts) },
				func(i int) float64 { return c.f(float64(x[i])) })
		})
	}
	for _, c := range binary {
		c := c
		t.Run(c.mode.String(), func(t *testing.T) {
			run(t, true, func(g *Graph, a, b Tensor) (Tensor, error) { return g.Binary(c.mode, a, b, nil) },
				func(i int) float64 { return c.f(float64(x[i]), float64(y[i])) })
		})
	}
}

// TestCompareSelectIndex covers boolean outputs, BINARY_SELECT and GEN_INDEX.
func TestCompareSelectIndex(t *testing.T) {
	g := newGraph(t)
	a, _ := g.AddTensor("a", DTypeFloat, []int64{2, 3}, nil)
	b, _ := g.AddTensor("b", DTypeFloat, []int64{2, 3}, nil)
	gt, err := g.Binary(PointwiseCmpGt, a, b, &PointwiseOptions{Name: "gt"})
	must(t, err)
	sel, err := g.Pointwise(PointwiseBinarySelect, a, b, gt, &PointwiseOptions{Name: "max_by_select"})
	must(t, err)
	idx, err := g.Unary(PointwiseGenIndex, a, &PointwiseOptions{Name: "col", Axis: 1})
	must(t, err)
	for _, o := range []Tensor{gt, sel, idx} {
		must(t, g.SetOutput(o, true))
	}
	h := newHandle(t)
	must(t, g.Build(h, cpuBuild))
	if d, _ := g.TensorDType(gt); d != DTypeBoolean {
		t.Errorf("CMP_GT output is %v", d)
	}
	if d, _ := g.TensorDType(idx); d != DTypeInt32 {
		t.Errorf("GEN_INDEX output is %v", d)
	}
	av := []float32{1, 5, -1, 2, 2, 0}
	bv := []float32{0, 6, -2, 3, 1, 0}
	gotGt, gotSel, gotIdx := make([]bool, 6), make([]float32, 6), make([]int32, 6)
	must(t, g.ExecuteHost(h, Host(a, av), Host(b, bv), Host(gt, gotGt), Host(sel, gotSel), Host(idx, gotIdx)))
	for i := range av {
		if gotGt[i] != (av[i] > bv[i]) {
			t.Errorf("gt[%d] = %v", i, gotGt[i])
		}
		want := bv[i]
		if av[i] > bv[i] {
			want = av[i]
		}
		if gotSel[i] != want {
			t.Errorf("select[%d] = %v; want %v", i, gotSel[i], want)
		}
		if gotIdx[i] != int32(i%3) {
			t.Errorf("index[%d] = %d", i, gotIdx[i])
		}
	}
}

func TestReduction(t *testing.T) {
	g := newGraph(t)
	x, _ := g.AddTensor("x", DTypeFloat, []int64{2, 3, 4}, nil)
	sum, err := g.Reduction(ReductionAdd, x, &ReductionOptions{Name: "sum_last", Axes: []int{2}})
	must(t, err)
	mx, err := g.Reduction(ReductionMax, x, nil) // every dimension
	must(t, err)
	amax, err := g.Reduction(ReductionAmax, x, &ReductionOptions{Axes: []int{0, 2}, Deterministic: true})
	must(t, err)
	for _, o := range []Tensor{sum, mx, amax} {
		must(t, g.SetOutput(o, true))
	}
	for tensor, want := range map[Tensor][]int64{sum: {2, 3, 1}, mx: {1, 1, 1}, amax: {1, 3, 1}} {
		if d, _ := g.Dims(tensor); !reflect.DeepEqual(d, want) {
			t.Errorf("dims %v; want %v", d, want)
		}
	}
	h := newHandle(t)
	must(t, g.Build(h, cpuBuild))
	xv := randFloats(rand.New(rand.NewSource(4)), 24, 3)
	gs, gm, ga := make([]float32, 6), make([]float32, 1), make([]float32, 3)
	must(t, g.ExecuteHost(h, Host(x, xv), Host(sum, gs), Host(mx, gm), Host(amax, ga)))
	wm := float32(math.Inf(-1))
	for i := 0; i < 6; i++ {
		w := float32(0)
		for j := 0; j < 4; j++ {
			w += xv[i*4+j]
			if xv[i*4+j] > wm {
				wm = xv[i*4+j]
			}
		}
		if math.Abs(float64(gs[i]-w)) > 1e-5 {
			t.Errorf("sum[%d] = %v; want %v", i, gs[i], w)
		}
	}
	if gm[0] != wm {
		t.Errorf("max = %v; want %v", gm[0], wm)
	}
	for c := 0; c < 3; c++ {
		w := float32(0)
		for n := 0; n < 2; n++ {
			for j := 0; j < 4; j++ {
				w = float32(math.Max(float64(w), math.Abs(float64(xv[(n*3+c)*4+j]))))
			}
		}
		if ga[c] != w {
			t.Errorf("amax[%d] = %v; want %v", c, ga[c], w)
		}
	}
}

// TestConvolutions checks conv fprop (padding, stride) against a plain loop,
// and that dgrad and wgrad build and run with the shapes they infer.
func TestConvolutions(t *testing.T) {
	const n, c, hgt, wid, k, r, s = 2, 3, 7, 6, 4, 3, 3
	g := newGraph(t)
	x, _ := g.AddTensor("x", DTypeFloat, []int64{n, c, hgt, wid}, nil)
	w, _ := g.AddTensor("w", DTypeFloat, []int64{k, c, r, s}, nil)
	opts := &ConvOptions{Name: "conv", PrePadding: []int64{1, 1}, PostPadding: []int64{1, 1}, Stride: []int64{2, 1}}
	y, err := g.ConvFprop(x, w, opts)
	must(t, err)
	must(t, g.SetOutput(y, true))
	oh, ow := (hgt+2-r)/2+1, (wid+2-s)/1+1
	if d, _ := g.Dims(y); !reflect.DeepEqual(d, []int64{n, k, int64(oh), int64(ow)}) {
		t.Fatalf("y dims %v", d)
	}
	h := newHandle(t)
	must(t, g.Build(h, cpuBuild))
	rng := rand.New(rand.NewSource(5))
	xv, wv := randFloats(rng, n*c*hgt*wid, 1), randFloats(rng, k*c*r*s, 1)
	got := make([]float32, n*k*oh*ow)
	must(t, g.ExecuteHost(h, Host(x, xv), Host(w, wv), Host(y, got)))
	// y is channels-last (the convolution default); compare in logical order.
	if _, s, _ := g.Shape(y); !reflect.DeepEqual(s, []int64{int64(k * oh * ow), 1, int64(ow * k), k}) {
		t.Errorf("y strides %v; want channels-last", s)
	}
	got = logical(t, g, y, got)
	for in := 0; in < n; in++ {
		for ik := 0; ik < k; ik++ {
			for i := 0; i < oh; i++ {
				for j := 0; j < ow; j++ {
					acc := 0.0
					for ic := 0; ic < c; ic++ {
						for dr := 0; dr < r; dr++ {
							for ds := 0; ds < s; ds++ {
								yy, xx := i*2-1+dr, j-1+ds
								if yy < 0 || yy >= hgt || xx < 0 || xx >= wid {
									continue
								}
								acc += float64(xv[((in*c+ic)*hgt+yy)*wid+xx]) * float64(wv[((ik*c+ic)*r+dr)*s+ds])
							}
						}
					}
					if gv := got[((in*k+ik)*oh+i)*ow+j]; math.Abs(float64(gv)-acc) > 1e-4 {
						t.Fatalf("y[%d,%d,%d,%d] = %v; want %v", in, ik, i, j, gv, acc)
					}
				}
			}
		}
	}

	// dgrad / wgrad with unit stride: shapes round-trip.
	g2 := newGraph(t)
	dy, _ := g2.AddTensor("dy", DTypeFloat, []int64{n, k, 5, 4}, nil)
	w2, _ := g2.AddTensor("w", DTypeFloat, []int64{k, c, r, s}, nil)
	dx, err := g2.ConvDgrad(dy, w2, &ConvOptions{Name: "dgrad"})
	must(t, err)
	x2, _ := g2.AddTensor("x", DTypeFloat, []int64{n, c, 7, 6}, nil)
	dw, err := g2.ConvWgrad(x2, dy, &ConvOptions{Name: "wgrad", Mode: ConvModeConvolution})
	must(t, err)
	must(t, g2.SetOutput(dx, true))
	must(t, g2.SetOutput(dw, true))
	if d, _ := g2.Dims(dx); !reflect.DeepEqual(d, []int64{n, c, 7, 6}) {
		t.Errorf("dx dims %v", d)
	}
	if d, _ := g2.Dims(dw); !reflect.DeepEqual(d, []int64{k, c, 3, 3}) {
		t.Errorf("dw dims %v", d)
	}
	must(t, g2.Build(h, cpuBuild))
	dxv, dwv := make([]float32, n*c*42), make([]float32, k*c*9)
	must(t, g2.ExecuteHost(h, Host(dy, randFloats(rng, n*k*20, 1)), Host(w2, wv), Host(x2, xv), Host(dx, dxv), Host(dw, dwv)))
	if maxAbsDiff(dwv, make([]float32, len(dwv))) == 0 {
		t.Error("wgrad wrote nothing")
	}
}

func TestSDPA(t *testing.T) {
	cases := []struct {
		name                   string
		b, hq, hkv, sq, skv, d int
		dv                     int
		causal                 int
		scale                  float64
		bias, stats            bool
	}{
		{"plain_stats", 1, 2, 2, 5, 5, 8, 8, 0, 0, false, true},
		{"causal_top_left", 2, 2, 2, 6, 6, 4, 4, 1, 0.3, false, true},
		{"causal_bottom_right_gqa", 1, 4, 2, 3, 7, 8, 6, 2, 0, false, true},
		{"bias", 1, 1, 1, 4, 5, 4, 4, 0, 0.5, true, false},
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			g := newGraph(t)
			q, _ := g.AddTensor("q", DTypeFloat, []int64{int64(c.b), int64(c.hq), int64(c.sq), int64(c.d)}, nil)
			k, _ := g.AddTensor("k", DTypeFloat, []int64{int64(c.b), int64(c.hkv), int64(c.skv), int64(c.d)}, nil)
			v, _ := g.AddTensor("v", DTypeFloat, []int64{int64(c.b), int64(c.hkv), int64(c.skv), int64(c.dv)}, nil)
			opts := &SDPAOptions{Name: "attn", AttnScale: c.scale, GenerateStats: c.stats,
				CausalMask: c.causal == 1, CausalMaskBottomRight: c.causal == 2}
			var bias Tensor
			if c.bias {
				bias, _ = g.AddTensor("bias", DTypeFloat, []int64{int64(c.b), int64(c.hq), int64(c.sq), int64(c.skv)}, nil)
				opts.Bias = bias
			}
			o, stats, err := g.SDPA(q, k, v, opts)
			must(t, err)
			if (stats != 0) != c.stats {
				t.Fatalf("stats tensor %v with GenerateStats %v", stats, c.stats)
			}
			must(t, g.SetOutput(o, true))
			if stats != 0 {
				must(t, g.SetOutput(stats, true))
			}
			h := newHandle(t)
			must(t, g.Build(h, cpuBuild))
			rng := rand.New(rand.NewSource(6))
			qv := randFloats(rng, c.b*c.hq*c.sq*c.d, 1)
			kv := randFloats(rng, c.b*c.hkv*c.skv*c.d, 1)
			vv := randFloats(rng, c.b*c.hkv*c.skv*c.dv, 1)
			var biasv []float32
			bufs := []HostBuffer{Host(q, qv), Host(k, kv), Host(v, vv)}
			if c.bias {
				biasv = randFloats(rng, c.b*c.hq*c.sq*c.skv, 1)
				bufs = append(bufs, Host(bias, biasv))
			}
			gotO := make([]float32, c.b*c.hq*c.sq*c.dv)
			gotS := make([]float32, c.b*c.hq*c.sq)
			bufs = append(bufs, Host(o, gotO))
			if stats != 0 {
				bufs = append(bufs, Host(stats, gotS))
			}
			must(t, g.ExecuteHost(h, bufs...))
			scale := c.scale
			if scale == 0 {
				scale = 1 / math.Sqrt(float64(c.d))
			}
			wantO, wantS := sdpaRef(qv, kv, vv, biasv, c.b, c.hq, c.hkv, c.sq, c.skv, c.d, c.dv, scale, c.causal)
			if d := maxAbsDiff(gotO, wantO); d > 1e-5 {
				t.Errorf("O: max error %g", d)
			}
			if stats != 0 {
				if d := maxAbsDiff(gotS, wantS); d > 1e-5 {
					t.Errorf("stats: max error %g", d)
				}
			}
		})
	}
}

// TestSerializeRoundTrip: a loaded graph serializes to the same bytes and
// gives bit-identical results.
func TestSerializeRoundTrip(t *testing.T) {
	g, a, b, bias, c := matmulBias(t, 2, 4, 8, 3)
	data, err := g.Serialize()
	must(t, err)
	g2, err := LoadGraph(data)
	must(t, err)
	defer g2.Close()
	data2, err := g2.Serialize()
	must(t, err)
	if !bytes.Equal(data, data2) {
		t.Fatalf("serialized bytes differ:\n%s\n%s", data, data2)
	}
	h := newHandle(t)
	rng := rand.New(rand.NewSource(7))
	av, bv, biasv := randFloats(rng, 64, 1), randFloats(rng, 48, 1), randFloats(rng, 12, 1)
	var outs [2][]float32
	for i, gr := range []*Graph{g, g2} {
		must(t, gr.Build(h, cpuBuild))
		outs[i] = make([]float32, 24)
		// UIDs are the same numbers in both graphs.
		must(t, gr.ExecuteHost(h, Host(a, av), Host(b, bv), Host(bias, biasv), Host(c, outs[i])))
	}
	if !reflect.DeepEqual(outs[0], outs[1]) {
		t.Fatal("results differ after a round trip")
	}
	if name, _ := g2.TensorName(bias); name != "bias" {
		t.Errorf("loaded tensor name %q", name)
	}
}

// TestOptionDefaults: Default*Options report the C init values, and nil,
// zero-valued and default options build identical graphs.
func TestOptionDefaults(t *testing.T) {
	pw := DefaultPointwiseOptions()
	if pw.ReluUpperClip < 3e38 || pw.EluAlpha != 1 || pw.SoftplusBeta != 1 || pw.SwishBeta != 1 ||
		pw.ReluLowerClip != 0 || pw.ReluLowerClipSlope != 0 || pw.Axis != 0 || pw.ComputeDType != DTypeNotSet {
		t.Errorf("DefaultPointwiseOptions = %+v", pw)
	}
	conv := DefaultConvOptions()
	if !reflect.DeepEqual(conv.Stride, []int64{1, 1, 1}) || !reflect.DeepEqual(conv.Dilation, []int64{1, 1, 1}) ||
		!reflect.DeepEqual(conv.PrePadding, []int64{0, 0, 0}) || conv.Mode != ConvModeCrossCorrelation || conv.SpatialDims != 0 {
		t.Errorf("DefaultConvOptions = %+v", conv)
	}
	if b := DefaultBuildOptions(); b.Target != TargetAuto || !reflect.DeepEqual(b.HeurModes, []HeurMode{HeurModeA, HeurModeFallback}) {
		t.Errorf("DefaultBuildOptions = %+v", b)
	}
	// The band bounds' C default is -1 (open); a zero field also means open.
	if s := DefaultSDPAOptions(); s != (SDPAOptions{AttentionOptions: AttentionOptions{WindowLeft: -1, WindowRight: -1}}) {
		t.Errorf("DefaultSDPAOptions = %+v", s)
	}
	if r := DefaultReductionOptions(); r.Axes != nil || r.Deterministic || r.ComputeDType != 0 {
		t.Errorf("DefaultReductionOptions = %+v", r)
	}
	if m := DefaultMatmulOptions(); m != (MatmulOptions{}) {
		t.Errorf("DefaultMatmulOptions = %+v", m)
	}

	build := func(variant int) []byte {
		g := newGraph(t)
		x, _ := g.AddTensor("x", DTypeFloat, []int64{1, 2, 5, 5}, nil)
		w, _ := g.AddTensor("w", DTypeFloat, []int64{2, 2, 3, 3}, nil)
		q, _ := g.AddTensor("q", DTypeFloat, []int64{1, 1, 4, 4}, nil)
		var (
			co *ConvOptions
			po *PointwiseOptions
			ro *ReductionOptions
			so *SDPAOptions
			mo *MatmulOptions
		)
		switch variant {
		case 1:
			co, po, ro, so, mo = &ConvOptions{}, &PointwiseOptions{}, &ReductionOptions{}, &SDPAOptions{}, &MatmulOptions{}
		case 2:
			c, p, r, s, m := DefaultConvOptions(), DefaultPointwiseOptions(), DefaultReductionOptions(), DefaultSDPAOptions(), DefaultMatmulOptions()
			co, po, ro, so, mo = &c, &p, &r, &s, &m
		}
		y := must1[Tensor](t)(g.ConvFprop(x, w, co))
		y = must1[Tensor](t)(g.Unary(PointwiseReluFwd, y, po))
		y = must1[Tensor](t)(g.Reduction(ReductionAdd, y, ro))
		o, _, err := g.SDPA(q, q, q, so)
		must(t, err)
		o = must1[Tensor](t)(g.Matmul(o, o, mo))
		must(t, g.SetOutput(y, true))
		must(t, g.SetOutput(o, true))
		data, err := g.Serialize()
		must(t, err)
		return data
	}
	base := build(0)
	for v := 1; v <= 2; v++ {
		if got := build(v); !bytes.Equal(got, base) {
			t.Errorf("variant %d serializes differently:\n%s\nvs nil options:\n%s", v, got, base)
		}
	}
}

// TestManyBoundTensors exercises the staged-copy path of ExecuteHost (more
// than 16 bound tensors), and that it never writes input slices.
func TestManyBoundTensors(t *testing.T) {
	const inputs = 12
	g := newGraph(t)
	xs := make([]Tensor, inputs)
	for i := range xs {
		xs[i], _ = g.AddTensor("", DTypeFloat, []int64{3}, nil)
	}
	ys := make([]Tensor, inputs-1)
	for i := range ys {
		ys[i] = must1[Tensor](t)(g.Binary(PointwiseAdd, xs[i], xs[i+1], nil))
		must(t, g.SetOutput(ys[i], true))
	}
	h := newHandle(t)
	must(t, g.Build(h, cpuBuild))
	if b, _ := g.BoundTensors(); len(b) != 2*inputs-1 || len(b) <= 16 {
		t.Fatalf("%d bound tensors", len(b))
	}
	in := make([][]float32, inputs)
	snapshot := make([][]float32, inputs)
	var bufs []HostBuffer
	for i := range in {
		in[i] = []float32{float32(i), float32(10 * i), -1}
		snapshot[i] = append([]float32(nil), in[i]...)
		bufs = append(bufs, Host(xs[i], in[i]))
	}
	out := make([][]float32, inputs-1)
	for i := range out {
		out[i] = make([]float32, 3)
		bufs = append(bufs, Host(ys[i], out[i]))
	}
	must(t, g.ExecuteHost(h, bufs...))
	for i := range out {
		want := []float32{float32(2*i + 1), float32(20*i + 10), -2}
		if !reflect.DeepEqual(out[i], want) {
			t.Errorf("y%d = %v; want %v", i, out[i], want)
		}
	}
	if !reflect.DeepEqual(in, snapshot) {
		t.Error("inputs changed")
	}
}

// TestFinalizers: graphs and handles dropped without Close are released by
// their finalizers.
func TestFinalizers(t *testing.T) {
	base := liveGraphs.Load() + liveHandles.Load()
	func() {
		for i := 0; i < 100; i++ {
			g, err := NewGraph()
			must(t, err)
			_, err = g.AddTensor("x", DTypeFloat, []int64{4}, nil)
			must(t, err)
			_, err = NewHandle(-1)
			must(t, err)
		}
	}()
	if liveGraphs.Load()+liveHandles.Load() < base+200 {
		t.Fatal("objects not counted")
	}
	deadline := time.Now().Add(10 * time.Second)
	for liveGraphs.Load()+liveHandles.Load() > base && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := liveGraphs.Load() + liveHandles.Load(); n > base {
		t.Errorf("%d objects still live after GC", n-base)
	}
}

func TestCloseIsIdempotent(t *testing.T) {
	g, err := NewGraph()
	must(t, err)
	must(t, g.Close())
	must(t, g.Close())
	h, err := NewHandle(0)
	must(t, err)
	must(t, h.Close())
	must(t, h.Close())
}
