package cudnnfe

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"
)

// TestErrorMapping: every status maps to its own sentinel and only to it.
func TestErrorMapping(t *testing.T) {
	sentinels := map[Status]error{
		StatusInvalidArgument: ErrInvalidArgument, StatusInvalidGraph: ErrInvalidGraph,
		StatusNotSupported: ErrNotSupported, StatusCUDNNUnavailable: ErrCUDNNUnavailable,
		StatusCUDAError: ErrCUDAError, StatusCUDNNError: ErrCUDNNError,
		StatusOutOfMemory: ErrOutOfMemory, StatusBadSerializedData: ErrBadSerializedData,
		StatusWrongState: ErrWrongState, StatusInternal: ErrInternal,
		StatusVerifyFailed: ErrVerifyFailed,
	}
	for st, sentinel := range sentinels {
		err := error(&Error{Status: st, Op: "Op", Message: "msg"})
		for other, os := range sentinels {
			if got := errors.Is(err, os); got != (other == st) {
				t.Errorf("errors.Is(%v, %v) = %v", st, os, got)
			}
		}
		if !errors.Is(err, sentinel) || !errors.Is(err, st) {
			t.Errorf("%v does not match its sentinel", st)
		}
		want := "cudnnfe: Op: msg [" + st.String() + "]"
		if err.Error() != want {
			t.Errorf("Error() = %q; want %q", err.Error(), want)
		}
	}
	if len(sentinels) != 11 {
		t.Fatal("a status kind is missing")
	}
	unknown := &Error{Status: 42, Op: "Op"}
	if errors.Is(unknown, ErrInternal) || !strings.Contains(unknown.Error(), "CUDNNFE_STATUS_UNKNOWN") {
		t.Errorf("unknown status: %v", unknown)
	}
}

