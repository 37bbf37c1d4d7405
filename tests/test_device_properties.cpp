// Device properties and building without a GPU (cudnnfe_device_properties_*,
// build option device_properties): bad input on any machine; a convolution
// built from stored properties wherever cuDNN loads (no GPU needed); and, on
// a GPU, properties of device 0 round-tripped through JSON, a build from
// them, its plan blob loaded with a handle, run and compared with the CPU
// reference. Plan blobs themselves are test_plans.cpp's and
// test_gpu_plans.cpp's.
// Uses the experimental part of the header (include/cudnnfe/cudnnfe.h).
#define CUDNNFE_EXPERIMENTAL
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_tensor_data.h"
#include "harness.h"

namespace {

// The properties of an H100 SXM as cuDNN 9.28 writes them (fields cuDNN
// requires, values from the card's public specifications), for builds on a
// machine without that GPU.
const char kH100Json[] =
    R"({"maxGridSize":[2147483647,65535,65535],"maxBlockSize":[1024,1024,64],)"
    R"("regsPerBlock":65536,"multiProcessorCount":132,"smCountOrigin":0,"warpSize":32,)"
    R"("maxSharedMemoryPerBlock":49152,"maxSharedMemoryPerBlockOptin":232448,)"
    R"("oversizedSharedMemoryPerBlock":0,"reservedSharedMemoryPerBlock":1024,)"
    R"("maxRegistersPerSM":65536,"maxCtasPerSM":32,"maxThreadsPerBlock":1024,)"
    R"("maxThreadsPerSM":2048,"pciDeviceId":0,"isTccDriver":0,"supportCoopLaunch":1,)"
    R"("smClockRateKHz":1980000,"memClockRateKHz":2619000,"memoryBusWidth":5120,)"
    R"("l2CacheSize":52428800,"deviceName":"NVIDIA H100 80GB HBM3","deviceVer":900,)"
    R"("driverVer":12080,"cudaDeviceId":0,"totalGlobalMem":85031714816})";

struct Properties {
  cudnnfe_device_properties_t *p = nullptr;
  ~Properties() { cudnnfe_device_properties_destroy(p); }
  operator cudnnfe_device_properties_t *() const { return p; }
};

std::string serialized(const cudnnfe_device_properties_t *p) {
  size_t size = 0;
  if (cudnnfe_device_properties_serialize(p, nullptr, 0, &size) != CUDNNFE_STATUS_OK) return "";
  std::string json(size, '\0');
  if (cudnnfe_device_properties_serialize(p, &json[0], size, &size) != CUDNNFE_STATUS_OK) return "";
  return json;
}

std::string plan_blob(cudnnfe_graph_t *g) {
  size_t size = 0;
  if (cudnnfe_graph_serialize_plan(g, nullptr, 0, &size) != CUDNNFE_STATUS_OK) return "";
  std::string blob(size, '\0');
  if (cudnnfe_graph_serialize_plan(g, &blob[0], size, &size) != CUDNNFE_STATUS_OK) return "";
  return blob;
}

struct Conv {
  int64_t x = 0, w = 0, y = 0;
};

// y = conv(x, w), FLOAT, NHWC x [2, 8, 10, 10], KRSC w [16, 8, 3, 3], padding 1.
Conv add_conv(cudnnfe_graph_t *g) {
  Conv c;
  const int64_t xd[] = {2, 8, 10, 10}, xs[] = {800, 1, 80, 8};
  const int64_t wd[] = {16, 8, 3, 3}, ws[] = {72, 1, 24, 8};
  cudnnfe_graph_set_name(g, "deviceless_conv");
  cudnnfe_graph_set_io_dtype(g, CUDNNFE_DTYPE_FLOAT);
  cudnnfe_graph_set_compute_dtype(g, CUDNNFE_DTYPE_FLOAT);
  cudnnfe_graph_add_tensor(g, "X", CUDNNFE_DTYPE_FLOAT, 4, xd, xs, &c.x);
  cudnnfe_graph_add_tensor(g, "W", CUDNNFE_DTYPE_FLOAT, 4, wd, ws, &c.w);
  cudnnfe_conv_options_t o;
  cudnnfe_conv_options_init(&o);
  o.pre_padding[0] = o.pre_padding[1] = 1;
  o.post_padding[0] = o.post_padding[1] = 1;
  cudnnfe_graph_add_conv_fprop(g, c.x, c.w, &o, &c.y);
  cudnnfe_tensor_set_output(g, c.y, 1);
  return c;
}

cudnnfe_build_options_t deviceless(const cudnnfe_device_properties_t *p) {
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.device_properties = p;
  return o;
}

// Properties from kH100Json, or a skip reason where this machine's cuDNN
// cannot make them (absent, or older than device properties).
bool stored_properties(Properties &props, std::string *skip) {
  const cudnnfe_status_t s =
      cudnnfe_device_properties_create_from_json(&props.p, kH100Json, sizeof(kH100Json) - 1);
  if (s == CUDNNFE_STATUS_OK) return true;
  *skip = std::string("cuDNN cannot make device properties here: ") + cudnnfe_last_error();
  return false;
}

}  // namespace

