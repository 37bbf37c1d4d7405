// Shared by test_cpu_attention_ragged.cpp and test_gpu_attention_ragged.cpp:
// attention graphs whose q/k/v/o (and gradients) are ragged (packed, "THD"
// layout read through element offsets) or whose K/V are paged caches, next
// to the same attention on padded BHSD tensors, run on either target with
// host data given as doubles (docs/attention.md).
//
// Packed layout of a tensor of logical dims [b, H, S, W] with per-batch
// valid rows valid[n]: strides [S*H*W, W, H*W, 1] (BSHD), and sequence n
// starts at element offsets[n] = sum over m < n of (valid[m] * H * W +
// gap); `gap` elements (filled with a sentinel) lie between sequences and
// after the last, so writes outside the valid rows show.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cudnnfe/cudnnfe.h"
#include "gpu_util.h"

namespace ragged_test {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kSentinel = 640.0;  // exact in every I/O type

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void ok(cudnnfe_status_t status, const char *what) {
  if (status != CUDNNFE_STATUS_OK)
    throw Error(std::string(what) + " returned " + cudnnfe_status_name(status) + ": " +
                cudnnfe_last_error());
}

// One attention configuration.
struct Case {
  const char *name = "case";
  int64_t b = 3, h_q = 2, h_kv = 1, s_q = 5, s_kv = 6, d = 4, d_v = 3;
  std::vector<int32_t> seq_q = {5, 2, 3}, seq_kv = {4, 6, 1};
  double scale = 0.4;
  bool causal = false;
  bool causal_br = false;
  int64_t gap = 0;             // elements between packed sequences
  bool int64_offsets = false;  // INT64 offsets (else INT32)
  int64_t page_size = 2;       // paged cases
  bool page_k = true, page_v = true;
};

inline int64_t count(const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Deterministic values in about [-1, 1].
inline std::vector<double> pattern(int64_t n, int seed) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = std::sin(0.37 * static_cast<double>(i + 1) * (seed + 1) + seed);
  return v;
}

// ---- the packed layout ----

struct Packed {
  std::vector<int64_t> dims, strides;  // logical [b, H, S, W], BSHD strides
  std::vector<int64_t> offsets;        // b + 1 entries (the last is the end)
  int64_t elements = 0;                // buffer size
};

inline Packed packed_layout(const std::vector<int64_t> &dims, const std::vector<int32_t> &valid,
                            int64_t gap) {
  Packed p;
  p.dims = dims;
  const int64_t H = dims[1], S = dims[2], W = dims[3];
  p.strides = {S * H * W, W, H * W, 1};
  int64_t at = 0;
  for (int64_t n = 0; n < dims[0]; ++n) {
    p.offsets.push_back(at);
    at += valid[static_cast<size_t>(n)] * H * W + gap;
  }
  p.offsets.push_back(at);
  p.elements = at;
  return p;
}

// Dense [b, H, S, W] -> packed buffer (gaps hold the sentinel).
inline std::vector<double> pack(const Packed &p, const std::vector<double> &dense,
                                const std::vector<int32_t> &valid) {
  std::vector<double> out(static_cast<size_t>(p.elements), kSentinel);
  const int64_t H = p.dims[1], S = p.dims[2], W = p.dims[3];
  for (int64_t n = 0; n < p.dims[0]; ++n)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < valid[static_cast<size_t>(n)]; ++s)
        for (int64_t w = 0; w < W; ++w)
          out[static_cast<size_t>(p.offsets[static_cast<size_t>(n)] + h * p.strides[1] +
                                  s * p.strides[2] + w)] =
              dense[static_cast<size_t>(((n * H + h) * S + s) * W + w)];
  return out;
}

// Packed buffer -> dense [b, H, S, W], NaN on rows beyond valid[n].
inline std::vector<double> unpack(const Packed &p, const std::vector<double> &packed,
                                  const std::vector<int32_t> &valid) {
  const int64_t H = p.dims[1], S = p.dims[2], W = p.dims[3];
  std::vector<double> out(static_cast<size_t>(count(p.dims)), kNaN);
  for (int64_t n = 0; n < p.dims[0]; ++n)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < valid[static_cast<size_t>(n)]; ++s)
        for (int64_t w = 0; w < W; ++w)
          out[static_cast<size_t>(((n * H + h) * S + s) * W + w)] = packed[static_cast<size_t>(
              p.offsets[static_cast<size_t>(n)] + h * p.strides[1] + s * p.strides[2] + w)];
  return out;
}

