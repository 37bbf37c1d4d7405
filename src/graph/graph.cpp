// The graph IR: adding tensors and nodes, lookup, and validation.
#include "graph/graph.h"

#include <algorithm>
#include <atomic>

#include "core/dtype.h"
#include "core/error.h"
#include "graph/score_mod.h"
#include "ops/norm_scalars.h"
#include "ops/ops.h"
#include "plan/plan.h"

namespace cudnnfe {

void check_dims(const std::string &what, const std::vector<int64_t> &dims) {
  if (dims.empty() || dims.size() > CUDNNFE_MAX_DIMS)
    fail_argument(what, ": ", dims.size(), " dims; expected 1 to ", CUDNNFE_MAX_DIMS);
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] <= 0)
      fail_argument(what, ": dim ", i, " is ", dims[i], " in ", dims_string(dims),
                    "; dims must be positive");
  require_shape_fits(CUDNNFE_STATUS_INVALID_ARGUMENT, what, dims, nullptr);
}

void check_strides(const std::string &what, const std::vector<int64_t> &dims,
                   const std::vector<int64_t> &strides) {
  if (strides.size() != dims.size())
    fail_argument(what, ": ", strides.size(), " strides for ", dims.size(), " dims");
  for (size_t i = 0; i < strides.size(); ++i)
    if (strides[i] < 0)
      fail_argument(what, ": stride ", i, " is ", strides[i], " in ", dims_string(strides),
                    "; strides must be >= 0");
  require_shape_fits(CUDNNFE_STATUS_INVALID_ARGUMENT, what, dims, &strides);
}

Graph::Graph() = default;
Graph::~Graph() = default;
Graph::Graph(Graph &&) noexcept = default;
Graph &Graph::operator=(Graph &&) noexcept = default;

Graph Graph::copy_unbuilt() const {
  Graph copy;
  copy.name = name;
  copy.io_dtype = io_dtype;
  copy.intermediate_dtype = intermediate_dtype;
  copy.compute_dtype = compute_dtype;
  copy.override_shape_enabled = override_shape_enabled;
  copy.dynamic_shape_enabled = dynamic_shape_enabled;
  copy.prune_unread_inputs = prune_unread_inputs;
  copy.pruned_ = pruned_;
  copy.tensors_ = tensors_;
  copy.index_by_uid_ = index_by_uid_;
  copy.uid_by_name_ = uid_by_name_;
  copy.nodes_ = nodes_;
  copy.node_names_ = node_names_;
  copy.readers_ = readers_;
  copy.next_uid_ = next_uid_;
  copy.reserved_uids_ = reserved_uids_;
  copy.bound_uids_ = bound_uids_;
  copy.open_score_mod_ = open_score_mod_;
  copy.open_score_mod_first_ = open_score_mod_first_;
  copy.pending_score_mods_ = pending_score_mods_;
  copy.score_mod_owners_ = score_mod_owners_;
  return copy;
}

Tensor &Graph::new_tensor(const std::string &name) {
  Tensor t;
  t.uid = next_free_uid();
  t.name = name.empty() ? automatic_tensor_name(t.uid) : name;
  if (uid_by_name_.count(t.name))
    fail_argument("graph \"", this->name, "\": a tensor named \"", t.name, "\" already exists");
  index_by_uid_[t.uid] = tensors_.size();
  uid_by_name_[t.name] = t.uid;
  tensors_.push_back(std::move(t));
  return tensors_.back();
}

// "tensor<uid>", or with a suffix when a caller already took that name (an
// automatic name must never make an add fail).
std::string Graph::automatic_tensor_name(int64_t uid) const {
  std::string name = cat("tensor", uid);
  for (int k = 1; uid_by_name_.count(name); ++k) name = cat("tensor", uid, "_", k);
  return name;
}

int64_t Graph::next_free_uid() {
  // Wraps to 1 past kMaxUid (a UID set at the top of the range); 2^62 UIDs
  // are never all taken.
  for (;; ++next_uid_) {
    if (next_uid_ > kMaxUid) next_uid_ = 1;
    if (!index_by_uid_.count(next_uid_) && !reserved_uids_.count(next_uid_) &&
        !pruned_.count(next_uid_))
      return next_uid_++;
  }
}

