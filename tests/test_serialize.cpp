// Graph JSON: round trips (structure and numerics) and hostile input.
// Uses the experimental part of the header (include/cudnnfe/cudnnfe.h).
#define CUDNNFE_EXPERIMENTAL
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "harness.h"

namespace {

std::string serialize(cudnnfe_graph_t *g) {
  size_t size = 0;
  if (cudnnfe_graph_serialize(g, nullptr, 0, &size) != CUDNNFE_STATUS_OK) return "";
  std::string out(size, '\0');
  if (cudnnfe_graph_serialize(g, out.data(), out.size(), &size) != CUDNNFE_STATUS_OK) return "";
  return out;
}

// A graph touching every op kind and most attributes: conv -> +bias -> relu
// -> reduction; matmul -> gelu; attention with stats; a scalar.
cudnnfe_graph_t *make_rich_graph() {
  cudnnfe_graph_t *g;
  cudnnfe_graph_create(&g);
  cudnnfe_graph_set_name(g, "rich \"graph\"\n");
  cudnnfe_graph_set_compute_dtype(g, CUDNNFE_DTYPE_FLOAT);
  const int64_t xd[] = {2, 3, 6, 6}, xs[] = {108, 1, 18, 3}, wd[] = {4, 3, 3, 3};
  const int64_t bd[] = {1, 4, 1, 1};
  int64_t x, w, b, y, yb, yr, red;
  cudnnfe_graph_add_tensor(g, "x", CUDNNFE_DTYPE_FLOAT, 4, xd, xs, &x);
  cudnnfe_graph_add_tensor(g, "w", CUDNNFE_DTYPE_FLOAT, 4, wd, nullptr, &w);
  cudnnfe_graph_add_tensor(g, "b", CUDNNFE_DTYPE_FLOAT, 4, bd, nullptr, &b);
  cudnnfe_tensor_set_uid(g, w, 77);
  cudnnfe_conv_options_t co;
  cudnnfe_conv_options_init(&co);
  co.pre_padding[0] = 1;
  co.post_padding[1] = 2;
  co.stride[1] = 2;
  co.mode = CUDNNFE_CONV_MODE_CONVOLUTION;
  cudnnfe_graph_add_conv_fprop(g, x, 77, &co, &y);
  cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_ADD, y, b, 0, nullptr, &yb);
  cudnnfe_pointwise_options_t po;
  cudnnfe_pointwise_options_init(&po);
  po.relu_lower_clip_slope = 0.125;
  cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_RELU_FWD, yb, 0, 0, &po, &yr);
  cudnnfe_tensor_set_output(g, yr, 1);
  cudnnfe_tensor_set_uid(g, yr, 500);
  cudnnfe_reduction_options_t ro;
  cudnnfe_reduction_options_init(&ro);
  ro.axes_mask = 0xC;
  cudnnfe_graph_add_reduction(g, CUDNNFE_REDUCTION_AMAX, 500, &ro, &red);
  cudnnfe_tensor_set_output(g, red, 1);
  cudnnfe_tensor_set_dtype(g, red, CUDNNFE_DTYPE_HALF);
  const int64_t ad[] = {2, 4, 8}, md[] = {1, 8, 5};
  int64_t a, m, c, s, cs, gl;
  cudnnfe_graph_add_tensor(g, "a", CUDNNFE_DTYPE_FLOAT, 3, ad, nullptr, &a);
  cudnnfe_graph_add_tensor(g, "m", CUDNNFE_DTYPE_FLOAT, 3, md, nullptr, &m);
  cudnnfe_graph_add_matmul(g, a, m, nullptr, &c);
  cudnnfe_graph_add_scalar(g, "neg_inf", CUDNNFE_DTYPE_FLOAT, -HUGE_VAL, &s);
  cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_MAX, c, s, 0, nullptr, &cs);
  cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_GELU_FWD, cs, 0, 0, nullptr, &gl);
  cudnnfe_tensor_set_output(g, gl, 1);
  const int64_t qd[] = {1, 4, 8, 16}, kd[] = {1, 2, 8, 16};
  int64_t q, k, v, o, st;
  cudnnfe_graph_add_tensor(g, "q", CUDNNFE_DTYPE_FLOAT, 4, qd, nullptr, &q);
  cudnnfe_graph_add_tensor(g, "k", CUDNNFE_DTYPE_FLOAT, 4, kd, nullptr, &k);
  cudnnfe_graph_add_tensor(g, "v", CUDNNFE_DTYPE_FLOAT, 4, kd, nullptr, &v);
  cudnnfe_sdpa_options_t so;
  cudnnfe_sdpa_options_init(&so);
  so.generate_stats = 1;
  so.causal_mask_bottom_right = 1;
  so.attn_scale = 0.3;
  so.name = "attn";
  cudnnfe_graph_add_sdpa(g, q, k, v, &so, &o, &st);
  cudnnfe_tensor_set_output(g, o, 1);
  cudnnfe_tensor_set_output(g, st, 1);
  int64_t d_o, dq, dk, dv;
  cudnnfe_graph_add_tensor(g, "dO", CUDNNFE_DTYPE_FLOAT, 4, qd, nullptr, &d_o);
  cudnnfe_sdpa_backward_options_t sbo;
  cudnnfe_sdpa_backward_options_init(&sbo);
  sbo.causal_mask_bottom_right = 1;
  sbo.attn_scale = 0.3;
  cudnnfe_graph_add_sdpa_backward(g, q, k, v, o, d_o, st, &sbo, &dq, &dk, &dv);
  cudnnfe_tensor_set_output(g, dq, 1);
  cudnnfe_tensor_set_output(g, dk, 1);
  cudnnfe_tensor_set_output(g, dv, 1);
  const int64_t hd[] = {6, 16}, pd[] = {1, 16};
  int64_t hx, gamma, beta, ln, mean, inv_var, rms, inv_rms, sm, lse;
  cudnnfe_graph_add_tensor(g, "hx", CUDNNFE_DTYPE_FLOAT, 2, hd, nullptr, &hx);
  cudnnfe_graph_add_tensor(g, "gamma", CUDNNFE_DTYPE_FLOAT, 2, pd, nullptr, &gamma);
  cudnnfe_graph_add_tensor(g, "beta", CUDNNFE_DTYPE_FLOAT, 2, pd, nullptr, &beta);
  cudnnfe_norm_options_t no;
  cudnnfe_norm_options_init(&no);
  no.epsilon = 1e-6;
  no.zero_centered_gamma = 1;
  cudnnfe_graph_add_layernorm(g, hx, gamma, beta, &no, &ln, &mean, &inv_var);
  no.phase = CUDNNFE_NORM_PHASE_INFERENCE;
  cudnnfe_graph_add_rmsnorm(g, ln, gamma, 0, &no, &rms, &inv_rms);
  cudnnfe_softmax_options_t smo;
  cudnnfe_softmax_options_init(&smo);
  smo.generate_stats = 1;
  cudnnfe_graph_add_softmax(g, rms, &smo, &sm, &lse);
  for (int64_t out : {mean, inv_var, sm, lse}) cudnnfe_tensor_set_output(g, out, 1);
  // Layout, resampling and random numbers.
  const int64_t rd[] = {12, 8}, ss[] = {1, 2}, se[] = {5, 16}, st2[] = {2, 3};
  const int32_t perm[] = {2, 0, 1};
  int64_t re, tr, sl, sl_id, cat, pool, pool_index, up, seed, offset, mask, noise;
  cudnnfe_graph_add_reshape(g, hx, 2, rd, nullptr, &re);
  cudnnfe_graph_add_transpose(g, a, 3, perm, nullptr, &tr);
  cudnnfe_layout_options_t lo;
  cudnnfe_layout_options_init(&lo);
  lo.name = "cut";
  cudnnfe_graph_add_slice(g, hx, 2, ss, se, st2, &lo, &sl);
  cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_IDENTITY, sl, 0, 0, nullptr, &sl_id);
  const int64_t cat_in[] = {a, a, a};
  cudnnfe_graph_add_concatenate(g, 3, cat_in, 1, nullptr, &cat);
  cudnnfe_resample_options_t rso;
  cudnnfe_resample_options_init(&rso);
  rso.window[0] = 3;
  rso.stride[1] = 1;
  rso.pre_padding[0] = 1;
  rso.post_padding[1] = 1;
  rso.generate_index = 1;
  cudnnfe_graph_add_resample(g, x, &rso, &pool, &pool_index);
  cudnnfe_resample_options_init(&rso);
  rso.mode = CUDNNFE_RESAMPLE_BILINEAR;
  rso.scale[1] = 3;
  cudnnfe_graph_add_resample(g, x, &rso, &up, nullptr);
  const int64_t one[] = {1};
  cudnnfe_graph_add_tensor(g, "seed", CUDNNFE_DTYPE_INT64, 1, one, nullptr, &seed);
  cudnnfe_graph_add_tensor(g, "offset", CUDNNFE_DTYPE_INT64, 1, one, nullptr, &offset);
  cudnnfe_rng_options_t rngo;
  cudnnfe_rng_options_init(&rngo);
  rngo.bernoulli_probability = 0.25;
  const int64_t noise_dims[] = {4, 5, 6};
  cudnnfe_graph_add_rng(g, 3, noise_dims, seed, offset, &rngo, &mask);
  rngo.distribution = CUDNNFE_RNG_NORMAL;
  rngo.normal_mean = -1.5;
  rngo.seed = -987654321012345ll;
  cudnnfe_graph_add_rng(g, 3, noise_dims, 0, 0, &rngo, &noise);
  for (int64_t out : {re, tr, sl_id, cat, pool, pool_index, up, mask, noise})
    cudnnfe_tensor_set_output(g, out, 1);
  // A depthwise convolution (groups = 3, from the dims) and genstats of it.
  const int64_t dwd[] = {3, 1, 3, 3};
  int64_t wdw, ydw, gsum, gsq;
  cudnnfe_graph_add_tensor(g, "w_depthwise", CUDNNFE_DTYPE_FLOAT, 4, dwd, nullptr, &wdw);
  cudnnfe_graph_add_conv_fprop(g, x, wdw, nullptr, &ydw);
  cudnnfe_genstats_options_t gso;
  cudnnfe_genstats_options_init(&gso);
  gso.name = "stats";
  cudnnfe_graph_add_genstats(g, ydw, &gso, &gsum, &gsq);
  for (int64_t out : {gsum, gsq}) cudnnfe_tensor_set_output(g, out, 1);
  // bn_finalize of those sums (count = N*H*W of ydw), with running statistics.
  const int64_t cd[] = {1, 3, 1, 1};
  int64_t sc, bi, pm, pv, eps, cnt, mom, fin[6];
  cudnnfe_graph_add_tensor(g, "bn_scale", CUDNNFE_DTYPE_FLOAT, 4, cd, nullptr, &sc);
  cudnnfe_graph_add_tensor(g, "bn_bias", CUDNNFE_DTYPE_FLOAT, 4, cd, nullptr, &bi);
  cudnnfe_graph_add_tensor(g, "bn_prev_mean", CUDNNFE_DTYPE_FLOAT, 4, cd, nullptr, &pm);
  cudnnfe_graph_add_tensor(g, "bn_prev_var", CUDNNFE_DTYPE_FLOAT, 4, cd, nullptr, &pv);
  cudnnfe_graph_add_scalar(g, "bn_eps", CUDNNFE_DTYPE_FLOAT, 1e-3, &eps);
  cudnnfe_graph_add_scalar(g, "bn_count", CUDNNFE_DTYPE_INT64, 32, &cnt);
  cudnnfe_graph_add_scalar(g, "bn_momentum", CUDNNFE_DTYPE_FLOAT, 0.25, &mom);
  cudnnfe_graph_add_bn_finalize(g, gsum, gsq, sc, bi, eps, cnt, pm, pv, mom, nullptr, &fin[0],
                                &fin[1], &fin[2], &fin[3], &fin[4], &fin[5]);
  for (int64_t out : fin) cudnnfe_tensor_set_output(g, out, 1);
  // dbn_weight of ydw (as dy and x) with bn_finalize's statistics.
  int64_t dbnw[5];
  cudnnfe_graph_add_dbn_weight(g, ydw, ydw, fin[2], fin[3], sc, nullptr, &dbnw[0], &dbnw[1],
                               &dbnw[2], &dbnw[3], &dbnw[4]);
  for (int64_t out : dbnw) cudnnfe_tensor_set_output(g, out, 1);
  return g;
}

}  // namespace