// Rows beyond valid[n] of a dense [b, H, S, W] set to NaN (ignored by
// comparisons).
inline std::vector<double> valid_rows(const std::vector<int64_t> &dims, std::vector<double> x,
                                      const std::vector<int32_t> &valid) {
  const int64_t H = dims[1], S = dims[2], W = dims[3];
  for (int64_t n = 0; n < dims[0]; ++n)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = valid[static_cast<size_t>(n)]; s < S; ++s)
        for (int64_t w = 0; w < W; ++w)
          x[static_cast<size_t>(((n * H + h) * S + s) * W + w)] = kNaN;
  return x;
}

// How many gap elements of a packed output differ from the sentinel.
inline int touched_gaps(const Packed &p, const std::vector<double> &packed,
                        const std::vector<int32_t> &valid) {
  int touched = 0;
  const int64_t row = p.dims[1] * p.dims[3];
  for (int64_t n = 0; n < p.dims[0]; ++n)
    for (int64_t e = p.offsets[static_cast<size_t>(n)] + valid[static_cast<size_t>(n)] * row;
         e < p.offsets[static_cast<size_t>(n) + 1]; ++e)
      if (packed[static_cast<size_t>(e)] != kSentinel) ++touched;
  return touched;
}

// ---- the paged layout ----

struct Paged {
  std::vector<int64_t> container_dims;  // [num_pages, H, page_size, W]
  std::vector<int64_t> table_dims;      // [b, 1, pages, 1]
  std::vector<double> table;            // page numbers
};

// Each (batch, slot) gets its own page, in a scrambled order, plus one
// page no table names.
inline Paged paged_layout(int64_t b, int64_t h, int64_t s_kv, int64_t w, int64_t page_size) {
  Paged p;
  const int64_t pages = (s_kv + page_size - 1) / page_size;
  const int64_t num_pages = b * pages + 1;
  p.container_dims = {num_pages, h, page_size, w};
  p.table_dims = {b, 1, pages, 1};
  std::vector<int64_t> order(static_cast<size_t>(num_pages));
  for (int64_t i = 0; i < num_pages; ++i) order[static_cast<size_t>(i)] = i;
  uint64_t state = 12345;  // Fisher-Yates with a fixed LCG
  for (int64_t i = num_pages - 1; i > 0; --i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    std::swap(order[static_cast<size_t>(i)],
              order[static_cast<size_t>((state >> 33) % static_cast<uint64_t>(i + 1))]);
  }
  for (int64_t i = 0; i < b * pages; ++i)
    p.table.push_back(static_cast<double>(order[static_cast<size_t>(i)]));
  return p;
}

// Dense [b, H, s_kv, W] -> container (rows no table names hold junk).
inline std::vector<double> to_pages(const Paged &p, const std::vector<double> &dense, int64_t b,
                                    int64_t s_kv) {
  const int64_t H = p.container_dims[1], ps = p.container_dims[2], W = p.container_dims[3];
  const int64_t pages = p.table_dims[2];
  std::vector<double> out = pattern(count(p.container_dims), 11);  // junk
  for (int64_t n = 0; n < b; ++n)
    for (int64_t j = 0; j < s_kv; ++j) {
      const int64_t page = static_cast<int64_t>(p.table[static_cast<size_t>(n * pages + j / ps)]);
      for (int64_t h = 0; h < H; ++h)
        for (int64_t x = 0; x < W; ++x)
          out[static_cast<size_t>(((page * H + h) * ps + j % ps) * W + x)] =
              dense[static_cast<size_t>(((n * H + h) * s_kv + j) * W + x)];
    }
  return out;
}

// ---- running a graph on a target ----

// A graph input or output with its host values (an output's initial
// values are what its buffer is pre-filled with).
struct Io {
  int64_t uid = 0;
  cudnnfe_dtype_t dtype = CUDNNFE_DTYPE_FLOAT;
  std::vector<double> values;
};

inline size_t dtype_bytes(cudnnfe_dtype_t t) {
  switch (t) {
    case CUDNNFE_DTYPE_HALF:
    case CUDNNFE_DTYPE_BFLOAT16: return 2;
    case CUDNNFE_DTYPE_INT64:
    case CUDNNFE_DTYPE_DOUBLE: return 8;
    case CUDNNFE_DTYPE_INT8:
    case CUDNNFE_DTYPE_UINT8: return 1;
    default: return 4;
  }
}

