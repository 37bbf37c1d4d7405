// libFuzzer target: random sequences of C ABI calls with hostile arguments
// (shapes at the edges of int64, bad enums, stale and foreign pointers,
// NULLs, tiny capacities) on a few graphs and handles, built and executed
// on the CPU reference. It does not check numbers (tests/ do that).
//
// A crash, a sanitizer report, INTERNAL from any call, or a graph the
// library accepted (validate or build OK) that fails to round-trip through
// its own serializers is a bug. At exit it prints the cases and calls run.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cudnnfe/cudnnfe.h"

namespace {

uint64_t g_cases = 0;
uint64_t g_calls = 0;
uint64_t g_round_trips = 0;  // accepted graphs reloaded from their own bytes
uint64_t g_executes = 0;     // CPU executes that returned OK

void print_counts() {
  std::printf("c_abi_fuzz: %llu cases, %llu API calls (%llu round trips, %llu executes OK)\n",
              static_cast<unsigned long long>(g_cases), static_cast<unsigned long long>(g_calls),
              static_cast<unsigned long long>(g_round_trips),
              static_cast<unsigned long long>(g_executes));
}

// Counts a call and refuses INTERNAL (a bug by the header's own words).
cudnnfe_status_t checked(cudnnfe_status_t status, const char *what) {
  ++g_calls;
  if (status == CUDNNFE_STATUS_INTERNAL) {
    std::fprintf(stderr, "c_abi_fuzz: %s returned INTERNAL: %s\n", what, cudnnfe_last_error());
    std::abort();
  }
  return status;
}
#define CALL(expr) checked((expr), #expr)

// Reads the fuzzer's bytes as choices; past the end everything is 0.
class Input {
 public:
  Input(const uint8_t *data, size_t size) : data_(data), size_(size) {}
  bool done() const { return pos_ >= size_; }
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint32_t below(uint32_t n) { return n ? byte() % n : 0; }
  int64_t i64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | byte();
    return static_cast<int64_t>(v);
  }
  // A dim, stride, padding or UID: mostly small, sometimes at the edges.
  int64_t hostile() {
    static const int64_t kEdges[] = {0,
                                     -1,
                                     std::numeric_limits<int64_t>::max(),
                                     std::numeric_limits<int64_t>::min(),
                                     std::numeric_limits<int64_t>::max() / 2,
                                     int64_t{1} << 31,
                                     int64_t{1} << 32,
                                     int64_t{1} << 60,
                                     int64_t{1} << 62,
                                     (int64_t{1} << 62) + 1};
    const uint8_t kind = byte();
    if (kind < 200) return 1 + kind % 6;
    if (kind < 245) return kEdges[kind % (sizeof(kEdges) / sizeof(kEdges[0]))];
    return i64();
  }
  const char *name() {
    static const char *kNames[] = {nullptr, "", "x", "y", "w", "pointwise_0::out", "tensor1", "a"};
    return kNames[below(sizeof(kNames) / sizeof(kNames[0]))];
  }
  // Mostly FLOAT (what the CPU reference runs), sometimes any value.
  int32_t dtype() { return below(4) ? CUDNNFE_DTYPE_FLOAT : enum_value(13); }
  int32_t enum_value(int32_t valid_count) {
    const uint8_t v = byte();
    return v < 240 ? static_cast<int32_t>(v % valid_count) : static_cast<int32_t>(i64());
  }

 private:
  const uint8_t *data_;
  size_t size_;
  size_t pos_ = 0;
};

// Graphs and handles of one case; destroyed ones stay as stale pointers.
struct World {
  cudnnfe_graph_t *graphs[3] = {};
  cudnnfe_handle_t *handle = nullptr;
  std::vector<cudnnfe_graph_t *> stale_graphs;
  std::vector<cudnnfe_handle_t *> stale_handles;
  std::vector<int64_t> uids{1, 2, 3};