TEST(round_trip_is_exact) {
  cudnnfe_graph_t *g = make_rich_graph();
  const std::string first = serialize(g);
  REQUIRE(!first.empty());
  CHECK(first.find("\"format\": \"cudnnfe.graph\"") != std::string::npos);
  CHECK(first.find("\"version\": 1") != std::string::npos);
  for (const char *op : {"reshape", "transpose", "slice", "concatenate", "resample", "rng",
                         "genstats", "bn_finalize", "dbn_weight"})
    CHECK_MSG(first.find(std::string("\"op\": \"") + op + "\"") != std::string::npos,
              "no %s node in the rich graph", op);
  CHECK(first.find("\"BILINEAR\"") != std::string::npos);
  CHECK(first.find("-987654321012345") != std::string::npos);
  cudnnfe_graph_t *loaded;
  cudnnfe_graph_create(&loaded);
  REQUIRE_OK(cudnnfe_graph_deserialize(loaded, first.data(), first.size()));
  const std::string second = serialize(loaded);
  CHECK(second == first);
  if (second != first) std::printf("first:\n%s\nsecond:\n%s\n", first.c_str(), second.c_str());
  CHECK_OK(cudnnfe_graph_validate(loaded));
  int64_t uid;
  CHECK_OK(cudnnfe_graph_find_tensor(loaded, "w", &uid));
  CHECK(uid == 77);
  cudnnfe_graph_destroy(g);
  cudnnfe_graph_destroy(loaded);
}

