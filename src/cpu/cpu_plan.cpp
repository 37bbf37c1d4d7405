// The CPU reference plan: a copy of the graph's nodes and tensor layouts
// taken at build (so the plan never looks at the graph again), run node by
// node at execute. Virtual tensors and scalars live in an arena allocated
// per execute call, which keeps the plan free of mutable state so that any
// number of threads may execute it at once.
#include "cpu/cpu_plan.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/checked.h"
#include "core/dtype.h"
#include "core/error.h"
#include "cpu/reference_table.h"
#include "cpu/score_mod_eval.h"
#include "cpu/strided_tensor.h"
#include "graph/score_mod.h"
#include "ops/ops.h"

namespace cudnnfe {
namespace {

// Where a tensor's elements live at execute.
struct Slot {
  cpu::StridedTensor layout;  // data is filled in per execute
  int bound_index = -1;       // >= 0: the caller's data[bound_index]
  int view_parent = -1;       // >= 0: a view, at view_bytes into this slot's data
  size_t view_bytes = 0;
  size_t arena_offset = 0;  // otherwise: this offset in the arena
  bool is_scalar = false;
  double scalar_value = 0.0;
};

// One node with its tensors resolved to slots (-1: port unused).
struct Step {
  Node node;
  std::vector<int> inputs;
  std::vector<int> outputs;
  double attn_scale = 0.0;  // SDPA only
  // An attention node's score modifiers, compiled (cpu/score_mod_eval.h).
  std::shared_ptr<const cpu::ScoreModProgram> score_mod;
};

constexpr int64_t kArenaAlignment = 16;

class CpuPlan final : public Plan, public SampledReference {
 public:
  explicit CpuPlan(const Graph &graph) : bound_count_(graph.bound_uids().size()) {
    std::unordered_map<int64_t, int> slot_by_uid;
    for (const Node &node : graph.nodes()) {
      Step step;
      step.node = node;
      for (int64_t uid : node.inputs) step.inputs.push_back(slot_of(graph, node, uid, slot_by_uid));
      for (int64_t uid : node.outputs)
        step.outputs.push_back(slot_of(graph, node, uid, slot_by_uid));
      if (node.kind == OpKind::kSdpa || node.kind == OpKind::kSdpaBackward)
        step.attn_scale = effective_attn_scale(graph, node);
      if (!score_mods(node).empty())
        step.score_mod = std::make_shared<cpu::ScoreModProgram>(graph, node);
      check_supported(graph, step);
      steps_.push_back(std::move(step));
    }
  }

  cudnnfe_target_t target() const override { return CUDNNFE_TARGET_CPU_REFERENCE; }
  int64_t workspace_size() const override { return 0; }
  const std::string &name() const override { return name_; }

  void execute(Handle &, void *const *data, void *, void *) const override {
    std::unique_ptr<unsigned char[]> arena;
    const std::vector<cpu::StridedTensor> views = bind_views(data, arena);
    for (const Step &step : steps_) run(step, views, nullptr);
  }

