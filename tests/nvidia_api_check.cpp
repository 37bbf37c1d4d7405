// cudnnfe's declarations of the cuDNN backend and CUDA runtime APIs
// (src/backend/nvidia_api.h) checked against NVIDIA's own headers, built
// only where those are present (CI's pinned header wheels, a CUDA toolkit):
// every enum value, every function type, the handle types and the one
// struct. A wrong fact is a compile error naming it; the program only
// reports what was checked.
#include <cuda_runtime_api.h>
#include <cudnn_graph.h>

#include <cstddef>
#include <cstdio>
#include <type_traits>

#include "backend/nvidia_api_lists.h"

// Enum values: NVIDIA's enumerator of that name has the same value.
#define CHECK_ENUMERATOR(name, value)                                       \
  static_assert(static_cast<long long>(name) == (value), #name " differs"); \
  ++checked;
#define CHECK_ENUM(tag, type, list) list(CHECK_ENUMERATOR)
#define CHECK_CONSTANT(name, value)                   \
  static_assert((name) == (value), #name " differs"); \
  ++checked;

// Function types: redeclaring NVIDIA's extern "C" function with another
// type is an error ("conflicting declaration of C function").
extern "C" {
#define REDECLARE_FUNCTION(ret, name, params) ret name params;
CUDNNFE_NVIDIA_FUNCTIONS(REDECLARE_FUNCTION)
}

// The handle types and cudnnFraction_t, as backend/nvidia_api.h has them.
static_assert(std::is_same_v<cudnnHandle_t, struct cudnnContext *>);
static_assert(std::is_same_v<cudnnBackendDescriptor_t, void *>);
static_assert(std::is_same_v<cudaStream_t, struct CUstream_st *>);
static_assert(std::is_same_v<cudaEvent_t, struct CUevent_st *>);
static_assert(std::is_same_v<cudaGraph_t, struct CUgraph_st *>);
static_assert(std::is_same_v<cudaGraphExec_t, struct CUgraphExec_st *>);
static_assert(sizeof(cudnnFraction_t) == 16 && offsetof(cudnnFraction_t, numerator) == 0 &&
              offsetof(cudnnFraction_t, denominator) == 8);
static_assert(offsetof(cudaDeviceProp, name) == 0 && sizeof(cudaDeviceProp::name) == 256);

int main() {
  int checked = 0;
  CUDNNFE_NVIDIA_ENUMS(CHECK_ENUM)
  CUDNNFE_NVIDIA_CONSTANTS(CHECK_CONSTANT)
  int functions = 0;
#define COUNT_FUNCTION(ret, name, params) ++functions;
  CUDNNFE_NVIDIA_FUNCTIONS(COUNT_FUNCTION)
  std::printf(
      "cudnnfe's declarations match NVIDIA's headers (cuDNN %d): %d values, %d "
      "functions\n",
      CUDNN_VERSION, checked, functions);
  std::printf("1 passed, 0 failed, 0 skipped\n");
  return 0;
}
