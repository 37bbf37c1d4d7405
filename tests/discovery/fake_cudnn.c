/* A stand-in libcudnn.so.9 for the discovery tests: exports the entry
 * points cudnnfe resolves, reports FAKE_CUDNN_VERSION, and does nothing
 * else (every other call fails). Never used for a GPU test. */
#include <stddef.h>

size_t cudnnGetVersion(void) {
  return FAKE_CUDNN_VERSION;
}
const char *cudnnGetErrorString(int status) {
  return "fake cuDNN";
}
void cudnnGetLastErrorString(char *message, size_t max_size) {
  if (message && max_size) message[0] = 0;
}
/* 4000 is CUDNN_STATUS_INTERNAL_ERROR: a real handle is never made. */
int cudnnCreate(void *handle) {
  return 4000;
}
int cudnnDestroy(void *handle) {
  return 4000;
}
int cudnnSetStream(void *handle, void *stream) {
  return 4000;
}
int cudnnBackendCreateDescriptor(int type, void *descriptor) {
  return 4000;
}
int cudnnBackendDestroyDescriptor(void *descriptor) {
  return 4000;
}
int cudnnBackendSetAttribute(void) {
  return 4000;
}
int cudnnBackendGetAttribute(void) {
  return 4000;
}
int cudnnBackendFinalize(void *descriptor) {
  return 4000;
}
int cudnnBackendExecute(void *handle, void *plan, void *variant) {
  return 4000;
}
