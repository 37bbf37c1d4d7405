#include "plan/plan_blob.h"

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "plan/hash.h"
#include "plan/notes.h"
#include "serialize/json.h"

namespace cudnnfe::plan {
namespace {

using json::Value;

// Bounds of the decoder: far above anything real, far below harm.
constexpr size_t kMaxKnobs = 64;
constexpr size_t kMaxTimings = 1024;
constexpr size_t kMaxExcludedEngines = 256;
constexpr size_t kMaxNameLength = 1024;
constexpr size_t kMaxHeaderLength = 96;

[[noreturn]] void bad(const std::string &where, const std::string &what) {
  fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "plan blob: ", where, ": ", what);
}

Value note_array(NoteKind kind, uint32_t bits) {
  Value a = Value::array();
  for (uint32_t bit = 1; bit != 0; bit <<= 1)
    if (bits & bit) a.push(Value::string(note_name(kind, bit) ? note_name(kind, bit) : "?"));
  return a;
}

Value int_array(const std::vector<int64_t> &values) {
  Value a = Value::array();
  for (int64_t v : values) a.push(Value::integer(v));
  return a;
}

// ---- reading with bounds ----

int64_t read_int(const Value &parent, const char *key, const std::string &where, int64_t lo,
                 int64_t hi) {
  const std::string at = cat(where, ".", key);
  const int64_t v = parent.at(key, where).as_int(at);
  if (v < lo || v > hi) bad(at, cat(v, " is outside ", lo, "..", hi));
  return v;
}

const std::string &read_string(const Value &parent, const char *key, const std::string &where,
                               size_t max_length) {
  const std::string at = cat(where, ".", key);
  const std::string &s = parent.at(key, where).as_string(at);
  if (s.size() > max_length) bad(at, cat("string of ", s.size(), " bytes; at most ", max_length));
  return s;
}

std::string read_hex32(const Value &parent, const char *key, const std::string &where,
                       bool may_be_empty) {
  const std::string &s = read_string(parent, key, where, 32);
  if (s.empty() && may_be_empty) return s;
  if (s.size() != 32) bad(cat(where, ".", key), "expected 32 hex digits");
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      bad(cat(where, ".", key), "expected 32 lowercase hex digits");
  return s;
}

double read_time(const Value &v, const std::string &where) {
  const double t = v.as_double(where);
  if (!std::isfinite(t) || (t < 0 && t != -1) || t > 1e9)
    bad(where, cat(t, " is not a time in milliseconds (>= 0, or -1 for none)"));
  return t;
}

uint32_t read_notes(const Value &parent, const char *key, const std::string &where, NoteKind kind) {
  const std::string at = cat(where, ".", key);
  const auto &items = parent.at(key, where).as_array(at);
  if (items.size() > 32) bad(at, cat(items.size(), " notes; at most 32"));
  uint32_t bits = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string &name = items[i].as_string(cat(at, "[", i, "]"));
    const uint32_t bit = note_from_name(kind, name);
    if (!bit) bad(cat(at, "[", i, "]"), cat("unknown note \"", name.substr(0, 64), "\""));
    bits |= bit;
  }
  return bits;
}

cudnnfe_target_t target_from_name(const std::string &name, const std::string &where) {
  for (cudnnfe_target_t t : {CUDNNFE_TARGET_AUTO, CUDNNFE_TARGET_GPU, CUDNNFE_TARGET_CPU_REFERENCE})
    if (name == target_name(t)) return t;
  bad(where, cat("unknown target \"", name.substr(0, 64), "\""));
}

Value encode_options(const BuildOptions &o) {
  Value v = Value::object();
  v.set("target", Value::string(target_name(o.requested_target)));
  Value modes = Value::array();
  for (cudnnfe_heur_mode_t m : o.heur_modes) modes.push(Value::string(heur_mode_name(m)));
  v.set("heur_modes", std::move(modes));
  v.set("policy", Value::string(policy_name(o.policy)));
  v.set("max_workspace_size", Value::integer(o.max_workspace_size));
  v.set("exclude_numerical_notes", note_array(NoteKind::kNumerical, o.exclude_numerical_notes));
  v.set("exclude_behavior_notes", note_array(NoteKind::kBehavior, o.exclude_behavior_notes));
  v.set("require_behavior_notes", note_array(NoteKind::kBehavior, o.require_behavior_notes));
  v.set("exclude_engines", int_array(o.exclude_engines));
  v.set("max_plans", Value::integer(o.max_plans));
  return v;
}

