#include "backend/gpu_plan.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "backend/device.h"
#include "backend/loader.h"
#include "core/error.h"
#include "exec/handle.h"

namespace cudnnfe::backend {
namespace {

// The last variant packs this thread executed with: reused while the same
// plan set runs on the same buffers (the common case of a loop over one
// graph, or a few graphs in turn), so that execute builds no descriptor.
// Per thread, so no lock; a handle belongs to one thread at a time, and a
// pack is not tied to a handle. Keyed by the plan set's serial (unique in
// the process), the pointer table and the workspace: any change of pointer
// makes a new pack.
struct PackCacheEntry {
  uint64_t serial = 0;
  size_t count = 0;
  void *workspace = nullptr;
  void *data[kMaxBoundTensors] = {};
  Descriptor pack;
};
constexpr size_t kPackCacheEntries = 4;
struct PackCache {
  PackCacheEntry entries[kPackCacheEntries];
  size_t next = 0;  // the entry to replace next (round robin)
};
thread_local PackCache t_pack;

// The variant pack's attributes before finalize: UIDs, pointers, workspace.
void fill_pack(Descriptor &pack, const PlanSet &set, void *const *data, void *workspace) {
  void *pointers[kMaxBoundTensors + kMaxScalars];
  const size_t bound = set.slots.size();
  for (size_t i = 0; i < bound; ++i) pointers[i] = data[set.slots[i]];
  for (size_t i = 0; i < set.scalars.size(); ++i)
    pointers[bound + i] = const_cast<unsigned char *>(set.scalars[i].bytes);
  const int64_t count = static_cast<int64_t>(set.uids.size());
  pack.set_int64s(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, set.uids.data(), count);
  pack.set_pointers(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, pointers, count);
  pack.set_pointers(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, &workspace, 1);
}

// The variant pack's override attributes by number, so that headers older
// than cuDNN 9.18's compile: CUDNN_ATTR_VARIANT_PACK_OVERRIDE_UNIQUE_IDS,
// _SHAPES and _STRIDES.
constexpr auto kOverrideUids = static_cast<cudnnBackendAttributeName_t>(1010);
constexpr auto kOverrideShapes = static_cast<cudnnBackendAttributeName_t>(1011);
constexpr auto kOverrideStrides = static_cast<cudnnBackendAttributeName_t>(1012);

// The overrides as cuDNN takes them: UIDs as INT64s, and shapes and strides
// each as one VOID_PTR element whose bytes are the start of a
// std::vector<std::vector<int64_t>> (cudnn-frontend passes the vector's
// address as the element array: backend/execution_helpers.h). We hand over
// exactly the same bytes.
struct OverrideLists {
  std::vector<int64_t> uids;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::vector<int64_t>> strides;
};

OverrideLists override_lists(const PlanSet &set, const std::vector<ShapeOverride> &overrides) {
  if (!set.frontend.empty() || !set.views.empty())
    fail(CUDNNFE_STATUS_NOT_SUPPORTED,
         "execute-time shapes: this plan has frontend workspace tensors or slice views, whose "
         "layout is fixed at build");
  OverrideLists lists;
  for (const ShapeOverride &o : overrides) {
    if (std::find(set.uids.begin(), set.uids.end(), o.uid) == set.uids.end())
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, "execute-time shapes: UID ", o.uid,
           " has no tensor in the cuDNN plan (it is read only through a view)");
    lists.uids.push_back(o.uid);
    lists.shapes.push_back(o.dims);
    lists.strides.push_back(o.strides);
  }
  return lists;
}

Descriptor make_override_pack(const PlanSet &set, void *const *data, void *workspace,
                              OverrideLists &lists) {
  Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  fill_pack(pack, set, data, workspace);
  try {
    pack.set_int64s(kOverrideUids, lists.uids);
    pack.set_pointers(kOverrideShapes, reinterpret_cast<void *const *>(&lists.shapes), 1);
    pack.set_pointers(kOverrideStrides, reinterpret_cast<void *const *>(&lists.strides), 1);
  } catch (const Error &e) {
    fail(CUDNNFE_STATUS_NOT_SUPPORTED,
         "execute-time shapes need a cuDNN whose variant pack "
         "accepts CUDNN_ATTR_VARIANT_PACK_OVERRIDE_* (its header documents them since cuDNN "
         "9.18.0); cuDNN ",
         cudnn().GetVersion(), " refused them: ", e.message());
  }
  pack.finalize();
  return pack;
}

bool same_key(const PackCacheEntry &e, const PlanSet &set, void *const *data, void *workspace) {
  const size_t n = set.bound_count;
  return e.pack.get() && e.serial == set.serial && e.count == n && e.workspace == workspace &&
         std::memcmp(e.data, data, n * sizeof(void *)) == 0;
}

cudnnBackendDescriptor_t cached_pack(const PlanSet &set, void *const *data, void *workspace) {
  PackCache &c = t_pack;
  for (const PackCacheEntry &e : c.entries)
    if (same_key(e, set, data, workspace)) return e.pack.get();
  PackCacheEntry &e = c.entries[c.next];
  Descriptor pack = make_variant_pack(set, data, workspace);
  c.next = (c.next + 1) % kPackCacheEntries;
  e.pack = std::move(pack);
  e.serial = set.serial;
  e.count = set.bound_count;
  e.workspace = workspace;
  std::memcpy(e.data, data, set.bound_count * sizeof(void *));
  return e.pack.get();
}

// cuDNN 9.5's signatures, spelled out so that older headers compile.
using PopulateFn = PopulateCudaGraphFn;
using UpdateFn = PopulateCudaGraphFn;

struct CudaGraphApi {
  PopulateFn populate = nullptr;
  UpdateFn update = nullptr;
};

// The CUDA graph entry points of the loaded cuDNN (9.5 and later).
const CudaGraphApi &cuda_graph_api() {
  static CudaGraphApi api;
  static std::once_flag once;
  std::call_once(once, [] {
    void *lib = dlopen(cudnn().path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!lib) return;
    api.populate = reinterpret_cast<PopulateFn>(dlsym(lib, "cudnnBackendPopulateCudaGraph"));
    api.update = reinterpret_cast<UpdateFn>(dlsym(lib, "cudnnBackendUpdateCudaGraph"));
  });
  return api;
}

}  // namespace

