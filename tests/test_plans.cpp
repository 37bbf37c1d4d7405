// Plan control through the C API, on the CPU (CI has no GPU): build options
// (policy, filters, caches) and their validation, plan queries on a CPU
// reference graph, build information, fingerprints (the cache key's graph
// part), the plan blob's round trip and its rejection of truncated,
// corrupted and hostile bytes, and the refusal of a plan made for another
// GPU or cuDNN version. GPU behaviour is in test_gpu_plans.cpp.
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "harness.h"

namespace {

struct Graph {
  cudnnfe_graph_t *g = nullptr;
  Graph() { cudnnfe_graph_create(&g); }
  ~Graph() { cudnnfe_graph_destroy(g); }
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;
  operator cudnnfe_graph_t *() const { return g; }
};

struct Handle {
  cudnnfe_handle_t *h = nullptr;
  Handle() { cudnnfe_handle_create(&h, -1); }
  ~Handle() { cudnnfe_handle_destroy(h); }
  operator cudnnfe_handle_t *() const { return h; }
};

struct Uids {
  int64_t a = 0, b = 0, scale = 0, c = 0;
};

// c = (a @ b) * scale: a [1, m, k], b [1, k, n], FLOAT, with tensor names
// prefixed by `prefix` (names do not change the fingerprint).
Uids add_matmul_graph(cudnnfe_graph_t *g, const std::string &prefix, int64_t m = 4, int64_t k = 8,
                      int64_t n = 6, cudnnfe_dtype_t dtype = CUDNNFE_DTYPE_FLOAT,
                      double scale = 0.5, bool transposed_b = false) {
  Uids u;
  const int64_t ad[3] = {1, m, k}, bd[3] = {1, k, n};
  const int64_t bt[3] = {k * n, 1, k};
  cudnnfe_graph_set_name(g, (prefix + "graph").c_str());
  cudnnfe_graph_add_tensor(g, (prefix + "a").c_str(), dtype, 3, ad, nullptr, &u.a);
  cudnnfe_graph_add_tensor(g, (prefix + "b").c_str(), dtype, 3, bd, transposed_b ? bt : nullptr,
                           &u.b);
  cudnnfe_graph_add_scalar(g, (prefix + "scale").c_str(), CUDNNFE_DTYPE_FLOAT, scale, &u.scale);
  cudnnfe_matmul_options_t mo;
  cudnnfe_matmul_options_init(&mo);
  const std::string mm = prefix + "mm";
  mo.name = mm.c_str();
  int64_t prod = 0;
  cudnnfe_graph_add_matmul(g, u.a, u.b, &mo, &prod);
  cudnnfe_pointwise_options_t po;
  cudnnfe_pointwise_options_init(&po);
  const std::string pw = prefix + "scale_op";
  po.name = pw.c_str();
  cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_MUL, prod, u.scale, 0, &po, &u.c);
  cudnnfe_tensor_set_output(g, u.c, 1);
  return u;
}

cudnnfe_build_options_t cpu_options() {
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.target = CUDNNFE_TARGET_CPU_REFERENCE;
  return o;
}

std::string fingerprint(cudnnfe_graph_t *g) {
  char buffer[CUDNNFE_FINGERPRINT_SIZE] = {};
  if (cudnnfe_graph_get_fingerprint(g, buffer, sizeof(buffer)) != CUDNNFE_STATUS_OK) return "";
  return buffer;
}

std::string serialize_plan(cudnnfe_graph_t *g) {
  size_t size = 0;
  if (cudnnfe_graph_serialize_plan(g, nullptr, 0, &size) != CUDNNFE_STATUS_OK) return "";
  std::string blob(size, '\0');
  if (cudnnfe_graph_serialize_plan(g, blob.data(), blob.size(), &size) != CUDNNFE_STATUS_OK)
    return "";
  return blob;
}

std::string graph_json(cudnnfe_graph_t *g) {
  size_t size = 0;
  cudnnfe_graph_serialize(g, nullptr, 0, &size);
  std::string json(size, '\0');
  cudnnfe_graph_serialize(g, json.data(), json.size(), &size);
  return json;
}