TEST(device_properties_bad_input) {
  cudnnfe_device_properties_t *p = nullptr;
  CHECK_FAILS(cudnnfe_device_properties_create(nullptr, 0), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "properties");
  CHECK_FAILS(cudnnfe_device_properties_create_from_json(nullptr, "{}", 2),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "properties");
  CHECK_FAILS(cudnnfe_device_properties_create_from_json(&p, nullptr, 4),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "data is NULL");
  CHECK_FAILS(cudnnfe_device_properties_create_from_json(&p, "", 0),
              CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "no JSON");
  const std::string garbage = "deviceVer=900";
  CHECK_FAILS(cudnnfe_device_properties_create_from_json(&p, garbage.data(), garbage.size()),
              CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "device properties", "not JSON");
  const std::string array = "[900, 132]";
  CHECK_FAILS(cudnnfe_device_properties_create_from_json(&p, array.data(), array.size()),
              CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "not an object");
  const std::string cut(kH100Json, 40);
  CHECK_FAILS(cudnnfe_device_properties_create_from_json(&p, cut.data(), cut.size()),
              CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "not JSON");
  CHECK(p == nullptr);  // no output on failure
  size_t size = 0;
  CHECK_FAILS(cudnnfe_device_properties_serialize(nullptr, nullptr, 0, &size),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "device properties is NULL");
  auto *foreign = reinterpret_cast<cudnnfe_device_properties_t *>(&size);
  CHECK_FAILS(cudnnfe_device_properties_serialize(foreign, nullptr, 0, &size),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "not a live cudnnfe device properties");
  CHECK_FAILS(cudnnfe_device_properties_destroy(foreign), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "not a live cudnnfe device properties");
  CHECK_OK(cudnnfe_device_properties_destroy(nullptr));
}

TEST(device_properties_of_a_device_need_that_device) {
  cudnnfe_device_properties_t *p = nullptr;
  int64_t version = 0;
  int32_t devices = 0;
  if (cudnnfe_cudnn_version(&version) != CUDNNFE_STATUS_OK) {
    CHECK_FAILS(cudnnfe_device_properties_create(&p, 0), CUDNNFE_STATUS_CUDNN_UNAVAILABLE, "cuDNN");
  } else if (cudnnfe_device_count(&devices) != CUDNNFE_STATUS_OK || devices == 0) {
    CHECK_FAILS(cudnnfe_device_properties_create(&p, 0), CUDNNFE_STATUS_CUDNN_UNAVAILABLE,
                "no usable CUDA device", "cudnnfe_device_properties_create_from_json");
  } else {
    CHECK_FAILS(cudnnfe_device_properties_create(&p, devices), CUDNNFE_STATUS_INVALID_ARGUMENT,
                "does not exist");
    CHECK_FAILS(cudnnfe_device_properties_create(&p, -1), CUDNNFE_STATUS_INVALID_ARGUMENT,
                "does not exist");
  }
  CHECK(p == nullptr);
}

TEST(device_properties_need_cudnn) {
  Properties props;
  int64_t version = 0;
  const cudnnfe_status_t s =
      cudnnfe_device_properties_create_from_json(&props.p, kH100Json, sizeof(kH100Json) - 1);
  if (cudnnfe_cudnn_version(&version) != CUDNNFE_STATUS_OK) {
    CHECK(s == CUDNNFE_STATUS_CUDNN_UNAVAILABLE);
    CHECK(props.p == nullptr);
    return;
  }
  // A cuDNN without device properties is refused naming what is needed.
  if (s == CUDNNFE_STATUS_NOT_SUPPORTED) {
    CHECK_MSG(std::strstr(cudnnfe_last_error(), "9.8.0") != nullptr, "%s", cudnnfe_last_error());
    return;
  }
  CHECK_MSG(s == CUDNNFE_STATUS_OK, "%s", cudnnfe_last_error());
  // JSON that parses but that cuDNN does not take is bad data, with its reason.
  Properties partial;
  const std::string missing = R"({"deviceVer": 900})";
  CHECK_FAILS(
      cudnnfe_device_properties_create_from_json(&partial.p, missing.data(), missing.size()),
      CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "refused the JSON");
}