TEST(round_trip_gives_bit_identical_results) {
  cudnnfe_graph_t *g = make_rich_graph();
  const std::string json = serialize(g);
  cudnnfe_graph_t *loaded;
  cudnnfe_graph_create(&loaded);
  REQUIRE_OK(cudnnfe_graph_deserialize(loaded, json.data(), json.size()));
  cudnnfe_build_options_t bo;
  cudnnfe_build_options_init(&bo);
  bo.target = CUDNNFE_TARGET_CPU_REFERENCE;
  REQUIRE_OK(cudnnfe_graph_build(g, nullptr, &bo));
  REQUIRE_OK(cudnnfe_graph_build(loaded, nullptr, &bo));
  cudnnfe_handle_t *h;
  cudnnfe_handle_create(&h, -1);
  // Bind every bound tensor of each graph to buffers filled the same way.
  std::vector<std::vector<unsigned char>> results[2];
  cudnnfe_graph_t *graphs[2] = {g, loaded};
  for (int which = 0; which < 2; ++which) {
    size_t count = 0;
    cudnnfe_graph_get_bound_uids(graphs[which], nullptr, 0, &count);
    std::vector<int64_t> uids(count);
    cudnnfe_graph_get_bound_uids(graphs[which], uids.data(), count, &count);
    std::vector<std::vector<unsigned char>> buffers(count);
    std::vector<void *> ptrs(count);
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (size_t i = 0; i < count; ++i) {
      int32_t n;
      int64_t dims[8], strides[8];
      cudnnfe_tensor_get_shape(graphs[which], uids[i], dims, strides, 8, &n);
      int64_t span = 1;
      for (int d = 0; d < n; ++d) span += (dims[d] - 1) * strides[d];
      cudnnfe_dtype_t dt;
      cudnnfe_tensor_get_dtype(graphs[which], uids[i], &dt);
      buffers[i].assign(span * cudnnfe_dtype_size(dt), 0);
      if (dt == CUDNNFE_DTYPE_FLOAT)
        for (int64_t e = 0; e < span; ++e) {
          float f = dist(rng);
          std::memcpy(&buffers[i][e * 4], &f, 4);
        }
      ptrs[i] = buffers[i].data();
    }
    REQUIRE_OK(
        cudnnfe_graph_execute_ordered(graphs[which], h, ptrs.data(), count, nullptr, 0, nullptr));
    results[which] = buffers;
  }
  CHECK(results[0] == results[1]);
  cudnnfe_handle_destroy(h);
  cudnnfe_graph_destroy(g);
  cudnnfe_graph_destroy(loaded);
}

