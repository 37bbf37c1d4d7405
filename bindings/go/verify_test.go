package cudnnfe

import (
	"math/rand"
	"testing"
)

// Verify mode (BuildOptions.Verify, docs/verify.md) reaches the library: a
// right result passes, the library's test hook (CUDNNFE_VERIFY_TEST_CORRUPT)
// plants a wrong element that comes back as ErrVerifyFailed, VerifyOff
// wins over the environment, and bad values are refused.
func TestVerifyModeCPU(t *testing.T) {
	t.Setenv("CUDNNFE_VERIFY", "")
	h := newHandle(t)
	build := func(opts BuildOptions) (*Graph, []Tensor, error) {
		g, a, b, bias, c := matmulBias(t, 2, 4, 8, 3)
		opts.Target = TargetCPUReference
		return g, []Tensor{a, b, bias, c}, g.Build(h, &opts)
	}
	run := func(g *Graph, ts []Tensor) error {
		rng := rand.New(rand.NewSource(3))
		return g.ExecuteHost(h, Host(ts[0], randFloats(rng, 64, 1)), Host(ts[1], randFloats(rng, 48, 1)),
			Host(ts[2], randFloats(rng, 12, 1)), Host(ts[3], make([]float32, 24)))
	}

	g, ts, err := build(BuildOptions{Verify: VerifyOn, VerifySamples: 5, VerifyRtol: 0.01})
	must(t, err)
	got, want := runMatmulBias(t, g, h, ts[0], ts[1], ts[2], ts[3])
	if d := maxAbsDiff(got, want); d > 1e-5 {
		t.Errorf("max |diff| %g with verify on", d)
	}

	t.Setenv("CUDNNFE_VERIFY_TEST_CORRUPT", "1")
	g, ts, err = build(BuildOptions{Verify: VerifyOn, VerifyRtol: 0.01})
	must(t, err)
	wantErr(t, run(g, ts), ErrVerifyFailed, "verify: graph", "differs from the CPU reference",
		"rtol 0.01", "plan cpu_reference")
	wantErr(t, run(g, ts), ErrVerifyFailed, "reported again")

	t.Setenv("CUDNNFE_VERIFY", "1")
	g, ts, err = build(BuildOptions{})
	must(t, err)
	wantErr(t, run(g, ts), ErrVerifyFailed, "worst at index")
	g, ts, err = build(BuildOptions{Verify: VerifyOff})
	must(t, err)
	must(t, run(g, ts))

	_, _, err = build(BuildOptions{Verify: VerifyMode(9)})
	wantErr(t, err, ErrInvalidArgument, "verify is 9")
	_, _, err = build(BuildOptions{VerifySamples: -1})
	wantErr(t, err, ErrInvalidArgument, "VerifySamples -1")
	_, _, err = build(BuildOptions{VerifyRtol: -1})
	wantErr(t, err, ErrInvalidArgument, "verify_rtol is -1")
	if d := DefaultBuildOptions(); d.Verify != VerifyFromEnv || d.VerifySamples != 0 || d.VerifyRtol != 0 {
		t.Errorf("DefaultBuildOptions verify fields: %+v", d)
	}
}