  Demand demand(const std::vector<cpu::ElementMask> &wanted) const override {
    Demand d;
    for (const Slot &slot : slots_) d.slots.emplace_back(slot.layout.element_count());
    for (size_t i = 0; i < slots_.size(); ++i)
      if (slots_[i].bound_index >= 0 && static_cast<size_t>(slots_[i].bound_index) < wanted.size())
        d.slots[i].merge(wanted[static_cast<size_t>(slots_[i].bound_index)]);
    d.runs.assign(steps_.size(), false);
    for (size_t s = steps_.size(); s-- > 0;) d.runs[s] = demand_step(steps_[s], d);
    for (size_t s = 0; s < steps_.size(); ++s)
      if (d.runs[s] && !cpu::reference_op(steps_[s].node.kind).demand)
        d.full_nodes.push_back(&steps_[s].node);
    d.bound.resize(bound_count_);
    d.used.assign(bound_count_, false);
    std::vector<bool> used = used_slots(d.runs);
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].bound_index < 0) continue;
      d.bound[static_cast<size_t>(slots_[i].bound_index)] = d.slots[i];
      d.used[static_cast<size_t>(slots_[i].bound_index)] = used[i];
    }
    return d;
  }

  void execute_demanded(void *const *data, const Demand &demand) const override {
    std::unique_ptr<unsigned char[]> arena;
    const std::vector<cpu::StridedTensor> views = bind_views(data, arena);
    for (size_t s = 0; s < steps_.size(); ++s)
      if (demand.runs[s]) run(steps_[s], views, &demand);
  }

 private:
  // Each slot's view of `data` and of a new arena (held by `arena`).
  std::vector<cpu::StridedTensor> bind_views(void *const *data,
                                             std::unique_ptr<unsigned char[]> &arena) const {
    // Zeroed (deterministic padding bytes); one spare byte so that a graph
    // with no virtual tensors still gets a valid pointer.
    arena.reset(new unsigned char[arena_bytes_ + 1]());
    std::vector<cpu::StridedTensor> views(slots_.size());
    for (size_t i = 0; i < slots_.size(); ++i) {
      const Slot &slot = slots_[i];
      views[i] = slot.layout;
      // A view's parent slot comes before it, so its pointer is set already.
      if (slot.view_parent >= 0)
        views[i].data =
            static_cast<unsigned char *>(views[slot.view_parent].data) + slot.view_bytes;
      else
        views[i].data =
            slot.bound_index >= 0 ? data[slot.bound_index] : arena.get() + slot.arena_offset;
      if (slot.is_scalar) views[i].store(0, slot.scalar_value);
    }
    return views;
  }

  // The slots that the steps that run read or write, and the slots those
  // are views of.
  std::vector<bool> used_slots(const std::vector<bool> &runs) const {
    std::vector<bool> used(slots_.size(), false);
    for (size_t s = 0; s < steps_.size(); ++s) {
      if (!runs[s]) continue;
      for (int slot : steps_[s].inputs)
        if (slot >= 0) used[static_cast<size_t>(slot)] = true;
      for (int slot : steps_[s].outputs)
        if (slot >= 0) used[static_cast<size_t>(slot)] = true;
    }
    // A view's parent comes before it.
    for (size_t i = slots_.size(); i-- > 0;)
      if (used[i] && slots_[i].view_parent >= 0)
        used[static_cast<size_t>(slots_[i].view_parent)] = true;
    return used;
  }

  // Marks what `step`'s wanted outputs read; false when nothing of them is
  // wanted (the step need not run).
  bool demand_step(const Step &step, Demand &d) const {
    bool any = false, all = true;
    for (int slot : step.outputs) {
      if (slot < 0) continue;
      const cpu::ElementMask &m = d.slots[static_cast<size_t>(slot)];
      any = any || m.any();
      all = all && m.all();
    }
    if (!any) return false;
    const cpu::ReferenceOp &op = cpu::reference_op(step.node.kind);
    if (all || !op.demand) {
      for (int slot : step.inputs)
        if (slot >= 0) d.slots[static_cast<size_t>(slot)].set_all();
      return true;
    }
    cpu::DemandStep t{step.node, {}, {}, {}, {}};
    for (int slot : step.inputs) {
      t.inputs.push_back(slot >= 0 ? &slots_[static_cast<size_t>(slot)].layout : nullptr);
      t.need.push_back(slot >= 0 ? &d.slots[static_cast<size_t>(slot)] : nullptr);
    }
    for (int slot : step.outputs) {
      t.outputs.push_back(slot >= 0 ? &slots_[static_cast<size_t>(slot)].layout : nullptr);
      t.want.push_back(slot >= 0 ? &d.slots[static_cast<size_t>(slot)] : nullptr);
    }
    op.demand(t);
    return true;
  }

  int slot_of(const Graph &graph, const Node &node, int64_t uid,
              std::unordered_map<int64_t, int> &slot_by_uid) {
    if (uid == 0) return -1;
    auto it = slot_by_uid.find(uid);
    if (it != slot_by_uid.end()) return it->second;
    const Tensor &t = graph.tensor(uid);
    if (dtype_size(t.dtype) == 0)
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": tensor \"", t.name,
           "\" has data type ", dtype_name(t.dtype), ", which the CPU reference cannot store");
    if (t.dims.empty() || t.dims.size() > CUDNNFE_MAX_DIMS || t.strides.size() != t.dims.size())
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": tensor \"", t.name, "\" has ",
           t.dims.size(), " dims and ", t.strides.size(), " strides");
    Slot slot;
    slot.layout = tensor_layout(t);
    slot.is_scalar = t.is_scalar;
    slot.scalar_value = t.scalar_value;
    if (t.view_of != 0 && t.dtype == CUDNNFE_DTYPE_BOOLEAN_PACKED)
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": tensor \"", t.name,
           "\" is a slice of BOOLEAN_PACKED data, whose elements are not whole bytes");
    if (t.view_of != 0) {
      // A slice: no storage of its own; it reads its parent's (a graph input,
      // an output written by an earlier node, or an arena intermediate).
      slot.view_parent = slot_of(graph, node, t.view_of, slot_by_uid);
      slot.view_bytes = static_cast<size_t>(
          byte_count(node, t, CheckedInt(t.view_offset) * slot.layout.element_size));
    } else if (t.is_bound()) {
      slot.bound_index = graph.bound_index(uid);
      if (slot.bound_index < 0)
        fail(CUDNNFE_STATUS_INTERNAL, Graph::label(node), ": tensor \"", t.name,
             "\" is bound but not in the graph's bound UIDs");
    } else {
      slot.arena_offset = arena_bytes_;
      const CheckedInt bytes = CheckedInt(t.element_span()) * slot.layout.element_size;
      const CheckedInt aligned =
          (bytes + (kArenaAlignment - 1)) / kArenaAlignment * kArenaAlignment;
      arena_bytes_ = byte_count(node, t, aligned + static_cast<int64_t>(arena_bytes_));
    }
    slots_.push_back(slot);
    const int index = static_cast<int>(slots_.size()) - 1;
    slot_by_uid[uid] = index;
    return index;
  }

  // A byte count or offset of the arena; one that overflows is memory the
  // executor could never allocate.
  static size_t byte_count(const Node &node, const Tensor &t, CheckedInt bytes) {
    auto value = bytes.get();
    if (!value)
      fail(CUDNNFE_STATUS_OUT_OF_MEMORY, Graph::label(node), ": tensor \"", t.name, "\" ",
           dims_string(t.dims), " needs more than 2^63 bytes of CPU reference memory");
    return static_cast<size_t>(*value);
  }

  // Rejects at build what run() would only reject at execute.
  static void check_supported(const Graph &graph, const Step &step) {
    if (!compute_type_computable(step.node))
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(step.node), ": compute data type ",
           dtype_name(step.node.compute_dtype),
           " is not one the CPU reference computes in (FLOAT, HALF, INT32 or DOUBLE; BOOLEAN "
           "for comparisons and logic); the GPU target lets cuDNN decide");
    if (auto check = cpu::reference_op(step.node.kind).check) check(graph, step.node);
  }

  // The node's row of the CPU reference table, on its tensors' views;
  // with `demand` (verify mode), for the wanted elements of its outputs.
  static void run(const Step &step, const std::vector<cpu::StridedTensor> &views,
                  const Demand *demand) {
    const cpu::ReferenceOp &op = cpu::reference_op(step.node.kind);
    if (!op.run) return;
    auto view = [&](int slot) -> const cpu::StridedTensor * {
      return slot >= 0 ? &views[slot] : nullptr;
    };
    cpu::StepTensors t{step.node, step.attn_scale, step.score_mod.get(), {}, {}};
    for (int slot : step.inputs) t.inputs.push_back(view(slot));
    for (int slot : step.outputs) t.outputs.push_back(view(slot));
    if (demand && op.demand)
      for (int slot : step.outputs)
        t.want.push_back(slot >= 0 ? &demand->slots[static_cast<size_t>(slot)] : nullptr);
    op.run(t);
  }

  std::vector<Slot> slots_;
  std::vector<Step> steps_;
  size_t arena_bytes_ = 0;
  size_t bound_count_ = 0;
  std::string name_ = "cpu_reference";
};

}  // namespace

cpu::StridedTensor tensor_layout(const Tensor &t) {
  cpu::StridedTensor layout;
  layout.dtype = t.dtype;
  layout.element_size = dtype_size(t.dtype);
  layout.rank = static_cast<int>(t.dims.size());
  for (size_t i = 0; i < t.dims.size(); ++i) {
    layout.dims[i] = t.dims[i];
    layout.strides[i] = t.strides[i];
  }
  return layout;
}

std::unique_ptr<Plan> build_cpu_plan(const Graph &graph) {
  return std::make_unique<CpuPlan>(graph);
}

std::unique_ptr<SampledReference> build_sampled_reference(const Graph &graph) {
  return std::make_unique<CpuPlan>(graph);
}

}  // namespace cudnnfe
