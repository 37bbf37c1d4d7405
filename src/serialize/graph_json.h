// The graph description as versioned JSON (docs/graph-json.md).
#pragma once

#include <string>

#include "graph/graph.h"

namespace cudnnfe {

constexpr int kGraphJsonVersion = 1;

std::string serialize_graph(const Graph &graph);

// Fills an empty graph from JSON; throws BAD_SERIALIZED_DATA saying what is
// wrong and where. Never trusts sizes or nesting from the input.
void deserialize_graph(const char *data, size_t size, Graph &graph);

}  // namespace cudnnfe
