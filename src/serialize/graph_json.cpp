// Graph <-> JSON (format described in docs/graph-json.md). Loading replays
// the construction calls (add_tensor, add_node, overrides) so that every
// rule a hand-built graph obeys also holds for a loaded one.
#include "serialize/graph_json.h"

#include <algorithm>
#include <unordered_set>

#include "core/dtype.h"
#include "core/error.h"
#include "graph/op_schema.h"
#include "graph/score_mod.h"
#include "ops/ops.h"
#include "serialize/json.h"

namespace cudnnfe {
namespace {

using json::Value;

constexpr const char *kFormat = "cudnnfe.graph";

Value int_array(const std::vector<int64_t> &values) {
  Value a = Value::array();
  for (int64_t v : values) a.push(Value::integer(v));
  return a;
}

template <size_t N>
Value int_array(const std::array<int64_t, N> &values, int count) {
  return int_array(std::vector<int64_t>(values.begin(), values.begin() + count));
}

Value write_field(const AttrField &f, const void *attrs) {
  const void *p = f.get(const_cast<void *>(attrs));
  if (f.codec) return Value::string(f.codec->name(static_cast<int32_t>(f.get_int(attrs))));
  switch (f.type) {
    case FieldType::kBool: return Value::boolean(*static_cast<const bool *>(p));
    case FieldType::kDouble: return Value::number(*static_cast<const double *>(p));
    case FieldType::kIntList: return int_array(*static_cast<const std::vector<int64_t> *>(p));
    case FieldType::kSpatial:
      return int_array(*static_cast<const std::array<int64_t, 3> *>(p),
                       std::clamp(f.count(attrs), 0, 3));
    default: return Value::integer(f.get_int(attrs));
  }
}

// The attribute fields of the node's kind (graph/op_schema.h).
Value node_attributes(const Node &node) {
  Value a = Value::object();
  for (const AttrField &f : op_schema(node.kind).fields)
    a.set(f.name, write_field(f, attrs_address(node.attrs)));
  return a;
}

const char *tensor_kind(const Tensor &t) {
  if (t.is_scalar) return "scalar";
  // A score modifier's tensors are virtual and written by no listed node.
  if (t.producer < 0 && !t.is_virtual) return "input";
  return t.is_virtual ? "virtual" : "output";
}

Value write_node(const Node &node);

// An attention node's score modifiers: {"score", "result", "nodes"} each,
// under the option's name (docs/graph-json.md).
void write_score_mods(const Node &node, Value &v) {
  for (const ScoreMod *m : score_mods(node)) {
    Value mod = Value::object();
    mod.set("score", Value::integer(m->score));
    mod.set("result", Value::integer(m->result));
    Value nodes = Value::array();
    for (const Node &sub : m->nodes) nodes.push(write_node(sub));
    mod.set("nodes", std::move(nodes));
    v.set(score_mod_option(node, *m), std::move(mod));
  }
}

Value write_node(const Node &node) {
  Value v = Value::object();
  v.set("op", Value::string(op_kind_name(node.kind)));
  v.set("name", Value::string(node.name));
  v.set("compute_data_type", Value::string(dtype_name(node.compute_dtype)));
  // Inputs past the fixed ports are the score modifiers' (recreated with them).
  const auto &ports = input_port_names(node.kind);
  Value inputs = Value::object();
  for (size_t i = 0; i < node.inputs.size() && i < ports.size(); ++i)
    if (node.inputs[i]) inputs.set(ports[i], Value::integer(node.inputs[i]));
  Value outputs = Value::object();
  for (size_t i = 0; i < node.outputs.size(); ++i)
    if (node.outputs[i])
      outputs.set(output_port_names(node.kind)[i], Value::integer(node.outputs[i]));
  v.set("inputs", std::move(inputs));
  v.set("outputs", std::move(outputs));
  v.set("attributes", node_attributes(node));
  write_score_mods(node, v);
  return v;
}

// The tensors of `node`'s score modifiers (placeholders and node outputs).
void score_mod_tensors(const Graph &graph, const Node &node, std::vector<const Tensor *> &out) {
  for (const ScoreMod *m : score_mods(node)) {
    out.push_back(&graph.tensor(m->score));
    for (const Node &sub : m->nodes)
      for (int64_t uid : sub.outputs)
        if (uid) out.push_back(&graph.tensor(uid));
  }
}

}  // namespace

std::string serialize_graph(const Graph &graph) {
  Value root = Value::object();
  root.set("format", Value::string(kFormat));
  root.set("version", Value::integer(kGraphJsonVersion));
  root.set("name", Value::string(graph.name));
  root.set("io_data_type", Value::string(dtype_name(graph.io_dtype)));
  root.set("intermediate_data_type", Value::string(dtype_name(graph.intermediate_dtype)));
  root.set("compute_data_type", Value::string(dtype_name(graph.compute_dtype)));
  // Written only when set, so that documents of graphs without it stay as
  // they were (and older documents, which lack it, read as false).
  if (graph.override_shape_enabled) root.set("override_shape_enabled", Value::boolean(true));
  if (graph.dynamic_shape_enabled) root.set("dynamic_shape_enabled", Value::boolean(true));
  // Canonical order: inputs and scalars, then op outputs in node order —
  // the order a load recreates them in, so that round trips are exact.
  std::vector<const Tensor *> ordered;
  for (const Tensor &t : graph.tensors())
    if (t.producer < 0 && !is_score_mod_tensor(graph, t.uid)) ordered.push_back(&t);
  for (const Node &node : graph.nodes()) {
    score_mod_tensors(graph, node, ordered);
    for (int64_t uid : node.outputs)
      if (uid) ordered.push_back(&graph.tensor(uid));
  }
  Value tensors = Value::array();
  for (const Tensor *tensor : ordered) {
    const Tensor &t = *tensor;
    Value v = Value::object();
    v.set("uid", Value::integer(t.uid));
    v.set("name", Value::string(t.name));
    v.set("kind", Value::string(tensor_kind(t)));
    v.set("data_type", Value::string(dtype_name(t.dtype)));
    v.set("dims", int_array(t.dims));
    v.set("strides", int_array(t.strides));
    if (t.is_scalar) v.set("value", Value::number(t.scalar_value));
    if (t.pass_by_value) v.set("pass_by_value", Value::boolean(true));
    if (t.producer >= 0 || t.is_virtual) {
      v.set("dims_set_by_user", Value::boolean(t.dims_set_by_user));
      v.set("strides_set_by_user", Value::boolean(t.strides_set_by_user));
    }
    tensors.push(std::move(v));
  }
  root.set("tensors", std::move(tensors));
  Value nodes = Value::array();
  for (const Node &node : graph.nodes()) nodes.push(write_node(node));
  root.set("nodes", std::move(nodes));
  return root.dump();
}

namespace {

cudnnfe_dtype_t read_dtype(const Value &v, const std::string &where) {
  cudnnfe_dtype_t dtype;
  if (!dtype_from_name(v.as_string(where).c_str(), &dtype))
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ": unknown data type \"",
         v.as_string(where), "\"");
  return dtype;
}

std::vector<int64_t> read_ints(const Value &v, const std::string &where, size_t max_count) {
  const auto &items = v.as_array(where);
  if (items.size() > max_count)
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ": ", items.size(),
         " entries; at most ", max_count);
  std::vector<int64_t> out;
  for (size_t i = 0; i < items.size(); ++i) out.push_back(items[i].as_int(cat(where, "[", i, "]")));
  return out;
}