Descriptor make_variant_pack(const PlanSet &set, void *const *table, void *workspace) {
  Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  fill_pack(pack, set, table, workspace);
  pack.finalize();
  return pack;
}

bool native_cuda_graph_available() {
  return cuda_graph_api().populate != nullptr;
}

uint64_t next_plan_set_serial() {
  static std::atomic<uint64_t> serial{0};
  return ++serial;
}

void *PlanSet::bind(void *const *data, void *workspace, void **table) const {
  void *backend_workspace = workspace;
  if (frontend.empty()) {
    for (size_t i = 0; i < graph_bound; ++i) table[i] = data[i];
  } else {
    backend_workspace = frontend.bind(data, graph_bound, workspace, table);
  }
  // Slice views: their root's pointer plus the offset, every execute; then
  // the plan's constant tensors.
  const size_t base = graph_bound + frontend.tensors.size();
  for (size_t i = 0; i < views.size(); ++i)
    table[base + i] = static_cast<char *>(data[views[i].parent]) + views[i].byte_offset;
  if (constants) {
    const size_t first = base + views.size();
    for (size_t i = 0; i < constants->size(); ++i) table[first + i] = constants->pointer(i);
  }
  return backend_workspace;
}

void PlanSet::seal() {
  bound_count =
      graph_bound + frontend.tensors.size() + views.size() + (constants ? constants->size() : 0);
  if (slots.size() != uids.size())
    fail(CUDNNFE_STATUS_INTERNAL, "the plan's variant pack slots and UIDs disagree");
  if (bound_count > kMaxBoundTensors || scalars.size() > kMaxScalars)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "the plan has ", bound_count, " bound tensors and ",
         scalars.size(), " scalars; at most ", kMaxBoundTensors, " and ", kMaxScalars,
         " are supported");
  for (const ScalarValue &s : scalars) uids.push_back(s.uid);
  serial = next_plan_set_serial();
}

