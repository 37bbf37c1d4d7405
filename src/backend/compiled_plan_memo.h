// Runtime-compiled plans remembered in the process by cuDNN's own
// serialization of them (CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION), so
// that building the same engine configuration of the same graph again
// restores the plan instead of compiling its kernel again. The case it is
// for: cudnn-frontend's five steps, where check_support() builds the
// heuristics' choice and build_plans(ALL) then builds every configuration,
// that one included (issue 27: the SDPA compile is 35 to 540 ms). The key
// is the graph's canonical description, the GPU and the cuDNN version and
// the engine configuration; a few dozen plans are kept, oldest dropped.
#pragma once

#include <optional>
#include <string>

namespace cudnnfe::backend {

// The serialized plan remembered under `key`, if any.
std::optional<std::string> remembered_compiled_plan(const std::string &key);

// Remembers `plan_json` under `key` (an empty text is not remembered).
void remember_compiled_plan(const std::string &key, std::string plan_json);

// Forgets every plan (cudnnfe_plan_cache_clear).
void forget_compiled_plans();

}  // namespace cudnnfe::backend
