package capi

// Hand-written cgo for the constructs SWIG cannot wrap soundly (see
// cudnnfe.i and docs/design-go.md, "Go binding"):
//
//   - the ops with options structs, whose `name` member and fixed arrays
//     SWIG cannot set soundly: each op is one cgo call that copies a C
//     struct filled from its Go mirror (the mirrors and their toC are
//     generated from abi/manifest.json into options_gen.go) and points its
//     name, and any pointer field, at Go memory passed as call arguments,
//     living only for the call;
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
// memory alive for the call), never stored in Go memory. validate != 0
// validates as that build would (cudnnfe_graph_validate_for_build).
static cudnnfe_status_t capi_graph_build(uintptr_t g, uintptr_t h,
                                         const cudnnfe_build_options_t *o,
                                         const int64_t *engines, int32_t num_engines,
                                         const char *cache_dir, int has_cache_dir,
                                         uintptr_t kernel_cache, uintptr_t device_properties,
                                         int validate) {
  cudnnfe_build_options_t copy;
  const cudnnfe_build_options_t *pass = NULL;
  if (o) {
    copy = *o;
    copy.num_exclude_engines = num_engines;
    copy.exclude_engines = engines;
    copy.plan_cache_dir = has_cache_dir ? (cache_dir ? cache_dir : "") : NULL;
    copy.kernel_cache = (cudnnfe_kernel_cache_t *)kernel_cache;
    copy.device_properties = (const cudnnfe_device_properties_t *)device_properties;
    pass = &copy;
  }
  if (validate)
    return cudnnfe_graph_validate_for_build((cudnnfe_graph_t *)g, (cudnnfe_handle_t *)h, pass);
  return cudnnfe_graph_build((cudnnfe_graph_t *)g, (cudnnfe_handle_t *)h, pass);
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
                                              size_t size, const cudnnfe_plan_load_options_t *o) {
  return cudnnfe_graph_deserialize_plan((cudnnfe_graph_t *)g, (cudnnfe_handle_t *)h, data, size, o);
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
// ---- The ops of issue 16 (split batch norm, block scale, MoE) ----
// in and out are the C function's tensor operands and outputs in its order.

static cudnnfe_status_t capi_add_genstats(uintptr_t g, int64_t x, const cudnnfe_genstats_options_t *o,
                                          const char *name, int64_t *sum, int64_t *sq_sum) {
  cudnnfe_genstats_options_t c;
  if (o) { c = *o; c.name = name; }
  return cudnnfe_graph_add_genstats((cudnnfe_graph_t *)g, x, o ? &c : NULL, sum, sq_sum);
}

static cudnnfe_status_t capi_add_bn_finalize(uintptr_t g, const int64_t *in,
                                             const cudnnfe_bn_finalize_options_t *o,
                                             const char *name, int64_t *out) {
  cudnnfe_bn_finalize_options_t c;
  if (o) { c = *o; c.name = name; }
  return cudnnfe_graph_add_bn_finalize((cudnnfe_graph_t *)g, in[0], in[1], in[2], in[3], in[4],
                                       in[5], in[6], in[7], in[8], o ? &c : NULL, &out[0], &out[1],
                                       &out[2], &out[3], &out[4], &out[5]);
}

static cudnnfe_status_t capi_add_dbn_weight(uintptr_t g, const int64_t *in,
                                            const cudnnfe_dbn_weight_options_t *o,
                                            const char *name, int64_t *out) {
  cudnnfe_dbn_weight_options_t c;
  if (o) { c = *o; c.name = name; }
  return cudnnfe_graph_add_dbn_weight((cudnnfe_graph_t *)g, in[0], in[1], in[2], in[3], in[4],
                                      o ? &c : NULL, &out[0], &out[1], &out[2], &out[3], &out[4]);
}

static cudnnfe_status_t capi_add_block_scale(int dequantize, uintptr_t g, int64_t x, int64_t scale,
                                             const cudnnfe_block_scale_options_t *o,
                                             const char *name, int64_t *y, int64_t *scale_out) {
  cudnnfe_block_scale_options_t c;
  if (o) { c = *o; c.name = name; }
  if (dequantize)
    return cudnnfe_graph_add_block_scale_dequantize((cudnnfe_graph_t *)g, x, scale, o ? &c : NULL, y);
  return cudnnfe_graph_add_block_scale_quantize((cudnnfe_graph_t *)g, x, o ? &c : NULL, y, scale_out);
}

static cudnnfe_status_t capi_add_moe(int backward, uintptr_t g, const int64_t *in,
                                     const cudnnfe_moe_grouped_matmul_options_t *o,
                                     const char *name, int64_t *out) {
  cudnnfe_moe_grouped_matmul_options_t c;
  if (o) { c = *o; c.name = name; }
  if (backward)
    return cudnnfe_graph_add_moe_grouped_matmul_backward((cudnnfe_graph_t *)g, in[0], in[1], in[2],
                                                         o ? &c : NULL, out);
  return cudnnfe_graph_add_moe_grouped_matmul((cudnnfe_graph_t *)g, in[0], in[1], in[2], in[3],
                                              in[4], o ? &c : NULL, out);
}

static cudnnfe_status_t capi_add_paged_cache_load(uintptr_t g, const int64_t *in,
                                                  const cudnnfe_paged_cache_load_options_t *o,
                                                  const char *name, int64_t *y) {
  cudnnfe_paged_cache_load_options_t c;
  if (o) { c = *o; c.name = name; }
  return cudnnfe_graph_add_paged_cache_load((cudnnfe_graph_t *)g, in[0], in[1], in[2],
                                            o ? &c : NULL, y);
}

// ---- Execute-time shapes and the kernel cache ----

// Overrides arrive flat (the Go slices hold no pointers, as cgo requires):
// override i is uids[i] with ndims[i] dims and strides, taken in turn from
// dims and strides.
static cudnnfe_status_t capi_execute_overrides(uintptr_t g, uintptr_t h, const void *bindings,
                                               size_t n, const int64_t *uids, const int32_t *ndims,
                                               const int64_t *dims, const int64_t *strides,
                                               size_t num_overrides, uintptr_t workspace,
                                               size_t workspace_size, uintptr_t stream) {
  cudnnfe_shape_override_t stack[16];
  cudnnfe_shape_override_t *ov = stack;
  size_t i, at = 0;
  cudnnfe_status_t status;
  if (num_overrides > 16) {
    ov = (cudnnfe_shape_override_t *)malloc(num_overrides * sizeof(*ov));
    if (!ov) return -1;
  }
  for (i = 0; i < num_overrides; ++i) {
    ov[i].uid = uids[i];
    ov[i].num_dims = ndims[i];
    ov[i].dims = dims + at;
    ov[i].strides = strides + at;
    at += ndims[i] > 0 ? (size_t)ndims[i] : 0;
  }
  status = cudnnfe_graph_execute_with_overrides(
      (const cudnnfe_graph_t *)g, (cudnnfe_handle_t *)h, (const cudnnfe_binding_t *)bindings, n,
      num_overrides ? ov : NULL, num_overrides, (void *)workspace, workspace_size, (void *)stream);
  if (ov != stack) free(ov);
  return status;
}

static cudnnfe_status_t capi_kernel_cache_create(uintptr_t *out) {
  cudnnfe_kernel_cache_t *cache = NULL;
  cudnnfe_status_t status = cudnnfe_kernel_cache_create(&cache);
  *out = (uintptr_t)cache;
  return status;
}

// ---- Device properties and bound executions (0.3) ----

// The created object crosses back as a uintptr_t, as the kernel cache does:
// SWIG gives their `T **` out-parameters the Go type of a single pointer.
static cudnnfe_status_t capi_device_properties_create(int32_t device, uintptr_t *out) {
  cudnnfe_device_properties_t *p = NULL;
  cudnnfe_status_t status = cudnnfe_device_properties_create(&p, device);
  *out = (uintptr_t)p;
  return status;
}

static cudnnfe_status_t capi_device_properties_from_json(const char *data, size_t size,
                                                         uintptr_t *out) {
  cudnnfe_device_properties_t *p = NULL;
  cudnnfe_status_t status = cudnnfe_device_properties_create_from_json(&p, data, size);
  *out = (uintptr_t)p;
  return status;
}

// data holds device (or C-heap) addresses, which the bound execution keeps.
static cudnnfe_status_t capi_graph_bind(uintptr_t g, uintptr_t h, const uintptr_t *data, size_t n,
                                        uintptr_t workspace, size_t workspace_size,
                                        int32_t cuda_graph, uintptr_t *out) {
  cudnnfe_bind_options_t o;
  cudnnfe_bound_t *bound = NULL;
  cudnnfe_status_t status;
  cudnnfe_bind_options_init_sized(&o, sizeof o);
  o.cuda_graph = cuda_graph;
  status = cudnnfe_graph_bind(&bound, (const cudnnfe_graph_t *)g, (cudnnfe_handle_t *)h,
                              (void *const *)data, n, (void *)workspace, workspace_size, &o);
  *out = (uintptr_t)bound;
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

// ---- Ops with options: the Go mirrors of the options structs, and their
// toC, are generated from abi/manifest.json (options_gen.go) ----------------

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

// GraphAddMatmul wraps cudnnfe_graph_add_matmul.
func GraphAddMatmul(g Struct_SS_cudnnfe_graph, a, b int64, o *MatmulOptions, out *int64) int32 {
	var c C.cudnnfe_matmul_options_t
	var pc *C.cudnnfe_matmul_options_t
	var name *C.char
	if o != nil {
		o.toC(&c)
		pc = &c
		name = cString(o.Name)
	}
	return int32(C.capi_add_matmul(C.uintptr_t(getSwigcptr(g)), C.int64_t(a), C.int64_t(b), pc,
		name, (*C.int64_t)(unsafe.Pointer(out))))
}

// GraphAddPointwise wraps cudnnfe_graph_add_pointwise.
func GraphAddPointwise(g Struct_SS_cudnnfe_graph, mode int32, in0, in1, in2 int64, o *PointwiseOptions, out *int64) int32 {
	var c C.cudnnfe_pointwise_options_t
	var pc *C.cudnnfe_pointwise_options_t
	var name *C.char
	if o != nil {
		o.toC(&c)
		pc = &c
		name = cString(o.Name)
	}
	return int32(C.capi_add_pointwise(C.uintptr_t(getSwigcptr(g)), C.cudnnfe_pointwise_mode_t(mode),
		C.int64_t(in0), C.int64_t(in1), C.int64_t(in2), pc, name, (*C.int64_t)(unsafe.Pointer(out))))
}

// GraphAddReduction wraps cudnnfe_graph_add_reduction.
func GraphAddReduction(g Struct_SS_cudnnfe_graph, mode int32, x int64, o *ReductionOptions, out *int64) int32 {
	var c C.cudnnfe_reduction_options_t
	var pc *C.cudnnfe_reduction_options_t
	var name *C.char
	if o != nil {
		o.toC(&c)
		pc = &c
		name = cString(o.Name)
	}
	return int32(C.capi_add_reduction(C.uintptr_t(getSwigcptr(g)), C.cudnnfe_reduction_mode_t(mode),
		C.int64_t(x), pc, name, (*C.int64_t)(unsafe.Pointer(out))))
}

// GraphAddSDPA wraps cudnnfe_graph_add_sdpa; stats may be nil when
// GenerateStats is 0.
func GraphAddSDPA(g Struct_SS_cudnnfe_graph, q, k, v int64, o *SDPAOptions, out, stats *int64) int32 {
	var c C.cudnnfe_sdpa_options_t
	var pc *C.cudnnfe_sdpa_options_t
	var name *C.char
	if o != nil {
		o.toC(&c)
		pc = &c
		name = cString(o.Name)
	}
	return int32(C.capi_add_sdpa(C.uintptr_t(getSwigcptr(g)), C.int64_t(q), C.int64_t(k),
		C.int64_t(v), pc, name, (*C.int64_t)(unsafe.Pointer(out)), (*C.int64_t)(unsafe.Pointer(stats))))
}

// GraphAddSDPABackward wraps cudnnfe_graph_add_sdpa_backward, and
// cudnnfe_graph_add_sdpa_backward_ex when dbias is not nil.
func GraphAddSDPABackward(g Struct_SS_cudnnfe_graph, q, k, v, o, dO, stats int64, opts *SDPABackwardOptions, dq, dk, dv, dbias *int64) int32 {
	var c C.cudnnfe_sdpa_backward_options_t
	var pc *C.cudnnfe_sdpa_backward_options_t
	var name *C.char
	if opts != nil {
		opts.toC(&c)
		pc = &c
		name = cString(opts.Name)
	}
	return int32(C.capi_add_sdpa_backward(C.uintptr_t(getSwigcptr(g)), C.int64_t(q), C.int64_t(k),
		C.int64_t(v), C.int64_t(o), C.int64_t(dO), C.int64_t(stats), pc, name,
		(*C.int64_t)(unsafe.Pointer(dq)), (*C.int64_t)(unsafe.Pointer(dk)), (*C.int64_t)(unsafe.Pointer(dv)),
		(*C.int64_t)(unsafe.Pointer(dbias))))
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
		opts.toC(&c)
		pc = &c
		name = cString(opts.Name)
	}
	return int32(C.capi_add_norm(C.int(kind), C.uintptr_t(getSwigcptr(g)), (*C.int64_t)(unsafe.Pointer(&in[0])),
		pc, name, (*C.int64_t)(unsafe.Pointer(out[0])), (*C.int64_t)(unsafe.Pointer(out[1])),
		(*C.int64_t)(unsafe.Pointer(out[2])), (*C.int64_t)(unsafe.Pointer(out[3])),
		(*C.int64_t)(unsafe.Pointer(out[4]))))
}

// GraphAddSoftmax wraps cudnnfe_graph_add_softmax; stats may be nil when
// GenerateStats is 0.
func GraphAddSoftmax(g Struct_SS_cudnnfe_graph, x int64, opts *SoftmaxOptions, y, stats *int64) int32 {
	var c C.cudnnfe_softmax_options_t
	var pc *C.cudnnfe_softmax_options_t
	var name *C.char
	if opts != nil {
		opts.toC(&c)
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

// GraphAddResample wraps cudnnfe_graph_add_resample.
func GraphAddResample(g Struct_SS_cudnnfe_graph, x int64, o *ResampleOptions, y, index *int64) int32 {
	var c C.cudnnfe_resample_options_t
	var pc *C.cudnnfe_resample_options_t
	var name *C.char
	if o != nil {
		o.toC(&c)
		pc = &c
		name = cString(o.Name)
	}
	return int32(C.capi_add_resample(C.uintptr_t(getSwigcptr(g)), C.int64_t(x), pc, name,
		(*C.int64_t)(unsafe.Pointer(y)), (*C.int64_t)(unsafe.Pointer(index))))
}

// GraphAddRNG wraps cudnnfe_graph_add_rng.
func GraphAddRNG(g Struct_SS_cudnnfe_graph, dims []int64, seed, offset int64, o *RNGOptions, y *int64) int32 {
	var c C.cudnnfe_rng_options_t
	var pc *C.cudnnfe_rng_options_t
	var name *C.char
	if o != nil {
		o.toC(&c)
		pc = &c
		name = cString(o.Name)
	}
	return int32(C.capi_add_rng(C.uintptr_t(getSwigcptr(g)), C.int32_t(len(dims)), int64Ptr(dims),
		C.int64_t(seed), C.int64_t(offset), pc, name, (*C.int64_t)(unsafe.Pointer(y))))
}

// ---- FP8 attention ----------------------------------------------------------

// GraphAddSDPAFP8 wraps cudnnfe_graph_add_sdpa_fp8: t holds q, k, v,
// descale_q, descale_k, descale_v, descale_s, scale_s, scale_o; out
// receives o, stats, amax_s, amax_o (stats stays 0 unless GenerateStats).
func GraphAddSDPAFP8(g Struct_SS_cudnnfe_graph, t [9]int64, o *SDPAFP8Options, out *[4]int64) int32 {
	var c C.cudnnfe_sdpa_fp8_options_t
	var pc *C.cudnnfe_sdpa_fp8_options_t
	var name *C.char
	wantStats := 0
	if o != nil {
		o.toC(&c)
		pc = &c
		name = cString(o.Name)
		if o.GenerateStats != 0 {
			wantStats = 1
		}
	}
	return int32(C.capi_add_sdpa_fp8(C.uintptr_t(getSwigcptr(g)), (*C.int64_t)(unsafe.Pointer(&t[0])),
		pc, name, (*C.int64_t)(unsafe.Pointer(&out[0])), C.int(wantStats)))
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
		o.toC(&c)
		pc = &c
		name = cString(o.Name)
	}
	return int32(C.capi_add_sdpa_fp8_backward(C.uintptr_t(getSwigcptr(g)),
		(*C.int64_t)(unsafe.Pointer(&t[0])), pc, name, (*C.int64_t)(unsafe.Pointer(&out[0]))))
}

// GraphBuild wraps cudnnfe_graph_build; h may be nil, o nil passes NULL.
// The options' pointer fields come as arguments: excludeEngines (its
// length is num_exclude_engines), planCacheDir (nil passes NULL, the
// environment's directory; "" : no directory), kernelCache and
// deviceProperties (nil: none).
func GraphBuild(g Struct_SS_cudnnfe_graph, h Struct_SS_cudnnfe_handle, o *BuildOptions, excludeEngines []int64, planCacheDir *string, kernelCache Struct_SS_cudnnfe_kernel_cache, deviceProperties Struct_SS_cudnnfe_device_properties) int32 {
	return graphBuild(g, h, o, excludeEngines, planCacheDir, kernelCache, deviceProperties, false)
}

// GraphValidateForBuild wraps cudnnfe_graph_validate_for_build, with the
// arguments of GraphBuild.
func GraphValidateForBuild(g Struct_SS_cudnnfe_graph, h Struct_SS_cudnnfe_handle, o *BuildOptions, excludeEngines []int64, planCacheDir *string, kernelCache Struct_SS_cudnnfe_kernel_cache, deviceProperties Struct_SS_cudnnfe_device_properties) int32 {
	return graphBuild(g, h, o, excludeEngines, planCacheDir, kernelCache, deviceProperties, true)
}

func graphBuild(g Struct_SS_cudnnfe_graph, h Struct_SS_cudnnfe_handle, o *BuildOptions, excludeEngines []int64, planCacheDir *string, kernelCache Struct_SS_cudnnfe_kernel_cache, deviceProperties Struct_SS_cudnnfe_device_properties, validate bool) int32 {
	var c C.cudnnfe_build_options_t
	var pc *C.cudnnfe_build_options_t
	var engines *C.int64_t
	var numEngines C.int32_t
	var dir *C.char
	var hasDir, validateFlag C.int
	if validate {
		validateFlag = 1
	}
	if o != nil {
		o.toC(&c)
		if len(excludeEngines) > 0 {
			engines = (*C.int64_t)(unsafe.Pointer(&excludeEngines[0]))
			numEngines = C.int32_t(len(excludeEngines))
			if len(excludeEngines) > 1<<30 {
				numEngines = 1 << 30 // the library refuses it with its message
			}
		}
		if planCacheDir != nil {
			hasDir = 1
			dir = cString(*planCacheDir)
		}
		pc = &c
	}
	return int32(C.capi_graph_build(C.uintptr_t(getSwigcptr(g)), C.uintptr_t(getSwigcptr(h)), pc,
		engines, numEngines, dir, hasDir, C.uintptr_t(getSwigcptr(kernelCache)),
		C.uintptr_t(getSwigcptr(deviceProperties)), validateFlag))
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
		o.toC(&c)
		pc = &c
	}
	return int32(C.capi_autotune(C.uintptr_t(getSwigcptr(g)), C.uintptr_t(getSwigcptr(h)), p,
		C.size_t(len(bindings)), C.uintptr_t(workspace), C.size_t(workspaceSize), C.uintptr_t(stream), pc))
}

// GraphDeserializePlan wraps cudnnfe_graph_deserialize_plan; h may be
// nil, o nil passes NULL (defaults).
func GraphDeserializePlan(g Struct_SS_cudnnfe_graph, h Struct_SS_cudnnfe_handle, data []byte, o *PlanLoadOptions) int32 {
	var p *C.char
	if len(data) > 0 {
		p = (*C.char)(unsafe.Pointer(&data[0]))
	}
	var c C.cudnnfe_plan_load_options_t
	var pc *C.cudnnfe_plan_load_options_t
	if o != nil {
		o.toC(&c)
		pc = &c
	}
	return int32(C.capi_deserialize_plan(C.uintptr_t(getSwigcptr(g)), C.uintptr_t(getSwigcptr(h)), p,
		C.size_t(len(data)), pc))
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

// ---- The ops of issue 16: split batch norm, block scale, MoE ----------------

// GraphAddGenstats wraps cudnnfe_graph_add_genstats.
func GraphAddGenstats(g Struct_SS_cudnnfe_graph, x int64, o *GenstatsOptions, sum, sqSum *int64) int32 {
	var c C.cudnnfe_genstats_options_t
	var pc *C.cudnnfe_genstats_options_t
	var name *C.char
	if o != nil {
		o.toC(&c)
		pc = &c
		name = cString(o.Name)
	}
	return int32(C.capi_add_genstats(C.uintptr_t(getSwigcptr(g)), C.int64_t(x), pc, name,
		(*C.int64_t)(unsafe.Pointer(sum)), (*C.int64_t)(unsafe.Pointer(sqSum))))
}

// GraphAddBnFinalize wraps cudnnfe_graph_add_bn_finalize: in holds sum,
// sq_sum, scale, bias, epsilon, accum_count, prev_running_mean,
// prev_running_var, momentum; out receives eq_scale, eq_bias, mean,
// inv_variance, next_running_mean, next_running_var.
func GraphAddBnFinalize(g Struct_SS_cudnnfe_graph, in [9]int64, o *BnFinalizeOptions, out *[6]int64) int32 {
	var c C.cudnnfe_bn_finalize_options_t
	var pc *C.cudnnfe_bn_finalize_options_t
	var name *C.char
	if o != nil {
		o.toC(&c)
		pc = &c
		name = cString(o.Name)
	}
	return int32(C.capi_add_bn_finalize(C.uintptr_t(getSwigcptr(g)), (*C.int64_t)(unsafe.Pointer(&in[0])),
		pc, name, (*C.int64_t)(unsafe.Pointer(&out[0]))))
}

// GraphAddDbnWeight wraps cudnnfe_graph_add_dbn_weight: in holds dy, x,
// mean, inv_variance, scale; out receives dscale, dbias, eq_scale_dy,
// eq_scale_x, eq_bias.
func GraphAddDbnWeight(g Struct_SS_cudnnfe_graph, in [5]int64, o *DbnWeightOptions, out *[5]int64) int32 {
	var c C.cudnnfe_dbn_weight_options_t
	var pc *C.cudnnfe_dbn_weight_options_t
	var name *C.char
	if o != nil {
		o.toC(&c)
		pc = &c
		name = cString(o.Name)
	}
	return int32(C.capi_add_dbn_weight(C.uintptr_t(getSwigcptr(g)), (*C.int64_t)(unsafe.Pointer(&in[0])),
		pc, name, (*C.int64_t)(unsafe.Pointer(&out[0]))))
}

// GraphAddBlockScale wraps cudnnfe_graph_add_block_scale_quantize
// (dequantize false: x -> y, scaleOut) and
// cudnnfe_graph_add_block_scale_dequantize (true: x, scale -> y).
func GraphAddBlockScale(dequantize bool, g Struct_SS_cudnnfe_graph, x, scale int64, o *BlockScaleOptions, y, scaleOut *int64) int32 {
	var c C.cudnnfe_block_scale_options_t
	var pc *C.cudnnfe_block_scale_options_t
	var name *C.char
	if o != nil {
		o.toC(&c)
		pc = &c
		name = cString(o.Name)
	}
	deq := C.int(0)
	if dequantize {
		deq = 1
	}
	return int32(C.capi_add_block_scale(deq, C.uintptr_t(getSwigcptr(g)), C.int64_t(x), C.int64_t(scale),
		pc, name, (*C.int64_t)(unsafe.Pointer(y)), (*C.int64_t)(unsafe.Pointer(scaleOut))))
}

// GraphAddMoeGroupedMatmul wraps cudnnfe_graph_add_moe_grouped_matmul (in:
// token, weight, first_token_offset, token_index, token_ks) and, with
// backward, cudnnfe_graph_add_moe_grouped_matmul_backward (in: doutput,
// token, first_token_offset).
func GraphAddMoeGroupedMatmul(backward bool, g Struct_SS_cudnnfe_graph, in [5]int64, o *MoeGroupedMatmulOptions, out *int64) int32 {
	var c C.cudnnfe_moe_grouped_matmul_options_t
	var pc *C.cudnnfe_moe_grouped_matmul_options_t
	var name *C.char
	if o != nil {
		o.toC(&c)
		pc = &c
		name = cString(o.Name)
	}
	bwd := C.int(0)
	if backward {
		bwd = 1
	}
	return int32(C.capi_add_moe(bwd, C.uintptr_t(getSwigcptr(g)), (*C.int64_t)(unsafe.Pointer(&in[0])),
		pc, name, (*C.int64_t)(unsafe.Pointer(out))))
}

// GraphAddPagedCacheLoad wraps cudnnfe_graph_add_paged_cache_load (in:
// container, seq_len, page_table).
func GraphAddPagedCacheLoad(g Struct_SS_cudnnfe_graph, in [3]int64, o *PagedCacheLoadOptions, y *int64) int32 {
	var c C.cudnnfe_paged_cache_load_options_t
	var pc *C.cudnnfe_paged_cache_load_options_t
	var name *C.char
	if o != nil {
		o.toC(&c)
		pc = &c
		name = cString(o.Name)
	}
	return int32(C.capi_add_paged_cache_load(C.uintptr_t(getSwigcptr(g)),
		(*C.int64_t)(unsafe.Pointer(&in[0])), pc, name, (*C.int64_t)(unsafe.Pointer(y))))
}

// ---- Execute-time shapes and the kernel cache ------------------------------

// ShapeOverrides are the overrides of one execute, flat: override i is
// UIDs[i] with NDims[i] dims and as many strides, taken in turn from Dims
// and Strides (which the caller fills in step).
type ShapeOverrides struct {
	UIDs    []int64
	NDims   []int32
	Dims    []int64
	Strides []int64
}

// GraphExecuteWithOverrides wraps cudnnfe_graph_execute_with_overrides:
// bindings hold device (or C-heap) addresses, never Go memory. A non-empty
// message means the failure happened here, before the library was called;
// otherwise the message is on the handle.
func GraphExecuteWithOverrides(g Struct_SS_cudnnfe_graph, h Struct_SS_cudnnfe_handle, bindings []Binding, ov *ShapeOverrides, workspace uintptr, workspaceSize int64, stream uintptr) (int32, string) {
	var p unsafe.Pointer
	if len(bindings) > 0 {
		p = unsafe.Pointer(&bindings[0])
	}
	var uids, dims, strides *C.int64_t
	var ndims *C.int32_t
	if len(ov.UIDs) > 0 {
		uids, ndims = (*C.int64_t)(unsafe.Pointer(&ov.UIDs[0])), (*C.int32_t)(unsafe.Pointer(&ov.NDims[0]))
	}
	if len(ov.Dims) > 0 {
		dims, strides = (*C.int64_t)(unsafe.Pointer(&ov.Dims[0])), (*C.int64_t)(unsafe.Pointer(&ov.Strides[0]))
	}
	st := int32(C.capi_execute_overrides(C.uintptr_t(getSwigcptr(g)), C.uintptr_t(getSwigcptr(h)), p,
		C.size_t(len(bindings)), uids, ndims, dims, strides, C.size_t(len(ov.UIDs)),
		C.uintptr_t(workspace), C.size_t(workspaceSize), C.uintptr_t(stream)))
	if st == -1 {
		return int32(CUDNNFE_STATUS_OUT_OF_MEMORY), "cannot allocate the override table for execute"
	}
	return st, ""
}

// KernelCacheCreate wraps cudnnfe_kernel_cache_create (the SWIG layer
// would pass the out-pointer as an address).
func KernelCacheCreate(out *Struct_SS_cudnnfe_kernel_cache) int32 {
	var p C.uintptr_t
	st := int32(C.capi_kernel_cache_create(&p))
	if st == int32(CUDNNFE_STATUS_OK) {
		*out = SwigcptrStruct_SS_cudnnfe_kernel_cache(p)
	}
	return st
}

// DevicePropertiesCreate wraps cudnnfe_device_properties_create.
func DevicePropertiesCreate(device int32, out *Struct_SS_cudnnfe_device_properties) int32 {
	var p C.uintptr_t
	st := int32(C.capi_device_properties_create(C.int32_t(device), &p))
	if st == int32(CUDNNFE_STATUS_OK) {
		*out = SwigcptrStruct_SS_cudnnfe_device_properties(p)
	}
	return st
}

// DevicePropertiesCreateFromJSON wraps
// cudnnfe_device_properties_create_from_json; data is read during the call
// only.
func DevicePropertiesCreateFromJSON(data []byte, out *Struct_SS_cudnnfe_device_properties) int32 {
	var d *C.char
	if len(data) > 0 {
		d = (*C.char)(unsafe.Pointer(&data[0]))
	}
	var p C.uintptr_t
	st := int32(C.capi_device_properties_from_json(d, C.size_t(len(data)), &p))
	if st == int32(CUDNNFE_STATUS_OK) {
		*out = SwigcptrStruct_SS_cudnnfe_device_properties(p)
	}
	return st
}

// GraphBind wraps cudnnfe_bind_options_init and cudnnfe_graph_bind: data
// holds device (or C-heap) addresses, never Go memory, since the bound
// execution keeps them after the call.
func GraphBind(g Struct_SS_cudnnfe_graph, h Struct_SS_cudnnfe_handle, data []uintptr, workspace uintptr, workspaceSize int64, cudaGraph int32, out *Struct_SS_cudnnfe_bound) int32 {
	var d *C.uintptr_t
	if len(data) > 0 {
		d = (*C.uintptr_t)(unsafe.Pointer(&data[0]))
	}
	var p C.uintptr_t
	st := int32(C.capi_graph_bind(C.uintptr_t(getSwigcptr(g)), C.uintptr_t(getSwigcptr(h)), d,
		C.size_t(len(data)), C.uintptr_t(workspace), C.size_t(workspaceSize), C.int32_t(cudaGraph), &p))
	if st == int32(CUDNNFE_STATUS_OK) {
		*out = SwigcptrStruct_SS_cudnnfe_bound(p)
	}
	return st
}
