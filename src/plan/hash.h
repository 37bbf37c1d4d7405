// Hashes for plan fingerprints, cache keys and the plan blob's checksum.
// Not cryptographic: they detect corruption and tell graphs apart, they do
// not resist an adversary (a hostile blob is caught by the loader's checks,
// not by its checksum).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace cudnnfe::plan {

// 64-bit FNV-1a (offset basis 14695981039346656037, prime 1099511628211):
// the plan blob's checksum, documented in docs/plans.md.
uint64_t fnv1a64(const void *data, size_t size);

// 16 lowercase hex digits.
std::string hex64(uint64_t value);

// 128 bits (FNV-1a and an independent multiply-xorshift hash) as 32
// lowercase hex digits: fingerprints and cache keys.
std::string hash128_hex(const std::string &text);

}  // namespace cudnnfe::plan
