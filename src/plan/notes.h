// Engine notes (cuDNN's numerical and behaviour notes) as cudnnfe's bit
// flags, with names for messages and the plan blob.
#pragma once

#include <cstdint>
#include <string>

#include "core/c_api.h"

namespace cudnnfe::plan {

enum class NoteKind { kNumerical, kBehavior };

// "TENSOR_CORE" for CUDNNFE_NUMERICAL_NOTE_TENSOR_CORE; nullptr if `bit` is
// not exactly one known bit.
const char *note_name(NoteKind kind, uint32_t bit);
// The bit for a name; 0 if unknown.
uint32_t note_from_name(NoteKind kind, const std::string &name);
// Every known bit of `kind`.
uint32_t known_notes(NoteKind kind);
// "TENSOR_CORE, NONDETERMINISTIC"; "none" for 0.
std::string notes_string(NoteKind kind, uint32_t bits);

// "9.19.0" for 91900.
std::string cudnn_version_string(int64_t version);

}  // namespace cudnnfe::plan
