package capi

// Hand-written cgo for the constructs SWIG cannot wrap soundly (see
// cudnnfe.i and docs/design-go.md, "Go binding"):
//
//   - the options structs, whose `name` member and fixed arrays SWIG cannot
//     set soundly: each op is one cgo call that copies a Go-filled struct
//     and points its name at a NUL-terminated Go byte slice, both living only
//     for the call;
//   - execution on host buffers owned by Go (the CPU reference), which must
//     reach C as unsafe.Pointer arguments so that cgo's pointer checks and
//     liveness rules apply — never as uintptr through the generated layer.
//
// Graph and handle pointers are taken as the generated SWIG types and cross
// as uintptr_t, cast back in C, so no uintptr is ever converted to
// unsafe.Pointer in Go.

/*
#include <stdint.h>
#include <stdlib.h>
#include "cudnnfe/cudnnfe.h"

enum { CAPI_CONV_FPROP = 0, CAPI_CONV_DGRAD = 1, CAPI_CONV_WGRAD = 2 };

static cudnnfe_status_t capi_add_conv(int kind, uintptr_t g, int64_t in0, int64_t in1,
                                      const cudnnfe_conv_options_t *o, const char *name,
                                      int64_t *out) {
  cudnnfe_conv_options_t c;
  const cudnnfe_conv_options_t *p = NULL;
  if (o) {
    c = *o;
    c.name = name;
    p = &c;
  }
  switch (kind) {
    case CAPI_CONV_DGRAD: return cudnnfe_graph_add_conv_dgrad((cudnnfe_graph_t *)g, in0, in1, p, out);
    case CAPI_CONV_WGRAD: return cudnnfe_graph_add_conv_wgrad((cudnnfe_graph_t *)g, in0, in1, p, out);
    default: return cudnnfe_graph_add_conv_fprop((cudnnfe_graph_t *)g, in0, in1, p, out);
  }
}

static cudnnfe_status_t capi_add_matmul(uintptr_t g, int64_t a, int64_t b,
                                        const cudnnfe_matmul_options_t *o, const char *name,
                                        int64_t *c) {
  cudnnfe_matmul_options_t copy;
  const cudnnfe_matmul_options_t *p = NULL;
  if (o) {
    copy = *o;
    copy.name = name;
    p = &copy;
  }
  return cudnnfe_graph_add_matmul((cudnnfe_graph_t *)g, a, b, p, c);
}

static cudnnfe_status_t capi_add_pointwise(uintptr_t g, cudnnfe_pointwise_mode_t mode, int64_t in0,
                                           int64_t in1, int64_t in2,
                                           const cudnnfe_pointwise_options_t *o, const char *name,
                                           int64_t *out) {
  cudnnfe_pointwise_options_t copy;
  const cudnnfe_pointwise_options_t *p = NULL;
  if (o) {
    copy = *o;
    copy.name = name;
    p = &copy;
  }
  return cudnnfe_graph_add_pointwise((cudnnfe_graph_t *)g, mode, in0, in1, in2, p, out);
}

static cudnnfe_status_t capi_add_reduction(uintptr_t g, cudnnfe_reduction_mode_t mode, int64_t x,
                                           const cudnnfe_reduction_options_t *o, const char *name,
                                           int64_t *y) {
  cudnnfe_reduction_options_t copy;
  const cudnnfe_reduction_options_t *p = NULL;
  if (o) {
    copy = *o;
    copy.name = name;
    p = &copy;
  }
  return cudnnfe_graph_add_reduction((cudnnfe_graph_t *)g, mode, x, p, y);
}

static cudnnfe_status_t capi_add_sdpa(uintptr_t g, int64_t q, int64_t k, int64_t v,
                                      const cudnnfe_sdpa_options_t *o, const char *name,
                                      int64_t *out, int64_t *stats) {
  cudnnfe_sdpa_options_t copy;
  const cudnnfe_sdpa_options_t *p = NULL;
  if (o) {
    copy = *o;
    copy.name = name;
    p = &copy;
  }
  return cudnnfe_graph_add_sdpa((cudnnfe_graph_t *)g, q, k, v, p, out, stats);
}

static cudnnfe_status_t capi_add_sdpa_backward(uintptr_t g, int64_t q, int64_t k, int64_t v,
                                               int64_t o, int64_t d_o, int64_t stats,
                                               const cudnnfe_sdpa_backward_options_t *opts,
                                               const char *name, int64_t *dq, int64_t *dk,
                                               int64_t *dv, int64_t *dbias) {
  cudnnfe_sdpa_backward_options_t copy;
  const cudnnfe_sdpa_backward_options_t *p = NULL;
  if (opts) {
    copy = *opts;
    copy.name = name;
    p = &copy;
  }
  if (dbias)
    return cudnnfe_graph_add_sdpa_backward_ex((cudnnfe_graph_t *)g, q, k, v, o, d_o, stats, p, dq,
                                              dk, dv, dbias);
  return cudnnfe_graph_add_sdpa_backward((cudnnfe_graph_t *)g, q, k, v, o, d_o, stats, p, dq, dk,
                                         dv);
}

enum {
  CAPI_LAYERNORM = 0,
  CAPI_RMSNORM = 1,
  CAPI_LAYERNORM_BACKWARD = 2,
  CAPI_RMSNORM_BACKWARD = 3,
  CAPI_BATCHNORM = 4,
  CAPI_BATCHNORM_INFERENCE = 5,
  CAPI_BATCHNORM_BACKWARD = 6,
  CAPI_INSTANCENORM = 7,
  CAPI_INSTANCENORM_BACKWARD = 8,
  CAPI_ADALAYERNORM = 9,
  CAPI_ADALAYERNORM_BACKWARD = 10
};

// in[] holds the op's tensor operands and out0..out4 its outputs, in the
// order of its C function; an out entry may be NULL where C allows it.
static cudnnfe_status_t capi_add_norm(int kind, uintptr_t g, const int64_t *in,
                                      const cudnnfe_norm_options_t *opts, const char *name,
                                      int64_t *out0, int64_t *out1, int64_t *out2,
                                      int64_t *out3, int64_t *out4) {
  cudnnfe_norm_options_t copy;
  const cudnnfe_norm_options_t *p = NULL;
  cudnnfe_graph_t *graph = (cudnnfe_graph_t *)g;
  if (opts) {
    copy = *opts;
    copy.name = name;
    p = &copy;
  }
  switch (kind) {
    case CAPI_LAYERNORM:
      return cudnnfe_graph_add_layernorm(graph, in[0], in[1], in[2], p, out0, out1, out2);
    case CAPI_RMSNORM:
      return cudnnfe_graph_add_rmsnorm(graph, in[0], in[1], in[2], p, out0, out1);
    case CAPI_LAYERNORM_BACKWARD:
      return cudnnfe_graph_add_layernorm_backward(graph, in[0], in[1], in[2], in[3], in[4], p, out0,
                                                  out1, out2);
    case CAPI_BATCHNORM:
      return cudnnfe_graph_add_batchnorm(graph, in[0], in[1], in[2], in[3], in[4], p, out0, out1,
                                         out2, out3, out4);
    case CAPI_BATCHNORM_INFERENCE:
      return cudnnfe_graph_add_batchnorm_inference(graph, in[0], in[1], in[2], in[3], in[4], p,
                                                   out0);
    case CAPI_BATCHNORM_BACKWARD:
      return cudnnfe_graph_add_batchnorm_backward(graph, in[0], in[1], in[2], in[3], in[4], p, out0,
                                                  out1, out2);
    case CAPI_INSTANCENORM:
      return cudnnfe_graph_add_instancenorm(graph, in[0], in[1], in[2], p, out0, out1, out2);
    case CAPI_INSTANCENORM_BACKWARD:
      return cudnnfe_graph_add_instancenorm_backward(graph, in[0], in[1], in[2], in[3], in[4], p,
                                                     out0, out1, out2);
    case CAPI_ADALAYERNORM:
      return cudnnfe_graph_add_adalayernorm(graph, in[0], in[1], in[2], p, out0, out1, out2);
    case CAPI_ADALAYERNORM_BACKWARD:
      return cudnnfe_graph_add_adalayernorm_backward(graph, in[0], in[1], in[2], in[3], in[4], p,
                                                     out0, out1, out2);
    default:
      return cudnnfe_graph_add_rmsnorm_backward(graph, in[0], in[1], in[2], in[3], p, out0, out1,
                                                out2);
  }
}

static cudnnfe_status_t capi_add_softmax(uintptr_t g, int64_t x,
                                         const cudnnfe_softmax_options_t *opts, const char *name,
                                         int64_t *y, int64_t *stats) {
  cudnnfe_softmax_options_t copy;
  const cudnnfe_softmax_options_t *p = NULL;
  if (opts) {
    copy = *opts;
    copy.name = name;
    p = &copy;
  }
  return cudnnfe_graph_add_softmax((cudnnfe_graph_t *)g, x, p, y, stats);
}

// ---- Layout, resampling and random numbers --------------------------------

enum { CAPI_RESHAPE = 0, CAPI_TRANSPOSE = 1, CAPI_SLICE = 2, CAPI_CONCATENATE = 3 };

// Layout ops: their options are only a name. a, b, c are the op's arrays
// (reshape: dims; transpose: the int32 permutation in a; slice: start, end,
// step; concatenate: the inputs), each with n entries, Go memory alive for
// the call.
static cudnnfe_status_t capi_add_layout(int kind, uintptr_t g, int64_t x, int32_t n,
                                        const void *a, const int64_t *b, const int64_t *c,
                                        int32_t axis, const char *name, int64_t *y) {
  cudnnfe_layout_options_t o;
  cudnnfe_graph_t *graph = (cudnnfe_graph_t *)g;
  cudnnfe_layout_options_init_sized(&o, sizeof o);
  o.name = name;
  switch (kind) {
    case CAPI_RESHAPE:
      return cudnnfe_graph_add_reshape(graph, x, n, (const int64_t *)a, &o, y);
    case CAPI_TRANSPOSE:
      return cudnnfe_graph_add_transpose(graph, x, n, (const int32_t *)a, &o, y);
    case CAPI_SLICE:
      return cudnnfe_graph_add_slice(graph, x, n, (const int64_t *)a, b, c, &o, y);
    default:
      return cudnnfe_graph_add_concatenate(graph, n, (const int64_t *)a, axis, &o, y);
  }
}

static cudnnfe_status_t capi_add_resample(uintptr_t g, int64_t x,
                                          const cudnnfe_resample_options_t *opts, const char *name,
                                          int64_t *y, int64_t *index) {
  cudnnfe_resample_options_t copy;
  const cudnnfe_resample_options_t *p = NULL;
  if (opts) {
    copy = *opts;
    copy.name = name;
    p = &copy;
  }
  return cudnnfe_graph_add_resample((cudnnfe_graph_t *)g, x, p, y, index);
}

static cudnnfe_status_t capi_add_rng(uintptr_t g, int32_t ndims, const int64_t *dims, int64_t seed,
                                     int64_t offset, const cudnnfe_rng_options_t *opts,
                                     const char *name, int64_t *y) {
  cudnnfe_rng_options_t copy;
  const cudnnfe_rng_options_t *p = NULL;
  if (opts) {
    copy = *opts;
    copy.name = name;
    p = &copy;
  }
  return cudnnfe_graph_add_rng((cudnnfe_graph_t *)g, ndims, dims, seed, offset, p, y);
}

// ---- FP8 attention: tensors in t[], outputs in out[] (C's order) ----------

static cudnnfe_status_t capi_add_sdpa_fp8(uintptr_t g, const int64_t *t,
                                          const cudnnfe_sdpa_fp8_options_t *opts,
                                          const char *name, int64_t *out, int want_stats) {
  cudnnfe_sdpa_fp8_options_t copy;
  const cudnnfe_sdpa_fp8_options_t *p = NULL;
  if (opts) {
    copy = *opts;
    copy.name = name;
    p = &copy;
  }
  return cudnnfe_graph_add_sdpa_fp8((cudnnfe_graph_t *)g, t[0], t[1], t[2], t[3], t[4], t[5], t[6],
                                    t[7], t[8], p, &out[0], want_stats ? &out[1] : NULL, &out[2],
                                    &out[3]);
}

static cudnnfe_status_t capi_add_sdpa_fp8_backward(uintptr_t g, const int64_t *t,
                                                   const cudnnfe_sdpa_fp8_backward_options_t *opts,
                                                   const char *name, int64_t *out) {
  cudnnfe_sdpa_fp8_backward_options_t copy;
  const cudnnfe_sdpa_fp8_backward_options_t *p = NULL;
  if (opts) {
    copy = *opts;
    copy.name = name;
    p = &copy;
  }
  return cudnnfe_graph_add_sdpa_fp8_backward(
      (cudnnfe_graph_t *)g, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10],
      t[11], t[12], t[13], t[14], t[15], t[16], t[17], p, &out[0], &out[1], &out[2], &out[3],
      &out[4], &out[5], &out[6]);
}

// The options' pointer members are set here, from call arguments (Go
// memory alive for the call), never stored in Go memory.
static cudnnfe_status_t capi_graph_build(uintptr_t g, uintptr_t h,
                                         const cudnnfe_build_options_t *o,
                                         const int64_t *engines, int32_t num_engines,
                                         const char *cache_dir, int has_cache_dir) {
  cudnnfe_build_options_t copy;
  if (!o) return cudnnfe_graph_build((cudnnfe_graph_t *)g, (cudnnfe_handle_t *)h, NULL);
  copy = *o;
  copy.num_exclude_engines = num_engines;
  copy.exclude_engines = engines;
  copy.plan_cache_dir = has_cache_dir ? (cache_dir ? cache_dir : "") : NULL;
  return cudnnfe_graph_build((cudnnfe_graph_t *)g, (cudnnfe_handle_t *)h, &copy);
}

// ---- Plans (the output structs are filled on the C side) ----

static cudnnfe_status_t capi_get_plan_info(uintptr_t g, int64_t index, cudnnfe_plan_info_t *out) {
  cudnnfe_plan_info_init_sized(out, sizeof(*out));
  return cudnnfe_graph_get_plan_info((const cudnnfe_graph_t *)g, index, out);
}

static cudnnfe_status_t capi_get_build_info(uintptr_t g, cudnnfe_build_info_t *out) {
  cudnnfe_build_info_init_sized(out, sizeof(*out));
  return cudnnfe_graph_get_build_info((const cudnnfe_graph_t *)g, out);
}

static cudnnfe_status_t capi_plan_cache_get_stats(cudnnfe_plan_cache_stats_t *out) {
  cudnnfe_plan_cache_stats_init_sized(out, sizeof(*out));
  return cudnnfe_plan_cache_get_stats(out);
}

static cudnnfe_status_t capi_autotune(uintptr_t g, uintptr_t h, const void *bindings, size_t n,
                                      uintptr_t workspace, size_t workspace_size,
                                      uintptr_t stream, const cudnnfe_autotune_options_t *o) {
  return cudnnfe_graph_autotune((cudnnfe_graph_t *)g, (cudnnfe_handle_t *)h,
                                (const cudnnfe_binding_t *)bindings, n, (void *)workspace,
                                workspace_size, (void *)stream, o);
}

static cudnnfe_status_t capi_deserialize_plan(uintptr_t g, uintptr_t h, const char *data,
                                              size_t size, int32_t rebuild_on_mismatch) {
  cudnnfe_plan_load_options_t o;
  cudnnfe_plan_load_options_init_sized(&o, sizeof o);
  o.rebuild_on_mismatch = rebuild_on_mismatch;
  return cudnnfe_graph_deserialize_plan((cudnnfe_graph_t *)g, (cudnnfe_handle_t *)h, data, size,
                                        &o);
}

// The execute hot path with device (or C-heap) addresses. SWIG's wrappers
// of these are sound, but pass the slice as a struct that cgo's pointer
// check boxes into an interface: one heap allocation per call. Here the
// slice's array crosses as a plain pointer and addresses as uintptr_t.
static cudnnfe_status_t capi_execute(uintptr_t g, uintptr_t h, const void *bindings, size_t n,
                                     uintptr_t workspace, size_t workspace_size, uintptr_t stream) {
  return cudnnfe_graph_execute((const cudnnfe_graph_t *)g, (cudnnfe_handle_t *)h,
                               (const cudnnfe_binding_t *)bindings, n, (void *)workspace,
                               workspace_size, (void *)stream);
}

static cudnnfe_status_t capi_execute_ordered(uintptr_t g, uintptr_t h, const uintptr_t *data,
                                             size_t n, uintptr_t workspace, size_t workspace_size,
                                             uintptr_t stream) {
  return cudnnfe_graph_execute_ordered((const cudnnfe_graph_t *)g, (cudnnfe_handle_t *)h,
                                       (void *const *)data, n, (void *)workspace, workspace_size,
                                       (void *)stream);
}

// Host execution, zero-copy: each Go buffer is its own argument, which cgo
// checks and keeps alive for the call; the pointer table lives on the C stack.
#define CAPI_HOST_ARGS 16
static cudnnfe_status_t capi_execute_host(uintptr_t g, uintptr_t h, size_t count,
    void *p0, void *p1, void *p2, void *p3, void *p4, void *p5, void *p6, void *p7,
    void *p8, void *p9, void *p10, void *p11, void *p12, void *p13, void *p14, void *p15) {
  void *data[CAPI_HOST_ARGS] = {p0, p1, p2, p3, p4, p5, p6, p7,
                                p8, p9, p10, p11, p12, p13, p14, p15};
  if (count > CAPI_HOST_ARGS) return CUDNNFE_STATUS_INTERNAL;
  return cudnnfe_graph_execute_ordered((const cudnnfe_graph_t *)g, (cudnnfe_handle_t *)h, data,
                                       count, NULL, 0, NULL);
}

// Host execution through one C allocation (more than CAPI_HOST_ARGS
// buffers): data[i] = arena + offsets[i], or NULL for UINT64_MAX.
static cudnnfe_status_t capi_execute_arena(uintptr_t g, uintptr_t h, char *arena,
                                           const uint64_t *offsets, size_t count) {
  void *stack[128];
  void **data = stack;
  size_t i;
  cudnnfe_status_t status;
  if (count > 128) {
    data = (void **)malloc(count * sizeof(void *));
    if (!data) return -1;
  }
  for (i = 0; i < count; ++i) data[i] = offsets[i] == UINT64_MAX ? NULL : arena + offsets[i];
  status = cudnnfe_graph_execute_ordered((const cudnnfe_graph_t *)g, (cudnnfe_handle_t *)h, data,
                                         count, NULL, 0, NULL);
  if (data != stack) free(data);
  return status;
}
*/
import "C"