int64_t Graph::add_tensor(const std::string &name, cudnnfe_dtype_t dtype,
                          const std::vector<int64_t> &dims, const std::vector<int64_t> &strides) {
  require_mutable();
  if (dtype != CUDNNFE_DTYPE_NOT_SET && !dtype_is_valid(dtype))
    fail_argument("tensor \"", name, "\": unknown data type ", dtype);
  const std::string what = cat("tensor \"", name, "\"");
  check_dims(what, dims);
  std::vector<int64_t> actual_strides = strides.empty() ? packed_strides(dims) : strides;
  check_strides(what, dims, actual_strides);
  Tensor &t = new_tensor(name);
  t.dtype = dtype;
  t.dims = dims;
  t.strides = actual_strides;
  return t.uid;
}

int64_t Graph::add_scalar(const std::string &name, cudnnfe_dtype_t dtype, double value) {
  require_mutable();
  if (!dtype_is_valid(dtype))
    fail_argument("scalar \"", name, "\": data type ", dtype_name(dtype),
                  " is not a concrete type; scalars need one (e.g. FLOAT)");
  Tensor &t = new_tensor(name);
  t.dtype = dtype;
  t.dims = {1};
  t.strides = {1};
  t.is_scalar = true;
  t.scalar_value = value;
  return t.uid;
}

std::string Graph::unique_node_name(OpKind kind) const {
  for (size_t i = nodes_.size();; ++i) {
    std::string candidate = cat(op_kind_name(kind), "_", i);
    if (!node_names_.count(candidate)) return candidate;
  }
}

Tensor &Graph::take_as_output(const Node &node, const std::string &port, int64_t uid) {
  if (!has_tensor(uid))
    fail_argument(label(node), ": output ", port, " has UID ", uid,
                  ", which is not a tensor of this graph");
  Tensor &t = tensor(uid);
  if (t.producer >= 0)
    fail_argument(label(node), ": output ", port, " \"", t.name, "\" is already written by ",
                  label(nodes_[static_cast<size_t>(t.producer)]), "; a tensor has one producer");
  if (t.is_virtual || t.is_scalar || t.pass_by_value || t.view_of != 0)
    fail_argument(label(node), ": output ", port, " \"", t.name,
                  "\" must be a tensor made with cudnnfe_graph_add_tensor (not a scalar, a "
                  "pass-by-value tensor or a virtual tensor)");
  const bool read_here =
      std::find(node.inputs.begin(), node.inputs.end(), uid) != node.inputs.end();
  if (read_here || readers_.count(uid))
    fail_argument(label(node), ": output ", port, " \"", t.name, "\" is read by ",
                  read_here ? label(node) : label(nodes_[readers_.at(uid)[0]]),
                  "; an op output must be a tensor that no operation reads yet");
  t.dims_set_by_user = t.strides_set_by_user = true;
  return t;
}

void Graph::set_next_output(const std::string &port, int64_t uid) {
  require_mutable();
  if (port.empty()) fail_argument("the next op's output port name is empty");
  if (!has_tensor(uid))
    fail_argument("the next op's output ", port, " has UID ", uid,
                  ", which is not a tensor of this graph", pruned_note(uid));
  for (const auto &request : next_outputs_)
    if (request.first == port)
      fail_argument("output ", port, " of the next op is already set to UID ", request.second);
  next_outputs_.emplace_back(port, uid);
}

bool Graph::next_output_requested(const std::string &port) const {
  return std::any_of(next_outputs_.begin(), next_outputs_.end(),
                     [&](const auto &request) { return request.first == port; });
}