// A loaded integer or enumeration value must satisfy the field's rule.
void check_rule(const AttrField &f, int64_t value, const std::string &where) {
  const bool in_range = value >= f.min && value <= f.max;
  if (f.valid ? f.valid(value) : in_range) return;
  const std::string shown = f.codec ? f.codec->name(static_cast<int32_t>(value)) : cat(value);
  if (f.valid)
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ": ", shown, " ", f.rule);
  fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ": ", shown, " is outside ",
       f.min, "..", f.max);
}

int64_t read_enum(const AttrField &f, const Value &v, const std::string &where) {
  const std::string &name = v.as_string(where);
  int32_t value = 0;
  if (!f.codec->from_name(name, &value))
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ": unknown ", f.codec->what,
         *f.codec->what ? " " : "", "\"", name, "\"", f.codec->hint);
  return value;
}

void read_field(const AttrField &f, const Value &v, const std::string &where, void *attrs) {
  void *p = f.get(attrs);
  if (f.codec) {
    const int64_t value = read_enum(f, v, where);
    check_rule(f, value, where);
    return f.set_int(attrs, value);
  }
  switch (f.type) {
    case FieldType::kBool: *static_cast<bool *>(p) = v.as_bool(where); return;
    case FieldType::kDouble: *static_cast<double *>(p) = v.as_double(where); return;
    case FieldType::kIntList:
      *static_cast<std::vector<int64_t> *>(p) = read_ints(v, where, CUDNNFE_MAX_DIMS);
      return;
    case FieldType::kSpatial: {
      auto &out = *static_cast<std::array<int64_t, 3> *>(p);
      const std::vector<int64_t> values = read_ints(v, where, out.size());
      std::copy(values.begin(), values.end(), out.begin());
      return;
    }
    case FieldType::kUint32: {
      const int64_t value = v.as_int(where);
      if (value < 0 || value > UINT32_MAX)
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, " out of range");
      return f.set_int(attrs, value);
    }
    default: {
      const int64_t value = v.as_int(where);
      check_rule(f, value, where);
      return f.set_int(attrs, value);
    }
  }
}

