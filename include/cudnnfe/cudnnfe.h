/*
 * cudnnfe — a cuDNN Graph API frontend behind a stable C ABI.
 *
 * This header is the whole public surface. It is C99 and valid C++, includes
 * only <stddef.h> and <stdint.h>, and is written so that binding generators
 * (cffi, bindgen, SWIG, the Julia generator in this repository) can read it
 * unaided:
 *   - every enumeration is a fixed-width int32_t typedef plus integer
 *     constants defined as plain decimal literals;
 *   - no bitfields, varargs or anonymous unions, and one kind of
 *     function-like macro only (below);
 *   - options structs start with `struct_size` and are filled by an init
 *     function; new fields are only ever appended. Each init function is
 *     cudnnfe_X_init_sized(ptr, struct_size): the library writes only the
 *     first struct_size bytes (the struct the caller's header declares), so
 *     a program built against an older header is safe with a newer library.
 *     C and C++ call the macro cudnnfe_X_init(ptr), which passes sizeof;
 *     bindings call the _sized function with their own struct size.
 *
 * Conventions (docs/design.md has the reasons):
 *   - Every fallible function returns cudnnfe_status_t. On failure no
 *     out-parameter is written.
 *   - A failure's message (naming the node, tensor and rule) is stored on the
 *     object the call acted on — cudnnfe_graph_last_error() for graph calls,
 *     cudnnfe_handle_last_error() for execute calls — and also in a
 *     thread-local slot read by cudnnfe_last_error(). Object messages are
 *     correct from any OS thread (Go goroutines, finalizers).
 *   - Tensors are plain int64_t UIDs (> 0). 0 means "no tensor".
 *   - The caller owns every device buffer: inputs, outputs and workspace.
 *   - Graph construction belongs to one thread at a time. A built graph is
 *     immutable and may be executed from many threads at once, each thread
 *     with its own cudnnfe_handle_t and workspace.
 *
 * The header reads top to bottom as the manual, by concept: status codes and
 * errors, data types, the library (versions, loading cuDNN, the log),
 * handles, graphs, tensors, the operations by family (convolution and
 * matmul; pointwise and reduction; attention and score modifiers;
 * normalizations and softmax; split batch norm; layout; resampling and
 * random numbers), validation and build, execution (bound executions and
 * CUDA graphs included), plans (selection, autotuning, the plan cache) and
 * serialization.
 *
 * Experimental API. What runs only on some GPUs or cuDNN versions -- FP8
 * attention (Hopper and newer), block-scale quantization (cuDNN 9.7+, run
 * by cuDNN on Blackwell), mixture-of-experts grouped matmul (a cuDNN that
 * has the operation), paged cache load (cuDNN 9.5+) and device properties
 * (cuDNN 9.8+) -- is declared in the last part of this header, only where
 * the macro CUDNNFE_EXPERIMENTAL is defined before it is included (as
 * zstd's ZSTD_STATIC_LINKING_ONLY):
 *
 *     #define CUDNNFE_EXPERIMENTAL
 *     #include <cudnnfe/cudnnfe.h>
 *
 * The library always exports these functions, and they follow the ABI
 * rules of the rest (fields only appended, `since` notes); they are apart
 * because what they accept follows cuDNN and the GPU, so they are the first
 * to change. The bindings in this repository are generated with the macro
 * defined and offer them (docs/design.md, "The experimental part").
 */
#ifndef CUDNNFE_CUDNNFE_H
#define CUDNNFE_CUDNNFE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Versions                                                                 */
/* ------------------------------------------------------------------------ */

/* Library version of this header: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define CUDNNFE_VERSION_MAJOR 0
#define CUDNNFE_VERSION_MINOR 4
#define CUDNNFE_VERSION_PATCH 0
#define CUDNNFE_VERSION 400
/* ABI major version; the shared library's SONAME is libcudnnfe.so.<this>. */
#define CUDNNFE_ABI_VERSION 0

/* ------------------------------------------------------------------------ */
/* Status codes and errors                                                  */
/* ------------------------------------------------------------------------ */

typedef int32_t cudnnfe_status_t;
#define CUDNNFE_STATUS_OK 0
#define CUDNNFE_STATUS_INVALID_ARGUMENT 1    /* NULL pointer, bad value, unknown UID */
#define CUDNNFE_STATUS_INVALID_GRAPH 2       /* validation or shape inference failed */
#define CUDNNFE_STATUS_NOT_SUPPORTED 3       /* no engine; needs newer cuDNN or GPU */
#define CUDNNFE_STATUS_CUDNN_UNAVAILABLE 4   /* libcudnn / libcudart / GPU not found */
#define CUDNNFE_STATUS_CUDA_ERROR 5          /* a CUDA runtime call failed */
#define CUDNNFE_STATUS_CUDNN_ERROR 6         /* a cuDNN call failed unexpectedly */
#define CUDNNFE_STATUS_OUT_OF_MEMORY 7       /* host allocation failed */
#define CUDNNFE_STATUS_BAD_SERIALIZED_DATA 8 /* corrupt or incompatible bytes */
#define CUDNNFE_STATUS_WRONG_STATE 9         /* e.g. execute before build */
#define CUDNNFE_STATUS_INTERNAL 10           /* a bug in cudnnfe: please report */
/* Verify mode (cudnnfe_build_options_t.verify, docs/verify.md): an execute's
 * result differs from the CPU reference beyond the tolerance; the message
 * names the graph, node, plan, cuDNN version, GPU and the worst element.
 * since 0.4 */
#define CUDNNFE_STATUS_VERIFY_FAILED 11

/* Static name of a status ("CUDNNFE_STATUS_INVALID_GRAPH"); never NULL. */
const char *cudnnfe_status_name(cudnnfe_status_t status);

/* Message of the last failure on the calling OS thread, "" if none. Valid
 * until the next cudnnfe call on this thread. Prefer the per-object
 * functions below where the call had an object. */
const char *cudnnfe_last_error(void);

/* ------------------------------------------------------------------------ */
/* Data types                                                               */
/* ------------------------------------------------------------------------ */

typedef int32_t cudnnfe_dtype_t;
#define CUDNNFE_DTYPE_NOT_SET 0 /* resolved from the graph's defaults */
#define CUDNNFE_DTYPE_FLOAT 1
#define CUDNNFE_DTYPE_HALF 2
#define CUDNNFE_DTYPE_BFLOAT16 3
#define CUDNNFE_DTYPE_FP8_E4M3 4
#define CUDNNFE_DTYPE_FP8_E5M2 5
#define CUDNNFE_DTYPE_INT8 6
#define CUDNNFE_DTYPE_INT32 7
#define CUDNNFE_DTYPE_INT64 8
/* BOOLEAN graph inputs and outputs are one byte per element (0 or 1) and run
 * on the CPU reference only: cuDNN stores booleans bit-packed, so on the GPU
 * they must stay virtual (comparison results feeding a select, say), or be
 * BOOLEAN_PACKED. */
#define CUDNNFE_DTYPE_BOOLEAN 9
#define CUDNNFE_DTYPE_UINT8 10
#define CUDNNFE_DTYPE_DOUBLE 11
/* The block scales of microscaling formats (MXFP8): one byte, an unsigned
 * power of two 2^(bits - 127), bits 0..254 (0xff is NaN); no zero, no sign.
 * Storing a value rounds it up to a power of two, clamped to
 * [2^-127, 2^127]; NaN, negative values and zero store 0xff, 0xff, 0x00.
 * Only the block-scale ops read or write it (their scale tensors). */
#define CUDNNFE_DTYPE_FP8_E8M0 12
/* Booleans bit-packed as cuDNN stores them (cuDNN's BOOLEAN): the element at
 * element offset o (the sum of index * stride) is bit o % 8, least
 * significant first, of byte o / 8 of the buffer. A buffer needs
 * ceil(span / 8) bytes, span being the elements the strides reach; one byte
 * per element (a bool array of the full shape) is always enough, and
 * cudnnfe_dtype_size returns 1 for it as that bound. Graph inputs and
 * outputs of this type run on the GPU and on the CPU reference, with the
 * same bits; reshape, transpose and slice views of it are refused.
 * since 0.3 */
#define CUDNNFE_DTYPE_BOOLEAN_PACKED 13

/* Static name of a data type ("BFLOAT16"); "UNKNOWN" for other values. */
const char *cudnnfe_dtype_name(cudnnfe_dtype_t dtype);

/* Size in bytes of one element of `dtype`; 0 for NOT_SET or unknown. */
size_t cudnnfe_dtype_size(cudnnfe_dtype_t dtype);

/* ------------------------------------------------------------------------ */
/* Library: versions and devices                                            */
/* ------------------------------------------------------------------------ */

/* Version of the loaded library (same encoding as CUDNNFE_VERSION). */
uint32_t cudnnfe_version(void);

/* Returns CUDNNFE_STATUS_OK when the loaded library is at least
 * `header_version` (pass CUDNNFE_VERSION as a binding was generated with) and
 * has the same ABI major; CUDNNFE_STATUS_NOT_SUPPORTED otherwise. */
cudnnfe_status_t cudnnfe_check_version(uint32_t header_version, uint32_t abi_version);

/* Loads cuDNN if needed and writes its version (e.g. 91900 for 9.19.0).
 * Returns CUDNNFE_STATUS_CUDNN_UNAVAILABLE, with the paths tried in
 * cudnnfe_last_error(), when it cannot be loaded. The environment variable
 * CUDNNFE_CUDNN_LIBRARY names a specific libcudnn to load;
 * CUDNNFE_CUDART_LIBRARY likewise for the CUDA runtime. */
cudnnfe_status_t cudnnfe_cudnn_version(int64_t *version);

/* Writes the number of usable CUDA devices: 0 when the CUDA runtime or the
 * driver is missing (that is not an error). */
cudnnfe_status_t cudnnfe_device_count(int32_t *count);

/* ------------------------------------------------------------------------ */
/* Finding cuDNN and the CUDA runtime; diagnostics log                      */
/*                                                                          */
/* cuDNN (libcudnn.so.9) and the CUDA runtime (libcudart.so.13, then .12)   */
/* are loaded once, at first use, from the first of (docs/loading.md):      */
/*   1. CUDNNFE_CUDNN_LIBRARY / CUDNNFE_CUDART_LIBRARY, a file path: only    */
/*      that file is tried, so a wrong path fails instead of falling back;  */
/*   2. the copy already loaded in the process (a framework's own cuDNN),   */
/*      found by soname, so that one process never holds two cuDNNs;       */
/*   3. the directories added with cudnnfe_library_add_search_dir (the      */
/*      Python package adds those of NVIDIA's pip wheels), in that order;   */
/*   4. the system loader path (LD_LIBRARY_PATH, RUNPATH, ldconfig).        */
/* ------------------------------------------------------------------------ */

/* Which run-time library a call is about. (since 0.3) */
typedef int32_t cudnnfe_library_t;
#define CUDNNFE_LIBRARY_CUDNN 0
#define CUDNNFE_LIBRARY_CUDART 1

/* Which rule chose a loaded library (the list above). (since 0.3) */
typedef int32_t cudnnfe_library_origin_t;
#define CUDNNFE_LIBRARY_ORIGIN_NOT_LOADED 0
#define CUDNNFE_LIBRARY_ORIGIN_ENVIRONMENT 1
#define CUDNNFE_LIBRARY_ORIGIN_ALREADY_LOADED 2
#define CUDNNFE_LIBRARY_ORIGIN_SEARCH_DIR 3
#define CUDNNFE_LIBRARY_ORIGIN_SYSTEM 4

/* What was loaded and why. Strings are owned by the library and valid for
 * the life of the process; never NULL ("" where there is nothing).
 * (since 0.3) */
typedef struct cudnnfe_library_info {
  size_t struct_size;
  const char *cudnnfe_path; /* this libcudnnfe */
  const char *cudnn_path;   /* the file loaded; "" when none */
  int64_t cudnn_version;    /* e.g. 91900; 0 when none */
  cudnnfe_library_origin_t cudnn_origin;
  /* One line: the rule that chose cudnn_path, or why nothing loaded (every
   * path tried, with the loader's error). */
  const char *cudnn_reason;
  const char *cudart_path;
  int64_t cudart_version; /* cudaRuntimeGetVersion: e.g. 13000; 0 when none */
  cudnnfe_library_origin_t cudart_origin;
  const char *cudart_reason;
} cudnnfe_library_info_t;
/* Fills the defaults (all empty). (since 0.3) */
void cudnnfe_library_info_init_sized(cudnnfe_library_info_t *info, size_t struct_size);
#define cudnnfe_library_info_init(info) cudnnfe_library_info_init_sized((info), sizeof(*(info)))

/* Loads cuDNN and the CUDA runtime if not yet tried, then fills `info`
 * (initialized with cudnnfe_library_info_init; only its first struct_size
 * bytes are written). A library that cannot be loaded is not an error here:
 * its origin is NOT_LOADED and its reason says why. Returns OK or
 * INVALID_ARGUMENT.
 * (since 0.3) */
cudnnfe_status_t cudnnfe_library_info(cudnnfe_library_info_t *info);

/* Adds `directory` to the search directories of `library` (rule 3 above).
 * The string is copied. Returns WRONG_STATE once that library has been
 * looked for (the first GPU use or cudnnfe_library_info), INVALID_ARGUMENT
 * for an unknown library or an empty directory.
 * (since 0.3) */
cudnnfe_status_t cudnnfe_library_add_search_dir(cudnnfe_library_t library, const char *directory);

/* Log levels. The environment variable CUDNNFE_LOG (off, info or debug;
 * read once) sets the level of the default sink, standard error. INFO: the
 * libraries loaded, each build stage with its time, plan-cache hits and
 * misses. DEBUG adds the heuristics' engine lists and refusals.
 * (since 0.3) */
typedef int32_t cudnnfe_log_level_t;
#define CUDNNFE_LOG_LEVEL_OFF 0
#define CUDNNFE_LOG_LEVEL_INFO 1
#define CUDNNFE_LOG_LEVEL_DEBUG 2

/* Receives one log line (no trailing newline), valid during the call only.
 * Calls are serialized; a callback must not call cudnnfe_set_log_callback.
 * (since 0.3) */
typedef void (*cudnnfe_log_callback_t)(cudnnfe_log_level_t level, const char *message,
                                       void *user_data);

/* Sends log lines at `level` and below to `callback` (with `user_data`), for
 * hosts that own their logging; callback NULL sends them to standard error.
 * Overrides CUDNNFE_LOG. Returns OK or INVALID_ARGUMENT (unknown level).
 * (since 0.3) */
cudnnfe_status_t cudnnfe_set_log_callback(cudnnfe_log_callback_t callback, void *user_data,
                                          cudnnfe_log_level_t level);

/* ------------------------------------------------------------------------ */
/* Handles (execution contexts)                                             */
/* ------------------------------------------------------------------------ */

/* An execution context: one thread's cuDNN handle for one GPU (created on
 * first GPU use), plus that thread's last error message. Cheap to create;
 * also required (and sufficient) for CPU reference execution. */
typedef struct cudnnfe_handle cudnnfe_handle_t;

/* Creates an execution context for CUDA device `device` (-1: the device that
 * is current when the handle first touches the GPU). Looks for cuDNN and,
 * once per process, starts loading its engine libraries on a background
 * thread so that the first build need not wait for them (CUDNNFE_PRELOAD=0
 * turns that off; docs/plans.md). A missing cuDNN is not an error here: it
 * is reported at first GPU use.
 * Returns OK, INVALID_ARGUMENT or OUT_OF_MEMORY. */
cudnnfe_status_t cudnnfe_handle_create(cudnnfe_handle_t **out, int32_t device);

/* Frees the handle and its cuDNN handle. NULL is a no-op. A destroyed or
 * foreign pointer returns INVALID_ARGUMENT and is not touched. */
cudnnfe_status_t cudnnfe_handle_destroy(cudnnfe_handle_t *handle);

/* Message of the last failure of a call that used this handle (execute);
 * "" if none. Valid until the next failing call with this handle. */
const char *cudnnfe_handle_last_error(const cudnnfe_handle_t *handle);

/* ------------------------------------------------------------------------ */
/* Graphs                                                                   */
/* ------------------------------------------------------------------------ */

/* A graph of tensors and operations; after cudnnfe_graph_build, a runnable
 * plan. Create with cudnnfe_graph_create, free with cudnnfe_graph_destroy. */
typedef struct cudnnfe_graph cudnnfe_graph_t;

/* Creates an empty graph. Returns OK, INVALID_ARGUMENT or OUT_OF_MEMORY. */
cudnnfe_status_t cudnnfe_graph_create(cudnnfe_graph_t **out);

/* Frees the graph. NULL is a no-op. A destroyed or foreign pointer returns
 * INVALID_ARGUMENT and is not touched, even after later creates: a pointer
 * is not handed out again until 2^32 more graphs and handles were made. */
cudnnfe_status_t cudnnfe_graph_destroy(cudnnfe_graph_t *graph);

/* Message of the last failure of a call on this graph; "" if none. The
 * pointer stays valid until the next failing call on the graph. */
const char *cudnnfe_graph_last_error(const cudnnfe_graph_t *graph);

/* Copies the graph's last error message into `buffer` (NUL-terminated).
 * Size-query pattern: with buffer == NULL writes the length (without the
 * NUL) to *size; else `capacity` must exceed that length. Unlike
 * cudnnfe_graph_last_error, safe while other threads fail calls on the same
 * (built, shared) graph. */
cudnnfe_status_t cudnnfe_graph_copy_last_error(const cudnnfe_graph_t *graph, char *buffer,
                                               size_t capacity, size_t *size);

/* Names the graph (used in messages). The string is copied. */
cudnnfe_status_t cudnnfe_graph_set_name(cudnnfe_graph_t *graph, const char *name);
/* Points *name at the graph's name, valid until it is renamed or destroyed. */
cudnnfe_status_t cudnnfe_graph_get_name(const cudnnfe_graph_t *graph, const char **name);

/* Graph-wide default data types, applied at validation to tensors and ops
 * whose type is CUDNNFE_DTYPE_NOT_SET: `io` to graph inputs and outputs,
 * `intermediate` to virtual tensors, `compute` to operations' math. */
cudnnfe_status_t cudnnfe_graph_set_io_dtype(cudnnfe_graph_t *graph, cudnnfe_dtype_t dtype);
cudnnfe_status_t cudnnfe_graph_set_intermediate_dtype(cudnnfe_graph_t *graph,
                                                      cudnnfe_dtype_t dtype);
cudnnfe_status_t cudnnfe_graph_set_compute_dtype(cudnnfe_graph_t *graph, cudnnfe_dtype_t dtype);

/* Writes the number of tensors / operations in the graph. */
cudnnfe_status_t cudnnfe_graph_get_tensor_count(const cudnnfe_graph_t *graph, size_t *count);
cudnnfe_status_t cudnnfe_graph_get_node_count(const cudnnfe_graph_t *graph, size_t *count);

/* Size-query pattern: with uids == NULL writes the count to *count; else
 * copies up to `capacity` UIDs in creation order (INVALID_ARGUMENT if
 * capacity is too small). */
cudnnfe_status_t cudnnfe_graph_get_tensor_uids(const cudnnfe_graph_t *graph, int64_t *uids,
                                               size_t capacity, size_t *count);

/* Finds a tensor by name; INVALID_ARGUMENT if there is none. */
cudnnfe_status_t cudnnfe_graph_find_tensor(const cudnnfe_graph_t *graph, const char *name,
                                           int64_t *uid);