// The caller's tensors for `node`'s outputs: those given to add_node and
// those set_next_output asked for, by port index. Throws naming the op, the
// port and the op's ports for a port it lacks or one given twice.
std::vector<Graph::GivenOutput> Graph::given_outputs(
    const Node &node, const std::vector<GivenOutput> &given,
    const std::vector<std::pair<std::string, int64_t>> &requests) const {
  std::vector<GivenOutput> all = given;
  const auto &ports = output_port_names(node.kind);
  for (const auto &[port, uid] : requests) {
    const auto it = std::find(ports.begin(), ports.end(), port);
    if (it == ports.end()) {
      std::string names;
      for (const std::string &p : ports) names += cat(names.empty() ? "" : ", ", p);
      fail_argument(label(node), ": has no output \"", port, "\" (its outputs: ", names,
                    "); asked for by cudnnfe_graph_set_next_output");
    }
    const size_t index = static_cast<size_t>(it - ports.begin());
    for (const GivenOutput &g : all)
      if (g.port == index)
        fail_argument(label(node), ": output ", port, " is given twice (UIDs ", g.uid, " and ", uid,
                      ")");
    if (!output_used(node, index))
      fail_argument(label(node), ": output ", port,
                    " is not made by this op as configured, so it cannot be written into \"",
                    tensor(uid).name, "\"");
    all.push_back({index, uid});
  }
  return all;
}

const Node &Graph::add_node(OpKind kind, const std::string &name, std::vector<int64_t> inputs,
                            OpAttrs attrs, cudnnfe_dtype_t compute,
                            const std::vector<GivenOutput> &given_here) {
  // set_next_output's requests are this node's, added or not.
  const std::vector<std::pair<std::string, int64_t>> requests = std::move(next_outputs_);
  next_outputs_.clear();
  require_mutable();
  Node node;
  node.kind = kind;
  node.name = name.empty() ? unique_node_name(kind) : name;
  if (node_names_.count(node.name))
    fail_argument(label(node), ": a node with this name already exists");
  if (compute != CUDNNFE_DTYPE_NOT_SET && !dtype_is_valid(compute))
    fail_argument(label(node), ": unknown compute data type ", compute);
  const auto &ports = input_port_names(kind);
  inputs.resize(ports.size(), 0);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] != 0 && !has_tensor(inputs[i]))
      fail_argument(label(node), ": input ", ports[i], " has UID ", inputs[i],
                    ", which is not a tensor of this graph", pruned_note(inputs[i]));
  }
  node.inputs = std::move(inputs);
  node.attrs = std::move(attrs);
  node.compute_dtype = compute;
  check_open_score_mod(node);
  // An attention node takes its closed score modifiers (and reads their
  // graph inputs after its fixed ports); a failed add gives them back.
  attach_score_mods(node);

  // Create outputs, infer, and roll everything back if inference fails so
  // that a rejected op leaves the graph as it was.
  const size_t tensors_before = tensors_.size();
  const int64_t next_uid_before = next_uid_;
  std::vector<Tensor> taken;  // the caller's tensors as they were, for a rollback
  try {
    const std::vector<GivenOutput> given =
        requests.empty() ? given_here : given_outputs(node, given_here, requests);
    const auto &out_ports = output_port_names(kind);
    for (size_t port = 0; port < out_ports.size(); ++port) {
      if (!output_used(node, port)) {
        node.outputs.push_back(0);
        continue;
      }
      auto mine = std::find_if(given.begin(), given.end(),
                               [port](const GivenOutput &g) { return g.port == port; });
      if (mine != given.end() && has_tensor(mine->uid)) taken.push_back(tensor(mine->uid));
      Tensor &out = mine != given.end() ? take_as_output(node, out_ports[port], mine->uid)
                                        : new_tensor(cat(node.name, "::", out_ports[port]));
      out.is_virtual = mine == given.end();
      out.producer = static_cast<int>(nodes_.size());
      node.outputs.push_back(out.uid);
    }
    adding_node_ = true;
    infer_and_check(*this, node);
    adding_node_ = false;
  } catch (...) {
    adding_node_ = false;
    while (tensors_.size() > tensors_before) {
      index_by_uid_.erase(tensors_.back().uid);
      uid_by_name_.erase(tensors_.back().name);
      tensors_.pop_back();
    }
    next_uid_ = next_uid_before;
    for (const Tensor &t : taken) tensor(t.uid) = t;
    detach_score_mods(node);
    throw;
  }
  node_names_.insert(node.name);
  if (!score_mods(node).empty()) score_mod_owners_.push_back(nodes_.size());
  for (int64_t in : node.inputs)
    if (in != 0) readers_[in].push_back(nodes_.size());
  nodes_.push_back(std::move(node));
  return nodes_.back();
}