// TestErrorKinds provokes every kind reachable from bad input without a GPU,
// and checks each message names what went wrong.
func TestErrorKinds(t *testing.T) {
	t.Run("InvalidArgument", func(t *testing.T) {
		g := newGraph(t)
		must(t, g.SetName("bad_args"))
		err := g.SetOutput(9999, true)
		e := wantErr(t, err, ErrInvalidArgument, "no tensor has UID 9999", `"bad_args"`)
		if e.Op != "Graph.SetOutput" || !strings.HasPrefix(err.Error(), "cudnnfe: Graph.SetOutput: ") {
			t.Errorf("Op %q, Error() %q", e.Op, err.Error())
		}
		x, _ := g.AddTensor("x", DTypeFloat, []int64{2, 2}, nil)
		// An input stays one: true is a no-op, false is refused.
		must(t, g.SetOutput(x, true))
		wantErr(t, g.SetOutput(x, false), ErrInvalidArgument, `"x"`, "is a graph input, which cannot be made virtual")
		_, err = g.AddTensor("x", DTypeFloat, []int64{2}, nil)
		wantErr(t, err, ErrInvalidArgument, `a tensor named "x" already exists`)
		_, err = g.FindTensor("nope")
		wantErr(t, err, ErrInvalidArgument, `no tensor named "nope"`)
		wantErr(t, g.SetDims(x, []int64{2, 0}), ErrInvalidArgument, "dims must be positive")
		_, err = g.Pointwise(PointwiseMode(555), x, 0, 0, nil)
		wantErr(t, err, ErrInvalidArgument, "unknown pointwise mode 555")
		_, err = g.SetUID(x, -3)
		wantErr(t, err, ErrInvalidArgument, "UID -3")
		wantErr(t, g.SetIODType(DType(77)), ErrInvalidArgument, "unknown data type 77")
		wantErr(t, objectless("NewHandle", func() int32 {
			var p capi.SwigcptrStruct_SS_cudnnfe_handle
			return capi.Cudnnfe_handle_create(&p, -7)
		}), ErrInvalidArgument, "device -7")
		_, err = NewHandle(-9)
		wantErr(t, err, ErrInvalidArgument, "device -9 is invalid")
		err = g.Build(nil, &BuildOptions{Target: TargetCPUReference, HeurModes: []HeurMode{0, 1, 2, 0, 1}})
		wantErr(t, err, ErrInvalidArgument, "num_heur_modes is 5")
		err = g.Build(nil, &BuildOptions{Target: Target(9)})
		wantErr(t, err, ErrInvalidArgument, "unknown target 9")
	})

	t.Run("InvalidGraph", func(t *testing.T) {
		g := newGraph(t)
		a, _ := g.AddTensor("a", DTypeFloat, []int64{4, 8}, nil)
		b, _ := g.AddTensor("b", DTypeFloat, []int64{7, 3}, nil)
		_, err := g.Matmul(a, b, &MatmulOptions{Name: "proj"})
		wantErr(t, err, ErrInvalidGraph, `matmul "proj"`, `a "a"`, "K = 8", "K = 7")
		if n, _ := g.NodeCount(); n != 0 {
			t.Error("a rejected op was added")
		}
		q, _ := g.AddTensor("q", DTypeHalf, []int64{2, 1024, 64}, nil)
		_, _, err = g.SDPA(q, q, q, &SDPAOptions{Name: "attn"})
		wantErr(t, err, ErrInvalidGraph, `sdpa "attn"`, "q", "[2,1024,64]")
		wantErr(t, g.Validate(), ErrInvalidGraph, "no operations")
		c, err := g.Binary(PointwiseAdd, a, a, nil)
		must(t, err)
		// b and q are read by no op: no refusal (they take no buffer), so
		// the graph's missing output is what validation reports.
		wantErr(t, g.Validate(), ErrInvalidGraph, "no outputs")
		_, err = g.Unary(PointwiseIdentity, b, nil)
		must(t, err)
		_, err = g.Unary(PointwiseIdentity, q, nil)
		must(t, err)
		wantErr(t, g.Validate(), ErrInvalidGraph, "no outputs")
		must(t, g.SetOutput(c, true))
		must(t, g.Validate())
	})

	t.Run("NotSupported", func(t *testing.T) {
		err := objectless("CheckVersion", func() int32 {
			return capi.Cudnnfe_check_version(HeaderVersion+1, ABIVersion)
		})
		wantErr(t, err, ErrNotSupported, "older")
		err = objectless("CheckVersion", func() int32 {
			return capi.Cudnnfe_check_version(HeaderVersion, ABIVersion+1)
		})
		wantErr(t, err, ErrNotSupported, "ABI mismatch")
	})

	t.Run("CUDNNUnavailable", func(t *testing.T) {
		// A child process with a cuDNN path that does not exist: the
		// library must report, not crash.
		if os.Getenv("CUDNNFE_GO_CHILD") == "unavailable" {
			t.Skip("in the child")
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestCUDNNUnavailableChild$", "-test.v")
		cmd.Env = append(os.Environ(), "CUDNNFE_GO_CHILD=unavailable",
			"CUDNNFE_CUDNN_LIBRARY=/nonexistent/libcudnn.so.9")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestCUDNNUnavailableChild") {
			t.Fatalf("child failed: %v\n%s", err, out)
		}
	})

	t.Run("BadSerializedData", func(t *testing.T) {
		_, err := LoadGraph([]byte(`{"format": "cudnnfe.graph", "version": 99}`))
		wantErr(t, err, ErrBadSerializedData, "version")
		_, err = LoadGraph([]byte("{\"format\": \x00"))
		wantErr(t, err, ErrBadSerializedData)
		_, err = LoadGraph(nil)
		wantErr(t, err, ErrBadSerializedData)
		g, _, _, _, _ := matmulBias(t, 1, 2, 2, 2)
		data, err := g.Serialize()
		must(t, err)
		_, err = LoadGraph(data[:len(data)/2])
		wantErr(t, err, ErrBadSerializedData, "byte")
		g2 := newGraph(t)
		_, _ = g2.AddTensor("x", DTypeFloat, []int64{1}, nil)
		wantErr(t, g2.Deserialize(data), ErrInvalidArgument, "not empty")
	})

	t.Run("WrongState", func(t *testing.T) {
		g, a, b, _, _ := matmulBias(t, 1, 2, 2, 2)
		_, err := g.WorkspaceSize()
		wantErr(t, err, ErrWrongState, "not built")
		_, err = g.Target()
		wantErr(t, err, ErrWrongState, "not built")
		_, err = g.PlanName()
		wantErr(t, err, ErrWrongState, "not built")
		_, err = g.BoundTensors()
		wantErr(t, err, ErrWrongState, "not built")
		h := newHandle(t)
		wantErr(t, g.Execute(h, nil, 0, 0, 0), ErrWrongState, "not built")
		wantErr(t, g.ExecuteHost(h), ErrWrongState, "not built")
		must(t, g.Build(h, cpuBuild))
		_, err = g.Matmul(a, b, nil)
		wantErr(t, err, ErrWrongState, `"matmul_bias" is already built`)
		wantErr(t, g.Build(h, cpuBuild), ErrWrongState, "already built")
	})
}