/* With `prune` 1, graph inputs that no op reads leave the graph when it is
 * validated (cudnnfe_graph_validate, _validate_for_build, _build), as
 * cudnn-frontend's graph holds only the tensors its ops use: they are no
 * longer counted, listed, serialized or fingerprinted, a binding for one at
 * execute is accepted and ignored, its UID is not given to a new tensor,
 * and a call naming it fails with INVALID_ARGUMENT saying that it left the
 * graph. With 0 (the default) such an input stays, takes no buffer and its
 * binding is ignored. Scalars and a graph without ops are not pruned.
 * INVALID_ARGUMENT for a value other than 0 or 1; WRONG_STATE once built.
 * (since 0.4) */
cudnnfe_status_t cudnnfe_graph_set_prune_unread_inputs(cudnnfe_graph_t *graph, int32_t prune);

/* The UIDs of the inputs that left the graph at validation (see
 * cudnnfe_graph_set_prune_unread_inputs), in ascending order. Size-query
 * pattern as cudnnfe_graph_get_tensor_uids. (since 0.4) */
cudnnfe_status_t cudnnfe_graph_get_pruned_uids(const cudnnfe_graph_t *graph, int64_t *uids,
                                               size_t capacity, size_t *count);

/* ------------------------------------------------------------------------ */
/* Tensors                                                                  */
/* ------------------------------------------------------------------------ */

/* What a tensor is to the graph (cudnnfe_tensor_get_kind). */
typedef int32_t cudnnfe_tensor_kind_t;
#define CUDNNFE_TENSOR_KIND_INPUT 1   /* graph input, read at execute */
#define CUDNNFE_TENSOR_KIND_SCALAR 2  /* pass-by-value constant, no binding */
#define CUDNNFE_TENSOR_KIND_VIRTUAL 3 /* op output kept inside the plan */
#define CUDNNFE_TENSOR_KIND_OUTPUT 4  /* op output written at execute */

/* Most dimensions a tensor may have (cuDNN's limit). */
#define CUDNNFE_MAX_DIMS 8
/* Most spatial dimensions of a convolution (3-D convolutions). */
#define CUDNNFE_MAX_SPATIAL_DIMS 3

/* Adds a graph input. `dims` and `strides` have `ndims` entries (1 to
 * CUDNNFE_MAX_DIMS); strides in elements, any layout (NHWC, transposed,
 * broadcast with stride 0); `strides` NULL means packed row-major. `name` may
 * be NULL or "" (an automatic name is given, "tensor<UID>" unless taken;
 * cudnnfe_tensor_get_name reports it). dtype NOT_SET takes the graph's io
 * type. Writes the new tensor's UID (automatic, change with
 * cudnnfe_tensor_set_uid). Refuses (INVALID_ARGUMENT, naming the tensor) a
 * shape of more than 2^60 - 1 elements or whose strides reach an offset past
 * that, so that every byte count fits in 64 bits. */
cudnnfe_status_t cudnnfe_graph_add_tensor(cudnnfe_graph_t *graph, const char *name,
                                          cudnnfe_dtype_t dtype, int32_t ndims, const int64_t *dims,
                                          const int64_t *strides, int64_t *uid);

/* Adds a pass-by-value scalar holding `value`, fed to the backend
 * automatically at execute: it needs no binding. Its shape is [1]; as a
 * pointwise operand it takes the other operands' rank (all ones), so one
 * scalar serves ops of one rank. `name` as for cudnnfe_graph_add_tensor. */
cudnnfe_status_t cudnnfe_graph_add_scalar(cudnnfe_graph_t *graph, const char *name,
                                          cudnnfe_dtype_t dtype, double value, int64_t *uid);
/* The value of scalar `uid` (one made with cudnnfe_graph_add_scalar), as
 * given; INVALID_ARGUMENT for a tensor that is not such a scalar.
 * (since 0.4) */
cudnnfe_status_t cudnnfe_tensor_get_scalar_value(const cudnnfe_graph_t *graph, int64_t uid,
                                                 double *value);

/* Marks an op output as a graph output (non-virtual), or back to virtual.
 * A tensor made with cudnnfe_graph_add_tensor is never virtual: marking it
 * an output does nothing (an op may take it as its output later, as
 * cudnn-frontend allows), and making it virtual is INVALID_ARGUMENT. */
cudnnfe_status_t cudnnfe_tensor_set_output(cudnnfe_graph_t *graph, int64_t uid, int32_t is_output);

/* Makes the next op added to `graph` write its output `port` into tensor
 * `uid` instead of a tensor of its own (cudnn-frontend's outputs made by the
 * caller, such as sdpa_backward's dBias): `uid` is a tensor made with
 * cudnnfe_graph_add_tensor that no op reads or writes yet, and becomes a
 * graph output keeping its UID, name, dims and strides. `port` is the
 * output's name as docs/graph-json.md lists it ("dBias", "dSink_token",
 * "Y", ...). Call once per port before the op's cudnnfe_graph_add_* call;
 * that call consumes every request, whether it adds the op or fails
 * (INVALID_ARGUMENT naming the op, the port and its outputs for a port it
 * lacks or does not make as configured). One mechanism for every op: an
 * optional output asked for this way is made (sdpa's "stats", "score_max",
 * "score_sum_exp", "rng_dump"; sdpa_backward's "dBias", "dSink_token", with
 * cudnnfe_graph_add_sdpa_backward too), and the options that name a
 * caller's tensor as an output (sdpa's score_max, score_sum_exp and
 * rng_dump, sdpa_backward's dsink_token) are requests of this kind made by
 * the add call. (since 0.4) */
cudnnfe_status_t cudnnfe_graph_set_next_output(cudnnfe_graph_t *graph, const char *port,
                                               int64_t uid);
/* Overrides the data type of a tensor (inferred outputs included). */
cudnnfe_status_t cudnnfe_tensor_set_dtype(cudnnfe_graph_t *graph, int64_t uid,
                                          cudnnfe_dtype_t dtype);
/* Overrides dims (inferred outputs included); strides are re-derived as
 * packed in the same dimension order unless set explicitly. Dims and
 * strides may be set or changed until the graph is built, also on a tensor
 * that ops already read: validation infers every op's outputs again from
 * the shapes set then (outputs whose dims were set keep them). */
cudnnfe_status_t cudnnfe_tensor_set_dims(cudnnfe_graph_t *graph, int64_t uid, int32_t ndims,
                                         const int64_t *dims);
/* Overrides strides; `ndims` must equal the tensor's rank. */
cudnnfe_status_t cudnnfe_tensor_set_strides(cudnnfe_graph_t *graph, int64_t uid, int32_t ndims,
                                            const int64_t *strides);
/* Renames a tensor; names are unique within a graph. */
cudnnfe_status_t cudnnfe_tensor_set_name(cudnnfe_graph_t *graph, int64_t uid, const char *name);
/* Changes a tensor's UID (must be 1 to 2^62, the range graph JSON and plan
 * blobs carry, and unused). */
cudnnfe_status_t cudnnfe_tensor_set_uid(cudnnfe_graph_t *graph, int64_t uid, int64_t new_uid);

/* Reads a tensor's rank, dims and strides. Size-query pattern: with dims ==
 * NULL and strides == NULL writes only *ndims; else `capacity` must be at
 * least the rank. Inferred shapes are known once the op is added. */
cudnnfe_status_t cudnnfe_tensor_get_shape(const cudnnfe_graph_t *graph, int64_t uid, int64_t *dims,
                                          int64_t *strides, int32_t capacity, int32_t *ndims);
/* Reads a tensor's data type as set (NOT_SET until validation resolves it). */
cudnnfe_status_t cudnnfe_tensor_get_dtype(const cudnnfe_graph_t *graph, int64_t uid,
                                          cudnnfe_dtype_t *dtype);
/* Points *name at the graph's copy of the tensor's name, valid until the
 * tensor is renamed or the graph destroyed. */
cudnnfe_status_t cudnnfe_tensor_get_name(const cudnnfe_graph_t *graph, int64_t uid,
                                         const char **name);
/* Writes the tensor's kind (CUDNNFE_TENSOR_KIND_*). */
cudnnfe_status_t cudnnfe_tensor_get_kind(const cudnnfe_graph_t *graph, int64_t uid,
                                         cudnnfe_tensor_kind_t *kind);
/* Writes 1 if the tensor is a graph output or input (needs a buffer at
 * execute, unless it is an input that no op reads), 0 if virtual or
 * pass-by-value. */
cudnnfe_status_t cudnnfe_tensor_is_bound(const cudnnfe_graph_t *graph, int64_t uid,
                                         int32_t *is_bound);
/* Marks a one-element graph input as pass-by-value (1) or not (0): its
 * binding at execute is then a pointer to host memory, whose value cuDNN
 * reads when the execute call is made (cudnn-frontend's is_pass_by_value
 * tensors: a scale or bound given as a CPU tensor). It stays a bound input
 * (kind INPUT); the CPU reference reads it like any input. Setting 1 on an
 * op output, a scalar, or a tensor of more than one element is
 * INVALID_ARGUMENT; setting 0 is accepted on any tensor.
 * since 0.3 */
cudnnfe_status_t cudnnfe_tensor_set_pass_by_value(cudnnfe_graph_t *graph, int64_t uid,
                                                  int32_t pass_by_value);
/* Writes 1 if the tensor is a pass-by-value graph input, else 0. since 0.3 */
cudnnfe_status_t cudnnfe_tensor_get_pass_by_value(const cudnnfe_graph_t *graph, int64_t uid,
                                                  int32_t *pass_by_value);

/* ------------------------------------------------------------------------ */
/* Operations                                                               */
/*                                                                          */
/* Each op takes an options struct (NULL: defaults) that starts with        */
/* struct_size and is filled by its init function. Outputs are new virtual  */
/* tensors whose shape is inferred; mark them with cudnnfe_tensor_set_output */
/* to read them. `name` in options names the node ("conv_fprop_0" if NULL);  */
/* outputs are named "<node>::<port>".                                      */
/*                                                                          */
/* An output's strides, unless set, are packed in cudnn-frontend's default  */
/* order for its op: channels-last (N, spatial..., C) for convolutions,     */
/* pooling and reductions; row-major for matmul, reshape and rng; for the   */
/* others, the dimension order of the input they follow (x, q, ...; see     */
/* docs/design.md, "Output layouts"). A dim of size 1 carries no layout:    */
/* where its stride equals a larger dim's, it counts as inside that dim.    */
/* ------------------------------------------------------------------------ */

/* ------------------------------------------------------------------------ */
/* Convolution and matmul                                                   */
/* ------------------------------------------------------------------------ */

typedef int32_t cudnnfe_conv_mode_t;
#define CUDNNFE_CONV_MODE_CROSS_CORRELATION 0
#define CUDNNFE_CONV_MODE_CONVOLUTION 1

typedef struct cudnnfe_conv_options {
  size_t struct_size;
  const char *name;
  /* Spatial rank (1 to 3); 0 takes it from the image's rank minus 2. */
  int32_t spatial_dims;
  int64_t pre_padding[3];   /* default 0 */
  int64_t post_padding[3];  /* default 0 */
  int64_t stride[3];        /* default 1 */
  int64_t dilation[3];      /* default 1 */
  cudnnfe_conv_mode_t mode; /* default CROSS_CORRELATION, like frameworks */
  cudnnfe_dtype_t compute_dtype;
} cudnnfe_conv_options_t;
void cudnnfe_conv_options_init_sized(cudnnfe_conv_options_t *options, size_t struct_size);
#define cudnnfe_conv_options_init(options) \
  cudnnfe_conv_options_init_sized((options), sizeof(*(options)))

/* y[N,K,*] = conv(image[N,C,*], weight[K,C,*]). Dims are logical
 * NC(D)HW in every layout; strides give the memory layout. y, dx and dw are
 * channels-last (NHWC, NDHWC) unless their strides are set, whatever the
 * operands' layouts (cudnn-frontend's default). Grouped and
 * depthwise convolutions (since 0.3) need no option: as in cuDNN, the
 * weight is [K, C / groups, *] and groups = image C / weight C, with K
 * divisible by groups (output channel k reads the image channels of group
 * k / (K / groups)). dgrad and wgrad take the group count from the dx, resp.
 * dw, dims the caller sets (inferred, they are ungrouped). */
cudnnfe_status_t cudnnfe_graph_add_conv_fprop(cudnnfe_graph_t *graph, int64_t image, int64_t weight,
                                              const cudnnfe_conv_options_t *options, int64_t *y);
/* dx = dgrad(loss dy[N,K,*], weight[K,C,*]). dx's spatial dims are inferred
 * as the smallest consistent size; override with set_dims when stride > 1. */
cudnnfe_status_t cudnnfe_graph_add_conv_dgrad(cudnnfe_graph_t *graph, int64_t loss, int64_t weight,
                                              const cudnnfe_conv_options_t *options, int64_t *dx);
/* dw = wgrad(image x[N,C,*], loss dy[N,K,*]). dw's filter size is inferred as
 * the largest consistent size; override with set_dims when stride > 1. */
cudnnfe_status_t cudnnfe_graph_add_conv_wgrad(cudnnfe_graph_t *graph, int64_t image, int64_t loss,
                                              const cudnnfe_conv_options_t *options, int64_t *dw);

typedef struct cudnnfe_matmul_options {
  size_t struct_size;
  const char *name;
  cudnnfe_dtype_t compute_dtype;
} cudnnfe_matmul_options_t;
void cudnnfe_matmul_options_init_sized(cudnnfe_matmul_options_t *options, size_t struct_size);
#define cudnnfe_matmul_options_init(options) \
  cudnnfe_matmul_options_init_sized((options), sizeof(*(options)))

/* c[..., M, N] = a[..., M, K] @ b[..., K, N]. Ranks must match (2 to 8);
 * batch dims of size 1 broadcast. */
cudnnfe_status_t cudnnfe_graph_add_matmul(cudnnfe_graph_t *graph, int64_t a, int64_t b,
                                          const cudnnfe_matmul_options_t *options, int64_t *c);

/* ------------------------------------------------------------------------ */
/* Pointwise and reduction                                                  */
/* ------------------------------------------------------------------------ */

/* Pointwise modes. Operands: unary modes read in0; binary modes compute
 * in0 <op> in1; *_BWD modes read in0 = dy (the loss) and in1 = x (the forward
 * input) and write dx; BINARY_SELECT writes in2 ? in0 : in1; GEN_INDEX writes
 * each element's index along `axis` of in0's shape (INT32). */
typedef int32_t cudnnfe_pointwise_mode_t;
#define CUDNNFE_POINTWISE_ADD 1
#define CUDNNFE_POINTWISE_ADD_SQUARE 2 /* in0 + in1 * in1 */
#define CUDNNFE_POINTWISE_SUB 3
#define CUDNNFE_POINTWISE_MUL 4
#define CUDNNFE_POINTWISE_DIV 5
#define CUDNNFE_POINTWISE_MAX 6
#define CUDNNFE_POINTWISE_MIN 7
#define CUDNNFE_POINTWISE_MOD 8
#define CUDNNFE_POINTWISE_POW 9
#define CUDNNFE_POINTWISE_ATAN2 10
#define CUDNNFE_POINTWISE_NEG 20
#define CUDNNFE_POINTWISE_ABS 21
#define CUDNNFE_POINTWISE_CEIL 22
#define CUDNNFE_POINTWISE_FLOOR 23
#define CUDNNFE_POINTWISE_RECIPROCAL 24
#define CUDNNFE_POINTWISE_SQRT 25
#define CUDNNFE_POINTWISE_RSQRT 26
#define CUDNNFE_POINTWISE_EXP 27
#define CUDNNFE_POINTWISE_LOG 28
#define CUDNNFE_POINTWISE_SIN 29
#define CUDNNFE_POINTWISE_COS 30
#define CUDNNFE_POINTWISE_TAN 31
#define CUDNNFE_POINTWISE_ERF 32
#define CUDNNFE_POINTWISE_IDENTITY 33
#define CUDNNFE_POINTWISE_RELU_FWD 40
#define CUDNNFE_POINTWISE_TANH_FWD 41
#define CUDNNFE_POINTWISE_SIGMOID_FWD 42
#define CUDNNFE_POINTWISE_ELU_FWD 43
#define CUDNNFE_POINTWISE_GELU_FWD 44
#define CUDNNFE_POINTWISE_GELU_APPROX_TANH_FWD 45
#define CUDNNFE_POINTWISE_SOFTPLUS_FWD 46
#define CUDNNFE_POINTWISE_SWISH_FWD 47
#define CUDNNFE_POINTWISE_RELU_BWD 60
#define CUDNNFE_POINTWISE_TANH_BWD 61
#define CUDNNFE_POINTWISE_SIGMOID_BWD 62
#define CUDNNFE_POINTWISE_ELU_BWD 63
#define CUDNNFE_POINTWISE_GELU_BWD 64
#define CUDNNFE_POINTWISE_GELU_APPROX_TANH_BWD 65
#define CUDNNFE_POINTWISE_SOFTPLUS_BWD 66
#define CUDNNFE_POINTWISE_SWISH_BWD 67
#define CUDNNFE_POINTWISE_CMP_EQ 80
#define CUDNNFE_POINTWISE_CMP_NEQ 81
#define CUDNNFE_POINTWISE_CMP_GT 82
#define CUDNNFE_POINTWISE_CMP_GE 83
#define CUDNNFE_POINTWISE_CMP_LT 84
#define CUDNNFE_POINTWISE_CMP_LE 85
#define CUDNNFE_POINTWISE_LOGICAL_AND 90
#define CUDNNFE_POINTWISE_LOGICAL_OR 91
#define CUDNNFE_POINTWISE_LOGICAL_NOT 92
#define CUDNNFE_POINTWISE_BINARY_SELECT 100
#define CUDNNFE_POINTWISE_GEN_INDEX 101

typedef struct cudnnfe_pointwise_options {
  size_t struct_size;
  const char *name;
  /* FLOAT, HALF, INT32 or DOUBLE (NOT_SET: the graph's); comparisons and
   * logic also take BOOLEAN, as cudnn-frontend's score modifiers ask (since
   * 0.3; the CPU reference then compares in float). */
  cudnnfe_dtype_t compute_dtype;
  /* RELU_FWD: y = x >= lower ? min(x, upper) : lower + slope * (x - lower). */
  double relu_lower_clip;       /* default 0 */
  double relu_upper_clip;       /* default 3.4e38 (no clip) */
  double relu_lower_clip_slope; /* default 0 (leaky ReLU when > 0) */
  double elu_alpha;             /* default 1 */
  double softplus_beta;         /* default 1 */
  double swish_beta;            /* default 1 */
  int32_t axis;                 /* GEN_INDEX: dimension to index; default 0 */
} cudnnfe_pointwise_options_t;
void cudnnfe_pointwise_options_init_sized(cudnnfe_pointwise_options_t *options, size_t struct_size);
#define cudnnfe_pointwise_options_init(options) \
  cudnnfe_pointwise_options_init_sized((options), sizeof(*(options)))

/* Elementwise op (see cudnnfe_pointwise_mode_t for operand roles). Unused
 * operands are 0. Operands broadcast: each dim equals the output's or is 1.
 * The output takes in0's shape broadcast against the others. */
cudnnfe_status_t cudnnfe_graph_add_pointwise(cudnnfe_graph_t *graph, cudnnfe_pointwise_mode_t mode,
                                             int64_t in0, int64_t in1, int64_t in2,
                                             const cudnnfe_pointwise_options_t *options,
                                             int64_t *out);

