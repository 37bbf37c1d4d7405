#include "plan/fingerprint.h"

#include "core/error.h"
#include "plan/hash.h"
#include "serialize/graph_json.h"
#include "serialize/json.h"

namespace cudnnfe::plan {
namespace {

using json::Value;

// A copy of an object without its "name" member.
Value without_name(const Value &object, const std::string &where) {
  Value out = Value::object();
  for (const auto &member : object.as_object(where))
    if (member.first != "name") out.set(member.first, member.second);
  return out;
}

}  // namespace

std::string canonical_graph(const Graph &graph) {
  const std::string text = serialize_graph(graph);
  const Value root = json::parse(text.data(), text.size());
  Value out = Value::object();
  for (const auto &member : root.as_object("graph")) {
    if (member.first == "name") continue;
    if (member.first == "tensors" || member.first == "nodes") {
      Value items = Value::array();
      for (const Value &item : member.second.as_array(member.first))
        items.push(without_name(item, member.first));
      out.set(member.first, std::move(items));
    } else {
      out.set(member.first, member.second);
    }
  }
  return out.dump();
}

std::string graph_fingerprint(const Graph &graph) {
  return hash128_hex(canonical_graph(graph));
}

std::string options_key(const BuildOptions &o) {
  std::string modes;
  for (cudnnfe_heur_mode_t m : o.heur_modes) modes += cat(modes.empty() ? "" : ",", m);
  std::string excluded;
  for (int64_t e : o.exclude_engines) excluded += cat(excluded.empty() ? "" : ",", e);
  return cat("heur=", modes, ";policy=", o.policy, ";max_ws=", o.max_workspace_size,
             ";x_num=", o.exclude_numerical_notes, ";x_beh=", o.exclude_behavior_notes,
             ";req_beh=", o.require_behavior_notes, ";x_eng=", excluded, ";max_plans=", o.max_plans,
             // Only when set, so that keys of builds without it stay as they were.
             o.sm_count > 0 ? cat(";sm_count=", o.sm_count) : std::string());
}

std::string plan_key(const std::string &canonical, const BuildOptions &options, int sm,
                     const std::string &device_name, int64_t cudnn_version) {
  return hash128_hex(cat("cudnnfe-plan-key/1\n", canonical, "\n", options_key(options), "\nsm=", sm,
                         "\ndevice=", device_name, "\ncudnn=", cudnn_version));
}

}  // namespace cudnnfe::plan