TEST(corrupt_inputs_are_rejected) {
  cudnnfe_graph_t *g = make_rich_graph();
  const std::string good = serialize(g);
  cudnnfe_graph_destroy(g);
  auto replaced = [&](const std::string &from, const std::string &to) {
    std::string s = good;
    size_t at = s.find(from);
    if (at != std::string::npos) s.replace(at, from.size(), to);
    return s;
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "empty input"},
      {"{", "expected a key string"},
      {"[]", "expected an object"},
      {"{\"format\": \"other\", \"version\": 1}", "format"},
      {replaced("\"version\": 1", "\"version\": 99"), "version 99"},
      {replaced("\"version\": 1", "\"version\": \"1\""), "expected an integer"},
      {replaced("\"tensors\"", "\"tensorz\""), "missing key \"tensors\""},
      {replaced("\"FLOAT\"", "\"FLOAT128\""), "unknown data type"},
      {replaced("\"conv_fprop\"", "\"conv_magic\""), "unknown op"},
      {replaced("\"RELU_FWD\"", "\"RELU_MAGIC\""), "unknown pointwise mode"},
      {replaced("\"AMAX\"", "\"SOMETIMES\""), "unknown reduction mode"},
      {replaced("\"uid\": 77", "\"uid\": -5"), "outside"},
      {replaced("\"uid\": 77", "\"uid\": 99999999999999999999"), "out of range"},
      {replaced("\"uid\": 77", "\"uid\": 1"), "UID"},
      {replaced("\"weight\": 77", "\"weight\": 123456"), "123456"},
      {replaced("\"kind\": \"input\"", "\"kind\": \"ghost\""), "unknown \"ghost\""},
      {replaced("\"dims\": [2, 3, 6, 6]", "\"dims\": [2, 3, 6, -6]"), "dim 3 is -6"},
      {replaced("\"dims\": [2, 3, 6, 6]", "\"dims\": [2, 3, 6, 6, 1, 1, 1, 1, 1]"), "at most 8"},
      {replaced("\"dims\": [2, 3, 6, 6]", "\"dims\": [2, 5, 6, 6]"), "conv_fprop"},
      {replaced("\"stride\": [1, 2]", "\"stride\": [1, 0]"), "stride"},
      {good.substr(0, good.size() / 2), "graph JSON: byte"},
      {good + "garbage", "after the JSON document"},
      {std::string(100, '[') + std::string(100, ']'), "nesting deeper"},
      {replaced("\"rich", "\"\\ud800rich"), "surrogate"},
      {replaced("\"rich", "\"\\q"), "unknown escape"},
      {replaced("\"attn_scale\": 0.29999999999999999", "\"attn_scale\": 1e999"), "malformed"},
      {replaced("\"causal_mask\": false", "\"causal_mask\": true"), "exclusive"},
      {replaced("\"generate_stats\": true", "\"generate_stats\": false"), "do not produce it"},
  };
  int index = 0;
  for (const auto &[bytes, expected] : cases) {
    cudnnfe_graph_t *loaded;
    cudnnfe_graph_create(&loaded);
    cudnnfe_status_t s = cudnnfe_graph_deserialize(loaded, bytes.data(), bytes.size());
    const char *msg = cudnnfe_graph_last_error(loaded);
    CHECK_MSG(s == CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "case %d: status %s (%s)", index,
              cudnnfe_status_name(s), msg);
    CHECK_MSG(std::strstr(msg, expected.c_str()), "case %d: message \"%s\" lacks \"%s\"", index,
              msg, expected.c_str());
    // A failed load leaves the graph empty and usable.
    size_t tensors = 1;
    cudnnfe_graph_get_tensor_count(loaded, &tensors);
    CHECK_MSG(tensors == 0, "case %d left %zu tensors", index, tensors);
    cudnnfe_graph_destroy(loaded);
    ++index;
  }
  CHECK(index >= 20);
}

// A bounded in-test fuzz: random byte flips, insertions and truncations of a
// valid document must give OK or BAD_SERIALIZED_DATA, never a crash (the
// sanitizer build runs this too). The libFuzzer target lives in fuzz/.
TEST(random_mutations_never_crash) {
  cudnnfe_graph_t *g = make_rich_graph();
  const std::string good = serialize(g);
  cudnnfe_graph_destroy(g);
  std::mt19937 rng(42);
  int ok = 0, rejected = 0, other = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s = good;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      size_t at = rng() % s.size();
      switch (rng() % 4) {
        case 0: s[at] = static_cast<char>(rng() % 256); break;
        case 1: s.insert(at, 1, "{}[]\",:0-9e\\"[rng() % 12]); break;
        case 2: s.erase(at, 1 + rng() % 8); break;
        case 3: s.resize(at); break;
      }
    }
    cudnnfe_graph_t *loaded;
    cudnnfe_graph_create(&loaded);
    cudnnfe_status_t status = cudnnfe_graph_deserialize(loaded, s.data(), s.size());
    if (status == CUDNNFE_STATUS_OK)
      ++ok;
    else if (status == CUDNNFE_STATUS_BAD_SERIALIZED_DATA)
      ++rejected;
    else {
      ++other;
      std::printf("  unexpected status %s: %s\n", cudnnfe_status_name(status),
                  cudnnfe_graph_last_error(loaded));
    }
    cudnnfe_graph_destroy(loaded);
  }
  std::printf("  mutations: %d loaded, %d rejected\n", ok, rejected);
  CHECK(other == 0);
  CHECK(rejected > 2000);
}

