/* A pre-norm transformer block piece and its backward, BF16 in and out:
 *
 *   forward   xn = rmsnorm(x) * scale          (inv_rms kept for backward)
 *             o  = causal GQA attention(q = xn, k, v), with stats
 *             out = x + o                       (residual)
 *   backward  dq, dk, dv = sdpa_backward(d_out)
 *             dxn, dscale = rmsnorm_backward(dq)
 *             dx = d_out + dxn
 *
 * Tokens are rows of [B*S, H] with H = HQ*D: the attention tensors are views
 * of the same memory in BSHD order ([B, heads, S, D] with strides
 * {S*H, D, H, 1}), so q is xn itself and o and dq come out as [B*S, H] rows.
 * k and v stand for the key/value projections (HKV = HQ/2 heads, GQA).
 *
 * With a GPU the whole chain runs twice, on the GPU and on the CPU
 * reference, and every output is compared; without one it runs on the CPU
 * reference. Either way the forward is checked against a plain C
 * computation. Exit status 0 means every check passed. */
#include "example_util.h"

enum { B = 2, S = 64, HQ = 4, HKV = 2, D = 32, H = HQ * D, T = B * S, KV = B * S * HKV * D };

static uint16_t to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if (f != f) return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

static float from_bf16(uint16_t b) {
  uint32_t x = (uint32_t)b << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

static float round_bf16(float f) {
  return from_bf16(to_bf16(f));
}

/* ---- graphs ------------------------------------------------------------ */

static const int64_t kRows[] = {T, H}, kScale[] = {1, H}, kStats[] = {T, 1};
static const int64_t kRows4[] = {T, H, 1, 1}, kRows4Strides[] = {H, 1, H, H};
static const int64_t kQ[] = {B, HQ, S, D}, kQStrides[] = {S * H, D, H, 1};
static const int64_t kK[] = {B, HKV, S, D}, kKStrides[] = {S * HKV * D, D, HKV *D, 1};
static const int64_t kAttnStats[] = {B, HQ, S, 1};

static cudnnfe_graph_t *new_graph(const char *name) {
  cudnnfe_graph_t *g;
  EXAMPLE_CHECK(cudnnfe_graph_create(&g));
  EXAMPLE_CHECK(cudnnfe_graph_set_name(g, name));
  EXAMPLE_CHECK(cudnnfe_graph_set_io_dtype(g, CUDNNFE_DTYPE_BFLOAT16));
  EXAMPLE_CHECK(cudnnfe_graph_set_intermediate_dtype(g, CUDNNFE_DTYPE_FLOAT));
  EXAMPLE_CHECK(cudnnfe_graph_set_compute_dtype(g, CUDNNFE_DTYPE_FLOAT));
  return g;
}

static int64_t tensor(cudnnfe_graph_t *g, const char *name, cudnnfe_dtype_t dtype, int32_t rank,
                      const int64_t *dims, const int64_t *strides) {
  int64_t uid;
  EXAMPLE_CHECK(cudnnfe_graph_add_tensor(g, name, dtype, rank, dims, strides, &uid));
  return uid;
}

static void output(cudnnfe_graph_t *g, int64_t uid, cudnnfe_dtype_t dtype) {
  EXAMPLE_CHECK(cudnnfe_tensor_set_output(g, uid, 1));
  EXAMPLE_CHECK(cudnnfe_tensor_set_dtype(g, uid, dtype));
}

/* Host buffers of one run of the chain. */
typedef struct {
  uint16_t x[T * H], k[KV], v[KV], d_out[T * H];
  float scale[H];
  uint16_t xn[T * H], o[T * H], out[T * H];
  float inv_rms[T], stats[B * HQ * S];
  uint16_t dq[T * H], dk[KV], dv[KV], dxn[T * H], dx[T * H];
  float dscale[H];
} chain_t;

/* Builds `graph` for `target` and runs it on host buffers (through device
 * copies on the GPU). */
static void run(cudnnfe_graph_t *graph, cudnnfe_target_t target, example_buffer_t *buffers,
                int count) {
  cudnnfe_build_options_t options;
  cudnnfe_handle_t *handle;
  cudnnfe_binding_t bindings[16];
  const char *plan = "";
  int i;
  cudnnfe_build_options_init(&options);
  options.target = target;
  EXAMPLE_CHECK(cudnnfe_handle_create(&handle, -1));
  EXAMPLE_CHECK(cudnnfe_graph_build(graph, handle, &options));
  for (i = 0; i < count; ++i) {
    bindings[i].uid = buffers[i].uid;
    bindings[i].data = buffers[i].host;
  }
  if (target == CUDNNFE_TARGET_CPU_REFERENCE) {
    EXAMPLE_CHECK(cudnnfe_graph_execute(graph, handle, bindings, (size_t)count, NULL, 0, NULL));
  } else {
#ifdef CUDNNFE_EXAMPLE_HAVE_CUDART
    int64_t workspace_size = 0;
    void *workspace = NULL;
    EXAMPLE_CHECK(cudnnfe_graph_get_workspace_size(graph, &workspace_size));
    if (workspace_size > 0 && cudaMalloc(&workspace, (size_t)workspace_size) != cudaSuccess) {
      fprintf(stderr, "cudaMalloc of the workspace failed\n");
      exit(1);
    }
    for (i = 0; i < count; ++i) {
      if (cudaMalloc(&bindings[i].data, buffers[i].bytes) != cudaSuccess) {
        fprintf(stderr, "cudaMalloc failed\n");
        exit(1);
      }
      cudaMemcpy(bindings[i].data, buffers[i].host, buffers[i].bytes, cudaMemcpyHostToDevice);
    }
    EXAMPLE_CHECK(cudnnfe_graph_execute(graph, handle, bindings, (size_t)count, workspace,
                                        (size_t)workspace_size, NULL));
    if (cudaDeviceSynchronize() != cudaSuccess) {
      fprintf(stderr, "CUDA error after executing %s\n", cudnnfe_graph_last_error(graph));
      exit(1);
    }
    for (i = 0; i < count; ++i) {
      cudaMemcpy(buffers[i].host, bindings[i].data, buffers[i].bytes, cudaMemcpyDeviceToHost);
      cudaFree(bindings[i].data);
    }
    cudaFree(workspace);
#endif
  }
  cudnnfe_graph_get_plan_name(graph, &plan);
  {
    const char *name = "";
    cudnnfe_graph_get_name(graph, &name);
    printf("  %-18s on %-14s plan %s\n", name, target == CUDNNFE_TARGET_GPU ? "the GPU" : "the CPU",
           plan);
  }
  EXAMPLE_CHECK(cudnnfe_handle_destroy(handle));
  EXAMPLE_CHECK(cudnnfe_graph_destroy(graph));
}

/* out = a + b on [T, H] rows, seen as channels-last [T, H, 1, 1] (the
 * layout cuDNN's standalone pointwise engines take). */
static void residual(const char *name, cudnnfe_target_t target, uint16_t *a_host, uint16_t *b_host,
                     uint16_t *out_host) {
  cudnnfe_graph_t *g = new_graph(name);
  int64_t a = tensor(g, "a", CUDNNFE_DTYPE_BFLOAT16, 4, kRows4, kRows4Strides);
  int64_t b = tensor(g, "b", CUDNNFE_DTYPE_BFLOAT16, 4, kRows4, kRows4Strides);
  int64_t out;
  EXAMPLE_CHECK(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_ADD, a, b, 0, NULL, &out));
  output(g, out, CUDNNFE_DTYPE_BFLOAT16);
  {
    example_buffer_t buffers[] = {{a, a_host, sizeof(uint16_t) * T * H},
                                  {b, b_host, sizeof(uint16_t) * T * H},
                                  {out, out_host, sizeof(uint16_t) * T * H}};
    run(g, target, buffers, 3);
  }
}