TEST(device_properties_build_refusals) {
  cudnnfe_graph_t *g = nullptr;
  REQUIRE_OK(cudnnfe_graph_create(&g));
  add_conv(g);
  size_t dummy = 0;
  auto *foreign = reinterpret_cast<cudnnfe_device_properties_t *>(&dummy);
  cudnnfe_build_options_t o = deviceless(foreign);
  o.target = CUDNNFE_TARGET_CPU_REFERENCE;
  CHECK_FAILS(cudnnfe_graph_build(g, nullptr, &o), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "device_properties", "CPU_REFERENCE");
  o.target = CUDNNFE_TARGET_AUTO;
  CHECK_FAILS(cudnnfe_graph_build(g, nullptr, &o), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "not a live cudnnfe device properties");
  int32_t built = 1;
  CHECK_OK(cudnnfe_graph_is_built(g, &built));
  CHECK(built == 0);
  // The CPU reference is unaffected by the new option left NULL.
  cudnnfe_build_options_t cpu;
  cudnnfe_build_options_init(&cpu);
  CHECK(cpu.device_properties == nullptr);
  cpu.target = CUDNNFE_TARGET_CPU_REFERENCE;
  CHECK_OK(cudnnfe_graph_build(g, nullptr, &cpu));
  cudnnfe_graph_destroy(g);

  Properties props;
  std::string skip;
  if (!stored_properties(props, &skip)) SKIP(skip);
  cudnnfe_handle_t *h = nullptr;
  REQUIRE_OK(cudnnfe_handle_create(&h, -1));
  REQUIRE_OK(cudnnfe_graph_create(&g));
  add_conv(g);
  o = deviceless(props);
  CHECK_FAILS(cudnnfe_graph_build(g, h, &o), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "handle and build options' device_properties");
  cudnnfe_graph_destroy(g);
  cudnnfe_handle_destroy(h);
}

// Needs cuDNN 9.8 or later, not a GPU (checked on a machine with neither
// GPU nor driver with the cuDNN 9.14 and 9.28 wheels and libcublasLt; 9.28
// also needs a stand-in libcuda.so.1: docs/plans.md).
TEST(deviceless_conv_build_from_stored_properties) {
  Properties props;
  std::string skip;
  if (!stored_properties(props, &skip)) SKIP(skip);
  const std::string json = serialized(props);
  CHECK(json.find("\"deviceVer\"") != std::string::npos);
  Properties again;
  REQUIRE_OK(cudnnfe_device_properties_create_from_json(&again.p, json.data(), json.size()));
  CHECK(serialized(again) == json);

  cudnnfe_graph_t *g = nullptr;
  REQUIRE_OK(cudnnfe_graph_create(&g));
  const Conv c = add_conv(g);
  cudnnfe_build_options_t o = deviceless(props);
  const cudnnfe_status_t s = cudnnfe_graph_build(g, nullptr, &o);
  CHECK_MSG(s == CUDNNFE_STATUS_OK, "%s", cudnnfe_graph_last_error(g));
  if (s != CUDNNFE_STATUS_OK) {
    cudnnfe_graph_destroy(g);
    return;
  }
  cudnnfe_target_t target = 0;
  CHECK_OK(cudnnfe_graph_get_target(g, &target));
  CHECK(target == CUDNNFE_TARGET_GPU);
  const char *name = nullptr;
  CHECK_OK(cudnnfe_graph_get_plan_name(g, &name));
  CHECK_MSG(std::strncmp(name, "eng", 3) == 0, "%s", name);
  // It cannot run where it was built: execute says what to do instead.
  float dummy = 0;
  cudnnfe_binding_t b[] = {{c.x, &dummy}, {c.w, &dummy}, {c.y, &dummy}};
  cudnnfe_handle_t *h = nullptr;
  REQUIRE_OK(cudnnfe_handle_create(&h, -1));
  CHECK_FAILS(cudnnfe_graph_execute(g, h, b, 3, nullptr, 0, nullptr), CUDNNFE_STATUS_WRONG_STATE,
              "built from device properties", "cudnnfe_graph_deserialize_plan");
  const std::string blob = plan_blob(g);
  CHECK(blob.find("NVIDIA H100 80GB HBM3") != std::string::npos);
  CHECK(blob.find("\"sm\": 90") != std::string::npos ||
        blob.find("\"sm\":90") != std::string::npos);
  int32_t devices = 0;
  if (cudnnfe_device_count(&devices) == CUDNNFE_STATUS_OK && devices == 0) {
    // Loading it needs the GPU it was made for.
    cudnnfe_graph_t *loaded = nullptr;
    REQUIRE_OK(cudnnfe_graph_create(&loaded));
    CHECK_FAILS(cudnnfe_graph_deserialize_plan(loaded, h, blob.data(), blob.size(), nullptr),
                CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "NVIDIA H100 80GB HBM3 (sm_90)",
                "no usable GPU");
    cudnnfe_graph_destroy(loaded);
  }
  cudnnfe_handle_destroy(h);
  cudnnfe_graph_destroy(g);
}