namespace {

// Every batch, instance and adaptive layer norm kind, with running
// statistics, zero-centred gamma and an inference-phase instance norm.
cudnnfe_graph_t *make_norm_graph() {
  cudnnfe_graph_t *g;
  cudnnfe_graph_create(&g);
  const int64_t xd[] = {2, 4, 3, 3}, xs[] = {36, 1, 12, 4}, cd[] = {1, 4, 1, 1};
  const int64_t nd[] = {2, 4, 1, 1}, ad[] = {2, 3, 8}, pd[] = {2, 1, 8}, sd[] = {2, 3, 1};
  int64_t x, scale, bias, rm, rv, dy, ax, as, ab, ady;
  cudnnfe_graph_add_tensor(g, "x", CUDNNFE_DTYPE_FLOAT, 4, xd, xs, &x);
  cudnnfe_graph_add_tensor(g, "scale", CUDNNFE_DTYPE_FLOAT, 4, cd, nullptr, &scale);
  cudnnfe_graph_add_tensor(g, "bias", CUDNNFE_DTYPE_FLOAT, 4, cd, nullptr, &bias);
  cudnnfe_graph_add_tensor(g, "running_mean", CUDNNFE_DTYPE_FLOAT, 4, cd, nullptr, &rm);
  cudnnfe_graph_add_tensor(g, "running_var", CUDNNFE_DTYPE_FLOAT, 4, cd, nullptr, &rv);
  cudnnfe_graph_add_tensor(g, "dy", CUDNNFE_DTYPE_FLOAT, 4, xd, xs, &dy);
  cudnnfe_graph_add_tensor(g, "ax", CUDNNFE_DTYPE_FLOAT, 3, ad, nullptr, &ax);
  cudnnfe_graph_add_tensor(g, "as", CUDNNFE_DTYPE_FLOAT, 3, pd, nullptr, &as);
  cudnnfe_graph_add_tensor(g, "ab", CUDNNFE_DTYPE_FLOAT, 3, pd, nullptr, &ab);
  cudnnfe_graph_add_tensor(g, "ady", CUDNNFE_DTYPE_FLOAT, 3, ad, nullptr, &ady);
  (void)nd;
  (void)sd;
  cudnnfe_norm_options_t o;
  cudnnfe_norm_options_init(&o);
  o.epsilon = 1e-3;
  o.momentum = 0.25;
  o.name = "bn";
  std::vector<int64_t> outs(40, 0);
  int64_t *r = outs.data();
  cudnnfe_graph_add_batchnorm(g, x, scale, bias, rm, rv, &o, &r[0], &r[1], &r[2], &r[3], &r[4]);
  o.name = "bn_infer";
  cudnnfe_graph_add_batchnorm_inference(g, x, scale, bias, r[1], r[2], &o, &r[5]);
  o.name = "bn_bwd";
  cudnnfe_graph_add_batchnorm_backward(g, dy, x, scale, r[1], r[2], &o, &r[6], &r[7], &r[8]);
  o.name = "in";
  cudnnfe_graph_add_instancenorm(g, x, scale, bias, &o, &r[9], &r[10], &r[11]);
  o.name = "in_bwd";
  cudnnfe_graph_add_instancenorm_backward(g, dy, x, scale, r[10], r[11], &o, &r[12], &r[13],
                                          &r[14]);
  o.name = "in_infer";
  o.phase = CUDNNFE_NORM_PHASE_INFERENCE;
  cudnnfe_graph_add_instancenorm(g, x, scale, bias, &o, &r[15], nullptr, nullptr);
  o.phase = CUDNNFE_NORM_PHASE_TRAINING;
  o.zero_centered_gamma = 1;
  o.name = "ada";
  cudnnfe_graph_add_adalayernorm(g, ax, as, ab, &o, &r[16], &r[17], &r[18]);
  o.name = "ada_bwd";
  cudnnfe_graph_add_adalayernorm_backward(g, ady, ax, as, r[17], r[18], &o, &r[19], &r[20], &r[21]);
  for (int64_t uid : outs)
    if (uid) cudnnfe_tensor_set_output(g, uid, 1);
  return g;
}

// Runs a CPU build of `g` on inputs filled from `seed`; every bound buffer.
std::vector<std::vector<float>> run_cpu(cudnnfe_graph_t *g, unsigned seed) {
  cudnnfe_build_options_t bo;
  cudnnfe_build_options_init(&bo);
  bo.target = CUDNNFE_TARGET_CPU_REFERENCE;
  std::vector<std::vector<float>> buffers;
  if (cudnnfe_graph_build(g, nullptr, &bo) != CUDNNFE_STATUS_OK) return buffers;
  size_t count = 0;
  cudnnfe_graph_get_bound_uids(g, nullptr, 0, &count);
  std::vector<int64_t> uids(count);
  cudnnfe_graph_get_bound_uids(g, uids.data(), count, &count);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(0.25f, 1.5f);
  std::vector<void *> ptrs;
  for (int64_t uid : uids) {
    int32_t n;
    int64_t dims[8], strides[8];
    cudnnfe_tensor_get_shape(g, uid, dims, strides, 8, &n);
    int64_t span = 1;
    for (int d = 0; d < n; ++d) span += (dims[d] - 1) * strides[d];
    buffers.emplace_back(static_cast<size_t>(span));
    for (float &v : buffers.back()) v = dist(rng);
  }
  for (auto &b : buffers) ptrs.push_back(b.data());
  cudnnfe_handle_t *h;
  cudnnfe_handle_create(&h, -1);
  if (cudnnfe_graph_execute_ordered(g, h, ptrs.data(), count, nullptr, 0, nullptr) !=
      CUDNNFE_STATUS_OK)
    buffers.clear();
  cudnnfe_handle_destroy(h);
  return buffers;
}

}  // namespace