// Builds `g` for `target` and executes it; each Io's values are replaced by
// what its buffer holds afterwards. Throws Error (with cuDNN's message) on
// failure.
inline void run(cudnnfe_graph_t *g, cudnnfe_target_t target, std::vector<Io> &ios) {
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = target;
  cudnnfe_handle_t *handle = nullptr;
  ok(cudnnfe_handle_create(&handle, -1), "cudnnfe_handle_create");
  std::unique_ptr<cudnnfe_handle_t, void (*)(cudnnfe_handle_t *)> owner(
      handle, [](cudnnfe_handle_t *h) { cudnnfe_handle_destroy(h); });
  if (cudnnfe_graph_build(g, handle, &options) != CUDNNFE_STATUS_OK)
    throw Error(std::string("build: ") + cudnnfe_graph_last_error(g));
  std::vector<std::vector<unsigned char>> host(ios.size());
  for (size_t i = 0; i < ios.size(); ++i) {
    const size_t bytes = dtype_bytes(ios[i].dtype);
    host[i].resize(ios[i].values.size() * bytes);
    for (size_t e = 0; e < ios[i].values.size(); ++e)
      gpu::store(ios[i].dtype, host[i].data() + e * bytes, ios[i].values[e]);
  }
  std::vector<cudnnfe_binding_t> bindings;
  std::vector<gpu::DeviceBuffer> device;
  const bool on_gpu = target == CUDNNFE_TARGET_GPU;
  int64_t workspace_size = 0;
  gpu::DeviceBuffer workspace;
  if (on_gpu) {
    ok(cudnnfe_graph_get_workspace_size(g, &workspace_size), "get_workspace_size");
    workspace = gpu::DeviceBuffer(static_cast<size_t>(workspace_size));
    if (!workspace.ok()) throw Error("cudaMalloc of the workspace failed");
    if (workspace_size > 0)  // NaN bytes, so that unwritten reads show
      gpu::runtime().Memset(workspace.get(), 0xff, static_cast<size_t>(workspace_size));
  }
  for (size_t i = 0; i < ios.size(); ++i) {
    if (on_gpu) {
      device.emplace_back(std::max<size_t>(host[i].size(), 1));
      if (!device.back().ok()) throw Error("cudaMalloc failed");
      const std::string e =
          gpu::cuda_check(gpu::runtime().Memcpy(device.back().get(), host[i].data(), host[i].size(),
                                                gpu::kHostToDevice),
                          "cudaMemcpy");
      if (!e.empty()) throw Error(e);
      bindings.push_back({ios[i].uid, device.back().get()});
    } else {
      bindings.push_back({ios[i].uid, host[i].data()});
    }
  }
  if (cudnnfe_graph_execute(g, handle, bindings.data(), bindings.size(),
                            on_gpu ? workspace.get() : nullptr, static_cast<size_t>(workspace_size),
                            nullptr) != CUDNNFE_STATUS_OK)
    throw Error(std::string("execute: ") + cudnnfe_handle_last_error(handle));
  if (on_gpu) {
    const std::string e = gpu::cuda_check(gpu::runtime().DeviceSynchronize(), "synchronize");
    if (!e.empty()) throw Error(e);
  }
  for (size_t i = 0; i < ios.size(); ++i) {
    if (on_gpu) {
      const std::string e =
          gpu::cuda_check(gpu::runtime().Memcpy(host[i].data(), device[i].get(), host[i].size(),
                                                gpu::kDeviceToHost),
                          "cudaMemcpy");
      if (!e.empty()) throw Error(e);
    }
    const size_t bytes = dtype_bytes(ios[i].dtype);
    for (size_t e = 0; e < ios[i].values.size(); ++e)
      ios[i].values[e] = gpu::load(ios[i].dtype, host[i].data() + e * bytes);
  }
}

// ---- the graphs ----

