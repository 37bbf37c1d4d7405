/* A stand-in libcudart that reports one device (sm_90, "stub GPU") and
 * accepts every call, the graph and capture calls included, counting them
 * in stub_cudart_counters; memory calls use host memory. Never used for a
 * GPU test: see stub_cudnn.c. */
#include <stdlib.h>
#include <string.h>

#include "stub_counters.h"

struct stub_cudart_counters stub_cudart_counters;

int cudaRuntimeGetVersion(int *version) {
  *version = 12080;
  return 0;
}
int cudaGetDeviceCount(int *count) {
  *count = 1;
  return 0;
}
int cudaGetDevice(int *device) {
  *device = 0;
  return 0;
}
int cudaSetDevice(int device) {
  return 0;
}
/* cudaDevAttrComputeCapabilityMajor 75, Minor 76, MultiProcessorCount 16. */
int cudaDeviceGetAttribute(int *value, int attr, int device) {
  *value = attr == 75 ? 9 : attr == 76 ? 0 : 132;
  return 0;
}
int cudaGetDeviceProperties_v2(void *prop, int device) {
  strcpy((char *)prop, "stub GPU");
  return 0;
}
const char *cudaGetErrorString(int error) {
  return "stub CUDA error";
}
const char *cudaGetErrorName(int error) {
  return "cudaErrorStub";
}
int cudaGetLastError(void) {
  return 0;
}
int cudaMalloc(void **ptr, unsigned long size) {
  *ptr = malloc(size ? size : 1);
  return 0;
}
int cudaFree(void *ptr) {
  free(ptr);
  return 0;
}
int cudaMemcpy(void *dst, const void *src, unsigned long count, int kind) {
  memcpy(dst, src, count);
  return 0;
}
int cudaMemset(void *ptr, int value, unsigned long count) {
  memset(ptr, value, count);
  return 0;
}
int cudaDeviceSynchronize(void) {
  return 0;
}
int cudaStreamSynchronize(void *stream) {
  return 0;
}
int cudaEventCreate(void **event) {
  *event = malloc(1);
  return 0;
}
int cudaEventDestroy(void *event) {
  free(event);
  return 0;
}
int cudaEventRecord(void *event, void *stream) {
  return 0;
}
int cudaEventSynchronize(void *event) {
  return 0;
}
int cudaEventElapsedTime(float *ms, void *start, void *end) {
  *ms = 1.0f;
  return 0;
}
int cudaStreamCreateWithFlags(void **stream, unsigned flags) {
  *stream = malloc(1);
  return 0;
}
int cudaStreamDestroy(void *stream) {
  free(stream);
  return 0;
}
int cudaStreamBeginCapture(void *stream, int mode) {
  ++stub_cudart_counters.captures;
  return 0;
}
/* A stream whose address is stub_cudart_counters.capturing reports itself
 * as being captured (status 1, cudaStreamCaptureStatusActive). */
int cudaStreamIsCapturing(void *stream, int *status) {
  *status = stream && stream == stub_cudart_counters.capturing ? 1 : 0;
  return 0;
}
int cudaStreamEndCapture(void *stream, void **graph) {
  if (stub_cudart_counters.fail_end_capture) {
    *graph = 0;
    return 901; /* cudaErrorStreamCaptureInvalidated */
  }
  *graph = malloc(1);
  return 0;
}
int cudaGraphCreate(void **graph, unsigned flags) {
  *graph = malloc(1);
  return 0;
}
int cudaGraphDestroy(void *graph) {
  free(graph);
  return 0;
}
int cudaGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags) {
  ++stub_cudart_counters.instantiates;
  *exec = malloc(1);
  return 0;
}
int cudaGraphExecDestroy(void *exec) {
  ++stub_cudart_counters.exec_destroys;
  free(exec);
  return 0;
}
int cudaGraphLaunch(void *exec, void *stream) {
  ++stub_cudart_counters.launches;
  stub_cudart_counters.last_launch_stream = stream;
  return 0;
}