TEST(norms_round_trip_and_bad_attributes) {
  cudnnfe_graph_t *g = make_norm_graph();
  const std::string first = serialize(g);
  REQUIRE(!first.empty());
  for (const char *op :
       {"\"batchnorm\"", "\"batchnorm_inference\"", "\"batchnorm_backward\"", "\"instancenorm\"",
        "\"instancenorm_backward\"", "\"adalayernorm\"", "\"adalayernorm_backward\"",
        "\"momentum\": 0.25", "\"prev_running_var\"", "\"next_running_mean\""})
    CHECK_MSG(first.find(op) != std::string::npos, "JSON lacks %s", op);
  cudnnfe_graph_t *loaded;
  cudnnfe_graph_create(&loaded);
  REQUIRE_OK(cudnnfe_graph_deserialize(loaded, first.data(), first.size()));
  CHECK(serialize(loaded) == first);
  const auto a = run_cpu(g, 7), b = run_cpu(loaded, 7);
  CHECK(!a.empty() && a == b);
  cudnnfe_graph_destroy(loaded);
  cudnnfe_graph_destroy(g);
  auto replaced = [&](const std::string &from, const std::string &to) {
    std::string s = first;
    size_t at = s.find(from);
    if (at != std::string::npos) s.replace(at, from.size(), to);
    return s;
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {replaced("\"momentum\": 0.25", "\"momentum\": 7"), "momentum is 7"},
      {replaced("\"momentum\": 0.25,", ""), "missing key \"momentum\""},
      {replaced("\"op\": \"batchnorm\"", "\"op\": \"batchnorm_magic\""), "unknown op"},
      {replaced("\"phase\": \"TRAINING\"", "\"phase\": \"INFERENCE\""),
       "cudnnfe_graph_add_batchnorm_inference"},
      {replaced("\"zero_centered_gamma\": false", "\"zero_centered_gamma\": true"),
       "zero_centered_gamma is offered by"},
  };
  for (const auto &[bytes, expected] : cases) {
    cudnnfe_graph_t *bad;
    cudnnfe_graph_create(&bad);
    cudnnfe_status_t s = cudnnfe_graph_deserialize(bad, bytes.data(), bytes.size());
    const char *msg = cudnnfe_graph_last_error(bad);
    CHECK_MSG(s == CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "status %s (%s)", cudnnfe_status_name(s),
              msg);
    CHECK_MSG(std::strstr(msg, expected.c_str()), "message \"%s\" lacks \"%s\"", msg,
              expected.c_str());
    cudnnfe_graph_destroy(bad);
  }
}

namespace {

// Attention with every option: forward with padding, ALiBi, a scale
// tensor and drawn dropout; backward with a bottom-right band, a dropout
// mask and dBias.
cudnnfe_graph_t *make_attention_graph() {
  cudnnfe_graph_t *g;
  cudnnfe_graph_create(&g);
  cudnnfe_graph_set_io_dtype(g, CUDNNFE_DTYPE_FLOAT);
  const int64_t qd[] = {2, 4, 8, 16}, kd[] = {2, 2, 8, 16}, one[] = {1, 1, 1, 1},
                lens[] = {2, 1, 1, 1}, md[] = {2, 4, 8, 8}, bd[] = {1, 4, 8, 8},
                sd[] = {2, 4, 8, 1};
  int64_t q, k, v, scale, sq, skv, seed, offset, o, st;
  cudnnfe_graph_add_tensor(g, "q", CUDNNFE_DTYPE_FLOAT, 4, qd, nullptr, &q);
  cudnnfe_graph_add_tensor(g, "k", CUDNNFE_DTYPE_FLOAT, 4, kd, nullptr, &k);
  cudnnfe_graph_add_tensor(g, "v", CUDNNFE_DTYPE_FLOAT, 4, kd, nullptr, &v);
  cudnnfe_graph_add_tensor(g, "scale", CUDNNFE_DTYPE_FLOAT, 4, one, nullptr, &scale);
  cudnnfe_graph_add_tensor(g, "seq_q", CUDNNFE_DTYPE_INT32, 4, lens, nullptr, &sq);
  cudnnfe_graph_add_tensor(g, "seq_kv", CUDNNFE_DTYPE_INT32, 4, lens, nullptr, &skv);
  cudnnfe_graph_add_tensor(g, "seed", CUDNNFE_DTYPE_INT64, 4, one, nullptr, &seed);
  cudnnfe_graph_add_scalar(g, "offset", CUDNNFE_DTYPE_INT64, 7, &offset);
  cudnnfe_sdpa_options_t so;
  cudnnfe_sdpa_options_init(&so);
  so.name = "attn";
  so.generate_stats = 1;
  so.causal_mask = 1;
  so.attn_scale_tensor = scale;
  so.padding_mask = 1;
  so.seq_len_q = sq;
  so.seq_len_kv = skv;
  so.window_left = 3;
  so.alibi_mask = 1;
  so.dropout_probability = 0.25;
  so.dropout_seed = seed;
  so.dropout_offset = offset;
  if (cudnnfe_graph_add_sdpa(g, q, k, v, &so, &o, &st) != CUDNNFE_STATUS_OK)
    std::printf("  add_sdpa: %s\n", cudnnfe_last_error());
  cudnnfe_tensor_set_output(g, o, 1);
  cudnnfe_tensor_set_output(g, st, 1);
  int64_t o2, st2, d_o, mask, dscale, dscale_inv, bias, dq, dk, dv, db;
  cudnnfe_graph_add_tensor(g, "o2", CUDNNFE_DTYPE_FLOAT, 4, qd, nullptr, &o2);
  cudnnfe_graph_add_tensor(g, "dO", CUDNNFE_DTYPE_FLOAT, 4, qd, nullptr, &d_o);
  cudnnfe_graph_add_tensor(g, "st2", CUDNNFE_DTYPE_FLOAT, 4, sd, nullptr, &st2);
  cudnnfe_graph_add_tensor(g, "mask", CUDNNFE_DTYPE_FLOAT, 4, md, nullptr, &mask);
  cudnnfe_graph_add_tensor(g, "dscale", CUDNNFE_DTYPE_FLOAT, 4, one, nullptr, &dscale);
  cudnnfe_graph_add_tensor(g, "dscale_inv", CUDNNFE_DTYPE_FLOAT, 4, one, nullptr, &dscale_inv);
  cudnnfe_graph_add_tensor(g, "bias", CUDNNFE_DTYPE_FLOAT, 4, bd, nullptr, &bias);
  cudnnfe_sdpa_backward_options_t bo;
  cudnnfe_sdpa_backward_options_init(&bo);
  bo.name = "attn_bwd";
  bo.attn_scale = 0.25;
  bo.diagonal_alignment = CUDNNFE_DIAGONAL_BOTTOM_RIGHT;
  bo.window_left = 2;
  bo.window_right = 1;
  bo.bias = bias;
  bo.dropout_mask = mask;
  bo.dropout_scale = dscale;
  bo.dropout_scale_inv = dscale_inv;
  if (cudnnfe_graph_add_sdpa_backward_ex(g, q, k, v, o2, d_o, st2, &bo, &dq, &dk, &dv, &db) !=
      CUDNNFE_STATUS_OK)
    std::printf("  add_sdpa_backward_ex: %s\n", cudnnfe_last_error());
  for (int64_t out : {dq, dk, dv, db}) cudnnfe_tensor_set_output(g, out, 1);
  return g;
}

// Removes the line holding `"key": ...` from a document written by
// serialize (one key per line), fixing the comma when it was the last key.
std::string drop_key(std::string s, const std::string &key) {
  for (size_t at; (at = s.find("\"" + key + "\": ")) != std::string::npos;) {
    const size_t start = s.rfind('\n', at), end = s.find('\n', at);
    const bool last = s[end - 1] != ',';
    s.erase(start, end - start);
    if (last && s[start - 1] == ',') s.erase(start - 1, 1);
  }
  return s;
}

}  // namespace