import "unsafe"

// Binding mirrors cudnnfe_binding_t: a bound tensor's UID and the address of
// its buffer (device memory, or C-heap host memory for the CPU reference).
// Its layout is checked against the C struct in init.
type Binding struct {
	UID  int64
	Data uintptr
}

func init() {
	var c C.cudnnfe_binding_t
	var b Binding
	if unsafe.Sizeof(b) != unsafe.Sizeof(c) || unsafe.Offsetof(b.Data) != unsafe.Offsetof(c.data) ||
		unsafe.Sizeof(b.Data) != unsafe.Sizeof(c.data) {
		panic("capi: Binding does not match cudnnfe_binding_t")
	}
}

// cString returns s as a NUL-terminated C string in Go memory (nil for "",
// which the library reads as "no name"), valid while the result is
// referenced. A NUL inside s ends the C string there: callers reject such
// names first.
func cString(s string) *C.char {
	if s == "" {
		return nil
	}
	b := make([]byte, len(s)+1)
	copy(b, s)
	return (*C.char)(unsafe.Pointer(&b[0]))
}

// ---- Options structs: field-for-field mirrors of the C structs ----------

// ConvOptions mirrors cudnnfe_conv_options_t (struct_size is implied).
type ConvOptions struct {
	Name         string
	SpatialDims  int32
	PrePadding   [3]int64
	PostPadding  [3]int64
	Stride       [3]int64
	Dilation     [3]int64
	Mode         int32
	ComputeDtype int32
}

