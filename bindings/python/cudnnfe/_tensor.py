"""The :class:`Tensor` of a :class:`pygraph`: a UID in the C library, with cudnn-frontend's
setters (which chain) and getters."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple

from ._enums import data_type, tensor_kind, tensor_reordering
from ._errors import NotOfferedError
from ._lib import ffi, lib
from ._util import _MAX_DIMS, DType, _c_uid, _cstr, _ints, _py_uid, _string, _tensor_dtype

if TYPE_CHECKING:  # pragma: no cover
    from ._graph import pygraph

__all__ = ["Tensor"]


class Tensor:
    """A tensor of a :class:`pygraph`, named by its UID in the C library.

    Setters return the tensor itself so that calls chain:
    ``y.set_output(True).set_data_type(data_type.HALF)``. Tensors hash by
    identity, so they can key the ``variant_pack`` dict of
    :meth:`pygraph.execute`.
    """

    __slots__ = ("_graph", "_uid", "_role", "_user_uid", "_alignment", "_ragged_offset",
                 "_name", "__weakref__")

    def __init__(self, graph: "pygraph", c_uid: int, role: str) -> None:
        self._graph = graph
        self._uid = c_uid
        self._role = role  # "input", "output", "virtual", "scalar" or "unknown"
        self._user_uid = False
        self._alignment = 16  # cuDNN's default byte alignment of a tensor's address
        self._ragged_offset: Optional["Tensor"] = None
        # The user's name when another tensor already holds it in C (see set_name).
        self._name: Optional[str] = None

    # ---- setters (chainable) ----

    def set_output(self, is_output: bool) -> "Tensor":
        """Mark an operation's output as a graph output (it then needs a buffer at execute)."""
        g = self._graph
        g._check(lib.cudnnfe_tensor_set_output(g._ptr, self._uid, 1 if is_output else 0))
        self._role = "output" if is_output else "virtual"
        return self

    def set_is_virtual(self, is_virtual: bool) -> "Tensor":
        """The opposite of :meth:`set_output`."""
        return self.set_output(not is_virtual)

    def set_data_type(self, dtype: DType) -> "Tensor":
        """Override the tensor's data type (a :class:`data_type`, or a NumPy/torch dtype)."""
        g = self._graph
        g._check(lib.cudnnfe_tensor_set_dtype(g._ptr, self._uid,
                                              _tensor_dtype(dtype, "data type")))
        return self

    def set_dim(self, dims: Sequence[int]) -> "Tensor":
        """Override the dimensions (strides become packed in the same order unless set)."""
        d = _ints(dims, "dims")
        g = self._graph
        g._check(lib.cudnnfe_tensor_set_dims(g._ptr, self._uid, len(d), ffi.new("int64_t[]", d)))
        return self

    def set_stride(self, strides: Sequence[int]) -> "Tensor":
        """Override the strides (in elements); as many as the tensor has dims."""
        s = _ints(strides, "strides")
        g = self._graph
        g._check(lib.cudnnfe_tensor_set_strides(g._ptr, self._uid, len(s),
                                                ffi.new("int64_t[]", s)))
        return self

    def set_uid(self, uid: int) -> "Tensor":
        """Give the tensor a UID (>= 0, unique in the graph).

        A tensor that holds the UID only because it was numbered automatically
        is moved to a free UID first, so UIDs can be set in any order, as with
        cudnn-frontend. UID 0 is stored in C as :data:`UID_ZERO_ALIAS`.
        """
        g = self._graph
        new = _c_uid(uid)
        if new != self._uid:
            other = g._tensors.get(new)
            if other is None and new in g._all_c_uids():
                other = g._wrap(new)
            if other is not None and not other._user_uid:
                other._move_to(g._free_uid())
            g._check(lib.cudnnfe_tensor_set_uid(g._ptr, self._uid, new))
            g._rekey(self, new)
        self._user_uid = True
        return self

    def _move_to(self, new: int) -> None:
        g = self._graph
        g._check(lib.cudnnfe_tensor_set_uid(g._ptr, self._uid, new))
        g._rekey(self, new)

    def set_name(self, name: str) -> "Tensor":
        """Rename the tensor.

        As in cudnn-frontend, two tensors may share a name. The C library keeps
        names unique, so a name another tensor already holds is kept here
        (:meth:`get_name`, name lookups) while the C library gets
        ``"<name>#<n>"``, the name its messages and graph JSON show.
        """
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        g = self._graph
        holder = g._c_name_holder(name)
        c_name = name if holder is None or holder == self._uid else g._free_c_name(name)
        g._check(lib.cudnnfe_tensor_set_name(g._ptr, self._uid, _cstr(c_name, "name")))
        self._name = None if c_name == name else name
        return self

    # ---- cudnn-frontend attributes without a C counterpart ----

    def set_is_pass_by_value(self, is_pass_by_value: bool) -> "Tensor":
        """Mark a one-element graph input as pass-by-value: its array is in host memory and
        read when execute is called (``cudnnfe_tensor_set_pass_by_value``)."""
        g = self._graph
        g._check(lib.cudnnfe_tensor_set_pass_by_value(g._ptr, self._uid,
                                                      1 if is_pass_by_value else 0))
        return self

    def _c_pass_by_value(self) -> bool:
        g = self._graph
        out = ffi.new("int32_t *")
        g._check(lib.cudnnfe_tensor_get_pass_by_value(g._ptr, self._uid, out))
        return bool(out[0])

    def get_is_pass_by_value(self) -> bool:
        """True for a scalar of the graph and for an input marked pass-by-value."""
        return self._graph._role(self) == "scalar" or self._c_pass_by_value()

    def get_has_compile_time_constant(self) -> bool:
        """True for a scalar whose value is part of the graph (``tensor_scalar``, numbers)."""
        return self._graph._role(self) == "scalar"

    def set_alignment(self, alignment: int) -> "Tensor":
        """Record the buffer's byte alignment (cuDNN assumes 16; cudnnfe checks pointers at
        execute, so the value is informative only)."""
        if isinstance(alignment, bool) or not isinstance(alignment, int) or alignment < 1:
            raise ValueError(f"alignment must be a positive int, not {alignment!r}")
        self._alignment = alignment
        return self

    def get_alignment(self) -> int:
        """The byte alignment recorded with :meth:`set_alignment` (default 16)."""
        return self._alignment

    def set_reordering_type(self, reordering_type: Any) -> "Tensor":
        """Only ``tensor_reordering.NONE``: reordered layouts are not offered by the C ABI."""
        name = str(getattr(reordering_type, "name", reordering_type))
        if name.upper() not in ("NONE", "0"):
            raise NotOfferedError(f"tensor {self.get_name()!r}: reordering_type {name} (tensor "
                                  "reordering) is not offered by the cudnnfe C ABI")
        return self

    def get_reordering_type(self) -> tensor_reordering:
        """Always ``tensor_reordering.NONE``."""
        return tensor_reordering.NONE

    def set_vector_count_and_dimension(self, count: int, dimension: int) -> "Tensor":
        """Only a count of 1: vectorized layouts (INT8x4, INT8x32) are not offered."""
        if count != 1:
            raise NotOfferedError(f"tensor {self.get_name()!r}: vector count {count} "
                                  "(vectorized layouts) is not offered by the cudnnfe C ABI")
        return self

    def get_vector_count(self) -> int:
        """Always 1 (no vectorized layouts)."""
        return 1

    def get_vector_dimension(self) -> int:
        """Always -1 (no vectorized layouts)."""
        return -1

    def set_ragged_offset(self, ragged_offset: "Tensor") -> "Tensor":
        """Give an attention tensor its ragged (packed) sequence offsets.

        The offsets (``[b + 1, 1, 1, 1]`` INT32/INT64, in elements) may be set
        before or after the ``sdpa`` / ``sdpa_backward`` that uses the tensor:
        on q, k, v, O, stats and page tables (a packed table), each tensor its
        own (the C ABI's ``ragged_offset_*`` options and
        ``cudnnfe_graph_set_ragged_offset``, ``docs/attention.md``). O and
        stats without offsets are written padded. The backward's dQ, dK, dV and dO take the
        offsets of q, k, v and o (:mod:`cudnnfe._ragged`).
        """
        if not isinstance(ragged_offset, Tensor) or ragged_offset._graph is not self._graph:
            raise TypeError("set_ragged_offset takes a tensor of the same graph")
        from . import _ragged

        _ragged.on_set(self, ragged_offset)
        self._ragged_offset = ragged_offset
        return self

    # ---- getters ----

    def get_uid(self) -> int:
        """The tensor's UID."""
        return _py_uid(self._uid)

    def _shape(self) -> Tuple[List[int], List[int]]:
        g = self._graph
        dims = ffi.new("int64_t[]", _MAX_DIMS)
        strides = ffi.new("int64_t[]", _MAX_DIMS)
        n = ffi.new("int32_t *")
        g._check(lib.cudnnfe_tensor_get_shape(g._ptr, self._uid, dims, strides, _MAX_DIMS, n))
        return [int(dims[i]) for i in range(n[0])], [int(strides[i]) for i in range(n[0])]

    def get_dim(self) -> List[int]:
        """The dimensions (inferred ones are known once the op is added)."""
        return self._shape()[0]

    def get_stride(self) -> List[int]:
        """The strides, in elements."""
        return self._shape()[1]

    def get_data_type(self) -> data_type:
        """The data type as set (NOT_SET until validation resolves it from the graph defaults)."""
        g = self._graph
        out = ffi.new("cudnnfe_dtype_t *")
        g._check(lib.cudnnfe_tensor_get_dtype(g._ptr, self._uid, out))
        return data_type(out[0])

    def get_name(self) -> str:
        """The tensor's name ("<node>::<port>" for operation outputs unless renamed)."""
        return self._name if self._name is not None else self._c_name()

    def _c_name(self) -> str:
        """The name the C library holds (unique in the graph)."""
        g = self._graph
        out = ffi.new("const char **")
        g._check(lib.cudnnfe_tensor_get_name(g._ptr, self._uid, out))
        return _string(out[0])

    def get_kind(self) -> tensor_kind:
        """What the tensor is to the graph: INPUT, SCALAR, VIRTUAL or OUTPUT."""
        return self._graph._kind(self)

    def get_is_output(self) -> bool:
        """True for a graph output (an operation output marked with set_output(True))."""
        return self._graph._role(self) == "output"

    def get_is_virtual(self) -> bool:
        """True for an intermediate that lives only inside the fused plan."""
        return self._graph._role(self) == "virtual"

    def is_bound(self) -> bool:
        """True when the tensor needs a buffer at execute (a graph input or output)."""
        g = self._graph
        out = ffi.new("int32_t *")
        g._check(lib.cudnnfe_tensor_is_bound(g._ptr, self._uid, out))
        return bool(out[0])

    @property
    def graph(self) -> "pygraph":
        """The graph the tensor belongs to."""
        return self._graph

    @property
    def shape(self) -> Tuple[int, ...]:
        """The dimensions as a tuple (same as get_dim())."""
        return tuple(self.get_dim())

    def __repr__(self) -> str:
        try:
            return (f"<cudnnfe.Tensor {self.get_name()!r} uid={self.get_uid()} "
                    f"dim={self.get_dim()} stride={self.get_stride()} "
                    f"{self.get_data_type().name}>")
        except Exception:  # pragma: no cover - repr must not raise
            return f"<cudnnfe.Tensor uid={self.get_uid()}>"
