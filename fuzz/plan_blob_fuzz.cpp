// libFuzzer target: arbitrary bytes into cudnnfe_graph_deserialize_plan.
// Anything other than OK, BAD_SERIALIZED_DATA or NOT_SUPPORTED (a loaded
// CPU plan the reference cannot run), a crash, a sanitizer report or an
// unbounded allocation is a bug. A plan that loads must serialize again
// and reload to the same bytes.
//
// The first byte picks the mode: even, the bytes go in as they are (the
// header and checksum checks); odd, the rest is wrapped in a correct header
// so that the fuzzer reaches the payload decoder and the graph loader.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cudnnfe/cudnnfe.h"

namespace {

uint64_t fnv1a64(const std::string &s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string wrap(const std::string &payload) {
  char header[96];
  std::snprintf(header, sizeof(header), "CUDNNFE-PLAN 1 %zu %016llx\n", payload.size(),
                static_cast<unsigned long long>(fnv1a64(payload)));
  return header + payload;
}

cudnnfe_status_t load(const std::string &bytes, cudnnfe_graph_t **out) {
  cudnnfe_graph_t *graph;
  if (cudnnfe_graph_create(&graph) != CUDNNFE_STATUS_OK) std::abort();
  cudnnfe_status_t status =
      cudnnfe_graph_deserialize_plan(graph, nullptr, bytes.data(), bytes.size(), nullptr);
  *out = graph;
  return status;
}

std::string serialize(cudnnfe_graph_t *graph) {
  size_t n = 0;
  if (cudnnfe_graph_serialize_plan(graph, nullptr, 0, &n) != CUDNNFE_STATUS_OK) std::abort();
  std::string blob(n, '\0');
  if (cudnnfe_graph_serialize_plan(graph, blob.data(), n, &n) != CUDNNFE_STATUS_OK) std::abort();
  return blob;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char *>(data) + 1, size - 1);
  if (data[0] & 1) bytes = wrap(bytes);
  cudnnfe_graph_t *graph;
  const cudnnfe_status_t status = load(bytes, &graph);
  if (status != CUDNNFE_STATUS_OK && status != CUDNNFE_STATUS_BAD_SERIALIZED_DATA &&
      status != CUDNNFE_STATUS_NOT_SUPPORTED)
    std::abort();
  if (status == CUDNNFE_STATUS_OK) {
    const std::string first = serialize(graph);
    cudnnfe_graph_t *again;
    if (load(first, &again) != CUDNNFE_STATUS_OK) std::abort();
    if (serialize(again) != first) std::abort();
    cudnnfe_graph_destroy(again);
  }
  cudnnfe_graph_destroy(graph);
  return 0;
}
