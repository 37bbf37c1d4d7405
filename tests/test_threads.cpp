// The thread rules of docs/design.md: a built graph executed from many
// threads at once, graphs built concurrently, errors landing on the right
// handle.
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace {

// y = relu(x * scale) over n floats, built for the CPU reference.
cudnnfe_graph_t *build_scaled_relu(int n, double scale, int64_t *x, int64_t *y) {
  cudnnfe_graph_t *g;
  cudnnfe_graph_create(&g);
  const int64_t dims[] = {n};
  int64_t s, t;
  cudnnfe_graph_add_tensor(g, "x", CUDNNFE_DTYPE_FLOAT, 1, dims, nullptr, x);
  cudnnfe_graph_add_scalar(g, "scale", CUDNNFE_DTYPE_FLOAT, scale, &s);
  cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_MUL, *x, s, 0, nullptr, &t);
  cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_RELU_FWD, t, 0, 0, nullptr, y);
  cudnnfe_tensor_set_output(g, *y, 1);
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.target = CUDNNFE_TARGET_CPU_REFERENCE;
  if (cudnnfe_graph_build(g, nullptr, &o) != CUDNNFE_STATUS_OK) {
    std::printf("  build failed: %s\n", cudnnfe_graph_last_error(g));
    cudnnfe_graph_destroy(g);
    return nullptr;
  }
  return g;
}

}  // namespace

TEST(one_built_graph_many_threads) {
  int64_t x, y;
  const int n = 1000;
  cudnnfe_graph_t *g = build_scaled_relu(n, 2.0, &x, &y);
  REQUIRE(g);
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      cudnnfe_handle_t *h;
      cudnnfe_handle_create(&h, -1);
      std::vector<float> in(n), out(n);
      for (int iter = 0; iter < 50; ++iter) {
        for (int i = 0; i < n; ++i) in[i] = static_cast<float>((i + t * 7 + iter) % 11) - 5.f;
        cudnnfe_binding_t b[] = {{x, in.data()}, {y, out.data()}};
        if (cudnnfe_graph_execute(g, h, b, 2, nullptr, 0, nullptr) != CUDNNFE_STATUS_OK) {
          ++failed;
          continue;
        }
        for (int i = 0; i < n; ++i)
          if (out[i] != (in[i] > 0 ? 2.f * in[i] : 0.f)) ++wrong;
      }
      cudnnfe_handle_destroy(h);
    });
  }
  for (auto &th : threads) th.join();
  CHECK(failed == 0);
  CHECK(wrong == 0);
  cudnnfe_graph_destroy(g);
}

TEST(graphs_built_concurrently) {
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int iter = 0; iter < 20; ++iter) {
        int64_t x, y;
        cudnnfe_graph_t *g = build_scaled_relu(16 + t, 1.0 + t, &x, &y);
        if (!g) {
          ++bad;
          continue;
        }
        std::vector<float> in(16 + t, 1.f), out(16 + t, 0.f);
        cudnnfe_handle_t *h;
        cudnnfe_handle_create(&h, -1);
        cudnnfe_binding_t b[] = {{x, in.data()}, {y, out.data()}};
        if (cudnnfe_graph_execute(g, h, b, 2, nullptr, 0, nullptr) != CUDNNFE_STATUS_OK ||
            out[0] != 1.f + t)
          ++bad;
        cudnnfe_handle_destroy(h);
        cudnnfe_graph_destroy(g);
      }
    });
  }
  for (auto &th : threads) th.join();
  CHECK(bad == 0);
}

// Each thread provokes its own execute error on a shared graph; the message on
// each handle must name that thread's bad UID, whatever the others did.
TEST(errors_land_on_their_own_handle) {
  int64_t x, y;
  cudnnfe_graph_t *g = build_scaled_relu(4, 1.0, &x, &y);
  REQUIRE(g);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      cudnnfe_handle_t *h;
      cudnnfe_handle_create(&h, -1);
      float in[4], out[4];
      for (int iter = 0; iter < 100; ++iter) {
        const int64_t bad_uid = 100000 + t * 1000 + iter;
        cudnnfe_binding_t b[] = {{x, in}, {y, out}, {bad_uid, out}};
        if (cudnnfe_graph_execute(g, h, b, 3, nullptr, 0, nullptr) !=
            CUDNNFE_STATUS_INVALID_ARGUMENT)
          ++wrong;
        const std::string expected = "UID " + std::to_string(bad_uid);
        if (!std::strstr(cudnnfe_handle_last_error(h), expected.c_str())) ++wrong;
        if (!std::strstr(cudnnfe_last_error(), expected.c_str())) ++wrong;
      }
      cudnnfe_handle_destroy(h);
    });
  }
  for (auto &th : threads) th.join();
  CHECK(wrong == 0);
  // The shared graph's own message slot was not touched by execute errors.
  CHECK(std::strlen(cudnnfe_graph_last_error(g)) == 0);
  cudnnfe_graph_destroy(g);
}

TEST(create_destroy_race_is_safe) {
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        cudnnfe_graph_t *g;
        cudnnfe_handle_t *h;
        if (cudnnfe_graph_create(&g) || cudnnfe_handle_create(&h, -1)) ++bad;
        if (cudnnfe_graph_destroy(g) || cudnnfe_handle_destroy(h)) ++bad;
      }
    });
  }
  for (auto &th : threads) th.join();
  CHECK(bad == 0);
}