// ConvOptionsInit fills o with cudnnfe_conv_options_init's defaults.
func ConvOptionsInit(o *ConvOptions) {
	var c C.cudnnfe_conv_options_t
	C.cudnnfe_conv_options_init_sized(&c, C.sizeof_cudnnfe_conv_options_t)
	*o = ConvOptions{SpatialDims: int32(c.spatial_dims), Mode: int32(c.mode),
		ComputeDtype: int32(c.compute_dtype)}
	for i := 0; i < 3; i++ {
		o.PrePadding[i] = int64(c.pre_padding[i])
		o.PostPadding[i] = int64(c.post_padding[i])
		o.Stride[i] = int64(c.stride[i])
		o.Dilation[i] = int64(c.dilation[i])
	}
}

func (o *ConvOptions) toC(c *C.cudnnfe_conv_options_t) {
	C.cudnnfe_conv_options_init_sized(c, C.sizeof_cudnnfe_conv_options_t)
	c.spatial_dims = C.int32_t(o.SpatialDims)
	for i := 0; i < 3; i++ {
		c.pre_padding[i] = C.int64_t(o.PrePadding[i])
		c.post_padding[i] = C.int64_t(o.PostPadding[i])
		c.stride[i] = C.int64_t(o.Stride[i])
		c.dilation[i] = C.int64_t(o.Dilation[i])
	}
	c.mode = C.cudnnfe_conv_mode_t(o.Mode)
	c.compute_dtype = C.cudnnfe_dtype_t(o.ComputeDtype)
}

// Which convolution GraphAddConv adds.
const (
	ConvFprop = C.CAPI_CONV_FPROP
	ConvDgrad = C.CAPI_CONV_DGRAD
	ConvWgrad = C.CAPI_CONV_WGRAD
)

// GraphAddConv wraps cudnnfe_graph_add_conv_{fprop,dgrad,wgrad} (kind
// ConvFprop, ConvDgrad, ConvWgrad); o == nil passes NULL (defaults).
func GraphAddConv(kind int, g Struct_SS_cudnnfe_graph, in0, in1 int64, o *ConvOptions, out *int64) int32 {
	var c C.cudnnfe_conv_options_t
	var pc *C.cudnnfe_conv_options_t
	var name *C.char
	if o != nil {
		o.toC(&c)
		pc = &c
		name = cString(o.Name)
	}
	return int32(C.capi_add_conv(C.int(kind), C.uintptr_t(getSwigcptr(g)), C.int64_t(in0),
		C.int64_t(in1), pc, name, (*C.int64_t)(unsafe.Pointer(out))))
}

// MatmulOptions mirrors cudnnfe_matmul_options_t.
type MatmulOptions struct {
	Name         string
	ComputeDtype int32
}

// MatmulOptionsInit fills o with cudnnfe_matmul_options_init's defaults.
func MatmulOptionsInit(o *MatmulOptions) {
	var c C.cudnnfe_matmul_options_t
	C.cudnnfe_matmul_options_init_sized(&c, C.sizeof_cudnnfe_matmul_options_t)
	*o = MatmulOptions{ComputeDtype: int32(c.compute_dtype)}
}

// GraphAddMatmul wraps cudnnfe_graph_add_matmul.
func GraphAddMatmul(g Struct_SS_cudnnfe_graph, a, b int64, o *MatmulOptions, out *int64) int32 {
	var c C.cudnnfe_matmul_options_t
	var pc *C.cudnnfe_matmul_options_t
	var name *C.char
	if o != nil {
		C.cudnnfe_matmul_options_init_sized(&c, C.sizeof_cudnnfe_matmul_options_t)
		c.compute_dtype = C.cudnnfe_dtype_t(o.ComputeDtype)
		pc = &c
		name = cString(o.Name)
	}
	return int32(C.capi_add_matmul(C.uintptr_t(getSwigcptr(g)), C.int64_t(a), C.int64_t(b), pc,
		name, (*C.int64_t)(unsafe.Pointer(out))))
}

// PointwiseOptions mirrors cudnnfe_pointwise_options_t.
type PointwiseOptions struct {
	Name               string
	ComputeDtype       int32
	ReluLowerClip      float64
	ReluUpperClip      float64
	ReluLowerClipSlope float64
	EluAlpha           float64
	SoftplusBeta       float64
	SwishBeta          float64
	Axis               int32
}

// PointwiseOptionsInit fills o with cudnnfe_pointwise_options_init's defaults.
func PointwiseOptionsInit(o *PointwiseOptions) {
	var c C.cudnnfe_pointwise_options_t
	C.cudnnfe_pointwise_options_init_sized(&c, C.sizeof_cudnnfe_pointwise_options_t)
	*o = PointwiseOptions{
		ComputeDtype:       int32(c.compute_dtype),
		ReluLowerClip:      float64(c.relu_lower_clip),
		ReluUpperClip:      float64(c.relu_upper_clip),
		ReluLowerClipSlope: float64(c.relu_lower_clip_slope),
		EluAlpha:           float64(c.elu_alpha),
		SoftplusBeta:       float64(c.softplus_beta),
		SwishBeta:          float64(c.swish_beta),
		Axis:               int32(c.axis),
	}
}

// GraphAddPointwise wraps cudnnfe_graph_add_pointwise.
func GraphAddPointwise(g Struct_SS_cudnnfe_graph, mode int32, in0, in1, in2 int64, o *PointwiseOptions, out *int64) int32 {
	var c C.cudnnfe_pointwise_options_t
	var pc *C.cudnnfe_pointwise_options_t
	var name *C.char
	if o != nil {
		C.cudnnfe_pointwise_options_init_sized(&c, C.sizeof_cudnnfe_pointwise_options_t)
		c.compute_dtype = C.cudnnfe_dtype_t(o.ComputeDtype)
		c.relu_lower_clip = C.double(o.ReluLowerClip)
		c.relu_upper_clip = C.double(o.ReluUpperClip)
		c.relu_lower_clip_slope = C.double(o.ReluLowerClipSlope)
		c.elu_alpha = C.double(o.EluAlpha)
		c.softplus_beta = C.double(o.SoftplusBeta)
		c.swish_beta = C.double(o.SwishBeta)
		c.axis = C.int32_t(o.Axis)
		pc = &c
		name = cString(o.Name)
	}
	return int32(C.capi_add_pointwise(C.uintptr_t(getSwigcptr(g)), C.cudnnfe_pointwise_mode_t(mode),
		C.int64_t(in0), C.int64_t(in1), C.int64_t(in2), pc, name, (*C.int64_t)(unsafe.Pointer(out))))
}

