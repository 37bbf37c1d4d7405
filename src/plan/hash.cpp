#include "plan/hash.h"

namespace cudnnfe::plan {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t mix_hash(const unsigned char *p, size_t size) {
  uint64_t h = 0x6a09e667f3bcc909ull;
  for (size_t i = 0; i < size; ++i) {
    h = (h + p[i] + 1) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  }
  return splitmix64(h ^ size);
}

}  // namespace

uint64_t fnv1a64(const void *data, size_t size) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex64(uint64_t value) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[i] = kDigits[value & 15];
    value >>= 4;
  }
  return out;
}

std::string hash128_hex(const std::string &text) {
  return hex64(fnv1a64(text.data(), text.size())) +
         hex64(mix_hash(reinterpret_cast<const unsigned char *>(text.data()), text.size()));
}

}  // namespace cudnnfe::plan