void Graph::set_node_input(size_t index, size_t port, int64_t uid) {
  require_mutable();
  Node &node = nodes_.at(index);
  if (uid != 0 && !has_tensor(uid))
    fail_argument(label(node), ": input ", input_port(node, port), " has UID ", uid,
                  ", which is not a tensor of this graph");
  const int64_t old = node.inputs.at(port);
  if (old == uid) return;
  node.inputs[port] = uid;
  // The old tensor stays a reader's input only if another port names it.
  if (old != 0 && std::find(node.inputs.begin(), node.inputs.end(), old) == node.inputs.end()) {
    std::vector<size_t> &readers = readers_[old];
    readers.erase(std::remove(readers.begin(), readers.end(), index), readers.end());
    if (readers.empty()) readers_.erase(old);
  }
  if (uid != 0) {
    std::vector<size_t> &readers = readers_[uid];
    if (std::find(readers.begin(), readers.end(), index) == readers.end()) readers.push_back(index);
  }
}

std::vector<size_t> Graph::readers_of(int64_t uid) const {
  auto it = readers_.find(uid);
  return it == readers_.end() ? std::vector<size_t>{} : it->second;
}

void Graph::set_uid(int64_t uid, int64_t new_uid) {
  require_mutable();
  Tensor &t = tensor(uid);
  if (new_uid <= 0 || new_uid > kMaxUid)
    fail_argument("tensor \"", t.name, "\": UID ", new_uid,
                  " is not allowed; UIDs are > 0 and <= 2^62 (1..2^62, the range that graph ",
                  "JSON and plan blobs carry)");
  if (new_uid == uid) return;
  if (has_tensor(new_uid))
    fail_argument("tensor \"", t.name, "\": UID ", new_uid, " is already used by tensor \"",
                  tensor(new_uid).name, "\"");
  size_t index = index_by_uid_[uid];
  index_by_uid_.erase(uid);
  index_by_uid_[new_uid] = index;
  uid_by_name_[t.name] = new_uid;
  t.uid = new_uid;
  // Only the producer and the readers name the UID: no scan of every node.
  if (t.producer >= 0) {
    std::vector<int64_t> &outputs = nodes_[t.producer].outputs;
    std::replace(outputs.begin(), outputs.end(), uid, new_uid);
  }
  auto readers = readers_.find(uid);
  if (readers != readers_.end()) {
    std::vector<size_t> moved = std::move(readers->second);
    readers_.erase(readers);
    for (size_t n : moved)
      std::replace(nodes_[n].inputs.begin(), nodes_[n].inputs.end(), uid, new_uid);
    readers_[new_uid] = std::move(moved);
  }
  rename_in_score_mods(uid, new_uid);
}

void Graph::set_tensor_name(int64_t uid, const std::string &name) {
  require_mutable();
  Tensor &t = tensor(uid);
  if (name.empty()) fail_argument("tensor UID ", uid, ": an empty name is not allowed");
  if (name == t.name) return;
  if (uid_by_name_.count(name))
    fail_argument("tensor UID ", uid, ": the name \"", name, "\" is already used by UID ",
                  uid_by_name_.at(name));
  uid_by_name_.erase(t.name);
  uid_by_name_[name] = uid;
  t.name = name;
}

Tensor &Graph::tensor(int64_t uid) {
  auto it = index_by_uid_.find(uid);
  if (it == index_by_uid_.end())
    fail_argument("graph \"", name, "\": no tensor has UID ", uid, pruned_note(uid));
  return tensors_[it->second];
}

const Tensor &Graph::tensor(int64_t uid) const {
  return const_cast<Graph *>(this)->tensor(uid);
}