typedef int32_t cudnnfe_reduction_mode_t;
#define CUDNNFE_REDUCTION_ADD 1
#define CUDNNFE_REDUCTION_MUL 2
#define CUDNNFE_REDUCTION_MIN 3
#define CUDNNFE_REDUCTION_MAX 4
#define CUDNNFE_REDUCTION_AMAX 5 /* max of absolute values */
#define CUDNNFE_REDUCTION_AVG 6
#define CUDNNFE_REDUCTION_NORM1 7
#define CUDNNFE_REDUCTION_NORM2 8
#define CUDNNFE_REDUCTION_MUL_NO_ZEROS 9

typedef struct cudnnfe_reduction_options {
  size_t struct_size;
  const char *name;
  cudnnfe_dtype_t compute_dtype;
  /* Bit i set: dimension i is reduced to 1. 0 reduces every dimension. The
   * output's dims may instead be set with cudnnfe_tensor_set_dims. */
  uint32_t axes_mask;
  int32_t deterministic; /* default 0 */
} cudnnfe_reduction_options_t;
void cudnnfe_reduction_options_init_sized(cudnnfe_reduction_options_t *options, size_t struct_size);
#define cudnnfe_reduction_options_init(options) \
  cudnnfe_reduction_options_init_sized((options), sizeof(*(options)))

/* y = reduce(x) over the axes of options.axes_mask; y keeps x's rank and is
 * channels-last (N, spatial..., C; row-major below 3 dims) unless its
 * strides are set, as in cudnn-frontend. */
cudnnfe_status_t cudnnfe_graph_add_reduction(cudnnfe_graph_t *graph, cudnnfe_reduction_mode_t mode,
                                             int64_t x, const cudnnfe_reduction_options_t *options,
                                             int64_t *y);

/* ------------------------------------------------------------------------ */
/* Attention (scaled dot-product attention)                                 */
/*                                                                          */
/* docs/attention.md defines every option exactly; FP8 attention is         */
/* in the experimental part at the end of this header.                      */
/* ------------------------------------------------------------------------ */

/* Where the diagonal of attention's diagonal band (sliding window) starts. */
typedef int32_t cudnnfe_diagonal_alignment_t;
#define CUDNNFE_DIAGONAL_TOP_LEFT 0     /* row i's diagonal is column i */
#define CUDNNFE_DIAGONAL_BOTTOM_RIGHT 1 /* row i's diagonal is column i + s_kv - s_q */

/* How cuDNN runs an attention forward (cudnn-frontend's
 * attention_implementation). since 0.3 */
typedef int32_t cudnnfe_attention_implementation_t;
/* The unified descriptor where the loaded cuDNN runs every option the node
 * uses through it, else the composite graph (cudnn-frontend's rule). */
#define CUDNNFE_ATTENTION_IMPLEMENTATION_AUTO 0
/* The composite graph of matmuls, pointwise ops and reductions that cuDNN
 * fuses (every option; no block_mask). */
#define CUDNNFE_ATTENTION_IMPLEMENTATION_COMPOSITE 1
/* The single SDPA_FWD operation (cuDNN 9.13.1 and newer; its options by
 * version in docs/attention.md). Refused where the loaded cuDNN lacks one. */
#define CUDNNFE_ATTENTION_IMPLEMENTATION_UNIFIED 2

typedef struct cudnnfe_sdpa_options {
  size_t struct_size;
  const char *name;
  /* Softmax scale applied to Q·Kᵀ; 0 means 1/sqrt(d_qk). */
  double attn_scale;
  /* 1: also write stats [b, h_q, s_q, 1] FLOAT (log-sum-exp) for backward. */
  int32_t generate_stats;
  /* 1: causal mask aligned at the top-left corner (row i sees cols <= i). */
  int32_t causal_mask;
  /* 1: causal mask aligned at the bottom-right corner (row i sees cols <=
   * i + s_kv - s_q). At most one of the two causal flags. */
  int32_t causal_mask_bottom_right;
  /* Optional additive bias tensor, broadcastable to [b, h_q, s_q, s_kv]. */
  int64_t bias;
  cudnnfe_dtype_t compute_dtype;
  /* ---- Fields appended after the first release (an older caller's smaller
   * struct keeps their defaults). docs/attention.md defines each exactly. */
  /* Softmax scale from a tensor: a FLOAT tensor of one element (a graph
   * input, read at every execute, or a cudnnfe_graph_add_scalar). 0
   * (default): use attn_scale, which must be 0 when this is set. */
  int64_t attn_scale_tensor;
  /* 1: variable sequence lengths. seq_len_q and seq_len_kv are INT32 graph
   * inputs (INT64 too since 0.3: cudnn-frontend's sample 52 passes them) of
   * dims [b, 1, 1, 1]: batch n has seq_len_q[n] (0..s_q) valid
   * query rows and seq_len_kv[n] (0..s_kv) valid key columns; row i sees
   * column j only if i < seq_len_q[n] and j < seq_len_kv[n]. Padding rows
   * (i >= seq_len_q[n]) of o and stats are unspecified on the GPU; the CPU
   * reference writes o = 0 and stats = -inf there. */
  int32_t padding_mask;
  int64_t seq_len_q;
  int64_t seq_len_kv;
  /* Diagonal band (sliding window) around the diagonal d(i) of row i:
   * d(i) = i (TOP_LEFT) or i + s_kv - s_q (BOTTOM_RIGHT; with padding_mask
   * i + seq_len_kv[n] - seq_len_q[n]). Row i sees column j only if
   * j > d(i) - window_left (when window_left >= 1) and j <= d(i) +
   * window_right (when window_right >= 0); -1 (default) leaves that side
   * open. TOP_LEFT: i - window_left < j <= i + window_right. These are
   * cudnn-frontend's diagonal_band_left_bound / _right_bound. causal_mask is
   * window_right = 0 with TOP_LEFT and causal_mask_bottom_right is
   * window_right = 0 with BOTTOM_RIGHT: with either flag window_right must
   * be -1 or 0, and the flag fixes the alignment. */
  int64_t window_left;                             /* default -1; else >= 1 */
  int64_t window_right;                            /* default -1; else >= 0 */
  cudnnfe_diagonal_alignment_t diagonal_alignment; /* default TOP_LEFT */
  /* 1: ALiBi, adding slope(h) * (j - i) to the score of row i, column j of
   * query head h, with cudnn-frontend's slopes for h_q heads (n = the
   * largest power of two <= h_q: slope(h) = 2^(-8 (h + 1) / n) for h < n,
   * else 2^(-4 (2 (h - n) + 1) / n)). On a GPU it needs a right bound of 0
   * without bottom-right alignment (cudnn-frontend's rule, NOT_SUPPORTED at
   * validation); the CPU reference takes it with any mask. */
  int32_t alibi_mask;
  /* Dropout of the softmax output P (O = (P * keep * scale) . V; stats are
   * those of P before dropout), in one of two forms:
   *  - drawn: dropout_seed and dropout_offset are INT64 tensors of one
   *    element (graph inputs or scalars); each element of P is dropped with
   *    probability dropout_probability (0 <= p < 1) and kept ones are scaled
   *    by 1 / (1 - p). On the GPU cuDNN draws the mask with Philox from
   *    (seed, offset); the CPU reference cannot reproduce those bits and
   *    draws its own (docs/attention.md). p > 0 needs a seed and offset.
   *  - given: dropout_mask, broadcastable to [b, h_q, s_q, s_kv] (FLOAT,
   *    HALF, BFLOAT16, INT8 or UINT8; normally 0 or 1), and dropout_scale, a
   *    FLOAT tensor of one element: P * dropout_scale * dropout_mask.
   * dropout_probability must be 0 with the given form. */
  double dropout_probability;
  int64_t dropout_seed;
  int64_t dropout_offset;
  int64_t dropout_mask;
  int64_t dropout_scale;
  /* ---- Ragged (packed, "THD") layout; docs/attention.md. A ragged offset
   * is an INT32 or INT64 graph input of dims [b+1, 1, 1, 1] holding, for
   * each batch n, the element offset in the tensor's buffer where sequence
   * n starts (cudnn-frontend's set_ragged_offset): element (n, h, s, x) of
   * the tensor is at offset[n] + h * stride[1] + s * stride[2] + x *
   * stride[3] (the batch stride is not used). Only the valid rows (s <
   * seq_len_q[n] for q and o, s < seq_len_kv[n] for k and v) are read or
   * written. Needs padding_mask with seq_len_q and seq_len_kv. 0: that
   * tensor is not ragged (the default). Each tensor has its own offsets or
   * none: o (and stats, ragged_offset_stats below) is written padded unless
   * its offsets are given, whatever q's layout. Offsets may also be
   * given after the node is added (cudnnfe_graph_set_ragged_offset). */
  int64_t ragged_offset_q;
  int64_t ragged_offset_k;
  int64_t ragged_offset_v;
  int64_t ragged_offset_o;
  /* ---- Paged K/V cache (forward only); docs/attention.md. With a page
   * table, k (or v) is a page container [num_pages, h_kv, page_size, d]
   * (d_v for v) and the table is an INT32 graph input [b, 1, pages, 1]:
   * key j of batch n is row j % page_size of page table[n][j / page_size].
   * Needs padding_mask; only keys j < seq_len_kv[n] are read. s_kv is
   * max_seq_len_kv when > 0, else the other (unpaged) tensor's s_kv, else
   * pages * page_size; pages must be ceil(s_kv / page_size). */
  int64_t page_table_k;
  int64_t page_table_v;
  int64_t max_seq_len_kv; /* default 0 */
  /* since 0.3: how cuDNN runs the node; default AUTO. The CPU reference
   * computes the same result for each. */
  cudnnfe_attention_implementation_t implementation;
  /* since 0.3: a learned sink logit per query head, a FLOAT [1, h_q, 1, 1]
   * tensor: it joins each row's softmax denominator but has no value, so
   * m = max(max_j s_j, sink[h]), P_j = exp(s_j - m) / (sum_j exp(s_j - m) +
   * exp(sink[h] - m)) and stats = m + log(that denominator). 0: none. */
  int64_t sink_token;
  /* since 0.3: a bit-packed block mask, a UINT8 tensor [b, h_q,
   * ceil(s_q / 128), ceil(ceil(s_kv / 128) / 8)]: bit t % 8 (least
   * significant first) of byte t / 8 in row r says whether the 128 x 128
   * tile (r, t) of the scores is kept; scores of a cleared tile are -inf.
   * UNIFIED only (cuDNN 9.14 and newer). 0: none. */
  int64_t block_mask;
  /* since 0.3: a packed ("ragged") page table: ragged offsets, as above
   * (INT32 or INT64 [b+1, 1, 1, 1]), of page_table_k (page_table_v):
   * batch n's entries start at element offset[n] of the table, so page p
   * of batch n is at offset[n] + p * stride[2] (the batch stride is not
   * used) and a batch may have fewer entries than the table's dims[2]
   * (only pages below ceil(seq_len_kv[n] / page_size) are read). cuDNN
   * 9.10.2 and newer. 0: the table is not packed (the default). */
  int64_t ragged_offset_page_table_k;
  int64_t ragged_offset_page_table_v;
  /* since 0.3: ragged offsets of stats (with generate_stats), as above:
   * stats (n, h, s, 0) is at offset[n] + h * stride[1] + s * stride[2], and
   * only rows s < seq_len_q[n] are written (cudnn-frontend's
   * set_ragged_offset on Stats). 0: stats are padded (the default). */
  int64_t ragged_offset_stats;
  /* since 0.3: a score modifier, applied to the scores after attn_scale and
   * before bias, ALiBi and the masks: the placeholder UID that
   * cudnnfe_graph_begin_score_mod returned, closed by
   * cudnnfe_graph_end_score_mod (see "Score modifiers" below). The node takes
   * the modifier; no other node may name it. 0 (default): none. With a
   * modifier, seq_len_q and seq_len_kv may be given without padding_mask
   * (the modifier reads them; a paged cache needs seq_len_kv). */
  int64_t score_mod;
  /* since 0.4: outputs into tensors the caller made with
   * cudnnfe_graph_add_tensor (read by no node), which the node takes as its
   * outputs keeping their UID, name and strides (cudnn-frontend's score_max,
   * score_sum_exp and rng_dump): the softmax's row max m and its sum of
   * exponentials Z (FLOAT [b, h_q, s_q, 1]; with a sink_token both include
   * it, so stats = m + log(Z)), and the dropout mask drawn from
   * dropout_seed and dropout_offset (FLOAT [b, h_q, s_q, s_kv], 0 or 1; the
   * CPU reference writes its own generator's mask). A row that sees no
   * column has m = -inf and Z = 0. 0 (default): not written. */
  int64_t score_max;
  int64_t score_sum_exp;
  int64_t rng_dump;
  /* since 0.4: ragged offsets of score_max and score_sum_exp, as
   * ragged_offset_stats for stats (cudnn-frontend's set_ragged_offset on
   * them); may also be given later with cudnnfe_graph_set_ragged_offset on
   * the output. 0 (default): padded. */
  int64_t ragged_offset_score_max;
  int64_t ragged_offset_score_sum_exp;
  /* since 0.4: 1: the unified operation computes its softmax with unfused
   * multiply-adds (cudnn-frontend's unfuse_fma; cuDNN 9.21 and newer, so a
   * node that runs unified on an older cuDNN is refused with
   * NOT_SUPPORTED). The composite graph and the CPU reference ignore it, as
   * cudnn-frontend does. Default 0. */
  int32_t unfuse_fma;
} cudnnfe_sdpa_options_t;
void cudnnfe_sdpa_options_init_sized(cudnnfe_sdpa_options_t *options, size_t struct_size);
#define cudnnfe_sdpa_options_init(options) \
  cudnnfe_sdpa_options_init_sized((options), sizeof(*(options)))

/* Scaled dot-product attention forward. q [b, h_q, s_q, d], k [b, h_k,
 * s_kv, d], v [b, h_v, s_kv, d_v] in logical BHSD order with any strides
 * (BSHD storage included); h_k and h_v (which may differ, as in
 * cudnn-frontend) must each divide h_q (GQA, MQA; NOT_SUPPORTED otherwise,
 * cudnn-frontend's class). Writes
 * o [b, h_q, s_q, d_v] with q's dimension order, and stats when asked (else
 * *stats is set to 0; `stats` may be NULL then). A row whose every column is
 * masked gives o = 0 and stats = -inf. */
cudnnfe_status_t cudnnfe_graph_add_sdpa(cudnnfe_graph_t *graph, int64_t q, int64_t k, int64_t v,
                                        const cudnnfe_sdpa_options_t *options, int64_t *o,
                                        int64_t *stats);

/* Gives `tensor` the ragged (packed) offsets `offset` (as the ragged_offset_*
 * options, docs/attention.md) after the attention nodes that read or write it
 * were added, as cudnn-frontend's set_ragged_offset does on an op's output;
 * `offset` 0 makes it padded. It replaces, in every sdpa node using
 * `tensor`, the offsets of that operand: q, k, v, o (the output; it is
 * otherwise written padded [b, h_q, s_q, d_v] at its strides, whatever q's
 * layout), page_table_k and page_table_v. In every sdpa_backward node it
 * sets the offsets of q, k, v or o, which also describe dQ, dK, dV and dO:
 * giving dQ (dK, dV, dO) offsets other than q's (k's, v's, o's) is
 * NOT_SUPPORTED. stats (sdpa's output, sdpa_backward's input) take their
 * own offsets too. A tensor that no attention node reads or writes at such
 * a port is INVALID_ARGUMENT. The offsets' dims and data type are checked
 * when the graph is validated. since 0.3 */
cudnnfe_status_t cudnnfe_graph_set_ragged_offset(cudnnfe_graph_t *graph, int64_t tensor,
                                                 int64_t offset);

typedef struct cudnnfe_sdpa_backward_options {
  size_t struct_size;
  const char *name;
  /* As in cudnnfe_sdpa_options_t: must match the forward pass. */
  double attn_scale;
  int32_t causal_mask;
  int32_t causal_mask_bottom_right;
  int64_t bias;
  /* 1: bitwise-reproducible gradients (may be slower). */
  int32_t deterministic;
  cudnnfe_dtype_t compute_dtype;
  /* ---- Fields appended after the first release. As in
   * cudnnfe_sdpa_options_t, and they must match the forward pass: the same
   * scale, masks, and dropout (the same seed and offset, or the same mask
   * and scale). */
  int64_t attn_scale_tensor;
  int32_t padding_mask;
  int64_t seq_len_q;
  int64_t seq_len_kv;
  int64_t window_left;  /* default -1 */
  int64_t window_right; /* default -1 */
  cudnnfe_diagonal_alignment_t diagonal_alignment;
  int32_t alibi_mask;
  double dropout_probability;
  int64_t dropout_seed;
  int64_t dropout_offset;
  int64_t dropout_mask;
  int64_t dropout_scale;
  /* With dropout_mask: a FLOAT tensor of one element holding
   * 1 / dropout_scale (cudnn-frontend's scale_inv), required. On the GPU it
   * must be a scalar of 1 (cuDNN's backward ignores it): fold the scale into
   * the mask (values 0 and 1/(1-p)) with dropout_scale 1 (docs/attention.md). */
  int64_t dropout_scale_inv;
  /* Ragged layout, as in cudnnfe_sdpa_options_t: each offset tensor also
   * describes the gradient of the same layout (q's for dq, k's for dk, v's
   * for dv, o's for d_o). */
  int64_t ragged_offset_q;
  int64_t ragged_offset_k;
  int64_t ragged_offset_v;
  int64_t ragged_offset_o;
  /* since 0.3: ragged offsets of the stats input, as the forward's
   * ragged_offset_stats. 0: stats are padded (the default). */
  int64_t ragged_offset_stats;
  /* since 0.3: the forward's score modifier, built again in this graph (the
   * backward recomputes the scores through it), and score_mod_bprop, the
   * modifier of the gradient: its placeholder is dS' (the gradient at
   * score_mod's output) and its result dS (the gradient at its input), to
   * which attn_scale then applies. score_mod_bprop's nodes may read
   * score_mod's tensors (softcap: dS = dS' * (1 - tanh^2)). Without
   * score_mod_bprop, dS = dS' (right for masks). 0 (default): none. */
  int64_t score_mod;
  int64_t score_mod_bprop;
  /* since 0.3: the forward's sink_token (FLOAT [1, h_q, 1, 1]). The stats
   * already hold the sink, so dq, dk and dv need it for nothing; it is read
   * only for dsink_token. 0 (default): none. */
  int64_t sink_token;
  /* since 0.3: the sink's gradient, written into a tensor the caller made
   * with cudnnfe_graph_add_tensor (FLOAT [1, h_q, 1, 1], read by no node):
   * the node takes it as its output, keeping its UID, name and strides (as
   * cudnn-frontend's dSink_token). With D_i = dO_i . O_i,
   * dsink[h] = -sum over n and valid rows i < seq_len_q[n] of
   * exp(sink[h] - stats[n, h, i]) * D[n, h, i] (docs/attention.md). Needs
   * sink_token; GPU: cuDNN 9.13 and newer. 0 (default): none. */
  int64_t dsink_token;
  /* since 0.4: cudnn-frontend's max_total_seq_len_q / _kv, bounds on the
   * total tokens of a ragged (packed) layout. cudnnfe sizes no workspace by
   * them; like cudnn-frontend it refuses them (NOT_SUPPORTED at validation
   * for a GPU) when no tensor of the node has ragged offsets. Must be >= 0;
   * 0 (default): not given. */
  int64_t max_total_seq_len_q;
  int64_t max_total_seq_len_kv;
} cudnnfe_sdpa_backward_options_t;
void cudnnfe_sdpa_backward_options_init_sized(cudnnfe_sdpa_backward_options_t *options,
                                              size_t struct_size);