struct Graph {
  cudnnfe_graph_t *g = nullptr;
  std::vector<Io> ios;
  explicit Graph(cudnnfe_dtype_t io) {
    ok(cudnnfe_graph_create(&g), "cudnnfe_graph_create");
    ok(cudnnfe_graph_set_io_dtype(g, io), "set_io_dtype");
    ok(cudnnfe_graph_set_compute_dtype(g, CUDNNFE_DTYPE_FLOAT), "set_compute_dtype");
    ok(cudnnfe_graph_set_intermediate_dtype(g, CUDNNFE_DTYPE_FLOAT), "set_intermediate_dtype");
  }
  ~Graph() { cudnnfe_graph_destroy(g); }
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;
  int64_t input(const char *name, cudnnfe_dtype_t dt, const std::vector<int64_t> &dims,
                std::vector<double> values, const std::vector<int64_t> &strides = {}) {
    int64_t uid = 0;
    ok(cudnnfe_graph_add_tensor(g, name, dt, static_cast<int32_t>(dims.size()), dims.data(),
                                strides.empty() ? nullptr : strides.data(), &uid),
       name);
    ios.push_back({uid, dt, std::move(values)});
    return uid;
  }
  void output(int64_t uid, cudnnfe_dtype_t dt, std::vector<double> prefill) {
    ok(cudnnfe_tensor_set_output(g, uid, 1), "set_output");
    ios.push_back({uid, dt, std::move(prefill)});
  }
  void strides(int64_t uid, const std::vector<int64_t> &s) {
    ok(cudnnfe_tensor_set_strides(g, uid, static_cast<int32_t>(s.size()), s.data()), "set_strides");
  }
  const std::vector<double> &values(int64_t uid) const {
    for (const Io &io : ios)
      if (io.uid == uid) return io.values;
    throw Error("no such uid");
  }
};

// The inputs of one case (dense BHSD, values of the I/O type).
struct Data {
  std::vector<double> q, k, v, d_o;
};

inline std::vector<double> round_to(cudnnfe_dtype_t t, std::vector<double> x) {
  unsigned char buf[8];
  for (double &v : x) {
    gpu::store(t, buf, v);
    v = gpu::load(t, buf);
  }
  return x;
}

inline Data make_data(const Case &c, cudnnfe_dtype_t io) {
  Data d;
  d.q = round_to(io, pattern(c.b * c.h_q * c.s_q * c.d, 1));
  d.k = round_to(io, pattern(c.b * c.h_kv * c.s_kv * c.d, 2));
  d.v = round_to(io, pattern(c.b * c.h_kv * c.s_kv * c.d_v, 3));
  d.d_o = round_to(io, pattern(c.b * c.h_q * c.s_q * c.d_v, 5));
  return d;
}

template <class Options>
void common_options(Graph &g, const Case &c, Options &o) {
  o.attn_scale = c.scale;
  o.causal_mask = c.causal;
  o.causal_mask_bottom_right = c.causal_br;
  o.padding_mask = 1;
  std::vector<double> sq(c.seq_q.begin(), c.seq_q.end()), skv(c.seq_kv.begin(), c.seq_kv.end());
  o.seq_len_q = g.input("seq_len_q", CUDNNFE_DTYPE_INT32, {c.b, 1, 1, 1}, sq);
  o.seq_len_kv = g.input("seq_len_kv", CUDNNFE_DTYPE_INT32, {c.b, 1, 1, 1}, skv);
}

inline std::vector<int64_t> q_dims(const Case &c) {
  return {c.b, c.h_q, c.s_q, c.d};
}
inline std::vector<int64_t> k_dims(const Case &c) {
  return {c.b, c.h_kv, c.s_kv, c.d};
}
inline std::vector<int64_t> v_dims(const Case &c) {
  return {c.b, c.h_kv, c.s_kv, c.d_v};
}
inline std::vector<int64_t> o_dims(const Case &c) {
  return {c.b, c.h_q, c.s_q, c.d_v};
}

// The layouts of a ragged case's q, k, v and o.
struct RaggedLayouts {
  Packed q, k, v, o;
  explicit RaggedLayouts(const Case &c)
      : q(packed_layout(q_dims(c), c.seq_q, c.gap)),
        k(packed_layout(k_dims(c), c.seq_kv, c.gap)),
        v(packed_layout(v_dims(c), c.seq_kv, c.gap)),
        o(packed_layout(o_dims(c), c.seq_q, c.gap)) {}
};

inline int64_t offsets_input(Graph &g, const Case &c, const char *name, const Packed &p) {
  std::vector<double> values(p.offsets.begin(), p.offsets.end());
  return g.input(name, c.int64_offsets ? CUDNNFE_DTYPE_INT64 : CUDNNFE_DTYPE_INT32,
                 {c.b + 1, 1, 1, 1}, values);
}

// Forward outputs, dense [b, h_q, s_q, d_v] (NaN beyond the valid rows)
// and stats [b, h_q, s_q, 1]; `o_gaps`: gap elements of a ragged O that
// were written.
struct ForwardResult {
  std::vector<double> o, stats;
  int o_gaps = 0;
  int stats_gaps = 0;  // gap elements of ragged stats that were written
};

