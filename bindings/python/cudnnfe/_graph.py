"""The low-level graph API: :class:`pygraph` and :class:`Tensor`.

Mirrors NVIDIA cudnn-frontend's Python ``pygraph`` (the seeds under
``../shared/seeds``) on top of the cudnnfe C ABI. Every method is a thin layer
over one or a few C calls; every C failure becomes an exception carrying the
C library's message (see :mod:`cudnnfe._errors`).

:class:`pygraph` holds the graph, tensors, convolution, matmul, pointwise,
reduction and softmax, build, execution, plans and serialization; the other
operations are mixins: attention (:mod:`cudnnfe._attention`), normalizations
(:mod:`cudnnfe._norms`), layout ops (:mod:`cudnnfe._layout`), resampling and
random numbers (:mod:`cudnnfe._sampling`). cudnn-frontend's graph semantics are
the C library's own: tensors given as op outputs (``cudnnfe_graph_set_next_output``),
reshape dims set later, scalars folded into an op's number, and inputs no op reads
leaving the graph at validation (``cudnnfe_graph_set_prune_unread_inputs``).
"""
from __future__ import annotations

import inspect
import math
import operator
import threading
import warnings
import weakref
from typing import (Any, Callable, Dict, Iterable, List, Mapping, NamedTuple, NoReturn, Optional,
                    Sequence, Set, Tuple, Union)

from . import _arrays
from ._arrays import ArrayInfo, describe
from . import _fe_log
from . import _naming
from . import _plans
from . import _ragged
from . import _structs
from ._attention import AttentionOps
from ._enums import (behavior_note, build_plan_policy, conv_mode, data_type, heur_mode,
                     numerical_note, pointwise_mode, reduction_mode, target, tensor_kind)
from ._errors import (Error, GraphNotSupportedError, InvalidArgumentError, LargerBufferWarning,
                      NotOfferedError,
                      WrongStateError, raise_global_error, raise_graph_error, raise_handle_error)
from ._handle import Handle, default_handle, stream_pointer
from ._frontend_ops import FrontendOps
from ._layout import LayoutOps
from ._lib import ffi, lib
from ._norms import NormOps
from ._plans import BuildInfo, PlanInfo
from ._moe import MoeOps
from ._quantize import QuantizeOps
from ._sampling import SamplingOps
from ._tensor import Tensor
from ._util import (_MAX_DIMS, _MAX_SPATIAL, UID_ZERO_ALIAS, DType, Operand, _c_uid, _cstr,
                    _dtype, _enum_value, _int_option, _ints, _is_number, _py_uid, _string,
                    _tensor_dtype)
from ._util import Number  # noqa: F401  (re-exported, as before the split)

__all__ = ["pygraph", "Tensor", "BoundExecution", "UID_ZERO_ALIAS"]


class _Spec(NamedTuple):
    """What a bound tensor needs of its buffer (fixed at build)."""

    uid: int  # C UID
    name: str
    dims: Tuple[int, ...]
    strides: Tuple[int, ...]
    dtype: data_type
    by_value: bool = False  # a pass-by-value input: host memory, read at execute
    ragged: bool = False  # has ragged offsets: its array is packed (fewer elements than dims)
    output: bool = False  # a graph output (written by the plan)


class _ExecInfo(NamedTuple):
    order: Tuple[int, ...]  # C UIDs in cudnnfe_graph_get_bound_uids order
    position: Dict[int, int]  # C UID -> position in order
    specs: Tuple[_Spec, ...]
    by_name: Dict[str, int]  # tensor name -> C UID (bound tensors)
    target: target
    workspace_size: int
    # Per position, the last NumPy array that passed the checks, as (weakref, dtype, shape,
    # strides, data pointer): an array seen again with the same attributes is not described
    # and checked again (an ndarray's data pointer is fixed for its life). See _memo_ptr.
    memo: List[Any]
    # The last variant pack of torch tensors that passed every check, as one item
    # [(void ** table, its storage, id(dict), ((key, weakref(array), address), ...))]: the same
    # dict holding the same keys and arrays at the same addresses again skips the per-array
    # checks and the key resolution (issue 27's dict execute path). Only identities and
    # data_ptr() are compared then; an array reshaped in place keeps its address and is not
    # checked again (cudnn-frontend never checks shapes at execute).
    last_pack: List[Any]


_MISSING: Any = object()  # an argument not given (None is a value for some)


def _numpy_ndarray_type() -> Any:
    """numpy.ndarray when NumPy is installed, else a type no value has."""
    try:
        import numpy
    except ImportError:
        return type("_NoNumPy", (), {})
    return numpy.ndarray


_ndarray_type = _numpy_ndarray_type()
# cffi types resolved once: ffi.new / ffi.cast given a string parse it on every call
# (about 1 us of execute's Python time per call on a 2-core CI machine).
_POINTER_TABLE = ffi.typeof("uintptr_t[]")
_VOID_PP = ffi.typeof("void **")


class _Deserializer:
    """A loader that works on the class (returns a new graph) and on instances (loads into it)."""

    def __init__(self, method: str = "_deserialize") -> None:
        self._method = method

    def __get__(self, obj: Any, cls: Any) -> Any:
        if obj is None:
            def from_class(*args: Any, **kwargs: Any) -> Any:
                g = cls()
                getattr(g, self._method)(*args, **kwargs)
                return g
            method = getattr(cls, self._method)
            from_class.__doc__ = method.__doc__
            params = list(inspect.signature(method).parameters.values())[1:]  # without self
            from_class.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
            return from_class
        return getattr(obj, self._method)


class _Scratch:
    """Out-parameters for the per-node C calls of graph building (one set per graph)."""

    def __init__(self) -> None:
        self.count = ffi.new("size_t *")
        self.name = ffi.new("const char **")
        self.kind = ffi.new("cudnnfe_tensor_kind_t *")