static void forward(chain_t *c, cudnnfe_target_t target) {
  { /* xn = rmsnorm(x) */
    cudnnfe_graph_t *g = new_graph("rmsnorm");
    int64_t x = tensor(g, "x", CUDNNFE_DTYPE_BFLOAT16, 2, kRows, NULL);
    int64_t scale = tensor(g, "scale", CUDNNFE_DTYPE_FLOAT, 2, kScale, NULL);
    int64_t xn, inv_rms;
    cudnnfe_norm_options_t o;
    cudnnfe_norm_options_init(&o);
    o.epsilon = 1e-5;
    EXAMPLE_CHECK(cudnnfe_graph_add_rmsnorm(g, x, scale, 0, &o, &xn, &inv_rms));
    output(g, xn, CUDNNFE_DTYPE_BFLOAT16);
    output(g, inv_rms, CUDNNFE_DTYPE_FLOAT);
    {
      example_buffer_t buffers[] = {{x, c->x, sizeof c->x},
                                    {scale, c->scale, sizeof c->scale},
                                    {xn, c->xn, sizeof c->xn},
                                    {inv_rms, c->inv_rms, sizeof c->inv_rms}};
      run(g, target, buffers, 4);
    }
  }
  { /* o, stats = causal GQA attention(q = xn, k, v) */
    cudnnfe_graph_t *g = new_graph("sdpa");
    int64_t q = tensor(g, "q", CUDNNFE_DTYPE_BFLOAT16, 4, kQ, kQStrides);
    int64_t k = tensor(g, "k", CUDNNFE_DTYPE_BFLOAT16, 4, kK, kKStrides);
    int64_t v = tensor(g, "v", CUDNNFE_DTYPE_BFLOAT16, 4, kK, kKStrides);
    int64_t o, stats;
    cudnnfe_sdpa_options_t opt;
    cudnnfe_sdpa_options_init(&opt);
    opt.causal_mask = 1;
    opt.generate_stats = 1;
    EXAMPLE_CHECK(cudnnfe_graph_add_sdpa(g, q, k, v, &opt, &o, &stats));
    output(g, o, CUDNNFE_DTYPE_BFLOAT16);
    output(g, stats, CUDNNFE_DTYPE_FLOAT);
    {
      example_buffer_t buffers[] = {{q, c->xn, sizeof c->xn},
                                    {k, c->k, sizeof c->k},
                                    {v, c->v, sizeof c->v},
                                    {o, c->o, sizeof c->o},
                                    {stats, c->stats, sizeof c->stats}};
      run(g, target, buffers, 5);
    }
  }
  residual("residual", target, c->x, c->o, c->out);
}