inline ForwardResult forward(const Case &c, const Data &d, cudnnfe_dtype_t io, bool ragged,
                             cudnnfe_target_t target) {
  Graph g(io);
  const RaggedLayouts L(c);
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.generate_stats = 1;
  common_options(g, c, o);
  int64_t q, k, v;
  if (ragged) {
    q = g.input("q", io, q_dims(c), pack(L.q, d.q, c.seq_q), L.q.strides);
    k = g.input("k", io, k_dims(c), pack(L.k, d.k, c.seq_kv), L.k.strides);
    v = g.input("v", io, v_dims(c), pack(L.v, d.v, c.seq_kv), L.v.strides);
    o.ragged_offset_q = offsets_input(g, c, "ragged_q", L.q);
    o.ragged_offset_k = offsets_input(g, c, "ragged_k", L.k);
    o.ragged_offset_v = offsets_input(g, c, "ragged_v", L.v);
    o.ragged_offset_o = offsets_input(g, c, "ragged_o", L.o);
  } else {
    q = g.input("q", io, q_dims(c), d.q);
    k = g.input("k", io, k_dims(c), d.k);
    v = g.input("v", io, v_dims(c), d.v);
  }
  int64_t out = 0, stats = 0;
  ok(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats), "add_sdpa");
  if (ragged) {
    g.strides(out, L.o.strides);
    std::vector<double> prefill(static_cast<size_t>(L.o.elements), kSentinel);
    for (int64_t n = 0; n < c.b; ++n)  // NaN where rows are written
      for (int64_t e = 0; e < c.seq_q[static_cast<size_t>(n)] * c.h_q * c.d_v; ++e)
        prefill[static_cast<size_t>(L.o.offsets[static_cast<size_t>(n)] + e)] = kNaN;
    g.output(out, io, prefill);
  } else {
    g.output(out, io, std::vector<double>(static_cast<size_t>(count(o_dims(c))), kNaN));
  }
  g.output(stats, CUDNNFE_DTYPE_FLOAT,
           std::vector<double>(static_cast<size_t>(c.b * c.h_q * c.s_q), kNaN));
  run(g.g, target, g.ios);
  ForwardResult r;
  if (ragged) {
    r.o = unpack(L.o, g.values(out), c.seq_q);
    r.o_gaps = touched_gaps(L.o, g.values(out), c.seq_q);
  } else {
    r.o = valid_rows(o_dims(c), g.values(out), c.seq_q);
  }
  r.stats = valid_rows({c.b, c.h_q, c.s_q, 1}, g.values(stats), c.seq_q);
  return r;
}

struct BackwardResult {
  std::vector<double> dq, dk, dv;  // dense, NaN beyond the valid rows
  int gaps = 0;                    // written gap elements of ragged dQ, dK, dV
};

// The stats' packed layout ([b, h_q, s_q, 1], THD strides [s*h, 1, h, 1]).
inline Packed stats_layout(const Case &c) {
  return packed_layout({c.b, c.h_q, c.s_q, 1}, c.seq_q, c.gap);
}

