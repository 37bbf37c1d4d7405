// The GPU execute path against a stub cuDNN and CUDA runtime (tests/stub):
// a graph built for the CPU is given a GPU plan whose descriptors come from
// the stub, and the stub's counters show what each call asked of cuDNN:
// variant packs reused while the pointers stay and made again when they
// change, cudnnSetStream only for a new stream, and a bound execution made
// once and then run with no new pack, or recorded as a CUDA graph (capture
// or native population) and replayed with cudaGraphLaunch; and verify mode's
// GPU path (exec/verify.cpp: stream wait, copies back, the planted error
// written to the "device" buffer) on host memory the stub's cudaMemcpy
// copies. Runs without a GPU.
#include <dlfcn.h>

#include <cstring>
#include <memory>
#include <vector>

#include "api/objects.h"
#include "backend/descriptor.h"
#include "backend/gpu_plan.h"
#include "backend/loader.h"
#include "exec/verify.h"
#include "harness.h"
#include "stub_counters.h"
#include "stub_plan.h"

using namespace cudnnfe;

namespace {

stub_counters &dnn() {
  static stub_counters *c = [] {
    void *lib = dlopen(backend::cudnn().path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    return lib ? static_cast<stub_counters *>(dlsym(lib, "stub_counters")) : nullptr;
  }();
  return *c;
}

stub_cudart_counters &rt() {
  static stub_cudart_counters *c = [] {
    void *lib = dlopen(backend::cudart().path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    return lib ? static_cast<stub_cudart_counters *>(dlsym(lib, "stub_cudart_counters")) : nullptr;
  }();
  return *c;
}

// True when the loaded libraries are the stubs (CTest sets the variables).
bool stubs_loaded() {
  try {
    backend::cudnn();
    void *lib = dlopen(backend::cudnn().path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    return lib && dlsym(lib, "stub_counters") && backend::cudart_if_loaded();
  } catch (...) {
    return false;
  }
}

#define REQUIRE_STUBS()                                                                     \
  do {                                                                                      \
    if (!stubs_loaded())                                                                    \
      SKIP("set CUDNNFE_CUDNN_LIBRARY / CUDNNFE_CUDART_LIBRARY to tests/stub's libraries"); \
  } while (0)

// c = a * b (pointwise, [8] FLOAT) with an optional pass-by-value scale,
// built for the CPU, then given a one-candidate GPU plan from the stub.
struct StubGraph {
  cudnnfe_graph_t *g = nullptr;
  int64_t a = 0, b = 0, c = 0, scale = 0;
  explicit StubGraph(bool native_note, bool by_value = false, bool verify = false) {
    cudnnfe_graph_create(&g);
    cudnnfe_graph_set_name(g, "stub");
    const int64_t d[1] = {8}, one[1] = {1};
    cudnnfe_graph_add_tensor(g, "a", CUDNNFE_DTYPE_FLOAT, 1, d, nullptr, &a);
    cudnnfe_graph_add_tensor(g, "b", CUDNNFE_DTYPE_FLOAT, 1, d, nullptr, &b);
    int64_t ab = 0;
    cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_MUL, a, b, 0, nullptr, &ab);
    c = ab;
    if (by_value) {
      cudnnfe_graph_add_tensor(g, "scale", CUDNNFE_DTYPE_FLOAT, 1, one, nullptr, &scale);
      cudnnfe_tensor_set_pass_by_value(g, scale, 1);
      cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_MUL, ab, scale, 0, nullptr, &c);
    }
    cudnnfe_tensor_set_output(g, c, 1);
    cudnnfe_build_options_t o;
    cudnnfe_build_options_init(&o);
    o.target = CUDNNFE_TARGET_CPU_REFERENCE;
    cudnnfe_graph_build(g, nullptr, &o);
    stub::give_gpu_plan(g, native_note ? CUDNNFE_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API : 0);
    VerifySettings settings;
    settings.enabled = verify;
    attach_verifier(graph_of(g), settings);
  }
  ~StubGraph() { cudnnfe_graph_destroy(g); }
  size_t count() const { return graph_of(g).bound_uids().size(); }
};

struct TestHandle {
  cudnnfe_handle_t *h = nullptr;
  TestHandle() { cudnnfe_handle_create(&h, -1); }
  ~TestHandle() { cudnnfe_handle_destroy(h); }
};

float buffers[4][8];
void *stream_a = &buffers[3][0];
void *stream_b = &buffers[3][1];

}  // namespace

// Repeated buffers are also replayed from a CUDA graph (execute replay,
// below): the second call records the plan by stream capture (an execute
// under capture), later ones launch the graph.
TEST(execute_reuses_the_variant_pack_while_pointers_stay) {
  REQUIRE_STUBS();
  StubGraph sg(false);
  TestHandle h;
  cudnnfe_binding_t bind[3] = {{sg.a, buffers[0]}, {sg.b, buffers[1]}, {sg.c, buffers[2]}};
  const long packs = dnn().packs_created, executes = dnn().executes;
  const long launches = rt().launches;
  REQUIRE_OK(cudnnfe_graph_execute(sg.g, h.h, bind, 3, nullptr, 0, stream_a));
  REQUIRE_OK(cudnnfe_graph_execute(sg.g, h.h, bind, 3, nullptr, 0, stream_a));
  void *order[3] = {buffers[0], buffers[1], buffers[2]};
  REQUIRE_OK(cudnnfe_graph_execute_ordered(sg.g, h.h, order, 3, nullptr, 0, stream_a));
  CHECK(dnn().executes == executes + 2);  // the first, then the captured one
  CHECK(rt().launches == launches + 2);
  CHECK(dnn().packs_created == packs + 1);
  // A new output pointer: a new pack, holding it.
  float other[8];
  bind[2].data = other;
  REQUIRE_OK(cudnnfe_graph_execute(sg.g, h.h, bind, 3, nullptr, 0, stream_a));
  CHECK(dnn().packs_created == packs + 2);
  CHECK(dnn().last_count == 3);
  CHECK(dnn().last_pointers[2] == other);
  // Back to the first pointers: still cached (a few packs are kept), and
  // their graph is launched.
  bind[2].data = buffers[2];
  REQUIRE_OK(cudnnfe_graph_execute(sg.g, h.h, bind, 3, nullptr, 0, stream_a));
  CHECK(dnn().packs_created == packs + 2);
  CHECK(rt().launches == launches + 3);
  // A new workspace pointer is a new pack too.
  char ws[16];
  REQUIRE_OK(cudnnfe_graph_execute(sg.g, h.h, bind, 3, ws, sizeof(ws), stream_a));
  CHECK(dnn().packs_created == packs + 3);
}

TEST(execute_sets_the_stream_only_when_it_changes) {
  REQUIRE_STUBS();
  StubGraph sg(false);
  TestHandle h;
  cudnnfe_binding_t bind[3] = {{sg.a, buffers[0]}, {sg.b, buffers[1]}, {sg.c, buffers[2]}};
  REQUIRE_OK(cudnnfe_graph_execute(sg.g, h.h, bind, 3, nullptr, 0, stream_a));
  const long sets = dnn().set_stream;
  float other[8];
  bind[2].data = other;  // a first sight: executed on the handle's stream
  REQUIRE_OK(cudnnfe_graph_execute(sg.g, h.h, bind, 3, nullptr, 0, stream_a));
  CHECK(dnn().set_stream == sets);
  bind[2].data = buffers[2];
  REQUIRE_OK(cudnnfe_graph_execute(sg.g, h.h, bind, 3, nullptr, 0, stream_b));
  CHECK(dnn().set_stream >= sets + 1);
  // After the capture (which ran on a private stream) the handle is on
  // stream_b again: a launch there sets nothing.
  const long after_capture = dnn().set_stream;
  REQUIRE_OK(cudnnfe_graph_execute(sg.g, h.h, bind, 3, nullptr, 0, stream_b));
  CHECK(dnn().set_stream == after_capture);
  CHECK(dnn().last_stream == stream_b);
}

TEST(bound_execute_makes_its_pack_once) {
  REQUIRE_STUBS();
  StubGraph sg(false);
  TestHandle h;
  void *order[3] = {buffers[0], buffers[1], buffers[2]};
  const long packs = dnn().packs_created, executes = dnn().executes;
  cudnnfe_bound_t *bound = nullptr;
  REQUIRE_OK(cudnnfe_graph_bind(&bound, sg.g, h.h, order, 3, nullptr, 0, nullptr));
  CHECK(dnn().packs_created == packs + 1);
  CHECK(dnn().executes == executes);  // nothing runs at bind
  for (int i = 0; i < 5; ++i) CHECK_OK(cudnnfe_bound_execute(bound, stream_a));
  CHECK(dnn().executes == executes + 5);
  CHECK(dnn().packs_created == packs + 1);
  CHECK(dnn().last_pointers[0] == buffers[0] && dnn().last_pointers[2] == buffers[2]);
  cudnnfe_cuda_graph_mode_t mode = -1;
  CHECK_OK(cudnnfe_bound_get_cuda_graph_mode(bound, &mode));
  CHECK(mode == CUDNNFE_CUDA_GRAPH_OFF);
  CHECK_OK(cudnnfe_bound_destroy(bound));
}

TEST(bound_capture_records_once_and_replays) {
  REQUIRE_STUBS();
  StubGraph sg(false);
  TestHandle h;
  void *order[3] = {buffers[0], buffers[1], buffers[2]};
  const stub_cudart_counters before = rt();
  const long executes = dnn().executes;
  cudnnfe_bind_options_t o;
  cudnnfe_bind_options_init(&o);
  o.cuda_graph = CUDNNFE_CUDA_GRAPH_AUTO;  // no native note: capture
  cudnnfe_bound_t *bound = nullptr;
  REQUIRE_OK(cudnnfe_graph_bind(&bound, sg.g, h.h, order, 3, nullptr, 0, &o));
  CHECK(rt().captures == before.captures + 1);
  CHECK(rt().instantiates == before.instantiates + 1);
  CHECK(dnn().executes == executes + 2);  // a first run, then the captured one
  cudnnfe_cuda_graph_mode_t mode = -1;
  CHECK_OK(cudnnfe_bound_get_cuda_graph_mode(bound, &mode));
  CHECK(mode == CUDNNFE_CUDA_GRAPH_CAPTURE);
  for (int i = 0; i < 4; ++i) CHECK_OK(cudnnfe_bound_execute(bound, stream_b));
  CHECK(rt().launches == before.launches + 4);
  CHECK(rt().last_launch_stream == stream_b);
  CHECK(dnn().executes == executes + 2);  // replays do not call cuDNN
  CHECK_OK(cudnnfe_bound_destroy(bound));
  CHECK(rt().exec_destroys == before.exec_destroys + 1);
  // The handle's stream was put back after the capture: the next execute on
  // the same stream as before sets nothing new.
  cudnnfe_binding_t bind[3] = {{sg.a, buffers[0]}, {sg.b, buffers[1]}, {sg.c, buffers[2]}};
  REQUIRE_OK(cudnnfe_graph_execute(sg.g, h.h, bind, 3, nullptr, 0, stream_a));
  REQUIRE_OK(cudnnfe_graph_execute(sg.g, h.h, bind, 3, nullptr, 0, stream_a));  // replay made
  const long sets = dnn().set_stream;
  REQUIRE_OK(cudnnfe_graph_execute(sg.g, h.h, bind, 3, nullptr, 0, stream_a));
  CHECK(dnn().set_stream == sets);
}

// Execute replay (backend/execute_replay.h): a plan with cuDNN's native CUDA
// graph note, executed again on the same buffers, is populated once and
// launched from then on; a first sight of buffers, a plan without the note,
// a pass-by-value input and a caller's stream under capture execute as usual.
TEST(execute_replays_a_native_plan_on_repeated_buffers) {
  REQUIRE_STUBS();
  StubGraph sg(true);
  TestHandle h;
  cudnnfe_binding_t bind[3] = {{sg.a, buffers[0]}, {sg.b, buffers[1]}, {sg.c, buffers[2]}};
  const long executes = dnn().executes, populates = dnn().populates;
  const long launches = rt().launches, instantiates = rt().instantiates;
  REQUIRE_OK(cudnnfe_graph_execute(sg.g, h.h, bind, 3, nullptr, 0, stream_a));
  CHECK(dnn().executes == executes + 1);
  CHECK(rt().launches == launches);
  REQUIRE_OK(cudnnfe_graph_execute(sg.g, h.h, bind, 3, nullptr, 0, stream_a));
  CHECK(dnn().executes == executes + 1);
  CHECK(dnn().populates == populates + 1);
  CHECK(rt().instantiates == instantiates + 1);
  CHECK(rt().launches == launches + 1);
  CHECK(rt().last_launch_stream == stream_a);
  void *order[3] = {buffers[0], buffers[1], buffers[2]};
  REQUIRE_OK(cudnnfe_graph_execute_ordered(sg.g, h.h, order, 3, nullptr, 0, stream_b));
  CHECK(rt().launches == launches + 2);  // any stream: the graph is launched on it
  CHECK(rt().last_launch_stream == stream_b);
  CHECK(dnn().executes == executes + 1);
  // Other output buffer: executed (first sight), then launched from its own graph.
  float other[8];
  bind[2].data = other;
  REQUIRE_OK(cudnnfe_graph_execute(sg.g, h.h, bind, 3, nullptr, 0, stream_a));
  CHECK(dnn().executes == executes + 2);
  REQUIRE_OK(cudnnfe_graph_execute(sg.g, h.h, bind, 3, nullptr, 0, stream_a));
  CHECK(dnn().populates == populates + 2);
  CHECK(rt().launches == launches + 3);
  // The first buffers still have theirs.
  bind[2].data = buffers[2];
  REQUIRE_OK(cudnnfe_graph_execute(sg.g, h.h, bind, 3, nullptr, 0, stream_a));
  CHECK(rt().launches == launches + 4);
  CHECK(dnn().populates == populates + 2);
  // The caller is capturing its stream: cuDNN's own work goes into its graph.
  rt().capturing = stream_b;
  REQUIRE_OK(cudnnfe_graph_execute(sg.g, h.h, bind, 3, nullptr, 0, stream_b));
  rt().capturing = nullptr;
  CHECK(dnn().executes == executes + 3);
  CHECK(rt().launches == launches + 4);
}

TEST(execute_replays_by_capture_without_the_note_but_not_with_a_pass_by_value_input) {
  REQUIRE_STUBS();
  TestHandle h;
  const long populates = dnn().populates;
  {
    StubGraph plain(false);
    cudnnfe_binding_t bind[3] = {
        {plain.a, buffers[0]}, {plain.b, buffers[1]}, {plain.c, buffers[2]}};
    const long executes = dnn().executes, captures = rt().captures, launches = rt().launches;
    for (int i = 0; i < 3; ++i)
      REQUIRE_OK(cudnnfe_graph_execute(plain.g, h.h, bind, 3, nullptr, 0, stream_a));
    CHECK(dnn().executes == executes + 2);  // the first, then the captured one
    CHECK(rt().captures == captures + 1);
    CHECK(rt().launches == launches + 2);
    CHECK(rt().last_launch_stream == stream_a);
    CHECK(dnn().populates == populates);  // no native note: never populated
  }
  {
    // A capture that fails (invalidated) leaves the work to cudnnBackendExecute
    // on the caller's stream, and is not tried again for these buffers.
    StubGraph plain(false);
    cudnnfe_binding_t bind[3] = {
        {plain.a, buffers[0]}, {plain.b, buffers[1]}, {plain.c, buffers[2]}};
    const long executes = dnn().executes, captures = rt().captures, launches = rt().launches;
    rt().fail_end_capture = 1;
    for (int i = 0; i < 3; ++i)
      CHECK_OK(cudnnfe_graph_execute(plain.g, h.h, bind, 3, nullptr, 0, stream_b));
    rt().fail_end_capture = 0;
    CHECK(rt().captures == captures + 1);
    CHECK(rt().launches == launches);
    CHECK(dnn().executes == executes + 4);  // 3 real ones and the failed capture's
    CHECK(dnn().last_stream == stream_b);
  }
  StubGraph by_value(true, true);
  float scale = 2.0f;
  cudnnfe_binding_t bind[4] = {{by_value.a, buffers[0]},
                               {by_value.b, buffers[1]},
                               {by_value.c, buffers[2]},
                               {by_value.scale, &scale}};
  const long executes = dnn().executes, launches = rt().launches;
  for (int i = 0; i < 3; ++i)
    REQUIRE_OK(cudnnfe_graph_execute(by_value.g, h.h, bind, 4, nullptr, 0, stream_a));
  CHECK(dnn().executes == executes + 3);
  CHECK(dnn().populates == populates);
  CHECK(rt().launches == launches);
}

TEST(bound_native_population_where_the_plan_supports_it) {
  REQUIRE_STUBS();
  void *order[3] = {buffers[0], buffers[1], buffers[2]};
  TestHandle h;
  cudnnfe_bind_options_t o;
  cudnnfe_bind_options_init(&o);
  {
    StubGraph sg(true);
    o.cuda_graph = CUDNNFE_CUDA_GRAPH_AUTO;
    const long populates = dnn().populates, captures = rt().captures;
    cudnnfe_bound_t *bound = nullptr;
    REQUIRE_OK(cudnnfe_graph_bind(&bound, sg.g, h.h, order, 3, nullptr, 0, &o));
    CHECK(dnn().populates == populates + 1);
    CHECK(rt().captures == captures);
    cudnnfe_cuda_graph_mode_t mode = -1;
    CHECK_OK(cudnnfe_bound_get_cuda_graph_mode(bound, &mode));
    CHECK(mode == CUDNNFE_CUDA_GRAPH_NATIVE);
    const long launches = rt().launches;
    CHECK_OK(cudnnfe_bound_execute(bound, stream_a));
    CHECK(rt().launches == launches + 1);
    cudnnfe_bound_destroy(bound);
  }
  StubGraph plain(false);
  o.cuda_graph = CUDNNFE_CUDA_GRAPH_NATIVE;
  cudnnfe_bound_t *bound = nullptr;
  CHECK_FAILS(cudnnfe_graph_bind(&bound, plain.g, h.h, order, 3, nullptr, 0, &o),
              CUDNNFE_STATUS_NOT_SUPPORTED, "stub_plan", "SUPPORTS_CUDA_GRAPH_NATIVE_API");
  CHECK(bound == nullptr);
}

TEST(bound_cuda_graph_refused_for_pass_by_value) {
  REQUIRE_STUBS();
  StubGraph sg(false, true);
  TestHandle h;
  float scale = 2.0f;
  std::vector<void *> order;
  for (int64_t uid : graph_of(sg.g).bound_uids())
    order.push_back(uid == sg.a   ? static_cast<void *>(buffers[0])
                    : uid == sg.b ? static_cast<void *>(buffers[1])
                    : uid == sg.c ? static_cast<void *>(buffers[2])
                                  : static_cast<void *>(&scale));
  cudnnfe_bind_options_t o;
  cudnnfe_bind_options_init(&o);
  cudnnfe_bound_t *bound = nullptr;
  for (cudnnfe_cuda_graph_mode_t m :
       {CUDNNFE_CUDA_GRAPH_NATIVE, CUDNNFE_CUDA_GRAPH_CAPTURE, CUDNNFE_CUDA_GRAPH_AUTO}) {
    o.cuda_graph = m;
    CHECK_FAILS(cudnnfe_graph_bind(&bound, sg.g, h.h, order.data(), order.size(), nullptr, 0, &o),
                CUDNNFE_STATUS_NOT_SUPPORTED, "tensor \"scale\"", "pass-by-value",
                "CUDNNFE_CUDA_GRAPH_OFF");
  }
  // Plain bound execution passes the host pointer on: cuDNN reads it per run.
  o.cuda_graph = CUDNNFE_CUDA_GRAPH_OFF;
  REQUIRE_OK(cudnnfe_graph_bind(&bound, sg.g, h.h, order.data(), order.size(), nullptr, 0, &o));
  CHECK_OK(cudnnfe_bound_execute(bound, nullptr));
  bool has_scale = false;
  for (int64_t i = 0; i < dnn().last_count; ++i) has_scale |= dnn().last_pointers[i] == &scale;
  CHECK(has_scale);
  cudnnfe_bound_destroy(bound);
}

TEST(bound_execution_refuses_a_replaced_plan) {
  REQUIRE_STUBS();
  StubGraph sg(false);
  TestHandle h;
  void *order[3] = {buffers[0], buffers[1], buffers[2]};
  cudnnfe_bound_t *bound = nullptr;
  REQUIRE_OK(cudnnfe_graph_bind(&bound, sg.g, h.h, order, 3, nullptr, 0, nullptr));
  // The C API builds a graph once; a plan replaced inside the library (as
  // plan loading does on an empty graph) must not be run by old bindings.
  Graph &graph = graph_of(sg.g);
  const auto &old = dynamic_cast<const backend::GpuPlan &>(graph.plan());
  graph.set_plan(std::make_unique<backend::GpuPlan>(old.shared_set(), 0));
  CHECK_FAILS(cudnnfe_bound_execute(bound, nullptr), CUDNNFE_STATUS_WRONG_STATE,
              "graph \"stub\" was built again", "bind again");
  CHECK_OK(cudnnfe_bound_destroy(bound));
}

// ---------------------------------------------------------------------------
// Verify mode on the GPU path. The stub runs nothing, so the "device"
// output holds what the test put there: the right product passes, anything
// else is cuDNN computing a wrong result.

namespace {

struct VerifyBuffers {
  float a[8], b[8], c[8];
  float scale = 2.0f;
  explicit VerifyBuffers(float factor) {
    for (int i = 0; i < 8; ++i) {
      a[i] = 0.5f * static_cast<float>(i + 1);
      b[i] = 1.0f - 0.25f * static_cast<float>(i);
      c[i] = a[i] * b[i] * factor;
    }
  }
};

}  // namespace

TEST(verify_passes_a_right_gpu_result_and_catches_a_wrong_one) {
  REQUIRE_STUBS();
  TestHandle h;
  {
    StubGraph sg(false, false, true);
    VerifyBuffers v(1.0f);
    cudnnfe_binding_t bind[3] = {{sg.a, v.a}, {sg.b, v.b}, {sg.c, v.c}};
    CHECK_OK(cudnnfe_graph_execute(sg.g, h.h, bind, 3, nullptr, 0, stream_a));
  }
  StubGraph sg(false, false, true);
  VerifyBuffers v(1.0f);
  v.c[5] = 7.0f;  // "cuDNN" got element 5 wrong
  cudnnfe_binding_t bind[3] = {{sg.a, v.a}, {sg.b, v.b}, {sg.c, v.c}};
  CHECK_FAILS(cudnnfe_graph_execute(sg.g, h.h, bind, 3, nullptr, 0, stream_a),
              CUDNNFE_STATUS_VERIFY_FAILED, "graph \"stub\"", "pointwise", "1 of 8",
              "index [5]: got 7, expected -0.75", "plan stub_plan", "GPU ");
}

TEST(verify_plants_its_test_error_in_the_device_buffer) {
  REQUIRE_STUBS();
  TestHandle h;
  StubGraph sg(false, true, true);  // with a pass-by-value scale (read from host memory)
  VerifyBuffers v(2.0f);
  std::vector<cudnnfe_binding_t> bind = {
      {sg.a, v.a}, {sg.b, v.b}, {sg.c, v.c}, {sg.scale, &v.scale}};
  setenv("CUDNNFE_VERIFY_TEST_CORRUPT", "1", 1);
  const cudnnfe_status_t s =
      cudnnfe_graph_execute(sg.g, h.h, bind.data(), bind.size(), nullptr, 0, stream_a);
  unsetenv("CUDNNFE_VERIFY_TEST_CORRUPT");
  CHECK(s == CUDNNFE_STATUS_VERIFY_FAILED);
  CHECK(v.c[0] < -100.0f);  // the hook wrote through cudaMemcpy
  CHECK(std::strstr(cudnnfe_handle_last_error(h.h), "index [0]") != nullptr);
  // The plan failed: later executes report it again, without a new check.
  v.c[0] = v.a[0] * v.b[0] * 2.0f;
  CHECK_FAILS(cudnnfe_graph_execute(sg.g, h.h, bind.data(), bind.size(), nullptr, 0, stream_a),
              CUDNNFE_STATUS_VERIFY_FAILED, "reported again");
}

TEST(verify_checks_a_captured_cuda_graph_at_its_first_replay) {
  REQUIRE_STUBS();
  TestHandle h;
  StubGraph sg(false, false, true);
  VerifyBuffers v(1.0f);
  void *order[3] = {v.a, v.b, v.c};
  cudnnfe_bind_options_t o;
  cudnnfe_bind_options_init(&o);
  o.cuda_graph = CUDNNFE_CUDA_GRAPH_CAPTURE;
  cudnnfe_bound_t *bound = nullptr;
  REQUIRE_OK(cudnnfe_graph_bind(&bound, sg.g, h.h, order, 3, nullptr, 0, &o));
  const long launches = rt().launches;
  CHECK_OK(cudnnfe_bound_execute(bound, stream_b));
  CHECK(rt().launches == launches + 1);
  v.c[3] = 100.0f;  // checked once: a later wrong result is not seen
  CHECK_OK(cudnnfe_bound_execute(bound, stream_b));
  cudnnfe_bound_destroy(bound);
  // A new bound execution checks its own first run.
  REQUIRE_OK(cudnnfe_graph_bind(&bound, sg.g, h.h, order, 3, nullptr, 0, &o));
  CHECK_FAILS(cudnnfe_bound_execute(bound, stream_b), CUDNNFE_STATUS_VERIFY_FAILED, "index [3]");
  cudnnfe_bound_destroy(bound);
}