class pygraph(AttentionOps, NormOps, LayoutOps, SamplingOps, QuantizeOps, MoeOps,
              FrontendOps):
    """A cuDNN operation graph, built through the cudnnfe C ABI.

    Args:
        io_data_type: default data type of graph inputs and outputs.
        intermediate_data_type: default data type of virtual (intermediate) tensors.
        compute_data_type: default data type of operations' math.
        handle: execution context used by :meth:`build` and :meth:`execute`
            when they are given none (from :func:`create_handle`).
        name: graph name, used in error messages.
        target: where the graph runs (:class:`target`). When not given,
            :meth:`build` picks ``CPU_REFERENCE`` if every array passed to
            :meth:`tensor_like` was a host (NumPy/CPU) array, ``GPU`` if any
            was a CUDA array, and ``AUTO`` otherwise.
        verify: verify mode (``docs/verify.md``; a cudnnfe extension): True
            checks the first execute of each plan against the CPU reference
            on a sample of output elements and raises
            :class:`VerifyFailedError` on a mismatch; False turns it off;
            None (default) leaves it to the environment variable
            ``CUDNNFE_VERIFY`` (``1``: on). :meth:`build` may override it.
        verify_samples: output elements sampled per output (default 64, or
            ``CUDNNFE_VERIFY_SAMPLES``).
        verify_rtol: relative tolerance of floating outputs (default: by
            data type).

    Graph construction belongs to one thread at a time. A built graph may be
    executed from many threads, each with its own handle and workspace.
    """

    def __init__(self, io_data_type: DType = None, intermediate_data_type: DType = None,
                 compute_data_type: DType = None, handle: Optional[Handle] = None,
                 name: Optional[str] = None, target: Optional[target] = None, *,
                 sm_count: Optional[int] = None, sm_version: Optional[int] = None,
                 kernel_cache: Any = None, device_property: Any = None,
                 is_dynamic_shape_enabled: bool = False,
                 is_override_shape_enabled: bool = False, verify: Optional[bool] = None,
                 verify_samples: Optional[int] = None,
                 verify_rtol: Optional[float] = None) -> None:
        _frontend_graph_options(kernel_cache, device_property)
        # cudnn-frontend's SM targets: build options sm_count and sm_version (0: the GPU's).
        self._sm_count = _sm_option(sm_count, "sm_count")
        self._sm_version = _sm_option(sm_version, "sm_version")
        # Refusals found while the graph is made, raised at validation (or build) as
        # cudnn-frontend raises them there: code that skips a graph on
        # cudnnGraphNotSupportedError around validate() skips these too.
        self._deferred: List[Exception] = []
        # Verify mode: the build options verify, verify_samples, verify_rtol (docs/verify.md).
        self._verify = {"verify": verify, "verify_samples": verify_samples,
                        "verify_rtol": verify_rtol}
        # Building without a GPU: the build option device_properties (docs/plans.md).
        self._device_properties = device_property
        # Dynamic shapes and the kernel cache: build options dynamic_shape_enabled and
        # kernel_cache (a cache implies dynamic shapes, as in cudnn-frontend).
        self._dynamic_shapes = bool(is_dynamic_shape_enabled) or kernel_cache is not None
        self._kernel_cache = kernel_cache
        # Execute-time shapes: the build option override_shape_enabled (docs/plans.md).
        self._override_shapes = bool(is_override_shape_enabled)
        out = ffi.new("cudnnfe_graph_t **")
        status = lib.cudnnfe_graph_create(out)
        if status:
            from ._errors import raise_global_error
            raise_global_error(status)
        self._ptr = ffi.gc(out[0], lib.cudnnfe_graph_destroy)
        # cudnn-frontend's graph holds only the tensors its nodes use: inputs no op reads
        # leave the C graph at validation, and their bindings are ignored (_record_pruned).
        self._check(lib.cudnnfe_graph_set_prune_unread_inputs(self._ptr, 1))
        self._tensors: Dict[int, Tensor] = {}
        self._node_names: Set[str] = set()
        # The next index _node_name tries per prefix: names are only added, so the
        # smallest free "<prefix>_<i>" never moves down (a scan from 0 was quadratic).
        self._next_name_index: Dict[str, int] = {}
        self._implicit: Dict[int, Tuple[Any, Tensor]] = {}
        self._devices: Set[int] = set()
        self._heur_modes: Optional[List[int]] = None
        self._plans_requested = False  # create_execution_plans was called
        # Engine filters recorded by deselect_* / select_behavior_notes, used by every build.
        self._plan_options: Dict[str, Any] = {}
        # The plan-deciding build options of the last build (None: loaded from a plan
        # blob), and whether build_plans made it (another build_plans policy then builds
        # again, restoring the plans compiled the first time).
        self._built_key: Optional[Tuple[Any, ...]] = None
        self._five_step_built = False
        # What the last check_support found: (configurations, target, handle).
        self._checked: Optional[Tuple[int, Any, Any]] = None
        # Serializes plan selection changes made from Python (select, autotune,
        # execute_plan_at_index).
        self._select_lock = threading.RLock()
        self._exec: Optional[_ExecInfo] = None
        self._fast: Optional[Tuple[Any, ...]] = None
        # The last stream object execute was given and its void * (stream_pointer).
        self._last_stream: Optional[Tuple[Any, Any]] = None
        # The last torch workspace execute was given: (weakref, data_ptr, void *, bytes).
        self._last_workspace: Optional[Tuple[Any, int, Any, int]] = None
        self._validated = False
        # Inputs that left the C graph at validation because no op read them (C UID ->
        # (its Tensor or None, its name)): a binding for one is ignored (_is_pruned_key).
        self._pruned: Dict[int, Tuple[Optional[Tensor], Optional[str]]] = {}
        # C UIDs whose names _naming.name_outputs has looked at, and how many tensors
        # the C graph had at its last call.
        self._named_uids: Set[int] = set()
        self._c_tensors_seen = 0
        # UIDs some op took as an operand (_operand): inputs among them are read; the
        # others may leave the C graph at validation (_unread_candidates).
        self._operand_uids: Set[int] = set()
        # Out-parameters reused by the calls made for every node added (a cffi
        # allocation each costs a few microseconds at 100,000 nodes).
        self._scratch = _Scratch()
        # Ragged offsets (_ragged.py): tensors whose offsets an op took, tensors an attention
        # op reads or writes (later offsets go to the C graph), gradients the backward writes
        # ragged (-> the offsets), and those gradients given the offsets by the user.
        self._ragged_taken: Set[Tensor] = set()
        self._ragged_attached: Set[Tensor] = set()
        self._ragged_expected: Dict[Tensor, Tensor] = {}
        self._ragged_confirmed: Set[Tensor] = set()
        if handle is not None and not isinstance(handle, Handle):
            raise TypeError(f"handle must be a cudnnfe.Handle, not {type(handle).__name__}")
        self._handle = handle
        self._name = name or ""
        self._target = None if target is None else _target(target)
        if name is not None:
            self._check(lib.cudnnfe_graph_set_name(self._ptr, _cstr(name, "name")))
        for setter, value, what in (
                (lib.cudnnfe_graph_set_io_dtype, io_data_type, "io_data_type"),
                (lib.cudnnfe_graph_set_intermediate_dtype, intermediate_data_type,
                 "intermediate_data_type"),
                (lib.cudnnfe_graph_set_compute_dtype, compute_data_type, "compute_data_type")):
            if value is not None:
                self._check(setter(self._ptr, _dtype(value, what)))

    # ------------------------------------------------------------------
    # internals
    # ------------------------------------------------------------------

    def _check(self, status: int, context: Optional[str] = None) -> None:
        if status:
            raise_graph_error(status, self._ptr, context)

    def _wrap(self, c_uid: int, role: str = "unknown") -> Tensor:
        t = self._tensors.get(c_uid)
        if t is None:
            t = self._tensors[c_uid] = Tensor(self, c_uid, role)
        elif role != "unknown":
            t._role = role
        return t

    def _rekey(self, t: Tensor, new: int) -> None:
        if self._tensors.get(t._uid) is t:
            del self._tensors[t._uid]
        self._named_uids.add(new)
        t._uid = new
        self._tensors[new] = t
        self._exec = None if self._exec is None else self._refresh_exec()

    def _all_c_uids(self) -> List[int]:
        n = ffi.new("size_t *")
        self._check(lib.cudnnfe_graph_get_tensor_uids(self._ptr, ffi.NULL, 0, n))
        buf = ffi.new("int64_t[]", max(n[0], 1))
        self._check(lib.cudnnfe_graph_get_tensor_uids(self._ptr, buf, n[0], n))
        return ffi.unpack(buf, n[0])

    def _c_tensor_count(self) -> int:
        n = self._scratch.count
        self._check(lib.cudnnfe_graph_get_tensor_count(self._ptr, n))
        return int(n[0])

    def _free_uid(self) -> int:
        used = [u for u in self._all_c_uids() if u != UID_ZERO_ALIAS]
        candidate = max(used, default=0) + 1
        if candidate == UID_ZERO_ALIAS:
            candidate += 1
        return candidate

    _ROLES = {int(tensor_kind.INPUT): "input", int(tensor_kind.SCALAR): "scalar",
              int(tensor_kind.VIRTUAL): "virtual", int(tensor_kind.OUTPUT): "output"}

    def _kind(self, t: Tensor) -> tensor_kind:
        out = ffi.new("cudnnfe_tensor_kind_t *")
        self._check(lib.cudnnfe_tensor_get_kind(self._ptr, t._uid, out))
        return tensor_kind(out[0])

    def _role(self, t: Tensor) -> str:
        """"input", "scalar", "virtual" or "output", from the C library."""
        role = self._ROLES[int(self._kind(t))]
        t._role = role
        return role

    def _node_name(self, prefix: str, name: Optional[str]) -> str:
        if name is not None:
            if not isinstance(name, str):
                raise TypeError(f"name must be a str, not {type(name).__name__}")
            return name
        i = self._next_name_index.get(prefix, 0)
        while f"{prefix}_{i}" in self._node_names:
            i += 1
        self._next_name_index[prefix] = i
        return f"{prefix}_{i}"

    def _scalar(self, value: float, node: str, port: str,
                dtype: data_type = data_type.FLOAT) -> int:
        """A new pass-by-value scalar named ``"<node>::<port>"``; returns its C UID."""
        out = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_scalar(
            self._ptr, _cstr(f"{node}::{port}", "name"), int(dtype), float(value), out))
        return self._wrap(int(out[0]), "scalar")._uid

    def _operand(self, value: Any, node: str, port: str, optional: bool = False,
                 scalar: bool = False, scalar_dtype: data_type = data_type.FLOAT) -> int:
        """C UID for an op operand: a Tensor, an array (made an input), or a number.

        A Python number is accepted where ``scalar`` is true and becomes a
        pass-by-value scalar of ``scalar_dtype`` (an INT64 one must be an int
        that a double holds exactly).
        """
        if value is None:
            if optional:
                return 0
            raise TypeError(f"{node}: {port} is required")
        if isinstance(value, Tensor):
            if value._graph is not self:
                raise ValueError(f"{node}: {port} is tensor {value.get_name()!r} of another graph")
            self._operand_uids.add(value._uid)
            return value._uid
        if _is_number(value):
            if not scalar:
                raise TypeError(f"{node}: {port} must be a tensor, not a number")
            if scalar_dtype in (data_type.INT64, data_type.INT32):
                if not isinstance(value, int) and not float(value).is_integer():
                    raise TypeError(f"{node}: {port} must be an int, not {value!r}")
                if abs(int(value)) > 2**53:
                    raise ValueError(f"{node}: {port} is {value}; a scalar holds integers up "
                                     "to 2**53 exactly (pass a graph input for larger ones)")
            return self._scalar(value, node, port, scalar_dtype)
        if _arrays.is_array(value):
            known = self._implicit.get(id(value))
            if known is not None and known[0] is value:
                self._operand_uids.add(known[1]._uid)
                return known[1]._uid
            t = self.tensor_like(value, name=f"{node}::{port}")
            self._implicit[id(value)] = (value, t)
            self._operand_uids.add(t._uid)
            return t._uid
        raise TypeError(f"{node}: {port} must be a cudnnfe.Tensor or an array, not "
                        f"{type(value).__name__}")

    def _added(self, name: str, uid: int, ports: Optional[Mapping[str, str]] = None) -> Tensor:
        """Record node ``name`` just added (first output ``uid``) and give its outputs
        cudnn-frontend's names (``_naming.py``; ``ports``: this op's own spellings)."""
        self._node_names.add(name)
        self._validated = False
        _naming.name_outputs(self, name, ports, uid)
        return self._wrap(uid, "virtual")

    # ------------------------------------------------------------------
    # tensors
    # ------------------------------------------------------------------

    def tensor(self, dim: Sequence[int], stride: Optional[Sequence[int]] = None,
               data_type: DType = None, name: Optional[str] = None, *,
               is_virtual: bool = False, is_pass_by_value: bool = False,
               ragged_offset: Any = None, reordering_type: Any = None,
               uid: Optional[int] = None) -> Tensor:
        """Add a graph input.

        Args:
            dim: dimensions (1 to 8).
            stride: strides in elements, any layout (None: packed row-major).
            data_type: element type (None/NOT_SET: the graph's io_data_type).
            name: tensor name (None: an automatic one).
            uid: the tensor's UID (None or -1: an automatic one); as :meth:`Tensor.set_uid`.
            is_pass_by_value: a one-element input whose array is in host
                memory, read when execute is called
                (``cudnnfe_tensor_set_pass_by_value``): a scale or bound given
                as a CPU tensor (a norm's ``epsilon`` or ``momentum`` too).
            ragged_offset: as :meth:`Tensor.set_ragged_offset` (attention operands).
            reordering_type: only NONE (:class:`NotOfferedError` otherwise).
        """
        if is_virtual:
            raise ValueError("graph inputs cannot be virtual in cudnnfe: "
                             "only operation outputs are")
        if reordering_type is not None and str(getattr(reordering_type, "name",
                                                       reordering_type)).upper() != "NONE":
            raise NotOfferedError(f"tensor: reordering_type {reordering_type!r} (tensor "
                                  "reordering) is not offered by the cudnnfe C ABI")
        d = _ints(dim, "dim")
        s = ffi.NULL
        if stride is not None:
            sl = _ints(stride, "stride")
            if len(sl) != len(d):
                raise ValueError(f"stride has {len(sl)} entries but dim has {len(d)}")
            s = ffi.new("int64_t[]", sl)
        out = ffi.new("int64_t *")
        shared = name is not None and self._c_name_holder(name) is not None
        self._check(lib.cudnnfe_graph_add_tensor(
            self._ptr, _cstr(None if shared else name, "name"),
            _tensor_dtype(data_type, "data_type"), len(d), ffi.new("int64_t[]", d), s, out))
        self._validated = False
        t = self._wrap(int(out[0]), "input")
        if shared:  # a name another tensor holds: as cudnn-frontend, allowed (set_name)
            t.set_name(name)
        if ragged_offset is not None:
            t.set_ragged_offset(ragged_offset)
        if is_pass_by_value:
            t.set_is_pass_by_value(True)
        if uid is not None and uid != -1:
            t.set_uid(uid)
        return t

    def tensor_like(self, input: Any = None, name: Optional[str] = None, *,
                    array: Any = None) -> Tensor:
        """Add a graph input with the shape, strides and data type of ``input``.

        ``input`` (or ``array=``) is a torch tensor, a NumPy array, any object
        with ``__dlpack__`` or ``__cuda_array_interface__``, or a
        :class:`Tensor` (of any graph: its dims, strides and data type are
        copied, as cudnn-frontend's ``tensor_like(tensor, name)``). A one-element
        host array makes a pass-by-value input, as in cudnn-frontend.
        """
        array = _one_of("tensor_like", "input", input, "array", array)
        if isinstance(array, Tensor):
            return self.tensor(dim=array.get_dim(), stride=array.get_stride(),
                               data_type=array.get_data_type(), name=name or None)
        info = describe(array)
        if info.dtype is None:
            raise TypeError(f"tensor_like: arrays of {info.type_name} have no cudnnfe data type")
        if not info.shape:
            raise ValueError("tensor_like: 0-d arrays are not supported; reshape to (1,)")
        self._devices.add(info.device)
        t = self.tensor(dim=info.shape, stride=info.strides, data_type=info.dtype, name=name)
        if info.device == _arrays.CPU and math.prod(info.shape) == 1:
            t.set_is_pass_by_value(True)  # as cudnn-frontend marks host arrays
        return t

    def get_tensor(self, name: str) -> Tensor:
        """The first tensor named ``name`` (ValueError if none); names may repeat, as in
        cudnn-frontend (:meth:`Tensor.set_name`)."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        for uid in self._all_c_uids():
            t = self._wrap(uid)
            if t.get_name() == name:
                return t
        out = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_find_tensor(self._ptr, _cstr(name, "name"), out))
        return self._wrap(int(out[0]))

    def _c_name_holder(self, name: str) -> Optional[int]:
        """The C UID of the tensor whose C name is ``name`` (None if none): one C lookup."""
        out = ffi.new("int64_t *")
        status = lib.cudnnfe_graph_find_tensor(self._ptr, _cstr(name, "name"), out)
        return int(out[0]) if status == lib.CUDNNFE_STATUS_OK else None

    def _free_c_name(self, name: str) -> str:
        """A C name for a second tensor called ``name`` (see :meth:`Tensor.set_name`)."""
        i = 1
        while self._c_name_holder(f"{name}#{i}") is not None:
            i += 1
        return f"{name}#{i}"

    def get_tensors(self) -> List[Tensor]:
        """Every tensor of the graph, in creation order."""
        return [self._wrap(u) for u in self._all_c_uids()]

    def get_tensor_count(self) -> int:
        """Number of tensors in the graph."""
        n = ffi.new("size_t *")
        self._check(lib.cudnnfe_graph_get_tensor_count(self._ptr, n))
        return int(n[0])

    def get_node_count(self) -> int:
        """Number of operations in the graph."""
        n = ffi.new("size_t *")
        self._check(lib.cudnnfe_graph_get_node_count(self._ptr, n))
        return int(n[0])

    # ------------------------------------------------------------------
    # convolutions
    # ------------------------------------------------------------------

    def _conv(self, kind: str, fn: Any, in0: Any, port0: str, in1: Any, port1: str,
              padding: Optional[Sequence[int]], stride: Optional[Sequence[int]],
              dilation: Optional[Sequence[int]], pre_padding: Optional[Sequence[int]],
              post_padding: Optional[Sequence[int]], compute_data_type: DType,
              name: Optional[str], convolution_mode: Any) -> Tensor:
        node = self._node_name(kind, name)
        o = _structs.new("cudnnfe_conv_options_t")
        spatial = 0
        for what, values, fields in (("padding", padding, ("pre_padding", "post_padding")),
                                     ("pre_padding", pre_padding, ("pre_padding",)),
                                     ("post_padding", post_padding, ("post_padding",)),
                                     ("stride", stride, ("stride",)),
                                     ("dilation", dilation, ("dilation",))):
            if values is None:
                continue
            v = _ints(values, f"{node}: {what}", 1, _MAX_SPATIAL)
            if spatial and len(v) != spatial:
                raise ValueError(f"{node}: {what} has {len(v)} entries but another option has "
                                 f"{spatial}; give one per spatial dimension")
            spatial = len(v)
            for field in fields:
                arr = getattr(o, field)
                for i, x in enumerate(v):
                    arr[i] = x
        o.spatial_dims = spatial
        if convolution_mode is not None:
            o.mode = int(_enum_value(conv_mode, convolution_mode, "convolution_mode"))
        o.compute_dtype = _dtype(compute_data_type, "compute_data_type")
        cname = _cstr(node, "name")
        o.name = cname
        a = self._operand(in0, node, port0)
        b = self._operand(in1, node, port1)
        out = ffi.new("int64_t *")
        self._check(fn(self._ptr, a, b, o, out))
        return self._added(node, int(out[0]))

    def conv_fprop(self, image: Operand, weight: Operand,
                   padding: Optional[Sequence[int]] = None,
                   stride: Optional[Sequence[int]] = None,
                   dilation: Optional[Sequence[int]] = None,
                   pre_padding: Optional[Sequence[int]] = None,
                   post_padding: Optional[Sequence[int]] = None,
                   compute_data_type: DType = None, name: Optional[str] = None,
                   convolution_mode: Any = None) -> Tensor:
        """Forward convolution: ``y[N,K,*] = conv(image[N,C,*], weight[K,C,*])``.

        ``padding`` sets both ``pre_padding`` and ``post_padding``; each option
        has one entry per spatial dimension (1 to 3). Dims are logical
        NC(D)HW in every layout; strides give the memory layout (NHWC...). The
        output is channels-last unless its strides are set, as in cudnn-frontend
        (conv_dgrad's dx and conv_wgrad's dw too).
        ``convolution_mode`` is ``conv_mode.CROSS_CORRELATION`` (default, as
        frameworks) or ``conv_mode.CONVOLUTION``.
        """
        return self._conv("conv_fprop", lib.cudnnfe_graph_add_conv_fprop, image, "image",
                          weight, "weight", padding, stride, dilation, pre_padding, post_padding,
                          compute_data_type, name, convolution_mode)

    def conv_dgrad(self, loss: Operand = None, filter: Operand = None,
                   padding: Optional[Sequence[int]] = None,
                   stride: Optional[Sequence[int]] = None,
                   dilation: Optional[Sequence[int]] = None,
                   pre_padding: Optional[Sequence[int]] = None,
                   post_padding: Optional[Sequence[int]] = None,
                   compute_data_type: DType = None, name: Optional[str] = None,
                   convolution_mode: Any = None, *, weight: Operand = None) -> Tensor:
        """Data gradient of a convolution: ``dx = dgrad(loss dy[N,K,*], filter w[K,C,*])``.

        Positional order and keywords are cudnn-frontend's (``loss``,
        ``filter``); ``weight=`` is the same as ``filter=``. dx's spatial size
        is inferred as the smallest consistent one; set it with
        ``dx.set_dim(...)`` when a stride is > 1.
        """
        weight = _one_of("conv_dgrad", "filter", filter, "weight", weight)
        # The C function takes (loss, weight).
        return self._conv("conv_dgrad", lib.cudnnfe_graph_add_conv_dgrad, loss, "loss", weight,
                          "weight", padding, stride, dilation, pre_padding, post_padding,
                          compute_data_type, name, convolution_mode)

    def conv_wgrad(self, image: Operand, loss: Operand,
                   padding: Optional[Sequence[int]] = None,
                   stride: Optional[Sequence[int]] = None,
                   dilation: Optional[Sequence[int]] = None,
                   pre_padding: Optional[Sequence[int]] = None,
                   post_padding: Optional[Sequence[int]] = None,
                   compute_data_type: DType = None, name: Optional[str] = None,
                   convolution_mode: Any = None) -> Tensor:
        """Weight gradient of a convolution: ``dw = wgrad(image x[N,C,*], loss dy[N,K,*])``.

        dw's filter size is inferred as the largest consistent one; set it with
        ``dw.set_dim(...)`` when a stride is > 1.
        """
        return self._conv("conv_wgrad", lib.cudnnfe_graph_add_conv_wgrad, image, "image", loss,
                          "loss", padding, stride, dilation, pre_padding, post_padding,
                          compute_data_type, name, convolution_mode)

    # ------------------------------------------------------------------
    # matmul
    # ------------------------------------------------------------------

    def matmul(self, A: Operand, B: Operand, compute_data_type: DType = None,
               name: Optional[str] = None) -> Tensor:
        """``C[..., M, N] = A[..., M, K] @ B[..., K, N]``; equal ranks, batch dims of 1 broadcast."""
        node = self._node_name("matmul", name)
        o = _structs.new("cudnnfe_matmul_options_t")
        cname = _cstr(node, "name")
        o.name = cname
        o.compute_dtype = _dtype(compute_data_type, "compute_data_type")
        a = self._operand(A, node, "A")
        b = self._operand(B, node, "B")
        out = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_matmul(self._ptr, a, b, o, out))
        return self._added(node, int(out[0]))

    # ------------------------------------------------------------------
    # pointwise
    # ------------------------------------------------------------------

    def pointwise(self, mode: Union[pointwise_mode, int, str], input0: Operand,
                  input1: Optional[Operand] = None, input2: Optional[Operand] = None,
                  compute_data_type: DType = None, name: Optional[str] = None, *,
                  relu_lower_clip: Optional[float] = None,
                  relu_upper_clip: Optional[float] = None,
                  relu_lower_clip_slope: Optional[float] = None,
                  elu_alpha: Optional[float] = None, softplus_beta: Optional[float] = None,
                  swish_beta: Optional[float] = None, axis: Optional[int] = None,
                  _prefix: Optional[str] = None, _ports: Tuple[str, str, str] = (
                      "input0", "input1", "input2")) -> Tensor:
        """Elementwise operation ``mode`` on up to three operands.

        Operand roles follow the C header: unary modes read ``input0``; binary
        modes compute ``input0 <op> input1``; ``*_BWD`` modes read
        ``input0 = loss (dy)`` and ``input1 = x``; ``BINARY_SELECT`` writes
        ``input2 ? input0 : input1``; ``GEN_INDEX`` writes each element's index
        along ``axis``. Operands broadcast (each dim equals the output's or is 1);
        the second and third operand may be Python numbers (pass-by-value scalars).
        """
        mode_value = int(_enum_value(pointwise_mode, mode, "pointwise mode"))
        node = self._node_name(_prefix or "pointwise", name)
        o = _structs.new("cudnnfe_pointwise_options_t")
        cname = _cstr(node, "name")
        o.name = cname
        o.compute_dtype = _dtype(compute_data_type, "compute_data_type")
        for field, value in (("relu_lower_clip", relu_lower_clip),
                             ("relu_upper_clip", relu_upper_clip),
                             ("relu_lower_clip_slope", relu_lower_clip_slope),
                             ("elu_alpha", elu_alpha), ("softplus_beta", softplus_beta),
                             ("swish_beta", swish_beta)):
            if value is not None:
                if not isinstance(value, (int, float)) or isinstance(value, bool):
                    raise TypeError(f"{node}: {field} must be a number")
                setattr(o, field, float(value))
        if axis is not None:
            if not isinstance(axis, int) or isinstance(axis, bool):
                raise TypeError(f"{node}: axis must be an int")
            o.axis = axis
        a = self._operand(input0, node, _ports[0])
        b = self._operand(input1, node, _ports[1], optional=True, scalar=True)
        c = self._operand(input2, node, _ports[2], optional=True, scalar=True)
        out = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_pointwise(self._ptr, mode_value, a, b, c, o, out))
        return self._added(node, int(out[0]))

    def _binary(self, mode: pointwise_mode, prefix: str, a: Operand, b: Operand,
                compute_data_type: DType, name: Optional[str], ports: Tuple[str, str] = ("a", "b"),
                **kw: Any) -> Tensor:
        return self.pointwise(mode, a, b, None, compute_data_type, name, _prefix=prefix,
                              _ports=(ports[0], ports[1], "input2"), **kw)

    def _unary(self, mode: pointwise_mode, prefix: str, input: Operand, compute_data_type: DType,
               name: Optional[str], **kw: Any) -> Tensor:
        return self.pointwise(mode, input, None, None, compute_data_type, name, _prefix=prefix,
                              _ports=("input", "input1", "input2"), **kw)

    # binary arithmetic
    def add(self, a: Operand, b: Operand, compute_data_type: DType = None,
            name: Optional[str] = None) -> Tensor:
        """``a + b`` (ADD)."""
        return self._binary(pointwise_mode.ADD, "add", a, b, compute_data_type, name)

    def sub(self, a: Operand, b: Operand, compute_data_type: DType = None,
            name: Optional[str] = None) -> Tensor:
        """``a - b`` (SUB)."""
        return self._binary(pointwise_mode.SUB, "sub", a, b, compute_data_type, name)

    def mul(self, a: Operand, b: Operand, compute_data_type: DType = None,
            name: Optional[str] = None) -> Tensor:
        """``a * b`` (MUL)."""
        return self._binary(pointwise_mode.MUL, "mul", a, b, compute_data_type, name)

    def div(self, a: Operand, b: Operand, compute_data_type: DType = None,
            name: Optional[str] = None) -> Tensor:
        """``a / b`` (DIV)."""
        return self._binary(pointwise_mode.DIV, "div", a, b, compute_data_type, name)

    def add_square(self, a: Operand, b: Operand, compute_data_type: DType = None,
                   name: Optional[str] = None) -> Tensor:
        """``a + b * b`` (ADD_SQUARE)."""
        return self._binary(pointwise_mode.ADD_SQUARE, "add_square", a, b, compute_data_type,
                            name)

    def max(self, input0: Operand = None, input1: Operand = None, compute_data_type: DType = None,
            name: Optional[str] = None, *, a: Operand = None, b: Operand = None) -> Tensor:
        """Elementwise maximum (MAX); ``a``/``b`` are the same as cudnn-frontend's ``input0``/``input1``."""
        return self._binary(pointwise_mode.MAX, "max", _one_of("max", "input0", input0, "a", a),
                            _one_of("max", "input1", input1, "b", b), compute_data_type, name,
                            ports=("input0", "input1"))

    def min(self, input0: Operand = None, input1: Operand = None, compute_data_type: DType = None,
            name: Optional[str] = None, *, a: Operand = None, b: Operand = None) -> Tensor:
        """Elementwise minimum (MIN); ``a``/``b`` are the same as cudnn-frontend's ``input0``/``input1``."""
        return self._binary(pointwise_mode.MIN, "min", _one_of("min", "input0", input0, "a", a),
                            _one_of("min", "input1", input1, "b", b), compute_data_type, name,
                            ports=("input0", "input1"))

    def mod(self, input0: Operand = None, input1: Operand = None, compute_data_type: DType = None,
            name: Optional[str] = None, *, a: Operand = None, b: Operand = None) -> Tensor:
        """``fmod(input0, input1)`` (MOD); ``a``/``b`` are the same as cudnn-frontend's ``input0``/``input1``."""
        return self._binary(pointwise_mode.MOD, "mod", _one_of("mod", "input0", input0, "a", a),
                            _one_of("mod", "input1", input1, "b", b), compute_data_type, name,
                            ports=("input0", "input1"))

    def pow(self, input0: Operand = None, input1: Operand = None, compute_data_type: DType = None,
            name: Optional[str] = None, *, a: Operand = None, b: Operand = None) -> Tensor:
        """``input0 ** input1`` (POW); ``a``/``b`` are the same as cudnn-frontend's ``input0``/``input1``."""
        return self._binary(pointwise_mode.POW, "pow", _one_of("pow", "input0", input0, "a", a),
                            _one_of("pow", "input1", input1, "b", b), compute_data_type, name,
                            ports=("input0", "input1"))

    def atan2(self, a: Operand, b: Operand, compute_data_type: DType = None,
              name: Optional[str] = None) -> Tensor:
        """``atan2(a, b)`` (ATAN2)."""
        return self._binary(pointwise_mode.ATAN2, "atan2", a, b, compute_data_type, name)

    def bias(self, input: Operand, bias: Operand, compute_data_type: DType = None,
             name: Optional[str] = None) -> Tensor:
        """``input + bias`` with ``bias`` broadcast (ADD)."""
        return self._binary(pointwise_mode.ADD, "bias", input, bias, compute_data_type, name,
                            ports=("input", "bias"))

    def scale(self, input: Operand, scale: Operand, compute_data_type: DType = None,
              name: Optional[str] = None) -> Tensor:
        """``input * scale``; ``scale`` is a tensor or a Python number (MUL)."""
        return self._binary(pointwise_mode.MUL, "scale", input, scale, compute_data_type, name,
                            ports=("input", "scale"))

    # comparisons and logic
    def cmp_eq(self, input: Operand, comparison: Operand, compute_data_type: DType = None,
               name: Optional[str] = None) -> Tensor:
        """``input == comparison`` (CMP_EQ; BOOLEAN output unless set)."""
        return self._binary(pointwise_mode.CMP_EQ, "cmp_eq", input, comparison,
                            compute_data_type, name, ports=("input", "comparison"))

    def cmp_neq(self, input: Operand, comparison: Operand, compute_data_type: DType = None,
                name: Optional[str] = None) -> Tensor:
        """``input != comparison`` (CMP_NEQ)."""
        return self._binary(pointwise_mode.CMP_NEQ, "cmp_neq", input, comparison,
                            compute_data_type, name, ports=("input", "comparison"))

    def cmp_gt(self, input: Operand, comparison: Operand, compute_data_type: DType = None,
               name: Optional[str] = None) -> Tensor:
        """``input > comparison`` (CMP_GT)."""
        return self._binary(pointwise_mode.CMP_GT, "cmp_gt", input, comparison,
                            compute_data_type, name, ports=("input", "comparison"))

    def cmp_ge(self, input: Operand, comparison: Operand, compute_data_type: DType = None,
               name: Optional[str] = None) -> Tensor:
        """``input >= comparison`` (CMP_GE)."""
        return self._binary(pointwise_mode.CMP_GE, "cmp_ge", input, comparison,
                            compute_data_type, name, ports=("input", "comparison"))

    def cmp_lt(self, input: Operand, comparison: Operand, compute_data_type: DType = None,
               name: Optional[str] = None) -> Tensor:
        """``input < comparison`` (CMP_LT)."""
        return self._binary(pointwise_mode.CMP_LT, "cmp_lt", input, comparison,
                            compute_data_type, name, ports=("input", "comparison"))

    def cmp_le(self, input: Operand, comparison: Operand, compute_data_type: DType = None,
               name: Optional[str] = None) -> Tensor:
        """``input <= comparison`` (CMP_LE)."""
        return self._binary(pointwise_mode.CMP_LE, "cmp_le", input, comparison,
                            compute_data_type, name, ports=("input", "comparison"))

    def logical_and(self, a: Operand, b: Operand, compute_data_type: DType = None,
                    name: Optional[str] = None) -> Tensor:
        """``a && b`` (LOGICAL_AND)."""
        return self._binary(pointwise_mode.LOGICAL_AND, "logical_and", a, b, compute_data_type,
                            name)

    def logical_or(self, a: Operand, b: Operand, compute_data_type: DType = None,
                   name: Optional[str] = None) -> Tensor:
        """``a || b`` (LOGICAL_OR)."""
        return self._binary(pointwise_mode.LOGICAL_OR, "logical_or", a, b, compute_data_type,
                            name)

    def logical_not(self, input: Operand, compute_data_type: DType = None,
                    name: Optional[str] = None) -> Tensor:
        """``!input`` (LOGICAL_NOT)."""
        return self._unary(pointwise_mode.LOGICAL_NOT, "logical_not", input, compute_data_type,
                           name)

    def binary_select(self, input0: Operand, input1: Operand, mask: Operand,
                      compute_data_type: DType = None, name: Optional[str] = None) -> Tensor:
        """``mask ? input0 : input1`` (BINARY_SELECT)."""
        return self.pointwise(pointwise_mode.BINARY_SELECT, input0, input1, mask,
                              compute_data_type, name, _prefix="binary_select",
                              _ports=("input0", "input1", "mask"))

    def gen_index(self, input: Operand, axis: int, compute_data_type: DType = None,
                  name: Optional[str] = None) -> Tensor:
        """Each element's index along ``axis`` of ``input``'s shape (GEN_INDEX, INT32)."""
        return self._unary(pointwise_mode.GEN_INDEX, "gen_index", input, compute_data_type,
                           name, axis=axis)

    # unary math
    def neg(self, input: Operand, compute_data_type: DType = None,
            name: Optional[str] = None) -> Tensor:
        """``-input`` (NEG)."""
        return self._unary(pointwise_mode.NEG, "neg", input, compute_data_type, name)

    def abs(self, input: Operand, compute_data_type: DType = None,
            name: Optional[str] = None) -> Tensor:
        """``|input|`` (ABS)."""
        return self._unary(pointwise_mode.ABS, "abs", input, compute_data_type, name)

    def ceil(self, input: Operand, compute_data_type: DType = None,
             name: Optional[str] = None) -> Tensor:
        """Round up (CEIL)."""
        return self._unary(pointwise_mode.CEIL, "ceil", input, compute_data_type, name)

    def floor(self, input: Operand, compute_data_type: DType = None,
              name: Optional[str] = None) -> Tensor:
        """Round down (FLOOR)."""
        return self._unary(pointwise_mode.FLOOR, "floor", input, compute_data_type, name)

    def reciprocal(self, input: Operand, compute_data_type: DType = None,
                   name: Optional[str] = None) -> Tensor:
        """``1 / input`` (RECIPROCAL)."""
        return self._unary(pointwise_mode.RECIPROCAL, "reciprocal", input, compute_data_type,
                           name)

    def sqrt(self, input: Operand, compute_data_type: DType = None,
             name: Optional[str] = None) -> Tensor:
        """Square root (SQRT)."""
        return self._unary(pointwise_mode.SQRT, "sqrt", input, compute_data_type, name)

    def rsqrt(self, input: Operand, compute_data_type: DType = None,
              name: Optional[str] = None) -> Tensor:
        """``1 / sqrt(input)`` (RSQRT)."""
        return self._unary(pointwise_mode.RSQRT, "rsqrt", input, compute_data_type, name)

    def exp(self, input: Operand, compute_data_type: DType = None,
            name: Optional[str] = None) -> Tensor:
        """``e ** input`` (EXP)."""
        return self._unary(pointwise_mode.EXP, "exp", input, compute_data_type, name)

    def log(self, input: Operand, compute_data_type: DType = None,
            name: Optional[str] = None) -> Tensor:
        """Natural logarithm (LOG)."""
        return self._unary(pointwise_mode.LOG, "log", input, compute_data_type, name)

    def sin(self, input: Operand, compute_data_type: DType = None,
            name: Optional[str] = None) -> Tensor:
        """Sine (SIN)."""
        return self._unary(pointwise_mode.SIN, "sin", input, compute_data_type, name)

    def cos(self, input: Operand, compute_data_type: DType = None,
            name: Optional[str] = None) -> Tensor:
        """Cosine (COS)."""
        return self._unary(pointwise_mode.COS, "cos", input, compute_data_type, name)

    def tan(self, input: Operand, compute_data_type: DType = None,
            name: Optional[str] = None) -> Tensor:
        """Tangent (TAN)."""
        return self._unary(pointwise_mode.TAN, "tan", input, compute_data_type, name)

    def erf(self, input: Operand, compute_data_type: DType = None,
            name: Optional[str] = None) -> Tensor:
        """Error function (ERF)."""
        return self._unary(pointwise_mode.ERF, "erf", input, compute_data_type, name)

    def identity(self, input: Operand, compute_data_type: DType = None,
                 name: Optional[str] = None) -> Tensor:
        """Copy, converting the data type if the output's differs (IDENTITY)."""
        return self._unary(pointwise_mode.IDENTITY, "identity", input, compute_data_type, name)

    # activations
    def relu(self, input: Operand, negative_slope: Optional[float] = None,
             lower_clip: Optional[float] = None, upper_clip: Optional[float] = None,
             compute_data_type: DType = None, name: Optional[str] = None) -> Tensor:
        """``max(input, 0)``, with optional clips and leaky slope (RELU_FWD)."""
        return self._unary(pointwise_mode.RELU_FWD, "relu", input, compute_data_type, name,
                           relu_lower_clip_slope=negative_slope, relu_lower_clip=lower_clip,
                           relu_upper_clip=upper_clip)

    def tanh(self, input: Operand, compute_data_type: DType = None,
             name: Optional[str] = None) -> Tensor:
        """Hyperbolic tangent (TANH_FWD)."""
        return self._unary(pointwise_mode.TANH_FWD, "tanh", input, compute_data_type, name)

    def sigmoid(self, input: Operand, compute_data_type: DType = None,
                name: Optional[str] = None) -> Tensor:
        """``1 / (1 + e ** -input)`` (SIGMOID_FWD)."""
        return self._unary(pointwise_mode.SIGMOID_FWD, "sigmoid", input, compute_data_type, name)

    def elu(self, input: Operand, alpha: Optional[float] = None,
            compute_data_type: DType = None, name: Optional[str] = None) -> Tensor:
        """ELU with ``alpha`` (default 1) (ELU_FWD)."""
        return self._unary(pointwise_mode.ELU_FWD, "elu", input, compute_data_type, name,
                           elu_alpha=alpha)

    def gelu(self, input: Operand, compute_data_type: DType = None,
             name: Optional[str] = None) -> Tensor:
        """GELU, ``x * Phi(x)`` with the exact erf (GELU_FWD)."""
        return self._unary(pointwise_mode.GELU_FWD, "gelu", input, compute_data_type, name)

    def gelu_approx_tanh(self, input: Operand, compute_data_type: DType = None,
                         name: Optional[str] = None) -> Tensor:
        """GELU with the tanh approximation (GELU_APPROX_TANH_FWD)."""
        return self._unary(pointwise_mode.GELU_APPROX_TANH_FWD, "gelu_approx_tanh", input,
                           compute_data_type, name)

    def softplus(self, input: Operand, beta: Optional[float] = None,
                 compute_data_type: DType = None, name: Optional[str] = None) -> Tensor:
        """``log(1 + e ** (beta * x)) / beta`` (SOFTPLUS_FWD)."""
        return self._unary(pointwise_mode.SOFTPLUS_FWD, "softplus", input, compute_data_type,
                           name, softplus_beta=beta)

    def swish(self, input: Operand, beta: Optional[float] = None,
              compute_data_type: DType = None, name: Optional[str] = None, *,
              swish_beta: Optional[float] = None) -> Tensor:
        """``x * sigmoid(beta * x)`` (SWISH_FWD); ``swish_beta`` is cudnn-frontend's keyword."""
        return self._unary(pointwise_mode.SWISH_FWD, "swish", input, compute_data_type, name,
                           swish_beta=_optional_alias("swish", "beta", beta, "swish_beta",
                                                      swish_beta))

    def silu(self, input: Operand, compute_data_type: DType = None,
             name: Optional[str] = None) -> Tensor:
        """SiLU, ``x * sigmoid(x)`` (SWISH_FWD with beta 1)."""
        return self._unary(pointwise_mode.SWISH_FWD, "silu", input, compute_data_type, name,
                           swish_beta=1.0)

    # activation backward: loss = dy, input = x
    def _bwd(self, mode: pointwise_mode, prefix: str, loss: Operand, input: Operand,
             compute_data_type: DType, name: Optional[str], **kw: Any) -> Tensor:
        return self.pointwise(mode, loss, input, None, compute_data_type, name, _prefix=prefix,
                              _ports=("loss", "input", "input2"), **kw)

    def relu_backward(self, loss: Operand, input: Operand, negative_slope: Optional[float] = None,
                      lower_clip: Optional[float] = None, upper_clip: Optional[float] = None,
                      compute_data_type: DType = None, name: Optional[str] = None) -> Tensor:
        """dx of ReLU from ``loss`` (dy) and ``input`` (x) (RELU_BWD)."""
        return self._bwd(pointwise_mode.RELU_BWD, "relu_backward", loss, input,
                         compute_data_type, name, relu_lower_clip_slope=negative_slope,
                         relu_lower_clip=lower_clip, relu_upper_clip=upper_clip)

    def tanh_backward(self, loss: Operand, input: Operand, compute_data_type: DType = None,
                      name: Optional[str] = None) -> Tensor:
        """dx of tanh (TANH_BWD)."""
        return self._bwd(pointwise_mode.TANH_BWD, "tanh_backward", loss, input,
                         compute_data_type, name)

    def sigmoid_backward(self, loss: Operand, input: Operand, compute_data_type: DType = None,
                         name: Optional[str] = None) -> Tensor:
        """dx of sigmoid (SIGMOID_BWD)."""
        return self._bwd(pointwise_mode.SIGMOID_BWD, "sigmoid_backward", loss, input,
                         compute_data_type, name)

    def elu_backward(self, loss: Operand, input: Operand, alpha: Optional[float] = None,
                     compute_data_type: DType = None, name: Optional[str] = None) -> Tensor:
        """dx of ELU (ELU_BWD)."""
        return self._bwd(pointwise_mode.ELU_BWD, "elu_backward", loss, input, compute_data_type,
                         name, elu_alpha=alpha)

    def gelu_backward(self, loss: Operand, input: Operand, compute_data_type: DType = None,
                      name: Optional[str] = None) -> Tensor:
        """dx of GELU (GELU_BWD)."""
        return self._bwd(pointwise_mode.GELU_BWD, "gelu_backward", loss, input,
                         compute_data_type, name)

    def gelu_approx_tanh_backward(self, loss: Operand, input: Operand,
                                  compute_data_type: DType = None,
                                  name: Optional[str] = None) -> Tensor:
        """dx of tanh-approximated GELU (GELU_APPROX_TANH_BWD)."""
        return self._bwd(pointwise_mode.GELU_APPROX_TANH_BWD, "gelu_approx_tanh_backward", loss,
                         input, compute_data_type, name)

    def softplus_backward(self, loss: Operand, input: Operand, beta: Optional[float] = None,
                          compute_data_type: DType = None, name: Optional[str] = None) -> Tensor:
        """dx of softplus (SOFTPLUS_BWD)."""
        return self._bwd(pointwise_mode.SOFTPLUS_BWD, "softplus_backward", loss, input,
                         compute_data_type, name, softplus_beta=beta)

    def swish_backward(self, loss: Operand, input: Operand, beta: Optional[float] = None,
                       compute_data_type: DType = None, name: Optional[str] = None, *,
                       swish_beta: Optional[float] = None) -> Tensor:
        """dx of swish (SWISH_BWD); ``swish_beta`` is cudnn-frontend's keyword."""
        return self._bwd(pointwise_mode.SWISH_BWD, "swish_backward", loss, input,
                         compute_data_type, name,
                         swish_beta=_optional_alias("swish_backward", "beta", beta, "swish_beta",
                                                    swish_beta))

    # ------------------------------------------------------------------
    # reduction
    # ------------------------------------------------------------------

    def reduction(self, input: Operand, mode: Union[reduction_mode, int, str],
                  axes: Optional[Iterable[int]] = None, axes_mask: Optional[int] = None,
                  deterministic: bool = False, compute_data_type: DType = None,
                  name: Optional[str] = None) -> Tensor:
        """Reduce ``input`` with ``mode`` over ``axes``.

        ``axes`` lists the dimensions reduced to 1 (``axes_mask`` is the same as
        a bit mask). With neither, every dimension is reduced unless the
        output's dims are set with ``set_dim`` (as in cudnn-frontend). The output is
        channels-last (N, spatial..., C; row-major for 2 dims) unless its strides are
        set, as in cudnn-frontend.
        """
        mode_value = int(_enum_value(reduction_mode, mode, "reduction mode"))
        if mode_value == reduction_mode.NOT_SET:
            raise ValueError(f"reduction {name or ''}: mode is NOT_SET; give a reduction_mode")
        node = self._node_name("reduction", name)
        o = _structs.new("cudnnfe_reduction_options_t")
        cname = _cstr(node, "name")
        o.name = cname
        o.compute_dtype = _dtype(compute_data_type, "compute_data_type")
        mask = 0
        if axes is not None:
            for ax in _ints(list(axes), f"{node}: axes", 0, _MAX_DIMS):
                if not 0 <= ax < _MAX_DIMS:
                    raise ValueError(f"{node}: axis {ax} is out of range 0..{_MAX_DIMS - 1}")
                mask |= 1 << ax
        if axes_mask is not None:
            if not isinstance(axes_mask, int) or not 0 <= axes_mask < (1 << _MAX_DIMS):
                raise ValueError(f"{node}: axes_mask {axes_mask!r} is not a mask of "
                                 f"{_MAX_DIMS} bits")
            mask |= axes_mask
        o.axes_mask = mask
        o.deterministic = 1 if deterministic else 0
        x = self._operand(input, node, "input")
        out = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_reduction(self._ptr, mode_value, x, o, out))
        return self._added(node, int(out[0]))

    # ------------------------------------------------------------------
    # softmax (attention and normalizations: _attention.py, _norms.py)
    # ------------------------------------------------------------------

    def softmax(self, input: Operand, generate_stats: bool = False,
                compute_data_type: DType = None,
                name: Optional[str] = None) -> Tuple[Tensor, Optional[Tensor]]:
        """Softmax over the last dimension; returns ``(y, stats)``.

        With ``generate_stats``, stats is the log-sum-exp over the last dim
        (``[..., 1]`` FLOAT); else None.
        """
        node = self._node_name("softmax", name)
        opts = _structs.new("cudnnfe_softmax_options_t")
        cname = _cstr(node, "name")
        opts.name = cname
        opts.generate_stats = 1 if generate_stats else 0
        opts.compute_dtype = _dtype(compute_data_type, "compute_data_type")
        x = self._operand(input, node, "input")
        y, st = ffi.new("int64_t *"), ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_softmax(self._ptr, x, opts, y, st))
        out = self._added(node, int(y[0]))
        return out, self._wrap(int(st[0]), "virtual") if generate_stats and st[0] else None

    # ------------------------------------------------------------------
    # validation and build
    # ------------------------------------------------------------------

    def validate(self) -> None:
        """Resolve data types and check every node's shapes and types.

        Raises :class:`InvalidGraphError` (a ValueError) naming the node,
        tensor and rule.
        """
        def call() -> int:
            # The build's own target and options, so that a GPU graph meets the support rules
            # of its GPU here, where cudnn-frontend checks them (docs/refusals.md).
            options, keep, _ = self._options(self._heur_modes, None)
            return lib.cudnnfe_graph_validate_for_build(self._ptr, self._build_handle(None),
                                                        options)
        self._validating(call, log=True)

    def _validating(self, call: Callable[[], int], log: bool) -> None:
        """Runs ``call``, a C call that validates the graph (validate_for_build, check_support,
        build), with what each of them needs around it: deferred refusals and ragged layouts
        checked first, cudnn-frontend's validation log when ``log``, and the unread inputs the
        C library pruned recorded after, whatever the call did."""
        self._raise_deferred()
        _ragged.check(self)
        if log:
            _fe_log.log_validating(self)
        candidates = self._unread_candidates()
        try:
            self._check(call())
        finally:
            self._record_pruned(candidates)
        if log:
            _fe_log.log_validated()
        self._validated = True

    def _defer(self, error: Optional[Exception]) -> None:
        """Keep a refusal found while the graph is made for validate() (or build) to raise."""
        if error is not None:
            self._deferred.append(error)

    def _raise_deferred(self) -> None:
        if self._deferred:
            raise self._deferred[0]

    def build_operation_graph(self) -> None:
        """Second of the five build steps: validates if not done yet.

        cudnnfe lowers the graph to cuDNN inside ``cudnnfe_graph_build``, which
        :meth:`check_support` calls; this step only makes sure the graph is valid.
        """
        if not self._validated and not self.is_built():
            self.validate()

    def create_execution_plans(self, heur_modes: Any = None) -> None:
        """Third step: record the heuristic modes that :meth:`check_support` tries.

        cudnn-frontend can describe plan 0 from here on (its notes, name,
        workspace); in cudnnfe the first such query builds the graph as
        :meth:`check_support` does, and answers from the plan built.
        """
        self._heur_modes = _heur_modes(heur_modes)
        self._plans_requested = True

    def check_support(self, handle: Optional[Handle] = None,
                      target: Optional[target] = None) -> None:
        """Fourth step: does cuDNN offer an engine configuration for this graph?

        As cudnn-frontend's: validates (if not done), asks the heuristics
        modes of :meth:`create_execution_plans` and applies the engine filters
        recorded so far (``deselect_*``), without building any plan
        (``cudnnfe_graph_check_support``: no kernel is compiled here, so
        :meth:`build_plans` compiles each configuration once, whatever its
        policy). An unsupported graph fails here with
        :class:`GraphNotSupportedError` naming the ops, the cuDNN version, the
        GPU architecture and what removed each configuration;
        :meth:`get_execution_plan_count` then says how many were found.
        """
        if self.is_built():
            return
        options, keep, _ = self._options(self._heur_modes, target)
        found = ffi.new("int64_t *")
        self._validating(lambda: lib.cudnnfe_graph_check_support(
            self._ptr, self._build_handle(handle), options, found), log=not self._validated)
        del keep
        self._checked = (int(found[0]), target, handle)

    def _check_again(self) -> None:
        """check_support with the target and handle of the last one (the defaults if none),
        unless the C library still holds what that one found for this very graph (a plan
        query in a loop would otherwise run the heuristics once per index)."""
        if self._checked is None:
            self.check_support()
            return
        probe = _structs.new("cudnnfe_plan_info_t")
        if lib.cudnnfe_graph_get_checked_config_info(self._ptr, 0, probe) != 0:
            self.check_support(handle=self._checked[2], target=self._checked[1])

    def build_plans(self, policy: Any = build_plan_policy.HEURISTICS_CHOICE,
                    handle: Optional[Handle] = None) -> None:
        """Fifth step: build the plans ``policy`` asks for (:class:`build_plan_policy`).

        ``HEURISTICS_CHOICE`` (default) keeps the first engine configuration
        that passes the filters and builds; ``ALL`` builds every one, in
        heuristics order, for :meth:`autotune` and :meth:`build_plan_at_index`.

        cudnnfe builds in one C call. Called again with the same policy and
        filters it is a no-op; with another one the graph is built again from
        its description, restoring the plans compiled the first time instead
        of compiling them again. A graph built by
        :meth:`build` or loaded from a plan keeps its plans: asking it for a
        different policy raises :class:`WrongStateError`.
        """
        if not self.is_built():
            # The target and handle check_support was given, unless given here.
            checked_target = self._checked[1] if self._checked else None
            if handle is None and self._checked:
                handle = self._checked[2]
            self._build(self._heur_modes, checked_target, handle, {"policy": policy})
            self._five_step_built = True
            return
        options, keep, key = self._options(self._heur_modes, self.get_target(), {"policy": policy})
        if key == self._built_key:
            return
        if self._five_step_built:
            self._rebuild(options, handle)
            self._built_key = key
            return
        wanted = build_plan_policy(_plans.policy_value(policy))
        if wanted == build_plan_policy.HEURISTICS_CHOICE and self._built_key is None:
            return  # loaded from a plan blob: its plan is the one to keep
        if self._built_key is None or wanted != self._built_key[0]:
            raise WrongStateError(
                f"graph {self.get_name()!r} is already built ({self.get_execution_plan_count()} "
                f"plan(s)); build_plans({wanted.name}) cannot change it. Pass policy= to build(), "
                "or call build_plans before build", int(lib.CUDNNFE_STATUS_WRONG_STATE),
                "CUDNNFE_STATUS_WRONG_STATE")

    def build(self, heur_modes: Any = None, *, target: Optional[target] = None,
              handle: Optional[Handle] = None, policy: Any = None,
              max_workspace_size: Optional[int] = None, exclude_numerical_notes: Any = None,
              exclude_behavior_notes: Any = None, require_behavior_notes: Any = None,
              exclude_engines: Any = None, max_plans: Optional[int] = None,
              disable_plan_cache: Optional[bool] = None, plan_cache_dir: Any = None,
              verify: Optional[bool] = None, verify_samples: Optional[int] = None,
              verify_rtol: Optional[float] = None) -> None:
        """Validate and build: the five steps in one call.

        Args:
            heur_modes: a :class:`heur_mode` or a list of up to 4, tried in
                order (default ``[A, FALLBACK]``).
            target: :class:`target` to build for (default: the graph's, else
                inferred from the arrays given to :meth:`tensor_like`).
            handle: execution context for the build (default: the graph's).
            policy: :class:`build_plan_policy` (default ``HEURISTICS_CHOICE``:
                one plan; ``ALL``: every configuration that passes the filters).
            max_workspace_size: skip plans needing more workspace (bytes).
            exclude_numerical_notes: skip engines with any of these
                :class:`numerical_note` flags (e.g. ``TENSOR_CORE`` to keep full
                FP32 on FLOAT data; ``NONDETERMINISTIC``).
            exclude_behavior_notes: skip engines with any of these
                :class:`behavior_note` flags (e.g. ``RUNTIME_COMPILATION``).
            require_behavior_notes: keep only engines with all of these (e.g.
                ``SUPPORTS_CUDA_GRAPH_NATIVE_API``).
            exclude_engines: engine ids or names ``"engN"`` never to use.
            max_plans: with ``ALL``, build at most this many plans.
            disable_plan_cache: True: this build neither reuses nor stores
                cached plans.
            plan_cache_dir: persistent plan cache directory (default: the
                environment variable ``CUDNNFE_PLAN_CACHE_DIR``; ``""``: none).
            verify, verify_samples, verify_rtol: verify mode, as for
                :class:`pygraph` (default: the graph's, else the environment
                variable ``CUDNNFE_VERIFY``; ``docs/verify.md``).

        Notes accept a flag (``numerical_note.TENSOR_CORE | numerical_note.FFT``),
        an int mask, names or a list. Keywords left as None take the values
        recorded with ``deselect_*`` / ``select_behavior_notes``, else the C
        defaults. When the filters remove every engine configuration, the
        build fails with :class:`GraphNotSupportedError` saying which filter
        removed what (``docs/plans.md``). After a successful build the graph
        can no longer be modified.
        """
        self._build(_heur_modes(heur_modes) if heur_modes is not None else self._heur_modes,
                    target, handle,
                    {"policy": policy, "max_workspace_size": max_workspace_size,
                     "exclude_numerical_notes": exclude_numerical_notes,
                     "exclude_behavior_notes": exclude_behavior_notes,
                     "require_behavior_notes": require_behavior_notes,
                     "exclude_engines": exclude_engines, "max_plans": max_plans,
                     "disable_plan_cache": disable_plan_cache, "plan_cache_dir": plan_cache_dir,
                     "verify": verify, "verify_samples": verify_samples,
                     "verify_rtol": verify_rtol})

    def _resolved_target(self, explicit: Optional[target]) -> int:
        if explicit is not None:
            return int(_target(explicit))
        if self._target is not None:
            return int(self._target)
        devices = self._devices
        if devices and all(d != _arrays.CUDA for d in devices) and _arrays.CPU in devices:
            return int(target.CPU_REFERENCE)
        if _arrays.CUDA in devices:
            return int(target.GPU)
        return int(target.AUTO)

    def _options(self, modes: Optional[List[int]], tgt: Optional[target],
                 overrides: Optional[Mapping[str, Any]] = None
                 ) -> Tuple[Any, List[Any], Tuple[Any, ...]]:
        """(filled cudnnfe_build_options_t *, objects to keep alive, plan-deciding key)."""
        o = _structs.new("cudnnfe_build_options_t")
        o.target = self._resolved_target(tgt)
        if modes is not None:
            o.num_heur_modes = len(modes)
            for i, m in enumerate(modes):
                o.heur_modes[i] = m
        settings = dict(self._plan_options)
        settings.update((k, v) for k, v in self._verify.items() if v is not None)
        for k, v in (overrides or {}).items():
            if v is not None:
                settings[k] = v
        keep: List[Any] = []
        if "policy" in settings:
            o.policy = _plans.policy_value(settings["policy"])
        if "max_workspace_size" in settings:
            o.max_workspace_size = _int_option(settings["max_workspace_size"],
                                               "max_workspace_size")
        o.exclude_numerical_notes = _plans.notes_value(
            settings.get("exclude_numerical_notes"), numerical_note, "exclude_numerical_notes")
        o.exclude_behavior_notes = _plans.notes_value(
            settings.get("exclude_behavior_notes"), behavior_note, "exclude_behavior_notes")
        o.require_behavior_notes = _plans.notes_value(
            settings.get("require_behavior_notes"), behavior_note, "require_behavior_notes")
        engines = _plans.engine_ids(settings.get("exclude_engines"))
        if engines:
            array = ffi.new("int64_t[]", engines)
            keep.append(array)
            o.num_exclude_engines = len(engines)
            o.exclude_engines = array
        if "max_plans" in settings:
            o.max_plans = _int_option(settings["max_plans"], "max_plans")
        if "disable_plan_cache" in settings:
            o.disable_plan_cache = 1 if settings["disable_plan_cache"] else 0
        cache_dir = _plans.cache_dir_value(settings.get("plan_cache_dir"))
        if cache_dir is not None:
            buf = ffi.new("char[]", cache_dir)
            keep.append(buf)
            o.plan_cache_dir = buf
        o.override_shape_enabled = 1 if self._override_shapes else 0
        o.dynamic_shape_enabled = 1 if self._dynamic_shapes else 0
        if self._kernel_cache is not None:
            o.kernel_cache = self._kernel_cache._ptr
        if self._device_properties is not None:
            o.device_properties = self._device_properties._ptr
        o.sm_count = self._sm_count
        o.sm_version = self._sm_version
        _set_verify(o, settings)  # not in the key: verify mode changes no plan
        key = (build_plan_policy(o.policy) if o.policy in (0, 1) else int(o.policy),
               int(o.max_workspace_size), int(o.exclude_numerical_notes),
               int(o.exclude_behavior_notes), int(o.require_behavior_notes), tuple(engines),
               int(o.max_plans), tuple(o.heur_modes[i] for i in range(o.num_heur_modes)),
               int(o.override_shape_enabled), int(o.dynamic_shape_enabled),
               id(self._kernel_cache), id(self._device_properties), self._sm_count)
        return o, keep, key

    def _build_handle(self, handle: Optional[Handle]) -> Any:
        h = handle if handle is not None else self._handle
        if h is not None and not isinstance(h, Handle):
            raise TypeError(f"handle must be a cudnnfe.Handle, not {type(h).__name__}")
        return h.ptr if h is not None else ffi.NULL

    def _build(self, modes: Optional[List[int]], tgt: Optional[target],
               handle: Optional[Handle], overrides: Optional[Mapping[str, Any]] = None) -> None:
        o, keep, key = self._options(modes, tgt, overrides)

        def call() -> int:
            return lib.cudnnfe_graph_build(self._ptr, self._build_handle(handle), o)
        if self.is_built():
            self._check(call())  # refused by the C library (a built graph is immutable)
        else:  # cudnn-frontend's build validates, and logs the graph then
            self._validating(call, log=not self._validated)
        del keep
        self._validated = True
        self._built_key = key
        self._five_step_built = False
        self._exec = self._refresh_exec()

    def _unread_candidates(self) -> Dict[int, Tuple[Tensor, str]]:
        """The inputs made here that no op took as an operand, with their names: those the C
        library may prune at validation, named now while the C graph still holds them."""
        return {t._uid: (t, t.get_name()) for t in list(self._tensors.values())
                if t._role == "input" and t._uid > 0 and t._uid not in self._operand_uids
                and t._uid not in self._pruned}

    def _record_pruned(self, candidates: Mapping[int, Tuple[Tensor, str]]) -> None:
        """Note the inputs the C library pruned at validation
        (``cudnnfe_graph_get_pruned_uids``): their Tensors leave :attr:`_tensors`, and their
        bindings are ignored from now on, by Tensor, name or UID."""
        n = ffi.new("size_t *")
        if lib.cudnnfe_graph_get_pruned_uids(self._ptr, ffi.NULL, 0, n) or n[0] == 0:
            return
        buf = ffi.new("int64_t[]", n[0])
        self._check(lib.cudnnfe_graph_get_pruned_uids(self._ptr, buf, n[0], n))
        for uid in buf[0:n[0]]:
            if uid in self._pruned:
                continue
            t, name = candidates.get(uid, (self._tensors.get(uid), None))
            if name is None and t is not None:
                name = t._name
            self._pruned[uid] = (t, name)
            if t is not None and self._tensors.get(uid) is t:
                del self._tensors[uid]
        self._exec = None

    def _is_pruned_key(self, key: Any) -> bool:
        """True when a variant-pack key names an input that left the graph (its binding is
        accepted and ignored, as cudnn-frontend ignores one for a tensor its graph lacks)."""
        if isinstance(key, Tensor):
            entry = self._pruned.get(key._uid)
            return key._graph is self and entry is not None and entry[0] is key
        if isinstance(key, str):
            return any(name == key for _, name in self._pruned.values())
        if isinstance(key, int) and not isinstance(key, bool):
            try:
                return _c_uid(key) in self._pruned
            except (TypeError, ValueError):
                return False
        return False

    def _rebuild(self, options: Any, handle: Optional[Handle]) -> None:
        """Build a fresh C graph from this one's description with ``options`` and adopt it."""
        data = self.serialize_description()
        out = ffi.new("cudnnfe_graph_t **")
        status = lib.cudnnfe_graph_create(out)
        if status:
            raise_global_error(status)
        ptr = ffi.gc(out[0], lib.cudnnfe_graph_destroy)
        status = lib.cudnnfe_graph_deserialize(ptr, data, len(data))
        if status == 0:
            status = lib.cudnnfe_graph_build(ptr, self._build_handle(handle), options)
        if status:
            raise_graph_error(status, ptr)
        self._ptr = ptr
        self._exec = self._refresh_exec()

    def _refresh_exec(self) -> _ExecInfo:
        n = ffi.new("size_t *")
        self._check(lib.cudnnfe_graph_get_bound_uids(self._ptr, ffi.NULL, 0, n))
        buf = ffi.new("int64_t[]", max(n[0], 1))
        self._check(lib.cudnnfe_graph_get_bound_uids(self._ptr, buf, n[0], n))
        order = tuple(int(buf[i]) for i in range(n[0]))
        specs = []
        for uid in order:
            t = self._wrap(uid)
            dims, strides = t._shape()
            specs.append(_Spec(uid, t.get_name(), tuple(dims), tuple(strides),
                               t.get_data_type(), t._c_pass_by_value(),
                               t._ragged_offset is not None,
                               self._role(t) == "output"))
        tgt = ffi.new("cudnnfe_target_t *")
        self._check(lib.cudnnfe_graph_get_target(self._ptr, tgt))
        ws = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_get_workspace_size(self._ptr, ws))
        self._fast = None
        return _ExecInfo(order, {u: i for i, u in enumerate(order)}, tuple(specs),
                         {s.name: s.uid for s in specs}, target(tgt[0]), int(ws[0]),
                         [None] * len(order), [None])

    def is_built(self) -> bool:
        """True once the graph is built (it is then immutable)."""
        out = ffi.new("int32_t *")
        self._check(lib.cudnnfe_graph_is_built(self._ptr, out))
        return bool(out[0])

    def get_execution_plan_count(self) -> int:
        """Number of plans of the built graph (``cudnnfe_graph_get_plan_count``).

        Before build: 0, or after :meth:`create_execution_plans` the number of
        engine configurations :meth:`check_support` finds, as cudnn-frontend
        counts them. One for a ``HEURISTICS_CHOICE`` build and for the CPU reference; with
        ``build_plans(build_plan_policy.ALL)`` every engine configuration that
        passed the filters and built.
        """
        if not self.is_built():
            if not self._plans_requested:
                return 0
            # cudnn-frontend counts the heuristics' configurations from create_execution_plans
            # on; checked again each time (the graph may have changed), building nothing.
            self._check_again()
            return self._checked[0] if self._checked else 0
        out = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_get_plan_count(self._ptr, out))
        return int(out[0])

    # ------------------------------------------------------------------
    # plans: inspection and selection (docs/plans.md)
    # ------------------------------------------------------------------

    def get_plan_info(self, index: int) -> PlanInfo:
        """Plan ``index`` of the built graph: name, engine id, workspace, notes, autotune time.

        Raises :class:`InvalidArgumentError` for an index out of range and
        :class:`WrongStateError` before build.
        """
        i = _plan_index(index)
        out = _structs.new("cudnnfe_plan_info_t")
        if self._plans_requested and not self.is_built():
            # Between create_execution_plans and build_plans: the configuration check_support
            # found (workspace_size -1 until built), as cudnn-frontend describes its engine
            # configurations before building them.
            self._check_again()
            self._check(lib.cudnnfe_graph_get_checked_config_info(self._ptr, i, out))
            return _plans.plan_info_from_c(i, out)
        self._check(lib.cudnnfe_graph_get_plan_info(self._ptr, i, out))
        return _plans.plan_info_from_c(i, out)

    def get_plan_infos(self) -> List[PlanInfo]:
        """Every plan of the built graph (:meth:`get_plan_info` for each index)."""
        out = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_get_plan_count(self._ptr, out))
        return [self.get_plan_info(i) for i in range(int(out[0]))]

    def get_plan_name_at_index(self, index: int) -> str:
        """Name of plan ``index`` (``"eng9_k2=3"``; ``"cpu_reference"``)."""
        return self.get_plan_info(index).name

    def get_workspace_size_plan_at_index(self, index: int) -> int:
        """Workspace plan ``index`` needs, in bytes."""
        return self.get_plan_info(index).workspace_size

    def get_behavior_notes_for_plan_at_index(self, index: int) -> List[behavior_note]:
        """The :class:`behavior_note` flags of plan ``index``, as a list (cudnn-frontend's form)."""
        return _plans.notes_list(int(self.get_plan_info(index).behavior_notes), behavior_note)

    def get_behavior_notes(self) -> List[behavior_note]:
        """The :class:`behavior_note` flags of the selected plan, as a list."""
        return self.get_behavior_notes_for_plan_at_index(self.get_selected_plan())

    def get_selected_plan(self) -> int:
        """Index of the plan :meth:`execute` runs (``cudnnfe_graph_get_selected_plan``)."""
        out = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_get_selected_plan(self._ptr, out))
        return int(out[0])

    def select_plan(self, index: int) -> None:
        """Make plan ``index`` the one :meth:`execute` runs and :meth:`serialize_plan` writes.

        Changes which plan the graph runs: do it before threads share the
        graph for execution (another thread's execute meanwhile may run either
        plan, with the workspace it was given).
        """
        i = _plan_index(index)
        with self._select_lock:
            self._check(lib.cudnnfe_graph_select_plan(self._ptr, i))
            self._workspace_changed()

    def build_plan_at_index(self, index: int) -> None:
        """cudnn-frontend's name for choosing a plan: the same as :meth:`select_plan`.

        cudnnfe builds every plan of the policy in :meth:`build_plans`, so
        nothing is left to build here; the plan becomes the one execute runs.
        Called before :meth:`build_plans` (configuration ``index`` of
        :meth:`check_support`), it builds every configuration once
        (``build_plans(ALL)``) and selects that one; one that does not build
        raises :class:`GraphNotSupportedError`.
        """
        if self._plans_requested and not self.is_built():
            name = self.get_plan_info(index).name
            self.build_plans(build_plan_policy.ALL)
            names = [p.name for p in self.get_plan_infos()]
            if name not in names:
                raise GraphNotSupportedError(
                    f"graph {self.get_name()!r}: engine configuration {name} (index {index} of "
                    f"check_support) did not build; the plans that did: {names}",
                    int(lib.CUDNNFE_STATUS_NOT_SUPPORTED), "CUDNNFE_STATUS_NOT_SUPPORTED")
            index = names.index(name)
        self.select_plan(index)

    def _workspace_changed(self) -> None:
        if self._exec is not None:
            ws = ffi.new("int64_t *")
            self._check(lib.cudnnfe_graph_get_workspace_size(self._ptr, ws))
            self._exec = self._exec._replace(workspace_size=int(ws[0]))

    def get_build_info(self) -> BuildInfo:
        """Where the built graph's plan came from (:class:`plan_source`) and how long each
        build stage took, in milliseconds (``cudnnfe_graph_get_build_info``)."""
        out = _structs.new("cudnnfe_build_info_t")
        self._check(lib.cudnnfe_graph_get_build_info(self._ptr, out))
        return _plans.build_info_from_c(out)

    def get_fingerprint(self) -> str:
        """The graph's structural fingerprint: 32 lowercase hex digits.

        Hashes the graph description without graph, node and tensor names
        (structure, UIDs, shapes, strides, data types, attributes, scalar
        values): graphs with equal fingerprints share plans. Works before
        build too, but data types left unset are hashed as such: fingerprint
        a validated or built graph to get the plan cache's key.
        """
        size = int(lib.CUDNNFE_FINGERPRINT_SIZE)
        buf = ffi.new("char[]", size)
        self._check(lib.cudnnfe_graph_get_fingerprint(self._ptr, buf, size))
        return ffi.string(buf).decode("ascii")

    def get_target(self) -> target:
        """Where the built graph runs (GPU or CPU_REFERENCE)."""
        out = ffi.new("cudnnfe_target_t *")
        self._check(lib.cudnnfe_graph_get_target(self._ptr, out))
        return target(out[0])

    def get_workspace_size(self) -> int:
        """Workspace the built graph needs, in bytes (0 on the CPU reference)."""
        out = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_get_workspace_size(self._ptr, out))
        return int(out[0])

    def get_plan_name(self) -> str:
        """Name of the engine configuration the plan uses ("cpu_reference" on the CPU)."""
        out = ffi.new("const char **")
        self._check(lib.cudnnfe_graph_get_plan_name(self._ptr, out))
        return _string(out[0])

    def get_bound_uids(self) -> List[int]:
        """UIDs of the tensors that need a buffer, in the order of :meth:`execute_ordered`."""
        info = self._exec_info()
        return [_py_uid(u) for u in info.order]

    def _exec_info(self) -> _ExecInfo:
        info = self._exec
        if info is None:
            if not self.is_built():
                from ._errors import WrongStateError
                raise WrongStateError("the graph is not built; call build() first",
                                      int(lib.CUDNNFE_STATUS_WRONG_STATE),
                                      "CUDNNFE_STATUS_WRONG_STATE")
            info = self._exec = self._refresh_exec()
        return info

    # ------------------------------------------------------------------
    # execution
    # ------------------------------------------------------------------

    def _key_uid(self, key: Any) -> int:
        if isinstance(key, Tensor):
            if key._graph is not self:
                return self._copied_tensor_uid(key)
            return key._uid
        if isinstance(key, str):
            return self.get_tensor(key)._uid
        return _c_uid(key)

    def _copied_tensor_uid(self, key: Tensor) -> int:
        """A tensor of another graph names this graph's bound tensor of the same UID, name,
        dims and strides: this graph is a copy loaded from that graph's serialize(), and
        cudnn-frontend's deserialize flow binds the original graph's tensors to it."""
        spec = None
        if self._exec is not None and key._uid in self._exec.position:
            spec = self._exec.specs[self._exec.position[key._uid]]
        dims, strides = key._shape()
        if (spec is None or spec.name != key.get_name() or spec.dims != tuple(dims) or
                spec.strides != tuple(strides)):
            raise ValueError(f"variant_pack: tensor {key.get_name()!r} belongs to another "
                             "graph, and this graph has no bound tensor of the same UID, name, "
                             "dims and strides")
        return key._uid

    def _bound_array(self, spec: _Spec, array: Any, tgt: int,
                     shape_given: bool = False) -> ArrayInfo:
        """The checked array for a bound tensor. A Python int is a raw address (a
        ``data_ptr()``), which cudnn-frontend also takes: it is used as is, in device
        memory on the GPU and host memory on the CPU reference, with nothing to check."""
        if isinstance(array, int) and not isinstance(array, bool):
            if array <= 0:
                raise ValueError(f"variant_pack: tensor {spec.name!r} is given the address "
                                 f"{array}; expected a positive data pointer")
            device = _arrays.CUDA if tgt == target.GPU else _arrays.CPU
            return ArrayInfo(array, spec.dims, spec.strides, spec.dtype, device, -1,
                             "int (a raw address)")
        info = describe(array)
        self._check_array(spec, info, tgt, shape_given)
        return info

    def _check_array(self, spec: _Spec, info: ArrayInfo, tgt: int,
                     shape_given: bool = False) -> None:
        if spec.dtype == data_type.BOOLEAN_PACKED:
            _check_packed_array(spec, info)
            return self._check_device(spec, info, tgt)
        if info.dtype != spec.dtype:
            _check_reinterpreted(spec, info)
        self._check_device(spec, info, tgt)
        if spec.ragged or shape_given:
            # A ragged tensor's array is packed by its offsets (THD: [sum of seq, h, d] for
            # [b, h, s, d]); an overridden tensor's shape is the override's. cuDNN reads
            # both through the pointer alone, as cudnn-frontend passes them.
            return
        if _same_layout(info, spec) or _same_elements(info, spec):
            return
        # cudnn-frontend binds only the pointer: any array whose memory, from its start at
        # its own strides, covers the span the tensor's dims and strides reach is read or
        # written there. Only a too-small one is refused (it would be overrun).
        _check_covers(spec, info)
        _warn_larger_buffer(spec, info)

    @staticmethod
    def _check_device(spec: _Spec, info: ArrayInfo, tgt: int) -> None:
        if spec.by_value:  # cuDNN reads the value through a host pointer
            if info.device not in (_arrays.CPU, _arrays.CUDA_HOST):
                raise ValueError(f"tensor {spec.name!r} is pass-by-value: its array must be in "
                                 f"host memory, not {info.type_name} on a device")
        elif tgt == target.GPU:
            if info.device == _arrays.CPU:
                raise ValueError(f"tensor {spec.name!r}: the graph runs on the GPU but its "
                                 f"array is in host memory ({info.type_name}); pass a CUDA array")
        elif info.device == _arrays.CUDA:
            raise ValueError(f"tensor {spec.name!r}: the graph runs on the CPU reference but "
                             f"its array is in CUDA device memory ({info.type_name}); pass a "
                             "host (NumPy) array")
        elif info.device not in (_arrays.CPU, _arrays.CUDA_HOST):
            raise ValueError(f"tensor {spec.name!r}: its array is on an unsupported device "
                             f"({info.type_name})")

    def _workspace(self, workspace: Any, tgt: int) -> Tuple[Any, int]:
        if workspace is None:
            return ffi.NULL, 0
        if isinstance(workspace, int) and not isinstance(workspace, bool):
            # A raw address (cudnn-frontend takes workspace.data_ptr()): trusted to hold
            # get_workspace_size() bytes, as there.
            size = self.get_workspace_size() if workspace else 0
            return ffi.cast("void *", workspace), size
        info = describe(workspace)
        itemsize = int(lib.cudnnfe_dtype_size(int(info.dtype))) if info.dtype else 1
        size = _arrays.nbytes(info, itemsize)
        if tgt == target.GPU and info.device == _arrays.CPU and size:
            raise ValueError(f"workspace is in host memory ({info.type_name}); the graph runs "
                             "on the GPU and needs device memory")
        return ffi.cast("void *", info.ptr), size

    def _resolve_handle(self, handle: Optional[Handle]) -> Handle:
        h = handle if handle is not None else self._handle
        if h is None:
            return default_handle()
        if not isinstance(h, Handle):
            raise TypeError(f"handle must be a cudnnfe.Handle, not {type(h).__name__}")
        return h

    def execute(self, variant_pack: Mapping[Any, Any], workspace: Any = None,
                handle: Optional[Handle] = None, stream: Any = None, *,
                override_uids: Any = None, override_shapes: Any = None,
                override_strides: Any = None) -> None:
        """Run the built graph.

        Args:
            variant_pack: dict from tensors (:class:`Tensor`, UID or name) to
                arrays: one for every graph input and output. Each array's
                dtype, shape, strides and device are checked against its
                tensor before anything runs. A ``None`` key (an optional
                output an op did not make, as rmsnorm's inv_variance in
                inference) is ignored, as cudnn-frontend ignores it.
            workspace: a buffer of at least :meth:`get_workspace_size` bytes
                (device memory for the GPU; None when the size is 0).
            handle: execution context (default: the graph's, else one per thread).
            stream: CUDA stream (int, torch or CuPy stream); default: the
                handle's (:func:`set_stream`), else the default stream. GPU
                execution is asynchronous on it.
            override_uids, override_shapes, override_strides: execute-time
                shapes of some bound tensors (a graph built with
                ``pygraph(is_override_shape_enabled=True)``); their arrays are
                checked for type and device only
                (``cudnnfe_graph_execute_with_overrides``).

        The keys are mapped to the order of :meth:`get_bound_uids` here and the
        graph runs through one ``cudnnfe_graph_execute_ordered`` call; a missing,
        unknown or duplicate binding raises :class:`InvalidArgumentError`. The
        GIL is released while the C library runs.
        """
        overrides = self._shape_overrides(override_uids, override_shapes, override_strides)
        info = self._exec
        if info is None:
            info = self._exec_info()
        if type(variant_pack) is not dict and not isinstance(variant_pack, Mapping):
            raise TypeError(f"variant_pack must be a dict, not {type(variant_pack).__name__}")
        h = handle if handle is not None else self._handle
        if h is None:
            h = default_handle()
        elif type(h) is not Handle and not isinstance(h, Handle):
            raise TypeError(f"handle must be a cudnnfe.Handle, not {type(h).__name__}")
        hptr = h._ptr
        if hptr is None:
            hptr = h.ptr  # raises: destroyed
        tgt = info.target
        n = len(info.order)
        table = None if overrides else self._seen_pack(info, variant_pack)
        if table is None:
            table = self._pointer_table(info, variant_pack, overrides)
        self._run(h, hptr, info, table, workspace, stream, overrides, tgt, n)

    def _seen_pack(self, info: _ExecInfo, variant_pack: Any) -> Any:
        """info.last_pack's entry (its [0] the void ** table) when variant_pack is that pack
        again, else None. The entry is returned whole: it keeps the table alive during the call
        even if another thread replaces info.last_pack meanwhile."""
        last = info.last_pack[0]
        if last is None or last[2] != id(variant_pack) or len(variant_pack) != len(last[3]):
            return None
        for (key, array), (k, ref, address) in zip(variant_pack.items(), last[3]):
            if key is not k or ref() is not array or array.data_ptr() != address:
                return None
        return last

    def _pointer_table(self, info: _ExecInfo, variant_pack: Any, overrides: Any) -> Any:
        """Resolves variant_pack's keys to positions and checks every array: a tuple whose [0]
        is the void ** table and whose other items must live until the C call returns."""
        tgt = info.target
        position = info.position
        memo = info.memo
        n = len(info.order)
        ptrs = ffi.new(_POINTER_TABLE, n or 1)
        cacheable = not overrides and type(variant_pack) is dict
        seen = []
        keep: List[Any] = []
        filled = 0
        torch_cls = _arrays._torch_tensor_type or _arrays._torch_tensor_class()
        fast = self._fast
        if fast is None and torch_cls is not None:
            fast = self._fast = tuple(
                (_arrays.torch_dtype_or_none(sp.dtype), sp.dims, sp.strides,
                 tgt == target.GPU and not sp.by_value) for sp in info.specs)
        for key, array in variant_pack.items():
            if type(key) is Tensor and key._graph is self:
                pos = position.get(key._uid)
            elif key is None:
                cacheable = False
                continue  # an optional output not made (cudnn-frontend drops None keys)
            elif self._pruned and self._is_pruned_key(key):
                cacheable = False
                continue
            else:
                pos = position.get(self._key_uid(key))
            if pos is None:
                if self._pruned and self._is_pruned_key(key):
                    cacheable = False
                    continue
                self._unbindable(self._key_uid(key))
            if overrides:
                ptr = self._checked_ptr(pos, array, keep, info.order[pos] in overrides)
            # Fast path for torch tensors: compare without building an ArrayInfo.
            elif type(array) is torch_cls and fast is not None:
                tdtype, dims, strides, want_cuda = fast[pos]
                if (array.dtype is tdtype and array.is_cuda is want_cuda
                        and array.shape == dims and array.stride() == strides):
                    ptr = array.data_ptr()
                else:
                    ptr = self._checked_ptr(pos, array, keep)
                if cacheable:
                    seen.append((key, weakref.ref(array), ptr))
            elif type(array) is _ndarray_type:
                m = memo[pos]
                if (m is not None and m[0]() is array and array.dtype is m[1]
                        and array.shape == m[2] and array.strides == m[3]):
                    ptr = m[4]
                else:
                    ptr = self._memo_ptr(pos, array, keep, memo)
            else:
                ptr = self._checked_ptr(pos, array, keep)
            if ptrs[pos] or not ptr:
                self._bad_pointer(pos, ptr)
            ptrs[pos] = ptr
            filled += 1
        if filled != n:
            missing = [sp.name for i, sp in enumerate(info.specs) if not ptrs[i]]
            raise InvalidArgumentError(
                f"variant_pack: tensor(s) {missing} have no binding (every graph input and "
                "output needs an array)", int(lib.CUDNNFE_STATUS_INVALID_ARGUMENT),
                "CUDNNFE_STATUS_INVALID_ARGUMENT")
        table = ffi.cast(_VOID_PP, ptrs)
        if cacheable and not keep and len(seen) == len(variant_pack):
            entry = (table, ptrs, id(variant_pack), tuple(seen))
            info.last_pack[0] = entry
            return entry
        return (table, ptrs, keep)

    def _run(self, h: Handle, hptr: Any, info: _ExecInfo, pointers: Tuple[Any, ...],
             workspace: Any, stream: Any, overrides: Any, tgt: Any, n: int) -> None:
        """The C call of execute, with its workspace and stream resolved. pointers[0] is the
        void ** table; the tuple keeps what it points to alive until the call returns."""
        table = pointers[0]
        torch_cls = _arrays._torch_tensor_type
        if workspace is None:
            ws, ws_size = ffi.NULL, 0
        elif type(workspace) is torch_cls and workspace.is_cuda is (tgt == target.GPU):
            # The last workspace tensor's void * and size, while it holds the same memory.
            ptr = workspace.data_ptr()
            last = self._last_workspace
            if last is not None and last[0]() is workspace and last[1] == ptr:
                ws, ws_size = last[2], last[3]
            else:
                ws = ffi.cast("void *", ptr)
                ws_size = workspace.numel() * workspace.element_size()
                self._last_workspace = (weakref.ref(workspace), ptr, ws, ws_size)
        else:
            ws, ws_size = self._workspace(workspace, tgt)
        if stream is None:
            stream = h.stream
        if stream is None:
            stream_ptr = ffi.NULL
        else:
            last = self._last_stream
            if last is not None and last[0] is stream:
                stream_ptr = last[1]
            else:
                stream_ptr = stream_pointer(stream)
                self._last_stream = (stream, stream_ptr)
        if overrides:
            status = self._execute_overridden(hptr, info, table, overrides, ws, ws_size,
                                              stream_ptr)
        else:
            status = lib.cudnnfe_graph_execute_ordered(self._ptr, hptr, table, n, ws, ws_size,
                                                       stream_ptr)
        if status:
            raise_handle_error(status, hptr, self._ptr)
        del pointers

    def _shape_overrides(self, uids: Any, shapes: Any,
                         strides: Any) -> Dict[int, Tuple[Tuple[int, ...], Tuple[int, ...]]]:
        """cudnn-frontend's override_uids / override_shapes / override_strides as
        {C UID: (dims, strides)}; empty when none are given."""
        if uids is None and shapes is None and strides is None:
            return {}
        if uids is None or shapes is None or strides is None:
            raise TypeError("execute: override_uids, override_shapes and override_strides go "
                            "together (give all three, or none)")
        uids, shapes, strides = list(uids), list(shapes), list(strides)
        if not len(uids) == len(shapes) == len(strides):
            raise ValueError(f"execute: {len(uids)} override_uids, {len(shapes)} "
                             f"override_shapes and {len(strides)} override_strides; "
                             "they must have the same length")
        out: Dict[int, Tuple[Tuple[int, ...], Tuple[int, ...]]] = {}
        for key, dims, st in zip(uids, shapes, strides):
            dims, st = tuple(int(d) for d in dims), tuple(int(x) for x in st)
            if len(dims) != len(st):
                raise ValueError(f"execute: override for UID {key!r} has {len(dims)} dims and "
                                 f"{len(st)} strides")
            out[self._key_uid(key)] = (dims, st)
        return out

    def _execute_overridden(self, hptr: Any, info: _ExecInfo, ptrs: Any,
                            overrides: Mapping[int, Tuple[Tuple[int, ...], Tuple[int, ...]]],
                            ws: Any, ws_size: int, stream: Any) -> int:
        """cudnnfe_graph_execute_with_overrides on the ordered pointers."""
        n = len(info.order)
        bindings = ffi.new("cudnnfe_binding_t[]", max(n, 1))
        for i, uid in enumerate(info.order):
            bindings[i].uid = uid
            bindings[i].data = ffi.cast("void *", ptrs[i])
        table = ffi.new("cudnnfe_shape_override_t[]", len(overrides))
        keep = []
        for i, (uid, (dims, strides)) in enumerate(overrides.items()):
            d = ffi.new("int64_t[]", list(dims) or [0])
            s = ffi.new("int64_t[]", list(strides) or [0])
            keep += [d, s]
            table[i].uid = uid
            table[i].num_dims = len(dims)
            table[i].dims = d
            table[i].strides = s
        status = lib.cudnnfe_graph_execute_with_overrides(
            self._ptr, hptr, bindings, n, table, len(overrides), ws, ws_size, stream)
        del keep
        return status

    def _memo_ptr(self, pos: int, array: Any, keep: List[Any], memo: List[Any]) -> int:
        """_checked_ptr for a NumPy array, remembered for the next execute with it."""
        ptr = self._checked_ptr(pos, array, keep)
        memo[pos] = (weakref.ref(array), array.dtype, array.shape, array.strides, ptr)
        return ptr

    def _checked_ptr(self, pos: int, array: Any, keep: List[Any],
                     shape_given: bool = False) -> int:
        info = self._exec_info()
        arr = self._bound_array(info.specs[pos], array, info.target, shape_given)
        keep.append(arr)
        return arr.ptr

    def _bad_pointer(self, pos: int, ptr: int) -> NoReturn:
        spec = self._exec_info().specs[pos]
        status = int(lib.CUDNNFE_STATUS_INVALID_ARGUMENT)
        if not ptr:
            raise InvalidArgumentError(
                f"variant_pack: the array for tensor {spec.name!r} has a NULL data pointer",
                status, "CUDNNFE_STATUS_INVALID_ARGUMENT")
        raise InvalidArgumentError(
            f"variant_pack: tensor {spec.name!r} (UID {_py_uid(spec.uid)}) is bound twice",
            status, "CUDNNFE_STATUS_INVALID_ARGUMENT")

    def _unbindable(self, uid: int) -> NoReturn:
        """Raise the error for a variant-pack key that takes no buffer."""
        t = self._tensors.get(uid)
        if t is None and uid in self._all_c_uids():
            t = self._wrap(uid)
        status = int(lib.CUDNNFE_STATUS_INVALID_ARGUMENT)
        if t is None:
            raise InvalidArgumentError(f"variant_pack: no tensor has UID {_py_uid(uid)}", status,
                                       "CUDNNFE_STATUS_INVALID_ARGUMENT")
        what = ("a pass-by-value scalar" if self._role(t) == "scalar"
                else "virtual (not an output)")
        raise InvalidArgumentError(
            f"variant_pack: tensor {t.get_name()!r} (UID {_py_uid(uid)}) is {what} and takes no "
            "buffer", status, "CUDNNFE_STATUS_INVALID_ARGUMENT")

    def execute_ordered(self, pointers: Sequence[int], workspace: Any = None,
                        handle: Optional[Handle] = None, stream: Any = None) -> None:
        """Run with raw data pointers in :meth:`get_bound_uids` order (no checks on them)."""
        info = self._exec_info()
        h = self._resolve_handle(handle)
        n = len(pointers)
        arr = ffi.new("void *[]", max(n, 1))
        for i, p in enumerate(pointers):
            arr[i] = ffi.cast("void *", int(p))
        ws, ws_size = self._workspace(workspace, info.target)
        s = stream_pointer(stream if stream is not None else h.stream)
        status = lib.cudnnfe_graph_execute_ordered(self._ptr, h.ptr, arr, n, ws, ws_size, s)
        if status:
            raise_handle_error(status, h.ptr, self._ptr)

    def bind(self, variant_pack: Mapping[Any, Any], workspace: Any = None,
             handle: Optional[Handle] = None, stream: Any = None, *,
             cuda_graph: Any = None) -> "BoundExecution":
        """Check a variant pack once and return a callable that re-runs it fast.

        The result is a C bound execution (``cudnnfe_graph_bind``) on pointers fixed
        now: the arrays must stay where they are (the object keeps them alive), and
        every bound tensor needs an array. Each call is one ``cudnnfe_bound_execute``
        on ``stream`` (default: the handle's).

        ``cuda_graph``: None (the default) records the work as a CUDA graph at bind and
        replays it at each call whenever that runs exactly what an execute would: on a
        GPU plan with no pass-by-value input (whose value cuDNN reads at each execute,
        but a recorded graph keeps). The pointers are fixed by bind either way, so a
        replay adds no new hazard, and it removes cuDNN's host work from each call.
        Where no CUDA graph can be recorded, the default warns and runs plainly.
        True asks for a CUDA graph and raises where it cannot be made; False never
        makes one; "native" or "capture" choose how it is recorded (docs/plans.md).
        Recording by stream capture runs the work once at bind (it writes the outputs).
        """
        info = self._exec_info()
        mode = _cuda_graph_mode(cuda_graph, info)
        h = self._resolve_handle(handle)
        ptrs: List[Optional[int]] = [None] * len(info.order)
        keep: List[Any] = []
        for key, array in variant_pack.items():
            if key is None or (self._pruned and self._is_pruned_key(key)):
                continue
            uid = self._key_uid(key)
            pos = info.position.get(uid)
            if pos is None:
                self._unbindable(uid)
            arr = self._bound_array(info.specs[pos], array, info.target)
            if ptrs[pos] is not None:
                raise ValueError(f"variant_pack: tensor {info.specs[pos].name!r} is bound twice")
            ptrs[pos] = arr.ptr
            keep.append(arr)
        missing = [info.specs[i].name for i, p in enumerate(ptrs) if p is None]
        if missing:
            raise ValueError(f"variant_pack: no array for tensor(s) {missing}")
        ws, ws_size = self._workspace(workspace, info.target)
        args = (self, h, [int(p) for p in ptrs if p is not None], ws, ws_size,
                stream_pointer(stream if stream is not None else h.stream),
                (keep, workspace, stream))
        if cuda_graph is not None or mode == _CUDA_GRAPH_MODES["off"]:
            return BoundExecution(*args, mode)
        try:
            return BoundExecution(*args, mode)
        except Error as e:
            # The default must not make bind fail where a plain bound execution works.
            warnings.warn(f"bind: no CUDA graph could be recorded, so each call runs "
                          f"cudnnBackendExecute ({e})", stacklevel=2)
            return BoundExecution(*args, _CUDA_GRAPH_MODES["off"])

    def _binding_table(self, variant_pack: Mapping[Any, Any], info: _ExecInfo
                       ) -> Tuple[Any, int, List[Any]]:
        """(cudnnfe_binding_t[], count, arrays to keep alive), every array checked."""
        if not isinstance(variant_pack, Mapping):
            raise TypeError(f"variant_pack must be a dict, not {type(variant_pack).__name__}")
        variant_pack = {k: a for k, a in variant_pack.items() if k is not None and not (
            self._pruned and self._is_pruned_key(k))}
        table = ffi.new("cudnnfe_binding_t[]", max(len(variant_pack), 1))
        keep: List[Any] = []
        for i, (key, array) in enumerate(variant_pack.items()):
            uid = self._key_uid(key)
            pos = info.position.get(uid)
            if pos is None:
                self._unbindable(uid)
            arr = self._bound_array(info.specs[pos], array, info.target)
            keep.append(arr)
            table[i].uid = uid
            table[i].data = ffi.cast("void *", arr.ptr)
        return table, len(variant_pack), keep

    def execute_plan_at_index(self, variant_pack: Mapping[Any, Any], workspace: Any,
                              index: int, handle: Optional[Handle] = None,
                              stream: Any = None, *, override_uids: Any = None,
                              override_shapes: Any = None, override_strides: Any = None) -> None:
        """Run plan ``index`` once, as :meth:`execute` runs the selected plan.

        The C ABI executes the selected plan, so this selects ``index``, runs,
        and selects the previous plan again. Not safe while other threads
        execute this graph; ``workspace`` must fit plan ``index``
        (:meth:`get_workspace_size_plan_at_index`).
        """
        shapes = dict(override_uids=override_uids, override_shapes=override_shapes,
                      override_strides=override_strides)
        i = _plan_index(index)
        with self._select_lock:
            current = self.get_selected_plan()
            if i == current:
                self.execute(variant_pack, workspace, handle, stream, **shapes)
                return
            self._check(lib.cudnnfe_graph_select_plan(self._ptr, i))
            try:
                self.execute(variant_pack, workspace, handle, stream, **shapes)
            finally:
                lib.cudnnfe_graph_select_plan(self._ptr, current)

    def autotune(self, variant_pack: Optional[Mapping[Any, Any]] = None, workspace: Any = None,
                 handle: Optional[Handle] = None, stream: Any = None, *,
                 warmup_iterations: Optional[int] = None, min_iterations: Optional[int] = None,
                 max_iterations: Optional[int] = None, tolerance: Optional[float] = None,
                 max_ms_per_plan: Optional[float] = None) -> int:
        """Time every plan on the GPU, select the fastest, and return its index.

        Build with ``build_plans(build_plan_policy.ALL)`` (or
        ``build(policy=build_plan_policy.ALL)``) to have a choice. Timings are
        recorded in :meth:`get_plan_infos` (``autotune_time_ms``), in
        :meth:`serialize_plan`'s blob and in the plan caches, so later builds
        of the same graph start with the autotuned plan.

        Args:
            variant_pack: arrays for every graph input and output, as for
                :meth:`execute` (outputs are overwritten); None: the library
                times on scratch buffers of its own.
            workspace: device memory; plans needing more than it holds are
                not timed. None: the library allocates the largest plan's.
            handle, stream: as for :meth:`execute`; the call synchronizes
                the stream.
            warmup_iterations, min_iterations, max_iterations, tolerance,
                max_ms_per_plan: ``cudnnfe_autotune_options_t`` (None: the
                library's defaults, 2, 5, 50, 0.01, 200 ms).

        Raises :class:`GraphNotSupportedError` for a CPU reference graph, or
        when no plan could be timed (the message says why for each). Changes
        the selected plan: do it before threads share the graph.
        """
        info = self._exec_info()
        h = self._resolve_handle(handle)
        o = _structs.new("cudnnfe_autotune_options_t")
        for name, value in (("warmup_iterations", warmup_iterations),
                            ("min_iterations", min_iterations),
                            ("max_iterations", max_iterations)):
            if value is not None:
                setattr(o, name, _int_option(value, name, bits=32))
        for name, fvalue in (("tolerance", tolerance), ("max_ms_per_plan", max_ms_per_plan)):
            if fvalue is not None:
                if isinstance(fvalue, bool) or not isinstance(fvalue, (int, float)):
                    raise TypeError(f"{name} must be a number, not {type(fvalue).__name__}")
                setattr(o, name, float(fvalue))
        keep: Any = None
        if variant_pack is None:
            table, n = ffi.NULL, 0
        else:
            table, n, keep = self._binding_table(variant_pack, info)
        ws, ws_size = self._workspace(workspace, info.target)
        s = stream_pointer(stream if stream is not None else h.stream)
        with self._select_lock:
            status = lib.cudnnfe_graph_autotune(self._ptr, h.ptr, table, n, ws, ws_size, s, o)
            del keep
            self._check(status)
            self._workspace_changed()
        return self.get_selected_plan()

    def _cuda_graph_call(self, fn: Any, handle: Optional[Handle], variant_pack: Mapping[Any, Any],
                         workspace: Any, cuda_graph: Any) -> None:
        info = self._exec_info()
        h = self._resolve_handle(handle)
        table, n, keep = self._binding_table(variant_pack, info)
        ws, ws_size = self._workspace(workspace, info.target)
        status = fn(self._ptr, h.ptr, table, n, ws, ws_size, _cuda_graph_pointer(cuda_graph))
        del keep
        if status:
            raise_handle_error(status, h.ptr, self._ptr)

    def populate_cuda_graph(self, handle: Optional[Handle], variant_pack: Mapping[Any, Any],
                            workspace: Any, cuda_graph: Any) -> None:
        """Add the selected plan's work on these buffers to ``cuda_graph`` (cuDNN's native API).

        ``cuda_graph`` is a ``cudaGraph_t`` the caller created empty
        (``cudaGraphCreate``) and owns: an int address, or an object with
        ``getPtr()`` or ``__int__`` (cuda-python's ``CUgraph``). Instantiate
        and launch it with the CUDA runtime. Needs a plan with
        ``behavior_note.SUPPORTS_CUDA_GRAPH_NATIVE_API`` (ask for one with
        ``build(require_behavior_notes=...)``) and cuDNN 9.5+; otherwise, and
        for the CPU reference, :class:`GraphNotSupportedError` (stream capture
        of :meth:`execute` works for every GPU plan). Argument order is
        cudnn-frontend's; ``handle`` may be None.
        """
        self._cuda_graph_call(lib.cudnnfe_graph_populate_cuda_graph, handle, variant_pack,
                              workspace, cuda_graph)

    def update_cuda_graph(self, handle: Optional[Handle], variant_pack: Mapping[Any, Any],
                          workspace: Any, cuda_graph: Any) -> None:
        """Point the nodes :meth:`populate_cuda_graph` added to ``cuda_graph`` at new buffers.

        Then update the instantiated graph (``cudaGraphExecUpdate``) or
        instantiate it again. Same errors as :meth:`populate_cuda_graph`.
        """
        self._cuda_graph_call(lib.cudnnfe_graph_update_cuda_graph, handle, variant_pack,
                              workspace, cuda_graph)

    # ------------------------------------------------------------------
    # serialization
    # ------------------------------------------------------------------

    def serialize(self) -> bytes:
        """The graph, as bytes that :meth:`deserialize` takes back.

        Built: the executable plan, as cudnn-frontend's ``serialize()`` after
        a build (:meth:`serialize_plan`: the graph description, the selected
        engine configuration and cuDNN's own serialization of the plan, which
        holds the compiled kernel of runtime-compiled engines). Loading it in
        a new process on the same GPU architecture and cuDNN version runs no
        heuristics and compiles nothing; elsewhere it raises
        :class:`BadSerializedDataError` naming both sides (or rebuilds, with
        ``deserialize(..., rebuild_on_mismatch=True)``).

        Not built: the graph description alone (versioned JSON, rebuilds on
        any GPU and cuDNN; :meth:`serialize_description` gives it for a built
        graph too).
        """
        if self.is_built():
            return self.serialize_plan()
        return self.serialize_description()

    def serialize_description(self) -> bytes:
        """The graph description (``docs/graph-json.md``) as versioned JSON bytes,
        built or not: no engine choice, so loading it runs the heuristics again."""
        return self._serialize_raw()

    def _serialize_raw(self) -> bytes:
        n = ffi.new("size_t *")
        self._check(lib.cudnnfe_graph_serialize(self._ptr, ffi.NULL, 0, n))
        buf = ffi.new("char[]", max(n[0], 1))
        self._check(lib.cudnnfe_graph_serialize(self._ptr, buf, n[0], n))
        return bytes(ffi.buffer(buf, n[0]))

    def serialize_plan(self) -> bytes:
        """The built graph's selected plan as a plan blob (``cudnnfe_graph_serialize_plan``).

        A header line, then JSON: the graph description, the build options,
        the selected plan's engine configuration, the GPU architecture and
        cuDNN version it was built for, and the autotune record
        (``docs/plans.md``). :meth:`deserialize_plan` (or :meth:`deserialize`)
        loads it without heuristics or plan search. A CPU reference graph
        serializes as such. Raises :class:`WrongStateError` before build.
        """
        n = ffi.new("size_t *")
        self._check(lib.cudnnfe_graph_serialize_plan(self._ptr, ffi.NULL, 0, n))
        buf = ffi.new("char[]", max(n[0], 1))
        self._check(lib.cudnnfe_graph_serialize_plan(self._ptr, buf, n[0], n))
        return bytes(ffi.buffer(buf, n[0]))

    def _deserialize(self, handle_: Any = _MISSING, pyobj: Any = _MISSING, *, build: bool = True,
                     heur_modes: Any = None, target: Optional[target] = None,
                     handle: Optional[Handle] = None, rebuild_on_mismatch: bool = False) -> None:
        """Load a serialized graph, or a plan blob, into this (empty) graph.

        ``deserialize(data)`` or cudnn-frontend's ``deserialize(handle, data)``.
        ``data`` is bytes (a str or a list of byte values are accepted too):

        * what :meth:`serialize` returned, the graph description: loaded,
          then built unless ``build=False`` (the heuristics run again;
          ``heur_modes`` and ``target`` as for :meth:`build`);
        * what :meth:`serialize` returned for a built graph (:meth:`serialize_plan`),
          a plan blob (it starts with ``CUDNNFE-PLAN``): loaded as
          :meth:`deserialize_plan` does, built from the stored plan
          (``rebuild_on_mismatch``); with ``build=False``, ``heur_modes`` or
          ``target`` given, its graph description is loaded and built (or
          not) as asked instead.

        Works on the class too: ``Graph.deserialize(data)`` returns a new graph.
        """
        # cudnn-frontend's keywords: deserialize(handle_, pyobj) and deserialize(pyobj).
        if pyobj is not _MISSING and handle_ is not _MISSING:
            if handle_ is not None and not isinstance(handle_, Handle):
                raise TypeError("deserialize(handle_, pyobj): handle_ must be a cudnnfe.Handle")
            if handle is not None and handle_ is not None:
                raise TypeError("deserialize: handle given twice")
            handle, data = handle or handle_, pyobj
        elif pyobj is not _MISSING or handle_ is not _MISSING:
            data = pyobj if pyobj is not _MISSING else handle_
        else:
            raise TypeError("deserialize takes (data) or (handle, data)")
        raw = _serialized_bytes(data)
        plan_blob = _plans.is_plan_blob(raw)
        if plan_blob and build and heur_modes is None and target is None:
            self._deserialize_plan(raw, rebuild_on_mismatch=rebuild_on_mismatch, handle=handle)
            return
        if rebuild_on_mismatch and not plan_blob:
            raise ValueError("deserialize: rebuild_on_mismatch applies to plan blobs "
                             "(serialize_plan); this is a graph description")
        self._check(lib.cudnnfe_graph_deserialize(self._ptr, raw, len(raw)))
        self._loaded()
        if build:
            self.build(heur_modes, target=target, handle=handle)

    def _deserialize_plan(self, data: Union[bytes, bytearray, memoryview, str, Sequence[int]], *,
                          rebuild_on_mismatch: bool = False,
                          handle: Optional[Handle] = None) -> None:
        """Load a plan blob (:meth:`serialize_plan`) into this (empty) graph; it is then built.

        Heuristics and plan search are skipped: the stored engine
        configuration is built directly. A blob made for another GPU
        architecture or cuDNN version (or on a machine with no GPU) raises
        :class:`BadSerializedDataError` naming both, unless
        ``rebuild_on_mismatch=True``, which builds the graph again from its
        description with the stored build options (:meth:`get_build_info`
        then says ``plan_source.REBUILT``). Corrupt or truncated bytes raise
        :class:`BadSerializedDataError` saying where. Works on the class too:
        ``pygraph.deserialize_plan(blob)`` returns a new graph.
        """
        raw = _serialized_bytes(data)
        o = _structs.new("cudnnfe_plan_load_options_t")
        o.rebuild_on_mismatch = 1 if rebuild_on_mismatch else 0
        self._check(lib.cudnnfe_graph_deserialize_plan(self._ptr, self._build_handle(handle), raw,
                                                       len(raw), o))
        self._loaded()
        self._validated = True
        self._built_key = None
        self._five_step_built = False
        self._exec = self._refresh_exec()

    def _loaded(self) -> None:
        self._tensors.clear()
        self._validated = False
        self._exec = None
        for uid in self._all_c_uids():
            self._wrap(uid)

    deserialize = _Deserializer("_deserialize")
    deserialize_plan = _Deserializer("_deserialize_plan")

    # ------------------------------------------------------------------
    # engine filters, cudnn-frontend style (applied by the next build)
    # ------------------------------------------------------------------

    def deselect_numeric_notes(self, notes: Any) -> "pygraph":
        """Skip engines with any of these :class:`numerical_note` flags in later builds."""
        _plans.notes_value(notes, numerical_note, "deselect_numeric_notes")
        self._plan_options["exclude_numerical_notes"] = notes
        return self

    def deselect_behavior_notes(self, notes: Any) -> "pygraph":
        """Skip engines with any of these :class:`behavior_note` flags in later builds."""
        _plans.notes_value(notes, behavior_note, "deselect_behavior_notes")
        self._plan_options["exclude_behavior_notes"] = notes
        return self

    def select_behavior_notes(self, notes: Any) -> "pygraph":
        """Keep only engines that have every one of these :class:`behavior_note` flags."""
        _plans.notes_value(notes, behavior_note, "select_behavior_notes")
        self._plan_options["require_behavior_notes"] = notes
        return self

    def deselect_workspace_greater_than(self, workspace: int) -> "pygraph":
        """Skip plans needing more than ``workspace`` bytes in later builds."""
        self._plan_options["max_workspace_size"] = _int_option(workspace, "workspace")
        return self

    def deselect_engines(self, engines: Any) -> "pygraph":
        """Never use these engines (ids, or names ``"engN"``) in later builds.

        A filter acts on a whole engine: every knob choice of engine N.
        """
        self._plan_options["exclude_engines"] = _plans.engine_ids(engines, "deselect_engines")
        return self

    # ------------------------------------------------------------------

    @property
    def handle(self) -> Optional[Handle]:
        """The handle given at construction (None: one per thread is used)."""
        return self._handle

    def get_name(self) -> str:
        """The graph's name (given at construction, or loaded by deserialize)."""
        try:
            getter = lib.cudnnfe_graph_get_name
        except AttributeError:  # a library older than the header: keep the Python copy
            return self._name
        out = ffi.new("const char **")
        self._check(getter(self._ptr, out))
        return _string(out[0])

    def __repr__(self) -> str:
        try:
            built = self.is_built()
            return (f"<cudnnfe.{type(self).__name__} tensors={self.get_tensor_count()} "
                    f"nodes={self.get_node_count()} built={built}>")
        except Exception:  # pragma: no cover
            return f"<cudnnfe.{type(self).__name__}>"