// The backward from O and stats (dense; packed here when ragged, the stats
// too with `ragged_stats`).
inline BackwardResult backward(const Case &c, const Data &d, const std::vector<double> &o_dense,
                               const std::vector<double> &stats, cudnnfe_dtype_t io, bool ragged,
                               cudnnfe_target_t target, bool ragged_stats = false) {
  Graph g(io);
  const RaggedLayouts L(c);
  cudnnfe_sdpa_backward_options_t opts;
  cudnnfe_sdpa_backward_options_init(&opts);
  common_options(g, c, opts);
  // Padding rows of O and stats hold finite values (they are not read).
  std::vector<double> o_clean = o_dense, st_clean = stats;
  for (double &x : o_clean)
    if (std::isnan(x)) x = 0.5;
  for (double &x : st_clean)
    if (std::isnan(x)) x = 0.0;
  int64_t q, k, v, o, d_o;
  if (ragged) {
    q = g.input("q", io, q_dims(c), pack(L.q, d.q, c.seq_q), L.q.strides);
    k = g.input("k", io, k_dims(c), pack(L.k, d.k, c.seq_kv), L.k.strides);
    v = g.input("v", io, v_dims(c), pack(L.v, d.v, c.seq_kv), L.v.strides);
    o = g.input("o", io, o_dims(c), pack(L.o, o_clean, c.seq_q), L.o.strides);
    d_o = g.input("dO", io, o_dims(c), pack(L.o, d.d_o, c.seq_q), L.o.strides);
    opts.ragged_offset_q = offsets_input(g, c, "ragged_q", L.q);
    opts.ragged_offset_k = offsets_input(g, c, "ragged_k", L.k);
    opts.ragged_offset_v = offsets_input(g, c, "ragged_v", L.v);
    opts.ragged_offset_o = offsets_input(g, c, "ragged_o", L.o);
  } else {
    q = g.input("q", io, q_dims(c), d.q);
    k = g.input("k", io, k_dims(c), d.k);
    v = g.input("v", io, v_dims(c), d.v);
    o = g.input("o", io, o_dims(c), o_clean);
    d_o = g.input("dO", io, o_dims(c), d.d_o);
  }
  int64_t st = 0;
  if (ragged && ragged_stats) {
    const Packed ps = stats_layout(c);
    st = g.input("stats", CUDNNFE_DTYPE_FLOAT, ps.dims, pack(ps, st_clean, c.seq_q), ps.strides);
    opts.ragged_offset_stats = offsets_input(g, c, "ragged_stats", ps);
  } else {
    st = g.input("stats", CUDNNFE_DTYPE_FLOAT, {c.b, c.h_q, c.s_q, 1}, st_clean);
  }
  int64_t dq = 0, dk = 0, dv = 0;
  ok(cudnnfe_graph_add_sdpa_backward(g.g, q, k, v, o, d_o, st, &opts, &dq, &dk, &dv),
     "add_sdpa_backward");
  const Packed *layouts[3] = {&L.q, &L.k, &L.v};
  const std::vector<int32_t> *valid[3] = {&c.seq_q, &c.seq_kv, &c.seq_kv};
  const std::vector<int64_t> dims[3] = {q_dims(c), k_dims(c), v_dims(c)};
  const int64_t outs[3] = {dq, dk, dv};
  for (int i = 0; i < 3; ++i) {
    if (ragged) {
      g.strides(outs[i], layouts[i]->strides);
      std::vector<double> prefill(static_cast<size_t>(layouts[i]->elements), kSentinel);
      const int64_t row = dims[i][1] * dims[i][3];
      for (int64_t n = 0; n < c.b; ++n)
        for (int64_t e = 0; e < (*valid[i])[static_cast<size_t>(n)] * row; ++e)
          prefill[static_cast<size_t>(layouts[i]->offsets[static_cast<size_t>(n)] + e)] = kNaN;
      g.output(outs[i], io, prefill);
    } else {
      g.output(outs[i], io, std::vector<double>(static_cast<size_t>(count(dims[i])), kNaN));
    }
  }
  run(g.g, target, g.ios);
  BackwardResult r;
  std::vector<double> *dst[3] = {&r.dq, &r.dk, &r.dv};
  for (int i = 0; i < 3; ++i) {
    if (ragged) {
      *dst[i] = unpack(*layouts[i], g.values(outs[i]), *valid[i]);
      r.gaps += touched_gaps(*layouts[i], g.values(outs[i]), *valid[i]);
    } else {
      *dst[i] = valid_rows(dims[i], g.values(outs[i]), *valid[i]);
    }
  }
  return r;
}

// The forward with K and/or V in a paged cache (seq_len_kv rows valid).
inline ForwardResult paged_forward(const Case &c, const Data &d, cudnnfe_dtype_t io,
                                   cudnnfe_target_t target, int64_t max_seq_len_kv = 0) {
  Graph g(io);
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.generate_stats = 1;
  common_options(g, c, o);
  const Paged pk = paged_layout(c.b, c.h_kv, c.s_kv, c.d, c.page_size);
  const Paged pv = paged_layout(c.b, c.h_kv, c.s_kv, c.d_v, c.page_size);
  const int64_t q = g.input("q", io, q_dims(c), d.q);
  int64_t k, v;
  if (c.page_k) {
    k = g.input("k_cache", io, pk.container_dims, round_to(io, to_pages(pk, d.k, c.b, c.s_kv)));
    o.page_table_k = g.input("page_table_k", CUDNNFE_DTYPE_INT32, pk.table_dims, pk.table);
  } else {
    k = g.input("k", io, k_dims(c), d.k);
  }
  if (c.page_v) {
    v = g.input("v_cache", io, pv.container_dims, round_to(io, to_pages(pv, d.v, c.b, c.s_kv)));
    o.page_table_v = g.input("page_table_v", CUDNNFE_DTYPE_INT32, pv.table_dims, pv.table);
  } else {
    v = g.input("v", io, v_dims(c), d.v);
  }
  o.max_seq_len_kv = max_seq_len_kv;
  int64_t out = 0, stats = 0;
  ok(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats), "add_sdpa (paged)");
  g.output(out, io, std::vector<double>(static_cast<size_t>(count(o_dims(c))), kNaN));
  g.output(stats, CUDNNFE_DTYPE_FLOAT,
           std::vector<double>(static_cast<size_t>(c.b * c.h_q * c.s_q), kNaN));
  run(g.g, target, g.ios);
  ForwardResult r;
  r.o = valid_rows(o_dims(c), g.values(out), c.seq_q);
  r.stats = valid_rows({c.b, c.h_q, c.s_q, 1}, g.values(stats), c.seq_q);
  return r;
}

