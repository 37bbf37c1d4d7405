// cuDNN backend names newer than the oldest cuDNN headers cudnnfe builds
// with (9.14, the system cuDNN of the GPU machines), by number: the values
// are cuDNN's ABI and never change. A loaded cuDNN that does not know one
// refuses it (NOT_SUPPORTED / BAD_PARAM), which the lowering turns into a
// refusal naming the feature; nothing here is a version table.
#pragma once

#include "backend/nvidia_api.h"

namespace cudnnfe::backend::newer {

constexpr auto attribute(int value) {
  return static_cast<cudnnBackendAttributeName_t>(value);
}
constexpr auto descriptor(int value) {
  return static_cast<cudnnBackendDescriptorType_t>(value);
}

// SDPA_FWD (unified attention) attributes added in cuDNN 9.15.
constexpr auto kSdpaFwdPageTableK = attribute(2807);
constexpr auto kSdpaFwdPageTableV = attribute(2808);
constexpr auto kSdpaFwdSeqLenQ = attribute(2809);
constexpr auto kSdpaFwdSeqLenKv = attribute(2810);
// SDPA_FWD's softmax with unfused multiply-adds (cuDNN 9.22's header; cudnn-frontend
// asks for 9.21).
constexpr auto kSdpaFwdUnfuseFma = attribute(2819);

// MoE grouped matmul (cuDNN 9.15) and its backward (cuDNN 9.22).
constexpr auto kMoeGroupedMatmulDescriptor = descriptor(42);
constexpr auto kMoeGroupedMatmulBwdDescriptor = descriptor(48);
constexpr auto kMoeMode = attribute(2900);
constexpr auto kMoeMathPrec = attribute(2901);
constexpr auto kMoeToken = attribute(2902);
constexpr auto kMoeWeight = attribute(2903);
constexpr auto kMoeFirstTokenOffset = attribute(2904);
constexpr auto kMoeOutput = attribute(2905);
constexpr auto kMoeTokenIndex = attribute(2906);
constexpr auto kMoeTokenKs = attribute(2907);
constexpr auto kMoeTopK = attribute(2908);
constexpr auto kMoeBwdMathPrec = attribute(2951);
constexpr auto kMoeBwdToken = attribute(2952);
constexpr auto kMoeBwdDweight = attribute(2953);
constexpr auto kMoeBwdFirstTokenOffset = attribute(2954);
constexpr auto kMoeBwdDoutput = attribute(2955);
// CUDNN_TYPE_MOE_GROUPED_MATMUL_MODE and its values (NONE 0, GATHER 1, SCATTER 2).
constexpr auto kTypeMoeGroupedMatmulMode = static_cast<cudnnBackendAttributeType_t>(30);
enum MoeGroupedMatmulMode : int32_t { kMoeNone = 0, kMoeGather = 1, kMoeScatter = 2 };

}  // namespace cudnnfe::backend::newer