// The attribute struct of `kind` from its fields; keys of optional fields
// may be absent (documents written before they existed).
OpAttrs read_attributes(OpKind kind, const Value &a, const std::string &where) {
  const OpSchema &schema = op_schema(kind);
  OpAttrs attrs = schema.make_attrs();
  for (const AttrField &f : schema.fields) {
    const Value *v = f.optional ? a.find(f.name) : &a.at(f.name, where);
    if (v) read_field(f, *v, cat(where, ".", f.name), attrs_address(attrs));
  }
  return attrs;
}

// The recorded virtual or output tensor `uid`, taken from `recorded`.
const Value &take_recorded(std::map<int64_t, const Value *> &recorded, int64_t uid,
                           const std::string &where) {
  auto it = recorded.find(uid);
  if (it == recorded.end())
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ": uid ", uid,
         " is not a virtual or output tensor of the document");
  const Value &t = *it->second;
  recorded.erase(it);
  return t;
}

void read_node(Graph &graph, const Value &v, const std::string &where,
               std::map<int64_t, const Value *> &outputs_by_uid);

// Replays an attention node's score modifiers (begin, their nodes, end) and
// names them in `attrs`, before the node itself is added.
void read_score_mods(Graph &graph, OpKind kind, const Value &v, const std::string &where,
                     OpAttrs &attrs, std::map<int64_t, const Value *> &outputs_by_uid) {
  if (kind != OpKind::kSdpa && kind != OpKind::kSdpaBackward) return;
  for (const char *option : {"score_mod", "score_mod_bprop"}) {
    const Value *mod = v.find(option);
    if (!mod) continue;
    const std::string mw = cat(where, ".", option);
    if (kind == OpKind::kSdpa && std::string(option) != "score_mod")
      fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", mw, ": sdpa has no ", option);
    const int64_t score = mod->at("score", mw).as_int(mw + ".score");
    const Value &t = take_recorded(outputs_by_uid, score, mw + ".score");
    const std::string tw = cat("tensor uid ", score);
    const int64_t created =
        graph.begin_score_mod(t.at("name", tw).as_string(tw + ".name"),
                              read_ints(t.at("dims", tw), tw + ".dims", CUDNNFE_MAX_DIMS));
    graph.set_uid(created, score);
    const auto &nodes = mod->at("nodes", mw).as_array(mw + ".nodes");
    for (size_t n = 0; n < nodes.size(); ++n)
      read_node(graph, nodes[n], cat(mw, ".nodes[", n, "]"), outputs_by_uid);
    graph.end_score_mod(score, mod->at("result", mw).as_int(mw + ".result"));
    ScoreMod &target = std::string(option) == "score_mod_bprop"
                           ? std::get<SdpaBackwardAttrs>(attrs).score_mod_bprop
                       : kind == OpKind::kSdpa ? std::get<SdpaAttrs>(attrs).score_mod
                                               : std::get<SdpaBackwardAttrs>(attrs).score_mod;
    target.score = score;
  }
}