TEST(attention_options_round_trip) {
  cudnnfe_graph_t *g = make_attention_graph();
  const std::string first = serialize(g);
  REQUIRE(!first.empty());
  for (const char *part :
       {"\"padding_mask\": true", "\"window_left\": 3", "\"window_right\": 1",
        "\"diagonal_alignment\": \"BOTTOM_RIGHT\"", "\"alibi_mask\": true",
        "\"dropout_probability\": 0.25", "\"generate_dbias\": true",
        "\"seq_len_q\": ", "\"dropout_seed\": ", "\"dropout_offset\": ", "\"attn_scale\": ",
        "\"dropout_mask\": ", "\"dropout_scale_inv\": ", "\"dBias\": "})
    CHECK_MSG(first.find(part) != std::string::npos, "JSON lacks %s", part);
  cudnnfe_graph_t *loaded;
  cudnnfe_graph_create(&loaded);
  REQUIRE_OK(cudnnfe_graph_deserialize(loaded, first.data(), first.size()));
  CHECK(serialize(loaded) == first);
  CHECK_OK(cudnnfe_graph_validate(loaded));
  cudnnfe_graph_destroy(loaded);
  // A loaded option is validated like a built one.
  cudnnfe_graph_create(&loaded);
  std::string bad = first;
  bad.replace(bad.find("\"window_left\": 3"), 16, "\"window_left\": 0");
  CHECK_FAILS(cudnnfe_graph_deserialize(loaded, bad.data(), bad.size()),
              CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "window_left is 0");
  bad = first;
  bad.replace(bad.find("\"BOTTOM_RIGHT\""), 14, "\"SIDEWAYS\"");
  CHECK_FAILS(cudnnfe_graph_deserialize(loaded, bad.data(), bad.size()),
              CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "diagonal_alignment: unknown \"SIDEWAYS\"");
  cudnnfe_graph_destroy(loaded);
  cudnnfe_graph_destroy(g);
}

TEST(attention_documents_without_the_option_keys_still_load) {
  // Documents written before the options existed lack their keys: the
  // defaults apply (no padding, open band, no ALiBi, no dropout, no dBias).
  cudnnfe_graph_t *g = make_rich_graph();
  const std::string current = serialize(g);
  std::string old = current;
  for (const char *key : {"padding_mask", "window_left", "window_right", "diagonal_alignment",
                          "alibi_mask", "dropout_probability", "generate_dbias"})
    old = drop_key(old, key);
  CHECK(old.find("window_left") == std::string::npos);
  cudnnfe_graph_t *loaded;
  cudnnfe_graph_create(&loaded);
  REQUIRE_OK(cudnnfe_graph_deserialize(loaded, old.data(), old.size()));
  CHECK(serialize(loaded) == current);
  cudnnfe_graph_destroy(loaded);
  cudnnfe_graph_destroy(g);
}

namespace {

// moe_grouped_matmul in SCATTER mode (every port used) and its backward.
cudnnfe_graph_t *make_moe_graph() {
  cudnnfe_graph_t *g;
  cudnnfe_graph_create(&g);
  auto add = [&](const char *name, cudnnfe_dtype_t t, std::vector<int64_t> d,
                 std::vector<int64_t> s) {
    int64_t uid = 0;
    cudnnfe_graph_add_tensor(g, name, t, 3, d.data(), s.empty() ? nullptr : s.data(), &uid);
    return uid;
  };
  const int64_t token = add("token", CUDNNFE_DTYPE_HALF, {1, 8, 4}, {});
  const int64_t weight = add("weight", CUDNNFE_DTYPE_HALF, {2, 4, 3}, {12, 1, 4});
  const int64_t offsets = add("offsets", CUDNNFE_DTYPE_INT32, {3, 1, 1}, {});
  const int64_t index = add("index", CUDNNFE_DTYPE_INT32, {1, 8, 1}, {});
  const int64_t ks = add("ks", CUDNNFE_DTYPE_INT32, {1, 8, 1}, {});
  cudnnfe_moe_grouped_matmul_options_t o;
  cudnnfe_moe_grouped_matmul_options_init(&o);
  o.name = "moe";
  o.mode = CUDNNFE_MOE_GROUPED_MATMUL_MODE_SCATTER;
  o.top_k = 2;
  int64_t out = 0, dw = 0;
  cudnnfe_graph_add_moe_grouped_matmul(g, token, weight, offsets, index, ks, &o, &out);
  cudnnfe_moe_grouped_matmul_options_init(&o);
  o.compute_dtype = CUDNNFE_DTYPE_FLOAT;
  cudnnfe_graph_add_moe_grouped_matmul_backward(g, out, token, offsets, &o, &dw);
  const int64_t dw_dims[] = {2, 4, 3};
  cudnnfe_tensor_set_dims(g, dw, 3, dw_dims);
  cudnnfe_tensor_set_output(g, out, 1);
  cudnnfe_tensor_set_output(g, dw, 1);
  return g;
}

}  // namespace

