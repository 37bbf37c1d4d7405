// Matmul followed by a bias add: C[8,64,64] = A[8,64,256] @ B[8,256,64] +
// bias[1,64,64], FP16 in and out, FP32 compute. Runs on the GPU when there
// is one (else on the CPU reference; -target picks) and checks the result
// against a plain Go loop.
//
//	go run ./matmul_bias            (from examples/go)
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"

	cudnnfe "github.com/cudnnfe/cudnnfe/bindings/go"
	"github.com/cudnnfe/cudnnfe/examples/go/internal/exrun"
)

const batch, m, n, k = 8, 64, 64, 256

func main() {
	target := flag.String("target", "auto", "auto, gpu or cpu")
	flag.Parse()
	if err := run(*target); err != nil {
		fmt.Fprintln(os.Stderr, err)
		fmt.Println("FAILED")
		os.Exit(1)
	}
	fmt.Println("OK")
}

func run(targetFlag string) error {
	target, err := exrun.Pick(targetFlag)
	if err != nil {
		return err
	}
	g, err := cudnnfe.NewGraph()
	if err != nil {
		return err
	}
	defer g.Close()

	// Every call returns an error; check as you go, or chain like this.
	var a, b, bias, c, out cudnnfe.Tensor
	steps := []func() error{
		func() error { return g.SetName("matmul_bias") },
		func() error { return g.SetComputeDType(cudnnfe.DTypeFloat) },
		func() error { return g.SetIntermediateDType(cudnnfe.DTypeFloat) },
		func() (err error) { a, err = g.AddTensor("A", cudnnfe.DTypeHalf, []int64{batch, m, k}, nil); return },
		func() (err error) { b, err = g.AddTensor("B", cudnnfe.DTypeHalf, []int64{batch, k, n}, nil); return },
		func() (err error) { bias, err = g.AddTensor("bias", cudnnfe.DTypeHalf, []int64{1, m, n}, nil); return },
		func() (err error) { c, err = g.Matmul(a, b, &cudnnfe.MatmulOptions{Name: "mm"}); return },
		func() (err error) {
			out, err = g.Binary(cudnnfe.PointwiseAdd, c, bias, &cudnnfe.PointwiseOptions{Name: "add_bias"})
			return
		},
		func() error { return g.SetOutput(out, true) },
		func() error { return g.SetTensorDType(out, cudnnfe.DTypeHalf) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}

	rng := rand.New(rand.NewSource(7))
	random := func(count int, scale float32) []uint16 {
		s := make([]uint16, count)
		for i := range s {
			s[i] = cudnnfe.Float32ToHalf(scale * (2*rng.Float32() - 1))
		}
		return s
	}
	ah, bh, biash := random(batch*m*k, 1), random(batch*k*n, 0.1), random(m*n, 1)
	outh := make([]uint16, batch*m*n)
	if err := exrun.BuildAndRun(g, target, []exrun.Buffer{{Tensor: a, Data: ah}, {Tensor: b, Data: bh},
		{Tensor: bias, Data: biash}, {Tensor: out, Data: outh}}); err != nil {
		return err
	}
	plan, _ := g.PlanName()

	maxErr := 0.0
	for bt := 0; bt < batch; bt++ {
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				acc := float32(0)
				for x := 0; x < k; x++ {
					acc += cudnnfe.HalfToFloat32(ah[(bt*m+i)*k+x]) * cudnnfe.HalfToFloat32(bh[(bt*k+x)*n+j])
				}
				acc += cudnnfe.HalfToFloat32(biash[i*n+j])
				got := cudnnfe.HalfToFloat32(outh[(bt*m+i)*n+j])
				maxErr = math.Max(maxErr, math.Abs(float64(got-acc)))
			}
		}
	}
	const tolerance = 1e-2
	fmt.Printf("matmul+bias [%d,%d,%d] @ [%d,%d,%d] + [1,%d,%d] (FP16) on %v (%s): max abs error %.3g (tolerance %.0e)\n",
		batch, m, k, batch, k, n, m, n, target, plan, maxErr, tolerance)
	if !(maxErr <= tolerance) {
		return fmt.Errorf("max abs error %g exceeds %g", maxErr, tolerance)
	}
	return nil
}
