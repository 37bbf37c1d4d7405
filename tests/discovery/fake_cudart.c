/* A stand-in libcudart.so.13 for the discovery tests: exports the entry
 * points cudnnfe resolves, reports FAKE_CUDART_VERSION and no device
 * (cudaErrorNoDevice, 100, from every call that would need one). */
int cudaRuntimeGetVersion(int *version) {
  *version = FAKE_CUDART_VERSION;
  return 0;
}
int cudaGetDeviceCount(int *count) {
  *count = 0;
  return 100;
}
int cudaGetDevice(int *device) {
  return 100;
}
int cudaSetDevice(int device) {
  return 100;
}
int cudaDeviceGetAttribute(int *value, int attr, int device) {
  return 100;
}
int cudaGetDeviceProperties_v2(void *prop, int device) {
  return 100;
}
const char *cudaGetErrorString(int error) {
  return "no CUDA-capable device is detected";
}
const char *cudaGetErrorName(int error) {
  return "cudaErrorNoDevice";
}
int cudaGetLastError(void) {
  return 0;
}
int cudaMalloc(void **ptr, unsigned long size) {
  return 100;
}
int cudaFree(void *ptr) {
  return 0;
}
int cudaMemcpy(void) {
  return 100;
}
int cudaMemset(void) {
  return 100;
}
int cudaDeviceSynchronize(void) {
  return 100;
}
int cudaStreamSynchronize(void *stream) {
  return 100;
}
int cudaEventCreate(void *event) {
  return 100;
}
int cudaEventDestroy(void *event) {
  return 100;
}
int cudaEventRecord(void *event, void *stream) {
  return 100;
}
int cudaEventSynchronize(void *event) {
  return 100;
}
int cudaEventElapsedTime(float *ms, void *start, void *end) {
  return 100;
}