// TestCUDNNUnavailableChild runs in the child process of
// TestErrorKinds/CUDNNUnavailable only.
func TestCUDNNUnavailableChild(t *testing.T) {
	if os.Getenv("CUDNNFE_GO_CHILD") != "unavailable" {
		t.Skip("run by TestErrorKinds/CUDNNUnavailable in a child process")
	}
	_, err := CUDNNVersion()
	wantErr(t, err, ErrCUDNNUnavailable, "/nonexistent/libcudnn.so.9")
	g, _, _, _, _ := matmulBias(t, 1, 2, 2, 2)
	err = g.Build(nil, &BuildOptions{Target: TargetGPU})
	wantErr(t, err, ErrCUDNNUnavailable)
	t.Logf("as expected: %v", err)
}

// TestExecuteErrors: execute failures come from the handle, with the
// tensor named.
func TestExecuteErrors(t *testing.T) {
	g, a, b, bias, c := matmulBias(t, 1, 2, 3, 2)
	h := newHandle(t)
	must(t, g.Build(h, cpuBuild))
	av, bv, biasv, cv := make([]float32, 6), make([]float32, 6), make([]float32, 4), make([]float32, 4)

	// The library's own checks (raw addresses).
	err := g.Execute(h, []Binding{{a, 1}, {b, 1}, {bias, 1}}, 0, 0, 0)
	wantErr(t, err, ErrInvalidArgument, `"add_bias::out"`, "has no binding")
	err = g.Execute(h, []Binding{{a, 1}, {a, 1}}, 0, 0, 0)
	wantErr(t, err, ErrInvalidArgument, `"A"`, "bound twice")
	err = g.Execute(h, []Binding{{4242, 1}}, 0, 0, 0)
	wantErr(t, err, ErrInvalidArgument, "no tensor has UID 4242")
	err = g.Execute(h, []Binding{{a, 0}}, 0, 0, 0)
	wantErr(t, err, ErrInvalidArgument, `"A"`, "NULL buffer")
	err = g.ExecuteOrdered(h, []uintptr{1, 2}, 0, 0, 0)
	wantErr(t, err, ErrInvalidArgument, "2 pointers given for 4 bound tensors")
	mm, _ := g.FindTensor("mm::c")
	err = g.Execute(h, []Binding{{mm, 1}}, 0, 0, 0)
	wantErr(t, err, ErrInvalidArgument, `"mm::c"`, "virtual")

	// This package's checks on Go slices.
	err = g.ExecuteHost(h, Host(a, av), Host(b, bv), Host(bias, biasv))
	wantErr(t, err, ErrInvalidArgument, `"add_bias::out"`, "has no buffer")
	err = g.ExecuteHost(h, Host(a, av), Host(b, bv), Host(bias, biasv), Host(c, cv[:3]))
	wantErr(t, err, ErrInvalidArgument, `"add_bias::out" needs 16 bytes`, "holds 12")
	err = g.ExecuteHost(h, Host(a, av), Host(b, bv), Host(bias, biasv), Host(c, make([]uint16, 8)))
	wantErr(t, err, ErrInvalidArgument, `"add_bias::out" is FLOAT but the slice holds uint16`)
	err = g.ExecuteHost(h, Host(a, av), Host(a, av))
	wantErr(t, err, ErrInvalidArgument, `"A"`, "bound twice")
	err = g.ExecuteHost(h, Host(mm, cv))
	wantErr(t, err, ErrInvalidArgument, "is not bound")
	err = g.ExecuteHost(nil, Host(a, av))
	wantErr(t, err, ErrInvalidArgument, "handle is nil")
	wantErr(t, g.Execute(h, nil, 0, -1, 0), ErrInvalidArgument, "negative")
	_, err = g.BufferSize(mm)
	wantErr(t, err, ErrInvalidArgument, "not bound")
	// The handle still works after errors.
	must(t, g.ExecuteHost(h, Host(a, av), Host(b, bv), Host(bias, biasv), Host(c, cv)))
}