_CUDA_GRAPH_MODES = {"off": 0, "native": 1, "capture": 2, "auto": 3}


class BoundExecution:
    """A graph run with fixed buffers: calling it executes with no per-call checks.

    Made by :meth:`pygraph.bind`: a C bound execution (``cudnnfe_graph_bind``) whose
    cuDNN variant pack is made once, and, with a CUDA graph, whose work was recorded
    once and is replayed with ``cudaGraphLaunch``. A call is one ``cudnnfe_bound_execute``.
    Use it from one thread at a time (it runs on its handle).
    """

    __slots__ = ("_graph", "_handle", "_bound", "_stream", "_keep", "_fn", "__weakref__")

    def __init__(self, graph: pygraph, handle: Handle, pointers: List[int], ws: Any,
                 ws_size: int, stream: Any, keep: Any, cuda_graph: int = 0) -> None:
        n = len(pointers)
        arr = ffi.new("void *[]", max(n, 1))
        for i, p in enumerate(pointers):
            arr[i] = ffi.cast("void *", p)
        options = _structs.new("cudnnfe_bind_options_t")
        options.cuda_graph = cuda_graph
        out = ffi.new("cudnnfe_bound_t **")
        hptr = handle.ptr
        status = lib.cudnnfe_graph_bind(out, graph._ptr, hptr, arr, n, ws, ws_size, options)
        if status:
            raise_handle_error(status, hptr, graph._ptr)
        # The graph and the handle are kept alive by this object; the C object may also be
        # freed after them (cudnnfe_bound_destroy), so the collection order does not matter.
        self._bound = ffi.gc(out[0], lib.cudnnfe_bound_destroy)
        self._graph = graph
        self._handle = handle
        self._stream = stream
        self._keep = keep
        self._fn = lib.cudnnfe_bound_execute

    def __call__(self) -> None:
        status = self._fn(self._bound, self._stream)
        if status:
            # The calling thread's message: it is there for every failure, the handle's
            # only for those past the bound execution's own checks.
            raise_global_error(status)

    execute = __call__

    @property
    def cuda_graph(self) -> str:
        """How each call runs: "off" (cudnnBackendExecute with the prepared variant pack),
        "native" (a CUDA graph cuDNN filled) or "capture" (a stream-captured CUDA graph)."""
        out = ffi.new("cudnnfe_cuda_graph_mode_t *")
        status = lib.cudnnfe_bound_get_cuda_graph_mode(self._bound, out)
        if status:
            raise_global_error(status)
        return {v: k for k, v in _CUDA_GRAPH_MODES.items()}[int(out[0])]

    def close(self) -> None:
        """Free the C bound execution now (its variant pack and CUDA graph)."""
        bound, self._bound = self._bound, ffi.NULL
        if bound:
            ffi.release(bound)