// ReductionOptions mirrors cudnnfe_reduction_options_t.
type ReductionOptions struct {
	Name          string
	ComputeDtype  int32
	AxesMask      uint32
	Deterministic int32
}

// ReductionOptionsInit fills o with cudnnfe_reduction_options_init's defaults.
func ReductionOptionsInit(o *ReductionOptions) {
	var c C.cudnnfe_reduction_options_t
	C.cudnnfe_reduction_options_init_sized(&c, C.sizeof_cudnnfe_reduction_options_t)
	*o = ReductionOptions{ComputeDtype: int32(c.compute_dtype), AxesMask: uint32(c.axes_mask),
		Deterministic: int32(c.deterministic)}
}

// GraphAddReduction wraps cudnnfe_graph_add_reduction.
func GraphAddReduction(g Struct_SS_cudnnfe_graph, mode int32, x int64, o *ReductionOptions, out *int64) int32 {
	var c C.cudnnfe_reduction_options_t
	var pc *C.cudnnfe_reduction_options_t
	var name *C.char
	if o != nil {
		C.cudnnfe_reduction_options_init_sized(&c, C.sizeof_cudnnfe_reduction_options_t)
		c.compute_dtype = C.cudnnfe_dtype_t(o.ComputeDtype)
		c.axes_mask = C.uint32_t(o.AxesMask)
		c.deterministic = C.int32_t(o.Deterministic)
		pc = &c
		name = cString(o.Name)
	}
	return int32(C.capi_add_reduction(C.uintptr_t(getSwigcptr(g)), C.cudnnfe_reduction_mode_t(mode),
		C.int64_t(x), pc, name, (*C.int64_t)(unsafe.Pointer(out))))
}

// AttentionOptions mirrors the fields cudnnfe_sdpa_options_t and
// cudnnfe_sdpa_backward_options_t share beyond the first release
// (docs/attention.md).
type AttentionOptions struct {
	AttnScaleTensor    int64
	PaddingMask        int32
	SeqLenQ, SeqLenKV  int64
	WindowLeft         int64
	WindowRight        int64
	DiagonalAlignment  int32
	AlibiMask          int32
	DropoutProbability float64
	DropoutSeed        int64
	DropoutOffset      int64
	DropoutMask        int64
	DropoutScale       int64
}

// SDPAOptions mirrors cudnnfe_sdpa_options_t.
type SDPAOptions struct {
	Name                  string
	AttnScale             float64
	GenerateStats         int32
	CausalMask            int32
	CausalMaskBottomRight int32
	Bias                  int64
	ComputeDtype          int32
	AttentionOptions
}

// SDPAOptionsInit fills o with cudnnfe_sdpa_options_init's defaults.
func SDPAOptionsInit(o *SDPAOptions) {
	var c C.cudnnfe_sdpa_options_t
	C.cudnnfe_sdpa_options_init_sized(&c, C.sizeof_cudnnfe_sdpa_options_t)
	*o = SDPAOptions{
		AttnScale:             float64(c.attn_scale),
		GenerateStats:         int32(c.generate_stats),
		CausalMask:            int32(c.causal_mask),
		CausalMaskBottomRight: int32(c.causal_mask_bottom_right),
		Bias:                  int64(c.bias),
		ComputeDtype:          int32(c.compute_dtype),
		AttentionOptions: AttentionOptions{
			AttnScaleTensor: int64(c.attn_scale_tensor), PaddingMask: int32(c.padding_mask),
			SeqLenQ: int64(c.seq_len_q), SeqLenKV: int64(c.seq_len_kv),
			WindowLeft: int64(c.window_left), WindowRight: int64(c.window_right),
			DiagonalAlignment: int32(c.diagonal_alignment), AlibiMask: int32(c.alibi_mask),
			DropoutProbability: float64(c.dropout_probability), DropoutSeed: int64(c.dropout_seed),
			DropoutOffset: int64(c.dropout_offset), DropoutMask: int64(c.dropout_mask),
			DropoutScale: int64(c.dropout_scale),
		},
	}
}

// GraphAddSDPA wraps cudnnfe_graph_add_sdpa; stats may be nil when
// GenerateStats is 0.
func GraphAddSDPA(g Struct_SS_cudnnfe_graph, q, k, v int64, o *SDPAOptions, out, stats *int64) int32 {
	var c C.cudnnfe_sdpa_options_t
	var pc *C.cudnnfe_sdpa_options_t
	var name *C.char
	if o != nil {
		C.cudnnfe_sdpa_options_init_sized(&c, C.sizeof_cudnnfe_sdpa_options_t)
		c.attn_scale = C.double(o.AttnScale)
		c.generate_stats = C.int32_t(o.GenerateStats)
		c.causal_mask = C.int32_t(o.CausalMask)
		c.causal_mask_bottom_right = C.int32_t(o.CausalMaskBottomRight)
		c.bias = C.int64_t(o.Bias)
		c.compute_dtype = C.cudnnfe_dtype_t(o.ComputeDtype)
		m := &o.AttentionOptions
		c.attn_scale_tensor = C.int64_t(m.AttnScaleTensor)
		c.padding_mask = C.int32_t(m.PaddingMask)
		c.seq_len_q, c.seq_len_kv = C.int64_t(m.SeqLenQ), C.int64_t(m.SeqLenKV)
		c.window_left, c.window_right = C.int64_t(m.WindowLeft), C.int64_t(m.WindowRight)
		c.diagonal_alignment = C.cudnnfe_diagonal_alignment_t(m.DiagonalAlignment)
		c.alibi_mask = C.int32_t(m.AlibiMask)
		c.dropout_probability = C.double(m.DropoutProbability)
		c.dropout_seed, c.dropout_offset = C.int64_t(m.DropoutSeed), C.int64_t(m.DropoutOffset)
		c.dropout_mask, c.dropout_scale = C.int64_t(m.DropoutMask), C.int64_t(m.DropoutScale)
		pc = &c
		name = cString(o.Name)
	}
	return int32(C.capi_add_sdpa(C.uintptr_t(getSwigcptr(g)), C.int64_t(q), C.int64_t(k),
		C.int64_t(v), pc, name, (*C.int64_t)(unsafe.Pointer(out)), (*C.int64_t)(unsafe.Pointer(stats))))
}

// SDPABackwardOptions mirrors cudnnfe_sdpa_backward_options_t.
type SDPABackwardOptions struct {
	Name                  string
	AttnScale             float64
	CausalMask            int32
	CausalMaskBottomRight int32
	Bias                  int64
	Deterministic         int32
	ComputeDtype          int32
	AttentionOptions
	DropoutScaleInv int64
}

// SDPABackwardOptionsInit fills o with cudnnfe_sdpa_backward_options_init's
// defaults.
func SDPABackwardOptionsInit(o *SDPABackwardOptions) {
	var c C.cudnnfe_sdpa_backward_options_t
	C.cudnnfe_sdpa_backward_options_init_sized(&c, C.sizeof_cudnnfe_sdpa_backward_options_t)
	*o = SDPABackwardOptions{
		AttnScale:             float64(c.attn_scale),
		CausalMask:            int32(c.causal_mask),
		CausalMaskBottomRight: int32(c.causal_mask_bottom_right),
		Bias:                  int64(c.bias),
		Deterministic:         int32(c.deterministic),
		ComputeDtype:          int32(c.compute_dtype),
		AttentionOptions: AttentionOptions{
			AttnScaleTensor: int64(c.attn_scale_tensor), PaddingMask: int32(c.padding_mask),
			SeqLenQ: int64(c.seq_len_q), SeqLenKV: int64(c.seq_len_kv),
			WindowLeft: int64(c.window_left), WindowRight: int64(c.window_right),
			DiagonalAlignment: int32(c.diagonal_alignment), AlibiMask: int32(c.alibi_mask),
			DropoutProbability: float64(c.dropout_probability), DropoutSeed: int64(c.dropout_seed),
			DropoutOffset: int64(c.dropout_offset), DropoutMask: int64(c.dropout_mask),
			DropoutScale: int64(c.dropout_scale),
		},
		DropoutScaleInv: int64(c.dropout_scale_inv),
	}
}