// The blob's checksum as docs/plans.md defines it (FNV-1a, 64 bits).
uint64_t fnv1a64(const std::string &s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// A whole blob around `payload`, with a correct header.
std::string wrap(const std::string &payload) {
  return "CUDNNFE-PLAN 1 " + std::to_string(payload.size()) + " " + hex16(fnv1a64(payload)) + "\n" +
         payload;
}

std::string payload_of(const std::string &blob) {
  return blob.substr(blob.find('\n') + 1);
}

// The fields of a plan blob payload as raw JSON text, written out by hand
// from docs/plans.md; tests change one at a time.
struct Payload {
  std::string format = "\"cudnnfe.plan\"";
  std::string version = "1";
  std::string target = "\"CPU_REFERENCE\"";
  std::string fingerprint;
  std::string cache_key = "\"\"";
  std::string build_target = "\"AUTO\"";
  std::string heur_modes = "[\"A\", \"FALLBACK\"]";
  std::string policy = "\"HEURISTICS_CHOICE\"";
  std::string max_plans = "0";
  std::string exclude_engines = "[]";
  std::string exclude_numerical_notes = "[]";
  bool gpu = false;
  std::string cudnn_version = "90100";
  std::string sm = "75";
  std::string engine_id = "0";
  std::string knobs = "[]";
  std::string plan_name = "\"eng0\"";
  std::string time_ms = "-1";
  std::string timings = "[]";
  std::string graph;

  std::string text() const {
    std::string s =
        "{\"format\": " + format + ", \"version\": " + version +
        ", \"library_version\": 100, \"target\": " + target + ", \"fingerprint\": " + fingerprint +
        ", \"cache_key\": " + cache_key + ", \"build_options\": {\"target\": " + build_target +
        ", \"heur_modes\": " + heur_modes + ", \"policy\": " + policy +
        ", \"max_workspace_size\": -1, \"exclude_numerical_notes\": " + exclude_numerical_notes +
        ", \"exclude_behavior_notes\": [], \"require_behavior_notes\": []"
        ", \"exclude_engines\": " +
        exclude_engines + ", \"max_plans\": " + max_plans + "}";
    if (gpu)
      s += ", \"cudnn_version\": " + cudnn_version +
           ", \"device\": {\"name\": \"Faked GPU\", \"sm\": " + sm +
           "}, \"plan\": {\"name\": " + plan_name + ", \"engine_id\": " + engine_id +
           ", \"knobs\": " + knobs +
           ", \"workspace_size\": 0, \"numerical_notes\": [], \"behavior_notes\": []}";
    s += ", \"autotune\": {\"chosen\": false, \"time_ms\": " + time_ms +
         ", \"timings\": " + timings + "}, \"graph\": " + graph + "}";
    return s;
  }
};

// A built CPU graph and a payload describing it.
struct Fixture {
  Graph graph;
  Uids uids;
  Payload payload;
  Fixture() {
    uids = add_matmul_graph(graph, "fx_");
    cudnnfe_build_options_t o = cpu_options();
    cudnnfe_graph_build(graph, nullptr, &o);
    payload.fingerprint = "\"" + fingerprint(graph) + "\"";
    payload.graph = graph_json(graph);
  }
};

// Loads `blob` into a fresh graph; returns the status and checks that a
// failure leaves the graph empty and unbuilt.
cudnnfe_status_t load(const std::string &blob, int rebuild = 0) {
  Graph g;
  cudnnfe_plan_load_options_t o;
  cudnnfe_plan_load_options_init(&o);
  o.rebuild_on_mismatch = rebuild;
  const cudnnfe_status_t status =
      cudnnfe_graph_deserialize_plan(g, nullptr, blob.data(), blob.size(), &o);
  if (status != CUDNNFE_STATUS_OK) {
    size_t tensors = 1;
    int32_t built = 1;
    cudnnfe_graph_get_tensor_count(g, &tensors);
    cudnnfe_graph_is_built(g, &built);
    if (tensors != 0 || built != 0) {
      std::printf("  a failed load left %zu tensors, built=%d\n", tensors, built);
      ++testing::state().failures;
    }
  }
  return status;
}

// Runs c = (a @ b) * scale on the CPU reference; returns c.
std::vector<float> run_cpu(cudnnfe_graph_t *g, const Uids &u, int64_t m = 4, int64_t k = 8,
                           int64_t n = 6) {
  std::vector<float> a(m * k), b(k * n), c(m * n, -1.0f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.125f * static_cast<float>(i % 5) - 0.25f;
  Handle h;
  cudnnfe_binding_t bindings[] = {{u.a, a.data()}, {u.b, b.data()}, {u.c, c.data()}};
  if (cudnnfe_graph_execute(g, h, bindings, 3, nullptr, 0, nullptr) != CUDNNFE_STATUS_OK) {
    std::printf("  execute failed: %s\n", cudnnfe_handle_last_error(h));
    ++testing::state().failures;
  }
  return c;
}

}  // namespace

// ---------------------------------------------------------------------------
// Build options

TEST(build_options_defaults) {
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  CHECK(o.struct_size == sizeof(o));
  CHECK(o.policy == CUDNNFE_BUILD_POLICY_HEURISTICS_CHOICE);
  CHECK(o.max_workspace_size == -1);
  CHECK(o.exclude_numerical_notes == 0 && o.exclude_behavior_notes == 0);
  CHECK(o.require_behavior_notes == 0 && o.num_exclude_engines == 0 && !o.exclude_engines);
  CHECK(o.max_plans == 0 && o.disable_plan_cache == 0 && !o.plan_cache_dir);
  cudnnfe_autotune_options_t a;
  cudnnfe_autotune_options_init(&a);
  CHECK(a.struct_size == sizeof(a) && a.warmup_iterations >= 0);
  CHECK(a.min_iterations >= 1 && a.max_iterations >= a.min_iterations);
  CHECK(a.tolerance > 0 && a.max_ms_per_plan > 0);
  cudnnfe_plan_load_options_t l;
  cudnnfe_plan_load_options_init(&l);
  CHECK(l.struct_size == sizeof(l) && l.rebuild_on_mismatch == 0);
}

TEST(build_options_are_validated) {
  const int64_t bad_engine[] = {-3};
  struct Case {
    const char *needle;
    void (*apply)(cudnnfe_build_options_t &, const int64_t *);
  };
  const Case cases[] = {
      {"policy", [](cudnnfe_build_options_t &o, const int64_t *) { o.policy = 7; }},
      {"max_workspace_size",
       [](cudnnfe_build_options_t &o, const int64_t *) { o.max_workspace_size = -2; }},
      {"exclude_numerical_notes",
       [](cudnnfe_build_options_t &o, const int64_t *) { o.exclude_numerical_notes = 1u << 20; }},
      {"exclude_behavior_notes",
       [](cudnnfe_build_options_t &o, const int64_t *) { o.exclude_behavior_notes = 1u << 12; }},
      {"require_behavior_notes",
       [](cudnnfe_build_options_t &o, const int64_t *) { o.require_behavior_notes = 1u << 31; }},
      {"both excluded and required",
       [](cudnnfe_build_options_t &o, const int64_t *) {
         o.exclude_behavior_notes = o.require_behavior_notes =
             CUDNNFE_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
       }},
      {"exclude_engines is NULL",
       [](cudnnfe_build_options_t &o, const int64_t *) { o.num_exclude_engines = 1; }},
      {"num_exclude_engines",
       [](cudnnfe_build_options_t &o, const int64_t *e) {
         o.num_exclude_engines = 300;
         o.exclude_engines = e;
       }},
      {"engine ids are >= 0",
       [](cudnnfe_build_options_t &o, const int64_t *e) {
         o.num_exclude_engines = 1;
         o.exclude_engines = e;
       }},
      {"max_plans", [](cudnnfe_build_options_t &o, const int64_t *) { o.max_plans = -1; }},
      {"disable_plan_cache",
       [](cudnnfe_build_options_t &o, const int64_t *) { o.disable_plan_cache = 2; }},
  };
  for (const Case &c : cases) {
    Graph g;
    add_matmul_graph(g, "");
    cudnnfe_build_options_t o = cpu_options();
    c.apply(o, bad_engine);
    CHECK_FAILS(cudnnfe_graph_build(g, nullptr, &o), CUDNNFE_STATUS_INVALID_ARGUMENT, c.needle,
                "build options");
    int32_t built = 1;
    cudnnfe_graph_is_built(g, &built);
    CHECK(built == 0);
  }
}

TEST(build_options_old_struct_size_keeps_defaults) {
  // A caller compiled against the 0.1 header: the struct ends at heur_modes.
  Graph g;
  Uids u = add_matmul_graph(g, "");
  cudnnfe_build_options_t o = cpu_options();
  o.struct_size = offsetof(cudnnfe_build_options_t, policy);
  o.policy = 99;  // beyond the old size: must be ignored
  REQUIRE_OK(cudnnfe_graph_build(g, nullptr, &o));
  std::vector<float> c = run_cpu(g, u);
  CHECK(c[0] != -1.0f);
}

TEST(valid_plan_options_build_on_cpu) {
  Graph g;
  add_matmul_graph(g, "");
  const int64_t engines[] = {3, 1, 3};
  cudnnfe_build_options_t o = cpu_options();
  o.policy = CUDNNFE_BUILD_POLICY_ALL;
  o.max_workspace_size = 0;
  o.exclude_numerical_notes = CUDNNFE_NUMERICAL_NOTE_ALL;
  o.exclude_behavior_notes = CUDNNFE_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
  o.require_behavior_notes = CUDNNFE_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API;
  o.num_exclude_engines = 3;
  o.exclude_engines = engines;
  o.max_plans = 4;
  o.plan_cache_dir = "";
  CHECK_OK(cudnnfe_graph_build(g, nullptr, &o));
}

// ---------------------------------------------------------------------------
// Plan queries on the CPU reference

TEST(plan_queries_need_a_built_graph) {
  Graph g;
  add_matmul_graph(g, "");
  int64_t count = 0;
  cudnnfe_plan_info_t info;
  cudnnfe_plan_info_init(&info);
  cudnnfe_build_info_t build;
  cudnnfe_build_info_init(&build);
  size_t size = 0;
  CHECK_FAILS(cudnnfe_graph_get_plan_count(g, &count), CUDNNFE_STATUS_WRONG_STATE, "not built");
  CHECK_FAILS(cudnnfe_graph_get_plan_info(g, 0, &info), CUDNNFE_STATUS_WRONG_STATE, "not built");
  CHECK_FAILS(cudnnfe_graph_select_plan(g, 0), CUDNNFE_STATUS_WRONG_STATE, "not built");
  CHECK_FAILS(cudnnfe_graph_get_selected_plan(g, &count), CUDNNFE_STATUS_WRONG_STATE);
  CHECK_FAILS(cudnnfe_graph_get_build_info(g, &build), CUDNNFE_STATUS_WRONG_STATE);
  CHECK_FAILS(cudnnfe_graph_serialize_plan(g, nullptr, 0, &size), CUDNNFE_STATUS_WRONG_STATE);
  CHECK_FAILS(cudnnfe_graph_get_plan_count(nullptr, &count), CUDNNFE_STATUS_INVALID_ARGUMENT);
}

TEST(cpu_reference_has_one_plan) {
  Graph g;
  add_matmul_graph(g, "");
  cudnnfe_build_options_t o = cpu_options();
  REQUIRE_OK(cudnnfe_graph_build(g, nullptr, &o));
  int64_t count = 0, selected = -1;
  CHECK_OK(cudnnfe_graph_get_plan_count(g, &count));
  CHECK(count == 1);
  cudnnfe_plan_info_t info;
  cudnnfe_plan_info_init(&info);
  REQUIRE_OK(cudnnfe_graph_get_plan_info(g, 0, &info));
  CHECK(std::string(info.name) == "cpu_reference");
  CHECK(info.engine_id == -1 && info.workspace_size == 0 && info.selected == 1);
  CHECK(info.autotune_time_ms == -1 && info.chosen_by_autotune == 0);
  CHECK(info.numerical_notes == 0 && info.behavior_notes == 0);
  CHECK_OK(cudnnfe_graph_select_plan(g, 0));
  CHECK_OK(cudnnfe_graph_get_selected_plan(g, &selected));
  CHECK(selected == 0);
  CHECK_FAILS(cudnnfe_graph_select_plan(g, 1), CUDNNFE_STATUS_INVALID_ARGUMENT, "out of range",
              "1 plan");
  CHECK_FAILS(cudnnfe_graph_select_plan(g, -1), CUDNNFE_STATUS_INVALID_ARGUMENT, "out of range");
  CHECK_FAILS(cudnnfe_graph_get_plan_info(g, 5, &info), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "out of range");
  CHECK_FAILS(cudnnfe_graph_get_plan_info(g, 0, nullptr), CUDNNFE_STATUS_INVALID_ARGUMENT);
  // Output structs: too large is refused, a smaller (older) one is filled
  // only as far as it goes.
  cudnnfe_plan_info_t big;
  cudnnfe_plan_info_init(&big);
  big.struct_size = sizeof(big) + 8;
  CHECK_FAILS(cudnnfe_graph_get_plan_info(g, 0, &big), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "struct_size");
  cudnnfe_plan_info_t small;
  std::memset(&small, 0x7f, sizeof(small));
  small.struct_size = offsetof(cudnnfe_plan_info_t, engine_id);
  CHECK_OK(cudnnfe_graph_get_plan_info(g, 0, &small));
  CHECK(std::string(small.name) == "cpu_reference");
  CHECK(small.engine_id == 0x7f7f7f7f7f7f7f7fll);  // untouched
}

// cudnnfe_graph_check_support: validates as build does and lists the
// configurations a build could make, building nothing; the CPU reference has
// one. What it found belongs to the graph as it was checked.
TEST(check_support_finds_configurations_without_building) {
  Graph g;
  add_matmul_graph(g, "");
  cudnnfe_plan_info_t info;
  cudnnfe_plan_info_init(&info);
  CHECK_FAILS(cudnnfe_graph_get_checked_config_info(g, 0, &info), CUDNNFE_STATUS_WRONG_STATE,
              "has not found configurations");
  cudnnfe_build_options_t o = cpu_options();
  int64_t count = 0;
  REQUIRE_OK(cudnnfe_graph_check_support(g, nullptr, &o, &count));
  CHECK(count == 1);
  int32_t built = 1;
  CHECK_OK(cudnnfe_graph_is_built(g, &built));
  CHECK(built == 0);
  REQUIRE_OK(cudnnfe_graph_get_checked_config_info(g, 0, &info));
  CHECK(std::string(info.name) == "cpu_reference");
  CHECK(info.engine_id == -1 && info.workspace_size == -1 && info.selected == 0);
  CHECK_FAILS(cudnnfe_graph_get_checked_config_info(g, 1, &info), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "out of range", "found 1");
  CHECK_FAILS(cudnnfe_graph_get_checked_config_info(g, 0, nullptr),
              CUDNNFE_STATUS_INVALID_ARGUMENT);
  CHECK_OK(cudnnfe_graph_check_support(g, nullptr, &o, nullptr));  // count may be NULL
  // A changed graph has no configurations until checked again.
  const int64_t dims[3] = {1, 8, 8};
  int64_t extra = 0, sum = 0;
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "extra", CUDNNFE_DTYPE_FLOAT, 3, dims, nullptr, &extra));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_ADD, extra, extra, 0, nullptr, &sum));
  REQUIRE_OK(cudnnfe_tensor_set_output(g, sum, 1));
  CHECK_FAILS(cudnnfe_graph_get_checked_config_info(g, 0, &info), CUDNNFE_STATUS_WRONG_STATE,
              "changed since");
  // Still buildable after a check; a built graph cannot be checked.
  REQUIRE_OK(cudnnfe_graph_build(g, nullptr, &o));
  CHECK_FAILS(cudnnfe_graph_check_support(g, nullptr, &o, &count), CUDNNFE_STATUS_WRONG_STATE);
  CHECK_FAILS(cudnnfe_graph_check_support(nullptr, nullptr, &o, &count),
              CUDNNFE_STATUS_INVALID_ARGUMENT);
}