GpuPlan::GpuPlan(std::shared_ptr<const PlanSet> set, size_t selected)
    : set_(std::move(set)), selected_(selected) {
  if (!set_ || set_->candidates.empty() || selected >= set_->candidates.size())
    fail(CUDNNFE_STATUS_INTERNAL, "a GPU plan needs a built candidate");
  times.assign(set_->candidates.size(), -1.0);
}

PlanEntry GpuPlan::entry(size_t index) const {
  const Candidate &c = set_->candidates.at(index);
  PlanEntry e;
  e.name = &c.name;
  e.engine_id = c.config.engine_id;
  e.workspace_size = c.workspace_size;
  e.numerical_notes = c.numerical_notes;
  e.behavior_notes = c.behavior_notes;
  e.autotune_time_ms = index < times.size() ? times[index] : -1.0;
  e.chosen_by_autotune = chosen_by_autotune == static_cast<int>(index);
  return e;
}

void GpuPlan::require_runnable() const {
  if (set_->properties)
    fail(CUDNNFE_STATUS_WRONG_STATE, "the graph was built from device properties (",
         set_->device_name.empty() ? std::string("an unnamed GPU") : set_->device_name,
         ") without a GPU and cannot run here; write it with cudnnfe_graph_serialize_plan and "
         "load it with cudnnfe_graph_deserialize_plan on such a GPU to run it");
}

cudnnHandle_t prepare_handle(Handle &handle, int device, void *stream, bool set_stream) {
  if (!handle.cudnn) {
    if (handle.device < 0) handle.device = device;
    init_handle(handle);
  }
  if (handle.device != device)
    fail(CUDNNFE_STATUS_INVALID_ARGUMENT, "the plan was built for CUDA device ", device,
         " but the handle runs on device ", handle.device, "; use a handle of device ", device);
  ensure_device(device);
  cudnnHandle_t cudnn_handle = static_cast<cudnnHandle_t>(handle.cudnn);
  if (set_stream && (!handle.stream_set || handle.stream != stream)) {
    cudnnStatus_t status = cudnn().SetStream(cudnn_handle, static_cast<cudaStream_t>(stream));
    if (status != CUDNN_STATUS_SUCCESS)
      fail(CUDNNFE_STATUS_CUDNN_ERROR, "cudnnSetStream failed: ", status_text(status), ": ",
           last_error());
    handle.stream = stream;
    handle.stream_set = true;
  }
  return cudnn_handle;
}

cudnnHandle_t GpuPlan::prepare(Handle &handle, void *stream, bool set_stream) const {
  require_runnable();
  return prepare_handle(handle, set_->device, stream, set_stream);
}

// The hot path: no allocation of ours (the pointer table is on the stack and
// the variant pack is reused while the buffers stay the same) except
// creating the cuDNN handle on a handle's first use.
void GpuPlan::run(size_t index, Handle &handle, void *const *data, void *workspace, void *stream,
                  bool replay) const {
  cudnnHandle_t cudnn_handle = prepare(handle, stream, true);
  const Candidate &c = set_->candidates[index];
  void *table[kMaxBoundTensors];
  void *backend_workspace = set_->bind(data, workspace, table);
  cudnnBackendDescriptor_t pack = cached_pack(*set_, table, backend_workspace);
  const bool native =
      (c.behavior_notes & CUDNNFE_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API) != 0;
  if (replay &&
      replay_.run(*set_, index, cudnn_handle, native ? cuda_graph_api().populate : nullptr,
                  c.plan.get(), pack, table, backend_workspace, stream))
    return;
  cudnnStatus_t status = cudnn().BackendExecute(cudnn_handle, c.plan.get(), pack);
  if (status != CUDNN_STATUS_SUCCESS) {
    std::string reason = last_error();
    fail(CUDNNFE_STATUS_CUDNN_ERROR, "cudnnBackendExecute of plan ", c.name,
         " failed: ", status_text(status), reason.empty() ? "" : cat(": ", reason));
  }
}