  // Mostly the first graph, so that sequences build up something valid.
  cudnnfe_graph_t *graph(Input &in) {
    const uint32_t pick = in.below(16);
    if (pick < 12) return graphs[0];
    if (pick < 14) return graphs[pick % 3];
    if (pick == 6 && !stale_graphs.empty()) return stale_graphs[in.below(stale_graphs.size())];
    return nullptr;
  }
  cudnnfe_handle_t *any_handle(Input &in) {
    const uint32_t pick = in.below(8);
    if (pick < 6) return handle;
    if (pick == 6 && !stale_handles.empty()) return stale_handles[in.below(stale_handles.size())];
    return nullptr;
  }
  int64_t uid(Input &in) {
    const uint32_t pick = in.below(16);
    if (pick == 0) return in.hostile();
    if (pick == 1) return 0;
    // Half the time one of the newest four: chains of ops are likely.
    if (pick < 9 && uids.size() > 3) return uids[uids.size() - 1 - in.below(4)];
    return uids[in.below(uids.size())];
  }
  void remember(cudnnfe_status_t status, int64_t uid) {
    if (status == CUDNNFE_STATUS_OK && uid != 0 && uids.size() < 64) uids.push_back(uid);
  }
};

std::vector<int64_t> hostile_dims(Input &in, int32_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n > 0 && n <= 9 ? n : 0));
  for (int64_t &d : v) d = in.hostile();
  return v;
}

// v - 1, wrapping at the bottom instead of overflowing.
int64_t minus_one(int64_t v) {
  return static_cast<int64_t>(static_cast<uint64_t>(v) - 1);
}

int32_t rank(Input &in) {
  return static_cast<int32_t>(in.below(10));  // 0 and 9 are out of range
}

void add_tensor(World &w, Input &in) {
  const int32_t n = rank(in);
  std::vector<int64_t> dims = hostile_dims(in, n), strides = hostile_dims(in, n);
  int64_t uid = 0;
  const bool packed = in.below(2);
  w.remember(CALL(cudnnfe_graph_add_tensor(
                 w.graph(in), in.name(), in.enum_value(13), n, dims.empty() ? nullptr : dims.data(),
                 packed || strides.empty() ? nullptr : strides.data(), &uid)),
             uid);
}