// How O is laid out when q, k and v are ragged: padded [b, h_q, s_q, d_v]
// (no offsets: cudnn-frontend's sample 52), or packed with offsets of its
// own (wider gaps than q's), given after the op with
// cudnnfe_graph_set_ragged_offset as cudnn-frontend's THD tests do.
enum class OLayout { kPadded, kOwnOffsets };

// With `ragged_stats`, the stats are packed too (stats_layout), their
// offsets given after the op; `stats_gaps` counts written gap elements.
inline ForwardResult mixed_forward(const Case &c, const Data &d, cudnnfe_dtype_t io, OLayout layout,
                                   cudnnfe_target_t target, bool ragged_stats = false) {
  Graph g(io);
  const RaggedLayouts L(c);
  const Packed own_o = packed_layout(o_dims(c), c.seq_q, c.gap + 8);
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.generate_stats = 1;
  common_options(g, c, o);
  const int64_t q = g.input("q", io, q_dims(c), pack(L.q, d.q, c.seq_q), L.q.strides);
  const int64_t k = g.input("k", io, k_dims(c), pack(L.k, d.k, c.seq_kv), L.k.strides);
  const int64_t v = g.input("v", io, v_dims(c), pack(L.v, d.v, c.seq_kv), L.v.strides);
  o.ragged_offset_q = offsets_input(g, c, "ragged_q", L.q);
  o.ragged_offset_k = offsets_input(g, c, "ragged_k", L.k);
  o.ragged_offset_v = offsets_input(g, c, "ragged_v", L.v);
  int64_t out = 0, stats = 0;
  ok(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats), "add_sdpa (mixed)");
  if (layout == OLayout::kOwnOffsets) {
    ok(cudnnfe_graph_set_ragged_offset(g.g, out, offsets_input(g, c, "ragged_o", own_o)),
       "set_ragged_offset (O)");
    g.strides(out, own_o.strides);
    g.output(out, io, std::vector<double>(static_cast<size_t>(own_o.elements), kSentinel));
  } else {
    // Dense BHSD (O would otherwise take q's BSHD order).
    g.strides(out, {c.h_q * c.s_q * c.d_v, c.s_q * c.d_v, c.d_v, 1});
    g.output(out, io, std::vector<double>(static_cast<size_t>(count(o_dims(c))), kNaN));
  }
  const Packed ps = stats_layout(c);
  if (ragged_stats) {
    ok(cudnnfe_graph_set_ragged_offset(g.g, stats, offsets_input(g, c, "ragged_stats", ps)),
       "set_ragged_offset (stats)");
    g.strides(stats, ps.strides);
    g.output(stats, CUDNNFE_DTYPE_FLOAT,
             std::vector<double>(static_cast<size_t>(ps.elements), kSentinel));
  } else {
    g.output(stats, CUDNNFE_DTYPE_FLOAT,
             std::vector<double>(static_cast<size_t>(c.b * c.h_q * c.s_q), kNaN));
  }
  run(g.g, target, g.ios);
  ForwardResult r;
  if (ragged_stats) {
    r.stats = unpack(ps, g.values(stats), c.seq_q);
    r.stats_gaps = touched_gaps(ps, g.values(stats), c.seq_q);
  }
  if (layout == OLayout::kOwnOffsets) {
    r.o = unpack(own_o, g.values(out), c.seq_q);
    r.o_gaps = touched_gaps(own_o, g.values(out), c.seq_q);
  } else {
    r.o = valid_rows(o_dims(c), g.values(out), c.seq_q);
  }
  if (!ragged_stats) r.stats = valid_rows({c.b, c.h_q, c.s_q, 1}, g.values(stats), c.seq_q);
  return r;
}

// A packed page table (cudnn-frontend's sample 53): batch n keeps only its
// ceil(seq_kv[n] / page_size) entries, one after another; the table keeps
// its dims [b, 1, pages, 1] and its tail holds the page no table names.
struct PackedTable {
  std::vector<double> table, offsets;
};

