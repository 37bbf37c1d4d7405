// The graph IR: tensors (by UID) and nodes in creation order, which is
// always a topological order because an op can only read existing tensors.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/node.h"
#include "graph/support_target.h"
#include "graph/tensor.h"

namespace cudnnfe {

class Plan;

// UIDs are 1..kMaxUid everywhere: set_uid, automatic UIDs, graph JSON and
// plan blobs (docs/graph-json.md).
constexpr int64_t kMaxUid = int64_t{1} << 62;

// Refuses (INVALID_ARGUMENT, `what` naming the tensor) strides that do not
// match `dims`, are negative, or reach beyond kMaxTensorElements.
void check_strides(const std::string &what, const std::vector<int64_t> &dims,
                   const std::vector<int64_t> &strides);
// Refuses (INVALID_ARGUMENT) an empty or too long `dims`, a dim < 1 or an
// element count beyond kMaxTensorElements.
void check_dims(const std::string &what, const std::vector<int64_t> &dims);

class Graph {
 public:
  Graph();
  ~Graph();
  Graph(Graph &&) noexcept;
  Graph &operator=(Graph &&) noexcept;
  // A copy of everything but the plan: not built, so it can be changed and
  // validated again (the CPU reference's execute-time shapes).
  Graph copy_unbuilt() const;

  std::string name = "graph";
  cudnnfe_dtype_t io_dtype = CUDNNFE_DTYPE_NOT_SET;
  cudnnfe_dtype_t intermediate_dtype = CUDNNFE_DTYPE_NOT_SET;
  cudnnfe_dtype_t compute_dtype = CUDNNFE_DTYPE_NOT_SET;
  // Built to take execute-time shapes (BuildOptions::override_shape_enabled);
  // part of the graph JSON, hence of plan cache keys and plan blobs.
  bool override_shape_enabled = false;
  // Built as a dynamic-shape graph (BuildOptions::dynamic_shape_enabled).
  bool dynamic_shape_enabled = false;
  // Graph inputs that no node reads leave the graph at validation
  // (cudnnfe_graph_set_prune_unread_inputs); not part of the graph JSON.
  bool prune_unread_inputs = false;

  // ---- construction (throws Error) ----
  int64_t add_tensor(const std::string &name, cudnnfe_dtype_t dtype,
                     const std::vector<int64_t> &dims, const std::vector<int64_t> &strides);
  int64_t add_scalar(const std::string &name, cudnnfe_dtype_t dtype, double value);
  // An output port that writes a tensor the caller made (cudnn-frontend's
  // user-made outputs, such as sdpa_backward's dSink_token).
  struct GivenOutput {
    size_t port;
    int64_t uid;
  };
  // Adds a node reading `inputs` (0 = unused port), creates its outputs as
  // virtual tensors (those in `given` are the caller's graph tensors, which
  // become graph outputs keeping their UID, name, dims and strides) and
  // infers their shapes. On failure nothing is added or changed.
  const Node &add_node(OpKind kind, const std::string &name, std::vector<int64_t> inputs,
                       OpAttrs attrs, cudnnfe_dtype_t compute_dtype,
                       const std::vector<GivenOutput> &given = {});
  // The next add_node writes its output `port` (by name) into `uid`, a
  // tensor the caller made (as a GivenOutput). Consumed by the next
  // add_node, whether it adds the node or throws.
  void set_next_output(const std::string &port, int64_t uid);
  // Whether a set_next_output request names output `port` of the next node
  // (an op whose output is optional makes it when asked for).
  bool next_output_requested(const std::string &port) const;
  // Forgets the requests (a call that fails before add_node consumes them).
  void drop_next_outputs() { next_outputs_.clear(); }
  // Replaces input `port` of node `index` with `uid` (0: none), keeping the
  // readers index true: an option set after the node was added.
  void set_node_input(size_t index, size_t port, int64_t uid);
  // The nodes that read tensor `uid` (indices into nodes()).
  std::vector<size_t> readers_of(int64_t uid) const;
  void set_uid(int64_t uid, int64_t new_uid);
  void set_tensor_name(int64_t uid, const std::string &name);
  // Keeps automatic UIDs off `uids` until cleared (deserialization restores
  // recorded UIDs without colliding with automatic ones).
  void reserve_uids(std::unordered_set<int64_t> uids) { reserved_uids_ = std::move(uids); }

  // ---- score modifiers (graph/score_mod.cpp; docs/attention.md) ----
  // Opens a score modifier: until end_score_mod, added nodes (pointwise
  // only) belong to it. Returns the UID of its placeholder, a virtual FLOAT
  // tensor of `dims` ([b, h_q, s_q, s_kv]) named `name` (or automatically).
  int64_t begin_score_mod(const std::string &name, const std::vector<int64_t> &dims);
  // Closes the open modifier of placeholder `score`, whose output is
  // `result`; it waits for an attention node to name `score`.
  void end_score_mod(int64_t score, int64_t result);
  int64_t open_score_mod() const { return open_score_mod_; }