// A malformed graph fails check_support as it fails build.
TEST(check_support_validates) {
  Graph g;
  const int64_t ad[3] = {1, 4, 8}, bd[3] = {1, 9, 4};
  int64_t a = 0, b = 0, c = 0;
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "a", CUDNNFE_DTYPE_FLOAT, 3, ad, nullptr, &a));
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "b", CUDNNFE_DTYPE_FLOAT, 3, bd, nullptr, &b));
  const cudnnfe_status_t added = cudnnfe_graph_add_matmul(g, a, b, nullptr, &c);
  if (added == CUDNNFE_STATUS_OK) {
    cudnnfe_tensor_set_output(g, c, 1);
    cudnnfe_build_options_t o = cpu_options();
    int64_t count = -1;
    CHECK(cudnnfe_graph_check_support(g, nullptr, &o, &count) != CUDNNFE_STATUS_OK);
    CHECK(count == -1);
  }
}

TEST(build_info_on_cpu) {
  Graph g;
  add_matmul_graph(g, "");
  cudnnfe_build_options_t o = cpu_options();
  REQUIRE_OK(cudnnfe_graph_build(g, nullptr, &o));
  cudnnfe_build_info_t info;
  cudnnfe_build_info_init(&info);
  REQUIRE_OK(cudnnfe_graph_get_build_info(g, &info));
  CHECK(info.source == CUDNNFE_PLAN_SOURCE_BUILT);
  CHECK(info.total_ms >= info.validate_ms && info.validate_ms >= 0);
  CHECK(info.lower_ms == 0 && info.heuristics_ms == 0 && info.plan_build_ms == 0);
}

