"""Layout ops on :class:`pygraph`: ``reshape``, ``transpose``, ``slice``, ``concatenate``.

cudnn-frontend's names and arguments (``slice`` takes Python ``slice``
objects; ``reshape`` may leave its new dims to ``set_dim`` on the output).
The C functions are ``cudnnfe_graph_add_reshape`` / ``_transpose`` / ``_slice``
/ ``_concatenate``; ``docs/layout-ops.md`` gives their semantics and what the
GPU accepts. These ops move data without arithmetic: ``compute_data_type``
is accepted for cudnn-frontend code and has no effect.
"""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence

from . import _structs
from ._errors import NotOfferedError
from ._lib import ffi, lib
from ._tensor import Tensor
from ._util import _MAX_DIMS, DType, Operand, _cstr, _int, _ints

__all__ = ["LayoutOps"]


class LayoutOps:
    """The layout methods of :class:`pygraph` (a mixin; see :mod:`cudnnfe._layout`)."""

    def _layout_options(self, node: str) -> Any:
        o = _structs.new("cudnnfe_layout_options_t")
        cname = _cstr(node, "name")
        o.name = cname
        return o, cname

    def _rank_of(self, uid: int) -> List[int]:
        return self._wrap(uid).get_dim()

    def reshape(self, input: Operand, name: Optional[str] = None, reshape_mode: Any = None, *,
                dim: Optional[Sequence[int]] = None,
                compute_data_type: DType = None) -> Tensor:
        """``y = x`` with new dims (``cudnnfe_graph_add_reshape``); the row-major order of the
        logical elements is kept (NumPy's ``reshape``).

        The new dims are ``dim=`` (a cudnnfe extension; one entry may be -1,
        inferred), or, as in cudnn-frontend, set afterwards on the output:
        ``y = graph.reshape(x); y.set_dim([...])``. ``reshape_mode`` is
        accepted (VIEW_ONLY or LOGICAL): the result is the logical reshape,
        which on the GPU is a view of x's memory where x's layout allows it
        (a packed row-major x does).
        """
        node = self._node_name("reshape", name)
        if reshape_mode is not None and str(getattr(reshape_mode, "name", reshape_mode)).upper() \
                not in ("VIEW_ONLY", "LOGICAL"):
            raise ValueError(f"{node}: unknown reshape_mode {reshape_mode!r}; expected "
                             "VIEW_ONLY or LOGICAL")
        x = self._operand(input, node, "input")
        if dim is None:  # set on the output later: the C library takes y's dims then
            dims = self._rank_of(x)
        else:
            dims = _ints(dim, f"{node}: dim", 1, _MAX_DIMS)
            if dims.count(-1) == 1:
                known = math.prod(d for d in dims if d != -1)
                total = math.prod(self._rank_of(x))
                if known > 0 and total % known == 0:
                    dims[dims.index(-1)] = total // known
        o, cname = self._layout_options(node)
        y = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_reshape(self._ptr, x, len(dims),
                                                  ffi.new("int64_t[]", dims), o, y))
        return self._added(node, int(y[0]))

    def transpose(self, input: Operand, permutation: Sequence[int],
                  compute_data_type: DType = None, name: Optional[str] = None) -> Tensor:
        """``y`` dim i is x dim ``permutation[i]`` (``cudnnfe_graph_add_transpose``).

        y's strides default to x's permuted, so y is a view of x's memory.
        Negative entries count from the end.
        """
        node = self._node_name("transpose", name)
        x = self._operand(input, node, "input")
        perm = _ints(permutation, f"{node}: permutation", 1, _MAX_DIMS)
        rank = len(self._rank_of(x))
        perm = [p + rank if p < 0 else p for p in perm]
        o, cname = self._layout_options(node)
        y = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_transpose(self._ptr, x, len(perm),
                                                    ffi.new("int32_t[]", perm), o, y))
        return self._added(node, int(y[0]))

    def slice(self, input: Operand, slices: Sequence[Any] = (), compute_data_type: DType = None,
              name: Optional[str] = None, *, start: Optional[Sequence[int]] = None,
              end: Optional[Sequence[int]] = None,
              step: Optional[Sequence[int]] = None) -> Tensor:
        """``x[slices]`` (``cudnnfe_graph_add_slice``): one Python ``slice`` per leading dim.

        Slices are normalized for each dim as Python sequences are
        (``slice.indices``: negative indices count from the end, bounds clamp);
        dims without a slice are taken whole. Steps must be positive. Or give
        ``start``, ``end`` and ``step`` lists (a cudnnfe extension; no
        normalization). The result is a view of x's buffer: it cannot be a
        graph output (feed it to an op), and on the GPU x must be a graph
        input.
        """
        node = self._node_name("slice", name)
        x = self._operand(input, node, "input")
        dims = self._rank_of(x)
        if start is not None or end is not None:
            if slices:
                raise ValueError(f"{node}: give slices or start/end/step, not both")
            if start is None or end is None:
                raise ValueError(f"{node}: start and end are given together")
            first = _ints(start, f"{node}: start", 1, _MAX_DIMS)
            last = _ints(end, f"{node}: end", 1, _MAX_DIMS)
            steps = (_ints(step, f"{node}: step", 1, _MAX_DIMS) if step is not None
                     else [1] * len(first))
        else:
            if step is not None:
                raise ValueError(f"{node}: step goes with start and end")
            if isinstance(slices, slice):
                slices = [slices]
            items = list(slices)
            if len(items) > len(dims):
                raise ValueError(f"{node}: {len(items)} slices for a tensor of {len(dims)} dims "
                                 f"{dims}")
            first, last, steps = [], [], []
            for i, d in enumerate(dims):
                s = items[i] if i < len(items) else slice(None)
                if not isinstance(s, slice):
                    raise TypeError(f"{node}: slices holds Python slice objects (one per dim), "
                                    f"not {type(s).__name__}; an integer index would drop a dim")
                a, b, c = s.indices(d)
                if c < 0:
                    raise NotOfferedError(f"{node}: negative slice steps (dim {i}: {s}) are not "
                                          "offered by the cudnnfe C ABI")
                first.append(a)
                last.append(b)
                steps.append(c)
        if not len(first) == len(last) == len(steps):
            raise ValueError(f"{node}: start, end and step have {len(first)}, {len(last)} and "
                             f"{len(steps)} entries")
        o, cname = self._layout_options(node)
        y = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_slice(
            self._ptr, x, len(first), ffi.new("int64_t[]", first), ffi.new("int64_t[]", last),
            ffi.new("int64_t[]", steps), o, y))
        return self._added(node, int(y[0]))

    def concatenate(self, inputs: Sequence[Operand], axis: int,
                    in_place_index: Optional[int] = None, name: Optional[str] = None, *,
                    compute_data_type: DType = None) -> Tensor:
        """``inputs`` (2 to 16 tensors) joined along ``axis`` (``cudnnfe_graph_add_concatenate``).

        Equal ranks and dims except ``axis`` (negative counts from the end),
        one data type; the result keeps the first input's dimension order.
        ``in_place_index`` is not offered.
        """
        node = self._node_name("concatenate", name)
        if in_place_index is not None:
            raise NotOfferedError(f"{node}: in_place_index (in-place concatenation) is not "
                                  "offered by the cudnnfe C ABI")
        if isinstance(inputs, (str, bytes)) or not hasattr(inputs, "__iter__"):
            raise TypeError(f"{node}: inputs must be a list of tensors")
        uids = [self._operand(t, node, f"x{i}") for i, t in enumerate(inputs)]
        ax = _int(axis, f"{node}: axis")
        if ax < 0 and uids:
            ax += len(self._rank_of(uids[0]))
        o, cname = self._layout_options(node)
        y = ffi.new("int64_t *")
        self._check(lib.cudnnfe_graph_add_concatenate(self._ptr, len(uids),
                                                      ffi.new("int64_t[]", uids or [0]), ax, o,
                                                      y))
        return self._added(node, int(y[0]))