#define cudnnfe_sdpa_backward_options_init(options) \
  cudnnfe_sdpa_backward_options_init_sized((options), sizeof(*(options)))

/* Scaled dot-product attention backward: from q, k, v, o, d_o (shapes as the
 * forward) and stats (the forward's stats, [b, h_q, s_q, 1] FLOAT), writes
 * dq, dk, dv with the shapes and dimension orders of q, k, v. With
 * padding_mask, rows of dq beyond seq_len_q[n] and rows of dk, dv beyond
 * seq_len_kv[n] are 0 on the CPU reference and unspecified on the GPU. */
cudnnfe_status_t cudnnfe_graph_add_sdpa_backward(cudnnfe_graph_t *graph, int64_t q, int64_t k,
                                                 int64_t v, int64_t o, int64_t d_o, int64_t stats,
                                                 const cudnnfe_sdpa_backward_options_t *options,
                                                 int64_t *dq, int64_t *dk, int64_t *dv);

/* cudnnfe_graph_add_sdpa_backward that can also write the bias gradient:
 * with `dbias` not NULL, options->bias must be set with dims [1, h_q, s_q,
 * s_kv] (the one dBias shape cuDNN's attention engines produce) and *dbias
 * receives the UID of dBias (bias's dims, the sum over the batch of the
 * gradient of the biased scores). With `dbias` NULL it is
 * cudnnfe_graph_add_sdpa_backward. A separate function because the
 * original's signature has no slot for a fourth output and must not change. */
cudnnfe_status_t cudnnfe_graph_add_sdpa_backward_ex(cudnnfe_graph_t *graph, int64_t q, int64_t k,
                                                    int64_t v, int64_t o, int64_t d_o,
                                                    int64_t stats,
                                                    const cudnnfe_sdpa_backward_options_t *options,
                                                    int64_t *dq, int64_t *dk, int64_t *dv,
                                                    int64_t *dbias);

/* The options that the attention option sets share, in one struct: fill it
 * once and copy it into each set with its _set_common function
 * (cudnnfe_sdpa_options_set_common, cudnnfe_sdpa_backward_options_set_common,
 * and in the experimental part cudnnfe_sdpa_fp8_options_set_common and
 * cudnnfe_sdpa_fp8_backward_options_set_common), so that a forward and its
 * backward cannot disagree. Each field means what the field of the same name
 * of cudnnfe_sdpa_options_t means (docs/attention.md). The option sets keep
 * their own fields, at their offsets (a struct's layout never changes once
 * released); this struct is their shared part, not a member of them.
 * since 0.4 */
typedef struct cudnnfe_attention_common {
  size_t struct_size;
  double attn_scale;                               /* default 0: 1/sqrt(d) */
  int32_t causal_mask;                             /* top-left aligned; default 0 */
  int64_t window_left;                             /* default -1 */
  int64_t window_right;                            /* default -1 */
  cudnnfe_diagonal_alignment_t diagonal_alignment; /* default TOP_LEFT */
  int32_t padding_mask;
  int64_t seq_len_q;
  int64_t seq_len_kv;
  int32_t alibi_mask;
  double dropout_probability;
  int64_t dropout_seed;
  int64_t dropout_offset;
  int64_t dropout_mask;
  int64_t dropout_scale;
} cudnnfe_attention_common_t;
/* since 0.4 */
void cudnnfe_attention_common_init_sized(cudnnfe_attention_common_t *common, size_t struct_size);
#define cudnnfe_attention_common_init(common) \
  cudnnfe_attention_common_init_sized((common), sizeof(*(common)))

/* Copies the fields of `common` (NULL: its defaults) into `options`, which
 * its init function filled; the other fields of `options` are left as they
 * are. INVALID_ARGUMENT when `options` is NULL or its struct_size does not
 * reach the shared fields (a struct from a header older than them).
 * since 0.4 */
cudnnfe_status_t cudnnfe_sdpa_options_set_common(cudnnfe_sdpa_options_t *options,
                                                 const cudnnfe_attention_common_t *common);
/* As cudnnfe_sdpa_options_set_common, for the backward's options. since 0.4 */
cudnnfe_status_t cudnnfe_sdpa_backward_options_set_common(cudnnfe_sdpa_backward_options_t *options,
                                                          const cudnnfe_attention_common_t *common);

/* ------------------------------------------------------------------------ */
/* Score modifiers (since 0.3)                                              */
/*                                                                          */
/* ------------------------------------------------------------------------ */

/* A score modifier is a sub-graph of pointwise ops that an attention node
 * applies to every element of its scores (cudnn-frontend's score_mod;
 * docs/attention.md defines where). Build one between the two calls below:
 *   1. cudnnfe_graph_begin_score_mod opens it and returns the UID of its
 *      placeholder `score`, a virtual FLOAT tensor of the scores' dims;
 *   2. cudnnfe_graph_add_pointwise (any mode, GEN_INDEX included) adds its
 *      nodes, reading `score`, earlier nodes' outputs, graph inputs (a
 *      pass-by-value tensor, a [b,1,1,1] length, a broadcast table) and
 *      scalars; any other op while it is open is INVALID_GRAPH;
 *   3. cudnnfe_graph_end_score_mod closes it with its result (a node output
 *      that depends on `score`, of a floating type);
 *   4. the attention options' score_mod (or score_mod_bprop) names `score`.
 * The modifier's nodes belong to that attention node, not to the graph's
 * list; their tensors stay virtual. One modifier is open at a time, and a
 * graph validates only when every modifier is closed and taken. The GPU
 * runs a modifier in the composite graph only, and refuses it (NOT_SUPPORTED)
 * beside alibi_mask, padding_mask or a causal mask or band, as
 * cudnn-frontend does; the CPU reference runs every combination. */

/* Opens a score modifier. `dims` are the scores' [b, h_q, s_q, s_kv]
 * (ndims 4; s_kv a paged cache's logical length); `name` names the
 * placeholder (NULL: automatic). Writes its UID to *score. WRONG_STATE if one
 * is open already. since 0.3 */
cudnnfe_status_t cudnnfe_graph_begin_score_mod(cudnnfe_graph_t *graph, const char *name,
                                               int32_t ndims, const int64_t *dims, int64_t *score);

/* Closes the open score modifier of placeholder `score` with `result`.
 * INVALID_GRAPH when `result` is not an output of its nodes (or `score`
 * itself), does not depend on `score`, or one of its nodes reads an output
 * of a node outside it; the modifier then stays open. since 0.3 */
cudnnfe_status_t cudnnfe_graph_end_score_mod(cudnnfe_graph_t *graph, int64_t score, int64_t result);

/* ------------------------------------------------------------------------ */
/* Normalizations and softmax                                               */
/* ------------------------------------------------------------------------ */

/* Normalizations. Every norm computes, per group of x's elements, mean and
 * inv_variance = 1/sqrt(var + epsilon) (or inv_rms), and y = xhat * scale +
 * bias; the ops differ in the groups and in the shapes of scale and bias:
 *   layernorm, rmsnorm  x [N, ...]: over the dims where the scale is not 1,
 *                       per index of the others (cudnn-frontend's rule):
 *                       scale, bias with x's rank, each dim x's or 1 (they
 *                       broadcast); statistics x's dims with 1 where the
 *                       scale is not 1. [tokens, hidden] with [1, hidden],
 *                       or a transformer's [b, s, d] with [1, 1, d]: per
 *                       token; [N, C, H, W] with [1, C, H, W]: per sample
 *   batchnorm           x [N, C, spatial...]: per channel over N and spatial;
 *                       scale, bias and statistics [1, C, 1, ...]
 *   instancenorm        x [N, C, spatial...]: per (n, c) over spatial;
 *                       scale, bias [1, C, 1, ...]; statistics [N, C, 1, ...]
 *   adalayernorm        x [B, S, features...]: per (b, s) over the features;
 *                       scale, bias [B, 1, features...] or [1, 1,
 *                       features...] (each dim x's or 1; the dims after the
 *                       first where the scale is not 1 are normalized);
 *                       statistics [B, S, 1, ...]
 * Statistics outputs are FLOAT unless set otherwise. Backward ops take the
 * forward's statistics (not recomputed ones) and write the parameter
 * gradients in the scale's type, as cuDNN does. */
typedef int32_t cudnnfe_norm_phase_t;
#define CUDNNFE_NORM_PHASE_TRAINING 0  /* also writes the statistics */
#define CUDNNFE_NORM_PHASE_INFERENCE 1 /* statistics outputs are 0 */

typedef struct cudnnfe_norm_options {
  size_t struct_size;
  const char *name;
  cudnnfe_norm_phase_t phase; /* default TRAINING */
  double epsilon;             /* default 1e-5 */
  /* 1: y uses (1 + scale) instead of scale (zero-centred gamma). Offered
   * by layernorm, rmsnorm and adalayernorm (forward and backward). */
  int32_t zero_centered_gamma;
  cudnnfe_dtype_t compute_dtype;
  /* batchnorm with running statistics: the weight of this batch's
   * statistics in the update (cuDNN's exponential average factor), in
   * [0, 1]; default 0.1. Use 1/(1 + n) at the n-th call (n from 0) for a
   * cumulative average. */
  double momentum;
  /* ---- Fields appended after the first release. */
  /* A one-element FLOAT (or other floating-point type on the CPU
   * reference) graph input holding epsilon, read when the graph is
   * executed instead of the number above (cudnn-frontend's epsilon tensor);
   * 0: the number (the default). Forward norms only (layernorm, rmsnorm,
   * batchnorm, instancenorm, adalayernorm). Make it pass-by-value
   * (cudnnfe_tensor_set_pass_by_value) for the GPU, as cudnn-frontend's
   * host epsilon tensors are. since 0.3 */
  int64_t epsilon_tensor;
  /* As epsilon_tensor, for batchnorm's momentum (read only with running
   * statistics). since 0.3
   * since 0.4: a scalar (cudnnfe_graph_add_scalar) given as epsilon_tensor
   * or momentum_tensor is folded into the number when the graph is
   * validated: the op then reads no tensor for it, as cudnn-frontend's
   * Python API folds a host value. */
  int64_t momentum_tensor;
} cudnnfe_norm_options_t;
void cudnnfe_norm_options_init_sized(cudnnfe_norm_options_t *options, size_t struct_size);
#define cudnnfe_norm_options_init(options) \
  cudnnfe_norm_options_init_sized((options), sizeof(*(options)))

/* y = (x - mean) * inv_variance * scale + bias. In TRAINING, writes mean and
 * inv_variance = 1/sqrt(var + epsilon); in INFERENCE they are set to 0
 * (the pointers may be NULL then). */
cudnnfe_status_t cudnnfe_graph_add_layernorm(cudnnfe_graph_t *graph, int64_t x, int64_t scale,
                                             int64_t bias, const cudnnfe_norm_options_t *options,
                                             int64_t *y, int64_t *mean, int64_t *inv_variance);

/* y = x * inv_rms * scale (+ bias when bias != 0), inv_rms = 1/sqrt(mean(x²)
 * + epsilon). inv_rms is written in TRAINING (else set to 0). */
cudnnfe_status_t cudnnfe_graph_add_rmsnorm(cudnnfe_graph_t *graph, int64_t x, int64_t scale,
                                           int64_t bias, const cudnnfe_norm_options_t *options,
                                           int64_t *y, int64_t *inv_rms);

/* Layer norm backward: dx, dscale, dbias from dy, x, scale and the forward's
 * mean and inv_variance. */
cudnnfe_status_t cudnnfe_graph_add_layernorm_backward(cudnnfe_graph_t *graph, int64_t dy, int64_t x,
                                                      int64_t scale, int64_t mean,
                                                      int64_t inv_variance,
                                                      const cudnnfe_norm_options_t *options,
                                                      int64_t *dx, int64_t *dscale, int64_t *dbias);

/* RMS norm backward: dx and dscale (and dbias when `dbias` is not NULL: the
 * forward had a bias) from dy, x, scale and the forward's inv_rms. */
cudnnfe_status_t cudnnfe_graph_add_rmsnorm_backward(cudnnfe_graph_t *graph, int64_t dy, int64_t x,
                                                    int64_t scale, int64_t inv_rms,
                                                    const cudnnfe_norm_options_t *options,
                                                    int64_t *dx, int64_t *dscale, int64_t *dbias);

/* Batch norm, training. x is [N, C, spatial...] (rank >= 2) in any layout
 * (channels-last, NHWC, is what cuDNN's engines take); statistics are per
 * channel c over N and every spatial dim (M = N * prod(spatial) values).
 * scale and bias are [1, C, 1, ...] (x's rank). Writes
 *   mean[c]         = sum(x[:, c, ...]) / M
 *   inv_variance[c] = 1 / sqrt(var[c] + epsilon), var[c] the biased
 *                     variance sum((x - mean[c])^2) / M
 *   y = (x - mean[c]) * inv_variance[c] * scale[c] + bias[c]
 * with mean and inv_variance [1, C, 1, ...] FLOAT. Running statistics are
 * updated when prev_running_mean and prev_running_var ([1, C, 1, ...]) are
 * both given (both 0: none, and the next_* pointers may be NULL):
 *   next_running_mean = (1 - momentum) * prev_running_mean + momentum * mean
 *   next_running_var  = (1 - momentum) * prev_running_var
 *                       + momentum * var * M / (M - 1)
 * i.e. the running variance uses the unbiased (Bessel-corrected) batch
 * variance, as cuDNN's batch norm does (M must then be > 1). The next_*
 * outputs are [1, C, 1, ...] FLOAT; binding a next_* output to the same
 * buffer as its prev_* input updates it in place. `phase` must be TRAINING
 * (use cudnnfe_graph_add_batchnorm_inference for inference);
 * zero_centered_gamma is not offered. */
cudnnfe_status_t cudnnfe_graph_add_batchnorm(cudnnfe_graph_t *graph, int64_t x, int64_t scale,
                                             int64_t bias, int64_t prev_running_mean,
                                             int64_t prev_running_var,
                                             const cudnnfe_norm_options_t *options, int64_t *y,
                                             int64_t *mean, int64_t *inv_variance,
                                             int64_t *next_running_mean, int64_t *next_running_var);

/* Batch norm, inference, as cuDNN's NORM_FORWARD inference phase takes it:
 * y = (x - mean[c]) * inv_variance[c] * scale[c] + bias[c] with the given
 * per-channel mean and inv_variance ([1, C, 1, ...]). From running
 * statistics, pass mean = running_mean and inv_variance = 1 / sqrt(
 * running_var + epsilon). Reads only `name` and `compute_dtype` of the
 * options (phase, epsilon and momentum have no role here). GPU (cuDNN 9.14
 * and 9.19 on H100): there is no engine for this op on its own, in any
 * type (the build reports NOT_SUPPORTED); inside cuDNN's fused pattern
 * batchnorm_inference -> RELU_BWD -> batchnorm_backward it builds in FLOAT.
 * On its own, the same y as a chain of pointwise ops (SUB mean, MUL
 * inv_variance, MUL scale, ADD bias; channels-last) runs in every type. */
cudnnfe_status_t cudnnfe_graph_add_batchnorm_inference(cudnnfe_graph_t *graph, int64_t x,
                                                       int64_t scale, int64_t bias, int64_t mean,
                                                       int64_t inv_variance,
                                                       const cudnnfe_norm_options_t *options,
                                                       int64_t *y);

/* Batch norm backward: dx, dscale, dbias ([1, C, 1, ...], in scale's type)
 * from dy and x ([N, C, spatial...]), scale and the forward's mean and
 * inv_variance ([1, C, 1, ...]). Reads `name` and `compute_dtype`. */
cudnnfe_status_t cudnnfe_graph_add_batchnorm_backward(cudnnfe_graph_t *graph, int64_t dy, int64_t x,
                                                      int64_t scale, int64_t mean,
                                                      int64_t inv_variance,
                                                      const cudnnfe_norm_options_t *options,
                                                      int64_t *dx, int64_t *dscale, int64_t *dbias);

/* Instance norm. x is [N, C, spatial...] (rank >= 3, any layout);
 * statistics are per (n, c) over the spatial dims: mean and inv_variance
 * are [N, C, 1, ...] FLOAT (biased variance, as layernorm), scale and bias
 * [1, C, 1, ...]: y = (x - mean[n,c]) * inv_variance[n,c] * scale[c] +
 * bias[c]. In INFERENCE the statistics are computed the same way but not
 * written (*mean and *inv_variance are set to 0; the pointers may be NULL).
 * zero_centered_gamma is not offered. */
cudnnfe_status_t cudnnfe_graph_add_instancenorm(cudnnfe_graph_t *graph, int64_t x, int64_t scale,
                                                int64_t bias, const cudnnfe_norm_options_t *options,
                                                int64_t *y, int64_t *mean, int64_t *inv_variance);

/* Instance norm backward: dx, dscale, dbias ([1, C, 1, ...], scale's type)
 * from dy, x, scale and the forward's mean and inv_variance [N, C, 1, ...]. */
cudnnfe_status_t cudnnfe_graph_add_instancenorm_backward(cudnnfe_graph_t *graph, int64_t dy,
                                                         int64_t x, int64_t scale, int64_t mean,
                                                         int64_t inv_variance,
                                                         const cudnnfe_norm_options_t *options,
                                                         int64_t *dx, int64_t *dscale,
                                                         int64_t *dbias);

/* Adaptive layer norm (cuDNN's ADA_LAYER_NORM, as DiT models use it): a
 * layer norm whose scale and bias are per sample. x is [B, S, features...]
 * (rank >= 3: batch, tokens, then the normalized features); statistics are
 * per (b, s) over the features: mean and inv_variance are [B, S, 1, ...]
 * FLOAT (biased variance); scale and bias are [B, 1, features...]:
 *   y = (x - mean[b,s]) * inv_variance[b,s] * g[b,:] + bias[b,:]
 * with g = scale, or 1 + scale with zero_centered_gamma (DiT's
 * modulate(x, shift, scale) is zero_centered_gamma with bias = shift). In
 * INFERENCE the statistics are not written (set to 0, may be NULL). Needs a
 * cuDNN whose backend knows the ADA_LAYER_NORM mode; an older one makes
 * the build fail with NOT_SUPPORTED naming the loaded version. GPU: cuDNN
 * 9.14 and 9.19 refuse the forward with zero_centered_gamma (the fused
 * scale + 1); the backward with it builds. */
cudnnfe_status_t cudnnfe_graph_add_adalayernorm(cudnnfe_graph_t *graph, int64_t x, int64_t scale,
                                                int64_t bias, const cudnnfe_norm_options_t *options,
                                                int64_t *y, int64_t *mean, int64_t *inv_variance);

/* Adaptive layer norm backward: dx [B, S, features...], dscale and dbias
 * [B, 1, features...] (per sample, scale's type; FLOAT with
 * zero_centered_gamma) from dy, x, scale and the forward's mean and
 * inv_variance [B, S, 1, ...]. */