TEST(autotune_and_cuda_graphs_need_a_gpu_plan) {
  Graph g;
  Uids u = add_matmul_graph(g, "");
  cudnnfe_build_options_t o = cpu_options();
  REQUIRE_OK(cudnnfe_graph_build(g, nullptr, &o));
  Handle h;
  CHECK_FAILS(cudnnfe_graph_autotune(g, h, nullptr, 0, nullptr, 0, nullptr, nullptr),
              CUDNNFE_STATUS_NOT_SUPPORTED, "CPU reference");
  cudnnfe_autotune_options_t a;
  cudnnfe_autotune_options_init(&a);
  a.min_iterations = 0;
  CHECK_FAILS(cudnnfe_graph_autotune(g, h, nullptr, 0, nullptr, 0, nullptr, &a),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "min_iterations");
  cudnnfe_autotune_options_init(&a);
  a.tolerance = -1;
  CHECK_FAILS(cudnnfe_graph_autotune(g, h, nullptr, 0, nullptr, 0, nullptr, &a),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "tolerance");
  cudnnfe_autotune_options_init(&a);
  a.struct_size = sizeof(a) + 1;
  CHECK_FAILS(cudnnfe_graph_autotune(g, h, nullptr, 0, nullptr, 0, nullptr, &a),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "struct_size");
  CHECK_FAILS(cudnnfe_graph_autotune(g, nullptr, nullptr, 0, nullptr, 0, nullptr, nullptr),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "handle");
  float a_buf[32] = {}, b_buf[48] = {}, c_buf[24] = {};
  cudnnfe_binding_t bindings[] = {{u.a, a_buf}, {u.b, b_buf}, {u.c, c_buf}};
  int fake_cuda_graph = 0;
  CHECK_FAILS(cudnnfe_graph_populate_cuda_graph(g, h, bindings, 3, nullptr, 0, &fake_cuda_graph),
              CUDNNFE_STATUS_NOT_SUPPORTED, "CPU reference");
  CHECK(std::strstr(cudnnfe_handle_last_error(h), "CPU reference") != nullptr);
  CHECK_FAILS(cudnnfe_graph_update_cuda_graph(g, h, bindings, 3, nullptr, 0, &fake_cuda_graph),
              CUDNNFE_STATUS_NOT_SUPPORTED, "CPU reference");
}

