// libFuzzer target: arbitrary bytes into cudnnfe_graph_deserialize. Anything
// other than OK or BAD_SERIALIZED_DATA, a crash, a sanitizer report or an
// unbounded allocation is a bug. A document that loads must serialize again
// and reload to the same bytes.
#include <cstdlib>
#include <string>

#include "cudnnfe/cudnnfe.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cudnnfe_graph_t *graph;
  if (cudnnfe_graph_create(&graph) != CUDNNFE_STATUS_OK) std::abort();
  cudnnfe_status_t status =
      cudnnfe_graph_deserialize(graph, reinterpret_cast<const char *>(data), size);
  if (status != CUDNNFE_STATUS_OK && status != CUDNNFE_STATUS_BAD_SERIALIZED_DATA) std::abort();
  if (status == CUDNNFE_STATUS_OK) {
    size_t n = 0;
    if (cudnnfe_graph_serialize(graph, nullptr, 0, &n) != CUDNNFE_STATUS_OK) std::abort();
    std::string first(n, '\0');
    cudnnfe_graph_serialize(graph, first.data(), n, &n);
    cudnnfe_graph_t *again;
    cudnnfe_graph_create(&again);
    if (cudnnfe_graph_deserialize(again, first.data(), first.size()) != CUDNNFE_STATUS_OK)
      std::abort();
    std::string second(n, '\0');
    size_t m = 0;
    cudnnfe_graph_serialize(again, nullptr, 0, &m);
    second.resize(m);
    cudnnfe_graph_serialize(again, second.data(), m, &m);
    if (first != second) std::abort();
    cudnnfe_graph_validate(again);  // any status is fine; it must not crash
    cudnnfe_graph_destroy(again);
  }
  cudnnfe_graph_destroy(graph);
  return 0;
}