void add_op(World &w, Input &in) {
  cudnnfe_graph_t *g = w.graph(in);
  int64_t y = 0, extra = 0, extra2 = 0;
  cudnnfe_status_t s = CUDNNFE_STATUS_OK;
  switch (in.below(12)) {
    case 0: {
      cudnnfe_pointwise_options_t o;
      cudnnfe_pointwise_options_init(&o);
      o.name = in.name();
      s = CALL(cudnnfe_graph_add_pointwise(g, in.enum_value(64), w.uid(in), w.uid(in), w.uid(in),
                                           &o, &y));
      break;
    }
    case 1: {
      cudnnfe_reduction_options_t o;
      cudnnfe_reduction_options_init(&o);
      o.axes_mask = in.byte();
      s = CALL(cudnnfe_graph_add_reduction(g, in.enum_value(8), w.uid(in), &o, &y));
      break;
    }
    case 2: s = CALL(cudnnfe_graph_add_matmul(g, w.uid(in), w.uid(in), nullptr, &y)); break;
    case 3: {
      cudnnfe_conv_options_t o;
      cudnnfe_conv_options_init(&o);
      for (int i = 0; i < 3; ++i) {
        if (in.below(4) == 0) o.pre_padding[i] = in.hostile();
        if (in.below(4) == 0) o.post_padding[i] = in.hostile();
        if (in.below(4) == 0) o.stride[i] = in.hostile();
        if (in.below(4) == 0) o.dilation[i] = in.hostile();
      }
      const uint32_t which = in.below(3);
      const int64_t a = w.uid(in), b = w.uid(in);
      s = which == 0   ? CALL(cudnnfe_graph_add_conv_fprop(g, a, b, &o, &y))
          : which == 1 ? CALL(cudnnfe_graph_add_conv_dgrad(g, a, b, &o, &y))
                       : CALL(cudnnfe_graph_add_conv_wgrad(g, a, b, &o, &y));
      break;
    }
    case 4: {
      const int32_t n = rank(in);
      std::vector<int64_t> dims = hostile_dims(in, n);
      s = CALL(cudnnfe_graph_add_reshape(g, w.uid(in), n, dims.empty() ? nullptr : dims.data(),
                                         nullptr, &y));
      break;
    }
    case 5: {
      const int32_t n = rank(in);
      std::vector<int64_t> start = hostile_dims(in, n), end = hostile_dims(in, n),
                           step = hostile_dims(in, n);
      for (int64_t &v : start) v = minus_one(v);  // mostly 0..5
      s = CALL(cudnnfe_graph_add_slice(g, w.uid(in), n, start.data(), end.data(), step.data(),
                                       nullptr, &y));
      break;
    }
    case 6: {
      // The caller's array always holds num_inputs entries (18 > the 16 allowed).
      int64_t inputs[18];
      for (int64_t &uid : inputs) uid = w.uid(in);
      s = CALL(cudnnfe_graph_add_concatenate(g, static_cast<int32_t>(in.below(19)), inputs,
                                             static_cast<int32_t>(in.below(6)) - 1, nullptr, &y));
      break;
    }
    case 7: {
      cudnnfe_resample_options_t o;
      cudnnfe_resample_options_init(&o);
      o.mode = in.enum_value(4);
      for (int i = 0; i < 3; ++i) {
        if (in.below(3) == 0) o.window[i] = in.hostile();
        if (in.below(3) == 0) o.pre_padding[i] = in.hostile();
        if (in.below(3) == 0) o.scale[i] = in.hostile();
      }
      s = CALL(cudnnfe_graph_add_resample(g, w.uid(in), &o, &y, &extra));
      break;
    }
    case 8: {
      // Attention with the optional tensors and paging drawn from the pool.
      cudnnfe_sdpa_options_t o;
      cudnnfe_sdpa_options_init(&o);
      o.causal_mask = static_cast<int32_t>(in.below(2));
      o.generate_stats = static_cast<int32_t>(in.below(2));
      if (in.below(2)) {
        o.padding_mask = 1;
        o.seq_len_q = w.uid(in);
        o.seq_len_kv = w.uid(in);
      }
      if (in.below(3) == 0) {
        o.page_table_k = w.uid(in);
        o.page_table_v = w.uid(in);
        o.max_seq_len_kv = in.below(2) ? in.hostile() : 0;
      }
      if (in.below(4) == 0) {
        // A score modifier: hostile dims, one pointwise node on it or on a
        // pool tensor, an end with a drawn result (the scope may stay open).
        std::vector<int64_t> dims = hostile_dims(in, 4);
        int64_t score = 0, mod = 0;
        if (CALL(cudnnfe_graph_begin_score_mod(g, in.name(), 4, dims.data(), &score)) ==
            CUDNNFE_STATUS_OK) {
          CALL(cudnnfe_graph_add_pointwise(g, in.enum_value(64), in.below(2) ? score : w.uid(in),
                                           w.uid(in), 0, nullptr, &mod));
          CALL(cudnnfe_graph_end_score_mod(g, in.below(8) ? score : w.uid(in),
                                           in.below(2) ? mod : w.uid(in)));
        }
        o.score_mod = in.below(4) ? score : w.uid(in);
      }
      const int64_t q = w.uid(in), k = w.uid(in), v = w.uid(in);
      s = CALL(cudnnfe_graph_add_sdpa(g, q, k, v, &o, &y, &extra));
      break;
    }
    case 9: {
      cudnnfe_softmax_options_t o;
      cudnnfe_softmax_options_init(&o);
      o.generate_stats = static_cast<int32_t>(in.below(2));
      s = CALL(cudnnfe_graph_add_softmax(g, w.uid(in), &o, &y, &extra));
      break;
    }
    case 10: {
      const int32_t n = rank(in);
      std::vector<int64_t> dims = hostile_dims(in, n);
      cudnnfe_rng_options_t o;
      cudnnfe_rng_options_init(&o);
      o.distribution = in.enum_value(3);
      const int64_t seed = in.below(2) ? w.uid(in) : 0, offset = in.below(2) ? w.uid(in) : 0;
      s = CALL(
          cudnnfe_graph_add_rng(g, n, dims.empty() ? nullptr : dims.data(), seed, offset, &o, &y));
      break;
    }
    default: {
      cudnnfe_norm_options_t o;
      cudnnfe_norm_options_init(&o);
      s = CALL(
          cudnnfe_graph_add_layernorm(g, w.uid(in), w.uid(in), w.uid(in), &o, &y, &extra, &extra2));
      break;
    }
  }
  w.remember(s, y);
  w.remember(s, extra);
  w.remember(s, extra2);
  if (s == CUDNNFE_STATUS_OK && in.below(2)) CALL(cudnnfe_tensor_set_output(g, y, 1));
}