static void backward(chain_t *c, cudnnfe_target_t target) {
  { /* dq, dk, dv from d_out (the residual passes d_out to o unchanged) */
    cudnnfe_graph_t *g = new_graph("sdpa_backward");
    int64_t q = tensor(g, "q", CUDNNFE_DTYPE_BFLOAT16, 4, kQ, kQStrides);
    int64_t k = tensor(g, "k", CUDNNFE_DTYPE_BFLOAT16, 4, kK, kKStrides);
    int64_t v = tensor(g, "v", CUDNNFE_DTYPE_BFLOAT16, 4, kK, kKStrides);
    int64_t o = tensor(g, "o", CUDNNFE_DTYPE_BFLOAT16, 4, kQ, kQStrides);
    int64_t d_o = tensor(g, "dO", CUDNNFE_DTYPE_BFLOAT16, 4, kQ, kQStrides);
    int64_t stats = tensor(g, "stats", CUDNNFE_DTYPE_FLOAT, 4, kAttnStats, NULL);
    int64_t dq, dk, dv;
    cudnnfe_sdpa_backward_options_t opt;
    cudnnfe_sdpa_backward_options_init(&opt);
    opt.causal_mask = 1;
    EXAMPLE_CHECK(cudnnfe_graph_add_sdpa_backward(g, q, k, v, o, d_o, stats, &opt, &dq, &dk, &dv));
    output(g, dq, CUDNNFE_DTYPE_BFLOAT16);
    output(g, dk, CUDNNFE_DTYPE_BFLOAT16);
    output(g, dv, CUDNNFE_DTYPE_BFLOAT16);
    {
      example_buffer_t buffers[] = {
          {q, c->xn, sizeof c->xn},         {k, c->k, sizeof c->k},
          {v, c->v, sizeof c->v},           {o, c->o, sizeof c->o},
          {d_o, c->d_out, sizeof c->d_out}, {stats, c->stats, sizeof c->stats},
          {dq, c->dq, sizeof c->dq},        {dk, c->dk, sizeof c->dk},
          {dv, c->dv, sizeof c->dv}};
      run(g, target, buffers, 9);
    }
  }
  { /* dxn, dscale = rmsnorm_backward(dy = dq) */
    cudnnfe_graph_t *g = new_graph("rmsnorm_backward");
    int64_t dy = tensor(g, "dy", CUDNNFE_DTYPE_BFLOAT16, 2, kRows, NULL);
    int64_t x = tensor(g, "x", CUDNNFE_DTYPE_BFLOAT16, 2, kRows, NULL);
    int64_t scale = tensor(g, "scale", CUDNNFE_DTYPE_FLOAT, 2, kScale, NULL);
    int64_t inv_rms = tensor(g, "inv_rms", CUDNNFE_DTYPE_FLOAT, 2, kStats, NULL);
    int64_t dxn, dscale;
    EXAMPLE_CHECK(
        cudnnfe_graph_add_rmsnorm_backward(g, dy, x, scale, inv_rms, NULL, &dxn, &dscale, NULL));
    output(g, dxn, CUDNNFE_DTYPE_BFLOAT16);
    output(g, dscale, CUDNNFE_DTYPE_FLOAT);
    {
      example_buffer_t buffers[] = {
          {dy, c->dq, sizeof c->dq},          {x, c->x, sizeof c->x},
          {scale, c->scale, sizeof c->scale}, {inv_rms, c->inv_rms, sizeof c->inv_rms},
          {dxn, c->dxn, sizeof c->dxn},       {dscale, c->dscale, sizeof c->dscale}};
      run(g, target, buffers, 6);
    }
  }
  residual("residual_backward", target, c->d_out, c->dxn, c->dx);
}

