// Matmul: a matmul descriptor (math type) and the operation c = a @ b.
#include "backend/lowering.h"

namespace cudnnfe::backend {
namespace {

// A graph input whose batch dims broadcast (size 1 against the output's
// larger size) is shown to cuDNN at the output's batch size with stride 0:
// the same memory, but no broadcast for the engine to interpret. cuDNN 9.14's
// engine 0 accepts a size-1 batch dim and then computes only the first
// batch, and 9.19 refuses FLOAT broadcast outright; an explicit stride-0
// batch is plain strided-batch GEMM to both.
cudnnBackendDescriptor_t operand(Lowering &lowering, int64_t uid, const Tensor &out) {
  const Tensor &t = lowering.graph().tensor(uid);
  if (t.is_virtual || t.is_scalar) return lowering.tensor(uid);
  std::vector<int64_t> dims = t.dims, strides = t.strides;
  bool broadcast = false;
  for (size_t i = 0; i + 2 < dims.size(); ++i) {
    if (dims[i] == 1 && out.dims[i] > 1) {
      dims[i] = out.dims[i];
      strides[i] = 0;
      broadcast = true;
    }
  }
  return broadcast ? lowering.tensor_view(uid, dims, strides) : lowering.tensor(uid);
}

}  // namespace

void add_matmul(Lowering &lowering, cudnnDataType_t compute, cudnnBackendDescriptor_t a,
                cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t c,
                const MatmulOverrides &overrides) {
  Descriptor desc(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
  desc.set_data_type(CUDNN_ATTR_MATMUL_COMP_TYPE, compute);
  lowering.finalize(desc);
  const Descriptor &kept = lowering.keep(std::move(desc));
  Descriptor op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
  op.set_descriptors(CUDNN_ATTR_OPERATION_MATMUL_ADESC, &a, 1);
  op.set_descriptors(CUDNN_ATTR_OPERATION_MATMUL_BDESC, &b, 1);
  op.set_descriptors(CUDNN_ATTR_OPERATION_MATMUL_CDESC, &c, 1);
  op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_DESC, kept);
  if (overrides.m)
    op.set_descriptors(CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC, &overrides.m, 1);
  if (overrides.n)
    op.set_descriptors(CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC, &overrides.n, 1);
  if (overrides.k)
    op.set_descriptors(CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC, &overrides.k, 1);
  lowering.add_operation(std::move(op));
}

void lower_matmul(Lowering &lowering, const Node &node) {
  const Tensor &out = lowering.graph().tensor(node.outputs[Matmul::kC]);
  add_matmul(lowering, to_cudnn(node.compute_dtype),
             operand(lowering, node.inputs[Matmul::kA], out),
             operand(lowering, node.inputs[Matmul::kB], out), lowering.tensor(out.uid));
}

}  // namespace cudnnfe::backend
