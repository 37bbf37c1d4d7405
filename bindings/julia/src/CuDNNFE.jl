"""
    CuDNNFE

Julia bindings for cudnnfe, a cuDNN Graph API frontend behind a stable C ABI.

Two layers:

  * `CuDNNFE.LibCuDNNFE`: generated from `include/cudnnfe/cudnnfe.h` by
    `bindings/julia/gen/generate.py`; one `ccall` wrapper per C function,
    the C constants and structs. Returns status codes.
  * this module: `Graph`, `Handle`, `Tensor`, one function per operation
    with keyword arguments (convolutions, matmul, pointwise, reductions,
    attention with padding, sliding windows, ALiBi, dropout and dBias, FP8
    attention, layer / RMS / batch / instance / adaptive layer norm,
    softmax, `reshape!`, `transpose!`, `slice!`, `concatenate!`, pooling
    and upsampling with `resample!`, `rng!`, the split batch norm
    `genstats!` / `bn_finalize!` / `dbn_weight!`, block-scale quantization,
    the MoE grouped matmul, `paged_cache_load!`), `CuDNNFEError` exceptions
    carrying the status kind and the library's full message, finalizers plus `close`; plan
    control (`build!`'s policy and engine filters, `plans`, `select_plan!`,
    `autotune!`, `build_info`, `fingerprint`, plan blobs with
    `serialize_plan` / `deserialize_plan`, the plan cache, CUDA graphs),
    execute-time shapes (`execute_with_overrides!`), the `KernelCache`,
    `DeviceProperties` for building without a GPU, bound executions
    (`bind_execution`), `set_ragged_offset!` and attention score modifiers
    (`score_mod!`).
    Plan indices are 1-based.

# Dimension order: Julia order everywhere

Every size, stride, axis and padding this module takes or returns is in
**Julia order** (column-major, first index fastest). cudnnfe itself speaks
row-major C order; the conversion is an exact reversal, never a copy or a
transpose of data:

    Julia size (W, H, C, N), strides (1, W, W*H, W*H*C)
        == C dims [N, C, H, W], strides [W*H*C, W*H, W, 1]

So a plain `Array{Float32,4}` of size `(W, H, C, N)` *is* an NCHW tensor, a
convolution weight `(kW, kH, C, K)` is KCRS, attention's `q` is `(d, s_q,
h, b)`, `matmul!(g, a, b)` computes `a * b` for Julia matrices, and
`reshape!`, `transpose!` (as `permutedims`), `slice!` (1-based ranges) and
`concatenate!` (as `cat(...; dims)`) mean what they mean for Julia arrays.
Arrays bound at `execute!` must have exactly the tensor's size and strides
(checked), so nothing is ever silently transposed. `cdims(t)` / `cstrides(t)` give the
C-order values when you need them.
"""
module CuDNNFE

import Libdl

include("LibCuDNNFE.jl")
import .LibCuDNNFE
const Lib = LibCuDNNFE

include("errors.jl")
include("dtypes.jl")
include("library.jl")
include("handle.jl")
include("kernel_cache.jl")
include("device_properties.jl")
include("graph.jl")
include("tensor.jl")
include("ops.jl")
include("score_mod.jl")
include("batchnorm_split.jl")
include("block_scale.jl")
include("moe.jl")
include("execute.jl")
include("bound.jl")
include("plans.jl")

export CuDNNFEError, status_kind
export Handle, Graph, Tensor
export add_tensor!, add_scalar!, set_output!, set_next_output!, set_dtype!, set_dims!, set_strides!, set_name!,
       set_uid!, set_io_dtype!, set_intermediate_dtype!, set_compute_dtype!, set_pass_by_value!,
       scalar_value, set_prune_unread_inputs!, pruned_tensors
export graph_name, tensor_kind, tensors, find_tensor, tensor_count, node_count, tensor_name, cdims, cstrides, dtype,
       isbound, is_pass_by_value, uid, allocate
export conv_fprop!, conv_dgrad!, conv_wgrad!, matmul!, pointwise!, reduction!, sdpa!,
       sdpa_backward!, sdpa_fp8!, sdpa_fp8_backward!, layernorm!, rmsnorm!, layernorm_backward!,
       rmsnorm_backward!, batchnorm!, batchnorm_inference!, batchnorm_backward!, instancenorm!,
       instancenorm_backward!, adalayernorm!, adalayernorm_backward!, softmax!,
       paged_cache_load!
export reshape!, transpose!, slice!, concatenate!, resample!, rng!
export genstats!, bn_finalize!, dbn_weight!, block_scale_quantize!, block_scale_dequantize!,
       moe_grouped_matmul!, moe_grouped_matmul_backward!
export KernelCache, serialize_kernel_cache, deserialize_kernel_cache!
export DeviceProperties, serialize_device_properties
export BoundExecution, bind_execution, cuda_graph_mode
export set_ragged_offset!, begin_score_mod!, end_score_mod!, score_mod!
export validate!, validate_for_build!, build!, isbuilt, target, workspace_size, plan_name, bound_tensors
export execute!, execute_ordered!, execute_with_overrides!
export serialize_graph, deserialize_graph
export PlanInfo, BuildInfo, plan_count, plan_info, plans, selected_plan, select_plan!, autotune!,
       build_info, fingerprint, serialize_plan, deserialize_plan, plan_cache_stats,
       clear_plan_cache!, populate_cuda_graph!, update_cuda_graph!

end # module CuDNNFE
