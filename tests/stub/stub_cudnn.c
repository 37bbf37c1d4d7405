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

/* A descriptor: its type, for a variant pack the data pointers last set,
 * for a tensor its UID, dims and strides. */
struct stub_descriptor {
  int type;
  int64_t count;
  void *pointers[STUB_MAX_POINTERS];
  struct stub_tensor tensor;
};

/* CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
 * CUDNN_BACKEND_TENSOR_DESCRIPTOR and CUDNN_ATTR_TENSOR_DIMENSIONS, _STRIDES
 * and _UNIQUE_ID in cudnn_graph.h (cuDNN 9). */
enum {
  kVariantPack = 16,
  kDataPointers = 1001,
  kTensor = 17,
  kTensorDims = 902,
  kTensorStrides = 903,
  kTensorUid = 906
};

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
  stub_counters.last_stream = stream;
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
  if (d->type == kTensor && count >= 1 && count <= 8) {
    if (name == kTensorDims) {
      d->tensor.rank = count;
      memcpy(d->tensor.dims, values, (size_t)count * sizeof(int64_t));
    } else if (name == kTensorStrides) {
      memcpy(d->tensor.strides, values, (size_t)count * sizeof(int64_t));
    } else if (name == kTensorUid) {
      memcpy(&d->tensor.uid, values, sizeof(int64_t));
    }
  }
  return 0;
}
int cudnnBackendGetAttribute(void *descriptor, int name, int type, int64_t requested,
                             int64_t *count, void *values) {
  if (count) *count = 0;
  return 0;
}
int cudnnBackendFinalize(void *descriptor) {
  const struct stub_descriptor *d = descriptor;
  if (d->type == kTensor && stub_counters.tensors_logged < STUB_MAX_TENSORS)
    stub_counters.tensors[stub_counters.tensors_logged++] = d->tensor;
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