// ---------------------------------------------------------------------------
// Fingerprints: the graph part of the plan caches' key

TEST(fingerprint_ignores_names_and_sees_structure) {
  Graph a, b, other_dims, other_strides, other_type, other_scalar;
  add_matmul_graph(a, "first_");
  add_matmul_graph(b, "second_");
  add_matmul_graph(other_dims, "", 4, 8, 7);
  add_matmul_graph(other_strides, "", 4, 8, 6, CUDNNFE_DTYPE_FLOAT, 0.5, true);
  add_matmul_graph(other_type, "", 4, 8, 6, CUDNNFE_DTYPE_HALF);
  add_matmul_graph(other_scalar, "", 4, 8, 6, CUDNNFE_DTYPE_FLOAT, 0.25);
  const std::string fa = fingerprint(a);
  CHECK(fa.size() == 32);
  CHECK(fa.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(fa == fingerprint(a));  // deterministic
  CHECK(fa == fingerprint(b));
  CHECK(fa != fingerprint(other_dims));
  CHECK(fa != fingerprint(other_strides));
  CHECK(fa != fingerprint(other_type));
  CHECK(fa != fingerprint(other_scalar));
  // A changed UID is a different variant pack, so a different key.
  Graph renumbered;
  Uids u = add_matmul_graph(renumbered, "first_");
  CHECK_OK(cudnnfe_tensor_set_uid(renumbered, u.a, 1000));
  CHECK(fa != fingerprint(renumbered));
  // Through the graph JSON and back: the same graph, the same key.
  Graph reloaded;
  const std::string json = graph_json(a);
  REQUIRE_OK(cudnnfe_graph_deserialize(reloaded, json.data(), json.size()));
  CHECK(fa == fingerprint(reloaded));
  char small[8];
  CHECK_FAILS(cudnnfe_graph_get_fingerprint(a, small, sizeof(small)),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "CUDNNFE_FINGERPRINT_SIZE");
}

TEST(fingerprint_is_stable_across_processes) {
  Graph g;
  add_matmul_graph(g, "");
  const std::string here = fingerprint(g);
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    Graph child;
    add_matmul_graph(child, "child_");
    const std::string f = fingerprint(child);
    ssize_t written = write(fds[1], f.data(), f.size());
    _exit(written == static_cast<ssize_t>(f.size()) ? 0 : 1);
  }
  close(fds[1]);
  char buffer[64] = {};
  ssize_t n = read(fds[0], buffer, sizeof(buffer) - 1);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(n == 32);
  CHECK(here == std::string(buffer));
  // After validation the key sees resolved types, and stays put after build.
  cudnnfe_graph_validate(g);
  const std::string validated = fingerprint(g);
  cudnnfe_build_options_t o = cpu_options();
  REQUIRE_OK(cudnnfe_graph_build(g, nullptr, &o));
  CHECK(validated == fingerprint(g));
}

