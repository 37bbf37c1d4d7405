/* Matmul followed by a bias add: C[16,128,128] = A[16,128,512] @ B[16,512,128]
 * + bias[1,128,128], FP16 in and out, FP32 compute. Runs on the GPU when
 * there is one, else on the CPU reference, and checks against a plain loop. */
#include "example_util.h"

enum { BATCH = 16, M = 128, N = 128, K = 512 };

int main(void) {
  const int64_t a_dims[] = {BATCH, M, K}, b_dims[] = {BATCH, K, N}, bias_dims[] = {1, M, N};
  cudnnfe_graph_t *graph;
  int64_t a, b, bias, c, out;
  EXAMPLE_CHECK(cudnnfe_graph_create(&graph));
  EXAMPLE_CHECK(cudnnfe_graph_set_compute_dtype(graph, CUDNNFE_DTYPE_FLOAT));
  EXAMPLE_CHECK(cudnnfe_graph_set_intermediate_dtype(graph, CUDNNFE_DTYPE_FLOAT));
  EXAMPLE_CHECK(cudnnfe_graph_add_tensor(graph, "A", CUDNNFE_DTYPE_HALF, 3, a_dims, NULL, &a));
  EXAMPLE_CHECK(cudnnfe_graph_add_tensor(graph, "B", CUDNNFE_DTYPE_HALF, 3, b_dims, NULL, &b));
  EXAMPLE_CHECK(cudnnfe_graph_add_tensor(graph, "bias", CUDNNFE_DTYPE_HALF, 3, bias_dims, NULL, &bias));
  EXAMPLE_CHECK(cudnnfe_graph_add_matmul(graph, a, b, NULL, &c));
  EXAMPLE_CHECK(cudnnfe_graph_add_pointwise(graph, CUDNNFE_POINTWISE_ADD, c, bias, 0, NULL, &out));
  EXAMPLE_CHECK(cudnnfe_tensor_set_output(graph, out, 1));
  EXAMPLE_CHECK(cudnnfe_tensor_set_dtype(graph, out, CUDNNFE_DTYPE_HALF));

  size_t a_count = (size_t)BATCH * M * K, b_count = (size_t)BATCH * K * N;
  size_t bias_count = (size_t)M * N, out_count = (size_t)BATCH * M * N;
  uint16_t *ah = malloc(a_count * 2), *bh = malloc(b_count * 2), *biash = malloc(bias_count * 2);
  uint16_t *outh = calloc(out_count, 2);
  uint64_t rng = 7;
  size_t i;
  for (i = 0; i < a_count; ++i) ah[i] = example_float_to_half(example_random(&rng));
  for (i = 0; i < b_count; ++i) bh[i] = example_float_to_half(0.1f * example_random(&rng));
  for (i = 0; i < bias_count; ++i) biash[i] = example_float_to_half(example_random(&rng));

  example_buffer_t buffers[] = {{a, ah, a_count * 2},
                                {b, bh, b_count * 2},
                                {bias, biash, bias_count * 2},
                                {out, outh, out_count * 2}};
  example_build_and_run(graph, buffers, 4);

  double max_error = 0;
  int batch, m, n, k;
  for (batch = 0; batch < BATCH; ++batch)
    for (m = 0; m < M; ++m)
      for (n = 0; n < N; ++n) {
        float acc = 0;
        for (k = 0; k < K; ++k)
          acc += example_half_to_float(ah[((size_t)batch * M + m) * K + k]) *
                 example_half_to_float(bh[((size_t)batch * K + k) * N + n]);
        acc += example_half_to_float(biash[(size_t)m * N + n]);
        float got = example_half_to_float(outh[((size_t)batch * M + m) * N + n]);
        double err = fabs((double)got - acc);
        if (err > max_error) max_error = err;
      }
  const double tolerance = 1e-2;
  printf("matmul+bias [%d,%d,%d] @ [%d,%d,%d] + [1,%d,%d] (FP16): max abs error %.3g "
         "(tolerance %.0e)\n",
         BATCH, M, K, BATCH, K, N, M, N, max_error, tolerance);
  free(ah);
  free(bh);
  free(biash);
  free(outh);
  cudnnfe_graph_destroy(graph);
  if (!(max_error <= tolerance)) {
    printf("FAILED\n");
    return 1;
  }
  printf("OK\n");
  return 0;
}