void read_node(Graph &graph, const Value &v, const std::string &where,
               std::map<int64_t, const Value *> &outputs_by_uid) {
  OpKind kind;
  const std::string &op = v.at("op", where).as_string(where + ".op");
  if (!op_kind_from_name(op, &kind))
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ".op: unknown op \"", op, "\"");
  const auto &in_ports = input_port_names(kind);
  const Value &inputs = v.at("inputs", where);
  for (const auto &entry : inputs.as_object(where + ".inputs"))
    if (std::find(in_ports.begin(), in_ports.end(), entry.first) == in_ports.end())
      fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ".inputs: ", op,
           " has no input \"", entry.first, "\"");
  std::vector<int64_t> in_uids;
  for (const std::string &port : in_ports) {
    const Value *uid = inputs.find(port);
    in_uids.push_back(uid ? uid->as_int(cat(where, ".inputs.", port)) : 0);
  }
  OpAttrs attrs = read_attributes(kind, v.at("attributes", where), where + ".attributes");
  read_score_mods(graph, kind, v, where, attrs, outputs_by_uid);
  Node built = graph.add_node(
      kind, v.at("name", where).as_string(where + ".name"), in_uids, std::move(attrs),
      read_dtype(v.at("compute_data_type", where), where + ".compute_data_type"));
  const Value &outputs = v.at("outputs", where);
  const auto &out_ports = output_port_names(kind);
  for (size_t port = 0; port < out_ports.size(); ++port) {
    const Value *recorded = outputs.find(out_ports[port]);
    if (!built.outputs[port]) {
      if (recorded)
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ".outputs: \"",
             out_ports[port], "\" is listed but the node's attributes do not produce it");
      continue;
    }
    if (!recorded)
      fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ".outputs: missing \"",
           out_ports[port], "\"");
    int64_t uid = recorded->as_int(cat(where, ".outputs.", out_ports[port]));
    const Value &t = take_recorded(outputs_by_uid, uid, cat(where, ".outputs.", out_ports[port]));
    const std::string tw = cat("tensor uid ", uid);
    graph.set_uid(built.outputs[port], uid);
    graph.set_tensor_name(uid, t.at("name", tw).as_string(tw + ".name"));
    Tensor &out = graph.tensor(uid);
    out.dtype = read_dtype(t.at("data_type", tw), tw + ".data_type");
    out.is_virtual = t.at("kind", tw).as_string(tw + ".kind") == "virtual";
    if (t.at("dims_set_by_user", tw).as_bool(tw + ".dims_set_by_user")) {
      out.dims = read_ints(t.at("dims", tw), tw + ".dims", CUDNNFE_MAX_DIMS);
      out.dims_set_by_user = true;
    }
    if (t.at("strides_set_by_user", tw).as_bool(tw + ".strides_set_by_user")) {
      out.strides = read_ints(t.at("strides", tw), tw + ".strides", CUDNNFE_MAX_DIMS);
      out.strides_set_by_user = true;
    }
    if (out.dims.empty() || out.strides.size() != out.dims.size())
      fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", tw, ": dims and strides disagree");
    for (size_t i = 0; i < out.dims.size(); ++i)
      if (out.dims[i] <= 0 || out.strides[i] < 0)
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", tw, ": bad dims or strides");
    require_shape_fits(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, cat("graph JSON: ", tw), out.dims,
                       &out.strides);
  }
}

// An op output keeps the layout its document recorded where today's
// inference gives another one (a document written before convolution,
// pooling and reduction outputs defaulted to channels-last): the buffers its
// user allocates follow the recorded strides. True when any was kept. A
// score modifier's tensors are skipped: no buffer is ever bound to them, and
// their layout follows the attention node's score placeholder, so keeping a
// recorded one would make a reload differ from the first load.
bool keep_recorded_layouts(Graph &graph, const std::map<int64_t, const Value *> &recorded) {
  bool kept = false;
  for (const auto &[uid, value] : recorded) {
    Tensor &t = graph.tensor(uid);
    if (t.strides_set_by_user || t.view_of != 0 || is_score_mod_tensor(graph, uid)) continue;
    const std::string tw = cat("tensor uid ", uid);
    const std::vector<int64_t> dims =
        read_ints(value->at("dims", tw), tw + ".dims", CUDNNFE_MAX_DIMS);
    const std::vector<int64_t> strides =
        read_ints(value->at("strides", tw), tw + ".strides", CUDNNFE_MAX_DIMS);
    if (dims != t.dims || strides.size() != dims.size() || same_layout(dims, t.strides, strides))
      continue;
    for (int64_t s : strides)
      if (s < 0) fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", tw, ": bad strides");
    require_shape_fits(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, cat("graph JSON: ", tw), dims, &strides);
    t.strides = strides;
    t.strides_set_by_user = true;
    kept = true;
  }
  return kept;
}