// GraphAddSDPABackward wraps cudnnfe_graph_add_sdpa_backward, and
// cudnnfe_graph_add_sdpa_backward_ex when dbias is not nil.
func GraphAddSDPABackward(g Struct_SS_cudnnfe_graph, q, k, v, o, dO, stats int64, opts *SDPABackwardOptions, dq, dk, dv, dbias *int64) int32 {
	var c C.cudnnfe_sdpa_backward_options_t
	var pc *C.cudnnfe_sdpa_backward_options_t
	var name *C.char
	if opts != nil {
		C.cudnnfe_sdpa_backward_options_init_sized(&c, C.sizeof_cudnnfe_sdpa_backward_options_t)
		c.attn_scale = C.double(opts.AttnScale)
		c.causal_mask = C.int32_t(opts.CausalMask)
		c.causal_mask_bottom_right = C.int32_t(opts.CausalMaskBottomRight)
		c.bias = C.int64_t(opts.Bias)
		c.deterministic = C.int32_t(opts.Deterministic)
		c.compute_dtype = C.cudnnfe_dtype_t(opts.ComputeDtype)
		m := &opts.AttentionOptions
		c.attn_scale_tensor = C.int64_t(m.AttnScaleTensor)
		c.padding_mask = C.int32_t(m.PaddingMask)
		c.seq_len_q, c.seq_len_kv = C.int64_t(m.SeqLenQ), C.int64_t(m.SeqLenKV)
		c.window_left, c.window_right = C.int64_t(m.WindowLeft), C.int64_t(m.WindowRight)
		c.diagonal_alignment = C.cudnnfe_diagonal_alignment_t(m.DiagonalAlignment)
		c.alibi_mask = C.int32_t(m.AlibiMask)
		c.dropout_probability = C.double(m.DropoutProbability)
		c.dropout_seed, c.dropout_offset = C.int64_t(m.DropoutSeed), C.int64_t(m.DropoutOffset)
		c.dropout_mask, c.dropout_scale = C.int64_t(m.DropoutMask), C.int64_t(m.DropoutScale)
		c.dropout_scale_inv = C.int64_t(opts.DropoutScaleInv)
		pc = &c
		name = cString(opts.Name)
	}
	return int32(C.capi_add_sdpa_backward(C.uintptr_t(getSwigcptr(g)), C.int64_t(q), C.int64_t(k),
		C.int64_t(v), C.int64_t(o), C.int64_t(dO), C.int64_t(stats), pc, name,
		(*C.int64_t)(unsafe.Pointer(dq)), (*C.int64_t)(unsafe.Pointer(dk)), (*C.int64_t)(unsafe.Pointer(dv)),
		(*C.int64_t)(unsafe.Pointer(dbias))))
}

// NormOptions mirrors cudnnfe_norm_options_t.
type NormOptions struct {
	Name              string
	Phase             int32
	Epsilon           float64
	ZeroCenteredGamma int32
	ComputeDtype      int32
	Momentum          float64
}

// NormOptionsInit fills o with cudnnfe_norm_options_init's defaults.
func NormOptionsInit(o *NormOptions) {
	var c C.cudnnfe_norm_options_t
	C.cudnnfe_norm_options_init_sized(&c, C.sizeof_cudnnfe_norm_options_t)
	*o = NormOptions{Phase: int32(c.phase), Epsilon: float64(c.epsilon),
		ZeroCenteredGamma: int32(c.zero_centered_gamma), ComputeDtype: int32(c.compute_dtype),
		Momentum: float64(c.momentum)}
}

// Which normalization GraphAddNorm adds, and the operands it reads (in) and
// the outputs it writes (out; a nil entry passes NULL):
//
//	Layernorm, Instancenorm, Adalayernorm
//	                    in x, scale, bias                   out y, mean, inv_variance
//	RMSNorm             in x, scale, bias                   out y, inv_rms
//	LayernormBackward, BatchnormBackward, InstancenormBackward, AdalayernormBackward
//	                    in dy, x, scale, mean, inv_var      out dx, dscale, dbias
//	RMSNormBackward     in dy, x, scale, inv_rms            out dx, dscale, dbias (nil: no bias)
//	Batchnorm           in x, scale, bias, prev_mean, prev_var
//	                    out y, mean, inv_variance, next_mean, next_var
//	BatchnormInference  in x, scale, bias, mean, inv_var    out y
const (
	Layernorm            = C.CAPI_LAYERNORM
	RMSNorm              = C.CAPI_RMSNORM
	LayernormBackward    = C.CAPI_LAYERNORM_BACKWARD
	RMSNormBackward      = C.CAPI_RMSNORM_BACKWARD
	Batchnorm            = C.CAPI_BATCHNORM
	BatchnormInference   = C.CAPI_BATCHNORM_INFERENCE
	BatchnormBackward    = C.CAPI_BATCHNORM_BACKWARD
	Instancenorm         = C.CAPI_INSTANCENORM
	InstancenormBackward = C.CAPI_INSTANCENORM_BACKWARD
	Adalayernorm         = C.CAPI_ADALAYERNORM
	AdalayernormBackward = C.CAPI_ADALAYERNORM_BACKWARD
)

// GraphAddNorm wraps cudnnfe_graph_add_{layernorm,rmsnorm,batchnorm,
// instancenorm,adalayernorm}{,_backward} and
// cudnnfe_graph_add_batchnorm_inference.
func GraphAddNorm(kind int, g Struct_SS_cudnnfe_graph, in [5]int64, opts *NormOptions, out [5]*int64) int32 {
	var c C.cudnnfe_norm_options_t
	var pc *C.cudnnfe_norm_options_t
	var name *C.char
	if opts != nil {
		C.cudnnfe_norm_options_init_sized(&c, C.sizeof_cudnnfe_norm_options_t)
		c.phase = C.cudnnfe_norm_phase_t(opts.Phase)
		c.epsilon = C.double(opts.Epsilon)
		c.zero_centered_gamma = C.int32_t(opts.ZeroCenteredGamma)
		c.compute_dtype = C.cudnnfe_dtype_t(opts.ComputeDtype)
		c.momentum = C.double(opts.Momentum)
		pc = &c
		name = cString(opts.Name)
	}
	return int32(C.capi_add_norm(C.int(kind), C.uintptr_t(getSwigcptr(g)), (*C.int64_t)(unsafe.Pointer(&in[0])),
		pc, name, (*C.int64_t)(unsafe.Pointer(out[0])), (*C.int64_t)(unsafe.Pointer(out[1])),
		(*C.int64_t)(unsafe.Pointer(out[2])), (*C.int64_t)(unsafe.Pointer(out[3])),
		(*C.int64_t)(unsafe.Pointer(out[4]))))
}

// SoftmaxOptions mirrors cudnnfe_softmax_options_t.
type SoftmaxOptions struct {
	Name          string
	GenerateStats int32
	ComputeDtype  int32
}

// SoftmaxOptionsInit fills o with cudnnfe_softmax_options_init's defaults.
func SoftmaxOptionsInit(o *SoftmaxOptions) {
	var c C.cudnnfe_softmax_options_t
	C.cudnnfe_softmax_options_init_sized(&c, C.sizeof_cudnnfe_softmax_options_t)
	*o = SoftmaxOptions{GenerateStats: int32(c.generate_stats), ComputeDtype: int32(c.compute_dtype)}
}

// GraphAddSoftmax wraps cudnnfe_graph_add_softmax; stats may be nil when
// GenerateStats is 0.
func GraphAddSoftmax(g Struct_SS_cudnnfe_graph, x int64, opts *SoftmaxOptions, y, stats *int64) int32 {
	var c C.cudnnfe_softmax_options_t
	var pc *C.cudnnfe_softmax_options_t
	var name *C.char
	if opts != nil {
		C.cudnnfe_softmax_options_init_sized(&c, C.sizeof_cudnnfe_softmax_options_t)
		c.generate_stats = C.int32_t(opts.GenerateStats)
		c.compute_dtype = C.cudnnfe_dtype_t(opts.ComputeDtype)
		pc = &c
		name = cString(opts.Name)
	}
	return int32(C.capi_add_softmax(C.uintptr_t(getSwigcptr(g)), C.int64_t(x), pc, name,
		(*C.int64_t)(unsafe.Pointer(y)), (*C.int64_t)(unsafe.Pointer(stats))))
}

// ---- Layout, resampling and random numbers ---------------------------------

func int64Ptr(s []int64) *C.int64_t {
	if len(s) == 0 {
		return nil
	}
	return (*C.int64_t)(unsafe.Pointer(&s[0]))
}