/* ---- checks -------------------------------------------------------------- */

static int failures = 0;

/* Largest |got - want| over the largest |want|; fails above `tolerance`. */
static void check(const char *what, const float *got, const float *want, size_t n,
                  double tolerance) {
  double max_err = 0, max_ref = 0;
  size_t i, nans = 0;
  for (i = 0; i < n; ++i) {
    double err = fabs((double)got[i] - want[i]);
    if (err != err)
      ++nans; /* NaN: never written, or a wrong result */
    else if (err > max_err)
      max_err = err;
    if (fabs(want[i]) > max_ref) max_ref = fabs(want[i]);
  }
  {
    double rel = max_ref > 0 ? max_err / max_ref : max_err;
    int bad = nans > 0 || !(rel <= tolerance);
    if (nans) printf("  %-40s %zu NaN elements\n", what, nans);
    printf("  %-40s max error %.3g of max %.3g (%.2e, tolerance %.0e)%s\n", what, max_err, max_ref,
           rel, tolerance, bad ? "  FAILED" : "");
    failures += bad;
  }
}

static float *widen(const uint16_t *bf16, size_t n) {
  float *f = malloc(n * sizeof(float));
  size_t i;
  for (i = 0; i < n; ++i) f[i] = from_bf16(bf16[i]);
  return f;
}

static void check_bf16(const char *what, const uint16_t *got, const uint16_t *want, size_t n,
                       double tolerance) {
  float *g = widen(got, n), *w = widen(want, n);
  check(what, g, w, n, tolerance);
  free(g);
  free(w);
}

/* The forward in plain C (float math on the BF16 inputs, BF16 rounding
 * where the graphs store BF16). */
static void check_forward_plain(const chain_t *c) {
  static float xn[T * H], o[T * H], out[T * H];
  float *scores = malloc(sizeof(float) * S);
  const float scale = 1.0f / sqrtf((float)D);
  int t, j, b, h, i, d;
  for (t = 0; t < T; ++t) {
    double sq = 0;
    for (j = 0; j < H; ++j) sq += (double)from_bf16(c->x[t * H + j]) * from_bf16(c->x[t * H + j]);
    {
      const float inv = (float)(1.0 / sqrt(sq / H + 1e-5));
      for (j = 0; j < H; ++j)
        xn[t * H + j] = round_bf16(from_bf16(c->x[t * H + j]) * inv * c->scale[j]);
    }
  }
  for (b = 0; b < B; ++b)
    for (h = 0; h < HQ; ++h) {
      const int kv = h / (HQ / HKV);
      for (i = 0; i < S; ++i) {
        const float *q = &xn[(b * S + i) * H + h * D];
        float max = -INFINITY, sum = 0;
        for (j = 0; j <= i; ++j) {
          const uint16_t *k = &c->k[((b * S + j) * HKV + kv) * D];
          float dot = 0;
          for (d = 0; d < D; ++d) dot += q[d] * from_bf16(k[d]);
          scores[j] = dot * scale;
          if (scores[j] > max) max = scores[j];
        }
        for (j = 0; j <= i; ++j) sum += scores[j] = expf(scores[j] - max);
        for (d = 0; d < D; ++d) {
          float acc = 0;
          for (j = 0; j <= i; ++j)
            acc += scores[j] * from_bf16(c->v[((b * S + j) * HKV + kv) * D + d]);
          o[(b * S + i) * H + h * D + d] = round_bf16(acc / sum);
        }
      }
    }
  for (t = 0; t < T * H; ++t) out[t] = round_bf16(from_bf16(c->x[t]) + o[t]);
  {
    float *got_xn = widen(c->xn, T * H), *got_o = widen(c->o, T * H);
    float *got_out = widen(c->out, T * H);
    check("forward xn vs plain C", got_xn, xn, T * H, 2e-2);
    check("forward o vs plain C", got_o, o, T * H, 2e-2);
    check("forward out vs plain C", got_out, out, T * H, 2e-2);
    free(got_xn);
    free(got_o);
    free(got_out);
  }
  free(scores);
}