BuildOptions decode_options(const Value &v, const std::string &where) {
  BuildOptions o;
  o.requested_target = target_from_name(read_string(v, "target", where, 32), where + ".target");
  o.target = o.requested_target;
  const std::string modes_at = where + ".heur_modes";
  const auto &modes = v.at("heur_modes", where).as_array(modes_at);
  if (modes.empty() || modes.size() > 4)
    bad(modes_at, cat(modes.size(), " modes; expected 1 to 4"));
  o.heur_modes.clear();
  for (size_t i = 0; i < modes.size(); ++i) {
    const std::string &name = modes[i].as_string(cat(modes_at, "[", i, "]"));
    bool found = false;
    for (cudnnfe_heur_mode_t m :
         {CUDNNFE_HEUR_MODE_A, CUDNNFE_HEUR_MODE_B, CUDNNFE_HEUR_MODE_FALLBACK}) {
      if (name == heur_mode_name(m)) {
        o.heur_modes.push_back(m);
        found = true;
      }
    }
    if (!found) bad(cat(modes_at, "[", i, "]"), cat("unknown mode \"", name.substr(0, 64), "\""));
  }
  const std::string &policy = read_string(v, "policy", where, 32);
  if (policy == policy_name(CUDNNFE_BUILD_POLICY_HEURISTICS_CHOICE))
    o.policy = CUDNNFE_BUILD_POLICY_HEURISTICS_CHOICE;
  else if (policy == policy_name(CUDNNFE_BUILD_POLICY_ALL))
    o.policy = CUDNNFE_BUILD_POLICY_ALL;
  else
    bad(where + ".policy", cat("unknown policy \"", policy, "\""));
  o.max_workspace_size = read_int(v, "max_workspace_size", where, -1, int64_t{1} << 60);
  o.exclude_numerical_notes = read_notes(v, "exclude_numerical_notes", where, NoteKind::kNumerical);
  o.exclude_behavior_notes = read_notes(v, "exclude_behavior_notes", where, NoteKind::kBehavior);
  o.require_behavior_notes = read_notes(v, "require_behavior_notes", where, NoteKind::kBehavior);
  const std::string engines_at = where + ".exclude_engines";
  const auto &engines = v.at("exclude_engines", where).as_array(engines_at);
  if (engines.size() > kMaxExcludedEngines)
    bad(engines_at, cat(engines.size(), " entries; at most ", kMaxExcludedEngines));
  for (size_t i = 0; i < engines.size(); ++i) {
    const int64_t e = engines[i].as_int(cat(engines_at, "[", i, "]"));
    if (e < 0 || e > (int64_t{1} << 31)) bad(cat(engines_at, "[", i, "]"), "not an engine id");
    o.exclude_engines.push_back(e);
  }
  o.max_plans = static_cast<int32_t>(read_int(v, "max_plans", where, 0, 1 << 20));
  return o;
}

// "CUDNNFE-PLAN 1 1234 0123456789abcdef\n": returns the payload.
std::pair<const char *, size_t> split_header(const char *data, size_t size) {
  if (size == 0) bad("byte 0", "empty input");
  const size_t scan = std::min(size, kMaxHeaderLength);
  const char *newline = static_cast<const char *>(std::memchr(data, '\n', scan));
  if (!newline)
    bad("header", size < kMaxHeaderLength ? "truncated: no complete header line"
                                          : "no header line (not a cudnnfe plan)");
  const std::string header(data, newline);
  const std::string magic = cat(kBlobMagic, " ");
  if (header.compare(0, magic.size(), magic) != 0)
    bad("header", cat("does not start with \"", kBlobMagic, "\" (not a cudnnfe plan)"));
  // Fields: version, payload size, checksum; plain decimal and hex.
  std::string fields[3];
  size_t count = 0;
  for (size_t i = magic.size(); i <= header.size(); ++i) {
    if (i == header.size() || header[i] == ' ') {
      if (count == 3) bad("header", "more than three fields after the magic");
      ++count;
      continue;
    }
    if (count >= 3) bad("header", "more than three fields after the magic");
    fields[count] += header[i];
  }
  if (count != 3 || fields[0].empty() || fields[1].empty() || fields[2].empty())
    bad("header", "expected \"CUDNNFE-PLAN <version> <size> <checksum>\"");
  auto decimal = [](const std::string &s, const char *what) {
    if (s.size() > 12) bad("header", cat(what, " \"", s.substr(0, 16), "\" is too long"));
    uint64_t v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') bad("header", cat(what, " \"", s, "\" is not a decimal number"));
      v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    return v;
  };
  const uint64_t version = decimal(fields[0], "version");
  if (version != static_cast<uint64_t>(kBlobVersion))
    bad("header", cat("format version ", version, " is not supported; this library reads version ",
                      kBlobVersion));
  const uint64_t declared = decimal(fields[1], "payload size");
  if (fields[2].size() != 16) bad("header", "checksum must be 16 hex digits");
  uint64_t checksum = 0;
  for (char c : fields[2]) {
    int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
    if (d < 0) bad("header", "checksum must be 16 lowercase hex digits");
    checksum = (checksum << 4) | static_cast<uint64_t>(d);
  }
  if (declared > kMaxBlobPayload)
    bad("header", cat("payload of ", declared, " bytes exceeds the limit of ", kMaxBlobPayload));
  const char *payload = newline + 1;
  const size_t present = size - static_cast<size_t>(payload - data);
  if (present < declared)
    bad("payload",
        cat("truncated: the header announces ", declared, " bytes, ", present, " are present"));
  if (present > declared)
    bad("payload",
        cat(present - declared, " bytes of trailing data after the announced ", declared));
  if (fnv1a64(payload, present) != checksum)
    bad("payload", "checksum mismatch: the bytes were corrupted");
  return {payload, present};
}