TEST(plan_cache_stats_and_clear) {
  cudnnfe_plan_cache_stats_t s;
  cudnnfe_plan_cache_stats_init(&s);
  REQUIRE_OK(cudnnfe_plan_cache_get_stats(&s));
  const int64_t misses = s.misses;
  Graph g;
  add_matmul_graph(g, "");
  cudnnfe_build_options_t o = cpu_options();
  REQUIRE_OK(cudnnfe_graph_build(g, nullptr, &o));
  REQUIRE_OK(cudnnfe_plan_cache_get_stats(&s));
  CHECK(s.misses == misses);  // the CPU reference is not cached
  CHECK_OK(cudnnfe_plan_cache_clear());
  REQUIRE_OK(cudnnfe_plan_cache_get_stats(&s));
  CHECK(s.entries == 0 && s.hits == 0 && s.misses == 0 && s.disk_hits == 0);
  CHECK_FAILS(cudnnfe_plan_cache_get_stats(nullptr), CUDNNFE_STATUS_INVALID_ARGUMENT);
  s.struct_size = 0;
  CHECK_FAILS(cudnnfe_plan_cache_get_stats(&s), CUDNNFE_STATUS_INVALID_ARGUMENT, "struct_size");
}

// ---------------------------------------------------------------------------
// Plan blobs

TEST(plan_blob_round_trip_on_cpu) {
  Graph g;
  Uids u = add_matmul_graph(g, "orig_");
  cudnnfe_build_options_t o = cpu_options();
  REQUIRE_OK(cudnnfe_graph_build(g, nullptr, &o));
  const std::vector<float> expected = run_cpu(g, u);
  size_t size = 0;
  REQUIRE_OK(cudnnfe_graph_serialize_plan(g, nullptr, 0, &size));
  std::string small(size - 1, '\0');
  CHECK_FAILS(cudnnfe_graph_serialize_plan(g, small.data(), small.size(), &size),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "too small");
  const std::string blob = serialize_plan(g);
  REQUIRE(!blob.empty());
  // Structure: header line, then the JSON payload it announces.
  const size_t newline = blob.find('\n');
  REQUIRE(newline != std::string::npos);
  const std::string header = blob.substr(0, newline), payload = payload_of(blob);
  CHECK(header ==
        "CUDNNFE-PLAN 1 " + std::to_string(payload.size()) + " " + hex16(fnv1a64(payload)));
  for (const char *part :
       {"\"format\": \"cudnnfe.plan\"", "\"target\": \"CPU_REFERENCE\"", "\"fingerprint\": ",
        "\"build_options\": ", "\"autotune\": ", "\"graph\": ", "\"cudnnfe.graph\"", "\"orig_mm\""})
    CHECK_MSG(payload.find(part) != std::string::npos, "payload lacks %s", part);
  CHECK(payload.find("\"plan\": ") == std::string::npos);  // no engine for the CPU

  Graph loaded;
  REQUIRE_OK(cudnnfe_graph_deserialize_plan(loaded, nullptr, blob.data(), blob.size(), nullptr));
  int32_t built = 0;
  CHECK_OK(cudnnfe_graph_is_built(loaded, &built));
  CHECK(built == 1);
  cudnnfe_target_t target = 0;
  CHECK_OK(cudnnfe_graph_get_target(loaded, &target));
  CHECK(target == CUDNNFE_TARGET_CPU_REFERENCE);
  cudnnfe_build_info_t info;
  cudnnfe_build_info_init(&info);
  CHECK_OK(cudnnfe_graph_get_build_info(loaded, &info));
  CHECK(info.source == CUDNNFE_PLAN_SOURCE_SERIALIZED);
  const char *name = nullptr;
  CHECK_OK(cudnnfe_graph_get_name(loaded, &name));
  CHECK(std::string(name) == "orig_graph");
  int64_t uid = 0;
  CHECK_OK(cudnnfe_graph_find_tensor(loaded, "orig_a", &uid));
  CHECK(uid == u.a);
  const std::vector<float> again = run_cpu(loaded, u);
  CHECK(std::memcmp(again.data(), expected.data(), again.size() * sizeof(float)) == 0);
  CHECK(serialize_plan(loaded) == blob);  // a loaded plan serializes to the same bytes

  // Only into an empty, unbuilt graph.
  CHECK_FAILS(cudnnfe_graph_deserialize_plan(loaded, nullptr, blob.data(), blob.size(), nullptr),
              CUDNNFE_STATUS_WRONG_STATE);
  Graph busy;
  add_matmul_graph(busy, "");
  CHECK_FAILS(cudnnfe_graph_deserialize_plan(busy, nullptr, blob.data(), blob.size(), nullptr),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "not empty");
  Graph empty;
  CHECK_FAILS(cudnnfe_graph_deserialize_plan(empty, nullptr, nullptr, 5, nullptr),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "NULL");
  cudnnfe_plan_load_options_t lo;
  cudnnfe_plan_load_options_init(&lo);
  lo.rebuild_on_mismatch = 2;
  CHECK_FAILS(cudnnfe_graph_deserialize_plan(empty, nullptr, blob.data(), blob.size(), &lo),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "rebuild_on_mismatch");
}