def _cuda_graph_mode(value: Any, info: _ExecInfo) -> int:
    """The C mode for bind(cuda_graph=...): None replays a CUDA graph where that is the
    same as an execute (a GPU plan without pass-by-value inputs), True asks for one (AUTO:
    cuDNN's native graph where the plan supports it, else stream capture; refusals raise),
    False runs cudnnBackendExecute; "native", "capture", "auto" and "off" name a mode."""
    if value is None:
        safe = info.target == target.GPU and not any(sp.by_value for sp in info.specs)
        return _CUDA_GRAPH_MODES["auto" if safe else "off"]
    if isinstance(value, bool):
        return _CUDA_GRAPH_MODES["auto" if value else "off"]
    if isinstance(value, str) and value.lower() in _CUDA_GRAPH_MODES:
        return _CUDA_GRAPH_MODES[value.lower()]
    raise ValueError(f"bind: cuda_graph is {value!r}; expected None, True, False or one of "
                     f"{sorted(_CUDA_GRAPH_MODES)}")


def _frontend_graph_options(kernel_cache: Any, device_property: Any) -> None:
    """Check cudnn-frontend's pygraph options: a kernel cache from create_kernel_cache(),
    device properties from create_device_properties()."""
    from ._frontend_objects import DeviceProperties, KernelCache

    if kernel_cache is not None and not isinstance(kernel_cache, KernelCache):
        raise TypeError("kernel_cache must come from cudnnfe.create_kernel_cache()")
    if device_property is not None and not isinstance(device_property, DeviceProperties):
        raise TypeError("device_property must come from cudnnfe.create_device_properties()")