int64_t Graph::find_tensor(const std::string &tensor_name) const {
  auto it = uid_by_name_.find(tensor_name);
  return it == uid_by_name_.end() ? 0 : it->second;
}

std::string Graph::label(const Node &node) {
  return cat(op_kind_name(node.kind), " \"", node.name, "\"");
}

const std::string &Graph::input_port(const Node &node, size_t port) {
  return input_port_names(node.kind).at(port);
}

void Graph::resolve_dtypes() {
  for (Tensor &t : tensors_) {
    if (t.dtype != CUDNNFE_DTYPE_NOT_SET) continue;
    // Layout ops (reshape, transpose, slice, concatenate) move data without
    // converting it: their outputs take their first input's type (x, or
    // concatenate's x0: Reshape::kX is all of them), resolved
    // already (inputs are created before the ops that read them).
    if (t.producer >= 0 && is_layout_op(nodes_[t.producer].kind)) {
      t.dtype = tensor(nodes_[t.producer].inputs[Reshape::kX]).dtype;
      continue;
    }
    if (t.is_virtual) {
      t.dtype =
          intermediate_dtype != CUDNNFE_DTYPE_NOT_SET ? intermediate_dtype : CUDNNFE_DTYPE_FLOAT;
    } else if (io_dtype != CUDNNFE_DTYPE_NOT_SET) {
      t.dtype = io_dtype;
    } else if (t.producer >= 0) {
      // An output with no io type takes the type of its producer's first
      // bound input (neither virtual nor scalar), else of its first input: an
      // intermediate's type (say FP8) should not leak to an output silently.
      const Node &node = nodes_[t.producer];
      // Random numbers do not take their integer seed's type.
      if (node.kind == OpKind::kRng) t.dtype = CUDNNFE_DTYPE_FLOAT;
      for (int pass = 0; pass < 2 && t.dtype == CUDNNFE_DTYPE_NOT_SET; ++pass) {
        for (int64_t in : node.inputs) {
          if (in == 0 || tensor(in).dtype == CUDNNFE_DTYPE_NOT_SET) continue;
          if (pass == 0 && !tensor(in).is_bound()) continue;
          t.dtype = tensor(in).dtype;
          break;
        }
      }
    }
    if (t.dtype == CUDNNFE_DTYPE_NOT_SET)
      fail_graph("tensor \"", t.name, "\" (UID ", t.uid,
                 ") has no data type: set it, or set the graph's io data type");
  }
}

void Graph::validate(const SupportTarget &target) {
  check_score_mods_closed();
  if (nodes_.empty()) fail_graph("graph \"", name, "\" has no operations");
  if (prune_unread_inputs) prune_unread();
  for (size_t i = 0; i < nodes_.size(); ++i) fold_scalar_operands(*this, i);
  for (Node &node : nodes_) infer_and_check(*this, node);
  resolve_dtypes();
  for (Node &node : nodes_) check_types(*this, node);
  if (target.gpu)
    for (const Node &node : nodes_) check_support(*this, node, target);
  size_t outputs = 0;
  for (const Tensor &t : tensors_) {
    require_shape_fits(CUDNNFE_STATUS_INVALID_GRAPH, cat("tensor \"", t.name, "\""), t.dims,
                       &t.strides);
    if (t.producer >= 0 && !t.is_virtual) {
      ++outputs;
      require_no_self_alias(t);
    }
  }
  // A scalar takes its consumers' rank, so all of them must share one
  // (score modifiers' nodes included).
  for (const Node &n : nodes_) {
    check_scalar_ranks(n);
    for (const ScoreMod *m : score_mods(n))
      for (const Node &sub : m->nodes) check_scalar_ranks(sub);
  }
  if (outputs == 0)
    fail_graph("graph \"", name, "\" has no outputs: mark at least one op output with set_output");
  // A graph input that no node reads takes no buffer: cudnn-frontend's graph
  // holds only the tensors its nodes use, and a binding for it is ignored.
  bound_uids_.clear();
  for (const Tensor &t : tensors_)
    if (t.is_bound() && !is_unread_input(t)) bound_uids_.push_back(t.uid);
  std::sort(bound_uids_.begin(), bound_uids_.end());
  if (bound_uids_.size() > kMaxBoundTensors)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "graph \"", name, "\" has ", bound_uids_.size(),
         " bound tensors; cudnnfe's executors take at most ", kMaxBoundTensors);
}