cudnnfe_status_t cudnnfe_graph_add_adalayernorm_backward(cudnnfe_graph_t *graph, int64_t dy,
                                                         int64_t x, int64_t scale, int64_t mean,
                                                         int64_t inv_variance,
                                                         const cudnnfe_norm_options_t *options,
                                                         int64_t *dx, int64_t *dscale,
                                                         int64_t *dbias);

typedef struct cudnnfe_softmax_options {
  size_t struct_size;
  const char *name;
  /* 1: also write stats = log-sum-exp over the last dim ([..., 1] FLOAT). */
  int32_t generate_stats;
  cudnnfe_dtype_t compute_dtype;
} cudnnfe_softmax_options_t;
void cudnnfe_softmax_options_init_sized(cudnnfe_softmax_options_t *options, size_t struct_size);
#define cudnnfe_softmax_options_init(options) \
  cudnnfe_softmax_options_init_sized((options), sizeof(*(options)))

/* y = softmax(x) over the last dimension; stats when asked (else *stats is
 * set to 0; `stats` may be NULL then). */
cudnnfe_status_t cudnnfe_graph_add_softmax(cudnnfe_graph_t *graph, int64_t x,
                                           const cudnnfe_softmax_options_t *options, int64_t *y,
                                           int64_t *stats);

/* ------------------------------------------------------------------------ */
/* Split batch norm: genstats, bn_finalize, dbn_weight                      */
/*                                                                          */
/* cudnn-frontend's batch-norm training graph in pieces: genstats after a   */
/* convolution gives the per-channel sums from which the rest of the batch  */
/* norm is computed. since 0.3                                              */
/* ------------------------------------------------------------------------ */

typedef struct cudnnfe_genstats_options {
  size_t struct_size;
  const char *name;
  cudnnfe_dtype_t compute_dtype;
} cudnnfe_genstats_options_t;
/* since 0.3 */
void cudnnfe_genstats_options_init_sized(cudnnfe_genstats_options_t *options, size_t struct_size);
#define cudnnfe_genstats_options_init(options) \
  cudnnfe_genstats_options_init_sized((options), sizeof(*(options)))

/* Per-channel statistics of x [N, C, ...]: sum[c] = sum of x[n, c, ...]
 * over every dim but C, sq_sum[c] = the same of x * x; both [1, C, 1, ...],
 * FLOAT unless set otherwise. On the GPU it lowers to
 * CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR (mode SUM_SQSUM, math
 * precision x's type), which cuDNN runs fused after a convolution.
 * since 0.3 */
cudnnfe_status_t cudnnfe_graph_add_genstats(cudnnfe_graph_t *graph, int64_t x,
                                            const cudnnfe_genstats_options_t *options, int64_t *sum,
                                            int64_t *sq_sum);

typedef struct cudnnfe_bn_finalize_options {
  size_t struct_size;
  const char *name;
  cudnnfe_dtype_t compute_dtype;
} cudnnfe_bn_finalize_options_t;
/* since 0.3 */
void cudnnfe_bn_finalize_options_init_sized(cudnnfe_bn_finalize_options_t *options,
                                            size_t struct_size);
#define cudnnfe_bn_finalize_options_init(options) \
  cudnnfe_bn_finalize_options_init_sized((options), sizeof(*(options)))

/* Batch-norm statistics from genstats' sums, as cudnn-frontend's
 * bn_finalize. sum, sq_sum, scale and bias are [1, C, 1, ...]; epsilon and
 * accum_count (M, the number of elements summed per channel, an integer
 * type) are one-element tensors (scalars from cudnnfe_graph_add_scalar
 * do). Outputs, [1, C, 1, ...] FLOAT unless set:
 *   mean = sum / M, var = sq_sum / M - mean^2 (biased),
 *   inv_variance = 1 / sqrt(var + epsilon),
 *   eq_scale = scale * inv_variance, eq_bias = bias - mean * eq_scale
 * (so that y = x * eq_scale + eq_bias is the batch norm of x). With
 * prev_running_mean, prev_running_var ([1, C, 1, ...]) and momentum (one
 * element) all given -- or all 0 for none, when the next_* pointers may be
 * NULL and are set to 0 --
 *   next_running_mean = (1 - momentum) * prev_running_mean + momentum * mean
 *   next_running_var  = (1 - momentum) * prev_running_var
 *                       + momentum * var * M / (M - 1)
 * as cudnnfe_graph_add_batchnorm updates them (M must then be > 1). On the
 * GPU it lowers to CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR
 * (TRAINING, FLOAT math). since 0.3 */
cudnnfe_status_t cudnnfe_graph_add_bn_finalize(cudnnfe_graph_t *graph, int64_t sum, int64_t sq_sum,
                                               int64_t scale, int64_t bias, int64_t epsilon,
                                               int64_t accum_count, int64_t prev_running_mean,
                                               int64_t prev_running_var, int64_t momentum,
                                               const cudnnfe_bn_finalize_options_t *options,
                                               int64_t *eq_scale, int64_t *eq_bias, int64_t *mean,
                                               int64_t *inv_variance, int64_t *next_running_mean,
                                               int64_t *next_running_var);

typedef struct cudnnfe_dbn_weight_options {
  size_t struct_size;
  const char *name;
  cudnnfe_dtype_t compute_dtype;
} cudnnfe_dbn_weight_options_t;
/* since 0.3 */
void cudnnfe_dbn_weight_options_init_sized(cudnnfe_dbn_weight_options_t *options,
                                           size_t struct_size);
#define cudnnfe_dbn_weight_options_init(options) \
  cudnnfe_dbn_weight_options_init_sized((options), sizeof(*(options)))

/* Batch-norm backward, weights part, as cudnn-frontend's dbn_weight: from
 * dy and x [N, C, ...] (same dims) and the forward's mean, inv_variance
 * and scale ([1, C, 1, ...]), with M = N * (spatial size) and xhat = (x -
 * mean) * inv_variance, writes ([1, C, 1, ...], FLOAT unless set)
 *   dbias = sum of dy, dscale = sum of dy * xhat (per channel)
 * and the coefficients that make dx = eq_scale_dy * dy + eq_scale_x * x +
 * eq_bias the batch-norm data gradient:
 *   eq_scale_dy = scale * inv_variance
 *   eq_scale_x  = -eq_scale_dy * inv_variance * dscale / M
 *   eq_bias     = eq_scale_dy * (mean * inv_variance * dscale - dbias) / M
 * On the GPU it lowers to CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR
 * (FLOAT math). since 0.3 */
cudnnfe_status_t cudnnfe_graph_add_dbn_weight(cudnnfe_graph_t *graph, int64_t dy, int64_t x,
                                              int64_t mean, int64_t inv_variance, int64_t scale,
                                              const cudnnfe_dbn_weight_options_t *options,
                                              int64_t *dscale, int64_t *dbias, int64_t *eq_scale_dy,
                                              int64_t *eq_scale_x, int64_t *eq_bias);

/* ------------------------------------------------------------------------ */
/* Layout: reshape, transpose, slice, concatenate                           */
/*                                                                          */
/* docs/layout-ops.md describes each op's semantics and what the GPU        */
/* (cuDNN) accepts of it.                                                   */
/* ------------------------------------------------------------------------ */

/* Options shared by reshape, transpose, slice and concatenate. */
typedef struct cudnnfe_layout_options {
  size_t struct_size;
  const char *name;
} cudnnfe_layout_options_t;
void cudnnfe_layout_options_init_sized(cudnnfe_layout_options_t *options, size_t struct_size);
#define cudnnfe_layout_options_init(options) \
  cudnnfe_layout_options_init_sized((options), sizeof(*(options)))

/* y = x with dims `dims` (`ndims` entries, same element count): the
 * row-major order of the logical elements is kept (numpy's reshape). y is
 * packed row-major unless its strides are set. On the GPU a reshape is a
 * view (cuDNN moves no data for it): x's layout must allow it (packed
 * row-major x does). A virtual y of a graph input is read in place by the
 * ops that use it; other reshapes need cuDNN's reshape operation, which
 * cuDNN 9.14/9.19 run only inside fused attention (docs/layout-ops.md).
 * Dims set on y later with cudnnfe_tensor_set_dims (until validation)
 * become the new shape (since 0.4; they were refused as disagreeing). */
cudnnfe_status_t cudnnfe_graph_add_reshape(cudnnfe_graph_t *graph, int64_t x, int32_t ndims,
                                           const int64_t *dims,
                                           const cudnnfe_layout_options_t *options, int64_t *y);

/* y dim i is x dim permutation[i] (`ndims` entries, x's rank, a
 * permutation of 0..ndims-1): y[i0, i1, ...] = x[j] with j[permutation[k]]
 * = ik. y's strides default to x's strides permuted likewise (packed in x's
 * memory order), which makes the transpose a view of x's memory: no data
 * moves on the GPU, where it is lowered as reshape is (a transposed graph
 * input feeding a matmul is a strided operand). */
cudnnfe_status_t cudnnfe_graph_add_transpose(cudnnfe_graph_t *graph, int64_t x, int32_t ndims,
                                             const int32_t *permutation,
                                             const cudnnfe_layout_options_t *options, int64_t *y);

/* y = x[start:end:step] per dim (`ndims` entries, x's rank; `step` NULL
 * means 1): dim i of y has ceil((end[i] - start[i]) / step[i]) elements,
 * 0 <= start[i] < end[i] <= x's dim i, step[i] >= 1. y is a view of x's
 * buffer (x's strides times step, starting at the offset of `start`): it
 * has no buffer, cannot be a graph output, and on the GPU x must be a graph
 * input (the view's pointer is x's pointer plus the offset at execute). */
cudnnfe_status_t cudnnfe_graph_add_slice(cudnnfe_graph_t *graph, int64_t x, int32_t ndims,
                                         const int64_t *start, const int64_t *end,
                                         const int64_t *step,
                                         const cudnnfe_layout_options_t *options, int64_t *y);

/* y = the `num_inputs` tensors (2 to 16, equal ranks, equal dims except
 * `axis`, one data type) joined along `axis`. y keeps inputs[0]'s dimension
 * order. On the GPU it needs cuDNN 9.7 or newer (cuDNN's concatenate
 * operation); older libraries are refused with NOT_SUPPORTED at build, and
 * cuDNN 9.14/9.19 run it only inside fused patterns they know. */
cudnnfe_status_t cudnnfe_graph_add_concatenate(cudnnfe_graph_t *graph, int32_t num_inputs,
                                               const int64_t *inputs, int32_t axis,
                                               const cudnnfe_layout_options_t *options, int64_t *y);

/* ------------------------------------------------------------------------ */
/* Resampling and random numbers                                            */
/*                                                                          */
/* docs/layout-ops.md describes both ops and what the GPU (cuDNN) accepts   */
/* of them.                                                                 */
/* ------------------------------------------------------------------------ */

/* Resampling modes. Pooling takes a window over each output position
 * (floor((in + pre + post - window) / stride) + 1 positions per spatial dim);
 * upsampling multiplies each spatial dim by `scale` with half-pixel centres
 * (source coordinate (out + 0.5) / scale - 0.5, like align_corners=False). */
typedef int32_t cudnnfe_resample_mode_t;
#define CUDNNFE_RESAMPLE_MAXPOOL 1
#define CUDNNFE_RESAMPLE_AVGPOOL_INCLUDE_PADDING 2 /* divides by the window size */
#define CUDNNFE_RESAMPLE_AVGPOOL_EXCLUDE_PADDING 3 /* divides by the in-image count */
#define CUDNNFE_RESAMPLE_NEAREST 4                 /* upsampling: nearest neighbour */
#define CUDNNFE_RESAMPLE_BILINEAR 5                /* upsampling: bilinear (edges clamp) */

/* What pooling reads outside the image. */
typedef int32_t cudnnfe_padding_mode_t;
#define CUDNNFE_PADDING_AUTO 0    /* NEG_INF for MAXPOOL, ZERO for average pooling */
#define CUDNNFE_PADDING_ZERO 1    /* zeros */
#define CUDNNFE_PADDING_NEG_INF 2 /* -infinity (MAXPOOL only) */
#define CUDNNFE_PADDING_EDGE 3    /* the nearest edge value (MAXPOOL only) */

typedef struct cudnnfe_resample_options {
  size_t struct_size;
  const char *name;
  cudnnfe_resample_mode_t mode; /* default MAXPOOL */
  /* Spatial rank (1 to 3); 0 takes it from x's rank minus 2. */
  int32_t spatial_dims;
  int64_t window[3];                   /* pooling window; default 2 */
  int64_t stride[3];                   /* pooling stride; default 2 */
  int64_t pre_padding[3];              /* pooling only; default 0, each < window */
  int64_t post_padding[3];             /* pooling only; default 0, each < window */
  cudnnfe_padding_mode_t padding_mode; /* default AUTO */
  int64_t scale[3];                    /* NEAREST / BILINEAR factor; default 2 */
  /* MAXPOOL: 1 also writes `index`, the position of each maximum inside its
   * window (row-major over the window, first maximum on ties), INT8 unless
   * its type is set. Default 0. */
  int32_t generate_index;
  cudnnfe_dtype_t compute_dtype;
} cudnnfe_resample_options_t;
void cudnnfe_resample_options_init_sized(cudnnfe_resample_options_t *options, size_t struct_size);
#define cudnnfe_resample_options_init(options) \
  cudnnfe_resample_options_init_sized((options), sizeof(*(options)))

/* y[N, C, *] = resample(x[N, C, *]). Dims are logical NC(D)HW in every
 * layout; y and `index` are channels-last (NHWC) unless their strides are
 * set, as in cudnn-frontend. `index` may be NULL unless generate_index is
 * set (else *index is set to 0). */
cudnnfe_status_t cudnnfe_graph_add_resample(cudnnfe_graph_t *graph, int64_t x,
                                            const cudnnfe_resample_options_t *options, int64_t *y,
                                            int64_t *index);

typedef int32_t cudnnfe_rng_distribution_t;
#define CUDNNFE_RNG_BERNOULLI 1 /* 1 with bernoulli_probability, else 0 */
#define CUDNNFE_RNG_UNIFORM 2   /* uniform on [uniform_min, uniform_max) */
#define CUDNNFE_RNG_NORMAL 3    /* normal(normal_mean, normal_stddev) */

typedef struct cudnnfe_rng_options {
  size_t struct_size;
  const char *name;
  cudnnfe_rng_distribution_t distribution; /* default BERNOULLI */
  double bernoulli_probability;            /* default 0.5 */
  double uniform_min;                      /* default 0 */
  double uniform_max;                      /* default 1 */
  double normal_mean;                      /* default 0 */
  double normal_stddev;                    /* default 1 */
  /* The seed when no seed tensor is given (offset 0); default 0. */
  int64_t seed;
  cudnnfe_dtype_t compute_dtype;
} cudnnfe_rng_options_t;
void cudnnfe_rng_options_init_sized(cudnnfe_rng_options_t *options, size_t struct_size);
#define cudnnfe_rng_options_init(options) \
  cudnnfe_rng_options_init_sized((options), sizeof(*(options)))

/* y (dims `dims`, `ndims` entries, packed row-major unless its strides are
 * set) filled with random numbers of the options' distribution. `seed` and
 * `offset` are one-element INT64 (or INT32) tensors -- graph inputs read at
 * execute, or scalars -- given together; both 0 uses options->seed and
 * offset 0. The same seed and offset give the same numbers. The GPU uses
 * cuDNN's Philox generator; the CPU reference cannot reproduce its bits and
 * uses its own documented counter-based generator with the same
 * distributions (docs/layout-ops.md). cuDNN 9.14/9.19 refuse rng outside
 * the fused patterns they know (attention dropout); the refusal is
 * reported as NOT_SUPPORTED. */
cudnnfe_status_t cudnnfe_graph_add_rng(cudnnfe_graph_t *graph, int32_t ndims, const int64_t *dims,
                                       int64_t seed, int64_t offset,
                                       const cudnnfe_rng_options_t *options, int64_t *y);

/* ------------------------------------------------------------------------ */
/* Validation and build                                                     */
/* ------------------------------------------------------------------------ */

/* Where a built graph runs. */
typedef int32_t cudnnfe_target_t;
/* AUTO picks the GPU when cuDNN and a GPU load, else the CPU reference. It
 * never falls back to the CPU because cuDNN refused a graph: that is
 * reported (NOT_SUPPORTED), not hidden behind a slow path. */
#define CUDNNFE_TARGET_AUTO 0
#define CUDNNFE_TARGET_GPU 1           /* cuDNN on the GPU; fails if unavailable */
#define CUDNNFE_TARGET_CPU_REFERENCE 2 /* plain loops on host buffers */

typedef int32_t cudnnfe_heur_mode_t;
#define CUDNNFE_HEUR_MODE_A 0
#define CUDNNFE_HEUR_MODE_B 1
#define CUDNNFE_HEUR_MODE_FALLBACK 2

/* How many of the heuristics' engine configurations a GPU build turns into
 * plans. */
typedef int32_t cudnnfe_build_policy_t;
/* The first configuration, in heuristics order, that passes the filters and
 * builds: one plan, the quickest build. */
#define CUDNNFE_BUILD_POLICY_HEURISTICS_CHOICE 0
/* Every configuration of every heuristics mode that passes the filters and
 * builds (a configuration offered by two modes counts once), in heuristics
 * order: several plans for cudnnfe_graph_select_plan and
 * cudnnfe_graph_autotune. Plan 0 is the heuristics' choice. */
#define CUDNNFE_BUILD_POLICY_ALL 1

/* Verify mode (docs/verify.md): whether the first execution of each plan is
 * checked against the CPU reference on a sample of output elements.
 * since 0.4 */
typedef int32_t cudnnfe_verify_mode_t;
/* On when the environment variable CUDNNFE_VERIFY is "1" at build, else off. */
#define CUDNNFE_VERIFY_FROM_ENV 0
#define CUDNNFE_VERIFY_ON 1
#define CUDNNFE_VERIFY_OFF 2

/* Numerical notes cuDNN attaches to an engine, as bit flags (our values).
 * TF32 math on FLOAT data is reported as TENSOR_CORE (often with
 * DOWN_CONVERT_INPUTS): exclude TENSOR_CORE on a FLOAT graph to keep full
 * FP32 math. */
#define CUDNNFE_NUMERICAL_NOTE_TENSOR_CORE 1
#define CUDNNFE_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS 2
#define CUDNNFE_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION 4
#define CUDNNFE_NUMERICAL_NOTE_FFT 8
#define CUDNNFE_NUMERICAL_NOTE_NONDETERMINISTIC 16
#define CUDNNFE_NUMERICAL_NOTE_WINOGRAD 32 /* any Winograd tile size */
#define CUDNNFE_NUMERICAL_NOTE_STRICT_NAN_PROP 64
/* Every numerical note bit this library knows. */
#define CUDNNFE_NUMERICAL_NOTE_ALL 127

/* Behaviour notes cuDNN attaches to an engine, as bit flags (our values). */
#define CUDNNFE_BEHAVIOR_NOTE_RUNTIME_COMPILATION 1 /* compiles a kernel at build (NVRTC) */
#define CUDNNFE_BEHAVIOR_NOTE_REQUIRES_FILTER_INT8X32_REORDER 2
#define CUDNNFE_BEHAVIOR_NOTE_REQUIRES_BIAS_INT8X32_REORDER 4
/* The plan can fill a CUDA graph (cudnnfe_graph_populate_cuda_graph). */
#define CUDNNFE_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API 8
#define CUDNNFE_BEHAVIOR_NOTE_CUBLASLT_DEPENDENCY 16
/* Every behaviour note bit this library knows. */
#define CUDNNFE_BEHAVIOR_NOTE_ALL 31