void set_tensor(World &w, Input &in) {
  cudnnfe_graph_t *g = w.graph(in);
  const int64_t uid = w.uid(in);
  switch (in.below(6)) {
    case 0: CALL(cudnnfe_tensor_set_output(g, uid, in.below(2))); break;
    case 1: {
      const int32_t n = rank(in);
      std::vector<int64_t> dims = hostile_dims(in, n);
      CALL(cudnnfe_tensor_set_dims(g, uid, n, dims.empty() ? nullptr : dims.data()));
      break;
    }
    case 2: {
      const int32_t n = rank(in);
      std::vector<int64_t> strides = hostile_dims(in, n);
      for (int64_t &s : strides) s = minus_one(s);  // 0 and overlaps are common
      CALL(cudnnfe_tensor_set_strides(g, uid, n, strides.empty() ? nullptr : strides.data()));
      break;
    }
    case 3: {
      const int64_t new_uid = in.below(2) ? in.hostile() : in.i64();
      if (CALL(cudnnfe_tensor_set_uid(g, uid, new_uid)) == CUDNNFE_STATUS_OK)
        w.remember(CUDNNFE_STATUS_OK, new_uid);
      break;
    }
    case 4: CALL(cudnnfe_tensor_set_name(g, uid, in.name())); break;
    default: CALL(cudnnfe_tensor_set_dtype(g, uid, in.enum_value(13))); break;
  }
}

void query(World &w, Input &in) {
  const cudnnfe_graph_t *g = w.graph(in);
  const int64_t uid = w.uid(in);
  int64_t dims[8], strides[8], found = 0;
  int32_t ndims = 0;
  size_t count = 0;
  const char *text = nullptr;
  cudnnfe_dtype_t dtype = 0;
  cudnnfe_tensor_kind_t kind = 0;
  char small[8];
  switch (in.below(6)) {
    case 0:
      CALL(cudnnfe_tensor_get_shape(g, uid, in.below(2) ? dims : nullptr, strides,
                                    static_cast<int32_t>(in.below(10)), &ndims));
      break;
    case 1:
      CALL(cudnnfe_tensor_get_name(g, uid, &text));
      CALL(cudnnfe_tensor_get_dtype(g, uid, &dtype));
      CALL(cudnnfe_tensor_get_kind(g, uid, &kind));
      break;
    case 2: {
      const char *name = in.name();
      if (name) CALL(cudnnfe_graph_find_tensor(g, name, &found));
      break;
    }
    case 3: {
      int64_t uids[4];
      CALL(cudnnfe_graph_get_tensor_uids(g, uids, in.below(5), &count));
      break;
    }
    case 4:
      CALL(cudnnfe_graph_copy_last_error(g, in.below(2) ? small : nullptr, sizeof(small), &count));
      ++g_calls;
      (void)cudnnfe_graph_last_error(g);
      break;
    default: CALL(cudnnfe_graph_get_node_count(g, &count)); break;
  }
}