def _sm_option(value: Any, what: str) -> int:
    """cudnn-frontend's sm_count / sm_version: an int >= 0 (None and its -1: not set, 0)."""
    if value is None:
        return 0
    number = _int_option(value, f"pygraph: {what}")
    if number == -1:
        return 0
    if number < 0:
        raise ValueError(f"pygraph: {what} is {value}; expected a positive number (or None)")
    return number


def _check_reinterpreted(spec: _Spec, info: ArrayInfo) -> None:
    """An array of another data type: a ValueError unless its elements have the tensor's size,
    in which case the bytes are read as the tensor's type (cudnn-frontend binds pointers
    only, and its tests bind BFLOAT16 arrays to HALF tensors) with a warning saying so."""
    got = info.dtype.name if info.dtype is not None else "unsupported"
    what = (f"tensor {spec.name!r} (UID {_py_uid(spec.uid)}) is {spec.dtype.name} but its "
            f"array is {info.type_name} ({got})")
    if info.dtype is None or lib.cudnnfe_dtype_size(int(info.dtype)) != \
            lib.cudnnfe_dtype_size(int(spec.dtype)):
        raise ValueError(what)
    warnings.warn(f"{what}: its bytes are read as {spec.dtype.name}", stacklevel=4)


def _same_elements(info: ArrayInfo, spec: _Spec) -> bool:
    """True when an array of another shape holds the tensor's elements where the tensor's
    strides put them: the same dims and strides once unit dims are dropped from both
    (``[4, 64, 64]`` for ``[4, 1, 64, 64]``), or a flat buffer of a dense tensor, as
    cudnn-frontend reads only the pointer."""
    def squeezed(dims: Sequence[int], strides: Sequence[int]) -> List[Tuple[int, int]]:
        return [(d, st) for d, st in zip(dims, strides) if d != 1]

    count = math.prod(spec.dims)
    if math.prod(info.shape) != count:
        return False
    # Or a flat, contiguous buffer of exactly the elements of a dense tensor (a [N] buffer
    # for a packed [1, T, K] token tensor, or for MoE weights [E, N, K] stored K-major):
    # raw memory that the tensor's strides fill without gaps.
    flat = len(info.shape) == 1 and tuple(info.strides) == (1,)
    return (squeezed(info.shape, info.strides) == squeezed(spec.dims, spec.strides)
            or (flat and _span(spec.dims, spec.strides) == count))