/* A kernel cache for dynamic shapes: compiled kernels shared by the GPU
 * builds of graphs of one topology and different shapes (cuDNN's kernel
 * cache; cudnn-frontend's create_kernel_cache). Give it to builds through
 * cudnnfe_build_options_t.kernel_cache. Thread-safe. since 0.3 */
typedef struct cudnnfe_kernel_cache cudnnfe_kernel_cache_t;

/* Creates an empty kernel cache; free it with cudnnfe_kernel_cache_destroy
 * (plans built with it keep what they need). since 0.3 */
cudnnfe_status_t cudnnfe_kernel_cache_create(cudnnfe_kernel_cache_t **cache);
cudnnfe_status_t cudnnfe_kernel_cache_destroy(cudnnfe_kernel_cache_t *cache);

/* cuDNN's JSON of the cache (size-query pattern as cudnnfe_graph_serialize).
 * WRONG_STATE while it is empty (no GPU build used it and nothing was
 * loaded); NOT_SUPPORTED where the loaded cuDNN cannot serialize it.
 * since 0.3 */
cudnnfe_status_t cudnnfe_kernel_cache_serialize(cudnnfe_kernel_cache_t *cache, char *buffer,
                                                size_t capacity, size_t *size);

/* Loads what cudnnfe_kernel_cache_serialize wrote into an empty cache
 * (WRONG_STATE otherwise; BAD_SERIALIZED_DATA for text that is not JSON).
 * cuDNN reads it when a GPU build first uses the cache, and refuses it there
 * (NOT_SUPPORTED) if it was written by another cuDNN or GPU. since 0.3 */
cudnnfe_status_t cudnnfe_kernel_cache_deserialize(cudnnfe_kernel_cache_t *cache, const char *data,
                                                  size_t size);

/* The properties of one GPU as cuDNN sees them (cuDNN's device properties;
 * cudnn-frontend's create_device_properties). Immutable; builds that use it
 * keep what they need. since 0.3 */
typedef struct cudnnfe_device_properties cudnnfe_device_properties_t;

typedef struct cudnnfe_build_options {
  size_t struct_size;
  cudnnfe_target_t target; /* default AUTO */
  /* Heuristic modes tried in order; default {A, FALLBACK}. */
  int32_t num_heur_modes;
  cudnnfe_heur_mode_t heur_modes[4];
  /* ---- Appended in 0.2: plan control. A caller's older, smaller struct
   * keeps the defaults below. ---- */
  cudnnfe_build_policy_t policy; /* default HEURISTICS_CHOICE */
  /* Engine filters, applied to each engine configuration before its plan is
   * built. When they remove every configuration the build fails with
   * NOT_SUPPORTED and a message naming each filter and what it removed. */
  /* Skip plans that need more workspace than this many bytes; -1 (default):
   * no limit. */
  int64_t max_workspace_size;
  uint32_t exclude_numerical_notes; /* CUDNNFE_NUMERICAL_NOTE_* bits; default 0 */
  uint32_t exclude_behavior_notes;  /* CUDNNFE_BEHAVIOR_NOTE_* bits; default 0 */
  /* Keep only engines that have every one of these CUDNNFE_BEHAVIOR_NOTE_*
   * bits (e.g. SUPPORTS_CUDA_GRAPH_NATIVE_API); default 0. */
  uint32_t require_behavior_notes;
  /* Engines (cuDNN's global engine index, the N of a plan name "engN_...")
   * never to use, e.g. one with a known numerical bug on this cuDNN.
   * `exclude_engines` has `num_exclude_engines` entries (at most 256) and
   * is read during the build call only. Default 0 / NULL. */
  int32_t num_exclude_engines;
  const int64_t *exclude_engines;
  /* POLICY_ALL: build at most this many plans; 0 (default): no limit. */
  int32_t max_plans;
  /* 1: this build neither reuses nor stores a cached plan (in-process or in
   * the directory). Default 0: a build of a graph with the same structure,
   * shapes, strides, types and scalar values as an earlier build in this
   * process, with the same options, on the same GPU, reuses its plans. */
  int32_t disable_plan_cache;
  /* Directory of the persistent plan cache, shared safely by processes;
   * created if missing. NULL (default): the environment variable
   * CUDNNFE_PLAN_CACHE_DIR when set, else none; "": none. Read during the
   * build call only. */
  const char *plan_cache_dir;
  /* ---- Appended in 0.3: execute-time shapes. ---- */
  /* 1: the plan may run with other shapes and strides of its bound tensors,
   * given at execute (cudnnfe_graph_execute_with_overrides); cuDNN's
   * operation graph attribute IS_OVERRIDE_SHAPE_ENABLED, cudnn-frontend's
   * is_override_shape_enabled. A GPU build is refused (NOT_SUPPORTED) where
   * the loaded cuDNN does not accept the attribute. The CPU reference
   * accepts it everywhere. Default 0. since 0.3 */
  int32_t override_shape_enabled;
  /* 1: a dynamic-shape graph (cuDNN's operation graph attribute
   * IS_DYNAMIC_SHAPE_ENABLED, cudnn-frontend's is_dynamic_shape_enabled):
   * engines built for it can share kernels between shapes through a kernel
   * cache. Default 0; a kernel_cache implies 1. since 0.3 */
  int32_t dynamic_shape_enabled;
  /* A kernel cache (cudnnfe_kernel_cache_create) that GPU builds of graphs of
   * one topology and different shapes share compiled kernels through; the
   * built plans keep it alive. The CPU reference ignores it. Default NULL.
   * since 0.3 */
  cudnnfe_kernel_cache_t *kernel_cache;
  /* ---- Appended in 0.3: building without a GPU. ---- */
  /* Device properties (cudnnfe_device_properties_create_from_json): build
   * the GPU plan for the device they describe without using a GPU, on any
   * machine with cuDNN. The handle must be NULL, the target AUTO or GPU
   * (CPU_REFERENCE is refused with INVALID_ARGUMENT), and the plan caches
   * are not used. The built graph cannot execute (WRONG_STATE): write it with
   * cudnnfe_graph_serialize_plan and load it with cudnnfe_graph_deserialize_plan
   * on such a GPU. Read during the build call only. Default NULL. Experimental
   * (the functions that make them are in the experimental part at the end of
   * this header). since 0.3 */
  const cudnnfe_device_properties_t *device_properties;
  /* ---- Appended in 0.4: cudnn-frontend's SM targets. ---- */
  /* The number of SMs the plan may use (cuDNN's heuristics SM count target,
   * cudnn-frontend's sm_count); 0 (default): all of the GPU's. since 0.4 */
  int32_t sm_count;
  /* The architecture whose support rules validation applies (90 for
   * compute capability 9.0; cudnn-frontend's sm_version): plans are still
   * built for the GPU in use (or device_properties). 0 (default): that
   * GPU's. since 0.4 */
  int32_t sm_version;
  /* ---- Appended in 0.4: verify mode (docs/verify.md). ---- */
  /* CUDNNFE_VERIFY_ON: the first execute of each plan of the built graph
   * (and the first run of each bound execution) copies, after the work, the
   * inputs that a sample of output elements depends on back to the host,
   * synchronizing `stream`; computes those elements with the CPU reference;
   * and fails with CUDNNFE_STATUS_VERIFY_FAILED when one is off by more than
   * the tolerance. What it cannot check (random numbers, outputs that
   * overwrite their inputs, ...) passes and is logged as "not verified"
   * (CUDNNFE_LOG=info). Default CUDNNFE_VERIFY_FROM_ENV. since 0.4 */
  cudnnfe_verify_mode_t verify;
  /* Output elements sampled per output tensor (at least the first and the
   * last, then spread over its leading dims); 0 (default): 64, or the
   * environment variable CUDNNFE_VERIFY_SAMPLES when set. A tensor with no
   * more elements than this is checked whole. since 0.4 */
  int32_t verify_samples;
  /* Relative tolerance of floating outputs: |got - want| <= verify_rtol *
   * (|want| + 0.1 * max|want|) over the sample; 0 (default): by the data
   * types involved (docs/verify.md). since 0.4 */
  double verify_rtol;
} cudnnfe_build_options_t;
void cudnnfe_build_options_init_sized(cudnnfe_build_options_t *options, size_t struct_size);
#define cudnnfe_build_options_init(options) \
  cudnnfe_build_options_init_sized((options), sizeof(*(options)))

/* Resolves data types, checks every node's shapes and types, and, where a
 * GPU is usable, the support rules of that GPU (as
 * cudnnfe_graph_validate_for_build with NULL handle and options). Returns
 * OK, INVALID_GRAPH (a malformed graph), or NOT_SUPPORTED (a well-formed
 * graph that cudnn-frontend or cuDNN refuses on that GPU, or that cudnnfe
 * cannot run on any target, e.g. a slice as a graph output), with a message
 * naming the node, tensor and rule (docs/refusals.md). */
cudnnfe_status_t cudnnfe_graph_validate(cudnnfe_graph_t *graph);

/* Validates the graph as cudnnfe_graph_build with these arguments would
 * before building: shapes and types for every target; for a GPU target (GPU,
 * AUTO with a usable GPU, or device_properties) also the support rules of
 * cudnn-frontend and cuDNN for that GPU's architecture (options->sm_version
 * when set) and the loaded cuDNN, which fail with NOT_SUPPORTED, the status
 * cudnn-frontend gives them (docs/refusals.md lists every rule and its
 * evidence). The CPU reference target checks shapes and types only.
 * `handle` and `options` may be NULL. since 0.4 */
cudnnfe_status_t cudnnfe_graph_validate_for_build(cudnnfe_graph_t *graph, cudnnfe_handle_t *handle,
                                                  const cudnnfe_build_options_t *options);

/* cudnn-frontend's check_support: validates the graph as cudnnfe_graph_build
 * with these arguments would, and for a GPU target lowers it and asks the
 * heuristics modes for engine configurations, keeping those that pass the
 * options' filters (notes, excluded engines, known wrong results), without
 * building any plan: no kernel is compiled, so a following build with
 * POLICY_ALL compiles each configuration once. Writes their number to
 * `*num_configs` (may be NULL; the CPU reference has one, "cpu_reference").
 * The graph stays unbuilt. Returns OK, INVALID_GRAPH, NOT_SUPPORTED (none
 * passes; the message says what removed each), CUDNN_UNAVAILABLE,
 * CUDA_ERROR, CUDNN_ERROR. A configuration may still fail to build (then
 * cudnnfe_graph_build tries the next). since 0.4 */
cudnnfe_status_t cudnnfe_graph_check_support(cudnnfe_graph_t *graph, cudnnfe_handle_t *handle,
                                             const cudnnfe_build_options_t *options,
                                             int64_t *num_configs);

/* Validates, lowers and builds the graph for `options->target`: for the GPU,
 * the first engine configuration of the heuristic modes that builds. `handle`
 * may be NULL (a per-device handle owned by the library is used). After
 * success the graph can no longer be modified. Returns OK, INVALID_GRAPH,
 * NOT_SUPPORTED (message names ops, cuDNN version, GPU architecture and
 * cuDNN's reason), CUDNN_UNAVAILABLE, CUDA_ERROR, CUDNN_ERROR. */
cudnnfe_status_t cudnnfe_graph_build(cudnnfe_graph_t *graph, cudnnfe_handle_t *handle,
                                     const cudnnfe_build_options_t *options);

/* Writes 1 once the graph is built. */
cudnnfe_status_t cudnnfe_graph_is_built(const cudnnfe_graph_t *graph, int32_t *is_built);

/* Writes where the built graph runs (GPU or CPU_REFERENCE); WRONG_STATE
 * before build. */
cudnnfe_status_t cudnnfe_graph_get_target(const cudnnfe_graph_t *graph, cudnnfe_target_t *target);

/* Writes the workspace the built graph needs, in bytes (0 for the CPU
 * reference). WRONG_STATE before build. */
cudnnfe_status_t cudnnfe_graph_get_workspace_size(const cudnnfe_graph_t *graph, int64_t *size);

/* Writes the name of the engine configuration the built plan uses (e.g.
 * "eng9_k2=3"), "cpu_reference" for the CPU target. Valid while the graph
 * lives. WRONG_STATE before build. */
cudnnfe_status_t cudnnfe_graph_get_plan_name(const cudnnfe_graph_t *graph, const char **name);

/* ------------------------------------------------------------------------ */
/* Execution                                                                */
/* ------------------------------------------------------------------------ */

/* One tensor's buffer: device memory for the GPU target, host memory for
 * the CPU reference, laid out as the tensor's dims, strides and dtype say. */
typedef struct cudnnfe_binding {
  int64_t uid;
  void *data;
} cudnnfe_binding_t;

/* Runs the built graph. Every bound tensor (cudnnfe_tensor_is_bound) needs
 * exactly one binding, but for an input that no op reads, whose binding is
 * accepted and ignored (cudnnfe_graph_get_bound_uids lists exactly the
 * tensors that need one); scalars need none. `workspace` must hold at least
 * cudnnfe_graph_get_workspace_size bytes (device memory; ignored by the CPU
 * reference). `stream` is a cudaStream_t (NULL: the default stream); GPU
 * execution is asynchronous on it. Errors are reported on `handle`.
 * Returns OK, INVALID_ARGUMENT (missing, unknown or duplicate binding, small
 * workspace), WRONG_STATE (not built), CUDNN_ERROR, CUDA_ERROR, and in verify
 * mode (cudnnfe_build_options_t.verify) VERIFY_FAILED: the first execute of
 * each plan then also waits for `stream` and checks a sample of the outputs
 * against the CPU reference (docs/verify.md). */
cudnnfe_status_t cudnnfe_graph_execute(const cudnnfe_graph_t *graph, cudnnfe_handle_t *handle,
                                       const cudnnfe_binding_t *bindings, size_t num_bindings,
                                       void *workspace, size_t workspace_size, void *stream);

/* One bound tensor's shape for one execute (cudnnfe_graph_execute_with_overrides):
 * `num_dims` dims and strides (in elements), as many as the tensor has. The
 * arrays are read during the call only. since 0.3 */
typedef struct cudnnfe_shape_override {
  int64_t uid;
  int32_t num_dims;
  const int64_t *dims;
  const int64_t *strides;
} cudnnfe_shape_override_t;

/* Runs a graph built with override_shape_enabled = 1 as cudnnfe_graph_execute
 * does, with the tensors of `overrides` (bound tensors, each at most once)
 * taking the given shapes and strides for this call; every other bound tensor
 * keeps its own. The rank of a tensor cannot change. The CPU reference runs
 * the graph with its shapes inferred again from the overridden ones: a bound
 * tensor whose shape would change must be overridden too, and an overridden
 * output must have the shape its op makes. With no overrides this is
 * cudnnfe_graph_execute. Returns what cudnnfe_graph_execute returns, and
 * INVALID_ARGUMENT naming the tensor and the rule for a bad override,
 * WRONG_STATE for a graph built without override_shape_enabled. since 0.3 */
cudnnfe_status_t cudnnfe_graph_execute_with_overrides(
    const cudnnfe_graph_t *graph, cudnnfe_handle_t *handle, const cudnnfe_binding_t *bindings,
    size_t num_bindings, const cudnnfe_shape_override_t *overrides, size_t num_overrides,
    void *workspace, size_t workspace_size, void *stream);

/* The order of pointers for cudnnfe_graph_execute_ordered: the bound
 * tensors' UIDs. Size-query pattern as cudnnfe_graph_get_tensor_uids.
 * WRONG_STATE before build. */
cudnnfe_status_t cudnnfe_graph_get_bound_uids(const cudnnfe_graph_t *graph, int64_t *uids,
                                              size_t capacity, size_t *count);

/* Faster form of execute: `data[i]` is the buffer of the i-th UID of
 * cudnnfe_graph_get_bound_uids; `count` must equal their number. */
cudnnfe_status_t cudnnfe_graph_execute_ordered(const cudnnfe_graph_t *graph,
                                               cudnnfe_handle_t *handle, void *const *data,
                                               size_t count, void *workspace, size_t workspace_size,
                                               void *stream);

/* ------------------------------------------------------------------------ */
/* Bound execution (since 0.3)                                              */
/*                                                                          */
/* A bound execution fixes a built graph's buffers, workspace and handle    */
/* once, so that each run is one call with nothing to look up or check:    */
/* the cuDNN variant pack is made at bind. It can also record the run as a  */
/* CUDA graph at bind and replay it (cudaGraphLaunch) at every execute,     */
/* which removes cuDNN's own host work from the call (docs/plans.md).       */
/* ------------------------------------------------------------------------ */

typedef struct cudnnfe_bound cudnnfe_bound_t;

/* How cudnnfe_bound_execute runs the work. since 0.3 */
typedef int32_t cudnnfe_cuda_graph_mode_t;
/* cudnnBackendExecute with the variant pack made at bind (CPU reference:
 * the reference executor on the bound host buffers). */
#define CUDNNFE_CUDA_GRAPH_OFF 0
/* A CUDA graph filled by cuDNN (cudnnBackendPopulateCudaGraph, cuDNN 9.5
 * and later, plans with CUDNNFE_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API). */
#define CUDNNFE_CUDA_GRAPH_NATIVE 1
/* A CUDA graph recorded by stream capture of cudnnBackendExecute on a
 * private stream (any GPU plan). The work runs once at bind before the
 * capture (a plan's first run may do setup that capture forbids), so bind
 * writes the outputs. */
#define CUDNNFE_CUDA_GRAPH_CAPTURE 2
/* NATIVE where the plan supports it (and cuDNN has the API), else CAPTURE. */
#define CUDNNFE_CUDA_GRAPH_AUTO 3

/* Options of cudnnfe_graph_bind. since 0.3 */
typedef struct cudnnfe_bind_options {
  size_t struct_size;
  /* Default OFF. A CUDA graph (NATIVE, CAPTURE, AUTO) is refused with
   * NOT_SUPPORTED, naming the reason, on the CPU reference, for a graph with
   * a pass-by-value input (cudnnfe_tensor_set_pass_by_value: its value is
   * read at each execute, but a recorded graph holds the value it had at
   * bind), and where the CUDA runtime lacks the graph API. */
  cudnnfe_cuda_graph_mode_t cuda_graph;
} cudnnfe_bind_options_t;

/* Fills the defaults. since 0.3 */
void cudnnfe_bind_options_init_sized(cudnnfe_bind_options_t *options, size_t struct_size);
#define cudnnfe_bind_options_init(options) \
  cudnnfe_bind_options_init_sized((options), sizeof(*(options)))

/* Binds the built graph's selected plan to `data` (as for
 * cudnnfe_graph_execute_ordered: `count` pointers in the order of
 * cudnnfe_graph_get_bound_uids, each checked non-NULL), `workspace` (as for
 * execute) and `handle`, and writes the new bound execution to *bound. The
 * buffers must stay allocated, and the graph and the handle alive, until
 * the bound execution is destroyed; their contents may change between runs
 * (a pass-by-value input's value is read at each execute when cuda_graph is
 * OFF). Plan selection or autotune after bind does not change which plan a
 * bound execution runs. Errors are reported on `handle`. Returns OK,
 * INVALID_ARGUMENT, WRONG_STATE (not built), NOT_SUPPORTED (see
 * cudnnfe_bind_options_t), CUDNN_ERROR, CUDA_ERROR. since 0.3 */
