package cudnnfe_test

import (
	"errors"
	"fmt"
	"log"

	cudnnfe "github.com/cudnnfe/cudnnfe/bindings/go"
)

// A matmul followed by a bias add, run on the CPU reference with Go slices.
func Example() {
	g, err := cudnnfe.NewGraph()
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	a, _ := g.AddTensor("A", cudnnfe.DTypeFloat, []int64{2, 3}, nil)
	b, _ := g.AddTensor("B", cudnnfe.DTypeFloat, []int64{3, 2}, nil)
	bias, _ := g.AddTensor("bias", cudnnfe.DTypeFloat, []int64{1, 2}, nil)
	c, err := g.Matmul(a, b, &cudnnfe.MatmulOptions{Name: "mm"})
	if err != nil {
		log.Fatal(err)
	}
	out, err := g.Binary(cudnnfe.PointwiseAdd, c, bias, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := g.SetOutput(out, true); err != nil {
		log.Fatal(err)
	}

	h, err := cudnnfe.NewHandle(-1) // one per goroutine that executes
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	if err := g.Build(h, &cudnnfe.BuildOptions{Target: cudnnfe.TargetCPUReference}); err != nil {
		log.Fatal(err)
	}
	result := make([]float32, 4)
	err = g.ExecuteHost(h,
		cudnnfe.Host(a, []float32{1, 2, 3, 4, 5, 6}),
		cudnnfe.Host(b, []float32{1, 0, 0, 1, 1, 1}),
		cudnnfe.Host(bias, []float32{10, 20}),
		cudnnfe.Host(out, result))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(result)
	// Output: [14 25 20 31]
}

// Causal attention: with Q·Kᵀ = 0 every visible column gets the same
// weight, so row i of O is the mean of V's rows 0..i.
func ExampleGraph_SDPA() {
	g, _ := cudnnfe.NewGraph()
	defer g.Close()
	dims := []int64{1, 1, 3, 2} // [b, h, s, d]
	q, _ := g.AddTensor("q", cudnnfe.DTypeFloat, dims, nil)
	k, _ := g.AddTensor("k", cudnnfe.DTypeFloat, dims, nil)
	v, _ := g.AddTensor("v", cudnnfe.DTypeFloat, dims, nil)
	o, _, err := g.SDPA(q, k, v, &cudnnfe.SDPAOptions{Name: "attn", CausalMask: true})
	if err != nil {
		log.Fatal(err)
	}
	g.SetOutput(o, true)
	h, _ := cudnnfe.NewHandle(-1)
	defer h.Close()
	if err := g.Build(h, &cudnnfe.BuildOptions{Target: cudnnfe.TargetCPUReference}); err != nil {
		log.Fatal(err)
	}
	zeros := make([]float32, 6)
	out := make([]float32, 6)
	err = g.ExecuteHost(h, cudnnfe.Host(q, zeros), cudnnfe.Host(k, zeros),
		cudnnfe.Host(v, []float32{1, 0, 0, 1, 1, 1}), cudnnfe.Host(o, out))
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		fmt.Printf("row %d: %.3f %.3f\n", i, out[2*i], out[2*i+1])
	}
	// Output:
	// row 0: 1.000 0.000
	// row 1: 0.500 0.500
	// row 2: 0.667 0.667
}

// Errors carry their kind, for errors.Is, and the library's message naming
// the node, the tensors and the rule.
func ExampleError() {
	g, _ := cudnnfe.NewGraph()
	defer g.Close()
	a, _ := g.AddTensor("a", cudnnfe.DTypeFloat, []int64{4, 8}, nil)
	b, _ := g.AddTensor("b", cudnnfe.DTypeFloat, []int64{7, 3}, nil)
	_, err := g.Matmul(a, b, &cudnnfe.MatmulOptions{Name: "proj"})

	fmt.Println(errors.Is(err, cudnnfe.ErrInvalidGraph))
	var e *cudnnfe.Error
	if errors.As(err, &e) {
		fmt.Println(e.Op, e.Status)
	}
	// Output:
	// true
	// Graph.Matmul CUDNNFE_STATUS_INVALID_GRAPH
}

// A graph's JSON description rebuilds it anywhere; tensors keep their UIDs.
func ExampleLoadGraph() {
	g, _ := cudnnfe.NewGraph()
	x, _ := g.AddTensor("x", cudnnfe.DTypeHalf, []int64{8, 16}, nil)
	y, _ := g.Unary(cudnnfe.PointwiseReluFwd, x, &cudnnfe.PointwiseOptions{Name: "relu"})
	g.SetOutput(y, true)
	data, _ := g.Serialize()
	g.Close()

	loaded, err := cudnnfe.LoadGraph(data)
	if err != nil {
		log.Fatal(err)
	}
	defer loaded.Close()
	name, _ := loaded.TensorName(y)
	dims, _ := loaded.Dims(y)
	fmt.Println(name, dims)
	// Output: relu::out [8 16]
}

// FP16 and BF16 tensors are held in Go as []uint16 bit patterns.
func ExampleFloat32ToHalf() {
	h := cudnnfe.Float32ToHalf(1.5)
	bf := cudnnfe.Float32ToBFloat16(1.5)
	fmt.Printf("%#04x %v %#04x %v\n", h, cudnnfe.HalfToFloat32(h), bf, cudnnfe.BFloat16ToFloat32(bf))
	fmt.Println(cudnnfe.HalfToFloat32(cudnnfe.Float32ToHalf(0.1)))
	// Output:
	// 0x3e00 1.5 0x3fc0 1.5
	// 0.099975586
}
