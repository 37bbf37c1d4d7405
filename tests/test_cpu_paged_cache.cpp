// The CPU reference of paged_cache_load against loops written here, through
// the public C API: row-major and K^T-strided outputs, y's dims set below
// pages * page_size, lengths that end inside a page, and the bad page
// numbers and lengths refused at execute (INVALID_ARGUMENT naming the node
// and the batch). Shape rules: tests/test_bad_inputs.cpp.
// Uses the experimental part of the header (include/cudnnfe/cudnnfe.h).
#define CUDNNFE_EXPERIMENTAL
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using Dims = std::vector<int64_t>;
using Ints = std::vector<int32_t>;

struct Shape {
  int64_t b = 2, h = 3, page_size = 4, pages = 3, d = 5, num_pages = 7;
  int64_t s = 0;  // y's sequence length; 0: pages * page_size
  bool keys_transposed = false;
};

// Builds container -> y for the CPU reference and runs it; `y` gets y's
// elements in y's layout. Returns the execute status; `message` its error.
cudnnfe_status_t run(const Shape &p, const std::vector<float> &container, const Ints &lengths,
                     const Ints &table, std::vector<float> &y, Dims &y_strides,
                     std::string *message = nullptr) {
  cudnnfe_graph_t *g = nullptr;
  cudnnfe_graph_create(&g);
  auto add = [&](const char *name, cudnnfe_dtype_t t, Dims dims) {
    int64_t uid = 0;
    CHECK_OK(cudnnfe_graph_add_tensor(g, name, t, 4, dims.data(), nullptr, &uid));
    return uid;
  };
  const int64_t c = add("container", CUDNNFE_DTYPE_FLOAT, {p.num_pages, p.h, p.page_size, p.d});
  const int64_t l = add("seq_len", CUDNNFE_DTYPE_INT32, {p.b, 1, 1, 1});
  const int64_t t = add("page_table", CUDNNFE_DTYPE_INT32, {p.b, 1, p.pages, 1});
  cudnnfe_paged_cache_load_options_t o;
  cudnnfe_paged_cache_load_options_init(&o);
  o.name = "load";
  int64_t out = 0;
  CHECK_OK(cudnnfe_graph_add_paged_cache_load(g, c, l, t, &o, &out));
  const int64_t s = p.s ? p.s : p.pages * p.page_size;
  const Dims dims{p.b, p.h, s, p.d};
  if (p.s) CHECK_OK(cudnnfe_tensor_set_dims(g, out, 4, dims.data()));
  if (p.keys_transposed) {
    const Dims strides{p.h * p.d * s, p.d * s, 1, s};
    CHECK_OK(cudnnfe_tensor_set_strides(g, out, 4, strides.data()));
  }
  CHECK_OK(cudnnfe_tensor_set_output(g, out, 1));
  cudnnfe_build_options_t bo;
  cudnnfe_build_options_init(&bo);
  bo.target = CUDNNFE_TARGET_CPU_REFERENCE;
  CHECK_OK(cudnnfe_graph_build(g, nullptr, &bo));
  int64_t got_dims[4];
  y_strides.assign(4, 0);
  int32_t rank = 0;
  CHECK_OK(cudnnfe_tensor_get_shape(g, out, got_dims, y_strides.data(), 4, &rank));
  CHECK(rank == 4 && Dims(got_dims, got_dims + 4) == dims);
  y.assign(static_cast<size_t>(p.b * p.h * s * p.d), -1.0f);
  const cudnnfe_binding_t bindings[] = {{c, const_cast<float *>(container.data())},
                                        {l, const_cast<int32_t *>(lengths.data())},
                                        {t, const_cast<int32_t *>(table.data())},
                                        {out, y.data()}};
  cudnnfe_handle_t *h = nullptr;
  cudnnfe_handle_create(&h, -1);
  const cudnnfe_status_t status = cudnnfe_graph_execute(g, h, bindings, 4, nullptr, 0, nullptr);
  if (message) *message = cudnnfe_handle_last_error(h);
  cudnnfe_handle_destroy(h);
  cudnnfe_graph_destroy(g);
  return status;
}

std::vector<float> counting_container(const Shape &p) {
  std::vector<float> v(static_cast<size_t>(p.num_pages * p.h * p.page_size * p.d));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 0.5f - 3.0f;
  return v;
}

// y against the definition: row j < lengths[n] of page table[n][j / P], else 0.
void check_values(const Shape &p, const Ints &lengths, const Ints &table) {
  const std::vector<float> container = counting_container(p);
  std::vector<float> y;
  Dims ys;
  REQUIRE_OK(run(p, container, lengths, table, y, ys));
  const int64_t s = p.s ? p.s : p.pages * p.page_size;
  int bad = 0;
  for (int64_t n = 0; n < p.b; ++n)
    for (int64_t hh = 0; hh < p.h; ++hh)
      for (int64_t j = 0; j < s; ++j)
        for (int64_t c = 0; c < p.d; ++c) {
          float want = 0.0f;
          if (j < lengths[static_cast<size_t>(n)]) {
            const int64_t page = table[static_cast<size_t>(n * p.pages + j / p.page_size)];
            want = container[static_cast<size_t>(
                ((page * p.h + hh) * p.page_size + j % p.page_size) * p.d + c)];
          }
          const float got = y[static_cast<size_t>(n * ys[0] + hh * ys[1] + j * ys[2] + c * ys[3])];
          if (got != want && bad++ < 3)
            std::printf("  y[%lld,%lld,%lld,%lld] = %g, expected %g\n", (long long)n, (long long)hh,
                        (long long)j, (long long)c, got, want);
        }
  CHECK(bad == 0);
}

}  // namespace

TEST(paged_cache_load_row_major) {
  Shape p;
  check_values(p, {12, 5}, {6, 0, 3, 2, 5, 1});
}

TEST(paged_cache_load_keys_transposed) {
  Shape p;
  p.keys_transposed = true;
  check_values(p, {9, 12}, {1, 2, 3, 4, 5, 6});
}

TEST(paged_cache_load_short_output) {
  // s = 10 keeps ceil(10 / 4) = 3 pages; the last page is read in part.
  Shape p;
  p.s = 10;
  check_values(p, {10, 0}, {0, 1, 2, 6, 6, 6});
}

TEST(paged_cache_load_bad_values_at_execute) {
  Shape p;
  const std::vector<float> container = counting_container(p);
  std::vector<float> y;
  Dims ys;
  std::string message;
  CHECK(run(p, container, {12, 5}, {0, 1, 7, 2, 3, 4}, y, ys, &message) ==
        CUDNNFE_STATUS_INVALID_ARGUMENT);
  CHECK_MSG(message.find("paged_cache_load \"load\"") != std::string::npos &&
                message.find("page_table[0][2] = 7") != std::string::npos &&
                message.find("0..6") != std::string::npos,
            "message: %s", message.c_str());
  CHECK(run(p, container, {12, 13}, {0, 1, 2, 3, 4, 5}, y, ys, &message) ==
        CUDNNFE_STATUS_INVALID_ARGUMENT);
  CHECK_MSG(message.find("seq_len[1] = 13 is outside 0..12") != std::string::npos, "message: %s",
            message.c_str());
}