// cudnnfe_graph_deserialize takes a plan blob too: its graph description,
// unbuilt, to build with other options. A damaged blob is refused as such.
TEST(graph_deserialize_loads_a_plan_blobs_description) {
  Graph g;
  Uids u = add_matmul_graph(g, "orig_");
  cudnnfe_build_options_t o = cpu_options();
  REQUIRE_OK(cudnnfe_graph_build(g, nullptr, &o));
  const std::vector<float> expected = run_cpu(g, u);
  const std::string blob = serialize_plan(g);
  REQUIRE(!blob.empty());
  Graph loaded;
  REQUIRE_OK(cudnnfe_graph_deserialize(loaded, blob.data(), blob.size()));
  int32_t built = 1;
  CHECK_OK(cudnnfe_graph_is_built(loaded, &built));
  CHECK(built == 0);
  int64_t uid = 0;
  CHECK_OK(cudnnfe_graph_find_tensor(loaded, "orig_a", &uid));
  CHECK(uid == u.a);
  REQUIRE_OK(cudnnfe_graph_build(loaded, nullptr, &o));
  const std::vector<float> again = run_cpu(loaded, u);
  CHECK(std::memcmp(again.data(), expected.data(), again.size() * sizeof(float)) == 0);
  std::string damaged = blob;
  damaged[damaged.size() - 3] ^= 0x20;
  Graph refused;
  CHECK_FAILS(cudnnfe_graph_deserialize(refused, damaged.data(), damaged.size()),
              CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "plan blob");
}

TEST(hand_written_payload_loads) {
  // docs/plans.md is enough to write a plan by hand.
  Fixture fx;
  CHECK_OK(load(wrap(fx.payload.text())));
}

TEST(truncated_and_corrupted_blobs_are_rejected) {
  Fixture fx;
  const std::string blob = serialize_plan(fx.graph);
  REQUIRE(blob.size() > 200);
  const size_t header = blob.find('\n');
  int cases = 0;
  auto expect_bad = [&](const std::string &bytes, const char *what, const char *needle) {
    ++cases;
    const cudnnfe_status_t status = load(bytes);
    const char *message = cudnnfe_last_error();
    if (status != CUDNNFE_STATUS_BAD_SERIALIZED_DATA) {
      std::printf("  %s: got %s (%s)\n", what, cudnnfe_status_name(status), message);
      ++testing::state().failures;
    } else if (!std::strstr(message, "plan blob") || (needle && !std::strstr(message, needle))) {
      std::printf("  %s: message lacks \"plan blob\"/\"%s\": %s\n", what, needle ? needle : "",
                  message);
      ++testing::state().failures;
    }
  };
  // Truncations.
  for (size_t cut : {size_t{0}, size_t{1}, size_t{5}, header - 1, header, header + 1,
                     blob.size() / 2, blob.size() - 1})
    expect_bad(blob.substr(0, cut), "truncated", nullptr);
  // Single flipped bytes anywhere in the payload: the checksum catches them.
  for (size_t i = 1; i <= 10; ++i) {
    std::string flipped = blob;
    flipped[header + 1 + (i * 7919) % (blob.size() - header - 1)] ^= 0x20;
    expect_bad(flipped, "flipped byte", nullptr);
  }
  const std::string payload = payload_of(blob);
  const std::string sum = hex16(fnv1a64(payload)), size = std::to_string(payload.size());
  // Header damage.
  expect_bad("CUDNNFE-PLAM 1 " + size + " " + sum + "\n" + payload, "magic", "CUDNNFE-PLAN");
  expect_bad("CUDNNFE-PLAN 2 " + size + " " + sum + "\n" + payload, "version", "version 2");
  expect_bad("CUDNNFE-PLAN 1 x" + size + " " + sum + "\n" + payload, "size text", "decimal");
  expect_bad("CUDNNFE-PLAN 1 99999999999 " + sum + "\n" + payload, "huge size", "limit");
  expect_bad("CUDNNFE-PLAN 1 9999999999999 " + sum + "\n" + payload, "size too long", "too long");
  expect_bad("CUDNNFE-PLAN 1 " + size + " " + sum.substr(1) + "\n" + payload, "short checksum",
             "16 hex");
  expect_bad("CUDNNFE-PLAN 1 " + size + " " + sum + " extra\n" + payload, "extra field", nullptr);
  expect_bad("CUDNNFE-PLAN 1 " + size + "\n" + payload, "missing field", nullptr);
  expect_bad(std::string(200, 'A'), "no header line", "header");
  expect_bad(blob + "x", "trailing byte", "trailing");
  expect_bad(std::string("CUDNNFE-PLAN 1 3 ") + hex16(fnv1a64(std::string("\0\0\0", 3))) + "\n" +
                 std::string("\0\0\0", 3),
             "NUL payload", nullptr);
  // Well-formed envelopes around hostile or wrong payloads.
  expect_bad(wrap("hello"), "not JSON", nullptr);
  expect_bad(wrap("[]"), "array", "object");
  expect_bad(wrap(std::string(40, '[') + std::string(40, ']')), "deep nesting", nullptr);
  expect_bad(wrap("{\"format\": \"cudnnfe.plan\"}"), "missing keys", "missing key");
  auto mutated = [&](auto change) {
    Payload p = fx.payload;
    change(p);
    return wrap(p.text());
  };
  expect_bad(mutated([](Payload &p) { p.format = "\"cudnnfe.graph\""; }), "format", "format");
  expect_bad(mutated([](Payload &p) { p.version = "2"; }), "payload version", "version");
  expect_bad(mutated([](Payload &p) { p.target = "\"AUTO\""; }), "AUTO target", "AUTO");
  expect_bad(mutated([](Payload &p) { p.target = "\"TPU\""; }), "unknown target", "TPU");
  expect_bad(mutated([](Payload &p) { p.fingerprint = "\"xyz\""; }), "fingerprint text",
             "fingerprint");
  expect_bad(mutated([](Payload &p) { p.fingerprint = "\"" + std::string(32, 'a') + "\""; }),
             "other fingerprint", "fingerprint");
  expect_bad(mutated([](Payload &p) { p.heur_modes = "[]"; }), "no heuristics", "heur_modes");
  expect_bad(mutated([](Payload &p) { p.heur_modes = "[\"A\",\"A\",\"A\",\"A\",\"A\"]"; }),
             "five heuristics", "heur_modes");
  expect_bad(mutated([](Payload &p) { p.heur_modes = "[\"Z\"]"; }), "unknown mode", "mode");
  expect_bad(mutated([](Payload &p) { p.policy = "\"FASTEST\""; }), "policy", "policy");
  expect_bad(mutated([](Payload &p) { p.max_plans = "-1"; }), "max_plans", "max_plans");
  expect_bad(mutated([](Payload &p) {
               std::string many = "[";
               for (int i = 0; i < 300; ++i) many += (i ? ",1" : "1");
               p.exclude_engines = many + "]";
             }),
             "many engines", "exclude_engines");
  expect_bad(mutated([](Payload &p) { p.exclude_numerical_notes = "[\"MAGIC\"]"; }), "unknown note",
             "MAGIC");
  expect_bad(mutated([](Payload &p) { p.time_ms = "\"NaN\""; }), "NaN time", "time_ms");
  expect_bad(mutated([](Payload &p) { p.time_ms = "-7"; }), "negative time", "time_ms");
  expect_bad(mutated([](Payload &p) { p.timings = "[{\"plan\": 3}]"; }), "timing type", "plan");
  expect_bad(mutated([](Payload &p) { p.graph = "[]"; }), "graph not an object", "graph");
  expect_bad(
      mutated([](Payload &p) { p.graph = "{\"format\": \"cudnnfe.graph\", \"version\": 1}"; }),
      "graph missing keys", "graph");
  expect_bad(mutated([](Payload &p) {
               const size_t at = p.graph.find("\"dims\": [");
               p.graph.replace(at, 9, "\"dims\": [-4, ");
             }),
             "graph with bad dims", "graph");
  // GPU payloads: engine configuration fields are bounded and checked.
  auto gpu = [&](auto change) {
    return mutated([&](Payload &p) {
      p.target = "\"GPU\"";
      p.gpu = true;
      change(p);
    });
  };
  expect_bad(gpu([](Payload &p) { p.engine_id = "-5"; }), "negative engine", "engine_id");
  expect_bad(gpu([](Payload &p) { p.engine_id = "\"nine\""; }), "engine type", "engine_id");
  expect_bad(gpu([](Payload &p) {
               std::string many = "[";
               for (int i = 0; i < 100; ++i)
                 many += std::string(i ? "," : "") + "{\"type\": 1, \"value\": 2}";
               p.knobs = many + "]";
             }),
             "many knobs", "knobs");
  expect_bad(gpu([](Payload &p) { p.knobs = "[{\"type\": 2}]"; }), "knob without value", "value");
  expect_bad(gpu([](Payload &p) { p.plan_name = "\"eng7\""; }), "name mismatch", "name");
  expect_bad(gpu([](Payload &p) { p.sm = "0"; }), "sm 0", "sm");
  expect_bad(gpu([](Payload &p) { p.cudnn_version = "0"; }), "cudnn 0", "cudnn_version");
  CHECK_MSG(cases >= 20, "only %d cases", cases);
  std::printf("  %d corrupted or truncated blobs rejected\n", cases);
}