static void fill_inputs(chain_t *c) {
  uint64_t rng = 12345;
  size_t i;
  for (i = 0; i < T * H; ++i) c->x[i] = to_bf16(2.0f * example_random(&rng));
  for (i = 0; i < KV; ++i) c->k[i] = to_bf16(example_random(&rng));
  for (i = 0; i < KV; ++i) c->v[i] = to_bf16(example_random(&rng));
  for (i = 0; i < T * H; ++i) c->d_out[i] = to_bf16(example_random(&rng));
  for (i = 0; i < H; ++i) c->scale[i] = 1.0f + 0.25f * example_random(&rng);
}

int main(void) {
  static chain_t cpu, gpu;
  const int on_gpu = example_gpu_usable();
  fill_inputs(&cpu);
  printf(
      "transformer block piece: tokens %d x hidden %d, %d query heads, %d kv heads, d %d, "
      "BF16\n",
      T, H, HQ, HKV, D);
  printf("CPU reference:\n");
  forward(&cpu, CUDNNFE_TARGET_CPU_REFERENCE);
  backward(&cpu, CUDNNFE_TARGET_CPU_REFERENCE);
  if (on_gpu) {
    gpu = cpu;
    memset(gpu.xn, 0xff, sizeof gpu.xn); /* NaN: every output must be written */
    memset(gpu.o, 0xff, sizeof gpu.o);
    memset(gpu.out, 0xff, sizeof gpu.out);
    memset(gpu.dq, 0xff, sizeof gpu.dq);
    memset(gpu.dk, 0xff, sizeof gpu.dk);
    memset(gpu.dv, 0xff, sizeof gpu.dv);
    memset(gpu.dx, 0xff, sizeof gpu.dx);
    printf("GPU:\n");
    forward(&gpu, CUDNNFE_TARGET_GPU);
    backward(&gpu, CUDNNFE_TARGET_GPU);
    printf("GPU vs CPU reference:\n");
    check_bf16("xn = rmsnorm(x)", gpu.xn, cpu.xn, T * H, 2e-2);
    check("inv_rms", gpu.inv_rms, cpu.inv_rms, T, 1e-3);
    check_bf16("o = attention(xn, k, v)", gpu.o, cpu.o, T * H, 2e-2);
    check("attention stats", gpu.stats, cpu.stats, B * HQ * S, 1e-3);
    check_bf16("out = x + o", gpu.out, cpu.out, T * H, 2e-2);
    check_bf16("dq", gpu.dq, cpu.dq, T * H, 2e-2);
    check_bf16("dk", gpu.dk, cpu.dk, KV, 7e-2);
    check_bf16("dv", gpu.dv, cpu.dv, KV, 7e-2);
    check_bf16("dxn (rmsnorm backward dx)", gpu.dxn, cpu.dxn, T * H, 2e-2);
    check("dscale", gpu.dscale, cpu.dscale, H, 2e-2);
    check_bf16("dx = d_out + dxn", gpu.dx, cpu.dx, T * H, 2e-2);
    printf("GPU forward vs plain C:\n");
    check_forward_plain(&gpu);
  } else {
    printf("no usable GPU: CPU reference forward vs plain C:\n");
    check_forward_plain(&cpu);
  }
  printf("%s\n", failures ? "FAILED" : "all checks passed");
  return failures ? 1 : 0;
}
