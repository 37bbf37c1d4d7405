package cudnnfe

import (
	"errors"
	"math"
	"math/rand"
	"strings"
	"testing"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func must1[T any](t testing.TB) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func newGraph(t testing.TB) *Graph {
	t.Helper()
	g, err := NewGraph()
	must(t, err)
	t.Cleanup(func() { g.Close() })
	return g
}

func newHandle(t testing.TB) *Handle {
	t.Helper()
	h, err := NewHandle(-1)
	must(t, err)
	t.Cleanup(func() { h.Close() })
	return h
}

var cpuBuild = &BuildOptions{Target: TargetCPUReference}

// logical reads buf, laid out as the graph's dims and strides for x say
// (channels-last for convolution and pooling outputs), back in row-major
// logical order.
func logical[T any](t testing.TB, g *Graph, x Tensor, buf []T) []T {
	t.Helper()
	d, s, err := g.Shape(x)
	must(t, err)
	count := 1
	for _, n := range d {
		count *= int(n)
	}
	out := make([]T, count)
	index := make([]int64, len(d))
	for i := range out {
		off := int64(0)
		for k := range d {
			off += index[k] * s[k]
		}
		out[i] = buf[off]
		for k := len(d) - 1; k >= 0; k-- {
			if index[k]++; index[k] < d[k] {
				break
			}
			index[k] = 0
		}
	}
	return out
}

// wantErr checks err's kind, and that its message contains every fragment.
func wantErr(t testing.TB, err error, kind error, fragments ...string) *Error {
	t.Helper()
	if err == nil {
		t.Fatalf("expected %v, got nil", kind)
	}
	if !errors.Is(err, kind) {
		t.Fatalf("expected %v, got %v", kind, err)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *Error", err)
	}
	for _, f := range fragments {
		if !strings.Contains(e.Message, f) {
			t.Errorf("message %q does not contain %q", e.Message, f)
		}
	}
	return e
}

func randFloats(rng *rand.Rand, n int, scale float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = scale * (2*rng.Float32() - 1)
	}
	return s
}

func maxAbsDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	m := 0.0
	for i := range a {
		d := math.Abs(float64(a[i]) - float64(b[i]))
		if math.IsNaN(d) {
			return math.Inf(1)
		}
		if d > m {
			m = d
		}
	}
	return m
}

// refMatmul: c[bt] = a[bt or 0] @ b[bt or 0], row-major packed.
func refMatmul(a, b []float32, batchA, batchB, m, k, n int) []float32 {
	batch := batchA
	if batchB > batch {
		batch = batchB
	}
	c := make([]float32, batch*m*n)
	for bt := 0; bt < batch; bt++ {
		ab, bb := bt%batchA, bt%batchB
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				acc := 0.0
				for x := 0; x < k; x++ {
					acc += float64(a[(ab*m+i)*k+x]) * float64(b[(bb*k+x)*n+j])
				}
				c[(bt*m+i)*n+j] = float32(acc)
			}
		}
	}
	return c
}

// sdpaRef computes attention on packed BHSD float data; causal: 0 none, 1
// top-left, 2 bottom-right. bias is nil or full [b,h_q,s_q,s_kv].
func sdpaRef(q, k, v, bias []float32, b, hq, hkv, sq, skv, d, dv int, scale float64, causal int) (o, stats []float32) {
	o = make([]float32, b*hq*sq*dv)
	stats = make([]float32, b*hq*sq)
	group := hq / hkv
	for bi := 0; bi < b; bi++ {
		for h := 0; h < hq; h++ {
			hk := h / group
			for i := 0; i < sq; i++ {
				last := skv - 1
				if causal == 1 && i < last {
					last = i
				}
				if causal == 2 && i+skv-sq < last {
					last = i + skv - sq
				}
				scores := make([]float64, skv)
				mx := math.Inf(-1)
				for j := 0; j <= last; j++ {
					s := 0.0
					for c := 0; c < d; c++ {
						s += float64(q[((bi*hq+h)*sq+i)*d+c]) * float64(k[((bi*hkv+hk)*skv+j)*d+c])
					}
					s *= scale
					if bias != nil {
						s += float64(bias[((bi*hq+h)*sq+i)*skv+j])
					}
					scores[j] = s
					mx = math.Max(mx, s)
				}
				sum := 0.0
				acc := make([]float64, dv)
				for j := 0; j <= last; j++ {
					p := math.Exp(scores[j] - mx)
					sum += p
					for c := 0; c < dv; c++ {
						acc[c] += p * float64(v[((bi*hkv+hk)*skv+j)*dv+c])
					}
				}
				for c := 0; c < dv; c++ {
					if last >= 0 {
						o[((bi*hq+h)*sq+i)*dv+c] = float32(acc[c] / sum)
					}
				}
				if last >= 0 {
					stats[(bi*hq+h)*sq+i] = float32(mx + math.Log(sum))
				} else {
					stats[(bi*hq+h)*sq+i] = float32(math.Inf(-1))
				}
			}
		}
	}
	return o, stats
}