// GraphAddReshape wraps cudnnfe_graph_add_reshape.
func GraphAddReshape(g Struct_SS_cudnnfe_graph, x int64, dims []int64, name string, y *int64) int32 {
	return int32(C.capi_add_layout(C.CAPI_RESHAPE, C.uintptr_t(getSwigcptr(g)), C.int64_t(x),
		C.int32_t(len(dims)), unsafe.Pointer(int64Ptr(dims)), nil, nil, 0, cString(name),
		(*C.int64_t)(unsafe.Pointer(y))))
}

// GraphAddTranspose wraps cudnnfe_graph_add_transpose.
func GraphAddTranspose(g Struct_SS_cudnnfe_graph, x int64, permutation []int32, name string, y *int64) int32 {
	var p unsafe.Pointer
	if len(permutation) > 0 {
		p = unsafe.Pointer(&permutation[0])
	}
	return int32(C.capi_add_layout(C.CAPI_TRANSPOSE, C.uintptr_t(getSwigcptr(g)), C.int64_t(x),
		C.int32_t(len(permutation)), p, nil, nil, 0, cString(name), (*C.int64_t)(unsafe.Pointer(y))))
}

// GraphAddSlice wraps cudnnfe_graph_add_slice: start and end have the
// same length, step is nil (1) or has it too (the caller checks).
func GraphAddSlice(g Struct_SS_cudnnfe_graph, x int64, start, end, step []int64, name string, y *int64) int32 {
	return int32(C.capi_add_layout(C.CAPI_SLICE, C.uintptr_t(getSwigcptr(g)), C.int64_t(x),
		C.int32_t(len(start)), unsafe.Pointer(int64Ptr(start)), int64Ptr(end), int64Ptr(step), 0,
		cString(name), (*C.int64_t)(unsafe.Pointer(y))))
}

// GraphAddConcatenate wraps cudnnfe_graph_add_concatenate.
func GraphAddConcatenate(g Struct_SS_cudnnfe_graph, inputs []int64, axis int32, name string, y *int64) int32 {
	return int32(C.capi_add_layout(C.CAPI_CONCATENATE, C.uintptr_t(getSwigcptr(g)), 0,
		C.int32_t(len(inputs)), unsafe.Pointer(int64Ptr(inputs)), nil, nil, C.int32_t(axis),
		cString(name), (*C.int64_t)(unsafe.Pointer(y))))
}

// ResampleOptions mirrors cudnnfe_resample_options_t.
type ResampleOptions struct {
	Name                                    string
	Mode                                    int32
	SpatialDims                             int32
	Window, Stride, PrePadding, PostPadding [3]int64
	PaddingMode                             int32
	Scale                                   [3]int64
	GenerateIndex                           int32
	ComputeDtype                            int32
}

// ResampleOptionsInit fills o with cudnnfe_resample_options_init's defaults.
func ResampleOptionsInit(o *ResampleOptions) {
	var c C.cudnnfe_resample_options_t
	C.cudnnfe_resample_options_init_sized(&c, C.sizeof_cudnnfe_resample_options_t)
	*o = ResampleOptions{Mode: int32(c.mode), SpatialDims: int32(c.spatial_dims),
		PaddingMode: int32(c.padding_mode), GenerateIndex: int32(c.generate_index),
		ComputeDtype: int32(c.compute_dtype)}
	for i := 0; i < 3; i++ {
		o.Window[i], o.Stride[i] = int64(c.window[i]), int64(c.stride[i])
		o.PrePadding[i], o.PostPadding[i] = int64(c.pre_padding[i]), int64(c.post_padding[i])
		o.Scale[i] = int64(c.scale[i])
	}
}

// GraphAddResample wraps cudnnfe_graph_add_resample.
func GraphAddResample(g Struct_SS_cudnnfe_graph, x int64, o *ResampleOptions, y, index *int64) int32 {
	var c C.cudnnfe_resample_options_t
	var pc *C.cudnnfe_resample_options_t
	var name *C.char
	if o != nil {
		C.cudnnfe_resample_options_init_sized(&c, C.sizeof_cudnnfe_resample_options_t)
		c.mode = C.cudnnfe_resample_mode_t(o.Mode)
		c.spatial_dims = C.int32_t(o.SpatialDims)
		for i := 0; i < 3; i++ {
			c.window[i], c.stride[i] = C.int64_t(o.Window[i]), C.int64_t(o.Stride[i])
			c.pre_padding[i], c.post_padding[i] = C.int64_t(o.PrePadding[i]), C.int64_t(o.PostPadding[i])
			c.scale[i] = C.int64_t(o.Scale[i])
		}
		c.padding_mode = C.cudnnfe_padding_mode_t(o.PaddingMode)
		c.generate_index = C.int32_t(o.GenerateIndex)
		c.compute_dtype = C.cudnnfe_dtype_t(o.ComputeDtype)
		pc = &c
		name = cString(o.Name)
	}
	return int32(C.capi_add_resample(C.uintptr_t(getSwigcptr(g)), C.int64_t(x), pc, name,
		(*C.int64_t)(unsafe.Pointer(y)), (*C.int64_t)(unsafe.Pointer(index))))
}

// RNGOptions mirrors cudnnfe_rng_options_t.
type RNGOptions struct {
	Name                     string
	Distribution             int32
	BernoulliProbability     float64
	UniformMin, UniformMax   float64
	NormalMean, NormalStddev float64
	Seed                     int64
	ComputeDtype             int32
}

// RNGOptionsInit fills o with cudnnfe_rng_options_init's defaults.
func RNGOptionsInit(o *RNGOptions) {
	var c C.cudnnfe_rng_options_t
	C.cudnnfe_rng_options_init_sized(&c, C.sizeof_cudnnfe_rng_options_t)
	*o = RNGOptions{Distribution: int32(c.distribution),
		BernoulliProbability: float64(c.bernoulli_probability),
		UniformMin:           float64(c.uniform_min), UniformMax: float64(c.uniform_max),
		NormalMean: float64(c.normal_mean), NormalStddev: float64(c.normal_stddev),
		Seed: int64(c.seed), ComputeDtype: int32(c.compute_dtype)}
}

// GraphAddRNG wraps cudnnfe_graph_add_rng.
func GraphAddRNG(g Struct_SS_cudnnfe_graph, dims []int64, seed, offset int64, o *RNGOptions, y *int64) int32 {
	var c C.cudnnfe_rng_options_t
	var pc *C.cudnnfe_rng_options_t
	var name *C.char
	if o != nil {
		C.cudnnfe_rng_options_init_sized(&c, C.sizeof_cudnnfe_rng_options_t)
		c.distribution = C.cudnnfe_rng_distribution_t(o.Distribution)
		c.bernoulli_probability = C.double(o.BernoulliProbability)
		c.uniform_min, c.uniform_max = C.double(o.UniformMin), C.double(o.UniformMax)
		c.normal_mean, c.normal_stddev = C.double(o.NormalMean), C.double(o.NormalStddev)
		c.seed = C.int64_t(o.Seed)
		c.compute_dtype = C.cudnnfe_dtype_t(o.ComputeDtype)
		pc = &c
		name = cString(o.Name)
	}
	return int32(C.capi_add_rng(C.uintptr_t(getSwigcptr(g)), C.int32_t(len(dims)), int64Ptr(dims),
		C.int64_t(seed), C.int64_t(offset), pc, name, (*C.int64_t)(unsafe.Pointer(y))))
}

// ---- FP8 attention ----------------------------------------------------------

// SDPAFP8Options mirrors cudnnfe_sdpa_fp8_options_t.
type SDPAFP8Options struct {
	Name          string
	AttnScale     float64
	GenerateStats int32
	CausalMask    int32
}

// SDPAFP8OptionsInit fills o with cudnnfe_sdpa_fp8_options_init's defaults.
func SDPAFP8OptionsInit(o *SDPAFP8Options) {
	var c C.cudnnfe_sdpa_fp8_options_t
	C.cudnnfe_sdpa_fp8_options_init_sized(&c, C.sizeof_cudnnfe_sdpa_fp8_options_t)
	*o = SDPAFP8Options{AttnScale: float64(c.attn_scale), GenerateStats: int32(c.generate_stats),
		CausalMask: int32(c.causal_mask)}
}

// GraphAddSDPAFP8 wraps cudnnfe_graph_add_sdpa_fp8: t holds q, k, v,
// descale_q, descale_k, descale_v, descale_s, scale_s, scale_o; out
// receives o, stats, amax_s, amax_o (stats stays 0 unless GenerateStats).
func GraphAddSDPAFP8(g Struct_SS_cudnnfe_graph, t [9]int64, o *SDPAFP8Options, out *[4]int64) int32 {
	var c C.cudnnfe_sdpa_fp8_options_t
	var pc *C.cudnnfe_sdpa_fp8_options_t
	var name *C.char
	wantStats := 0
	if o != nil {
		C.cudnnfe_sdpa_fp8_options_init_sized(&c, C.sizeof_cudnnfe_sdpa_fp8_options_t)
		c.attn_scale = C.double(o.AttnScale)
		c.generate_stats = C.int32_t(o.GenerateStats)
		c.causal_mask = C.int32_t(o.CausalMask)
		pc = &c
		name = cString(o.Name)
		if o.GenerateStats != 0 {
			wantStats = 1
		}
	}
	return int32(C.capi_add_sdpa_fp8(C.uintptr_t(getSwigcptr(g)), (*C.int64_t)(unsafe.Pointer(&t[0])),
		pc, name, (*C.int64_t)(unsafe.Pointer(&out[0])), C.int(wantStats)))
}