def _span(dims: Sequence[int], strides: Sequence[int]) -> int:
    """Elements from the first to the last one a layout touches (0: empty or negative
    strides, whose span this check does not take)."""
    if any(st < 0 for st in strides) or any(d == 0 for d in dims):
        return 0
    return 1 + sum((d - 1) * st for d, st in zip(dims, strides))


def _same_layout(info: ArrayInfo, spec: _Spec) -> bool:
    """The array has the tensor's dims and, on every dim of more than one element, its
    strides."""
    return info.shape == spec.dims and all(
        d == 1 or a == b for d, a, b in zip(spec.dims, info.strides, spec.strides))


def _check_covers(spec: _Spec, info: ArrayInfo) -> None:
    """ValueError unless the array's memory, from its first element at its own strides,
    reaches every element the tensor's dims and strides place."""
    need = _span(spec.dims, spec.strides)
    have = _span(info.shape, info.strides)
    if need == 0 or have >= need:
        return
    raise ValueError(f"tensor {spec.name!r} (UID {_py_uid(spec.uid)}) has dims "
                     f"{list(spec.dims)} and strides {list(spec.strides)}, which span {need} "
                     f"elements, but its array of shape {list(info.shape)} and strides "
                     f"{list(info.strides)} spans only {have}: the array is too small")