inline PackedTable packed_table(const Paged &p, const std::vector<int32_t> &seq_kv,
                                int64_t page_size) {
  const int64_t b = p.table_dims[0], pages = p.table_dims[2];
  PackedTable t;
  t.table.assign(static_cast<size_t>(b * pages), static_cast<double>(p.container_dims[0] - 1));
  int64_t at = 0;
  for (int64_t n = 0; n < b; ++n) {
    t.offsets.push_back(static_cast<double>(at));
    const int64_t used = (seq_kv[static_cast<size_t>(n)] + page_size - 1) / page_size;
    for (int64_t slot = 0; slot < used; ++slot)
      t.table[static_cast<size_t>(at++)] = p.table[static_cast<size_t>(n * pages + slot)];
  }
  t.offsets.push_back(static_cast<double>(at));
  return t;
}

// The forward with K and V in paged caches read through packed tables: K's
// offsets given in the options, V's after the op (set_ragged_offset).
inline ForwardResult packed_paged_forward(const Case &c, const Data &d, cudnnfe_dtype_t io,
                                          cudnnfe_target_t target) {
  Graph g(io);
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.generate_stats = 1;
  common_options(g, c, o);
  const Paged pk = paged_layout(c.b, c.h_kv, c.s_kv, c.d, c.page_size);
  const Paged pv = paged_layout(c.b, c.h_kv, c.s_kv, c.d_v, c.page_size);
  const PackedTable tk = packed_table(pk, c.seq_kv, c.page_size);
  const PackedTable tv = packed_table(pv, c.seq_kv, c.page_size);
  const cudnnfe_dtype_t offset_type = c.int64_offsets ? CUDNNFE_DTYPE_INT64 : CUDNNFE_DTYPE_INT32;
  const int64_t q = g.input("q", io, q_dims(c), d.q);
  const int64_t k =
      g.input("k_cache", io, pk.container_dims, round_to(io, to_pages(pk, d.k, c.b, c.s_kv)));
  const int64_t v =
      g.input("v_cache", io, pv.container_dims, round_to(io, to_pages(pv, d.v, c.b, c.s_kv)));
  o.page_table_k = g.input("page_table_k", CUDNNFE_DTYPE_INT32, pk.table_dims, tk.table);
  o.page_table_v = g.input("page_table_v", CUDNNFE_DTYPE_INT32, pv.table_dims, tv.table);
  o.ragged_offset_page_table_k =
      g.input("table_offsets_k", offset_type, {c.b + 1, 1, 1, 1}, tk.offsets);
  o.max_seq_len_kv = c.s_kv;
  int64_t out = 0, stats = 0;
  ok(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats), "add_sdpa (packed tables)");
  ok(cudnnfe_graph_set_ragged_offset(
         g.g, o.page_table_v,
         g.input("table_offsets_v", offset_type, {c.b + 1, 1, 1, 1}, tv.offsets)),
     "set_ragged_offset (page_table_v)");
  g.output(out, io, std::vector<double>(static_cast<size_t>(count(o_dims(c))), kNaN));
  g.output(stats, CUDNNFE_DTYPE_FLOAT,
           std::vector<double>(static_cast<size_t>(c.b * c.h_q * c.s_q), kNaN));
  run(g.g, target, g.ios);
  ForwardResult r;
  r.o = valid_rows(o_dims(c), g.values(out), c.seq_q);
  r.stats = valid_rows({c.b, c.h_q, c.s_q, 1}, g.values(stats), c.seq_q);
  return r;
}

// Largest |got - want| over the elements where want is not NaN, relative
// to max(1, |want|); a NaN in got where want is a number counts as
// infinite. `nan_mismatch` counts elements where want is NaN but got is
// not, or the other way round (both ignore NaN rows consistently).
struct Compare {
  double max_err = 0.0;
  int nan_mismatch = 0;
};

inline Compare compare(const std::vector<double> &got, const std::vector<double> &want) {
  Compare r;
  if (got.size() != want.size()) {
    r.max_err = std::numeric_limits<double>::infinity();
    return r;
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]) != std::isnan(got[i])) {
      ++r.nan_mismatch;
      continue;
    }
    if (std::isnan(want[i])) continue;
    if (std::isinf(want[i]) || std::isinf(got[i])) {
      if (got[i] != want[i]) r.max_err = std::numeric_limits<double>::infinity();
      continue;
    }
    r.max_err =
        std::max(r.max_err, std::fabs(got[i] - want[i]) / std::max(1.0, std::fabs(want[i])));
  }
  return r;
}

}  // namespace ragged_test
