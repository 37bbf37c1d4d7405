// The cuDNN backend API and CUDA runtime API as cudnnfe uses them: handle
// types, enums and function types. cudnnfe loads both libraries with dlopen,
// so it needs their ABI facts, not NVIDIA's headers: with this file the
// library builds with a C++ compiler and CMake alone. The enum values and
// prototypes are lists generated from NVIDIA's headers
// (backend/nvidia_api_lists.h, scripts/gen_nvidia_api.py); the handle types
// and the one struct are here. tests/nvidia_api_check.cpp checks all of it
// against NVIDIA's headers wherever they are present (CI's pinned wheels).
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/nvidia_api_lists.h"

// Opaque handles: what they point to never matters to cudnnfe.
typedef struct cudnnContext *cudnnHandle_t;
typedef void *cudnnBackendDescriptor_t;
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
typedef struct CUgraph_st *cudaGraph_t;
typedef struct CUgraphExec_st *cudaGraphExec_t;
// Read through a buffer of its own (backend/device.cpp): only its first
// member, `char name[256]`, is used.
struct cudaDeviceProp;

// cuDNN's CUDNN_TYPE_FRACTION attribute value.
typedef struct {
  int64_t numerator;
  int64_t denominator;
} cudnnFraction_t;

// C enums are int-sized; `: int` keeps these the same size in C++.
#define CUDNNFE_DECLARE_ENUMERATOR(name, value) name = value,
#define CUDNNFE_DECLARE_ENUM(tag, type, list)          \
  enum tag : int { list(CUDNNFE_DECLARE_ENUMERATOR) }; \
  typedef enum tag type;
CUDNNFE_NVIDIA_ENUMS(CUDNNFE_DECLARE_ENUM)
#undef CUDNNFE_DECLARE_ENUM
#undef CUDNNFE_DECLARE_ENUMERATOR

#define CUDNNFE_DECLARE_CONSTANT(name, value) constexpr unsigned name = value;
CUDNNFE_NVIDIA_CONSTANTS(CUDNNFE_DECLARE_CONSTANT)
#undef CUDNNFE_DECLARE_CONSTANT

// Declared only to name their types (decltype(&cudnnCreate) in
// backend/loader.h); never linked: the loader resolves them with dlsym.
extern "C" {
#define CUDNNFE_DECLARE_FUNCTION(ret, name, params) ret name params;
CUDNNFE_NVIDIA_FUNCTIONS(CUDNNFE_DECLARE_FUNCTION)
#undef CUDNNFE_DECLARE_FUNCTION
}
