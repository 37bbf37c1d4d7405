/* A stand-in libcudnn.so.9 that accepts everything and runs nothing: every
 * call returns at once with success, and counts itself in stub_counters, so
 * that tests and bench/bench_host_overhead.cpp see what the library asks of
 * cuDNN per execute (variant packs made, cudnnSetStream, executes) and what
 * the library itself costs. Never used for a GPU test. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stub_counters.h"

struct stub_counters stub_counters;

/* A descriptor: its type, and for a variant pack the data pointers last set. */
struct stub_descriptor {
  int type;
  int64_t count;
  void *pointers[STUB_MAX_POINTERS];
};

/* CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR and CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS
 * in cudnn_graph.h (cuDNN 9). */
enum { kVariantPack = 16, kDataPointers = 1001 };

size_t cudnnGetVersion(void) {
  return 91900;
}
const char *cudnnGetErrorString(int status) {
  return "stub cuDNN";
}
void cudnnGetLastErrorString(char *message, size_t max_size) {
  if (message && max_size) message[0] = 0;
}
int cudnnCreate(void **handle) {
  *handle = malloc(16);
  return 0;
}
int cudnnDestroy(void *handle) {
  free(handle);
  return 0;
}
int cudnnSetStream(void *handle, void *stream) {
  ++stub_counters.set_stream;
  return 0;
}
int cudnnBackendCreateDescriptor(int type, void **descriptor) {
  struct stub_descriptor *d = calloc(1, sizeof(*d));
  d->type = type;
  *descriptor = d;
  if (type == kVariantPack) ++stub_counters.packs_created;
  return 0;
}
int cudnnBackendDestroyDescriptor(void *descriptor) {
  free(descriptor);
  return 0;
}
int cudnnBackendSetAttribute(void *descriptor, int name, int type, int64_t count,
                             const void *values) {
  struct stub_descriptor *d = descriptor;
  if (d->type == kVariantPack && name == kDataPointers && count <= STUB_MAX_POINTERS) {
    d->count = count;
    memcpy(d->pointers, values, (size_t)count * sizeof(void *));
  }
  return 0;
}
int cudnnBackendGetAttribute(void *descriptor, int name, int type, int64_t requested,
                             int64_t *count, void *values) {
  if (count) *count = 0;
  return 0;
}
int cudnnBackendFinalize(void *descriptor) {
  return 0;
}
int cudnnBackendExecute(void *handle, void *plan, void *pack) {
  const struct stub_descriptor *d = pack;
  ++stub_counters.executes;
  stub_counters.last_pack = pack;
  stub_counters.last_count = d->count;
  memcpy(stub_counters.last_pointers, d->pointers, (size_t)d->count * sizeof(void *));
  return 0;
}
int cudnnBackendPopulateCudaGraph(void *handle, void *plan, void *pack, void *graph) {
  ++stub_counters.populates;
  return 0;
}
int cudnnBackendUpdateCudaGraph(void *handle, void *plan, void *pack, void *graph) {
  return 0;
}
