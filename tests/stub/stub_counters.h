/* What the stub cuDNN and CUDA runtime (tests/stub) were asked to do. Both
 * libraries export `stub_counters`; a test reads them with dlsym. */
#ifndef CUDNNFE_STUB_COUNTERS_H
#define CUDNNFE_STUB_COUNTERS_H

#include <stdint.h>

#define STUB_MAX_POINTERS 256
#define STUB_MAX_TENSORS 512

/* A finalized tensor descriptor: its UID, dims and strides. */
struct stub_tensor {
  int64_t uid;
  int64_t rank;
  int64_t dims[8];
  int64_t strides[8];
};

struct stub_counters {
  /* cuDNN */
  long packs_created;
  long set_stream;
  void *last_stream; /* the stream of the last cudnnSetStream */
  long executes;
  long populates;
  void *last_pack;
  int64_t last_count;
  void *last_pointers[STUB_MAX_POINTERS];
  /* Every tensor descriptor finalized, in order (the first STUB_MAX_TENSORS). */
  long tensors_logged;
  struct stub_tensor tensors[STUB_MAX_TENSORS];
};

struct stub_cudart_counters {
  long captures;
  long instantiates;
  long launches;
  long exec_destroys;
  void *last_launch_stream;
  void *capturing;      /* cudaStreamIsCapturing says this stream is being captured */
  int fail_end_capture; /* cudaStreamEndCapture fails (an invalidated capture) */
};

#endif