// TestGoSideChecks: argument errors this package raises before calling C
// carry the same kinds.
func TestGoSideChecks(t *testing.T) {
	g := newGraph(t)
	x, _ := g.AddTensor("x", DTypeFloat, []int64{1, 1, 4, 4}, nil)
	_, err := g.AddTensor("bad\x00name", DTypeFloat, []int64{1}, nil)
	wantErr(t, err, ErrInvalidArgument, "NUL byte")
	wantErr(t, g.SetName("a\x00b"), ErrInvalidArgument, "NUL byte")
	_, err = g.Matmul(x, x, &MatmulOptions{Name: "m\x00"})
	wantErr(t, err, ErrInvalidArgument, "NUL byte")
	_, err = g.AddTensor("nine", DTypeFloat, make([]int64, 9), nil)
	wantErr(t, err, ErrInvalidArgument, "9 entries; expected 1 to 8")
	_, err = g.AddTensor("empty", DTypeFloat, nil, nil)
	wantErr(t, err, ErrInvalidArgument, "0 entries")
	_, err = g.AddTensor("short", DTypeFloat, []int64{2, 2}, []int64{1})
	wantErr(t, err, ErrInvalidArgument, "1 strides for 2 dims")
	_, err = g.ConvFprop(x, x, &ConvOptions{Stride: []int64{1, 1, 1, 1}})
	wantErr(t, err, ErrInvalidArgument, "Stride has 4 entries")
	_, err = g.ConvFprop(x, x, &ConvOptions{SpatialDims: 4})
	wantErr(t, err, ErrInvalidArgument, "SpatialDims is 4")
	_, err = g.Reduction(ReductionAdd, x, &ReductionOptions{Axes: []int{9}})
	wantErr(t, err, ErrInvalidArgument, "axis 9")

	// Closed objects.
	g2, _ := NewGraph()
	must(t, g2.Close())
	_, err = g2.AddTensor("x", DTypeFloat, []int64{1}, nil)
	wantErr(t, err, ErrInvalidArgument, "graph is closed")
	_, err = g2.WorkspaceSize()
	wantErr(t, err, ErrInvalidArgument, "graph is closed")
	h, _ := NewHandle(-1)
	must(t, h.Close())
	wantErr(t, g.Build(h, cpuBuild), ErrInvalidArgument, "handle is closed")
	h2 := newHandle(t)
	wantErr(t, g2.Execute(h2, nil, 0, 0, 0), ErrInvalidArgument, "graph is closed")
	wantErr(t, g.Execute(h, nil, 0, 0, 0), ErrInvalidArgument, "handle is closed")
}