// SDPAFP8BackwardOptions mirrors cudnnfe_sdpa_fp8_backward_options_t.
type SDPAFP8BackwardOptions struct {
	Name       string
	AttnScale  float64
	CausalMask int32
}

// SDPAFP8BackwardOptionsInit fills o with
// cudnnfe_sdpa_fp8_backward_options_init's defaults.
func SDPAFP8BackwardOptionsInit(o *SDPAFP8BackwardOptions) {
	var c C.cudnnfe_sdpa_fp8_backward_options_t
	C.cudnnfe_sdpa_fp8_backward_options_init_sized(&c, C.sizeof_cudnnfe_sdpa_fp8_backward_options_t)
	*o = SDPAFP8BackwardOptions{AttnScale: float64(c.attn_scale), CausalMask: int32(c.causal_mask)}
}

// GraphAddSDPAFP8Backward wraps cudnnfe_graph_add_sdpa_fp8_backward: t
// holds the 18 tensor operands in the C function's order (q, k, v, o, d_o,
// stats, then the descales and scales); out receives dq, dk, dv, amax_dq,
// amax_dk, amax_dv, amax_dp.
func GraphAddSDPAFP8Backward(g Struct_SS_cudnnfe_graph, t [18]int64, o *SDPAFP8BackwardOptions, out *[7]int64) int32 {
	var c C.cudnnfe_sdpa_fp8_backward_options_t
	var pc *C.cudnnfe_sdpa_fp8_backward_options_t
	var name *C.char
	if o != nil {
		C.cudnnfe_sdpa_fp8_backward_options_init_sized(&c, C.sizeof_cudnnfe_sdpa_fp8_backward_options_t)
		c.attn_scale = C.double(o.AttnScale)
		c.causal_mask = C.int32_t(o.CausalMask)
		pc = &c
		name = cString(o.Name)
	}
	return int32(C.capi_add_sdpa_fp8_backward(C.uintptr_t(getSwigcptr(g)),
		(*C.int64_t)(unsafe.Pointer(&t[0])), pc, name, (*C.int64_t)(unsafe.Pointer(&out[0]))))
}

// BuildOptions mirrors cudnnfe_build_options_t. ExcludeEngines (its
// length is num_exclude_engines) and PlanCacheDir reach C as call arguments;
// HasPlanCacheDir false passes NULL (the environment's directory), true
// passes PlanCacheDir ("" : no directory).
type BuildOptions struct {
	Target                int32
	NumHeurModes          int32
	HeurModes             [4]int32
	Policy                int32
	MaxWorkspaceSize      int64
	ExcludeNumericalNotes uint32
	ExcludeBehaviorNotes  uint32
	RequireBehaviorNotes  uint32
	ExcludeEngines        []int64
	MaxPlans              int32
	DisablePlanCache      int32
	PlanCacheDir          string
	HasPlanCacheDir       bool
}

// BuildOptionsInit fills o with cudnnfe_build_options_init's defaults.
func BuildOptionsInit(o *BuildOptions) {
	var c C.cudnnfe_build_options_t
	C.cudnnfe_build_options_init_sized(&c, C.sizeof_cudnnfe_build_options_t)
	*o = BuildOptions{Target: int32(c.target), NumHeurModes: int32(c.num_heur_modes),
		Policy: int32(c.policy), MaxWorkspaceSize: int64(c.max_workspace_size),
		ExcludeNumericalNotes: uint32(c.exclude_numerical_notes),
		ExcludeBehaviorNotes:  uint32(c.exclude_behavior_notes),
		RequireBehaviorNotes:  uint32(c.require_behavior_notes),
		MaxPlans:              int32(c.max_plans), DisablePlanCache: int32(c.disable_plan_cache)}
	for i := range o.HeurModes {
		o.HeurModes[i] = int32(c.heur_modes[i])
	}
}

// GraphBuild wraps cudnnfe_graph_build; h may be nil, o nil passes NULL.
func GraphBuild(g Struct_SS_cudnnfe_graph, h Struct_SS_cudnnfe_handle, o *BuildOptions) int32 {
	var c C.cudnnfe_build_options_t
	var pc *C.cudnnfe_build_options_t
	var engines *C.int64_t
	var numEngines C.int32_t
	var dir *C.char
	var hasDir C.int
	if o != nil {
		C.cudnnfe_build_options_init_sized(&c, C.sizeof_cudnnfe_build_options_t)
		c.target = C.cudnnfe_target_t(o.Target)
		c.num_heur_modes = C.int32_t(o.NumHeurModes)
		for i := range o.HeurModes {
			c.heur_modes[i] = C.cudnnfe_heur_mode_t(o.HeurModes[i])
		}
		c.policy = C.cudnnfe_build_policy_t(o.Policy)
		c.max_workspace_size = C.int64_t(o.MaxWorkspaceSize)
		c.exclude_numerical_notes = C.uint32_t(o.ExcludeNumericalNotes)
		c.exclude_behavior_notes = C.uint32_t(o.ExcludeBehaviorNotes)
		c.require_behavior_notes = C.uint32_t(o.RequireBehaviorNotes)
		c.max_plans = C.int32_t(o.MaxPlans)
		c.disable_plan_cache = C.int32_t(o.DisablePlanCache)
		if len(o.ExcludeEngines) > 0 {
			engines = (*C.int64_t)(unsafe.Pointer(&o.ExcludeEngines[0]))
			numEngines = C.int32_t(len(o.ExcludeEngines))
			if len(o.ExcludeEngines) > 1<<30 {
				numEngines = 1 << 30 // the library refuses it with its message
			}
		}
		if o.HasPlanCacheDir {
			hasDir = 1
			dir = cString(o.PlanCacheDir)
		}
		pc = &c
	}
	return int32(C.capi_graph_build(C.uintptr_t(getSwigcptr(g)), C.uintptr_t(getSwigcptr(h)), pc,
		engines, numEngines, dir, hasDir))
}

// ---- Plans -------------------------------------------------------------

// PlanInfo mirrors cudnnfe_plan_info_t (the name copied into Go memory).
type PlanInfo struct {
	Name             string
	EngineID         int64
	WorkspaceSize    int64
	NumericalNotes   uint32
	BehaviorNotes    uint32
	AutotuneTimeMs   float64
	Selected         int32
	ChosenByAutotune int32
}

// GraphGetPlanInfo wraps cudnnfe_plan_info_init and cudnnfe_graph_get_plan_info.
func GraphGetPlanInfo(g Struct_SS_cudnnfe_graph, index int64, out *PlanInfo) int32 {
	var c C.cudnnfe_plan_info_t
	st := int32(C.capi_get_plan_info(C.uintptr_t(getSwigcptr(g)), C.int64_t(index), &c))
	if st == int32(CUDNNFE_STATUS_OK) {
		*out = PlanInfo{EngineID: int64(c.engine_id), WorkspaceSize: int64(c.workspace_size),
			NumericalNotes: uint32(c.numerical_notes), BehaviorNotes: uint32(c.behavior_notes),
			AutotuneTimeMs: float64(c.autotune_time_ms), Selected: int32(c.selected),
			ChosenByAutotune: int32(c.chosen_by_autotune)}
		if c.name != nil {
			out.Name = C.GoString(c.name)
		}
	}
	return st
}

// BuildInfo mirrors cudnnfe_build_info_t.
type BuildInfo struct {
	Source                                                           int32
	TotalMs, ValidateMs, CacheMs, LowerMs, HeuristicsMs, PlanBuildMs float64
}

// GraphGetBuildInfo wraps cudnnfe_build_info_init and cudnnfe_graph_get_build_info.
func GraphGetBuildInfo(g Struct_SS_cudnnfe_graph, out *BuildInfo) int32 {
	var c C.cudnnfe_build_info_t
	st := int32(C.capi_get_build_info(C.uintptr_t(getSwigcptr(g)), &c))
	if st == int32(CUDNNFE_STATUS_OK) {
		*out = BuildInfo{Source: int32(c.source), TotalMs: float64(c.total_ms),
			ValidateMs: float64(c.validate_ms), CacheMs: float64(c.cache_ms),
			LowerMs: float64(c.lower_ms), HeuristicsMs: float64(c.heuristics_ms),
			PlanBuildMs: float64(c.plan_build_ms)}
	}
	return st
}