// Largest tensor executed: the Debug + ASan CPU reference stays fast (a conv
// or matmul over larger tensors costs more than the rest of a case).
constexpr int64_t kMaxExecuteElements = 1024;

// Bytes a bound tensor spans, or 0 when it is too large to execute cheaply.
size_t buffer_bytes(const cudnnfe_graph_t *g, int64_t uid) {
  int64_t dims[8], strides[8];
  int32_t n = 0;
  cudnnfe_dtype_t dtype = 0;
  if (CALL(cudnnfe_tensor_get_shape(g, uid, dims, strides, 8, &n)) != CUDNNFE_STATUS_OK ||
      CALL(cudnnfe_tensor_get_dtype(g, uid, &dtype)) != CUDNNFE_STATUS_OK)
    return 0;
  int64_t span = 1, count = 1;
  for (int32_t i = 0; i < n; ++i) {
    if (dims[i] > kMaxExecuteElements || strides[i] > kMaxExecuteElements) return 0;
    span += (dims[i] - 1) * strides[i];
    count *= dims[i];
    if (count > kMaxExecuteElements) return 0;
  }
  return static_cast<size_t>(span) * cudnnfe_dtype_size(dtype) + 16;
}

// Every tensor, virtual ones included, is small: the CPU reference is cheap.
bool small_graph(const cudnnfe_graph_t *g) {
  int64_t uids[64];
  size_t count = 0;
  if (CALL(cudnnfe_graph_get_tensor_uids(g, uids, 64, &count)) != CUDNNFE_STATUS_OK) return false;
  for (size_t i = 0; i < count; ++i)
    if (buffer_bytes(g, uids[i]) == 0) return false;
  return true;
}

void execute(World &w, Input &in) {
  cudnnfe_graph_t *g = w.graph(in);
  int32_t built = 0;
  if (CALL(cudnnfe_graph_is_built(g, &built)) != CUDNNFE_STATUS_OK || !built || !small_graph(g)) {
    CALL(cudnnfe_graph_execute(g, w.any_handle(in), nullptr, in.below(3), nullptr, 0, nullptr));
    return;
  }
  int64_t uids[64];
  size_t count = 0;
  if (CALL(cudnnfe_graph_get_bound_uids(g, uids, 64, &count)) != CUDNNFE_STATUS_OK) return;
  std::vector<std::vector<unsigned char>> buffers(count);
  std::vector<cudnnfe_binding_t> bindings(count);
  for (size_t i = 0; i < count; ++i) {
    buffers[i].assign(buffer_bytes(g, uids[i]), 0);  // zeros: valid lengths and indices
    bindings[i] = {uids[i], buffers[i].data()};
  }
  // Sometimes drop or repeat a binding: refused, never read past.
  size_t n = count;
  if (in.below(4) == 0 && n > 0) --n;
  if (in.below(4) == 0 && n > 0 && n < count) bindings[n++] = bindings[0];
  if (CALL(cudnnfe_graph_execute(g, w.any_handle(in), bindings.data(), n, nullptr, 0, nullptr)) ==
      CUDNNFE_STATUS_OK)
    ++g_executes;
}

std::string serialized(const cudnnfe_graph_t *g, bool plan) {
  size_t size = 0;
  auto write = [&](char *buffer, size_t capacity) {
    return plan ? CALL(cudnnfe_graph_serialize_plan(g, buffer, capacity, &size))
                : CALL(cudnnfe_graph_serialize(g, buffer, capacity, &size));
  };
  if (write(nullptr, 0) != CUDNNFE_STATUS_OK) return std::string();
  std::string bytes(size, '\0');
  if (write(&bytes[0], bytes.size()) != CUDNNFE_STATUS_OK) std::abort();
  return bytes;
}

