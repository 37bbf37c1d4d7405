/* Helpers shared by the C examples: FP16/BF16 conversion, a tiny RNG, and
 * running a graph on the GPU (through the CUDA runtime, when the example was
 * built with it and a GPU is present) or on the CPU reference. */
#ifndef CUDNNFE_EXAMPLE_UTIL_H
#define CUDNNFE_EXAMPLE_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudnnfe/cudnnfe.h"

#ifdef CUDNNFE_EXAMPLE_HAVE_CUDART
#include <cuda_runtime_api.h>
#endif

#define EXAMPLE_CHECK(call)                                                               \
  do {                                                                                    \
    cudnnfe_status_t example_status = (call);                                             \
    if (example_status != CUDNNFE_STATUS_OK) {                                            \
      fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #call,            \
              cudnnfe_status_name(example_status), cudnnfe_last_error());                \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

static uint16_t example_float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
  if (exp == 0xffu) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0u));
  int32_t e = (int32_t)exp - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return (uint16_t)sign;
    man |= 0x800000u;
    uint32_t shift = (uint32_t)(14 - e);
    uint32_t half = man >> shift, rest = man & ((1u << shift) - 1u), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1u))) ++half;
    return (uint16_t)(sign | half);
  }
  uint32_t half = sign | ((uint32_t)e << 10) | (man >> 13), rest = man & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return (uint16_t)half;
}

static float example_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  float f;
  if (exp == 0) {
    f = ldexpf((float)man, -24);
    return sign ? -f : f;
  }
  uint32_t x = exp == 31 ? (sign | 0x7f800000u | (man << 13))
                         : (sign | ((exp - 15 + 127) << 23) | (man << 13));
  memcpy(&f, &x, 4);
  return f;
}

/* Uniform in [-1, 1), deterministic. */
static float example_random(uint64_t *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((*state >> 40) & 0xffffffu) / 8388608.0f - 1.0f;
}

typedef struct {
  int64_t uid;
  void *host;
  size_t bytes;
} example_buffer_t;

static int example_gpu_usable(void) {
#ifdef CUDNNFE_EXAMPLE_HAVE_CUDART
  int32_t devices = 0;
  int64_t version = 0;
  if (cudnnfe_device_count(&devices) != CUDNNFE_STATUS_OK || devices == 0) return 0;
  return cudnnfe_cudnn_version(&version) == CUDNNFE_STATUS_OK;
#else
  return 0;
#endif
}

/* --8<-- [start:build_and_run] (docs/getting-started/c.md shows this function) */
/* Builds `graph` for the GPU when one is usable, else for the CPU reference,
 * and runs it on the host buffers (through device copies on the GPU).
 * Returns the target that ran. */
static cudnnfe_target_t example_build_and_run(cudnnfe_graph_t *graph, example_buffer_t *buffers,
                                              int count) {
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = example_gpu_usable() ? CUDNNFE_TARGET_GPU : CUDNNFE_TARGET_CPU_REFERENCE;
  cudnnfe_handle_t *handle;
  EXAMPLE_CHECK(cudnnfe_handle_create(&handle, -1));
  EXAMPLE_CHECK(cudnnfe_graph_build(graph, handle, &options));
  cudnnfe_binding_t bindings[16];
  int i;
  if (options.target == CUDNNFE_TARGET_CPU_REFERENCE) {
    for (i = 0; i < count; ++i) {
      bindings[i].uid = buffers[i].uid;
      bindings[i].data = buffers[i].host;
    }
    EXAMPLE_CHECK(cudnnfe_graph_execute(graph, handle, bindings, (size_t)count, NULL, 0, NULL));
  } else {
#ifdef CUDNNFE_EXAMPLE_HAVE_CUDART
    int64_t workspace_size = 0;
    void *workspace = NULL;
    EXAMPLE_CHECK(cudnnfe_graph_get_workspace_size(graph, &workspace_size));
    if (workspace_size > 0) cudaMalloc(&workspace, (size_t)workspace_size);
    for (i = 0; i < count; ++i) {
      bindings[i].uid = buffers[i].uid;
      cudaMalloc(&bindings[i].data, buffers[i].bytes);
      cudaMemcpy(bindings[i].data, buffers[i].host, buffers[i].bytes, cudaMemcpyHostToDevice);
    }
    EXAMPLE_CHECK(cudnnfe_graph_execute(graph, handle, bindings, (size_t)count, workspace,
                                        (size_t)workspace_size, NULL));
    if (cudaDeviceSynchronize() != cudaSuccess) {
      fprintf(stderr, "CUDA error after execute\n");
      exit(1);
    }
    for (i = 0; i < count; ++i) {
      cudaMemcpy(buffers[i].host, bindings[i].data, buffers[i].bytes, cudaMemcpyDeviceToHost);
      cudaFree(bindings[i].data);
    }
    cudaFree(workspace);
#endif
  }
  {
    const char *plan = "";
    cudnnfe_graph_get_plan_name(graph, &plan);
    printf("ran on %s (plan %s)\n",
           options.target == CUDNNFE_TARGET_GPU ? "the GPU" : "the CPU reference", plan);
  }
  cudnnfe_handle_destroy(handle);
  return options.target;
}
/* --8<-- [end:build_and_run] */

#endif /* CUDNNFE_EXAMPLE_UTIL_H */
