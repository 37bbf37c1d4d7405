/* The seeds' first graph: a 2-D convolution, image 8x64x56x56, filter
 * 32x64x3x3, FP16 channels-last (NHWC) storage, padding 1, FP32 compute.
 * Runs on the GPU when there is one, else on the CPU reference, and checks
 * the result against a direct loop written here. */
#include "example_util.h"

enum { N = 8, C = 64, H = 56, W = 56, K = 32, R = 3, S = 3 };

int main(void) {
  const int64_t x_dims[] = {N, C, H, W}, x_strides[] = {C * H * W, 1, W * C, C};
  const int64_t w_dims[] = {K, C, R, S}, w_strides[] = {C * R * S, 1, S * C, C};
  cudnnfe_graph_t *graph;
  int64_t x, w, y;
  EXAMPLE_CHECK(cudnnfe_graph_create(&graph));
  EXAMPLE_CHECK(cudnnfe_graph_set_io_dtype(graph, CUDNNFE_DTYPE_HALF));
  EXAMPLE_CHECK(cudnnfe_graph_set_compute_dtype(graph, CUDNNFE_DTYPE_FLOAT));
  EXAMPLE_CHECK(cudnnfe_graph_add_tensor(graph, "image", CUDNNFE_DTYPE_HALF, 4, x_dims, x_strides, &x));
  EXAMPLE_CHECK(cudnnfe_graph_add_tensor(graph, "filter", CUDNNFE_DTYPE_HALF, 4, w_dims, w_strides, &w));
  cudnnfe_conv_options_t conv;
  cudnnfe_conv_options_init(&conv);
  conv.name = "conv";
  conv.pre_padding[0] = conv.pre_padding[1] = 1;
  conv.post_padding[0] = conv.post_padding[1] = 1;
  EXAMPLE_CHECK(cudnnfe_graph_add_conv_fprop(graph, x, w, &conv, &y));
  EXAMPLE_CHECK(cudnnfe_tensor_set_output(graph, y, 1));

  size_t x_count = (size_t)N * C * H * W, w_count = (size_t)K * C * R * S;
  size_t y_count = (size_t)N * K * H * W;
  uint16_t *xh = malloc(x_count * 2), *wh = malloc(w_count * 2), *yh = calloc(y_count, 2);
  uint64_t rng = 1;
  size_t i;
  for (i = 0; i < x_count; ++i) xh[i] = example_float_to_half(example_random(&rng));
  for (i = 0; i < w_count; ++i) wh[i] = example_float_to_half(0.1f * example_random(&rng));

  example_buffer_t buffers[] = {{x, xh, x_count * 2}, {w, wh, w_count * 2}, {y, yh, y_count * 2}};
  example_build_and_run(graph, buffers, 3);

  /* Direct convolution in float over the same NHWC data. */
  double max_error = 0;
  int n, k, p, q, c, r, s;
  for (n = 0; n < N; ++n)
    for (p = 0; p < H; ++p)
      for (q = 0; q < W; ++q)
        for (k = 0; k < K; ++k) {
          float acc = 0;
          for (r = 0; r < R; ++r)
            for (s = 0; s < S; ++s) {
              int h = p + r - 1, ww = q + s - 1;
              if (h < 0 || h >= H || ww < 0 || ww >= W) continue;
              const uint16_t *xp = xh + (((size_t)n * H + h) * W + ww) * C;
              const uint16_t *wp = wh + (((size_t)k * R + r) * S + s) * C;
              for (c = 0; c < C; ++c) acc += example_half_to_float(xp[c]) * example_half_to_float(wp[c]);
            }
          float got = example_half_to_float(yh[(((size_t)n * H + p) * W + q) * K + k]);
          double err = fabs((double)got - acc);
          if (err > max_error) max_error = err;
        }
  /* Outputs are about 2.5 in magnitude; FP16 output rounding is ~1e-3. */
  const double tolerance = 1e-2;
  printf("conv_fprop %dx%dx%dx%d * %dx%dx%dx%d (FP16 NHWC, padding 1): max abs error %.3g "
         "(tolerance %.0e)\n",
         N, C, H, W, K, C, R, S, max_error, tolerance);
  free(xh);
  free(wh);
  free(yh);
  cudnnfe_graph_destroy(graph);
  if (!(max_error <= tolerance)) {
    printf("FAILED\n");
    return 1;
  }
  printf("OK\n");
  return 0;
}