cudnnfe_status_t cudnnfe_graph_bind(cudnnfe_bound_t **bound, const cudnnfe_graph_t *graph,
                                    cudnnfe_handle_t *handle, void *const *data, size_t count,
                                    void *workspace, size_t workspace_size,
                                    const cudnnfe_bind_options_t *options);

/* Runs the bound work on `stream` (a cudaStream_t; NULL: the default
 * stream; ignored by the CPU reference): cudnnBackendExecute with the
 * prepared variant pack, or cudaGraphLaunch of the recorded graph.
 * Asynchronous on the GPU, as cudnnfe_graph_execute. A bound execution is
 * used by one thread at a time (it runs on its handle). Errors are reported
 * on the bound handle. Returns OK, INVALID_ARGUMENT (NULL or destroyed bound
 * execution; its graph or handle destroyed), WRONG_STATE (its graph holds
 * another plan than at bind), CUDNN_ERROR, CUDA_ERROR, and VERIFY_FAILED in
 * verify mode, which checks each bound execution's first run (a replayed
 * CUDA graph included; docs/verify.md). since 0.3 */
cudnnfe_status_t cudnnfe_bound_execute(cudnnfe_bound_t *bound, void *stream);

/* Writes how the bound execution runs (CUDNNFE_CUDA_GRAPH_OFF, _NATIVE or
 * _CAPTURE; AUTO is resolved at bind). since 0.3 */
cudnnfe_status_t cudnnfe_bound_get_cuda_graph_mode(const cudnnfe_bound_t *bound,
                                                   cudnnfe_cuda_graph_mode_t *mode);

/* Frees the bound execution (its variant pack and CUDA graph). Destroy it
 * before its graph and handle; it may also be destroyed after them (it
 * holds what it needs to free itself). NULL is a no-op; a destroyed or
 * foreign pointer returns INVALID_ARGUMENT. since 0.3 */
cudnnfe_status_t cudnnfe_bound_destroy(cudnnfe_bound_t *bound);

/* ------------------------------------------------------------------------ */
/* CUDA graphs                                                              */
/*                                                                          */
/* Two ways (docs/plans.md): capture cudnnfe_graph_execute inside stream    */
/* capture (any GPU plan), or let cuDNN fill a CUDA graph directly (plans   */
/* with CUDNNFE_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API; require it    */
/* with the build option require_behavior_notes).                           */
/* ------------------------------------------------------------------------ */

/* Adds the selected plan's work on the given buffers (bindings and
 * workspace as for execute) to `cuda_graph`, a cudaGraph_t the caller
 * created empty (cudaGraphCreate) and owns. Instantiate and launch it with
 * the CUDA runtime. Returns OK, INVALID_ARGUMENT, WRONG_STATE, NOT_SUPPORTED
 * (CPU reference; the plan lacks native CUDA graph support; cuDNN older
 * than 9.5), CUDNN_ERROR. Errors are reported on `handle`. */
cudnnfe_status_t cudnnfe_graph_populate_cuda_graph(const cudnnfe_graph_t *graph,
                                                   cudnnfe_handle_t *handle,
                                                   const cudnnfe_binding_t *bindings,
                                                   size_t num_bindings, void *workspace,
                                                   size_t workspace_size, void *cuda_graph);

/* Points the nodes of a CUDA graph filled by
 * cudnnfe_graph_populate_cuda_graph (same graph and plan) at new buffers.
 * Then update an instantiated executable with cudaGraphExecUpdate, or
 * instantiate again. Same returns as populate. */
cudnnfe_status_t cudnnfe_graph_update_cuda_graph(const cudnnfe_graph_t *graph,
                                                 cudnnfe_handle_t *handle,
                                                 const cudnnfe_binding_t *bindings,
                                                 size_t num_bindings, void *workspace,
                                                 size_t workspace_size, void *cuda_graph);
/* ------------------------------------------------------------------------ */
/* Plans: inspection, selection, autotuning                                 */
/*                                                                          */
/* A GPU build makes one plan (POLICY_HEURISTICS_CHOICE) or several         */
/* (POLICY_ALL); execute runs the selected one. The CPU reference has one   */
/* plan, "cpu_reference". Selecting and autotuning change which plan a      */
/* graph runs: do them before sharing the graph among executing threads.    */
/* ------------------------------------------------------------------------ */

/* One plan of a built graph (cudnnfe_graph_get_plan_info). An output
 * struct: set struct_size (cudnnfe_plan_info_init does) and the library
 * writes the fields that fit in it. */
typedef struct cudnnfe_plan_info {
  size_t struct_size;
  /* "eng9_k2=3_k13=1": engine and knob choices; valid while the graph
   * lives. */
  const char *name;
  int64_t engine_id;        /* cuDNN's global engine index; -1 for the CPU */
  int64_t workspace_size;   /* bytes */
  uint32_t numerical_notes; /* CUDNNFE_NUMERICAL_NOTE_* bits */
  uint32_t behavior_notes;  /* CUDNNFE_BEHAVIOR_NOTE_* bits */
  /* Median time of one execute measured by the last autotune, in
   * milliseconds; -1 when not timed. */
  double autotune_time_ms;
  int32_t selected;           /* 1 for the plan that execute runs */
  int32_t chosen_by_autotune; /* 1 when autotune chose it (kept in blobs) */
} cudnnfe_plan_info_t;
void cudnnfe_plan_info_init_sized(cudnnfe_plan_info_t *info, size_t struct_size);
#define cudnnfe_plan_info_init(info) cudnnfe_plan_info_init_sized((info), sizeof(*(info)))

/* Writes the number of plans of the built graph (>= 1). WRONG_STATE before
 * build. */
cudnnfe_status_t cudnnfe_graph_get_plan_count(const cudnnfe_graph_t *graph, int64_t *count);

/* Fills `info` for plan `index` (0 to count - 1; INVALID_ARGUMENT
 * otherwise). WRONG_STATE before build. */
cudnnfe_status_t cudnnfe_graph_get_plan_info(const cudnnfe_graph_t *graph, int64_t index,
                                             cudnnfe_plan_info_t *info);

/* Fills `info` for configuration `index` (0 to num_configs - 1) of the last
 * cudnnfe_graph_check_support: name, engine_id and notes; workspace_size is
 * -1 (known once built), autotune_time_ms -1, selected and
 * chosen_by_autotune 0. WRONG_STATE when the graph was not checked or has
 * changed since; INVALID_ARGUMENT for an index out of range. since 0.4 */
cudnnfe_status_t cudnnfe_graph_get_checked_config_info(const cudnnfe_graph_t *graph, int64_t index,
                                                       cudnnfe_plan_info_t *info);

/* Makes plan `index` the one execute runs (and the one serialized).
 * Not safe while other threads execute the graph. */
cudnnfe_status_t cudnnfe_graph_select_plan(cudnnfe_graph_t *graph, int64_t index);

/* Writes the index of the plan execute runs. */
cudnnfe_status_t cudnnfe_graph_get_selected_plan(const cudnnfe_graph_t *graph, int64_t *index);

typedef struct cudnnfe_autotune_options {
  size_t struct_size;
  int32_t warmup_iterations; /* untimed executes per plan; default 2 */
  /* Timed samples per plan: at least min, at most max (defaults 5, 50). A
   * sample times a batch of back-to-back executes (up to 64) long enough
   * for CUDA events to resolve, between two CUDA events. */
  int32_t min_iterations;
  int32_t max_iterations;
  /* Stop sampling a plan once its median moved by less than this fraction
   * over the last sample; default 0.01. */
  double tolerance;
  /* Stop sampling a plan after this much measured GPU time; default 200. */
  double max_ms_per_plan;
} cudnnfe_autotune_options_t;
void cudnnfe_autotune_options_init_sized(cudnnfe_autotune_options_t *options, size_t struct_size);
#define cudnnfe_autotune_options_init(options) \
  cudnnfe_autotune_options_init_sized((options), sizeof(*(options)))

/* Times every plan of a built GPU graph on the GPU with CUDA events
 * (warm-up, then samples until the median is stable), selects the fastest
 * and records the timings in the graph (cudnnfe_plan_info_t), in its
 * serialized plan and in the plan caches, so that later builds of the same
 * graph and loads of its plan start with the autotuned plan and time
 * nothing. Build with CUDNNFE_BUILD_POLICY_ALL to have a choice.
 *
 * Buffers: with `bindings` NULL and `num_bindings` 0 the library allocates
 * scratch device buffers for every bound tensor (filled with a fixed finite
 * pattern) and frees them before returning; else every bound tensor needs a
 * binding as for execute, and output buffers are overwritten. `workspace`
 * NULL: the library allocates the largest workspace of the plans; else
 * plans needing more than `workspace_size` are not timed. `stream` is a
 * cudaStream_t (NULL: default stream); the call synchronizes it. A plan
 * whose execution fails is skipped (its time stays -1). Returns OK,
 * INVALID_ARGUMENT, WRONG_STATE, NOT_SUPPORTED (CPU reference graph, or no
 * plan could be timed; the message says why for each), CUDA_ERROR. */
cudnnfe_status_t cudnnfe_graph_autotune(cudnnfe_graph_t *graph, cudnnfe_handle_t *handle,
                                        const cudnnfe_binding_t *bindings, size_t num_bindings,
                                        void *workspace, size_t workspace_size, void *stream,
                                        const cudnnfe_autotune_options_t *options);

/* ------------------------------------------------------------------------ */
/* Build information and the plan cache                                     */
/* ------------------------------------------------------------------------ */

/* Where a built graph's plan came from. */
typedef int32_t cudnnfe_plan_source_t;
#define CUDNNFE_PLAN_SOURCE_BUILT 1        /* heuristics and plan build; the CPU reference */
#define CUDNNFE_PLAN_SOURCE_MEMORY_CACHE 2 /* reused from this process's plan cache */
#define CUDNNFE_PLAN_SOURCE_DISK_CACHE 3   /* loaded from the plan cache directory */
#define CUDNNFE_PLAN_SOURCE_SERIALIZED 4   /* cudnnfe_graph_deserialize_plan's engine config */
#define CUDNNFE_PLAN_SOURCE_REBUILT 5      /* deserialize_plan fell back to a full build */

/* How a graph was built (output struct, as cudnnfe_plan_info_t). Times in
 * milliseconds of host wall clock; a stage that did not run is 0. */
typedef struct cudnnfe_build_info {
  size_t struct_size;
  cudnnfe_plan_source_t source;
  double total_ms;      /* the whole build (or plan load) call */
  double validate_ms;   /* validation and type resolution */
  double cache_ms;      /* fingerprint and plan cache lookups */
  double lower_ms;      /* lowering and finalizing the operation graph */
  double heuristics_ms; /* heuristics queries, engine notes and filters */
  double plan_build_ms; /* support check and plan finalization */
} cudnnfe_build_info_t;
void cudnnfe_build_info_init_sized(cudnnfe_build_info_t *info, size_t struct_size);
#define cudnnfe_build_info_init(info) cudnnfe_build_info_init_sized((info), sizeof(*(info)))

/* Fills `info` for the built graph. WRONG_STATE before build. */
cudnnfe_status_t cudnnfe_graph_get_build_info(const cudnnfe_graph_t *graph,
                                              cudnnfe_build_info_t *info);

/* Characters of a fingerprint, with its terminating NUL. */
#define CUDNNFE_FINGERPRINT_SIZE 33

/* Writes the graph's structural fingerprint: 32 lowercase hex digits and a
 * NUL into `buffer` (capacity >= CUDNNFE_FINGERPRINT_SIZE). It hashes the
 * graph description (docs/graph-json.md) without graph, node and tensor
 * names: structure, UIDs, shapes, strides, data types, attributes and
 * scalar values. Graphs with equal fingerprints share plans; the plan
 * caches key on it plus the build options, the GPU and the cuDNN version.
 * Data types left NOT_SET are hashed as such: fingerprint a validated or
 * built graph to get the cache's key. */
cudnnfe_status_t cudnnfe_graph_get_fingerprint(const cudnnfe_graph_t *graph, char *buffer,
                                               size_t capacity);

/* Counters of the plan caches of this process (output struct). */
typedef struct cudnnfe_plan_cache_stats {
  size_t struct_size;
  int64_t entries;     /* plan sets held in memory */
  int64_t hits;        /* builds served from memory */
  int64_t misses;      /* cache-enabled GPU builds not served from memory */
  int64_t disk_hits;   /* builds served from the cache directory */
  int64_t disk_writes; /* plan files written to the cache directory */
  int64_t disk_errors; /* unreadable, stale or unwritable cache files (ignored) */
} cudnnfe_plan_cache_stats_t;
void cudnnfe_plan_cache_stats_init_sized(cudnnfe_plan_cache_stats_t *stats, size_t struct_size);
#define cudnnfe_plan_cache_stats_init(stats) \
  cudnnfe_plan_cache_stats_init_sized((stats), sizeof(*(stats)))

/* Reads the counters. */
cudnnfe_status_t cudnnfe_plan_cache_get_stats(cudnnfe_plan_cache_stats_t *stats);

/* Empties this process's plan cache and zeroes the counters. Graphs built
 * from it keep their plans. The cache directory is not touched. */
cudnnfe_status_t cudnnfe_plan_cache_clear(void);

/* ------------------------------------------------------------------------ */
/* Serialization                                                            */
/* ------------------------------------------------------------------------ */

/* Writes the graph description as versioned JSON (docs/graph-json.md), which
 * rebuilds on any GPU and cuDNN version. Size-query pattern: with buffer ==
 * NULL writes the size in bytes (no terminating NUL) to *size; else
 * `capacity` must be at least that size. */
cudnnfe_status_t cudnnfe_graph_serialize(const cudnnfe_graph_t *graph, char *buffer,
                                         size_t capacity, size_t *size);

/* Loads a graph description into `graph`, which must be empty (just
 * created). `data` may also be a plan blob (cudnnfe_graph_serialize_plan):
 * its graph description is loaded, unbuilt (since 0.4). Returns OK or
 * BAD_SERIALIZED_DATA with a message saying what is wrong and where; never
 * crashes on hostile input. */
cudnnfe_status_t cudnnfe_graph_deserialize(cudnnfe_graph_t *graph, const char *data, size_t size);

/* ------------------------------------------------------------------------ */
/* Built plans, serialized                                                  */
/* ------------------------------------------------------------------------ */

/* Writes the built graph's plan: a header line, then a JSON document holding
 * the graph description, the build options, the selected plan's engine
 * configuration (engine id and knobs), the cuDNN version and GPU
 * architecture it was built for, and the autotune record (docs/plans.md).
 * Loading it skips heuristics and the plan search. A CPU reference graph
 * serializes as such. Size-query pattern as cudnnfe_graph_serialize.
 * WRONG_STATE before build. */
cudnnfe_status_t cudnnfe_graph_serialize_plan(const cudnnfe_graph_t *graph, char *buffer,
                                              size_t capacity, size_t *size);

typedef struct cudnnfe_plan_load_options {
  size_t struct_size;
  /* 1: when the plan was made for another GPU architecture or cuDNN version
   * (or this machine has neither), or its engine configuration no longer
   * builds, build the graph again from its description with the stored
   * build options (source REBUILT) instead of failing. Default 0. */
  int32_t rebuild_on_mismatch;
} cudnnfe_plan_load_options_t;
void cudnnfe_plan_load_options_init_sized(cudnnfe_plan_load_options_t *options, size_t struct_size);
#define cudnnfe_plan_load_options_init(options) \
  cudnnfe_plan_load_options_init_sized((options), sizeof(*(options)))

/* Loads a serialized plan into `graph`, which must be empty (just
 * created), and builds it from the stored engine configuration: the graph is
 * built on return. `handle` may be NULL as for cudnnfe_graph_build. Returns
 * OK; BAD_SERIALIZED_DATA for truncated, corrupt or hostile bytes (never a
 * crash or an allocation sized by the input), and for a plan made for
 * another GPU architecture or cuDNN version, the message naming both;
 * NOT_SUPPORTED when the stored engine configuration no longer builds;
 * CUDNN_UNAVAILABLE, CUDA_ERROR. On failure the graph stays empty. */
cudnnfe_status_t cudnnfe_graph_deserialize_plan(cudnnfe_graph_t *graph, cudnnfe_handle_t *handle,
                                                const char *data, size_t size,
                                                const cudnnfe_plan_load_options_t *options);

#ifdef CUDNNFE_EXPERIMENTAL

/* ------------------------------------------------------------------------ */
/* Experimental API (CUDNNFE_EXPERIMENTAL)                                  */
/*                                                                          */
/* Declared only where CUDNNFE_EXPERIMENTAL is defined before this header   */
/* is included (see the top of this file). Each runs only on some GPUs or   */
/* cuDNN versions; the library always exports them.                         */
/* ------------------------------------------------------------------------ */

/* ------------------------------------------------------------------------ */
/* FP8 attention                                                            */
/*                                                                          */
/* Attention on FP8 q, k, v with per-tensor scaling, as cudnn-frontend's    */
/* sdpa_fp8 defines it (cuDNN runs it on Hopper and newer). Every descale   */
/* and scale is a one-element FLOAT tensor (e.g. [1,1,1,1], bound at        */
/* execute) or a FLOAT scalar; a value x stored in FP8 as x * scale is read */
/* back as stored * descale (descale = 1 / scale). FP8 products are         */
/* computed as stored and descaled in FLOAT; softmax probabilities P are    */
/* multiplied by scale_s and cast to q's FP8 type before P·V; every FP8     */
/* result is written times its scale, and its amax (largest magnitude       */
/* before that scale, [1,1,1,1] FLOAT) is always an output: mark each amax  */
/* with cudnnfe_tensor_set_output (validation refuses a virtual one). The   */
/* CPU reference makes the same casts; cuDNN's fused kernels cast P per     */
/* key tile of an online softmax, so FP8 results may differ from it by an   */
/* FP8 rounding step.                                                       */
/* ------------------------------------------------------------------------ */

typedef struct cudnnfe_sdpa_fp8_options {
  size_t struct_size;
  const char *name;
  /* Softmax scale applied to Q·Kᵀ (after the descales); 0 means
   * 1/sqrt(d). */
  double attn_scale;
  /* 1: also write stats [b, h_q, s_q, 1] FLOAT (log-sum-exp of the scaled
   * scores) for the backward pass. */
  int32_t generate_stats;
  /* 1: causal mask aligned at the top-left corner (row i sees cols <= i). */
  int32_t causal_mask;
  /* ---- Fields appended after the first release (an older caller's smaller
   * struct keeps their defaults). */
  /* since 0.3: the diagonal band (sliding window), exactly as
   * cudnnfe_sdpa_options_t's window_left, window_right and
   * diagonal_alignment. causal_mask is window_right = 0 with TOP_LEFT (so
   * with it window_right must be -1 or 0 and the alignment TOP_LEFT); a
   * bottom-right causal mask is window_right = 0 with BOTTOM_RIGHT. */
  int64_t window_left;                             /* default -1; else >= 1 */
  int64_t window_right;                            /* default -1; else >= 0 */
  cudnnfe_diagonal_alignment_t diagonal_alignment; /* default TOP_LEFT */
  /* since 0.3: padding (variable sequence lengths), exactly as
   * cudnnfe_sdpa_options_t's padding_mask, seq_len_q and seq_len_kv (INT32
   * or INT64 [b, 1, 1, 1]). */
  int32_t padding_mask;
  int64_t seq_len_q;
  int64_t seq_len_kv;
  /* since 0.3: ALiBi, as cudnnfe_sdpa_options_t's alibi_mask (needs
   * causal_mask, or window_right = 0 with TOP_LEFT). */
  int32_t alibi_mask;
  /* since 0.3: dropout of P, as cudnnfe_sdpa_options_t's: drawn
   * (dropout_probability with dropout_seed and dropout_offset) or given
   * (dropout_mask and dropout_scale). P is dropped and scaled before scale_s
   * and the FP8 cast: P8 = fp8(P * keep * scale * scale_s); amax_s is
   * max|P * keep * scale| (cudnn-frontend's order). */
  double dropout_probability;
  int64_t dropout_seed;
  int64_t dropout_offset;
  int64_t dropout_mask;
  int64_t dropout_scale;
  /* since 0.3: a paged K/V cache, as cudnnfe_sdpa_options_t's page_table_k,
   * page_table_v and max_seq_len_kv (needs padding_mask; cuDNN 9.5+). */
  int64_t page_table_k;
  int64_t page_table_v;
  int64_t max_seq_len_kv; /* default 0 */
  /* since 0.3: a sink logit per query head, as cudnnfe_sdpa_options_t's
   * sink_token (a FLOAT [1, h_q, 1, 1] tensor joining each row's softmax
   * denominator; cuDNN 9.13+). 0: none. */
  int64_t sink_token;
} cudnnfe_sdpa_fp8_options_t;
void cudnnfe_sdpa_fp8_options_init_sized(cudnnfe_sdpa_fp8_options_t *options, size_t struct_size);
#define cudnnfe_sdpa_fp8_options_init(options) \
  cudnnfe_sdpa_fp8_options_init_sized((options), sizeof(*(options)))

