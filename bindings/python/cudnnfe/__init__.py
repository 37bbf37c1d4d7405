"""cudnnfe: a cuDNN Graph API frontend behind a stable C ABI, for Python.

The API follows NVIDIA cudnn-frontend's Python package, so that code written
for it runs after ``import cudnnfe as cudnn``:

* low level: :class:`pygraph`, :class:`Tensor`, :func:`create_handle`,
  enumerations :class:`data_type`, :class:`heur_mode`, :class:`pointwise_mode`,
  :class:`reduction_mode`, :class:`target`, :class:`diagonal_alignment`,
  :class:`resample_mode`, :class:`padding_mode`, :class:`rng_distribution`;
* plans (``docs/plans.md``): :class:`build_plan_policy`, :class:`numerical_note`,
  :class:`behavior_note`, :class:`plan_source`, the :meth:`pygraph.autotune`,
  :meth:`pygraph.serialize_plan` / :meth:`pygraph.deserialize_plan` methods,
  :class:`PlanInfo`, :class:`BuildInfo`, :func:`plan_cache_stats`,
  :func:`plan_cache_clear`;
* high level: the :class:`Graph` context manager, :func:`graph`, :func:`jit`,
  :func:`graph_cache`;
* the loaded cuDNN and CUDA runtime and why (:func:`library_info`), the
  library's log (:func:`set_log_callback`, ``CUDNNFE_LOG=info|debug``).

Graphs run on the GPU through cuDNN, or on the CPU reference
(``target.CPU_REFERENCE``) with NumPy arrays. The library is
``libcudnnfe.so``, loaded with cffi in ABI mode (see :mod:`cudnnfe._lib` for
the search order); cffi releases the GIL during every C call.
"""
from ._lib import ffi, lib, library_path
from ._cdef import HEADER_VERSION
from ._enums import (attention_implementation, behavior_note, build_plan_policy, conv_mode,
                     convolution_mode, data_type, diagonal_alignment, heur_mode, knob_type,
                     moe_grouped_matmul_mode, norm_forward_phase, numerical_note, padding_mode,
                     plan_source, pointwise_mode, reduction_mode, resample_mode, reshape_mode,
                     rng_distribution, scalar_type, target, tensor_kind, tensor_reordering)
from ._errors import (BadSerializedDataError, CudaError, CudnnError, CudnnUnavailableError, Error,
                      GraphNotSupportedError, InternalError, InvalidArgumentError,
                      InvalidGraphError, LargerBufferWarning, NotOfferedError,
                      OutOfMemoryError, VerifyFailedError, WrongStateError,
                      get_last_error_string)
from ._frontend_objects import (DeviceProperties, KernelCache, causal_conv1d_backward,
                                causal_conv1d_forward, create_device_properties,
                                create_kernel_cache, knob)
from ._handle import (Handle, backend_version, backend_version_string, create_handle,
                      destroy_handle, device_count, get_stream, set_stream, version)
from ._graph import UID_ZERO_ALIAS, BoundExecution, Tensor, pygraph
from ._highlevel import Graph, graph, graph_cache, jit
from ._library import LibraryInfo, add_library_search_dir, library_info, set_log_callback
from ._plans import (BuildInfo, PlanCacheStats, PlanInfo, is_plan_blob, plan_cache_clear,
                     plan_cache_stats)

from . import _experimental

_experimental.install()


def __getattr__(name: str) -> object:
    # cudnn-frontend's cudnn.experimental, made on first use (_experimental.py).
    if name == "experimental":
        import importlib

        return importlib.import_module(__name__ + ".experimental")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: cudnn-frontend's name of the exception for an unsupported graph.
cudnnGraphNotSupportedError = GraphNotSupportedError
#: cudnn-frontend's name of the tensor class.
tensor = Tensor

__version__ = "{}.{}.{}".format(HEADER_VERSION // 10000, HEADER_VERSION // 100 % 100,
                                HEADER_VERSION % 100)

__all__ = [
    "LibraryInfo", "add_library_search_dir", "library_info", "set_log_callback",
    "pygraph", "Tensor", "BoundExecution", "Graph", "graph", "jit", "graph_cache",
    "Handle", "create_handle", "destroy_handle", "set_stream", "get_stream",
    "backend_version", "backend_version_string", "version", "device_count", "library_path",
    "get_last_error_string", "create_kernel_cache", "create_device_properties",
    "DeviceProperties", "KernelCache",
    "knob", "causal_conv1d_forward", "causal_conv1d_backward", "tensor",
    "data_type", "heur_mode", "pointwise_mode", "reduction_mode", "target", "conv_mode",
    "norm_forward_phase", "tensor_kind", "diagonal_alignment", "resample_mode", "padding_mode",
    "rng_distribution", "convolution_mode", "tensor_reordering", "scalar_type", "reshape_mode",
    "knob_type", "attention_implementation", "moe_grouped_matmul_mode",
    "build_plan_policy", "numerical_note", "behavior_note", "plan_source",
    "PlanInfo", "BuildInfo", "PlanCacheStats", "plan_cache_stats", "plan_cache_clear",
    "is_plan_blob",
    "Error", "InvalidArgumentError", "InvalidGraphError", "GraphNotSupportedError",
    "CudnnUnavailableError", "CudaError", "CudnnError", "OutOfMemoryError",
    "BadSerializedDataError", "WrongStateError", "InternalError", "NotOfferedError",
    "VerifyFailedError", "LargerBufferWarning", "cudnnGraphNotSupportedError", "UID_ZERO_ALIAS",
    "ffi", "lib",
]