// PlanCacheStats mirrors cudnnfe_plan_cache_stats_t.
type PlanCacheStats struct {
	Entries, Hits, Misses, DiskHits, DiskWrites, DiskErrors int64
}

// PlanCacheGetStats wraps cudnnfe_plan_cache_stats_init and
// cudnnfe_plan_cache_get_stats (no object: read cudnnfe_last_error on the
// same thread).
func PlanCacheGetStats(out *PlanCacheStats) int32 {
	var c C.cudnnfe_plan_cache_stats_t
	st := int32(C.capi_plan_cache_get_stats(&c))
	if st == int32(CUDNNFE_STATUS_OK) {
		*out = PlanCacheStats{Entries: int64(c.entries), Hits: int64(c.hits),
			Misses: int64(c.misses), DiskHits: int64(c.disk_hits),
			DiskWrites: int64(c.disk_writes), DiskErrors: int64(c.disk_errors)}
	}
	return st
}

// AutotuneOptions mirrors cudnnfe_autotune_options_t.
type AutotuneOptions struct {
	WarmupIterations, MinIterations, MaxIterations int32
	Tolerance, MaxMsPerPlan                        float64
}

// AutotuneOptionsInit fills o with cudnnfe_autotune_options_init's defaults.
func AutotuneOptionsInit(o *AutotuneOptions) {
	var c C.cudnnfe_autotune_options_t
	C.cudnnfe_autotune_options_init_sized(&c, C.sizeof_cudnnfe_autotune_options_t)
	*o = AutotuneOptions{WarmupIterations: int32(c.warmup_iterations),
		MinIterations: int32(c.min_iterations), MaxIterations: int32(c.max_iterations),
		Tolerance: float64(c.tolerance), MaxMsPerPlan: float64(c.max_ms_per_plan)}
}

// GraphAutotune wraps cudnnfe_graph_autotune: bindings hold device
// addresses (empty: the library's scratch buffers), o nil passes NULL.
func GraphAutotune(g Struct_SS_cudnnfe_graph, h Struct_SS_cudnnfe_handle, bindings []Binding, workspace uintptr, workspaceSize int64, stream uintptr, o *AutotuneOptions) int32 {
	var p unsafe.Pointer
	if len(bindings) > 0 {
		p = unsafe.Pointer(&bindings[0])
	}
	var c C.cudnnfe_autotune_options_t
	var pc *C.cudnnfe_autotune_options_t
	if o != nil {
		C.cudnnfe_autotune_options_init_sized(&c, C.sizeof_cudnnfe_autotune_options_t)
		c.warmup_iterations = C.int32_t(o.WarmupIterations)
		c.min_iterations = C.int32_t(o.MinIterations)
		c.max_iterations = C.int32_t(o.MaxIterations)
		c.tolerance = C.double(o.Tolerance)
		c.max_ms_per_plan = C.double(o.MaxMsPerPlan)
		pc = &c
	}
	return int32(C.capi_autotune(C.uintptr_t(getSwigcptr(g)), C.uintptr_t(getSwigcptr(h)), p,
		C.size_t(len(bindings)), C.uintptr_t(workspace), C.size_t(workspaceSize), C.uintptr_t(stream), pc))
}

// GraphDeserializePlan wraps cudnnfe_plan_load_options_init and
// cudnnfe_graph_deserialize_plan; h may be nil.
func GraphDeserializePlan(g Struct_SS_cudnnfe_graph, h Struct_SS_cudnnfe_handle, data []byte, rebuildOnMismatch int32) int32 {
	var p *C.char
	if len(data) > 0 {
		p = (*C.char)(unsafe.Pointer(&data[0]))
	}
	return int32(C.capi_deserialize_plan(C.uintptr_t(getSwigcptr(g)), C.uintptr_t(getSwigcptr(h)), p,
		C.size_t(len(data)), C.int32_t(rebuildOnMismatch)))
}

// ---- Execution with addresses --------------------------------------------

// GraphExecute wraps cudnnfe_graph_execute without allocating: bindings
// hold device (or C-heap) addresses, never Go memory.
func GraphExecute(g Struct_SS_cudnnfe_graph, h Struct_SS_cudnnfe_handle, bindings []Binding, workspace uintptr, workspaceSize int64, stream uintptr) int32 {
	var p unsafe.Pointer
	if len(bindings) > 0 {
		p = unsafe.Pointer(&bindings[0])
	}
	return int32(C.capi_execute(C.uintptr_t(getSwigcptr(g)), C.uintptr_t(getSwigcptr(h)), p,
		C.size_t(len(bindings)), C.uintptr_t(workspace), C.size_t(workspaceSize), C.uintptr_t(stream)))
}

// GraphExecuteOrdered wraps cudnnfe_graph_execute_ordered without
// allocating: data holds device (or C-heap) addresses.
func GraphExecuteOrdered(g Struct_SS_cudnnfe_graph, h Struct_SS_cudnnfe_handle, data []uintptr, workspace uintptr, workspaceSize int64, stream uintptr) int32 {
	var p *C.uintptr_t
	if len(data) > 0 {
		p = (*C.uintptr_t)(unsafe.Pointer(&data[0]))
	}
	return int32(C.capi_execute_ordered(C.uintptr_t(getSwigcptr(g)), C.uintptr_t(getSwigcptr(h)), p,
		C.size_t(len(data)), C.uintptr_t(workspace), C.size_t(workspaceSize), C.uintptr_t(stream)))
}

// ---- Host execution ------------------------------------------------------

// HostArgs is the number of host buffers GraphExecuteHost passes without
// copying.
const HostArgs = C.CAPI_HOST_ARGS

// GraphExecuteHost runs a graph built for the CPU reference on Go-owned host
// buffers: bufs[i] is the buffer of the i-th UID of
// cudnnfe_graph_get_bound_uids (an empty slice passes NULL), and outputs[i]
// says whether it is a graph output (cudnnfe_tensor_get_kind). The caller
// has checked each buffer's size against its tensor. Up to HostArgs buffers
// are passed in place; beyond that they are copied into one C allocation,
// and the outputs copied back (inputs are never written). A non-empty message means the failure happened here, before the
// library was called; otherwise the message is on the handle.
func GraphExecuteHost(g Struct_SS_cudnnfe_graph, h Struct_SS_cudnnfe_handle, bufs [][]byte, outputs []bool) (int32, string) {
	gp, hp := C.uintptr_t(getSwigcptr(g)), C.uintptr_t(getSwigcptr(h))
	if len(bufs) > HostArgs {
		return executeHostCopy(gp, hp, bufs, outputs)
	}
	var p [HostArgs]unsafe.Pointer
	for i, b := range bufs {
		if len(b) > 0 {
			p[i] = unsafe.Pointer(&b[0])
		}
	}
	st := C.capi_execute_host(gp, hp, C.size_t(len(bufs)), p[0], p[1], p[2], p[3], p[4], p[5], p[6],
		p[7], p[8], p[9], p[10], p[11], p[12], p[13], p[14], p[15])
	return int32(st), ""
}

func executeHostCopy(gp, hp C.uintptr_t, bufs [][]byte, outputs []bool) (int32, string) {
	const align = 64
	const none = ^uint64(0)
	offsets := make([]uint64, len(bufs))
	total := uint64(0)
	for i, b := range bufs {
		if len(b) == 0 {
			offsets[i] = none
			continue
		}
		offsets[i] = total
		total += (uint64(len(b)) + align - 1) / align * align
	}
	arena := C.malloc(C.size_t(total + align))
	if arena == nil {
		return int32(CUDNNFE_STATUS_OUT_OF_MEMORY), "cannot allocate host staging memory for execute"
	}
	defer C.free(arena)
	view := func(i int) []byte {
		return unsafe.Slice((*byte)(unsafe.Add(arena, offsets[i])), len(bufs[i]))
	}
	for i, b := range bufs {
		if offsets[i] != none {
			copy(view(i), b)
		}
	}
	st := int32(C.capi_execute_arena(gp, hp, (*C.char)(arena), (*C.uint64_t)(unsafe.Pointer(&offsets[0])),
		C.size_t(len(bufs))))
	if st == -1 {
		return int32(CUDNNFE_STATUS_OUT_OF_MEMORY), "cannot allocate the pointer table for execute"
	}
	if st == int32(CUDNNFE_STATUS_OK) {
		for i, b := range bufs {
			if offsets[i] != none && outputs[i] {
				copy(b, view(i))
			}
		}
	}
	return st, ""
}

// LibraryInfoSize is sizeof(cudnnfe_library_info_t): the struct_size the
// generated cudnnfe_library_info_init_sized needs.
const LibraryInfoSize = C.sizeof_cudnnfe_library_info_t