// A graph the library accepted must load again from its own bytes.
void require_round_trip(const cudnnfe_graph_t *g, bool plan) {
  const std::string bytes = serialized(g, plan);
  if (bytes.empty()) return;
  cudnnfe_graph_t *copy = nullptr;
  CALL(cudnnfe_graph_create(&copy));
  const cudnnfe_status_t s =
      plan
          ? CALL(cudnnfe_graph_deserialize_plan(copy, nullptr, bytes.data(), bytes.size(), nullptr))
          : CALL(cudnnfe_graph_deserialize(copy, bytes.data(), bytes.size()));
  if (s != CUDNNFE_STATUS_OK) {
    std::fprintf(stderr, "c_abi_fuzz: an accepted graph does not reload (%s): %s\n%s\n",
                 plan ? "plan blob" : "graph JSON", cudnnfe_last_error(),
                 plan ? "" : bytes.c_str());
    std::abort();
  }
  CALL(cudnnfe_graph_destroy(copy));
  ++g_round_trips;
}

void build(World &w, Input &in) {
  cudnnfe_graph_t *g = w.graph(in);
  if (in.below(2)) {
    if (CALL(cudnnfe_graph_validate(g)) == CUDNNFE_STATUS_OK) require_round_trip(g, false);
    return;
  }
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.target = in.below(8) ? CUDNNFE_TARGET_CPU_REFERENCE : in.enum_value(3);
  if (CALL(cudnnfe_graph_build(g, w.any_handle(in), &o)) == CUDNNFE_STATUS_OK) {
    require_round_trip(g, false);
    require_round_trip(g, true);
  }
}

void lifetime(World &w, Input &in) {
  const uint32_t slot = in.below(3);
  switch (in.below(4)) {
    case 0:
      if (w.graphs[slot]) {
        CALL(cudnnfe_graph_destroy(w.graphs[slot]));
        w.stale_graphs.push_back(w.graphs[slot]);
      }
      w.graphs[slot] = nullptr;
      CALL(cudnnfe_graph_create(&w.graphs[slot]));
      break;
    case 1:
      if (w.graphs[slot]) {
        CALL(cudnnfe_graph_destroy(w.graphs[slot]));
        w.stale_graphs.push_back(w.graphs[slot]);
        w.graphs[slot] = nullptr;
      }
      break;
    case 2:
      if (w.handle) {
        CALL(cudnnfe_handle_destroy(w.handle));
        w.stale_handles.push_back(w.handle);
      }
      w.handle = nullptr;
      CALL(cudnnfe_handle_create(&w.handle, -1));
      break;
    default: {
      // Stale pointers: refused, and they never reach the live objects.
      cudnnfe_graph_t *g = w.graph(in);
      cudnnfe_handle_t *h = w.any_handle(in);
      for (cudnnfe_graph_t *s : w.stale_graphs)
        if (s != g && CALL(cudnnfe_graph_destroy(s)) == CUDNNFE_STATUS_OK) std::abort();
      for (cudnnfe_handle_t *s : w.stale_handles)
        if (s != h && CALL(cudnnfe_handle_destroy(s)) == CUDNNFE_STATUS_OK) std::abort();
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  std::atexit(print_counts);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ++g_cases;
  Input in(data, size);
  World w;
  CALL(cudnnfe_graph_create(&w.graphs[0]));
  CALL(cudnnfe_handle_create(&w.handle, -1));
  for (int step = 0; step < 64 && !in.done(); ++step) {
    switch (in.below(8)) {
      case 0:
      case 1: add_tensor(w, in); break;
      case 2:
      case 3: add_op(w, in); break;
      case 4: set_tensor(w, in); break;
      case 5: query(w, in); break;
      case 6: in.below(2) ? build(w, in) : execute(w, in); break;
      default: lifetime(w, in); break;
    }
  }
  for (cudnnfe_graph_t *g : w.graphs) CALL(cudnnfe_graph_destroy(g));
  CALL(cudnnfe_handle_destroy(w.handle));
  return 0;
}