TEST(gpu_deviceless_build_loads_and_matches_cpu_reference) {
  std::string skip;
  if (!gpu_test::gpu_ready(&skip)) SKIP(skip);
  using namespace gpu_test;
  try {
    // Describe device 0, and build from its JSON as another machine would.
    Properties here;
    ok(cudnnfe_device_properties_create(&here.p, 0), "cudnnfe_device_properties_create");
    const std::string json = serialized(here);
    Properties props;
    ok(cudnnfe_device_properties_create_from_json(&props.p, json.data(), json.size()),
       "cudnnfe_device_properties_create_from_json");
    CHECK(serialized(props) == json);
    GraphPtr built = new_graph("deviceless_conv", CUDNNFE_DTYPE_FLOAT);
    const Conv c = add_conv(built.get());
    cudnnfe_build_options_t o = deviceless(props);
    ok(cudnnfe_graph_build(built.get(), nullptr, &o), "deviceless cudnnfe_graph_build");
    const std::string blob = plan_blob(built.get());
    REQUIRE(!blob.empty());
    built.reset();

    // On the GPU: load the blob with a handle and run it.
    GraphPtr gpu = new_graph("loaded", CUDNNFE_DTYPE_FLOAT);
    ok(cudnnfe_graph_deserialize_plan(gpu.get(), test_handle(), blob.data(), blob.size(), nullptr),
       "cudnnfe_graph_deserialize_plan");
    cudnnfe_build_info_t info;
    cudnnfe_build_info_init(&info);
    ok(cudnnfe_graph_get_build_info(gpu.get(), &info), "cudnnfe_graph_get_build_info");
    CHECK(info.source == CUDNNFE_PLAN_SOURCE_SERIALIZED);
    GraphPtr cpu = new_graph("reference", CUDNNFE_DTYPE_FLOAT);
    add_conv(cpu.get());
    cudnnfe_build_options_t co;
    cudnnfe_build_options_init(&co);
    co.target = CUDNNFE_TARGET_CPU_REFERENCE;
    ok(cudnnfe_graph_build(cpu.get(), nullptr, &co), "CPU reference build");

    std::mt19937 rng(seed_of("deviceless_conv"));
    const TensorInfo x = describe(gpu.get(), c.x), w = describe(gpu.get(), c.w),
                     y = describe(gpu.get(), c.y);
    const Bytes hx = random_bytes(x, Fill{}, rng), hw = random_bytes(w, Fill{}, rng);
    Bytes want(y.bytes), got(y.bytes);
    cudnnfe_binding_t hb[] = {{c.x, const_cast<unsigned char *>(hx.data())},
                              {c.w, const_cast<unsigned char *>(hw.data())},
                              {c.y, want.data()}};
    ok(cudnnfe_graph_execute(cpu.get(), test_handle(), hb, 3, nullptr, 0, nullptr),
       "CPU reference execute");
    gpu::DeviceBuffer dx(x.bytes), dw(w.bytes), dy(y.bytes);
    int64_t ws_size = 0;
    ok(cudnnfe_graph_get_workspace_size(gpu.get(), &ws_size), "workspace size");
    gpu::DeviceBuffer ws(static_cast<size_t>(ws_size));
    REQUIRE(dx.ok() && dw.ok() && dy.ok() && ws.ok());
    const gpu::Runtime &rt = gpu::runtime();
    rt.Memcpy(dx.get(), hx.data(), x.bytes, gpu::kHostToDevice);
    rt.Memcpy(dw.get(), hw.data(), w.bytes, gpu::kHostToDevice);
    cudnnfe_binding_t db[] = {{c.x, dx.get()}, {c.w, dw.get()}, {c.y, dy.get()}};
    ok(cudnnfe_graph_execute(gpu.get(), test_handle(), db, 3, ws.get(), ws.size(), nullptr),
       "GPU execute");
    REQUIRE(rt.DeviceSynchronize() == 0);
    rt.Memcpy(got.data(), dy.get(), y.bytes, gpu::kDeviceToHost);
    // FLOAT convolutions may use TF32 tensor cores (10-bit mantissa).
    const Errors e = compare(y, got, want, 1e-2, NonFinite::kAlwaysBad);
    CHECK_MSG(e.bad == 0 && e.compared > 0, "%s", e.first_bad.c_str());
  } catch (const Failure &f) {
    CHECK_MSG(false, "%s", f.what());
  }
}