PlanRecord decode_payload(const Value &root) {
  const std::string top = "payload";
  PlanRecord r;
  if (read_string(root, "format", top, 64) != kBlobFormat)
    bad("payload.format", cat("is not \"", kBlobFormat, "\""));
  const int64_t version = root.at("version", top).as_int("payload.version");
  if (version != kBlobVersion)
    bad("payload.version", cat(version, " is not supported; this library reads ", kBlobVersion));
  r.library_version = read_int(root, "library_version", top, 0, 1 << 30);
  r.target = target_from_name(read_string(root, "target", top, 32), "payload.target");
  if (r.target == CUDNNFE_TARGET_AUTO) bad("payload.target", "a built plan's target is not AUTO");
  r.fingerprint = read_hex32(root, "fingerprint", top, false);
  r.cache_key = read_hex32(root, "cache_key", top, true);
  r.options = decode_options(root.at("build_options", top), "payload.build_options");
  if (r.target == CUDNNFE_TARGET_GPU) {
    r.cudnn_version = read_int(root, "cudnn_version", top, 1, 9999999);
    const Value &device = root.at("device", top);
    r.device_name = read_string(device, "name", "payload.device", 256);
    // 0: built from device properties that named no architecture.
    r.sm = static_cast<int>(read_int(device, "sm", "payload.device", 0, 1000));
    const std::string pw = "payload.plan";
    const Value &p = root.at("plan", top);
    r.plan_name = read_string(p, "name", pw, kMaxNameLength);
    r.config.engine_id = read_int(p, "engine_id", pw, 0, int64_t{1} << 31);
    const auto &knobs = p.at("knobs", pw).as_array(pw + ".knobs");
    if (knobs.size() > kMaxKnobs)
      bad(pw + ".knobs", cat(knobs.size(), " knobs; at most ", kMaxKnobs));
    for (size_t i = 0; i < knobs.size(); ++i) {
      const std::string kw = cat(pw, ".knobs[", i, "]");
      KnobChoice k;
      k.type = read_int(knobs[i], "type", kw, 0, 1 << 16);
      k.value = read_int(knobs[i], "value", kw, -(int64_t{1} << 40), int64_t{1} << 40);
      r.config.knobs.push_back(k);
    }
    if (engine_config_name(r.config) != r.plan_name)
      bad(pw + ".name",
          cat("\"", r.plan_name.substr(0, 64), "\" does not match the engine and knobs (",
              engine_config_name(r.config), ")"));
    r.workspace_size = read_int(p, "workspace_size", pw, 0, int64_t{1} << 52);
    r.numerical_notes = read_notes(p, "numerical_notes", pw, NoteKind::kNumerical);
    r.behavior_notes = read_notes(p, "behavior_notes", pw, NoteKind::kBehavior);
    // Optional: absent in blobs of cuDNN engines it cannot serialize.
    if (p.find("cudnn_execution_plan"))
      r.execution_plan_json = read_string(p, "cudnn_execution_plan", pw, kMaxBlobPayload);
  }
  const std::string aw = "payload.autotune";
  const Value &a = root.at("autotune", top);
  r.chosen_by_autotune = a.at("chosen", aw).as_bool(aw + ".chosen");
  r.time_ms = read_time(a.at("time_ms", aw), aw + ".time_ms");
  const auto &timings = a.at("timings", aw).as_array(aw + ".timings");
  if (timings.size() > kMaxTimings)
    bad(aw + ".timings", cat(timings.size(), " entries; at most ", kMaxTimings));
  for (size_t i = 0; i < timings.size(); ++i) {
    const std::string tw = cat(aw, ".timings[", i, "]");
    AutotuneTiming t;
    t.plan = read_string(timings[i], "plan", tw, kMaxNameLength);
    t.time_ms = read_time(timings[i].at("time_ms", tw), tw + ".time_ms");
    r.timings.push_back(std::move(t));
  }
  const Value &graph = root.at("graph", top);
  graph.as_object("payload.graph");
  r.graph_json = graph.dump();
  return r;
}

}  // namespace

