// Finalizing execution plans from engine configurations: one at a time, or
// several at once on threads (build policy ALL), as cudnn-frontend's
// multithreaded builds do: cuDNN finalizes distinct plans of one operation
// graph and handle concurrently, and a runtime-compiled engine spends its
// finalize compiling, so N plans take about the time of the slowest.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "backend/descriptor.h"

namespace cudnnfe::backend {

struct PlanToFinalize {
  cudnnBackendDescriptor_t config = nullptr;  // a finalized engine configuration
  // Results: the finalized plan when status is CUDNN_STATUS_SUCCESS; else
  // cuDNN's error text (read on the thread that failed).
  Descriptor plan;
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  std::string error;
  double ms = 0;  // time of this finalize
};

// Finalizes `p`'s plan (with the kernel cache when not null). Never throws:
// a failure is in p.status and p.error.
void finalize_plan(PlanToFinalize &p, cudnnBackendDescriptor_t kernel_cache);

// finalize_plan for each, on up to plan_finalize_threads() threads.
void finalize_plans(std::vector<PlanToFinalize> &plans, cudnnBackendDescriptor_t kernel_cache);

// CUDNNFE_BUILD_THREADS when set (1: one at a time), else the hardware's
// threads, at most 8.
size_t plan_finalize_threads();

}  // namespace cudnnfe::backend