void GpuPlan::execute_overridden(Handle &handle, void *const *data,
                                 const std::vector<ShapeOverride> &overrides, void *workspace,
                                 void *stream) const {
  OverrideLists lists = override_lists(*set_, overrides);
  cudnnHandle_t cudnn_handle = prepare(handle, stream, true);
  const Candidate &c = current();
  void *table[kMaxBoundTensors];
  void *backend_workspace = set_->bind(data, workspace, table);
  Descriptor pack = make_override_pack(*set_, table, backend_workspace, lists);
  cudnnStatus_t status = cudnn().BackendExecute(cudnn_handle, c.plan.get(), pack.get());
  if (status != CUDNN_STATUS_SUCCESS) {
    std::string reason = last_error();
    fail(status == CUDNN_STATUS_NOT_SUPPORTED ? CUDNNFE_STATUS_NOT_SUPPORTED
                                              : CUDNNFE_STATUS_CUDNN_ERROR,
         "cudnnBackendExecute of plan ", c.name,
         " with execute-time shapes failed: ", status_text(status),
         reason.empty() ? "" : cat(": ", reason));
  }
}

void GpuPlan::cuda_graph(bool update, Handle &handle, void *const *data, void *workspace,
                         void *graph) const {
  const Candidate &c = current();
  const char *verb = update ? "cudnnBackendUpdateCudaGraph" : "cudnnBackendPopulateCudaGraph";
  if (!(c.behavior_notes & CUDNNFE_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API))
    fail(
        CUDNNFE_STATUS_NOT_SUPPORTED, "plan ", c.name,
        " does not support cuDNN's native CUDA graph API (no SUPPORTS_CUDA_GRAPH_NATIVE_API "
        "note); capture cudnnfe_graph_execute in stream capture instead (docs/plans.md), or "
        "build with require_behavior_notes = CUDNNFE_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API");
  const CudaGraphApi &api = cuda_graph_api();
  if (!(update ? reinterpret_cast<void *>(api.update) : reinterpret_cast<void *>(api.populate)))
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "the loaded cuDNN (", cudnn().path, ", version ",
         cudnn().GetVersion(), ") lacks ", verb, " (cuDNN 9.5 or later has it)");
  cudnnHandle_t cudnn_handle = prepare(handle, nullptr, false);
  void *table[kMaxBoundTensors];
  void *backend_workspace = set_->bind(data, workspace, table);
  Descriptor pack = make_variant_pack(*set_, table, backend_workspace);
  cudaGraph_t cuda_graph = static_cast<cudaGraph_t>(graph);
  cudnnStatus_t status = update ? api.update(cudnn_handle, c.plan.get(), pack.get(), cuda_graph)
                                : api.populate(cudnn_handle, c.plan.get(), pack.get(), cuda_graph);
  if (status != CUDNN_STATUS_SUCCESS) {
    std::string reason = last_error();
    fail(status == CUDNN_STATUS_NOT_SUPPORTED ? CUDNNFE_STATUS_NOT_SUPPORTED
                                              : CUDNNFE_STATUS_CUDNN_ERROR,
         verb, " of plan ", c.name, " failed: ", status_text(status),
         reason.empty() ? "" : cat(": ", reason));
  }
}

void *GpuPlan::raw_handle(Handle &handle) {
  init_handle(handle);
  return handle.cudnn;
}

}  // namespace cudnnfe::backend