std::string engine_config_name(const EngineConfig &config) {
  std::string name = cat("eng", config.engine_id);
  for (const KnobChoice &k : config.knobs) name += cat("_k", k.type, "=", k.value);
  return name;
}

const char *target_name(cudnnfe_target_t target) {
  switch (target) {
    case CUDNNFE_TARGET_GPU: return "GPU";
    case CUDNNFE_TARGET_CPU_REFERENCE: return "CPU_REFERENCE";
    default: return "AUTO";
  }
}

const char *policy_name(cudnnfe_build_policy_t policy) {
  return policy == CUDNNFE_BUILD_POLICY_ALL ? "ALL" : "HEURISTICS_CHOICE";
}

const char *heur_mode_name(cudnnfe_heur_mode_t mode) {
  switch (mode) {
    case CUDNNFE_HEUR_MODE_B: return "B";
    case CUDNNFE_HEUR_MODE_FALLBACK: return "FALLBACK";
    default: return "A";
  }
}

std::string encode_plan_blob(const PlanRecord &r) {
  Value root = Value::object();
  root.set("format", Value::string(kBlobFormat));
  root.set("version", Value::integer(kBlobVersion));
  root.set("library_version", Value::integer(r.library_version));
  root.set("target", Value::string(target_name(r.target)));
  root.set("fingerprint", Value::string(r.fingerprint));
  root.set("cache_key", Value::string(r.cache_key));
  root.set("build_options", encode_options(r.options));
  if (r.target == CUDNNFE_TARGET_GPU) {
    root.set("cudnn_version", Value::integer(r.cudnn_version));
    Value device = Value::object();
    device.set("name", Value::string(r.device_name));
    device.set("sm", Value::integer(r.sm));
    root.set("device", std::move(device));
    Value p = Value::object();
    p.set("name", Value::string(r.plan_name));
    p.set("engine_id", Value::integer(r.config.engine_id));
    Value knobs = Value::array();
    for (const KnobChoice &k : r.config.knobs) {
      Value kv = Value::object();
      kv.set("type", Value::integer(k.type));
      kv.set("value", Value::integer(k.value));
      knobs.push(std::move(kv));
    }
    p.set("knobs", std::move(knobs));
    p.set("workspace_size", Value::integer(r.workspace_size));
    p.set("numerical_notes", note_array(NoteKind::kNumerical, r.numerical_notes));
    p.set("behavior_notes", note_array(NoteKind::kBehavior, r.behavior_notes));
    if (!r.execution_plan_json.empty())
      p.set("cudnn_execution_plan", Value::string(r.execution_plan_json));
    root.set("plan", std::move(p));
  }
  Value a = Value::object();
  a.set("chosen", Value::boolean(r.chosen_by_autotune));
  a.set("time_ms", Value::number(r.time_ms));
  Value timings = Value::array();
  for (const AutotuneTiming &t : r.timings) {
    Value tv = Value::object();
    tv.set("plan", Value::string(t.plan));
    tv.set("time_ms", Value::number(t.time_ms));
    timings.push(std::move(tv));
  }
  a.set("timings", std::move(timings));
  root.set("autotune", std::move(a));
  root.set("graph", json::parse(r.graph_json.data(), r.graph_json.size()));
  const std::string payload = root.dump();
  return cat(kBlobMagic, " ", kBlobVersion, " ", payload.size(), " ",
             hex64(fnv1a64(payload.data(), payload.size())), "\n", payload);
}

PlanRecord decode_plan_blob(const char *data, size_t size) {
  try {
    const auto payload = split_header(data, size);
    const Value root = json::parse(payload.first, payload.second);
    return decode_payload(root);
  } catch (const Error &e) {
    if (e.status() != CUDNNFE_STATUS_BAD_SERIALIZED_DATA) throw;
    // The JSON layer names itself "graph JSON"; here it is the plan's.
    const std::string prefix = "graph JSON: ";
    if (e.message().compare(0, prefix.size(), prefix) == 0)
      fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "plan blob: ", e.message().substr(prefix.size()));
    throw;
  }
}

}  // namespace cudnnfe::plan
