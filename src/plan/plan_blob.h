// The serialized built plan ("plan blob", docs/plans.md): a header line
//   CUDNNFE-PLAN <format version> <payload bytes> <FNV-1a 64 of payload>\n
// then a JSON payload with the graph description, the build options, the
// selected plan's engine configuration, the cuDNN version and GPU it was
// made for, and the autotune record. Decoding is pure C++ (no cuDNN), bounds
// every count and size before use, and throws BAD_SERIALIZED_DATA saying
// what is wrong and where.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "plan/plan.h"

namespace cudnnfe::plan {

constexpr const char *kBlobMagic = "CUDNNFE-PLAN";
constexpr int kBlobVersion = 1;
constexpr const char *kBlobFormat = "cudnnfe.plan";
// Largest payload accepted (the graph JSON parser's own limit).
constexpr size_t kMaxBlobPayload = 64u << 20;

struct KnobChoice {
  int64_t type = 0;  // cudnnBackendKnobType_t of the cuDNN that made it
  int64_t value = 0;
};

// An engine configuration: what a plan is built from without heuristics.
struct EngineConfig {
  int64_t engine_id = -1;
  std::vector<KnobChoice> knobs;
};

// "eng9_k2=3_k13=1".
std::string engine_config_name(const EngineConfig &config);

struct AutotuneTiming {
  std::string plan;
  double time_ms = -1;
};

struct PlanRecord {
  // GPU or CPU_REFERENCE: what the plan runs on.
  cudnnfe_target_t target = CUDNNFE_TARGET_GPU;
  int64_t library_version = 0;
  // GPU only: what it was made with and for.
  int64_t cudnn_version = 0;
  int sm = 0;
  std::string device_name;
  std::string fingerprint;  // of the graph, 32 hex digits
  std::string cache_key;    // persistent cache key, 32 hex digits or ""
  // Options of the build (cache settings are not stored); `target` is the
  // target asked for (AUTO or GPU), used when the plan is rebuilt.
  BuildOptions options;
  // GPU only: the selected plan.
  EngineConfig config;
  std::string plan_name;
  int64_t workspace_size = 0;
  uint32_t numerical_notes = 0;
  uint32_t behavior_notes = 0;
  // cuDNN's own serialization of the selected plan (CUDNN_ATTR_EXECUTION_
  // PLAN_JSON_REPRESENTATION), "" where it offers none. Loading it skips
  // kernel compilation; only valid for the same cuDNN version and GPU.
  std::string execution_plan_json;
  // Autotune: whether it chose this plan, its time, and every plan's time.
  bool chosen_by_autotune = false;
  double time_ms = -1;
  std::vector<AutotuneTiming> timings;
  // The graph description (docs/graph-json.md), a JSON document.
  std::string graph_json;
};

std::string encode_plan_blob(const PlanRecord &record);

// Throws BAD_SERIALIZED_DATA ("plan blob: ...") for anything malformed,
// truncated, corrupted or out of bounds. The graph JSON is checked only as
// JSON here; loading it into a graph is the caller's.
PlanRecord decode_plan_blob(const char *data, size_t size);

// "AUTO", "GPU", "CPU_REFERENCE"; "HEURISTICS_CHOICE", "ALL".
const char *target_name(cudnnfe_target_t target);
const char *policy_name(cudnnfe_build_policy_t policy);
const char *heur_mode_name(cudnnfe_heur_mode_t mode);

}  // namespace cudnnfe::plan
