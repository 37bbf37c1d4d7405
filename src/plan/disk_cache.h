// Files of the persistent plan cache: one plan blob per key, written to a
// temporary file in the same directory and renamed into place, so that
// readers in other processes see either no file or a whole one.
#pragma once

#include <cstddef>
#include <string>

namespace cudnnfe::plan {

// "<dir>/<key>.cudnnfe-plan".
std::string cache_file_path(const std::string &dir, const std::string &key);

// Reads a whole file of at most `max_bytes`; false if it is missing,
// unreadable or larger (never allocates more than `max_bytes`).
bool read_file(const std::string &path, size_t max_bytes, std::string *out);

// Creates `dir` and its parents as needed; writes `data` to a unique
// temporary file there and renames it to `path`. Returns "" on success,
// else why it failed (the temporary file is removed).
std::string write_file_atomically(const std::string &dir, const std::string &path,
                                  const std::string &data);

}  // namespace cudnnfe::plan
