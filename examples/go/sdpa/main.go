// Causal scaled dot-product attention, BF16 in and out with FP32 compute:
// O = softmax(Q·Kᵀ/sqrt(d) + causal mask)·V with q [2,8,128,64] and grouped
// k, v [2,2,128,64] (GQA), plus the log-sum-exp stats. Runs on the GPU when
// there is one (else on the CPU reference; -target picks) and checks O and
// the stats against a plain Go computation.
//
//	go run ./sdpa                   (from examples/go)
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

const b, hq, hkv, s, d = 2, 8, 2, 128, 64

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
	for _, err := range []error{
		g.SetName("causal_attention"),
		g.SetIODType(cudnnfe.DTypeBFloat16),
		g.SetIntermediateDType(cudnnfe.DTypeFloat),
		g.SetComputeDType(cudnnfe.DTypeFloat),
	} {
		if err != nil {
			return err
		}
	}
	q, err := g.AddTensor("q", cudnnfe.DTypeNotSet, []int64{b, hq, s, d}, nil)
	if err != nil {
		return err
	}
	k, err := g.AddTensor("k", cudnnfe.DTypeNotSet, []int64{b, hkv, s, d}, nil)
	if err != nil {
		return err
	}
	v, err := g.AddTensor("v", cudnnfe.DTypeNotSet, []int64{b, hkv, s, d}, nil)
	if err != nil {
		return err
	}
	o, stats, err := g.SDPA(q, k, v, &cudnnfe.SDPAOptions{Name: "attn", CausalMask: true, GenerateStats: true})
	if err != nil {
		return err
	}
	if err := g.SetOutput(o, true); err != nil {
		return err
	}
	if err := g.SetOutput(stats, true); err != nil {
		return err
	}

	rng := rand.New(rand.NewSource(3))
	random := func(count int) []uint16 {
		x := make([]uint16, count)
		for i := range x {
			x[i] = cudnnfe.Float32ToBFloat16(2*rng.Float32() - 1)
		}
		return x
	}
	qh, kh, vh := random(b*hq*s*d), random(b*hkv*s*d), random(b*hkv*s*d)
	oh, st := make([]uint16, b*hq*s*d), make([]float32, b*hq*s)
	if err := exrun.BuildAndRun(g, target, []exrun.Buffer{{Tensor: q, Data: qh}, {Tensor: k, Data: kh},
		{Tensor: v, Data: vh}, {Tensor: o, Data: oh}, {Tensor: stats, Data: st}}); err != nil {
		return err
	}
	plan, _ := g.PlanName()

	// Reference in float64 from the same BF16 inputs.
	f := cudnnfe.BFloat16ToFloat32
	scale := 1 / math.Sqrt(d)
	maxErrO, maxErrS := 0.0, 0.0
	scores := make([]float64, s)
	for bi := 0; bi < b; bi++ {
		for h := 0; h < hq; h++ {
			hk := h / (hq / hkv) // consecutive q heads share a kv head
			for i := 0; i < s; i++ {
				mx := math.Inf(-1)
				for j := 0; j <= i; j++ { // causal: row i sees columns <= i
					dot := 0.0
					for c := 0; c < d; c++ {
						dot += float64(f(qh[((bi*hq+h)*s+i)*d+c])) * float64(f(kh[((bi*hkv+hk)*s+j)*d+c]))
					}
					scores[j] = dot * scale
					mx = math.Max(mx, scores[j])
				}
				sum := 0.0
				for j := 0; j <= i; j++ {
					scores[j] = math.Exp(scores[j] - mx)
					sum += scores[j]
				}
				for c := 0; c < d; c++ {
					acc := 0.0
					for j := 0; j <= i; j++ {
						acc += scores[j] * float64(f(vh[((bi*hkv+hk)*s+j)*d+c]))
					}
					got := float64(f(oh[((bi*hq+h)*s+i)*d+c]))
					maxErrO = math.Max(maxErrO, math.Abs(got-acc/sum))
				}
				maxErrS = math.Max(maxErrS, math.Abs(float64(st[(bi*hq+h)*s+i])-(mx+math.Log(sum))))
			}
		}
	}
	const tolO, tolS = 2e-2, 1e-3
	fmt.Printf("causal SDPA q [%d,%d,%d,%d], k/v [%d,%d,%d,%d] (BF16) on %v (%s): max abs error O %.3g (tolerance %.0e), stats %.3g (tolerance %.0e)\n",
		b, hq, s, d, b, hkv, s, d, target, plan, maxErrO, tolO, maxErrS, tolS)
	if !(maxErrO <= tolO && maxErrS <= tolS) {
		return fmt.Errorf("errors exceed the tolerances")
	}
	return nil
}