_BYTE_TYPES = (data_type.BOOLEAN, data_type.UINT8, data_type.INT8)


def _check_packed_array(spec: _Spec, info: ArrayInfo) -> None:
    """A bit-packed boolean tensor (8 elements a byte, least significant bit first, as cuDNN
    writes them) takes any array of one-byte elements spanning ceil(span / 8) bytes: a bool
    array of the tensor's shape, or a uint8 array of the packed size, as cudnn-frontend's
    samples allocate it."""
    need = -(-_span(spec.dims, spec.strides) // 8)
    if info.dtype not in _BYTE_TYPES:
        raise ValueError(f"tensor {spec.name!r} (UID {_py_uid(spec.uid)}) is bit-packed "
                         f"BOOLEAN; its array must have one-byte elements (bool, uint8 or "
                         f"int8), not {info.type_name}")
    have = _span(info.shape, info.strides)
    if have < need:
        raise ValueError(f"tensor {spec.name!r} (UID {_py_uid(spec.uid)}) is bit-packed "
                         f"BOOLEAN {list(spec.dims)} with strides {list(spec.strides)}: it "
                         f"needs {need} bytes but its array {list(info.shape)} spans {have}")


def _warn_larger_buffer(spec: _Spec, info: ArrayInfo) -> None:
    """cudnn-frontend binds only an array's pointer, so any array of the right element size
    that spans enough memory works there, inputs included: the tensor is read or written
    from the array's start by its own dims and strides. cudnnfe does the same, and says so,
    since a mismatch is often a mistake."""
    warnings.warn(f"tensor {spec.name!r} (UID {_py_uid(spec.uid)}) has dims {list(spec.dims)} "
                  f"and strides {list(spec.strides)} but its array has shape "
                  f"{list(info.shape)} and strides {list(info.strides)}: as in cudnn-frontend, "
                  f"the tensor is {'written' if spec.output else 'read'} from the array's "
                  "start by its own dims and strides",
                  LargerBufferWarning, stacklevel=4)


def _optional_alias(node: str, name: str, value: Any, alias: str, alias_value: Any) -> Any:
    """An optional option given as ``name`` or as cudnn-frontend's ``alias`` (not both)."""
    if value is not None and alias_value is not None:
        raise TypeError(f"{node}: {name} and {alias} are the same option; give one")
    return value if value is not None else alias_value


def _one_of(node: str, name: str, value: Any, alias: str, alias_value: Any) -> Any:
    """The operand given as ``name`` (cudnn-frontend's keyword) or as its alias ``alias``."""
    if value is not None and alias_value is not None:
        raise TypeError(f"{node}: {name} and {alias} are the same operand; give one")
    if value is None and alias_value is None:
        raise TypeError(f"{node}: {name} is required")
    return value if value is not None else alias_value


def _set_verify(o: Any, settings: Mapping[str, Any]) -> None:
    """Verify mode's build options (docs/verify.md) from build()'s and pygraph's keywords."""
    verify = settings.get("verify")
    if verify is not None:
        if not isinstance(verify, (bool, int)):
            raise TypeError(f"verify must be True, False or None, not {type(verify).__name__}")
        o.verify = lib.CUDNNFE_VERIFY_ON if verify else lib.CUDNNFE_VERIFY_OFF
    if settings.get("verify_samples") is not None:
        o.verify_samples = _int_option(settings["verify_samples"], "verify_samples", 32)
    if settings.get("verify_rtol") is not None:
        o.verify_rtol = float(settings["verify_rtol"])


def _heur_modes(modes: Any) -> Optional[List[int]]:
    if modes is None:
        return None
    if isinstance(modes, (heur_mode, int)) and not isinstance(modes, bool):
        modes = [modes]
    try:
        values = [int(heur_mode(m)) for m in modes]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"heur_modes: {exc}") from None
    # cudnn-frontend's OPENSOURCE engines do not exist here: a list that names other modes
    # tries those (as if OPENSOURCE had found no engine); OPENSOURCE alone is refused.
    offered = [v for v in values if v != int(heur_mode.OPENSOURCE)]
    if not offered and values:
        raise NotOfferedError("heur_modes: OPENSOURCE (cudnn-frontend's open-source engines) "
                              "is not offered by cudnnfe; use heur_mode.A, B or FALLBACK")
    values = offered
    if not 1 <= len(values) <= 4:
        raise ValueError(f"heur_modes has {len(values)} entries; expected 1 to 4")
    return values


