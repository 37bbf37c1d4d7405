// The frontend's part of a GPU plan's workspace (backend/frontend_workspace.h).
#include "backend/frontend_workspace.h"

#include "core/error.h"

namespace cudnnfe::backend {
namespace {

constexpr int64_t kAlign = 256;

int64_t align_up(int64_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

}  // namespace

FrontendWorkspace FrontendWorkspace::of(const Lowering &lowering) {
  FrontendWorkspace w;
  w.tensors = lowering.workspace_tensors();
  w.bytes = lowering.frontend_workspace_bytes();
  return w;
}

int64_t FrontendWorkspace::backend_offset() const {
  return empty() ? 0 : align_up(bytes);
}

void *FrontendWorkspace::bind(void *const *data, size_t graph_bound, void *workspace,
                              void **pointers) const {
  for (size_t i = 0; i < graph_bound; ++i) pointers[i] = data[i];
  char *base = static_cast<char *>(workspace);
  for (size_t i = 0; i < tensors.size(); ++i) pointers[graph_bound + i] = base + tensors[i].offset;
  return empty() ? workspace : base + backend_offset();
}

}  // namespace cudnnfe::backend