bool Graph::is_unread_input(const Tensor &t) const {
  return t.producer < 0 && !t.is_scalar && !t.is_virtual && !readers_.count(t.uid);
}

// The graph inputs no node reads leave the graph, as cudnn-frontend's graph
// holds only the tensors its nodes use; their UIDs and names are kept so that
// messages and bindings can name them.
void Graph::prune_unread() {
  if (std::none_of(tensors_.begin(), tensors_.end(),
                   [this](const Tensor &t) { return is_unread_input(t); }))
    return;
  std::deque<Tensor> kept;
  for (Tensor &t : tensors_) {
    if (is_unread_input(t)) {
      pruned_[t.uid] = t.name;
      uid_by_name_.erase(t.name);
      continue;
    }
    kept.push_back(std::move(t));
  }
  tensors_ = std::move(kept);
  index_by_uid_.clear();
  for (size_t i = 0; i < tensors_.size(); ++i) index_by_uid_[tensors_[i].uid] = i;
}

std::string Graph::pruned_note(int64_t uid) const {
  auto it = pruned_.find(uid);
  if (it == pruned_.end()) return "";
  return cat(" (tensor \"", it->second,
             "\" left the graph at validation: no op read it, and the graph prunes unread "
             "inputs, cudnnfe_graph_set_prune_unread_inputs)");
}

void Graph::check_scalar_ranks(const Node &n) const {
  if (n.kind != OpKind::kPointwise) return;
  for (int64_t in : n.inputs) {
    if (in == 0 || !tensor(in).is_scalar) continue;
    const Tensor &t = tensor(in);
    const Tensor &out = tensor(n.outputs[Pointwise::kOut]);
    if (out.dims.size() != t.dims.size())
      fail_graph("scalar \"", t.name, "\" is used by ops of different ranks (", label(n), " has ",
                 out.dims.size(), " dims); add one scalar per rank");
  }
}

void Graph::require_no_self_alias(const Tensor &t) const {
  // A slice output is a view of its parent and writes nothing of its own.
  if (t.view_of != 0) return;
  const size_t first = t.batch_at_offsets ? 1 : 0;
  const std::vector<int64_t> dims(t.dims.begin() + first, t.dims.end());
  const std::vector<int64_t> strides(t.strides.begin() + first, t.strides.end());
  if (!strides_alias(dims, strides)) return;
  fail_graph("output \"", t.name, "\" (UID ", t.uid, ") of ", label(nodes_[t.producer]),
             ": strides ", dims_string(t.strides), " for dims ", dims_string(t.dims),
             " make distinct elements share memory; an output needs one place per element");
}

void Graph::require_mutable() const {
  if (built())
    fail(CUDNNFE_STATUS_WRONG_STATE, "graph \"", name,
         "\" is already built and can no longer be changed");
}

const Plan &Graph::plan() const {
  if (!plan_ && build_failure_.empty())
    fail(CUDNNFE_STATUS_WRONG_STATE, "graph \"", name,
         "\" is not built yet: no build has run (call cudnnfe_graph_build)");
  if (!plan_)
    fail(CUDNNFE_STATUS_WRONG_STATE, "graph \"", name,
         "\" is not built yet: its last build failed (", build_failure_, ")");
  return *plan_;
}

void Graph::set_plan(std::unique_ptr<Plan> plan) {
  static std::atomic<uint64_t> serial{0};
  plan_ = std::move(plan);
  plan_serial_ = plan_ ? ++serial : 0;
  build_failure_.clear();
}

int Graph::bound_index(int64_t uid) const {
  auto it = std::lower_bound(bound_uids_.begin(), bound_uids_.end(), uid);
  if (it == bound_uids_.end() || *it != uid) return -1;
  return static_cast<int>(it - bound_uids_.begin());
}

}  // namespace cudnnfe
