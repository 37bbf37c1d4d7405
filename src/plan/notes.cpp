#include "plan/notes.h"

#include "core/error.h"

namespace cudnnfe::plan {
namespace {

struct NoteName {
  uint32_t bit;
  const char *name;
};

constexpr NoteName kNumerical[] = {
    {CUDNNFE_NUMERICAL_NOTE_TENSOR_CORE, "TENSOR_CORE"},
    {CUDNNFE_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS, "DOWN_CONVERT_INPUTS"},
    {CUDNNFE_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION, "REDUCED_PRECISION_REDUCTION"},
    {CUDNNFE_NUMERICAL_NOTE_FFT, "FFT"},
    {CUDNNFE_NUMERICAL_NOTE_NONDETERMINISTIC, "NONDETERMINISTIC"},
    {CUDNNFE_NUMERICAL_NOTE_WINOGRAD, "WINOGRAD"},
    {CUDNNFE_NUMERICAL_NOTE_STRICT_NAN_PROP, "STRICT_NAN_PROP"},
};

constexpr NoteName kBehavior[] = {
    {CUDNNFE_BEHAVIOR_NOTE_RUNTIME_COMPILATION, "RUNTIME_COMPILATION"},
    {CUDNNFE_BEHAVIOR_NOTE_REQUIRES_FILTER_INT8X32_REORDER, "REQUIRES_FILTER_INT8X32_REORDER"},
    {CUDNNFE_BEHAVIOR_NOTE_REQUIRES_BIAS_INT8X32_REORDER, "REQUIRES_BIAS_INT8X32_REORDER"},
    {CUDNNFE_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API, "SUPPORTS_CUDA_GRAPH_NATIVE_API"},
    {CUDNNFE_BEHAVIOR_NOTE_CUBLASLT_DEPENDENCY, "CUBLASLT_DEPENDENCY"},
};

template <size_t N>
const char *find_name(const NoteName (&table)[N], uint32_t bit) {
  for (const NoteName &n : table)
    if (n.bit == bit) return n.name;
  return nullptr;
}

template <size_t N>
uint32_t find_bit(const NoteName (&table)[N], const std::string &name) {
  for (const NoteName &n : table)
    if (name == n.name) return n.bit;
  return 0;
}

}  // namespace

const char *note_name(NoteKind kind, uint32_t bit) {
  return kind == NoteKind::kNumerical ? find_name(kNumerical, bit) : find_name(kBehavior, bit);
}

uint32_t note_from_name(NoteKind kind, const std::string &name) {
  return kind == NoteKind::kNumerical ? find_bit(kNumerical, name) : find_bit(kBehavior, name);
}

uint32_t known_notes(NoteKind kind) {
  return kind == NoteKind::kNumerical ? CUDNNFE_NUMERICAL_NOTE_ALL : CUDNNFE_BEHAVIOR_NOTE_ALL;
}

std::string notes_string(NoteKind kind, uint32_t bits) {
  std::string out;
  for (uint32_t bit = 1; bit != 0; bit <<= 1) {
    if (!(bits & bit)) continue;
    const char *name = note_name(kind, bit);
    out += cat(out.empty() ? "" : ", ", name ? name : cat("bit ", bit).c_str());
  }
  return out.empty() ? "none" : out;
}

std::string cudnn_version_string(int64_t version) {
  if (version <= 0) return "unknown";
  return cat(version / 10000, ".", (version % 10000) / 100, ".", version % 100);
}

}  // namespace cudnnfe::plan
