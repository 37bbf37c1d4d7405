// Evidence for every rule: tests/differential/engines.py runs a graph once per
// engine configuration on NVIDIA's cudnn-frontend and on cudnnfe; the seeds
// below are the differential tester's (tests/differential/run.py), measured on
// an H200 with cuDNN 9.19.0. tests/test_gpu_ops.cpp keeps a GPU case of each.
#include "backend/known_wrong_configs.h"

#include "core/error.h"

namespace cudnnfe::backend {
namespace {

// cuDNN's CUDNN_KNOB_TYPE_KERNEL_CFG (the runtime-fusion engine's kernel).
constexpr int64_t kKnobKernelCfg = 24;

int64_t knob(const plan::EngineConfig &config, int64_t type) {
  for (const plan::KnobChoice &k : config.knobs)
    if (k.type == type) return k.value;
  return -1;
}

// Whether a pointwise node reads `uid` (an epilogue fused onto its producer),
// from the graph's readers index.
bool has_pointwise_reader(const Graph &graph, int64_t uid) {
  for (size_t i : graph.readers_of(uid))
    if (graph.nodes()[i].kind == OpKind::kPointwise) return true;
  return false;
}

// Engine 7 with kernel 29 (cudnn-frontend's "eng7_k24=29", the heuristics'
// first choice) fuses conv_fprop + ReLU wrongly when x is not channels-last:
// seeds conv 63, 122, 129, 813, 860 (and 130, 190, 288, 394, 579, 586);
// kernels 21 and 22 and the engine's default compute the same graphs right.
// Engine 4 (every kernel offered: 2, 10, 19, 28, 29, 36, 39 and its default)
// is wrong on seed 394, the heuristics' next choice there.
std::string nchw_conv_epilogue(const Graph &graph, const plan::EngineConfig &config) {
  const bool suspect =
      (config.engine_id == 7 && knob(config, kKnobKernelCfg) == 29) || config.engine_id == 4;
  if (!suspect) return "";
  for (const Node &n : graph.nodes()) {
    if (n.kind != OpKind::kConvFprop) continue;
    const Tensor &x = graph.tensor(n.inputs[ConvFprop::kImage]);
    const bool channels_last = x.dims.size() < 3 || x.dims[1] == 1 || x.strides[1] == 1;
    if (!channels_last && has_pointwise_reader(graph, n.outputs[ConvFprop::kY]))
      return cat(Graph::label(n), ": x is not channels-last and an epilogue is fused");
  }
  return "";
}

// Engine 0 computes a batched matmul whose M and N are both 1 wrongly once a
// bias and activation are fused: seeds matmul 116, 848 (engine 7's
// configurations compute them right).
std::string dot_product_epilogue(const Graph &graph, const plan::EngineConfig &config) {
  if (config.engine_id != 0) return "";
  for (const Node &n : graph.nodes()) {
    if (n.kind != OpKind::kMatmul) continue;
    const Tensor &a = graph.tensor(n.inputs[Matmul::kA]);
    const Tensor &b = graph.tensor(n.inputs[Matmul::kB]);
    if (a.dims.size() < 2 || b.dims.size() < 2) continue;
    if (a.dims[a.dims.size() - 2] == 1 && b.dims.back() == 1 &&
        has_pointwise_reader(graph, n.outputs[Matmul::kC]))
      return cat(Graph::label(n), ": M = N = 1 with a fused epilogue");
  }
  return "";
}

}  // namespace

std::string known_wrong_config(const Graph &graph, const plan::EngineConfig &config) {
  for (auto rule : {nchw_conv_epilogue, dot_product_epilogue}) {
    std::string why = rule(graph, config);
    if (!why.empty()) return why;
  }
  return "";
}

// Instance norm backward's engine 0 (knobs 30, 31 and 32 in every
// configuration seen) recorded by stream capture left dscale and dbias at 0
// when the recording was launched, while cudnnBackendExecute computes them
// right: tests/test_gpu_norms.cpp's second run, a bound execution with
// CUDNNFE_CUDA_GRAPH_CAPTURE, on an H200 with cuDNN 9.14.0 and 9.19.0,
// FLOAT, HALF and BFLOAT16 (session logs of 2026-11-28). A smaller case
// (tests/test_gpu_execute_replay.cpp) does not reproduce it, so the cause
// is not pinned down; until it is, capture is not used for it.
std::string known_wrong_under_capture(const Graph &graph) {
  for (const Node &n : graph.nodes())
    if (n.kind == OpKind::kInstanceNormBackward)
      return cat(Graph::label(n),
                 ": cuDNN's instance norm backward leaves dscale and dbias unwritten when "
                 "its cudnnBackendExecute is recorded by stream capture");
  return "";
}

}  // namespace cudnnfe::backend
