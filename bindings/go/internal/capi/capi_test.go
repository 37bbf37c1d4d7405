package capi

import "testing"

// Checks of the typemaps in cudnnfe.i (see docs/design-go.md).

func newGraph(t *testing.T) SwigcptrStruct_SS_cudnnfe_graph {
	var g SwigcptrStruct_SS_cudnnfe_graph
	if st := Cudnnfe_graph_create(&g); st != int32(CUDNNFE_STATUS_OK) || g == 0 {
		t.Fatalf("create: %d", st)
	}
	t.Cleanup(func() { Cudnnfe_graph_destroy(g) })
	return g
}

// int32_t out-parameters are written at their exact width: a Go variable
// holding -1 (all bits set) reads back the C value, not its low half.
func TestInt32OutParams(t *testing.T) {
	g := newGraph(t)
	var uid int64
	if st := Cudnnfe_graph_add_tensor(g, "x", int32(CUDNNFE_DTYPE_FLOAT), []int64{2, 3}, nil, &uid); st != 0 {
		t.Fatal(Cudnnfe_graph_last_error(g))
	}
	ndims := int32(-1)
	dims, strides := make([]int64, 8), make([]int64, 8)
	if st := Cudnnfe_tensor_get_shape(g, uid, &dims[0], &strides[0], 8, &ndims); st != 0 || ndims != 2 {
		t.Fatalf("ndims = %d (status %d)", ndims, st)
	}
	dtype := int32(-1)
	if Cudnnfe_tensor_get_dtype(g, uid, &dtype); dtype != int32(CUDNNFE_DTYPE_FLOAT) {
		t.Fatalf("dtype = %d", dtype)
	}
}

// const char ** out-parameters: copied into Go on success; on failure the
// string is left empty, whatever it held before.
func TestStringOutParams(t *testing.T) {
	g := newGraph(t)
	Cudnnfe_graph_set_name(g, "named")
	name := "previous"
	if st := Cudnnfe_graph_get_name(g, &name); st != 0 || name != "named" {
		t.Fatalf("name %q, status %d", name, st)
	}
	plan := "previous"
	if st := Cudnnfe_graph_get_plan_name(g, &plan); st != int32(CUDNNFE_STATUS_WRONG_STATE) || plan != "" {
		t.Fatalf("plan %q, status %d", plan, st)
	}
	if st := Cudnnfe_graph_get_name(g, nil); st != 0 {
		t.Fatalf("nil *string: status %d", st)
	}
}

// Counted arrays: a slice gives both pointer and count; nil passes NULL.
func TestSliceParams(t *testing.T) {
	g := newGraph(t)
	var uid, count int64
	if st := Cudnnfe_graph_add_tensor(g, "x", int32(CUDNNFE_DTYPE_FLOAT), nil, nil, &uid); st != int32(CUDNNFE_STATUS_INVALID_ARGUMENT) {
		t.Fatalf("nil dims: status %d", st)
	}
	Cudnnfe_graph_add_tensor(g, "x", int32(CUDNNFE_DTYPE_FLOAT), []int64{4}, nil, &uid)
	Cudnnfe_graph_add_tensor(g, "y", int32(CUDNNFE_DTYPE_FLOAT), []int64{4}, nil, &uid)
	if st := Cudnnfe_graph_get_tensor_uids(g, nil, &count); st != 0 || count != 2 {
		t.Fatalf("size query: %d, status %d", count, st)
	}
	short := make([]int64, 1)
	if st := Cudnnfe_graph_get_tensor_uids(g, short, &count); st != int32(CUDNNFE_STATUS_INVALID_ARGUMENT) {
		t.Fatalf("short slice: status %d", st)
	}
	var size int64
	if st := Cudnnfe_graph_serialize(g, make([]byte, 0, 64), &size); st != 0 || size < 16 {
		t.Fatalf("empty slice is a size query: size %d, status %d", size, st)
	}
	if st := Cudnnfe_graph_serialize(g, make([]byte, 5), &size); st != int32(CUDNNFE_STATUS_INVALID_ARGUMENT) {
		t.Fatalf("short buffer: status %d", st)
	}
}