TEST(plan_for_another_gpu_is_refused_naming_both) {
  // A plan "made" for sm_75 with cuDNN 9.1.0: refused here whatever this
  // machine is (another GPU, another cuDNN, or none at all).
  Fixture fx;
  Payload p = fx.payload;
  p.target = "\"GPU\"";
  p.gpu = true;
  const std::string blob = wrap(p.text());
  CHECK_FAILS(load(blob), CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "Faked GPU (sm_75)", "cuDNN 9.1.0",
              "this process has", "rebuild_on_mismatch");
  // Asked to, it builds the graph again from its description instead.
  Graph g;
  cudnnfe_plan_load_options_t o;
  cudnnfe_plan_load_options_init(&o);
  o.rebuild_on_mismatch = 1;
  const cudnnfe_status_t rebuilt =
      cudnnfe_graph_deserialize_plan(g, nullptr, blob.data(), blob.size(), &o);
  int32_t devices = 0;
  cudnnfe_device_count(&devices);
  if (rebuilt == CUDNNFE_STATUS_NOT_SUPPORTED && devices > 0) {
    // On a GPU machine the rebuild targets the GPU, and cuDNN has no engine
    // for this FP32 matmul epilogue: the refusal shows the rebuild was tried.
    CHECK(std::strstr(cudnnfe_last_error(), "is not supported by cuDNN"));
    return;
  }
  REQUIRE_OK(rebuilt);
  cudnnfe_build_info_t info;
  cudnnfe_build_info_init(&info);
  CHECK_OK(cudnnfe_graph_get_build_info(g, &info));
  CHECK(info.source == CUDNNFE_PLAN_SOURCE_REBUILT);
  cudnnfe_target_t target = 0;
  CHECK_OK(cudnnfe_graph_get_target(g, &target));
  if (target == CUDNNFE_TARGET_CPU_REFERENCE) {
    const std::vector<float> expected = run_cpu(fx.graph, fx.uids);
    const std::vector<float> got = run_cpu(g, fx.uids);
    CHECK(std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)) == 0);
  }
}