def _target(value: Any) -> target:
    if isinstance(value, str):
        try:
            return target[value.upper()]
        except KeyError:
            raise ValueError(f"unknown target {value!r}; expected AUTO, GPU or "
                             "CPU_REFERENCE") from None
    try:
        return target(value)
    except ValueError:
        raise ValueError(f"unknown target {value!r}; expected a cudnnfe.target") from None


def _plan_index(index: Any) -> int:
    if isinstance(index, bool):
        raise TypeError("a plan index is an int, not a bool")
    try:
        return operator.index(index)
    except TypeError:
        raise TypeError(f"a plan index is an int, not {type(index).__name__}") from None



def _cuda_graph_pointer(cuda_graph: Any) -> Any:
    """A ``void *`` for a cudaGraph_t: None (NULL), an int, or an object with getPtr()/__int__."""
    if cuda_graph is None:
        return ffi.NULL
    if isinstance(cuda_graph, bool):
        raise TypeError("cuda_graph must be a cudaGraph_t address, not a bool")
    if isinstance(cuda_graph, int):
        return ffi.cast("void *", cuda_graph)
    get_ptr = getattr(cuda_graph, "getPtr", None)
    if callable(get_ptr):
        return ffi.cast("void *", int(get_ptr()))
    if hasattr(cuda_graph, "__int__"):
        return ffi.cast("void *", int(cuda_graph))
    raise TypeError(f"cannot read a cudaGraph_t from {type(cuda_graph).__name__}: pass its "
                    "address as an int, or a cuda-python CUgraph / cudaGraph_t")


def _serialized_bytes(data: Any) -> bytes:
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    if isinstance(data, (list, tuple)):
        try:
            return bytes(data)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"serialized data: {exc}") from None
    raise TypeError(f"serialized data must be bytes, not {type(data).__name__}")