/* FP8 attention forward. q [b, h_q, s_q, d], k [b, h_kv, s_kv, d], v [b,
 * h_kv, s_kv, d_v]: one FP8 type (FP8_E4M3 or FP8_E5M2), logical BHSD order,
 * any strides; h_q a multiple of h_kv (GQA, MQA). With S = Q·Kᵀ *
 * attn_scale * descale_q * descale_k [+ ALiBi] (masked by padding,
 * causal_mask and the band; a row left no column gives o = 0 and stats =
 * -inf, or the sink logit, on the CPU reference), P = softmax(S) [with the
 * sink logit in its denominator] [dropped: P * keep * scale]:
 *   amax_s = max|P|;  P8 = fp8(P * scale_s);
 *   O' = P8·V * descale_s * descale_v;  amax_o = max|O'|;  o = O' * scale_o
 * o [b, h_q, s_q, d_v] has q's dimension order and, by default, q's type
 * (set the graph's io type or the tensor's type for another: FP8_E4M3,
 * FP8_E5M2, HALF or BFLOAT16; cuDNN 9.13+ on Blackwell only for the 16-bit
 * ones). Writes *stats (0 without generate_stats; `stats` may then be
 * NULL), *amax_s and *amax_o. */
cudnnfe_status_t cudnnfe_graph_add_sdpa_fp8(cudnnfe_graph_t *graph, int64_t q, int64_t k, int64_t v,
                                            int64_t descale_q, int64_t descale_k, int64_t descale_v,
                                            int64_t descale_s, int64_t scale_s, int64_t scale_o,
                                            const cudnnfe_sdpa_fp8_options_t *options, int64_t *o,
                                            int64_t *stats, int64_t *amax_s, int64_t *amax_o);

typedef struct cudnnfe_sdpa_fp8_backward_options {
  size_t struct_size;
  const char *name;
  /* As in cudnnfe_sdpa_fp8_options_t: must match the forward pass. */
  double attn_scale;
  int32_t causal_mask;
  /* ---- Fields appended after the first release. since 0.3: the diagonal
   * band, as in cudnnfe_sdpa_fp8_options_t (must match the forward). */
  int64_t window_left;  /* default -1 */
  int64_t window_right; /* default -1 */
  cudnnfe_diagonal_alignment_t diagonal_alignment;
  /* since 0.3: padding, as in cudnnfe_sdpa_fp8_options_t (must match the
   * forward). Rows of dq past seq_len_q[n] and of dk, dv past seq_len_kv[n]
   * are 0 on the CPU reference and unspecified on the GPU. */
  int32_t padding_mask;
  int64_t seq_len_q;
  int64_t seq_len_kv;
  /* since 0.3: the forward's dropout (the same seed and offset, or the same
   * mask and scale), as cudnnfe_sdpa_backward_options_t's, dropout_scale_inv
   * included (required with dropout_mask; on the GPU a scalar of 1). */
  double dropout_probability;
  int64_t dropout_seed;
  int64_t dropout_offset;
  int64_t dropout_mask;
  int64_t dropout_scale;
  int64_t dropout_scale_inv;
} cudnnfe_sdpa_fp8_backward_options_t;
void cudnnfe_sdpa_fp8_backward_options_init_sized(cudnnfe_sdpa_fp8_backward_options_t *options,
                                                  size_t struct_size);
#define cudnnfe_sdpa_fp8_backward_options_init(options) \
  cudnnfe_sdpa_fp8_backward_options_init_sized((options), sizeof(*(options)))

/* FP8 attention backward. q, k, v as the forward (one FP8 type); o and d_o
 * [b, h_q, s_q, d_v] (o: the forward's output; d_o FP8_E4M3 or FP8_E5M2);
 * stats the forward's [b, h_q, s_q, 1] FLOAT. With P = exp(S - stats):
 *   D = rowsum(dO * O) * descale_do * descale_o
 *   dV' = fp8(P * scale_s)ᵀ·dO * descale_s * descale_do
 *   dS = (dO·Vᵀ * descale_do * descale_v - D) * P * attn_scale
 *   amax_dp = max|dS|;  dS8 = fp8(dS * scale_dp) in d_o's type
 *   dQ' = dS8·K * descale_dp * descale_k;  dK' = dS8ᵀ·Q * descale_dp * descale_q
 * and for X in dQ, dK, dV: amax_dX = max|X'|, dX = X' * scale_dX (GQA: dK
 * and dV summed over each group of query heads). dq, dk, dv have the
 * shapes and dimension orders of q, k, v and, by default, q's type. */
cudnnfe_status_t cudnnfe_graph_add_sdpa_fp8_backward(
    cudnnfe_graph_t *graph, int64_t q, int64_t k, int64_t v, int64_t o, int64_t d_o, int64_t stats,
    int64_t descale_q, int64_t descale_k, int64_t descale_v, int64_t descale_o, int64_t descale_do,
    int64_t descale_s, int64_t descale_dp, int64_t scale_s, int64_t scale_dq, int64_t scale_dk,
    int64_t scale_dv, int64_t scale_dp, const cudnnfe_sdpa_fp8_backward_options_t *options,
    int64_t *dq, int64_t *dk, int64_t *dv, int64_t *amax_dq, int64_t *amax_dk, int64_t *amax_dv,
    int64_t *amax_dp);

/* As cudnnfe_sdpa_options_set_common, for the FP8 options (the shared
 * fields, as cudnnfe_attention_common_t gives them). The FP8 backward has no
 * ALiBi: a common struct with alibi_mask set is INVALID_ARGUMENT for it.
 * since 0.4 */
cudnnfe_status_t cudnnfe_sdpa_fp8_options_set_common(cudnnfe_sdpa_fp8_options_t *options,
                                                     const cudnnfe_attention_common_t *common);
cudnnfe_status_t cudnnfe_sdpa_fp8_backward_options_set_common(
    cudnnfe_sdpa_fp8_backward_options_t *options, const cudnnfe_attention_common_t *common);

/* ------------------------------------------------------------------------ */
/* Block-scale quantization (microscaling, MXFP8)                           */
/*                                                                          */
/* x is cut into blocks of `block_size` consecutive elements along `axis`;  */
/* each block gets one FP8_E8M0 scale (a power of two) and FP8 values.      */
/* docs/layout-ops.md ("Block scaling") has the exact rule.                 */
/* ------------------------------------------------------------------------ */

/* Options of both block-scale ops. */
typedef struct cudnnfe_block_scale_options {
  size_t struct_size;
  const char *name;
  /* Elements per block along `axis` (default 32, the MX block): x's dim
   * `axis` must be a multiple of it. */
  int32_t block_size;
  /* The blocked dim; negative counts from the end (default -1, the last
   * dim). The scale tensor has x's dims with dim `axis` divided by
   * block_size. */
  int32_t axis;
  /* Quantize only: nonzero gives y and scale strides that make `axis` the
   * innermost (packed) dim, whatever x's layout (default 0: y takes x's
   * strides, scale x's dimension order). cuDNN wants the blocked dim
   * packed. */
  int32_t transpose;
  /* Quantize only: y's type when y's type is not set, FP8_E4M3 (default)
   * or FP8_E5M2 (MXFP8, which the CPU reference computes; cuDNN takes or
   * refuses other types). The scale's type is FP8_E8M0. */
  cudnnfe_dtype_t y_dtype;
} cudnnfe_block_scale_options_t;
void cudnnfe_block_scale_options_init_sized(cudnnfe_block_scale_options_t *options,
                                            size_t struct_size);
#define cudnnfe_block_scale_options_init(options) \
  cudnnfe_block_scale_options_init_sized((options), sizeof(*(options)))

/* Block-scale quantize: for each block B of x (FLOAT, HALF or BFLOAT16),
 *   scale[B] = amax(|x in B|) / max_finite(y type), in float, rounded UP to
 *              a power of two (an FP8_E8M0 value; 2^-127 for an all-zero
 *              block),
 *   y = x / scale[B], rounded to nearest even in y's type (FP8_E4M3: max
 *       448, FP8_E5M2: max 57344), saturating.
 * Outputs: y (x's dims), scale (x's dims, dim `axis` / block_size). On the
 * GPU it lowers to CUDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR
 * (cuDNN 9.7 or newer; cuDNN runs it on Blackwell GPUs, and refuses it on
 * Hopper with NOT_SUPPORTED). */
cudnnfe_status_t cudnnfe_graph_add_block_scale_quantize(
    cudnnfe_graph_t *graph, int64_t x, const cudnnfe_block_scale_options_t *options, int64_t *y,
    int64_t *scale);

/* Block-scale dequantize: y = x * scale[B] for each element of block B.
 * x is FP8_E4M3 or FP8_E5M2, scale FP8_E8M0 with x's dims except dim
 * `axis`, which is x's divided by block_size. y (x's dims, x's strides) is
 * FLOAT, HALF or BFLOAT16; an unset y type is the graph's io type (or the
 * intermediate type for a virtual y), else FLOAT. Reads block_size, axis
 * and name. On the GPU it lowers to
 * CUDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR (cuDNN 9.7 or
 * newer); cuDNN runs it fused into a matmul on Blackwell GPUs and refuses
 * it elsewhere with NOT_SUPPORTED. */
cudnnfe_status_t cudnnfe_graph_add_block_scale_dequantize(
    cudnnfe_graph_t *graph, int64_t x, int64_t scale, const cudnnfe_block_scale_options_t *options,
    int64_t *y);

/* ------------------------------------------------------------------------ */
/* Mixture-of-experts grouped matmul (since 0.3)                            */
/*                                                                          */
/* Each expert e multiplies its own rows of the token matrix by its own     */
/* weight: output rows [start(g), end(g)) = token rows @ weight[g % E] for  */
/* each group g. docs/moe.md has the exact rule, the routing modes and what */
/* the GPU (cuDNN) accepts.                                                 */
/* ------------------------------------------------------------------------ */

/* How routed rows relate to token and output rows (r: a routed row). */
typedef int32_t cudnnfe_moe_grouped_matmul_mode_t;
/* output[r] = token[r] @ weight[expert(r)] */
#define CUDNNFE_MOE_GROUPED_MATMUL_MODE_NONE 0
/* output[r] = token[token_index[r]] @ weight[expert(r)] */
#define CUDNNFE_MOE_GROUPED_MATMUL_MODE_GATHER 1
/* output[token_index[r] * top_k + token_ks[r]] = token[r] @ weight[expert(r)] */
#define CUDNNFE_MOE_GROUPED_MATMUL_MODE_SCATTER 2

/* Options of moe_grouped_matmul and its backward. since 0.3 */
typedef struct cudnnfe_moe_grouped_matmul_options {
  size_t struct_size;
  const char *name;
  cudnnfe_moe_grouped_matmul_mode_t mode; /* default NONE; the backward takes NONE only */
  /* SCATTER: experts per token (output slot token_index * top_k + token_ks);
   * default 1, at least 1. */
  int32_t top_k;
  /* cuDNN's math precision; NOT_SET (default): the graph's compute type. */
  cudnnfe_dtype_t compute_dtype;
} cudnnfe_moe_grouped_matmul_options_t;
void cudnnfe_moe_grouped_matmul_options_init_sized(cudnnfe_moe_grouped_matmul_options_t *options,
                                                   size_t struct_size);
#define cudnnfe_moe_grouped_matmul_options_init(options) \
  cudnnfe_moe_grouped_matmul_options_init_sized((options), sizeof(*(options)))

/* output[1, R, N] from token[1, T, K], weight[E, K, N] and
 * first_token_offset (INT32): either [G, 1, 1] group starts (E > 1, G a
 * multiple of E; the last group ends at R) or [G + 1, 1, 1] boundaries
 * (group g is routed rows [offset[g], offset[g + 1])). Group g uses
 * weight[g % E]. R, the routed rows, is T (NONE, SCATTER) or token_index's
 * dim 1 (GATHER). token_index ([1, R, 1] INT32) is read by GATHER and
 * SCATTER, token_ks ([1, R, 1] INT32) by SCATTER; pass 0 for a port the
 * mode does not read. Output rows no group writes are unspecified (the CPU
 * reference writes 0). On the GPU it lowers to
 * CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR; a cuDNN without
 * it refuses with NOT_SUPPORTED. since 0.3 */
cudnnfe_status_t cudnnfe_graph_add_moe_grouped_matmul(
    cudnnfe_graph_t *graph, int64_t token, int64_t weight, int64_t first_token_offset,
    int64_t token_index, int64_t token_ks, const cudnnfe_moe_grouped_matmul_options_t *options,
    int64_t *output);

/* The weight gradient of a NONE-mode moe_grouped_matmul:
 * dweight[e] = sum over the groups g of expert e of token[rows of g]^T @
 * doutput[rows of g], for doutput[1, T, N] and token[1, T, K]. dweight is
 * [E, K, N], column-major in K and N (strides [K*N, 1, K]); E is
 * first_token_offset's dim 0 unless dweight's dims are set (set them when
 * first_token_offset holds G + 1 boundaries or several batches). Reads name
 * and compute_dtype; mode must be NONE. On the GPU it lowers to
 * CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_BWD_DESCRIPTOR; a cuDNN
 * without it refuses with NOT_SUPPORTED. since 0.3 */
cudnnfe_status_t cudnnfe_graph_add_moe_grouped_matmul_backward(
    cudnnfe_graph_t *graph, int64_t doutput, int64_t token, int64_t first_token_offset,
    const cudnnfe_moe_grouped_matmul_options_t *options, int64_t *dweight);

/* ------------------------------------------------------------------------ */
/* Paged cache load                                                         */
/*                                                                          */
/* The gather of a paged K or V cache (vLLM-style pages) into a contiguous  */
/* tensor, as cudnn-frontend's paged_cache_load node. Experimental: cuDNN   */
/* 9.5.0 or newer has the operation. since 0.4                              */
/* ------------------------------------------------------------------------ */

/* Options of paged_cache_load. since 0.4 */
typedef struct cudnnfe_paged_cache_load_options {
  size_t struct_size;
  const char *name;
  /* NOT_SET (default): the graph's compute type. */
  cudnnfe_dtype_t compute_dtype;
} cudnnfe_paged_cache_load_options_t;
/* since 0.4 */
void cudnnfe_paged_cache_load_options_init_sized(cudnnfe_paged_cache_load_options_t *options,
                                                 size_t struct_size);
#define cudnnfe_paged_cache_load_options_init(options) \
  cudnnfe_paged_cache_load_options_init_sized((options), sizeof(*(options)))

/* y[n, h, j, :] = container[page_table[n, 0, j / P, 0], h, j % P, :] for the
 * rows j < seq_len[n] of each sequence n, where container is
 * [num_pages, h, P, d] (P the page size), page_table [b, 1, pages, 1] and
 * seq_len [b, 1, 1, 1] of an integer type (INT32 as in cudnn-frontend's
 * paged attention; cuDNN decides which it runs). y is [b, h, pages * P, d]
 * in container's type unless set: its dims may be set to [b, h, s, d] with
 * ceil(s / P) = pages (cudnn-frontend's rule), and its strides to any
 * layout (s innermost gives K^T's layout, as paged attention reads keys).
 * Rows j >= seq_len[n] are unspecified (the CPU reference writes 0); a
 * page number outside the container or a length above s fails at execute
 * with INVALID_ARGUMENT on the CPU reference. On the GPU it lowers to
 * CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR; a cuDNN before 9.5.0
 * refuses with NOT_SUPPORTED. since 0.4 */
cudnnfe_status_t cudnnfe_graph_add_paged_cache_load(
    cudnnfe_graph_t *graph, int64_t container, int64_t seq_len, int64_t page_table,
    const cudnnfe_paged_cache_load_options_t *options, int64_t *y);

/* ------------------------------------------------------------------------ */
/* Device properties: building without a GPU                                */
/* ------------------------------------------------------------------------ */

/* Experimental (docs/plans.md): needs a cuDNN that offers device properties
 * (its headers document them since cuDNN 9.8.0); an older one is refused
 * with NOT_SUPPORTED naming its version. Describe a GPU once where it is
 * (create, serialize); then, on any machine with cuDNN, GPU or not, load
 * that JSON (create_from_json), build graphs with
 * cudnnfe_build_options_t.device_properties and write their plans with
 * cudnnfe_graph_serialize_plan; run them after cudnnfe_graph_deserialize_plan
 * on a GPU like the one described, with the same cuDNN version. */

/* Describes CUDA device `device` (needs cuDNN and that GPU). Free with
 * cudnnfe_device_properties_destroy. Returns OK, INVALID_ARGUMENT (no such
 * device), CUDNN_UNAVAILABLE, NOT_SUPPORTED (the loaded cuDNN lacks device
 * properties), CUDA_ERROR. since 0.3 */
cudnnfe_status_t cudnnfe_device_properties_create(cudnnfe_device_properties_t **properties,
                                                  int32_t device);

/* Loads what cudnnfe_device_properties_serialize wrote (`size` bytes of
 * `data`, read during the call only; needs cuDNN, no GPU). Free with
 * cudnnfe_device_properties_destroy. Returns OK, BAD_SERIALIZED_DATA (not a
 * JSON object, or cuDNN refuses it: the message says why),
 * CUDNN_UNAVAILABLE, NOT_SUPPORTED as for create. since 0.3 */
cudnnfe_status_t cudnnfe_device_properties_create_from_json(
    cudnnfe_device_properties_t **properties, const char *data, size_t size);

/* cuDNN's JSON of the properties, which create_from_json takes back.
 * Size-query pattern as cudnnfe_graph_serialize. since 0.3 */
cudnnfe_status_t cudnnfe_device_properties_serialize(const cudnnfe_device_properties_t *properties,
                                                     char *buffer, size_t capacity, size_t *size);

/* Frees the properties (NULL is accepted). Graphs built with them are not
 * affected. since 0.3 */
cudnnfe_status_t cudnnfe_device_properties_destroy(cudnnfe_device_properties_t *properties);

#endif /* CUDNNFE_EXPERIMENTAL */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CUDNNFE_CUDNNFE_H */