TEST(moe_round_trip_and_mutations) {
  cudnnfe_graph_t *g = make_moe_graph();
  REQUIRE_OK(cudnnfe_graph_validate(g));
  const std::string good = serialize(g);
  for (const char *part : {"\"moe_grouped_matmul\"", "\"moe_grouped_matmul_backward\"",
                           "\"mode\": \"SCATTER\"", "\"top_k\": 2", "\"token_ks\""})
    CHECK_MSG(good.find(part) != std::string::npos, "JSON lacks %s", part);
  cudnnfe_graph_t *loaded;
  cudnnfe_graph_create(&loaded);
  REQUIRE_OK(cudnnfe_graph_deserialize(loaded, good.data(), good.size()));
  CHECK(serialize(loaded) == good);
  cudnnfe_graph_destroy(loaded);
  std::string bad = good;
  bad.replace(bad.find("\"top_k\": 2"), 10, "\"top_k\": 0");
  cudnnfe_graph_create(&loaded);
  CHECK_FAILS(cudnnfe_graph_deserialize(loaded, bad.data(), bad.size()),
              CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "top_k");
  cudnnfe_graph_destroy(loaded);
  // Mutated documents load or are refused as bad data, never anything else.
  std::mt19937 rng(7);
  int other = 0, rejected = 0;
  for (int iter = 0; iter < 1000; ++iter) {
    std::string s = good;
    const size_t at = rng() % s.size();
    switch (rng() % 3) {
      case 0: s[at] = "0123456789-[]{}\",:"[rng() % 18]; break;
      case 1: s.erase(at, 1 + rng() % 8); break;
      case 2: s.resize(at); break;
    }
    cudnnfe_graph_create(&loaded);
    const cudnnfe_status_t status = cudnnfe_graph_deserialize(loaded, s.data(), s.size());
    if (status == CUDNNFE_STATUS_BAD_SERIALIZED_DATA) ++rejected;
    if (status != CUDNNFE_STATUS_OK && status != CUDNNFE_STATUS_BAD_SERIALIZED_DATA && other++ < 3)
      std::printf("  unexpected status %s: %s\n", cudnnfe_status_name(status),
                  cudnnfe_graph_last_error(loaded));
    cudnnfe_graph_destroy(loaded);
  }
  CHECK(other == 0);
  CHECK(rejected > 500);
  cudnnfe_graph_destroy(g);
}

// paged_cache_load with y's dims and K^T strides set: the JSON names the op
// and its ports, reloads to the same document and validates; a reloaded
// document whose y no longer fits the page table is refused at load.
TEST(paged_cache_load_round_trip) {
  cudnnfe_graph_t *g;
  cudnnfe_graph_create(&g);
  auto add = [&](const char *name, cudnnfe_dtype_t t, std::vector<int64_t> d) {
    int64_t uid = 0;
    cudnnfe_graph_add_tensor(g, name, t, 4, d.data(), nullptr, &uid);
    return uid;
  };
  const int64_t container = add("cache", CUDNNFE_DTYPE_HALF, {8, 2, 16, 64});
  const int64_t lengths = add("lengths", CUDNNFE_DTYPE_INT32, {2, 1, 1, 1});
  const int64_t table = add("table", CUDNNFE_DTYPE_INT32, {2, 1, 4, 1});
  cudnnfe_paged_cache_load_options_t o;
  cudnnfe_paged_cache_load_options_init(&o);
  o.name = "load_k";
  int64_t y = 0;
  REQUIRE_OK(cudnnfe_graph_add_paged_cache_load(g, container, lengths, table, &o, &y));
  const int64_t dims[] = {2, 2, 60, 64}, strides[] = {2 * 64 * 60, 64 * 60, 1, 60};
  REQUIRE_OK(cudnnfe_tensor_set_dims(g, y, 4, dims));
  REQUIRE_OK(cudnnfe_tensor_set_strides(g, y, 4, strides));
  cudnnfe_tensor_set_output(g, y, 1);
  REQUIRE_OK(cudnnfe_graph_validate(g));
  const std::string good = serialize(g);
  for (const char *part : {"\"op\": \"paged_cache_load\"", "\"container\"", "\"seq_len\"",
                           "\"page_table\"", "\"load_k::y\""})
    CHECK_MSG(good.find(part) != std::string::npos, "JSON lacks %s", part);
  cudnnfe_graph_t *loaded;
  cudnnfe_graph_create(&loaded);
  REQUIRE_OK(cudnnfe_graph_deserialize(loaded, good.data(), good.size()));
  CHECK(serialize(loaded) == good);
  CHECK_OK(cudnnfe_graph_validate(loaded));
  cudnnfe_graph_destroy(loaded);
  // s = 48 needs three pages of 16, but the table holds four per sequence.
  std::string bad = good;
  const size_t at = bad.find("[2, 2, 60, 64]");
  REQUIRE(at != std::string::npos);
  bad.replace(at, 14, "[2, 2, 48, 64]");
  cudnnfe_graph_create(&loaded);
  CHECK(cudnnfe_graph_deserialize(loaded, bad.data(), bad.size()) != CUDNNFE_STATUS_OK);
  CHECK(std::string(cudnnfe_graph_last_error(loaded)).find("ceil(s / page_size) = 4") !=
        std::string::npos);
  cudnnfe_graph_destroy(loaded);
  cudnnfe_graph_destroy(g);
}