  // ---- lookup ----
  Tensor &tensor(int64_t uid);  // throws INVALID_ARGUMENT naming the UID
  const Tensor &tensor(int64_t uid) const;
  bool has_tensor(int64_t uid) const { return index_by_uid_.count(uid) != 0; }
  int64_t find_tensor(const std::string &name) const;  // 0 if none
  const std::deque<Tensor> &tensors() const { return tensors_; }
  const std::vector<Node> &nodes() const { return nodes_; }
  std::vector<Node> &nodes() { return nodes_; }
  // `conv_fprop "conv1"`: how messages name a node.
  static std::string label(const Node &node);
  // "image" for port 0 of a conv_fprop, etc.
  static const std::string &input_port(const Node &node, size_t port);

  // True while add_node infers the node it adds: the caller may still set
  // an output's dims afterwards (dx.set_dim after conv_dgrad), so a rule that
  // only such a set_dim can satisfy waits for validation.
  bool adding_node() const { return adding_node_; }

  // ---- validation and build state ----
  // Re-infers shapes in order, resolves data types, checks every shape and
  // type rule, and for a GPU target the support rules (graph/support_target.h).
  void validate(const SupportTarget &target = {});
  bool built() const { return plan_ != nullptr; }
  void require_mutable() const;  // WRONG_STATE once built
  const Plan &plan() const;      // WRONG_STATE before build
  void set_plan(std::unique_ptr<Plan> plan);
  // Unique per set_plan in this process (0: never built), so that a bound
  // execution (cudnnfe_graph_bind) can tell that its plan is gone.
  uint64_t plan_serial() const { return plan_serial_; }
  // Records why the last build failed, so that a later "not built" message
  // tells a failed build from one that never ran.
  void set_build_failure(std::string message) { build_failure_ = std::move(message); }
  // Bound (non-virtual, non-scalar) UIDs in ascending order, graph inputs
  // that no node reads left out; fixed at build.
  const std::vector<int64_t> &bound_uids() const { return bound_uids_; }
  // Position of `uid` in bound_uids(), or -1.
  int bound_index(int64_t uid) const;
  // A graph input that no node reads (it takes no buffer; a binding for it
  // is accepted and ignored, as cudnn-frontend ignores one).
  bool is_unread_input(const Tensor &t) const;
  // The inputs that left the graph at the last validation
  // (prune_unread_inputs), by UID, with their names. Their UIDs are not given
  // to new tensors, and bindings for them are accepted and ignored.
  const std::map<int64_t, std::string> &pruned() const { return pruned_; }
  bool was_pruned(int64_t uid) const { return pruned_.count(uid) != 0; }
  // " (tensor \"x\" left the graph at validation: ...)" for a pruned UID, else "".
  std::string pruned_note(int64_t uid) const;

 private:
  Tensor &new_tensor(const std::string &name);
  // The caller's tensor `uid` as output `port` of `node` (being added):
  // refused unless it is a graph input that no node reads.
  Tensor &take_as_output(const Node &node, const std::string &port, int64_t uid);
  std::vector<GivenOutput> given_outputs(
      const Node &node, const std::vector<GivenOutput> &given,
      const std::vector<std::pair<std::string, int64_t>> &requests) const;
  int64_t next_free_uid();
  std::string automatic_tensor_name(int64_t uid) const;
  std::string unique_node_name(OpKind kind) const;
  void resolve_dtypes();
  void require_no_self_alias(const Tensor &t) const;
  void check_scalar_ranks(const Node &node) const;
  void prune_unread();
  // Score modifiers (graph/score_mod.cpp).
  void check_open_score_mod(const Node &node) const;
  void attach_score_mods(Node &node);
  void take_score_mods(Node &node);
  void detach_score_mods(Node &node);
  void rename_in_score_mods(int64_t uid, int64_t new_uid);
  void check_score_mods_closed() const;

  std::deque<Tensor> tensors_;
  std::unordered_map<int64_t, size_t> index_by_uid_;
  std::unordered_map<std::string, int64_t> uid_by_name_;
  std::vector<Node> nodes_;
  // Node names, and the nodes reading each UID: O(1) name checks and UID
  // renames without scanning every node (100,000 nodes were quadratic).
  std::unordered_set<std::string> node_names_;
  std::unordered_map<int64_t, std::vector<size_t>> readers_;
  int64_t next_uid_ = 1;
  std::unordered_set<int64_t> reserved_uids_;
  // set_next_output's requests: port name and tensor, in call order.
  std::vector<std::pair<std::string, int64_t>> next_outputs_;
  std::map<int64_t, std::string> pruned_;
  std::vector<int64_t> bound_uids_;
  std::unique_ptr<Plan> plan_;
  bool adding_node_ = false;
  uint64_t plan_serial_ = 0;
  std::string build_failure_;
  // The open score modifier's placeholder (0: none) and its first node;
  // closed modifiers by placeholder UID until an attention node takes them.
  int64_t open_score_mod_ = 0;
  size_t open_score_mod_first_ = 0;
  std::map<int64_t, ScoreMod> pending_score_mods_;
  std::vector<size_t> score_mod_owners_;  // nodes holding a modifier
};

}  // namespace cudnnfe