void load(const Value &root, Graph &graph) {
  const std::string top = "document";
  if (root.at("format", top).as_string("format") != kFormat)
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: format is not \"", kFormat, "\"");
  const int64_t version = root.at("version", top).as_int("version");
  if (version != kGraphJsonVersion)
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: version ", version,
         " is not supported; this library reads version ", kGraphJsonVersion);
  graph.name = root.at("name", top).as_string("name");
  graph.io_dtype = read_dtype(root.at("io_data_type", top), "io_data_type");
  graph.intermediate_dtype =
      read_dtype(root.at("intermediate_data_type", top), "intermediate_data_type");
  graph.compute_dtype = read_dtype(root.at("compute_data_type", top), "compute_data_type");
  if (const Value *v = root.find("override_shape_enabled"))
    graph.override_shape_enabled = v->as_bool("override_shape_enabled");
  if (const Value *v = root.find("dynamic_shape_enabled"))
    graph.dynamic_shape_enabled = v->as_bool("dynamic_shape_enabled");

  const auto &tensors = root.at("tensors", top).as_array("tensors");
  std::unordered_set<int64_t> recorded_uids;
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::string where = cat("tensors[", i, "]");
    int64_t uid = tensors[i].at("uid", where).as_int(where + ".uid");
    if (uid <= 0 || uid > kMaxUid)
      fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ": uid ", uid,
           " is outside 1..2^62");
    recorded_uids.insert(uid);
  }
  graph.reserve_uids(std::move(recorded_uids));

  // Inputs and scalars first; op outputs are recreated by their nodes.
  std::map<int64_t, const Value *> outputs_by_uid;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Value &t = tensors[i];
    std::string where = cat("tensors[", i, "]");
    const std::string &kind = t.at("kind", where).as_string(where + ".kind");
    int64_t uid = t.at("uid", where).as_int(where + ".uid");
    const std::string &name = t.at("name", where).as_string(where + ".name");
    cudnnfe_dtype_t dtype = read_dtype(t.at("data_type", where), where + ".data_type");
    std::vector<int64_t> dims = read_ints(t.at("dims", where), where + ".dims", CUDNNFE_MAX_DIMS);
    std::vector<int64_t> strides =
        read_ints(t.at("strides", where), where + ".strides", CUDNNFE_MAX_DIMS);
    if (kind == "input" || kind == "scalar") {
      int64_t created =
          kind == "scalar"
              ? graph.add_scalar(name, dtype, t.at("value", where).as_double(where + ".value"))
              : graph.add_tensor(name, dtype, dims, strides);
      if (const Value *by_value = t.find("pass_by_value"))
        graph.tensor(created).pass_by_value = by_value->as_bool(where + ".pass_by_value");
      graph.set_uid(created, uid);
    } else if (kind == "virtual" || kind == "output") {
      if (outputs_by_uid.count(uid))
        fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ": uid ", uid, " repeats");
      outputs_by_uid[uid] = &t;
    } else {
      fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ".kind: unknown \"", kind,
           "\"");
    }
  }

  const std::map<int64_t, const Value *> recorded_outputs = outputs_by_uid;
  const auto &nodes = root.at("nodes", top).as_array("nodes");
  for (size_t n = 0; n < nodes.size(); ++n)
    read_node(graph, nodes[n], cat("nodes[", n, "]"), outputs_by_uid);
  if (!outputs_by_uid.empty())
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: tensor uid ",
         outputs_by_uid.begin()->first, " is marked as an op output but no node produces it");
  // Overridden shapes may change inference downstream: re-run it now so the
  // loaded graph's shapes are consistent (and hostile overrides are caught).
  for (Node &node : graph.nodes()) infer_and_check(graph, node);
  if (keep_recorded_layouts(graph, recorded_outputs))
    for (Node &node : graph.nodes()) infer_and_check(graph, node);
  graph.reserve_uids({});
}

}  // namespace

void deserialize_graph(const char *data, size_t size, Graph &graph) {
  Value root = json::parse(data, size);
  try {
    load(root, graph);
  } catch (const Error &e) {
    if (e.status() == CUDNNFE_STATUS_BAD_SERIALIZED_DATA) throw;
    fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA,
         "graph JSON does not describe a valid graph: ", e.message());
  }
}

}  // namespace cudnnfe
